//! Errors: one clear line, an optional detail, and the exit status.

use std::any::Any;
use std::fmt;

use protoprof_codec::{CodecError, WireProblem};

#[derive(Debug)]
pub struct CliError {
    /// 1: the data is invalid or a check failed. 2: usage, I/O or decode error.
    pub status: u8,
    pub message: String,
}

impl CliError {
    pub fn failure(message: impl Into<String>) -> Self {
        CliError {
            status: 2,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        CliError {
            status: 1,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Errors of the lower layers, named with the file they came from.
pub trait Context<T> {
    fn context(self, what: impl fmt::Display) -> Result<T, CliError>;
}

impl<T, E: fmt::Display + 'static> Context<T> for Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T, CliError> {
        self.map_err(|e| {
            let hint = limit_hint(&e).unwrap_or_default();
            CliError::failure(format!("{what}: {e}{hint}"))
        })
    }
}

/// For an error a limit caused: the option and variable that raise it.
fn limit_hint(error: &dyn Any) -> Option<&'static str> {
    let depth = |problem: &WireProblem| matches!(problem, WireProblem::DepthExceeded { .. });
    Some(match error.downcast_ref::<CodecError>()? {
        CodecError::InputTooLarge { .. } => {
            " (raise the limit with --max-input-size or PROTOPROF_MAX_INPUT_SIZE)"
        }
        CodecError::InflatedTooLarge { .. } => {
            " (raise the limit with --max-inflated-size or PROTOPROF_MAX_INFLATED_SIZE)"
        }
        CodecError::Wire { problem, .. } | CodecError::Malformed { problem, .. }
            if depth(problem) =>
        {
            " (raise the limit with --max-depth or PROTOPROF_MAX_DEPTH)"
        }
        CodecError::FrameTooLarge { .. } => {
            " (raise the limit with --max-frame-size or PROTOPROF_MAX_FRAME_SIZE)"
        }
        _ => return None,
    })
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;

/// clap's rendered usage error as one line: its message (with the lines
/// that continue it), its tips, and the help to read (`help`, e.g.
/// `protoprof top --help`), without blank lines and the usage block.
pub fn one_line_usage(rendered: &str, help: &str) -> String {
    let mut message: Vec<&str> = Vec::new();
    let mut tips = String::new();
    let mut in_message = false;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(text) = line.strip_prefix("error: ") {
            message.push(text);
            in_message = true;
        } else if let Some(tip) = line.strip_prefix("tip: ") {
            tips.push_str(&format!("; {tip}"));
            in_message = false;
        } else if line.starts_with("Usage:") || line.starts_with("For more information") {
            in_message = false;
        } else if in_message {
            message.push(line);
        }
    }
    format!("{}{tips} (see {help})", message.join(" "))
}
