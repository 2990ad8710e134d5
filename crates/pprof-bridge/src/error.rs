//! Why a conversion fails, and what it had to change on the way.

use std::fmt;

/// A conversion that cannot be done: the input's references do not resolve
/// (validate it first) or it has no profile.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BridgeError {
    #[error("{path}: refers to {what} {value}, which does not exist")]
    Unresolved {
        path: String,
        what: &'static str,
        value: i128,
    },
    #[error("{path}: two entries share id {id}")]
    DuplicateId { path: String, id: u64 },
    #[error("{path}: the ProfileContainer has no profile")]
    MissingProfile { path: String },
    #[error("cannot merge: {0}")]
    Incompatible(String),
}

/// Something pprof cannot hold exactly, and what was done instead. Never
/// silent: every conversion returns its warnings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeWarning {
    pub path: String,
    pub message: String,
}

impl fmt::Display for BridgeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A converted value with its warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted<T> {
    pub value: T,
    pub warnings: Vec<BridgeWarning>,
}
