//! What every request reads: the profile served, the answers kept, and
//! the store's selections resolved.

use crate::cache::Cache;
use crate::served::Served;
use crate::store::Selections;

/// The server's state, shared by every request.
pub(crate) struct State {
    pub(crate) served: Served,
    pub(crate) cache: Cache,
    pub(crate) selections: Selections,
}
