//! `protoprof relay serve|push|watch`: the relay of protoprof-relay, and its
//! management-server and proxy clients, in the shell.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use protobuf::MessageDyn;
use protoprof_codec::frame::{is_framed, FrameReader, Framing};
use protoprof_codec::{json, registry, text};
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryResponse, DiscoveryResponse, Resource,
};
use protoprof_relay::push::{PushEvent, PushOptions, Upstream};
use protoprof_relay::resources::message_name;
use protoprof_relay::watch::{Update, WatchOptions};
use protoprof_relay::{Config, Event, Limits, NamedResource, Relay};
use serde_json::json;

use crate::cli::{OutputFormat, RelayCommand, RelayPushArgs, RelayServeArgs, RelayWatchArgs};
use crate::error::{CliError, Context, Result};
use crate::io::{self, shown};

pub fn run(command: &RelayCommand) -> Result<u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match command {
        RelayCommand::Serve(args) => runtime.block_on(serve(args)),
        RelayCommand::Push(args) => runtime.block_on(push(args)),
        RelayCommand::Watch(args) => runtime.block_on(watch(args)),
    }
}

/// Completes on SIGINT or SIGTERM.
pub async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn type_urls(given: &[String]) -> Vec<String> {
    if given.is_empty() {
        protoprof_relay::well_known_type_urls()
    } else {
        given.to_vec()
    }
}

async fn serve(args: &RelayServeArgs) -> Result<u8> {
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .context(format!("--listen {}", args.listen))?;
    let config = Config {
        limits: Limits {
            max_message_bytes: args.max_message_bytes,
            max_resources_per_server: args.max_resources_per_server,
            max_streams: args.max_streams,
            ..Limits::default()
        },
        type_urls: type_urls(&args.type_urls),
        identifier: args.identifier.clone(),
    };
    // The address goes to standard output (a script reads the port from it);
    // everything else is a log line on standard error.
    let events = Arc::new(|event: &Event| match event {
        Event::Listening(address) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "listening on {address}");
            let _ = out.flush();
        }
        other => eprintln!("protoprof relay: {other}"),
    });
    Relay::new(config, events)
        .serve(listener, interrupted())
        .await
        .context("relay")?;
    Ok(0)
}

async fn push(args: &RelayPushArgs) -> Result<u8> {
    let mut upstream = Upstream::default();
    for path in &args.files {
        load_resources(path, args.r#type.as_deref(), &mut upstream)?;
    }
    if upstream.is_empty() {
        return Err(CliError::failure("the files hold no resources to upstream"));
    }
    let options = PushOptions {
        delta: args.delta,
        hold: args.hold,
        identifier: args.identifier.clone(),
    };
    // A closed pipe ends the printing quietly, not the push.
    let mut on_event = |event: &PushEvent| {
        let _ = io::print(&format!("{}\n", push_line(event)));
    };
    let run = protoprof_relay::push::push(
        &args.relay,
        &upstream,
        &options,
        interrupted(),
        &mut on_event,
    );
    let report = if args.hold {
        run.await
    } else {
        let timeout = crate::fetch::relay_timeout();
        tokio::time::timeout(Duration::from_secs(timeout), run)
            .await
            .map_err(|_| {
                CliError::failure(format!(
                    "relay {}: no answer within {} s",
                    args.relay, timeout
                ))
            })?
    }
    .context(format!("relay {}", args.relay))?;
    Ok(u8::from(report.any_nacked()))
}

fn push_line(event: &PushEvent) -> String {
    match event {
        PushEvent::Sent {
            type_url,
            resources,
            nonce,
        } => {
            format!("sent {resources} resources of {type_url} (nonce {nonce})")
        }
        PushEvent::Acked { type_url } => format!("ACK {type_url}"),
        PushEvent::Nacked { type_url, detail } => format!("NACK {type_url}: {detail}"),
    }
}

/// Adds the resources of one file: one message in any form, or a capture of
/// gRPC frames.
fn load_resources(path: &Path, type_name: Option<&str>, upstream: &mut Upstream) -> Result<()> {
    let bytes = io::read_input(path)?;
    let limits = io::limits();
    if is_framed(&bytes, Framing::Grpc, limits.max_frame_bytes) {
        for frame in FrameReader::new(&bytes, Framing::Grpc, limits.max_frame_bytes) {
            let frame = frame.context(shown(path))?;
            let what = format!("{} frame {}", shown(path), frame.index);
            let loaded = io::decode_bytes(&what, &frame.payload, type_name)?;
            add_message(loaded.message(), upstream)
                .map_err(|e| CliError::failure(format!("{what}: {e}")))?;
        }
        return Ok(());
    }
    let what = shown(path);
    let loaded = io::decode_bytes(&what, &bytes, type_name)?;
    add_message(loaded.message(), upstream).map_err(|e| CliError::failure(format!("{what}: {e}")))
}

fn add_message(
    message: &dyn MessageDyn,
    upstream: &mut Upstream,
) -> std::result::Result<(), String> {
    if let Some(response) = message.downcast_ref::<DiscoveryResponse>() {
        for (i, any) in response.resources.iter().enumerate() {
            let resource = NamedResource::from_sotw(any.clone())
                .map_err(|e| format!("resources[{i}]: {e}"))?;
            upstream.add(resource);
        }
    } else if let Some(response) = message.downcast_ref::<DeltaDiscoveryResponse>() {
        for resource in &response.resources {
            upstream.add(NamedResource::from_delta(resource.clone()));
        }
    } else if let Some(resource) = message.downcast_ref::<Resource>() {
        upstream.add(NamedResource::from_delta(resource.clone()));
    } else {
        return Err(format!(
            "holds a {}; push reads DiscoveryResponse, DeltaDiscoveryResponse or Resource",
            message.descriptor_dyn().full_name()
        ));
    }
    Ok(())
}

async fn watch(args: &RelayWatchArgs) -> Result<u8> {
    let options = WatchOptions {
        type_urls: type_urls(&args.type_urls),
        delta: args.delta,
        via_ads: args.ads,
        identifier: args.identifier.clone(),
    };
    let capture = match &args.capture {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path).context(shown(path))?,
        )),
        None => None,
    };
    let mut printer = Printer {
        format: args.format,
        count: args.count,
        seen: 0,
        capture,
        failed: None,
    };
    let mut on_update = |update: &Update| printer.print(update);
    let watching = protoprof_relay::watch::watch(&args.relay, &options, &mut on_update);
    let result = tokio::select! {
        result = watching => result.context(format!("relay {}", args.relay)),
        _ = interrupted() => Ok(()),
    };
    printer.finish(args)?;
    result.map(|()| 0)
}

/// Prints updates as they arrive and keeps the capture.
struct Printer {
    format: OutputFormat,
    count: Option<u64>,
    seen: u64,
    capture: Option<std::io::BufWriter<std::fs::File>>,
    failed: Option<std::io::Error>,
}

impl Printer {
    fn print(&mut self, update: &Update) -> ControlFlow<()> {
        self.seen += 1;
        let bytes = match update {
            Update::Sotw(r) => &r.bytes,
            Update::Delta(r) => &r.bytes,
        };
        if let Err(e) = self.write_frame(bytes) {
            self.failed = Some(e);
            return ControlFlow::Break(());
        }
        let entry = UpdateEntry::of(self.seen, update);
        let mut out = std::io::stdout().lock();
        let written = match self.format {
            OutputFormat::Json => writeln!(out, "{}", entry.to_json()),
            OutputFormat::Text => write!(out, "{}", entry.to_text()),
        };
        if written.and_then(|()| out.flush()).is_err() {
            // Standard output closed (a pager quit): stop quietly.
            return ControlFlow::Break(());
        }
        match self.count {
            Some(count) if self.seen >= count => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    }

    /// gRPC framing: not compressed, 4-byte big-endian length, the message.
    fn write_frame(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let Some(capture) = self.capture.as_mut() else {
            return Ok(());
        };
        let length = u32::try_from(bytes.len()).map_err(std::io::Error::other)?;
        capture.write_all(&[0])?;
        capture.write_all(&length.to_be_bytes())?;
        capture.write_all(bytes)
    }

    fn finish(mut self, args: &RelayWatchArgs) -> Result<()> {
        let flushed = self.capture.as_mut().map_or(Ok(()), |c| c.flush());
        match (self.failed.take(), flushed, &args.capture) {
            (Some(e), _, Some(path)) | (None, Err(e), Some(path)) => Err(e).context(shown(path)),
            _ => Ok(()),
        }
    }
}

/// One update, as printed.
struct UpdateEntry {
    number: u64,
    form: &'static str,
    type_url: String,
    version: String,
    nonce: String,
    resources: Vec<NamedResource>,
    removed: Vec<String>,
}

impl UpdateEntry {
    fn of(number: u64, update: &Update) -> UpdateEntry {
        match update {
            Update::Sotw(r) => UpdateEntry {
                number,
                form: "sotw",
                type_url: r.message.type_url.clone(),
                version: r.message.version_info.clone(),
                nonce: r.message.nonce.clone(),
                resources: r
                    .message
                    .resources
                    .iter()
                    .filter_map(|any| NamedResource::from_sotw(any.clone()).ok())
                    .collect(),
                removed: Vec::new(),
            },
            Update::Delta(r) => UpdateEntry {
                number,
                form: "delta",
                type_url: r.message.type_url.clone(),
                version: r.message.system_version_info.clone(),
                nonce: r.message.nonce.clone(),
                resources: r
                    .message
                    .resources
                    .iter()
                    .map(|resource| NamedResource::from_delta(resource.clone()))
                    .collect(),
                removed: r.message.removed_resources.clone(),
            },
        }
    }

    fn to_text(&self) -> String {
        let mut text = format!(
            "update {} ({}): {} version {:?} nonce {:?}: {} resources",
            self.number,
            self.form,
            self.type_url,
            self.version,
            self.nonce,
            self.resources.len()
        );
        if !self.removed.is_empty() {
            text.push_str(&format!(", {} removed", self.removed.len()));
        }
        text.push('\n');
        for resource in &self.resources {
            let value = &resource.resource.resource.value;
            text.push_str(&format!(
                "  {} version {} ({}, {} bytes)\n",
                resource.name(),
                resource.version(),
                resource.type_url(),
                value.len()
            ));
            if let Some(message) = decode_resource(resource) {
                for line in text::print(&*message).lines() {
                    text.push_str(&format!("    {line}\n"));
                }
            }
        }
        for name in &self.removed {
            text.push_str(&format!("  removed {name}\n"));
        }
        text
    }

    fn to_json(&self) -> serde_json::Value {
        let resources: Vec<_> = self
            .resources
            .iter()
            .map(|resource| {
                let mut entry = json!({
                    "name": resource.name(),
                    "version": resource.version(),
                    "type_url": resource.type_url(),
                    "bytes": resource.resource.resource.value.len(),
                });
                if let Some(message) = decode_resource(resource) {
                    entry["message"] = resource_json(&*message);
                }
                entry
            })
            .collect();
        json!({
            "update": self.number,
            "form": self.form,
            "type_url": self.type_url,
            "version": self.version,
            "nonce": self.nonce,
            "resources": resources,
            "removed": self.removed,
        })
    }
}

/// The resource decoded, when its type is one of the user's schemas
/// (`--proto`, `--descriptor-set`) or one protoprof ships.
fn decode_resource(resource: &NamedResource) -> Option<Box<dyn MessageDyn>> {
    let bytes = &resource.resource.resource.value;
    if let Some(descriptor) =
        io::user_schemas().and_then(|s| s.message_of_type_url(resource.type_url()))
    {
        let mut message = descriptor.new_instance();
        let depth = io::limits().max_depth;
        protoprof_codec::user::parse::merge(&mut *message, bytes, depth).ok()?;
        return Some(message);
    }
    let descriptor = registry::message_descriptor(message_name(resource.type_url())).ok()?;
    descriptor.parse_from_bytes(bytes).ok()
}

/// A resource as JSON: the proto3 mapping for a type of the user's
/// schemas, OTLP/JSON's rules for protoprof's own.
fn resource_json(message: &dyn MessageDyn) -> serde_json::Value {
    let user = io::user_schemas().filter(|s| {
        s.message(message.descriptor_dyn().full_name())
            .is_ok_and(|d| d == message.descriptor_dyn())
    });
    let text = match user {
        Some(schemas) => protoprof_codec::user::proto3::print(message, schemas, false)
            .map(|p| p.text)
            .unwrap_or_default(),
        None => json::print(message, false),
    };
    serde_json::from_str(&text).unwrap_or_default()
}
