//! `protoprof receive`: an OTLP profiles receiver on loopback (or where
//! told), one line per request on standard output.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use protoprof_net::receive::{
    Event, Output, ReceiveConfig, ReceiveLimits, Receiver, RequestRecord, Transport, Verdict,
};

use crate::cli::{OutputFormat, ReceiveArgs};
use crate::commands::relay::interrupted;
use crate::error::{Context, Result};

pub fn run(args: &ReceiveArgs) -> Result<u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(receive(args))
}

fn config(args: &ReceiveArgs) -> ReceiveConfig {
    let default = |port: u16| Some(SocketAddr::from(([127, 0, 0, 1], port)));
    let (grpc, http) = match (args.grpc, args.http) {
        (None, None) => (default(4317), default(4318)),
        given => given,
    };
    let out = match (&args.out, &args.out_framed) {
        (Some(dir), _) => Some(Output::Dir(dir.clone())),
        (None, Some(file)) => Some(Output::Framed(file.clone())),
        (None, None) => None,
    };
    let size = |bytes: u64| usize::try_from(bytes).unwrap_or(usize::MAX);
    ReceiveConfig {
        grpc,
        http,
        limits: ReceiveLimits {
            http_body_bytes: size(args.max_request_size),
            grpc_message_bytes: size(args.max_message_size),
            concurrent_requests: args.max_concurrent.max(1),
            read_timeout: std::time::Duration::from_secs(args.read_timeout.max(1)),
            decode: crate::io::limits(),
        },
        out,
        forward: args.forward.clone(),
    }
}

async fn receive(args: &ReceiveArgs) -> Result<u8> {
    let format = args.format;
    let seen = Arc::new(AtomicU64::new(0));
    let enough = Arc::new(tokio::sync::Notify::new());
    let count = args.count;
    let events = {
        let (seen, enough) = (seen.clone(), enough.clone());
        Arc::new(move |event: Event| {
            print_event(format, &event);
            if let Event::Request(_) = event {
                let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
                if count.is_some_and(|count| n >= count) {
                    enough.notify_one();
                }
            }
        })
    };
    let keeper = args.store.as_deref().map(super::store::keeper);
    let receiver = Receiver::bind_keeping(config(args), events, keeper)
        .await
        .context("receive")?;
    let stop = async move {
        tokio::select! {
            _ = interrupted() => {}
            _ = enough.notified() => {}
        }
    };
    receiver.serve(stop).await.context("receive")?;
    Ok(0)
}

/// Listening lines and requests go to standard output (a script reads
/// the ports from them); refusals and trouble to standard error.
fn print_event(format: OutputFormat, event: &Event) {
    let line = match format {
        OutputFormat::Json => serde_json::to_string(event).unwrap_or_default(),
        OutputFormat::Text => match event {
            Event::Listening { transport, address } => {
                format!(
                    "listening for OTLP/{} on {address}",
                    transport_name(*transport)
                )
            }
            Event::Request(record) => request_line(record),
            Event::Refused {
                peer,
                transport,
                status,
                message,
            } => {
                let peer = peer.map(|p| p.to_string()).unwrap_or_else(|| "-".into());
                let transport = transport_name(*transport);
                eprintln!("protoprof receive: {transport} {peer}: refused ({status}): {message}");
                return;
            }
            Event::Trouble { message } => {
                eprintln!("protoprof receive: {message}");
                return;
            }
        },
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn transport_name(transport: Transport) -> &'static str {
    match transport {
        Transport::Grpc => "gRPC",
        Transport::Http => "HTTP",
    }
}

/// `HTTP 127.0.0.1:50412 protobuf+gzip 19223 bytes v1.10.0/v1.11.0: service
/// checkout: 2 profiles × 176 samples: valid`.
fn request_line(record: &RequestRecord) -> String {
    let peer = record
        .peer
        .map(|p| p.to_string())
        .unwrap_or_else(|| "-".into());
    let encoding = match record.encoding {
        protoprof_net::receive::BodyEncoding::Protobuf => "protobuf",
        protoprof_net::receive::BodyEncoding::Json => "json",
    };
    let compression = record
        .compression
        .as_deref()
        .map(|c| format!("+{c}"))
        .unwrap_or_default();
    let summary = &record.summary;
    let services = match summary.services.iter().filter(|s| !s.is_empty()).count() {
        0 => "no service.name".to_string(),
        _ => format!("service {}", summary.services.join(", ")),
    };
    let verdict = match &record.verdict {
        Verdict::Accepted if summary.warnings > 0 => {
            format!("valid, {} warnings", summary.warnings)
        }
        Verdict::Accepted => "valid".to_string(),
        Verdict::Rejected {
            rejected_profiles,
            error_message,
        } => format!("invalid, {rejected_profiles} profiles rejected: {error_message}"),
        Verdict::Undecodable { message } => format!("undecodable: {message}"),
        Verdict::Unavailable { message } => format!("valid, not kept (503): {message}"),
    };
    let head = format!(
        "{} {peer} {encoding}{compression} {} bytes",
        transport_name(record.transport),
        record.bytes,
    );
    // Bytes that did not decode have no revision, services or profiles.
    let mut line = match &record.verdict {
        Verdict::Undecodable { .. } => format!("{head}: {verdict}"),
        _ => format!(
            "{head} {}: {services}: {}: {verdict}",
            summary.revision, summary.counts,
        ),
    };
    if let Some(stored) = &record.stored {
        line.push_str(&format!(" (kept in {})", stored.display()));
    }
    if let Some(forwarded) = &record.forwarded {
        line.push_str(&format!(" (forwarded: {forwarded})"));
    }
    line
}
