//! What can go wrong on the network side, with the URL or file it concerns.

use std::path::PathBuf;

/// An error of a fetch, a saved copy, a receiver or a sender.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The text is not a URL protoprof can fetch.
    #[error("{url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The request failed before an answer (connection, TLS, timeout).
    #[error("{url}: http fetch: {message}")]
    Request {
        /// The URL requested.
        url: String,
        /// What the HTTP client reported.
        message: String,
    },
    /// The server answered with a status other than 200.
    #[error("{url}: server response: {status}{}", detail.as_ref().map(|d| format!(" - {d}")).unwrap_or_default())]
    Status {
        /// The URL requested.
        url: String,
        /// The status line's code and reason (`404 Not Found`).
        status: String,
        /// The body of a pprof handler's error (`X-Go-Pprof`, `text/plain`).
        detail: Option<String>,
    },
    /// The answer is larger than the input limit.
    #[error("{url}: the answer is larger than the input limit of {limit} bytes")]
    TooLarge {
        /// The URL requested.
        url: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// A TLS file could not be read or holds no usable certificate or key.
    #[error("{}: {message}", path.display())]
    Tls {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The saved copy could not be written.
    #[error("could not save profile in {}: {source}", path.display())]
    Save {
        /// The directory or file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A listener could not be bound or served, or `--out` opened.
    #[error("{what}: {message}")]
    Listen {
        /// The address or file.
        what: String,
        /// What went wrong.
        message: String,
    },
    /// An input to send could not be read or made into requests.
    #[error("{what}: {message}")]
    Payload {
        /// The file.
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// The exporter's configuration (flags, `OTEL_EXPORTER_OTLP_*`) is wrong.
    #[error("{variable}: {message}")]
    Config {
        /// The flag or variable.
        variable: String,
        /// What is wrong with it.
        message: String,
    },
}
