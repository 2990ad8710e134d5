//! SVG from DOT by Graphviz's `dot`, where it is installed.

use std::io::Write;
use std::process::{Command, Stdio};

/// Why a call graph cannot be drawn.
#[derive(Debug, thiserror::Error)]
pub enum GraphvizError {
    /// `dot` is not on `PATH`.
    #[error("Graphviz's dot is not installed: install graphviz (Debian, Homebrew: graphviz) to draw call graphs")]
    Missing,
    /// `dot` ran and failed.
    #[error("dot failed: {0}")]
    Failed(String),
}

/// Renders `dot_text` to SVG with `dot -Tsvg`.
pub fn dot_to_svg(dot_text: &str) -> Result<Vec<u8>, GraphvizError> {
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => GraphvizError::Missing,
            _ => GraphvizError::Failed(e.to_string()),
        })?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = dot_text.as_bytes().to_vec();
    // Written from a thread: dot may fill its output pipe before it has
    // read all of its input.
    let writer = std::thread::spawn(move || stdin.write_all(&text));
    let output = child
        .wait_with_output()
        .map_err(|e| GraphvizError::Failed(e.to_string()))?;
    let written = writer.join().unwrap_or(Ok(()));
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(GraphvizError::Failed(stderr.trim().to_string()));
    }
    written.map_err(|e| GraphvizError::Failed(e.to_string()))?;
    Ok(output.stdout)
}
