//! What the server shows: the profile, parsed once, a base to compare with,
//! the decoded message with its validation findings, and the store the
//! profile was selected from; the last two are the caller's, behind
//! [`MessagePane`] and [`StorePane`].

use std::path::Path;

use protobuf::MessageDyn;
use protoprof_analysis::DiskSources;

use crate::served_profile::ServedProfile;
use protoprof_model_pprof::perftools::profiles::Profile;

/// A profile as the server keeps it for every request.
pub struct Served {
    /// What the page's title names (the files given).
    pub title: String,
    /// The profile every report reads: the inputs merged, a base
    /// subtracted as pprof's `-base` and `-diff_base` subtract it.
    pub profile: ServedProfile,
    /// The profile and its base apart, for the differential flame graph.
    pub compare: Option<Compare>,
    /// The input as a message, for the message view and editor.
    pub message: Option<Box<dyn MessagePane>>,
    /// Where the source view reads files: only under its search path
    /// (empty: the working directory), never above it, whatever its
    /// `confined` says.
    pub sources: DiskSources,
    /// The store the profile was selected from, for the page to select
    /// again, chart and compare (`serve --store`).
    pub store: Option<Box<dyn StorePane>>,
    /// The input is a message but not a profile (the relay's, the user's
    /// own schema's): the page shows the message view alone.
    pub message_only: bool,
}

impl Served {
    /// A profile with no base and no message view.
    pub fn new(title: impl Into<String>, profile: impl Into<ServedProfile>) -> Served {
        Served {
            title: title.into(),
            profile: profile.into(),
            compare: None,
            message: None,
            sources: DiskSources::default(),
            store: None,
            message_only: false,
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

/// The input as a message, for the message view and editor: read again
/// when the view first asks, so a server keeps only the parsed profile
/// until then.
pub trait MessagePane: Send + Sync {
    /// The input, decoded.
    fn load(&self) -> Result<Box<dyn MessageDyn>, String>;
    /// Validation's findings on the input as its file holds it.
    fn input_findings(&self) -> Vec<Finding>;
    /// Validation's findings on `message` (after an edit).
    fn findings(&self, message: &dyn MessageDyn) -> Vec<Finding>;
    /// `message` in binary, as `protoprof encode` writes it: the byte
    /// view's offsets are in these bytes.
    fn binary(&self, message: &dyn MessageDyn) -> Result<Vec<u8>, String>;
    /// `message` in the input's form (binary, gzipped, JSON or text), as
    /// save writes it.
    fn encode(&self, message: &dyn MessageDyn) -> Result<Vec<u8>, String>;
    /// The input file: save writes beside it.
    fn input(&self) -> &Path;
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

/// A selection of a store's profiles, as the page's fields give it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct StoreSelection {
    /// A label selector (`service.name="checkout"`), empty for all.
    pub select: String,
    /// From this time on (RFC 3339, a day, or `-1h`), empty for no bound.
    pub from: String,
    /// Before this time, empty for no bound.
    pub to: String,
}

impl StoreSelection {
    /// The selection as the page's title names it: `{…} -1h..now`.
    pub fn title(&self) -> String {
        let select = match self.select.trim() {
            "" => "{}".to_string(),
            s if s.starts_with('{') => s.to_string(),
            s => format!("{{{s}}}"),
        };
        match (self.from.as_str(), self.to.as_str()) {
            ("", "") => select,
            (from, to) => format!("{select} {from}..{to}"),
        }
    }
}

/// One point of the chart: a step's start, a group, the step's total.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SeriesPoint {
    /// The step's start, Unix milliseconds.
    pub time_ms: i64,
    /// The group's label value (empty when not grouped or absent).
    pub group: String,
    /// The total of the step's samples.
    pub value: i64,
}

/// Totals over time of one sample type.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Series {
    /// The sample type summed.
    pub sample_type: String,
    /// Its unit.
    pub unit: String,
    /// The step, in milliseconds.
    pub step_ms: i64,
    /// The points, in time order.
    pub points: Vec<SeriesPoint>,
}

/// What the page asks of the store. Errors are one line, shown as is.
pub trait StorePane: Send + Sync {
    /// The selection the server started with.
    fn initial(&self) -> StoreSelection;
    /// Each label key a selector can name, with the values present.
    fn labels(&self) -> Result<Vec<(String, Vec<String>)>, String>;
    /// The profile `selection` gives, merged; with `base`, the base's
    /// samples subtracted as pprof's `-diff_base` subtracts them, and the
    /// two apart.
    fn select(
        &self,
        selection: &StoreSelection,
        base: Option<&StoreSelection>,
    ) -> Result<(Profile, Option<Compare>), String>;
    /// Totals of `sample_type` (the first when empty) per `step` (`1m`),
    /// grouped by the label `group_by` when not empty.
    fn series(
        &self,
        selection: &StoreSelection,
        sample_type: &str,
        step: &str,
        group_by: &str,
    ) -> Result<Series, String>;
}
