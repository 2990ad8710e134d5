//! What keeps accepted requests beyond `--out`: the CLI's profile store.
//! It runs before the answer, off the async threads, so nothing is
//! acknowledged that was not kept: when keeping fails the request is
//! answered `UNAVAILABLE` (HTTP 503), and the exporter sends it again.

use crate::receive::check::{BodyEncoding, ReadRequest};

/// An accepted request: its decompressed body, and the request the check
/// read from it and validated.
pub struct Accepted<'a> {
    /// The body.
    pub body: &'a [u8],
    /// How it is encoded.
    pub encoding: BodyEncoding,
    /// What the check read (a keeper need not read the body again).
    pub read: &'a ReadRequest<'a>,
}

/// Keeps each accepted request.
pub trait Keeper: Send + Sync {
    /// Keeps `request` durably before returning; where it went, or why not.
    fn keep(&self, request: &Accepted) -> Result<String, String>;
}
