//! pprof ⇄ OTLP Profiles v1experimental.
//!
//! - `to_otlp`: pprof → v1experimental, a context with one method per table
//!   (as Go's `merge.go`), with `stacks` (stack interning on two threads)
//!   and `records` (converted samples as compact records, and the direct
//!   OTLP encoder);
//! - `to_pprof`: v1experimental → pprof, one context per container, with
//!   `samples` (the samples converted as they are read, from the model or
//!   the codec's `ExperimentalView`);
//! - `invalid_samples`: samples whose references resolve to nothing, left
//!   out so that the rest converts.

pub(crate) mod invalid_samples;
pub(crate) mod records;
pub(crate) mod samples;
pub(crate) mod stacks;
pub(crate) mod to_otlp;
pub(crate) mod to_pprof;
