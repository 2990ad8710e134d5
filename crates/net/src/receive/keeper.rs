//! What keeps accepted requests beyond `--out`: the CLI's profile store.
//! It runs before the answer, off the async threads, so nothing is
//! acknowledged that was not kept: when keeping fails the request is
//! answered `UNAVAILABLE` (HTTP 503), and the exporter sends it again.

use crate::receive::check::BodyEncoding;

/// Keeps the decompressed body of each accepted request.
pub trait Keeper: Send + Sync {
    /// Keeps `body` durably before returning; where it went, or why not.
    fn keep(&self, body: &[u8], encoding: BodyEncoding) -> Result<String, String>;
}
