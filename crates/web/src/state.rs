//! What every request reads: the profile served, the answers kept, the
//! store's selections resolved, and the message viewed and edited.

use crate::cache::Cache;
use crate::message::MessageSession;
use crate::served::Served;
use crate::store::Selections;

/// The server's state, shared by every request.
pub(crate) struct State {
    pub(crate) served: Served,
    pub(crate) cache: Cache,
    pub(crate) selections: Selections,
    /// The message view, when the input is one message.
    pub(crate) message: Option<MessageSession>,
    /// Held while a report of a large profile is computed: each report's
    /// working memory (a flame graph's stacks, a top table's functions)
    /// is of the profile's size, so two at once would double the peak.
    pub(crate) one_report: std::sync::Mutex<()>,
}

/// Profiles with more samples than this have their reports computed one
/// at a time.
pub(crate) const LARGE_PROFILE_SAMPLES: usize = 500_000;
