//! Why a conversion fails, and what it had to change on the way.

use std::fmt;

/// A conversion that cannot be done: the input's references do not resolve
/// (validate it first) or it has no profile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BridgeError {
    /// A reference points at no entry of its table.
    #[error("{path}: refers to {what} {value}, which does not exist")]
    Unresolved {
        /// Where the reference is, e.g. `sample[3].location_id[0]`.
        path: String,
        /// What it should point at, e.g. `location`.
        what: &'static str,
        /// The value that resolves to nothing.
        value: i128,
    },
    /// Two entries of a table share an id.
    #[error("{path}: two entries share id {id}")]
    DuplicateId {
        /// The second entry's id field, e.g. `location[7].id`.
        path: String,
        /// The shared id.
        id: u64,
    },
    /// A `ProfileContainer` without its profile.
    #[error("{path}: the ProfileContainer has no profile")]
    MissingProfile {
        /// The container's path.
        path: String,
    },
    /// Profiles that cannot be merged (different sample types, ...).
    #[error("cannot merge: {0}")]
    Incompatible(String),
}

/// A reference that resolves to nothing.
pub(crate) fn unresolved(path: String, what: &'static str, value: u64) -> BridgeError {
    BridgeError::Unresolved {
        path,
        what,
        value: i128::from(value),
    }
}

/// Something pprof cannot hold exactly, and what was done instead. Never
/// silent: every conversion returns its warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeWarning {
    /// Where, e.g. `resource_profiles[0].scope_profiles[0].profiles[0].profile.location[3].attributes`.
    pub path: String,
    /// What was dropped or changed.
    pub message: String,
}

/// What is said when OTLP samples' per-event timestamps are left out.
pub(crate) const TIMESTAMPS_DROPPED: &str =
    "pprof samples have no per-event timestamps: dropped (values summed, or counted 1 per timestamp)";

impl BridgeWarning {
    /// The warning that per-event timestamps were left out: news to whoever
    /// keeps the pprof profile, none to a report of sums, which never shows
    /// them.
    pub fn is_timestamps_dropped(&self) -> bool {
        self.message == TIMESTAMPS_DROPPED
    }
}

impl fmt::Display for BridgeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A converted value with its warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted<T> {
    /// The result.
    pub value: T,
    /// What it could not carry exactly.
    pub warnings: Vec<BridgeWarning>,
}

/// What `drop_invalid_samples` (or its v1experimental twin) left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedSamples {
    /// How many samples.
    pub count: usize,
    /// How many samples there were.
    pub of: usize,
    /// The first one's broken reference: its path and what it names.
    pub first: String,
}

impl std::fmt::Display for DroppedSamples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} samples left out: they refer to entries that do not exist \
             (the first: {}; `protoprof validate` lists them all)",
            self.count, self.of, self.first
        )
    }
}

/// The samples left out so far, across the profiles of a message, as
/// [`DroppedSamples`] says them once all are seen.
#[derive(Default)]
pub(crate) struct Dropping {
    dropped: Option<DroppedSamples>,
    of: usize,
}

impl Dropping {
    /// Keeps the samples for which `broken` finds nothing; the first left
    /// out is named as `at(n)` (its path) followed by what `broken` said.
    pub(crate) fn retain<T>(
        &mut self,
        samples: &mut Vec<T>,
        at: impl Fn(usize) -> String,
        broken: impl Fn(&T) -> Option<String>,
    ) {
        self.of += samples.len();
        let mut n = 0;
        samples.retain(|sample| {
            let why = broken(sample);
            n += 1;
            let Some(why) = why else { return true };
            let first = || format!("{}{why}", at(n - 1));
            match &mut self.dropped {
                Some(dropped) => dropped.count += 1,
                None => {
                    self.dropped = Some(DroppedSamples {
                        count: 1,
                        of: 0,
                        first: first(),
                    })
                }
            }
            false
        });
    }

    /// What was left out, or `None` when every sample resolved.
    pub(crate) fn finish(self) -> Option<DroppedSamples> {
        let of = self.of;
        self.dropped.map(|d| DroppedSamples { of, ..d })
    }
}
