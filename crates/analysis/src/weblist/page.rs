//! The listing as the standalone HTML page of pprof's `-weblist`: the same
//! markup (legend, one `<pre>` per function, each live line followed by
//! its hidden `asm` block), with a style sheet and a toggling script of
//! our own. Every text from the profile, its binaries or its sources is
//! escaped as Go's `html/template` escapes it.

use std::fmt::Write;

use super::listing::{WebList, WebListFunction, WebListLine};

/// Shows a line's instructions when it is clicked: the `asm` block right
/// after the clicked line is shown or hidden.
const SCRIPT: &str = r#"<script type="text/javascript">
function pprof_toggle_asm(event) {
  const line = event.target.closest(".livesrc");
  const block = line && line.nextElementSibling;
  if (block && block.classList.contains("asm")) {
    block.classList.toggle("shown");
    event.preventDefault();
  }
}
</script>"#;

const STYLE: &str = r#"<style type="text/css">
body { font-family: sans-serif; }
pre { font-family: monospace; }
.legend { font-size: 1.25em; }
.line, .nop, .unimportant { color: #999999; }
.inlinesrc { color: #000066; }
.livesrc { cursor: pointer; }
.livesrc:hover { background-color: #eeeeee; }
.asm { color: #008800; display: none; }
.asm.shown { display: block; }
</style>"#;

/// The page: titled by the profile's file and type, the `labels` (pprof's
/// profile labels) and total as its legend, then every function.
pub fn web_list_page(labels: &[String], listing: &WebList) -> String {
    let label = |prefix: &str| {
        (labels.iter())
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or("unknown")
            .to_string()
    };
    let title = format!("{} {}", label("File: "), label("Type: "));
    let mut out = format!(
        "<!DOCTYPE html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>{}</title>\n  \n  {STYLE}\n  {SCRIPT}\n</head>\n<body>\n\n<div class=\"legend\">",
        escape(&title)
    );
    let legend: Vec<String> = labels.iter().map(|l| escape(l)).collect();
    out.push_str(&legend.join("<br>\n"));
    let _ = write!(out, "<br>Total: {}</div>", escape(&listing.total));
    for function in &listing.functions {
        write_function(&mut out, function);
    }
    out.push_str("\n</body>\n</html>\n");
    out
}

fn write_function(out: &mut String, f: &WebListFunction) {
    let _ = write!(
        out,
        "<h2>{}</h2><p class=\"filename\">{}</p>\n<pre onClick=\"pprof_toggle_asm(event)\">\n",
        escape(&f.name),
        escape(&f.file)
    );
    let total = format!(
        "  Total:  {:>10} {:>10} (flat, cum) {}",
        f.flat, f.cum, f.percent
    );
    out.push_str(&escape(&total));
    for line in &f.lines {
        write_line(out, line);
    }
    out.push_str("\n</pre>\n");
}

fn write_line(out: &mut String, line: &WebListLine) {
    let number = format!(" {:>6}", line.number);
    let text = format!(
        "  {:>10} {:>10} {:>8}  {} ",
        line.flat, line.cum, "", line.source
    );
    let _ = write!(
        out,
        "\n<span class=line>{}</span> <span class={}>{}</span>",
        escape(&number),
        line.class,
        escape(&text)
    );
    if line.instructions.is_empty() {
        return;
    }
    out.push_str("<span class=asm>");
    for i in &line.instructions {
        if i.new_block {
            out.push_str(&escape(&format!(" {:>8} {:>28}\n", "", "⋮")));
        }
        for call in &i.inlined_calls {
            let indent = format!(" {:>8} {:>10} {:>10} {:>8}  ", "", "", "", "");
            let _ = writeln!(
                out,
                "{indent}<span class=inlinesrc>{}</span> <span class=unimportant>{}:{}</span>",
                escape(&call.source),
                escape(&call.file_base),
                call.line
            );
        }
        if !i.synthetic {
            let text = format!(
                " {:>8} {:>10} {:>10} {:>8x}: {} ",
                "", i.flat, i.cum, i.address, i.text
            );
            let _ = writeln!(
                out,
                "{}<span class=unimportant>{}</span>",
                escape(&text),
                escape(&i.file_line)
            );
        }
    }
    out.push_str("</span>");
}

/// What Go's `html/template` makes of a text in an element.
fn escape(s: &str) -> String {
    escaped(s, true)
}

/// Go's `template.HTMLEscapeString` (which leaves `+` as it is).
pub(super) fn html_escape_string(s: &str) -> String {
    escaped(s, false)
}

/// `s` with HTML's special characters as Go's escapers write them, `+`
/// too when `plus`.
fn escaped(s: &str, plus: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '+' if plus => out.push_str("&#43;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\0' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weblist::WebListInstruction;

    #[test]
    fn text_from_the_profile_is_escaped() {
        let listing = WebList {
            total: "1s".into(),
            functions: vec![WebListFunction {
                name: "<script>alert(1)</script>".into(),
                file: "a&b.c".into(),
                flat: "1s".into(),
                cum: "1s".into(),
                percent: "100%".into(),
                lines: vec![WebListLine {
                    number: 3,
                    source: "if (a < b) x++;".into(),
                    class: "livesrc",
                    flat: "1s".into(),
                    cum: "1s".into(),
                    instructions: vec![WebListInstruction {
                        new_block: false,
                        flat: "1s".into(),
                        cum: "1s".into(),
                        synthetic: false,
                        address: 0x10,
                        text: "jmp <x+0x1>".into(),
                        file_line: "a&amp;b.c:3".into(),
                        inlined_calls: Vec::new(),
                    }],
                }],
            }],
        };
        let page = web_list_page(&["File: <x>".into()], &listing);
        assert!(!page.contains("<script>alert"), "{page}");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("if (a &lt; b) x&#43;&#43;;"));
        assert!(page.contains("jmp &lt;x&#43;0x1&gt;"));
        assert!(page.contains("a&amp;amp;b.c:3"));
        assert!(page.contains("<title>&lt;x&gt; unknown</title>"));
    }
}
