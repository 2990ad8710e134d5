//! How `send` exports: the OTLP exporter's settings, from the
//! `OTEL_EXPORTER_OTLP_*` variables (each `_PROFILES_` form first), and
//! the command line over both.

use std::path::PathBuf;
use std::time::Duration;

use crate::receive::config::HTTP_PATH;
use crate::NetError;

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OTLP/gRPC.
    Grpc,
    /// OTLP/HTTP, binary (the specification's default).
    HttpProtobuf,
    /// OTLP/HTTP, JSON.
    HttpJson,
}

impl Protocol {
    /// The name in `OTEL_EXPORTER_OTLP_PROTOCOL`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
        }
    }

    /// The protocol a name names.
    pub fn from_name(name: &str) -> Option<Protocol> {
        match name.trim() {
            "grpc" => Some(Protocol::Grpc),
            "http/protobuf" => Some(Protocol::HttpProtobuf),
            "http/json" => Some(Protocol::HttpJson),
            _ => None,
        }
    }
}

/// An exporter's settings.
#[derive(Debug, Clone)]
pub struct SendConfig {
    /// Where requests go: the full URL of the signal for HTTP
    /// (`…/v1development/profiles`), `scheme://host:port` for gRPC.
    pub endpoint: String,
    /// The transport.
    pub protocol: Protocol,
    /// Extra request headers (gRPC metadata).
    pub headers: Vec<(String, String)>,
    /// Compress requests with gzip.
    pub gzip: bool,
    /// The time one attempt may take.
    pub timeout: Duration,
    /// A CA certificate (PEM) to trust, for `https` endpoints.
    pub certificate: Option<PathBuf>,
    /// A client certificate and its key (PEM), for mutual TLS.
    pub client_certificate: Option<PathBuf>,
    /// The client certificate's key.
    pub client_key: Option<PathBuf>,
    /// The largest request sent: larger inputs are split (the Collector's
    /// 4 MiB gRPC limit, 20 MiB over HTTP).
    pub max_request_bytes: usize,
    /// Retries after a retryable answer.
    pub retry: RetryPolicy,
}

/// Exponential backoff with jitter.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait (a `Retry-After` may ask for longer, up to
    /// `max_elapsed`).
    pub max_interval: Duration,
    /// No retry starts after this long since the first attempt.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial: Duration::from_secs(1),
            max_interval: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(30),
        }
    }
}

/// What the command line says; each `None` is taken from the environment.
#[derive(Debug, Clone, Default)]
pub struct SendOverrides {
    /// `--endpoint`: a base URL as `OTEL_EXPORTER_OTLP_ENDPOINT` is (the
    /// signal path is appended for HTTP when the URL has no path).
    pub endpoint: Option<String>,
    /// `--protocol`.
    pub protocol: Option<Protocol>,
    /// `--header k=v` (added to the variables' headers).
    pub headers: Vec<(String, String)>,
    /// `--compression gzip|none`.
    pub gzip: Option<bool>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
}

/// One variable, its `_PROFILES_` form first.
fn variable(env: &dyn Fn(&str) -> Option<String>, suffix: &str) -> Option<(String, String)> {
    [
        format!("OTEL_EXPORTER_OTLP_PROFILES_{suffix}"),
        format!("OTEL_EXPORTER_OTLP_{suffix}"),
    ]
    .into_iter()
    .find_map(|name| {
        env(&name)
            .filter(|v| !v.trim().is_empty())
            .map(|v| (name, v))
    })
}

fn config_error(variable: &str, message: impl Into<String>) -> NetError {
    NetError::Config {
        variable: variable.to_string(),
        message: message.into(),
    }
}

impl SendConfig {
    /// The settings from `env` (e.g. `|name| std::env::var(name).ok()`)
    /// and `overrides`.
    pub fn new(
        env: &dyn Fn(&str) -> Option<String>,
        overrides: SendOverrides,
    ) -> Result<SendConfig, NetError> {
        let protocol = match (overrides.protocol, variable(env, "PROTOCOL")) {
            (Some(protocol), _) => protocol,
            (None, Some((name, value))) => Protocol::from_name(&value).ok_or_else(|| {
                config_error(
                    &name,
                    format!("{value:?} is not grpc, http/protobuf or http/json"),
                )
            })?,
            (None, None) => Protocol::HttpProtobuf,
        };
        let endpoint = endpoint(env, &overrides, protocol)?;
        let mut headers = match variable(env, "HEADERS") {
            Some((name, value)) => parse_headers(&value).map_err(|m| config_error(&name, m))?,
            None => Vec::new(),
        };
        headers.extend(overrides.headers);
        let gzip = match (overrides.gzip, variable(env, "COMPRESSION")) {
            (Some(gzip), _) => gzip,
            (None, Some((name, value))) => match value.trim() {
                "gzip" => true,
                "none" => false,
                other => {
                    return Err(config_error(
                        &name,
                        format!("{other:?} is not gzip or none"),
                    ))
                }
            },
            (None, None) => false,
        };
        let timeout =
            match (overrides.timeout, variable(env, "TIMEOUT")) {
                (Some(timeout), _) => timeout,
                (None, Some((name, value))) => value
                    .trim()
                    .parse::<u64>()
                    .map(Duration::from_millis)
                    .map_err(|_| config_error(&name, format!("{value:?} is not milliseconds")))?,
                (None, None) => Duration::from_secs(10),
            };
        let path = |suffix: &str| variable(env, suffix).map(|(_, v)| PathBuf::from(v));
        Ok(SendConfig {
            endpoint,
            protocol,
            headers,
            gzip,
            timeout,
            certificate: path("CERTIFICATE"),
            client_certificate: path("CLIENT_CERTIFICATE"),
            client_key: path("CLIENT_KEY"),
            max_request_bytes: match protocol {
                Protocol::Grpc => 4 << 20,
                _ => 20 << 20,
            },
            retry: RetryPolicy::default(),
        })
    }
}

/// The endpoint: `--endpoint` or the base variable (signal path appended
/// for HTTP when it has none), or the per-signal variable as it is, or the
/// default; `OTEL_EXPORTER_OTLP_INSECURE` makes a gRPC endpoint without a
/// scheme plain `http`.
fn endpoint(
    env: &dyn Fn(&str) -> Option<String>,
    overrides: &SendOverrides,
    protocol: Protocol,
) -> Result<String, NetError> {
    let signal = env("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT").filter(|v| !v.trim().is_empty());
    let base = overrides
        .endpoint
        .clone()
        .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").filter(|v| !v.trim().is_empty()));
    let insecure = variable(env, "INSECURE").is_some_and(|(_, v)| v.trim() == "true");
    // Endpoints are often written `host:port`, as the exporters' own
    // options take them: plain unless TLS is asked for by a certificate,
    // as the SDKs read it.
    let plain = insecure || variable(env, "CERTIFICATE").is_none();
    let with_scheme = |raw: &str| -> Result<String, NetError> {
        let raw = raw.trim();
        if raw.starts_with("http://") || raw.starts_with("https://") {
            return Ok(raw.to_string());
        }
        if raw.contains("://") {
            let why = format!("{raw:?} is not an http:// or https:// URL");
            return Err(config_error("endpoint", why));
        }
        Ok(format!("{}://{raw}", if plain { "http" } else { "https" }))
    };
    Ok(match (&overrides.endpoint, signal, base, protocol) {
        (None, Some(signal), _, _) => with_scheme(&signal)?,
        (_, _, Some(base), Protocol::Grpc) => with_scheme(&base)?,
        (_, _, Some(base), _) => with_signal_path(&with_scheme(&base)?),
        (_, _, None, Protocol::Grpc) => "http://localhost:4317".to_string(),
        (_, _, None, _) => format!("http://localhost:4318{HTTP_PATH}"),
    })
}

/// `base` with `/v1development/profiles` appended, unless it has a path
/// of its own beyond `/`.
fn with_signal_path(base: &str) -> String {
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    match after_scheme.find('/') {
        Some(slash) if !after_scheme[slash..].trim_end_matches('/').is_empty() => base.to_string(),
        _ => format!("{}{HTTP_PATH}", base.trim_end_matches('/')),
    }
}

/// `k=v,k2=v2`, values percent-decoded (the W3C baggage form the
/// specification gives).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?} is not key=value"))?;
            Ok((key.trim().to_string(), percent_decode(value.trim())))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)], overrides: SendOverrides) -> Result<SendConfig, NetError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        SendConfig::new(&env, overrides)
    }

    #[test]
    fn defaults_are_the_specifications() {
        let c = config(&[], SendOverrides::default()).unwrap();
        assert_eq!(c.endpoint, "http://localhost:4318/v1development/profiles");
        assert_eq!(c.protocol, Protocol::HttpProtobuf);
        assert_eq!(c.timeout, Duration::from_secs(10));
        assert!(!c.gzip);
        let c = config(
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
            SendOverrides::default(),
        );
        assert_eq!(c.unwrap().endpoint, "http://localhost:4317");
    }

    #[test]
    fn the_profiles_variables_come_first() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000"),
            ("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "500"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b,tenant=t1"),
        ];
        let c = config(&vars, SendOverrides::default()).unwrap();
        assert_eq!(c.endpoint, "http://collector:4318/v1development/profiles");
        assert_eq!(c.timeout, Duration::from_millis(500));
        assert!(c.gzip);
        assert_eq!(c.headers[0], ("api-key".to_string(), "a b".to_string()));
        let signal = [("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://h:1/custom")];
        let c = config(&signal, SendOverrides::default()).unwrap();
        assert_eq!(c.endpoint, "http://h:1/custom");
    }

    #[test]
    fn the_command_line_wins_and_bad_values_are_named() {
        let overrides = SendOverrides {
            endpoint: Some("127.0.0.1:4317".into()),
            protocol: Some(Protocol::Grpc),
            ..SendOverrides::default()
        };
        let vars = [(
            "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
            "http://elsewhere:4317",
        )];
        let c = config(&vars, overrides).unwrap();
        assert_eq!(c.endpoint, "http://127.0.0.1:4317");
        // A bare host:port over HTTP, as the exporters' options take it:
        // the signal path is appended to what the user typed.
        let overrides = SendOverrides {
            endpoint: Some("127.0.0.1:4318".into()),
            protocol: Some(Protocol::HttpProtobuf),
            ..SendOverrides::default()
        };
        let c = config(&[], overrides).unwrap();
        assert_eq!(c.endpoint, "http://127.0.0.1:4318/v1development/profiles");
        let overrides = SendOverrides {
            endpoint: Some("ftp://h:1".into()),
            ..SendOverrides::default()
        };
        let e = config(&[], overrides).unwrap_err().to_string();
        assert!(
            e.contains("\"ftp://h:1\" is not an http:// or https:// URL"),
            "{e}"
        );
        let e = config(
            &[("OTEL_EXPORTER_OTLP_PROTOCOL", "udp")],
            SendOverrides::default(),
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "OTEL_EXPORTER_OTLP_PROTOCOL: \"udp\" is not grpc, http/protobuf or http/json"
        );
    }
}
