//! What the server shows: the profile, parsed once, a base to compare with,
//! and the decoded message with its validation findings.

use protoprof_analysis::DiskSources;
use protoprof_model_pprof::perftools::profiles::Profile;

use crate::cache::Cache;
use crate::store::{Selections, StorePane};

/// A profile as the server keeps it for every request.
pub struct Served {
    /// What the page's title names (the files given).
    pub title: String,
    /// The profile every report reads: the inputs merged, a base
    /// subtracted as pprof's `-base` and `-diff_base` subtract it.
    pub profile: Profile,
    /// The profile and its base apart, for the differential flame graph.
    pub compare: Option<Compare>,
    /// The input as a message, for the message view.
    pub message: Option<Box<dyn MessagePane>>,
    /// Where the source view reads files: only under its search path
    /// (empty: the working directory), never above it, whatever its
    /// `confined` says.
    pub sources: DiskSources,
    /// The store the profile was selected from, for the page to select
    /// again, chart and compare (`serve --store`).
    pub store: Option<Box<dyn StorePane>>,
}

impl Served {
    /// A profile with no base and no message view.
    pub fn new(title: impl Into<String>, profile: Profile) -> Served {
        Served {
            title: title.into(),
            profile,
            compare: None,
            message: None,
            sources: DiskSources::default(),
            store: None,
        }
    }
}

/// A profile and its base, each as given (the base not negated).
pub struct Compare {
    /// The profile.
    pub new: Profile,
    /// The base it is compared with.
    pub base: Profile,
    /// What the base is called on the page.
    pub base_title: String,
}

/// The input as a decoded message: its text with references resolved, and
/// what validation found, each finding on the path it names.
pub trait MessagePane: Send + Sync {
    /// The message as text format, at most about `limit` bytes of it.
    fn text(&self, limit: usize) -> MessageText;
    /// Validation's findings.
    fn findings(&self) -> Vec<Finding>;
}

/// A message's text, maybe cut.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MessageText {
    /// The text.
    pub text: String,
    /// Whether it stops before the message's end.
    pub truncated: bool,
}

/// One validation finding.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    /// The field path it names, e.g. `sample[3].location_id[0]`.
    pub path: String,
    /// `error` or `warning`.
    pub severity: String,
    /// The rule's code.
    pub rule: String,
    /// What is wrong.
    pub message: String,
}

/// What every request reads: the profile, and the answers kept.
pub(crate) struct State {
    pub(crate) served: Served,
    pub(crate) cache: Cache,
    pub(crate) selections: Selections,
}
