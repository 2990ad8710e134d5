//! SVG (or PNG, PDF, …) from DOT by Graphviz's `dot`, where it is installed.

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
    render_dot(dot_text, "svg")
}

/// Renders `dot_text` with `dot -T<format>` (`png`, `pdf`, `ps`, `gif`,
/// …: what pprof's `-png` and the like run).
pub fn render_dot(dot_text: &str, format: &str) -> Result<Vec<u8>, GraphvizError> {
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
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

/// The pan-and-zoom script written into a saved call graph.
const PAN_AND_ZOOM: &str = include_str!("../assets/svg_pan.js");

/// `svg` as Graphviz wrote it, made to fill its window and to pan and zoom
/// (wheel, drag, double click to reset), as pprof's `-svg` output does with
/// a script of its own; unchanged when it has no `<svg>` element.
pub fn with_pan_and_zoom(svg: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(svg);
    let Some(start) = text.find("<svg") else {
        return svg.to_vec();
    };
    let Some(length) = text[start..].find('>') else {
        return svg.to_vec();
    };
    let end = start + length + 1;
    let root = fill_window(&text[start..end]);
    // After the drawing, which the script looks up as it runs.
    let close = text
        .rfind("</svg>")
        .filter(|&close| close >= end)
        .unwrap_or(text.len());
    format!(
        "{}{root}{}<script type=\"text/ecmascript\"><![CDATA[\n{PAN_AND_ZOOM}]]></script>\n{}",
        &text[..start],
        &text[end..close],
        &text[close..]
    )
    .into_bytes()
}

/// The root tag with its `width` and `height` set to the whole window
/// (its `viewBox` keeps the drawing's proportions).
fn fill_window(tag: &str) -> String {
    let mut tag = tag.to_string();
    for attribute in ["width=\"", "height=\""] {
        let Some(at) = tag.find(attribute) else {
            continue;
        };
        let value = at + attribute.len();
        if let Some(close) = tag[value..].find('"') {
            tag.replace_range(value..value + close, "100%");
        }
    }
    tag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_fills_the_window_and_the_script_follows_it() {
        let svg = "<?xml version=\"1.0\"?>\n<svg width=\"62pt\" height=\"44pt\"\n viewBox=\"0 0 62 44\">\n<g id=\"graph0\"></g>\n</svg>\n";
        let out = String::from_utf8(with_pan_and_zoom(svg.as_bytes())).unwrap();
        assert!(out.starts_with("<?xml version=\"1.0\"?>\n<svg width=\"100%\" height=\"100%\"\n viewBox=\"0 0 62 44\">\n<g id=\"graph0\"></g>\n<script"));
        assert!(out.ends_with("]]></script>\n</svg>\n"));
        assert!(!PAN_AND_ZOOM.contains("]]>"));
        assert_eq!(with_pan_and_zoom(b"not svg"), b"not svg");
    }
}
