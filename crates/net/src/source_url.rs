//! Which inputs are URLs, and the URL a fetch requests: pprof's
//! `adjustURL` (`--seconds` replaces the query's `seconds`, or the query's
//! `seconds` sets the duration; the timeout follows from the duration).

use std::time::Duration;

use crate::NetError;

/// The schemes protoprof fetches. `https+insecure` is pprof's: HTTPS
/// without checking the server's certificate.
const SCHEMES: &[&str] = &["http", "https", "https+insecure"];

/// The path `go tool pprof` asks a server for when a URL names none: Go's
/// CPU profile handler.
pub const CPU_PROFILE_PATH: &str = "/debug/pprof/profile";

/// Whether `text` names a URL rather than a file: a scheme and `://`, or,
/// as pprof takes it, a bare `host:port` with an optional path
/// (`localhost:6060/debug/pprof/heap`, fetched over HTTP). Unlike pprof, a
/// bare name without a port (`cpu.pb.gz`) stays a file name, so a mistyped
/// file is reported missing rather than looked up in DNS.
pub fn is_url(text: &str) -> bool {
    match text.split_once("://") {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => is_bare_host_and_port(text),
    }
}

/// `host:port` or `host:port/path`: a host of letters, digits, `-` and `.`
/// (or a bracketed IPv6 address), then a port of digits.
fn is_bare_host_and_port(text: &str) -> bool {
    let authority = text.split('/').next().unwrap_or("");
    let Some((host, port)) = authority.rsplit_once(':') else {
        return false;
    };
    let host_ok = (host.starts_with('[') && host.ends_with(']'))
        || (!host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.".contains(c)));
    host_ok && !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit())
}

/// A URL ready to be requested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjusted {
    /// The URL to request, `seconds` set as pprof sets it.
    pub url: String,
    /// Whether the server's certificate is checked (not for `https+insecure`).
    pub verify_certificate: bool,
    /// How long the profile takes to make (`seconds`), when known.
    pub duration: Option<Duration>,
    /// How long to wait for it.
    pub timeout: Duration,
}

/// `text` adjusted as pprof adjusts a source URL: `seconds` (when given)
/// replaces the query's `seconds`; otherwise the query's `seconds` is the
/// duration. Without `timeout`, the timeout is 1.5 × the duration, or 60 s.
pub fn adjust(
    text: &str,
    seconds: Option<u64>,
    timeout: Option<Duration>,
) -> Result<Adjusted, NetError> {
    let bad = |reason: &str| NetError::Url {
        url: text.to_string(),
        reason: reason.to_string(),
    };
    let (scheme, rest) = match text.split_once("://") {
        Some(parts) => parts,
        None if is_bare_host_and_port(text) => ("http", text),
        None => return Err(bad("not a URL")),
    };
    if !SCHEMES.contains(&scheme) {
        return Err(bad(
            "protoprof fetches http://, https:// and https+insecure:// URLs",
        ));
    }
    let (before_fragment, fragment) = match rest.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (rest, None),
    };
    let (authority_path, query) = match before_fragment.split_once('?') {
        Some((before, query)) => (before, query),
        None => (before_fragment, ""),
    };
    if authority_path.split('/').next().unwrap_or("").is_empty() {
        return Err(bad("the URL names no host"));
    }
    // As `go tool pprof`: a server alone means its CPU profile.
    let authority_path = match authority_path.split_once('/') {
        None | Some((_, "")) => {
            format!("{}{CPU_PROFILE_PATH}", authority_path.trim_end_matches('/'))
        }
        Some(_) => authority_path.to_string(),
    };
    let mut pairs = query_pairs(query);
    let duration = match seconds {
        Some(seconds) => {
            pairs.retain(|(key, _)| key != "seconds");
            pairs.push(("seconds".into(), seconds.to_string()));
            Some(seconds)
        }
        None => pairs
            .iter()
            .find(|(key, _)| key == "seconds")
            .and_then(|(_, value)| value.parse::<i32>().ok())
            .and_then(|s| u64::try_from(s).ok()),
    }
    .filter(|&s| s > 0)
    .map(Duration::from_secs);
    let timeout = timeout.unwrap_or(match duration {
        Some(duration) => duration + duration / 2,
        None => Duration::from_secs(60),
    });
    let insecure = scheme == "https+insecure";
    let mut url = format!(
        "{}://{authority_path}",
        if insecure { "https" } else { scheme }
    );
    let query = encode_query(pairs);
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query);
    }
    if let Some(fragment) = fragment {
        url.push('#');
        url.push_str(fragment);
    }
    Ok(Adjusted {
        url,
        verify_certificate: !insecure,
        duration,
        timeout,
    })
}

/// A query's key-value pairs, decoded (`+` is a space), in order.
fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split(['&', ';'])
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (unescape(key), unescape(value))
        })
        .collect()
}

/// The query as Go's `url.Values.Encode` writes it: sorted by key (values
/// of one key in their order), each part escaped as `url.QueryEscape` does.
fn encode_query(mut pairs: Vec<(String, String)>) -> String {
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
        .iter()
        .map(|(key, value)| format!("{}={}", escape(key), escape(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Go's `url.QueryEscape`: letters, digits and `-_.~` as they are, a space
/// as `+`, every other byte as `%XX`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// The inverse of [`escape`] (and of any other percent-encoding); a `%`
/// not followed by two hex digits is kept as it is.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let digit = |at: usize| bytes.get(at).and_then(|&b| hex(b));
                match (digit(i + 1), digit(i + 2)) {
                    (Some(high), Some(low)) => {
                        out.push((high * 16 + low) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_replace_the_query_and_set_the_timeout() {
        let a = adjust(
            "http://h:6060/debug/pprof/profile?seconds=30",
            Some(5),
            None,
        )
        .unwrap();
        assert_eq!(a.url, "http://h:6060/debug/pprof/profile?seconds=5");
        assert_eq!(a.duration, Some(Duration::from_secs(5)));
        assert_eq!(a.timeout, Duration::from_millis(7500));
        let a = adjust(
            "http://h/debug/pprof/profile?seconds=10&debug=0",
            None,
            None,
        )
        .unwrap();
        assert_eq!(a.url, "http://h/debug/pprof/profile?debug=0&seconds=10");
        assert_eq!(a.timeout, Duration::from_secs(15));
        let a = adjust("http://h/debug/pprof/heap", None, None).unwrap();
        assert_eq!(
            (a.url.as_str(), a.timeout),
            ("http://h/debug/pprof/heap", Duration::from_secs(60))
        );
        let a = adjust("http://h/x", None, Some(Duration::from_secs(3))).unwrap();
        assert_eq!(a.timeout, Duration::from_secs(3));
    }

    #[test]
    fn queries_are_written_as_go_writes_them() {
        let a = adjust("http://h/p?b=x%20y&a=1+2&a=%2F", None, None).unwrap();
        assert_eq!(a.url, "http://h/p?a=1+2&a=%2F&b=x+y");
        let a = adjust("http://h/p?seconds=x", None, None).unwrap();
        assert_eq!((a.duration, a.timeout), (None, Duration::from_secs(60)));
    }

    #[test]
    fn insecure_https_and_bad_urls() {
        let a = adjust("https+insecure://h:1/p", None, None).unwrap();
        assert_eq!(
            (a.url.as_str(), a.verify_certificate),
            ("https://h:1/p", false)
        );
        assert!(adjust("ftp://h/p", None, None).is_err());
        assert!(adjust("http:///p", None, None).is_err());
        assert!(is_url("https+insecure://h/p") && is_url("ftp://x"));
        assert!(is_url("localhost:6060/debug/pprof/heap") && is_url("[::1]:6060"));
        assert!(!is_url("profile.pb.gz") && !is_url("dir/a:b.pb") && !is_url("://x"));
        let a = adjust("localhost:6060/debug/pprof/heap", None, None).unwrap();
        assert_eq!(a.url, "http://localhost:6060/debug/pprof/heap");
    }
}
