//! Where `receive --out` keeps requests: one file per request in a
//! directory, or appended to one file in the Collector file exporter's
//! framing (each message prefixed by its length, 4 bytes big-endian), which
//! every protoprof command reads as one message.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use protoprof_codec::json_to_binary;
use protoprof_codec::registry::message_descriptor;

use crate::receive::check::{BodyEncoding, EXPORT_REQUEST};

/// Where requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A directory: `request-000001.pb` (or `.json`, as the body came), …
    Dir(PathBuf),
    /// One file in the file exporter's framing; JSON bodies are written
    /// as their binary encoding.
    Framed(PathBuf),
}

/// An open [`Output`].
#[derive(Debug)]
pub struct Store {
    output: Output,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    written: u64,
    file: Option<File>,
}

impl Store {
    /// Creates the directory, or creates (truncates) the framed file.
    pub fn open(output: Output) -> std::io::Result<Store> {
        let file = match &output {
            Output::Dir(dir) => {
                std::fs::create_dir_all(dir)?;
                None
            }
            Output::Framed(path) => Some(
                OpenOptions::new()
                    .create(true)
                    .write(true)
                    .truncate(true)
                    .open(path)?,
            ),
        };
        Ok(Store {
            output,
            state: Mutex::new(State { written: 0, file }),
        })
    }

    /// Keeps one decompressed body; returns where it went.
    pub fn keep(&self, body: &[u8], encoding: BodyEncoding) -> std::io::Result<PathBuf> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.written += 1;
        match &self.output {
            Output::Dir(dir) => {
                let extension = match encoding {
                    BodyEncoding::Protobuf => "pb",
                    BodyEncoding::Json => "json",
                };
                let path = dir.join(format!("request-{:06}.{extension}", state.written));
                std::fs::write(&path, body)?;
                Ok(path)
            }
            Output::Framed(path) => {
                let binary = binary_of(body, encoding)?;
                let file = state.file.as_mut().expect("opened with the store");
                let length = u32::try_from(binary.len()).map_err(|_| too_large(path))?;
                file.write_all(&length.to_be_bytes())?;
                file.write_all(&binary)?;
                file.flush()?;
                Ok(path.clone())
            }
        }
    }
}

fn binary_of(body: &[u8], encoding: BodyEncoding) -> std::io::Result<std::borrow::Cow<'_, [u8]>> {
    if encoding == BodyEncoding::Protobuf {
        return Ok(body.into());
    }
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let text = std::str::from_utf8(body).map_err(|_| invalid("the JSON body is not UTF-8"))?;
    let descriptor = message_descriptor(EXPORT_REQUEST).map_err(|e| invalid(&e.to_string()))?;
    json_to_binary(
        text,
        &descriptor,
        protoprof_codec::Limits::DEFAULT.max_depth,
    )
    .map(Into::into)
    .ok_or_else(|| invalid("the JSON body has no binary form"))
}

fn too_large(path: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "{}: a request of 4 GiB or more does not fit the framing",
        path.display()
    ))
}
