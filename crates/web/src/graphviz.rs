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

/// `svg` as Graphviz wrote it, rewritten as pprof's `-svg` rewrites it
/// (its `massageSVG`): the root fills the window without a `viewBox`, the
/// drawing sits in a `viewport` group at half scale, and a script pans
/// and zooms it (wheel, drag, double click to reset). The script is
/// protoprof's own; everything else is pprof's bytes. Unchanged when it
/// has no `<svg>` element.
pub fn with_pan_and_zoom(svg: &[u8]) -> Vec<u8> {
    use std::sync::LazyLock;
    static VIEW_BOX: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r#"<svg\s*width="[^"]+"\s*height="[^"]+"\s*viewBox="[^"]+""#)
            .expect("valid")
    });
    static GRAPH: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r#"<g id="graph\d""#).expect("valid"));
    // dot leaves some ampersands unquoted, which no XML parser reads.
    let mut text = String::from_utf8_lossy(svg).replace("&;", "&amp;;");
    if let Some(found) = VIEW_BOX.find(&text) {
        text.replace_range(found.range(), r#"<svg width="100%" height="100%""#);
    }
    if let Some(found) = GRAPH.find(&text) {
        let viewport = format!(
            "<script type=\"text/ecmascript\"><![CDATA[{PAN_AND_ZOOM}]]></script>\
             <g id=\"viewport\" transform=\"scale(0.5,0.5) translate(0,0)\">"
        );
        text.insert_str(found.start(), &viewport);
    }
    if let Some(close) = text.find("</svg>") {
        text.insert_str(close, "</g>");
    }
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drawing_is_put_in_a_viewport_after_the_script_as_pprof_puts_it() {
        let svg = "<?xml version=\"1.0\"?>\n<svg width=\"62pt\" height=\"44pt\"\n viewBox=\"0 0 62 44\" xmlns=\"x\">\n<g id=\"graph0\">&;</g>\n</svg>\n";
        let out = String::from_utf8(with_pan_and_zoom(svg.as_bytes())).unwrap();
        let (head, rest) = out.split_once("<script").unwrap();
        assert_eq!(
            head,
            "<?xml version=\"1.0\"?>\n<svg width=\"100%\" height=\"100%\" xmlns=\"x\">\n"
        );
        let (_, rest) = rest.split_once("]]></script>").unwrap();
        assert_eq!(
            rest,
            "<g id=\"viewport\" transform=\"scale(0.5,0.5) translate(0,0)\"><g id=\"graph0\">&amp;;</g>\n</g></svg>\n"
        );
        assert!(!PAN_AND_ZOOM.contains("]]>"));
        assert_eq!(with_pan_and_zoom(b"not svg"), b"not svg");
    }
}
