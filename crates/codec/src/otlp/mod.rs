//! OTLP Profiles: views with the samples left in the bytes, the
//! v1development wire revisions and their upgrade, and the Collector file
//! exporter's streams.
//!
//! - [`experimental_view`] (v1experimental: samples and `location_indices`
//!   left in the bytes) and [`development_view`] (v1development: samples
//!   and stacks left in the bytes), with `nested_samples` (the split of
//!   nested repeated fields out of the bytes) and `fast_read` (their
//!   readers of one sample or stack);
//! - [`revision`]: which wire revision of v1development an input is;
//!   [`upgrade`]: v1.8/v1.9 rewritten on the wire into the current
//!   revision, and `early_revisions`: v1.4–v1.7 rebuilt into it.
//!
//! The Collector file exporter's streams, which hold messages of these, are
//! [`crate::exporter_stream`]'s.
//!
//! The current revision (v1.10/v1.11) is the only one the rest of the
//! workspace sees: every older one is upgraded here, with a warning that
//! names it.

pub mod development_view;
pub(crate) mod early_revisions;
pub mod experimental_view;
pub(crate) mod fast_read;
pub(crate) mod nested_samples;
pub mod revision;
pub mod upgrade;
