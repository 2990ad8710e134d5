//! The store's errors: each says what and where, in one line.

/// What went wrong reading or writing a store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or directory could not be read or written.
    #[error("{0}")]
    Io(String),
    /// A profile the store cannot take (a reference to nothing, ...).
    #[error("{0}")]
    Invalid(String),
    /// A selector, time or id that does not parse.
    #[error("{0}")]
    Query(String),
    /// The engine failed (a file of another schema, a truncated file, ...).
    #[error("{0}")]
    Engine(String),
    /// A file the engine listed was gone when it read it: a compaction
    /// swapped its partition meanwhile. Reading again reads the new files.
    #[error("{0}")]
    Vanished(String),
    /// The directory holds no store.
    #[error("{0}: not a profile store (no samples/ directory)")]
    NotAStore(String),
}

impl From<datafusion::error::DataFusionError> for StoreError {
    fn from(e: datafusion::error::DataFusionError) -> Self {
        // DataFusion's message can span lines (a context, then the cause).
        let text = e.to_string().replace('\n', " ");
        match vanished(&e) {
            true => StoreError::Vanished(text),
            false => StoreError::Engine(text),
        }
    }
}

/// Whether `e` comes of a file or object not found. Its cause may sit
/// under several layers (the engine's context, Arrow's and Parquet's
/// external errors), each with a `Debug` form that names its kind.
fn vanished(e: &datafusion::error::DataFusionError) -> bool {
    let chain = format!("{e:?}");
    chain.contains("NotFound") || chain.contains("No such file or directory")
}

/// An error of Arrow's or Parquet's as the engine's.
pub(crate) fn engine_error(e: impl std::fmt::Display) -> StoreError {
    StoreError::Engine(e.to_string())
}

/// The error of an I/O step on `path`: the path, then what the system said.
pub(crate) fn io_at(path: &std::path::Path) -> impl Fn(std::io::Error) -> StoreError {
    let path = path.display().to_string();
    move |e| StoreError::Io(format!("{path}: {e}"))
}
