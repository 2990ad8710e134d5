//! pprof's viewers (`-web`, `-eog`, `-evince`, `-gv`, `-kcachegrind`): the
//! report written to a temporary file that the first viewer which starts
//! is given, as pprof's `invokeVisualizer` does; the file is removed when
//! the viewer returns (and at least a second after it started, for
//! wrappers that hand the file to a running browser and return at once).

use std::io::Write;
use std::time::{Duration, Instant};

use crate::cli::Viewer;
use crate::error::{CliError, Result};

/// The commands tried for `viewer`, in pprof's order; each is split on
/// spaces and given the file last.
fn commands(viewer: Viewer) -> Vec<String> {
    let fixed = |c: &str| vec![c.to_string()];
    match viewer {
        Viewer::Browser => browsers(),
        Viewer::Eog => fixed("eog"),
        Viewer::Evince => fixed("evince"),
        Viewer::Gv => fixed("gv --noantialias"),
        Viewer::Kcachegrind => fixed("kcachegrind"),
    }
}

/// pprof's browsers on Linux: `$BROWSER`, then Chrome, Chromium, Firefox,
/// `sensible-browser`, and `xdg-open` in a desktop session.
fn browsers() -> Vec<String> {
    let mut commands: Vec<String> = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.is_empty())
        .into_iter()
        .collect();
    commands.extend(
        [
            "chrome",
            "google-chrome",
            "chromium",
            "firefox",
            "sensible-browser",
        ]
        .map(String::from),
    );
    if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
        commands.push("xdg-open".into());
    }
    commands
}

/// Shows `bytes` (a report of file type `suffix`) with `viewer`, waiting
/// for it to return.
pub(super) fn show(bytes: &[u8], suffix: &str, viewer: Viewer) -> Result<()> {
    let mut file = tempfile::Builder::new()
        .prefix("pprof")
        .suffix(&format!(".{suffix}"))
        .tempfile()
        .map_err(|e| CliError::failure(format!("a temporary file for the viewer: {e}")))?;
    file.write_all(bytes)
        .and_then(|_| file.flush())
        .map_err(|e| CliError::failure(format!("{}: {e}", file.path().display())))?;
    let tried = commands(viewer);
    for command in &tried {
        let mut words = command.split(' ').filter(|w| !w.is_empty());
        let Some(program) = words.next() else {
            continue;
        };
        let started = Instant::now();
        let child = std::process::Command::new(program)
            .args(words)
            .arg(file.path())
            .spawn();
        let Ok(mut child) = child else {
            continue;
        };
        let status = child.wait();
        std::thread::sleep(Duration::from_secs(1).saturating_sub(started.elapsed()));
        return match status {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(CliError::failure(format!("{program}: {s}"))),
            Err(e) => Err(CliError::failure(format!("{program}: {e}"))),
        };
    }
    Err(CliError::failure(format!(
        "no viewer could be started (tried {})",
        tried.join(", ")
    )))
}
