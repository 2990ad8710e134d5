//! The message the page views and edits: decoded when the view first asks
//! (so a server whose message view is never opened holds only the
//! profile), changed by edits, validated again after each, saved to a
//! new file beside the input.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use protobuf::MessageDyn;
use serde::Deserialize;
use serde_json::{json, Value};

use super::describe::Describer;
use super::edit::{self, Edit};
use super::path;
use super::refs::{IdIndexes, References};
use super::{node, search, wire};
use crate::served::{Finding, MessagePane};

/// The message view's state, shared by every request.
pub(crate) struct MessageSession {
    pane: Box<dyn MessagePane>,
    references: References,
    opened: Mutex<Option<Opened>>,
}

struct Opened {
    message: Box<dyn MessageDyn>,
    findings: Vec<Finding>,
    /// The binary encoding, kept for the byte view until the next edit.
    binary: Option<Vec<u8>>,
    ids: IdIndexes,
    edits: usize,
}

/// What the page asks to save.
#[derive(Debug, Deserialize)]
pub(crate) struct Save {
    /// A file name, written beside the input.
    pub(crate) file: String,
    /// Whether an existing file may be replaced.
    #[serde(default)]
    pub(crate) overwrite: bool,
}

impl MessageSession {
    pub(crate) fn new(pane: Box<dyn MessagePane>) -> MessageSession {
        MessageSession {
            pane,
            references: References::of_profiles(),
            opened: Mutex::new(None),
        }
    }

    /// Runs `f` on the opened message, decoding it first if need be.
    fn with<R>(&self, f: impl FnOnce(&mut Opened, &References) -> R) -> Result<R, String> {
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if opened.is_none() {
            let message = self.pane.load()?;
            *opened = Some(Opened {
                message,
                findings: self.pane.input_findings(),
                binary: None,
                ids: IdIndexes::default(),
                edits: 0,
            });
        }
        let opened = opened.as_mut().expect("opened above");
        Ok(f(opened, &self.references))
    }

    /// The message's type, its findings, and what save is offered as.
    pub(crate) fn meta(&self) -> Result<Value, String> {
        let save_as = self.default_name();
        self.with(|o, _| {
            json!({
                "type": o.message.descriptor_dyn().full_name(),
                "input": self.input_name(),
                "save_as": save_as,
                "edits": o.edits,
                "findings": o.findings,
            })
        })
    }

    /// The node at `path`, its elements from `offset`.
    pub(crate) fn node(&self, at: &str, offset: usize) -> Result<Value, String> {
        let steps = path::parse(at)?;
        self.with(|o, references| {
            let d = Describer {
                root: &*o.message,
                references,
                ids: &o.ids,
            };
            node::node(&d, &steps, offset).map(|n| json!(n))
        })?
    }

    /// What `query` finds.
    pub(crate) fn search(&self, query: &str) -> Result<Value, String> {
        self.with(|o, references| {
            let d = Describer {
                root: &*o.message,
                references,
                ids: &o.ids,
            };
            json!(search::search(&d, query))
        })
    }

    /// The bytes of the field at `path`, in the message's binary encoding.
    pub(crate) fn bytes(&self, at: &str) -> Result<Value, String> {
        let steps = path::parse(at)?;
        self.with(|o, _| {
            if o.binary.is_none() {
                o.binary = Some(self.pane.binary(&*o.message)?);
            }
            let bytes = o.binary.as_deref().expect("encoded above");
            wire::locate(bytes, &o.message.descriptor_dyn(), &steps).map(|b| json!(b))
        })?
    }

    /// Applies an edit and validates again: the changed path and findings.
    pub(crate) fn edit(&self, body: &[u8]) -> Result<Value, String> {
        let edit: Edit = serde_json::from_slice(body).map_err(|e| format!("the edit: {e}"))?;
        self.with(|o, _| {
            let changed = edit::apply(&mut *o.message, &edit)?;
            o.binary = None;
            o.ids.clear();
            o.edits += 1;
            o.findings = self.pane.findings(&*o.message);
            Ok(json!({ "changed": changed, "edits": o.edits, "findings": o.findings }))
        })?
    }

    /// Writes the message, in the input's form, to a file beside the input.
    pub(crate) fn save(&self, body: &[u8]) -> Result<Value, String> {
        let save: Save = serde_json::from_slice(body).map_err(|e| format!("the save: {e}"))?;
        let target = self.save_path(&save.file)?;
        if target.exists() && !save.overwrite {
            return Err(format!(
                "{} exists; tick overwrite to replace it",
                save.file
            ));
        }
        let (bytes, findings) =
            self.with(|o, _| (self.pane.encode(&*o.message), o.findings.len()))?;
        let bytes = bytes?;
        write_replacing(&target, &bytes).map_err(|e| format!("{}: {e}", save.file))?;
        Ok(
            json!({ "written": target.display().to_string(), "bytes": bytes.len(), "findings": findings }),
        )
    }

    /// Where a file named `name` is saved: beside the input, by a plain
    /// name only (no directories: the page chooses a name, not a place).
    fn save_path(&self, name: &str) -> Result<PathBuf, String> {
        let plain = !name.is_empty()
            && !name.contains(['/', '\\', '\0'])
            && name != "."
            && name != ".."
            && !name.starts_with('.');
        if !plain {
            return Err(format!("{name:?}: a file name, without directories"));
        }
        let directory = self.pane.input().parent().unwrap_or(Path::new(""));
        Ok(directory.join(name))
    }

    fn input_name(&self) -> String {
        let input = self.pane.input().file_name().unwrap_or_default();
        input.to_string_lossy().into_owned()
    }

    /// `cpu.pb.gz` → `cpu.edited.pb.gz`.
    fn default_name(&self) -> String {
        let name = self.input_name();
        match name.split_once('.') {
            Some((stem, extensions)) => format!("{stem}.edited.{extensions}"),
            None => format!("{name}.edited"),
        }
    }
}

/// Writes `bytes` to a temporary file beside `target`, then renames it
/// over `target`: a reader never sees half a file.
fn write_replacing(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let temporary = target.with_file_name(format!(".{name}.protoprof-save"));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, target)
}
