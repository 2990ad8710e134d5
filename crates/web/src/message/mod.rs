//! The message view and editor: any message (a profile, OTLP, the relay's,
//! the user's own schema's) as a tree the page opens node by node, each
//! repeated element summarised on its line, each reference with what it
//! points at; search, a byte view, edits validated again, and save.
//!
//! Paths are validation's (`sample[3].location_id[0]`), so a finding, a
//! search hit and a reference all lead to the same place.

mod describe;
mod edit;
pub(crate) mod http;
mod node;
mod path;
mod refs;
mod search;
mod session;
mod wire;

pub(crate) use session::MessageSession;

#[cfg(test)]
mod tests;
