//! Answers kept by request: the profile does not change while it is
//! served, so a report asked for twice (the page's back button, a second
//! tab, the warm-up at start) is computed once. Requests for the same
//! report wait for the one computing it instead of computing it again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

/// How many answers are kept; past it, the cache starts again empty.
const KEPT: usize = 64;

/// An answer as kept: status, content type and body.
#[derive(Clone)]
pub(crate) struct Kept {
    pub(crate) status: http::StatusCode,
    pub(crate) content_type: String,
    pub(crate) body: Bytes,
}

/// Answers by path and query.
#[derive(Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<String, Arc<OnceLock<Kept>>>>,
}

impl Cache {
    /// The answer kept for `key`, or `compute`'s, kept.
    pub(crate) fn get_or_compute(&self, key: &str, compute: impl FnOnce() -> Kept) -> Kept {
        let slot = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if entries.len() >= KEPT && !entries.contains_key(key) {
                entries.clear();
            }
            entries.entry(key.to_string()).or_default().clone()
        };
        slot.get_or_init(compute).clone()
    }
}
