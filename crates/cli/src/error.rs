//! Errors: one clear line, an optional detail, and the exit status.

use std::fmt;

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

impl<T, E: fmt::Display> Context<T> for Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T, CliError> {
        self.map_err(|e| CliError::failure(format!("{what}: {e}")))
    }
}

pub type Result<T, E = CliError> = std::result::Result<T, E>;
