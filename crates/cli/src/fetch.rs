//! Inputs named by a URL, fetched as `go tool pprof` fetches them: the same
//! lines on standard error, the same saved copy, the same options
//! (`--seconds`, `--timeout`, `--tls-*`). The network side is
//! protoprof-net; this is what the shell sees of it.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use protoprof_net::saved::{copy_dir, save_copy};
use protoprof_net::tls::TlsFiles;
use protoprof_net::{fetch, FetchOptions, NetError};

use crate::cli::FetchArgs;
use crate::error::{CliError, Result};

/// The fetch options of this run.
static FETCH: OnceLock<FetchArgs> = OnceLock::new();

/// Sets the fetch options of this run; the first call wins.
pub fn set_fetch(args: FetchArgs) {
    let _ = FETCH.set(args);
}

fn args() -> FetchArgs {
    FETCH.get().cloned().unwrap_or_default()
}

/// `relay push`'s wait for the relay: `--timeout`, else 30 s.
pub fn relay_timeout() -> u64 {
    args().timeout.unwrap_or(30)
}

/// `send`'s time per attempt: `--timeout`, if given.
pub fn send_timeout() -> Option<Duration> {
    args().timeout.map(Duration::from_secs)
}

/// Whether `path` names a URL to fetch rather than a file to open: it
/// reads as a URL and no file has that name.
pub fn names_url(path: &Path) -> bool {
    protoprof_net::is_url(&path.to_string_lossy()) && !path.exists()
}

/// The profile at `url`, at most `max_bytes` of it. Prints what pprof
/// prints, and saves a copy of the bytes as they came.
pub fn read_url(url: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let args = args();
    let options = FetchOptions {
        seconds: args.seconds,
        timeout: args.timeout.map(Duration::from_secs),
        tls: TlsFiles {
            ca: args.tls_ca,
            cert: args.tls_cert,
            key: args.tls_key,
        },
        max_bytes,
    };
    let plan = fetch::plan(url, &options).map_err(failure)?;
    eprintln!("Fetching profile over HTTP from {}", plan.url);
    if let Some(duration) = plan.duration {
        eprintln!("Please wait... ({})", go_duration(duration));
    }
    let fetched = fetch::fetch_planned(plan, &options).map_err(failure)?;
    if is_markup(&fetched.bytes) {
        // pprof parses before it saves: a page is no profile to keep.
        return Err(CliError::failure(format!(
            "{}: unrecognized profile format: the server answered with a web page, not a \
             profile (/debug/pprof/ lists the profiles; /debug/pprof/profile is the CPU one)",
            fetched.url
        )));
    }
    match copy_dir().and_then(|dir| save_copy(&fetched.bytes, &dir)) {
        Ok(path) => eprintln!("Saved profile in {}", path.display()),
        Err(e) => eprintln!("Could not save profile: {e}"),
    }
    Ok(fetched.bytes)
}

/// Whether `bytes` are HTML or XML (a server's page), which no profile
/// format starts with.
fn is_markup(bytes: &[u8]) -> bool {
    let text = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    text.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'<')
}

fn failure(error: NetError) -> CliError {
    CliError::failure(error.to_string())
}

/// A whole number of seconds as Go prints a `time.Duration` (`1m30s`).
fn go_duration(duration: Duration) -> String {
    let total = duration.as_secs();
    let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, _) => format!("{minutes}m{seconds}s"),
        _ => format!("{hours}h{minutes}m{seconds}s"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_are_printed_as_go_prints_them() {
        let go = |s| super::go_duration(std::time::Duration::from_secs(s));
        assert_eq!(
            [go(5), go(90), go(3600), go(3725)],
            ["5s", "1m30s", "1h0m0s", "1h2m5s"]
        );
    }
}
