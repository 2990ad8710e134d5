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
}
