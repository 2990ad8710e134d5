//! `protoprof send`: each input made into export requests and sent, one
//! line per request; exit status 1 when anything was rejected or failed.

use std::path::Path;

use protoprof_net::send::{
    requests_of, Exporter, Outcome, PayloadOptions, Protocol, SendConfig, SendOverrides,
};
use serde_json::json;

use crate::cli::{OutputFormat, SendArgs, SendCompression, SendProtocol};
use crate::error::{CliError, Context, Result};
use crate::io::resource_attributes;
use crate::io::{self, shown};

pub fn run(args: &SendArgs) -> Result<u8> {
    let exporter = Exporter::new(config(args)?).context("send")?;
    let options = PayloadOptions {
        max_request_bytes: exporter.config().max_request_bytes,
        decode: io::decode_options(),
        resource_attributes: resource_attributes(&args.resources)?,
    };
    let mut failed = false;
    for path in &args.files {
        let bytes = io::read_input(path)?;
        let requests = requests_of(&shown(path), bytes, &options).context("send")?;
        for (n, request) in requests.iter().enumerate() {
            let mut waited = |why: &str, wait: std::time::Duration| {
                eprintln!(
                    "protoprof send: {}: {why}; retrying in {:.1} s",
                    shown(path),
                    wait.as_secs_f64()
                );
            };
            let outcome = exporter.export(request, &mut waited).context(shown(path))?;
            failed |= !accepted(&outcome);
            report(args.format, path, (n, requests.len()), request, &outcome)?;
        }
    }
    Ok(u8::from(failed))
}

fn config(args: &SendArgs) -> Result<SendConfig> {
    let headers = args
        .headers
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| CliError::failure(format!("--header {pair:?}: expected key=value")))
        })
        .collect::<Result<Vec<_>>>()?;
    let overrides = SendOverrides {
        endpoint: args.endpoint.clone(),
        protocol: args.protocol.map(|p| match p {
            SendProtocol::Grpc => Protocol::Grpc,
            SendProtocol::HttpProtobuf => Protocol::HttpProtobuf,
            SendProtocol::HttpJson => Protocol::HttpJson,
        }),
        headers,
        gzip: args.compression.map(|c| c == SendCompression::Gzip),
        timeout: crate::fetch::send_timeout(),
    };
    let env = |name: &str| std::env::var(name).ok();
    let mut config = SendConfig::new(&env, overrides).context("send")?;
    if let Some(max) = args.max_request_size {
        config.max_request_bytes = usize::try_from(max).unwrap_or(usize::MAX);
    }
    Ok(config)
}

fn accepted(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Sent { partial_success, .. } if partial_success.rejected_profiles == 0 && partial_success.error_message.is_empty())
}

fn report(
    format: OutputFormat,
    path: &Path,
    (n, of): (usize, usize),
    request: &protoprof_net::send::Request,
    outcome: &Outcome,
) -> Result<()> {
    let line = match format {
        OutputFormat::Json => json!({
            "file": shown(path),
            "request": n + 1,
            "requests": of,
            "bytes": request.bytes.len(),
            "profiles": request.counts.profiles,
            "samples": request.counts.samples,
            "result": outcome,
        })
        .to_string(),
        OutputFormat::Text => {
            let part = if of > 1 {
                format!(" (request {} of {of})", n + 1)
            } else {
                String::new()
            };
            let what = format!(
                "{}{part}: {}, {} bytes",
                shown(path),
                request.counts,
                request.bytes.len()
            );
            format!("{what}: {}", outcome_text(outcome))
        }
    };
    io::write_stdout(|out| writeln!(out, "{line}"))
}

fn outcome_text(outcome: &Outcome) -> String {
    let tries = |attempts: u32| match attempts {
        1 => String::new(),
        n => format!(" after {n} attempts"),
    };
    match outcome {
        Outcome::Sent {
            partial_success,
            attempts,
        } if partial_success.rejected_profiles == 0 && partial_success.error_message.is_empty() => {
            format!("accepted{}", tries(*attempts))
        }
        Outcome::Sent {
            partial_success,
            attempts,
        } => format!(
            "partial success{}: {} profiles rejected: {}",
            tries(*attempts),
            partial_success.rejected_profiles,
            partial_success.error_message
        ),
        Outcome::Failed {
            status,
            message,
            attempts,
        } => format!("failed{}: {status}: {message}", tries(*attempts)),
    }
}
