//! Who may ask, and the headers every answer carries.
//!
//! A server bound to loopback answers loopback peers only, and only
//! requests whose `Host` is a loopback name: a page elsewhere that points
//! its own host name at 127.0.0.1 (DNS rebinding) would otherwise read the
//! profile through the visitor's browser.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response};
use http_body_util::Full;

/// The policy: the page's script and styles come from the server only; no
/// inline script runs, no frame embeds the page, nothing is fetched
/// elsewhere.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; \
     base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Who is admitted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guard {
    /// Bound to loopback: refuse everything that is not.
    pub(crate) loopback_only: bool,
}

impl Guard {
    pub(crate) fn admits_peer(&self, peer: SocketAddr) -> bool {
        !self.loopback_only || peer.ip().is_loopback()
    }

    /// Whether `request` is answered: always, unless bound to loopback and
    /// its `Host` names another machine.
    pub(crate) fn admits<B>(&self, request: &Request<B>) -> bool {
        if !self.loopback_only {
            return true;
        }
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        is_loopback_host(host)
    }
}

impl Guard {
    /// Whether a request that changes something is the page's own: JSON
    /// (which a page elsewhere cannot send without asking first, and is
    /// refused when it asks), and no `Origin` but the server's own.
    pub(crate) fn admits_change<B>(&self, request: &Request<B>) -> Result<(), &'static str> {
        let header = |name| {
            let value = request.headers().get(name).and_then(|h| h.to_str().ok());
            value.unwrap_or("").to_string()
        };
        if !header(header::CONTENT_TYPE).starts_with("application/json") {
            return Err("changes are sent as application/json");
        }
        let origin = header(header::ORIGIN);
        if !origin.is_empty() && origin != format!("http://{}", header(header::HOST)) {
            return Err("changes come from the page this server serves only");
        }
        Ok(())
    }
}

/// `localhost`, `127.x.y.z` or `[::1]`, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `response` with the headers every answer carries.
pub(crate) fn secured(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_loopback_hosts() {
        for host in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "127.8.0.1",
            "[::1]:80",
            "[::1]",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "",
            "evil.example:8080",
            "localhost.evil.example",
            "10.0.0.1:80",
            "[::2]:1",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
