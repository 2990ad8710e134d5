//! What a run says on standard error, and how inputs are named there:
//! warnings (none with `--quiet`), and what a conversion leaves out or
//! refuses (`set_converting`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use protoprof_codec::Decoded;

pub fn shown(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// A decode's warnings on standard error, each naming the input `what`.
pub fn print_warnings<T>(what: &str, decoded: &Decoded<T>) {
    for warning in &decoded.warnings {
        warn(what, warning);
    }
    if decoded.warnings_suppressed > 0 {
        warn(
            what,
            format!("{} more warnings", decoded.warnings_suppressed),
        );
    }
}

/// Whether samples that refer to what does not exist are left out (the
/// default: reports show the rest, with a warning) or refused (`convert`
/// without `--drop-invalid`: its output would silently lack them).
static REFUSE_INVALID_SAMPLES: AtomicBool = AtomicBool::new(false);

/// Whether the command writes a converted copy (`convert`), for which
/// what a conversion leaves out is news; a report of sums is not.
static CONVERTING: AtomicBool = AtomicBool::new(false);

/// `--quiet`: no warnings.
static QUIET: AtomicBool = AtomicBool::new(false);

/// The command writes a converted copy: from here on the bridge's every
/// warning is printed, and OTLP samples whose references resolve to
/// nothing make the conversion fail, naming the first, unless
/// `drop_invalid`.
pub fn set_converting(drop_invalid: bool) {
    CONVERTING.store(true, Ordering::Relaxed);
    REFUSE_INVALID_SAMPLES.store(!drop_invalid, Ordering::Relaxed);
}

/// `--quiet`: warnings are not printed.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// `protoprof: warning: WHAT: MESSAGE` on standard error, unless `--quiet`.
pub fn warn(what: impl std::fmt::Display, message: impl std::fmt::Display) {
    if !QUIET.load(Ordering::Relaxed) {
        eprintln!("protoprof: warning: {what}: {message}");
    }
}

/// Whether samples that refer to nothing are refused ([`set_converting`]).
pub fn refuses_invalid_samples() -> bool {
    REFUSE_INVALID_SAMPLES.load(Ordering::Relaxed)
}

/// Whether the command writes a converted copy ([`set_converting`]).
pub fn converting() -> bool {
    CONVERTING.load(Ordering::Relaxed)
}
