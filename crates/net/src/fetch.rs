//! One profile fetched over HTTP or HTTPS, as pprof's `fetchURL` fetches
//! it: a GET with a timeout, the body bounded by the input limit, and on
//! any answer but 200 the status, with the body when a pprof handler wrote
//! it (`X-Go-Pprof` and `text/plain`, as Go's `net/http/pprof` answers
//! errors).

use std::time::Duration;

use crate::source_url::{adjust, Adjusted};
use crate::tls::{self, TlsFiles};
use crate::NetError;

/// How to fetch.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// pprof's `-seconds`: the duration of a CPU or trace profile, set in
    /// the URL's query.
    pub seconds: Option<u64>,
    /// pprof's `-timeout`; by default 1.5 × the duration, or 60 s. The
    /// request may take 5 s more, as pprof allows.
    pub timeout: Option<Duration>,
    /// CA, client certificate and key.
    pub tls: TlsFiles,
    /// The largest answer accepted, in bytes.
    pub max_bytes: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            seconds: None,
            timeout: None,
            tls: TlsFiles::default(),
            max_bytes: protoprof_codec::Limits::DEFAULT.max_input_bytes,
        }
    }
}

/// What a fetch brought.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL requested (after [`adjust`]).
    pub url: String,
    /// The answer's body, as it came (a profile from `net/http/pprof` is
    /// gzip-compressed).
    pub bytes: Vec<u8>,
}

/// What [`fetch_profile`] will request for `text`, and how long it waits:
/// for the "Fetching profile over HTTP from URL" line pprof users know.
pub fn plan(text: &str, options: &FetchOptions) -> Result<Adjusted, NetError> {
    adjust(text, options.seconds, options.timeout)
}

/// Fetches the profile `text` names.
pub fn fetch_profile(text: &str, options: &FetchOptions) -> Result<Fetched, NetError> {
    fetch_planned(plan(text, options)?, options)
}

/// Fetches what [`plan`] made of a URL.
pub fn fetch_planned(adjusted: Adjusted, options: &FetchOptions) -> Result<Fetched, NetError> {
    let tls = tls::config(&options.tls, adjusted.verify_certificate)?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(adjusted.timeout + Duration::from_secs(5)))
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .into();
    let url = adjusted.url;
    let request_error = |e: ureq::Error| NetError::Request {
        url: url.clone(),
        message: e.to_string(),
    };
    let mut response = agent.get(&url).call().map_err(request_error)?;
    let status = response.status();
    if status != ureq::http::StatusCode::OK {
        return Err(status_error(&url, &mut response));
    }
    let bytes = response
        .body_mut()
        .with_config()
        .limit(options.max_bytes)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(limit) => NetError::TooLarge {
                url: url.clone(),
                limit,
            },
            other => request_error(other),
        })?;
    Ok(Fetched { url, bytes })
}

/// The error for an answer other than 200: the status line, and the body
/// when a pprof handler wrote it (at most 4 KiB of it).
fn status_error(url: &str, response: &mut ureq::http::Response<ureq::Body>) -> NetError {
    let status = response.status();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let from_pprof =
        !header("X-Go-Pprof").is_empty() && header("Content-Type").contains("text/plain");
    let detail = from_pprof
        .then(|| {
            response
                .body_mut()
                .with_config()
                .limit(4096)
                .read_to_string()
                .ok()
        })
        .flatten();
    NetError::Status {
        url: url.to_string(),
        status: format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        )
        .trim_end()
        .to_string(),
        detail,
    }
}
