//! The rules of OTLP Profiles v1development (the current revision,
//! v1.10/v1.11; the codec upgrades older ones before they are checked).
//!
//! - `data`: every MUST and SHOULD of the schema's comments and what
//!   profcheck checks, on `ProfilesData` and the export request;
//! - `parts`: where the samples and stacks are read from (the decoded
//!   message, or the codec's `DevelopmentView`);
//! - `tables`: `--strict`'s duplicates and orphans in the dictionary.

pub(crate) mod data;
pub(crate) mod parts;
pub(crate) mod tables;
