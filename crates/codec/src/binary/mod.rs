//! Binary protobuf, the wire form every other form is read into.
//!
//! - `message`: whole messages decoded and encoded, raw or gzip-compressed,
//!   with limits, precise errors and UTF-8 repair (its items are this
//!   module's: [`encode`], [`DecodeOptions`], ...; the typed entry points
//!   such as [`crate::decode`] choose the parse above it);
//! - `scan`: the structural pass every decode makes before rust-protobuf
//!   parses, against the field `layout` of each message type;
//! - `inflate`: gzip input inflated within the limits, before any of it;
//! - `wire`: varints, tags and wire types, bounds-checked;
//! - `utf8`: strings that are not UTF-8, repaired or refused.
//!
//! The wire level (`scan`, `layout`, `wire`, `utf8`) knows no profile
//! format; `message` takes the pprof folder's fast path when the type is
//! pprof's `Profile`.

pub(crate) mod inflate;
pub(crate) mod layout;
pub(crate) mod message;
pub(crate) mod scan;
pub(crate) mod utf8;
pub(crate) mod wire;

pub use message::*;
