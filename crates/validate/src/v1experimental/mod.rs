//! The rules of OTLP Profiles v1experimental.
//!
//! - `data`: the envelope (resource, scope, container) and the
//!   pprof-extended profile inside each container;
//! - `samples`: one pass over a profile's samples for every check that
//!   reads them, each check reporting to a collector of its own that is
//!   absorbed where its own pass would have run.

pub(crate) mod data;
pub(crate) mod samples;
