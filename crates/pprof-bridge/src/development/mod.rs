//! pprof ⇄ OTLP Profiles v1development (the current revision, v1.10/v1.11;
//! the codec upgrades older ones before they get here).
//!
//! - `to_otlp`: pprof → v1development, with `records` (its samples as
//!   compact records), `stacks` (its stacks numbered by key without a
//!   copy), `attributes` (its attribute table kept encoded), `key_numbering`
//!   (the numbering by key both use) and `encoding` (the direct encoder,
//!   written front to back to any `io::Write` while the source is read
//!   again);
//! - `to_pprof`: v1development → one pprof, or one per profile, samples read
//!   from a `source` (the model or the codec's `DevelopmentView`), with
//!   `samples` (those samples converted as they are read), `pprof_shape`
//!   (messages of pprof's shape restored exactly), `tables` (what both
//!   to-pprof paths convert alike) and `used` (the entries one profile
//!   reaches, when each is converted on its own);
//! - `shared`: v1development → one pprof per profile, all sharing one
//!   dictionary converted once.

pub(crate) mod attributes;
pub(crate) mod encoding;
pub(crate) mod invalid_samples;
pub(crate) mod key_numbering;
pub(crate) mod pprof_shape;
pub(crate) mod records;
pub(crate) mod samples;
pub(crate) mod shared;
pub(crate) mod source;
pub(crate) mod stacks;
pub(crate) mod tables;
pub(crate) mod to_otlp;
pub(crate) mod to_pprof;
pub(crate) mod used;
