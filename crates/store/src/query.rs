//! What a selection asks of a store.

use crate::ids::Id;
use crate::selector::Matcher;

/// What to read from a store.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Label matchers, all of which a row must meet.
    pub matchers: Vec<Matcher>,
    /// Rows at or after this time (Unix nanoseconds).
    pub from: Option<i64>,
    /// Rows before this time.
    pub to: Option<i64>,
    /// Only these sample types (all when empty).
    pub sample_types: Vec<String>,
    /// Only this profile.
    pub profile_id: Option<Id>,
    /// Keep each stored sample as it was (equal samples not merged, samples
    /// of zero kept): a stored profile as it went in.
    pub each_sample: bool,
}
