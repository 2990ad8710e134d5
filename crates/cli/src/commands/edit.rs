//! `protoprof edit`: text format in $VISUAL/$EDITOR, validated, then an
//! atomic replace that keeps the file's form (and gzip). Nothing is lost: the
//! file is untouched unless the edit is written, and the edited text stays in
//! a temporary file (its path printed) until then.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use protoprof_codec::detect::Form;
use protoprof_codec::{json, text, EncodeOptions};
use protoprof_validate::{validate_message, Options};

use crate::cli::EditArgs;
use crate::error::{CliError, Context, Result};
use crate::io::{self, shown, write_output};

pub fn run(args: &EditArgs) -> Result<u8> {
    let (path, type_name, force) = (args.file.as_path(), args.r#type.as_deref(), args.force);
    if path == Path::new("-") {
        return Err(CliError::failure("edit needs a file, not standard input"));
    }
    if crate::fetch::names_url(path) {
        return Err(CliError::failure(format!(
            "{}: edit changes a file, and a URL is none; edit the copy a fetch saves \
             (`protoprof inspect URL` says where)",
            shown(path)
        )));
    }
    let bytes = io::read_input(path)?;
    if type_name.is_none() && io::exporter_stream(path, &bytes)?.is_some() {
        return Err(CliError::failure(format!(
            "{}: a file exporter stream of several messages; edit edits one message \
             (`protoprof frames` lists them)",
            shown(path)
        )));
    }
    let loaded = io::decode_bytes(&shown(path), &bytes, type_name)?;
    // Replacing the file is what edit is for.
    io::allow_overwriting_inputs();
    let descriptor = loaded.decoded.descriptor.clone();
    let original = text::print(loaded.message());
    let kept = tempfile::Builder::new()
        .prefix("protoprof-edit-")
        .suffix(".txtpb")
        .tempfile()
        .context("creating the temporary file")?
        .into_temp_path()
        .keep()
        .context("keeping the temporary file")?;
    std::fs::write(&kept, &original).context(kept.display())?;
    let unchanged = |why: &str| {
        eprintln!(
            "protoprof: {why}; {} is unchanged; the edited text is in {}",
            shown(path),
            kept.display()
        );
        Ok(1)
    };
    let mut last_error: Option<String> = None;
    loop {
        if let Err(why) = run_editor(&kept) {
            return unchanged(&why);
        }
        let edited = std::fs::read_to_string(&kept).context(kept.display())?;
        if edited == original {
            eprintln!("protoprof: no changes; {} is unchanged", shown(path));
            let _ = std::fs::remove_file(&kept);
            return Ok(0);
        }
        let edited = without_error_notes(&edited);
        let message = match text::parse(&edited, &descriptor, io::limits().max_depth) {
            Ok(message) => message,
            Err(e) => {
                // The same text failing again: the editor gave up (or the
                // user did), so stop instead of reopening forever.
                if last_error.as_deref() == Some(edited.as_str()) {
                    return unchanged(&format!("the edited text does not parse: {e}"));
                }
                eprintln!("protoprof: the edited text does not parse: {e}; re-opening the editor");
                std::fs::write(&kept, with_error_note(&edited, &e)).context(kept.display())?;
                last_error = Some(edited);
                continue;
            }
        };
        let report = validate_message(&*message, &Options::default());
        match report {
            Some(r) if !r.is_valid() && !force => {
                eprintln!(
                    "protoprof: the edited profile is not valid:\n{}",
                    r.render_human().trim_end()
                );
                if !std::io::stdin().is_terminal() || !ask("re-open the editor? [Y/n] ") {
                    return unchanged("not written (use --force to write an invalid profile)");
                }
            }
            _ => {
                write_back(
                    path,
                    &*message,
                    loaded.decoded.form,
                    loaded.decoded.decoded.gzipped,
                )?;
                let _ = std::fs::remove_file(&kept);
                eprintln!("protoprof: wrote {}", shown(path));
                return Ok(0);
            }
        }
    }
}

/// Runs `$VISUAL`, `$EDITOR` or `vi` on `file`; why not, when it fails.
fn run_editor(file: &Path) -> std::result::Result<(), String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file)
        .status();
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("the editor ({editor}) exited with {s}")),
        Err(e) => Err(format!("cannot run the editor ({editor}): {e}")),
    }
}

/// How the notes [`with_error_note`] adds begin; they are comments, so the
/// text parses the same with them, and they are taken out before parsing.
const ERROR_NOTE: &str = "# protoprof: ";

/// `text` with a comment under the line the parse error is on, its caret
/// under the column: the error where the user is looking.
fn with_error_note(text: &str, error: &protoprof_codec::CodecError) -> String {
    let (line, column) = match error {
        protoprof_codec::CodecError::Text { line, column, .. } => {
            (*line as usize, *column as usize)
        }
        _ => (0, 0),
    };
    let note = format!(
        "{ERROR_NOTE}{}^ {error}",
        " ".repeat(column.saturating_sub(ERROR_NOTE.len() + 1))
    );
    let mut lines: Vec<&str> = text.lines().collect();
    let at = line.min(lines.len());
    lines.insert(at, &note);
    lines.join("\n") + "\n"
}

fn without_error_notes(text: &str) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(ERROR_NOTE))
        .collect();
    kept.join("\n") + "\n"
}

fn ask(question: &str) -> bool {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    !answer.trim().to_ascii_lowercase().starts_with('n')
}

/// Writes in the form the file had: binary (gzipped if it was), JSON or text.
fn write_back(
    path: &Path,
    message: &dyn protobuf::MessageDyn,
    form: Form,
    gzipped: bool,
) -> Result<()> {
    let bytes = encoded_as_read(path, message, form, gzipped)?;
    write_output(&PathBuf::from(path), &bytes)
}

/// `message` in the form `path` was read in: binary (gzipped if it was),
/// JSON or text.
pub(crate) fn encoded_as_read(
    path: &Path,
    message: &dyn protobuf::MessageDyn,
    form: Form,
    gzipped: bool,
) -> Result<Vec<u8>> {
    let bytes = match form {
        Form::Json if io::user_schemas().is_some() => {
            super::codec::user_json(path, message)?.into_bytes()
        }
        Form::Json => json::print(message, true).into_bytes(),
        Form::Text => text::print(message).into_bytes(),
        _ => io::encode(message, &EncodeOptions::default()).context("encoding")?,
    };
    match gzipped {
        true => protoprof_codec::gzip::compress(&bytes, 6).context("compressing"),
        false => Ok(bytes),
    }
}
