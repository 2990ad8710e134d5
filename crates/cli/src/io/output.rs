//! Writing outputs: files atomically (a temporary file renamed into
//! place), standard output ignoring a closed pipe, the pager, long lines
//! cut, and colour.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::overwrite::refuse_input;
use super::warnings::shown;
use crate::cli::ColorChoice;
use crate::error::{Context, Result};

/// Human output's longest line; past it a line is cut, saying how much.
const MAX_LINE_CHARS: usize = 400;

/// `text` with every line longer than [`MAX_LINE_CHARS`] cut there (a
/// 794 kB string read from a misdetected file would flood a terminal),
/// unless `full`. Machine forms (`decode`, `--format json`) are never cut.
pub fn cut_long_lines(text: String, full: bool) -> String {
    let too_long = |line: &str| line.chars().nth(MAX_LINE_CHARS).is_some();
    if full || !text.lines().any(too_long) {
        return text;
    }
    let mut out = Vec::with_capacity(text.len().min(1 << 20));
    for line in text.lines() {
        write_cut_line(&mut out, line, false).expect("writing to memory");
    }
    String::from_utf8(out).expect("cut at character boundaries")
}

/// Writes `line` and a newline, cut as [`cut_long_lines`] cuts unless `full`.
pub fn write_cut_line(out: &mut dyn Write, line: &str, full: bool) -> std::io::Result<()> {
    match line.char_indices().nth(MAX_LINE_CHARS).filter(|_| !full) {
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            let note = format!("… ({rest} more characters; --full shows all)");
            writeln!(out, "{}{note}", &line[..cut])
        }
        None => writeln!(out, "{line}"),
    }
}

/// Writes `bytes` to `path` (`-`: standard output). Files are written to a
/// temporary file beside them and renamed into place, so a reader never
/// sees half a file and a failure leaves the old one.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    write_output_with(path, |out| out.write_all(bytes))
}

/// [`write_output_with`], compressed with gzip as it is written when
/// `gzip` (`--gzip`, or an output name ending in `.gz`).
pub fn write_output_gzip(
    path: &Path,
    gzip: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    write_output_with(path, |out| match gzip {
        true => protoprof_codec::gzip::compress_into(out, 6, write),
        false => write(out),
    })
}

/// [`write_output`] for output made as it is written: `write` writes it
/// through a buffer, so it need not be held whole.
pub fn write_output_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    if path == Path::new("-") {
        return write_stdout(write);
    }
    refuse_input(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // tempfile's errors name the temporary file: the user named the output.
    let tmp = tempfile::NamedTempFile::new_in(&dir)
        .map_err(without_temporary_path)
        .context(shown(path))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file());
    write(&mut out)
        .and_then(|_| out.flush())
        .context(shown(path))?;
    drop(out);
    // Temporary files are created private; the result gets the replaced
    // file's permissions, or the usual ones for a new file.
    let existing = std::fs::metadata(path).ok();
    let permissions = match &existing {
        Some(existing) => existing.permissions(),
        None => default_permissions(tmp.as_file())?,
    };
    tmp.as_file()
        .set_permissions(permissions)
        .context(shown(path))?;
    // A file replaced (`--in-place`, or an output written again) is only
    // replaced once the new bytes are on disk, so a crash cannot lose both.
    // A new file is not synced, as `gzip` and `go tool pprof` do not: a
    // crash can lose it, nothing else (docs/cli.md).
    if existing.is_some() {
        tmp.as_file().sync_all().context(shown(path))?;
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .context(shown(path))?;
    Ok(())
}

/// One of tempfile's errors without the temporary file's path, which its
/// message ends with (` at path "dir/.tmpXXXX"`): the user named the output.
fn without_temporary_path(e: std::io::Error) -> std::io::Error {
    let text = e.to_string();
    match text.rsplit_once(" at path ") {
        Some((message, _)) => std::io::Error::new(e.kind(), message.to_string()),
        None => e,
    }
}

#[cfg(unix)]
fn default_permissions(_: &std::fs::File) -> Result<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Ok(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions(file: &std::fs::File) -> Result<std::fs::Permissions> {
    file.metadata()
        .map(|m| m.permissions())
        .context("permissions")
}

fn ignore_broken_pipe(e: std::io::Error) -> std::io::Result<()> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

/// Prints text to standard output, ignoring a closed pipe (`| head`).
pub fn print(text: &str) -> Result<()> {
    write_output(Path::new("-"), text.as_bytes())
}

/// ANSI styles, or nothing when colour is off.
#[derive(Clone, Copy)]
pub struct Style {
    pub enabled: bool,
}

impl Style {
    /// Colour when asked, or when stdout is a terminal and NO_COLOR is unset.
    pub fn new(choice: ColorChoice) -> Style {
        let enabled = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        };
        Style { enabled }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
}

/// What `write` writes, to standard output (buffered) as it is made,
/// ignoring a closed pipe (`| head`).
pub fn write_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out)
        .and_then(|_| out.flush())
        .or_else(ignore_broken_pipe)
        .context("<stdout>")
}

/// Human output written by `write` as it is made: through `$PAGER` (default
/// `less -FRX`) when standard output is a terminal, else to standard output;
/// a closed pipe or a pager quit early ends it quietly.
pub fn page_with(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -FRX".into());
    let child = match std::io::stdout().is_terminal() {
        true => std::process::Command::new("sh")
            .arg("-c")
            .arg(&pager)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .ok(),
        false => None,
    };
    let Some(mut child) = child else {
        return write_stdout(write);
    };
    if let Some(stdin) = child.stdin.take() {
        let mut stdin = std::io::BufWriter::new(stdin);
        let _ = write(&mut stdin).and_then(|_| stdin.flush());
    }
    child.wait().context(format!("pager {pager:?}"))?;
    Ok(())
}
