//! Outputs never replace inputs: every file read is remembered by
//! identity, and a write to one is refused unless the command replaces
//! its input on purpose (`--in-place`, `edit`).

use std::path::{Path, PathBuf};

use crate::error::{CliError, Result};

/// The inputs this run has read, by file identity, with the path each was
/// named by: an output that is one of them is refused.
static INPUTS: std::sync::Mutex<Vec<(FileIdentity, PathBuf)>> = std::sync::Mutex::new(Vec::new());

/// Whether outputs may replace inputs (`--in-place`, `edit`).
static OVERWRITE_INPUTS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets this run's outputs replace its inputs: `convert --in-place` and
/// `edit`, whose point that is.
pub fn allow_overwriting_inputs() {
    OVERWRITE_INPUTS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// What makes two paths one file: device and inode where there are such
/// (symbolic links, `./` spellings and hard links all meet there), the
/// canonical path elsewhere.
#[derive(Clone, PartialEq, Eq, Debug)]
struct FileIdentity {
    #[cfg(unix)]
    id: (u64, u64),
    #[cfg(not(unix))]
    id: PathBuf,
}

impl FileIdentity {
    /// The file at `path` (links followed), when there is one; it need not
    /// be readable.
    #[cfg(unix)]
    fn of_path(path: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            id: (metadata.dev(), metadata.ino()),
        })
    }

    #[cfg(not(unix))]
    fn of_path(path: &Path) -> Option<Self> {
        path.canonicalize().ok().map(|id| FileIdentity { id })
    }
}

/// Notes `path` as an input of this run.
pub(super) fn remember_input(path: &Path) {
    let Some(identity) = FileIdentity::of_path(path) else {
        return;
    };
    let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    if !inputs.iter().any(|(known, _)| *known == identity) {
        inputs.push((identity, path.to_path_buf()));
    }
}

/// Refuses to write to `output` when it is a file this run read, unless
/// [`allow_overwriting_inputs`] was called.
pub(super) fn refuse_input(output: &Path) -> Result<()> {
    if OVERWRITE_INPUTS.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    let Some(identity) = FileIdentity::of_path(output) else {
        return Ok(());
    };
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    match inputs.iter().find(|(known, _)| *known == identity) {
        Some((_, input)) => Err(overwrite_refused(output, input)),
        None => Ok(()),
    }
}

/// The refusal to write `output` over `input`.
fn overwrite_refused(output: &Path, input: &Path) -> CliError {
    let same = match output == input {
        true => String::new(),
        false => format!(" (the same file as input {})", input.display()),
    };
    CliError::failure(format!(
        "{}: is also an input{same}; refusing to overwrite it",
        output.display()
    ))
}

/// Refuses, before any work, to write over one of `inputs` unless
/// `--in-place`; the writes themselves check again ([`refuse_input`]).
pub fn check_not_input(output: &Path, inputs: &[&Path], in_place: bool) -> Result<()> {
    if in_place || output == Path::new("-") {
        return Ok(());
    }
    let Some(identity) = FileIdentity::of_path(output) else {
        return Ok(());
    };
    match inputs
        .iter()
        .find(|i| FileIdentity::of_path(i).as_ref() == Some(&identity))
    {
        Some(input) => Err(overwrite_refused(output, input)),
        None => Ok(()),
    }
}
