//! `protoprof serve`: the web UI on the profiles given, what
//! `go tool pprof -http` is to pprof.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use protobuf::MessageDyn;
use protoprof_codec::detect::Form;
use protoprof_codec::AutoView;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_web::{
    Compare, Finding, MessagePane, ServeConfig, Served, ServedProfile, StorePane, WebServer,
};

use crate::cli::{InputArgs, ServeArgs};
use crate::commands::serve_store::StoreSelections;
use crate::commands::{analyze, edit, validate};
use crate::error::{CliError, Result};
use crate::io;

pub fn run(args: &ServeArgs) -> Result<u8> {
    let listen = listen_address(&args.listen)?;
    let mut served = served(&args.input)?;
    served.sources = args.sources.disk_sources();
    let server = WebServer::bind(&ServeConfig { listen }, served)
        .map_err(|e| CliError::failure(e.to_string()))?;
    if !server.loopback_only() {
        let message = "to every client that reaches it; profiles can hold secrets";
        io::warn(format!("serving on {}", server.address()), message);
    }
    let url = server.url();
    println!("Serving web UI on {url}");
    if args.open {
        open_browser(&url);
    }
    server
        .serve(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .map_err(|e| CliError::failure(e.to_string()))?;
    Ok(0)
}

/// `host:port`, `:port` (loopback, as pprof reads `-http=:8080`) or a
/// port alone.
fn listen_address(text: &str) -> Result<SocketAddr> {
    let text = match text {
        t if t.starts_with(':') => format!("127.0.0.1{t}"),
        t if t.parse::<u16>().is_ok() => format!("127.0.0.1:{t}"),
        t => t.to_string(),
    };
    text.to_socket_addrs()
        .ok()
        .and_then(|mut addresses| addresses.next())
        .ok_or_else(|| {
            CliError::failure(format!("--listen {text:?}: not a host:port to listen on"))
        })
}

/// The profile as every report reads it, the profile and its base apart
/// when there is one, and the message of a single input.
fn served(input: &InputArgs) -> Result<Served> {
    let store = match input.store {
        Some(_) => Some(StoreSelections::open(input)?),
        None => None,
    };
    let bases = [&input.base[..], &input.diff_base[..]].concat();
    // The base apart, as the compare views read it, and its title.
    let base = match (&input.store, input.store_base()) {
        (Some(dir), Some(base)) => Some((store_title(dir, &base), base)),
        _ if bases.is_empty() => None,
        _ => Some((
            titles(&bases),
            InputArgs {
                files: bases,
                store: None,
                ..input.without_base()
            },
        )),
    };
    // A store's selection without a base is the page's own first answer:
    // read through the store the page keeps open, not a second one.
    let profile = match (&store, &base) {
        (Some(pane), None) => pane.profile_of(&pane.initial())?.into(),
        _ => match single_view(input) {
            Some(view) => view,
            None => match analyze::combined(input) {
                Ok(mut profile) => {
                    analyze::add_label_frames(&mut profile, input);
                    profile.into()
                }
                Err(e) => return message_only(input).ok_or(e),
            },
        },
    };
    let title = match &input.store {
        Some(store) => store_title(store, input),
        None => titles(&input.files),
    };
    let compare = match base {
        Some((base_title, base)) => Some(compare(input, &base, base_title)?),
        None => None,
    };
    let message: Option<Box<dyn MessagePane>> = match &input.files[..] {
        [one] if one.as_os_str() != "-" => Some(Box::new(FileMessage {
            path: one.clone(),
            read_as: Default::default(),
        })),
        _ => None,
    };
    Ok(Served {
        title,
        profile,
        compare,
        message,
        sources: Default::default(),
        store: store.map(|pane| Box::new(pane) as Box<dyn StorePane>),
        message_only: false,
    })
}

/// One pprof file, with nothing that changes its samples (no base, no
/// label frames): served from a view over its bytes, as `top` reads it, so
/// no model is made per sample. `None` for anything else, which is read
/// as every report reads it.
fn single_view(input: &InputArgs) -> Option<ServedProfile> {
    let [path] = &input.files[..] else {
        return None;
    };
    let changed = !input.base.is_empty()
        || !input.diff_base.is_empty()
        || input.tagroot.is_some()
        || input.tagleaf.is_some();
    if changed || input.store.is_some() || path.as_os_str() == "-" || crate::fetch::names_url(path)
    {
        return None;
    }
    let bytes = io::read_input(path).ok()?;
    match io::decode_view(path, bytes, None).ok()? {
        AutoView::Pprof(mut view) => {
            io::symbolize_for_report(io::shown(path), view.message.header_mut());
            Some(ServedProfile::from_source(view.message))
        }
        _ => None,
    }
}

/// One file holding a message that is not a profile (the relay's, the
/// user's own schema's): served for the message view alone.
fn message_only(input: &InputArgs) -> Option<Served> {
    let [one] = &input.files[..] else {
        return None;
    };
    if input.store.is_some() || !input.base.is_empty() || !input.diff_base.is_empty() {
        return None;
    }
    let loaded = io::load(one, None).ok()?;
    let message = loaded.message();
    let is_profile = message.descriptor_dyn().full_name() == "perftools.profiles.Profile"
        || io::otlp_message_as_pprof(one, message).is_some();
    if is_profile {
        return None;
    }
    let mut served = Served::new(titles(&input.files), Profile::default());
    served.message = Some(Box::new(FileMessage {
        path: one.clone(),
        read_as: Default::default(),
    }));
    served.message_only = true;
    Some(served)
}

/// The profile and `base` apart, each read as the reports read it alone.
fn compare(input: &InputArgs, base: &InputArgs, base_title: String) -> Result<Compare> {
    let alone = |only: &InputArgs| -> Result<_> {
        let mut p = analyze::combined(only)?;
        analyze::add_label_frames(&mut p, only);
        Ok(p)
    };
    Ok(Compare {
        new: alone(&input.without_base())?,
        base: alone(base)?,
        base_title,
    })
}

/// A store's selection as the page's title: `fleet {service.name="x"} -1h..now`.
fn store_title(store: &std::path::Path, input: &InputArgs) -> String {
    let selection = crate::commands::serve_store::selection_of(input);
    format!("{} {}", io::shown(store), selection.title())
}

/// The files' names without their directories, as the page's title.
fn titles(files: &[PathBuf]) -> String {
    let name = |f: &PathBuf| match f.file_name() {
        Some(name) => name.to_string_lossy().into_owned(),
        None => io::shown(f),
    };
    files.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// The message view of an input file: decoded when the view first asks,
/// so the server keeps only the parsed profile until then.
struct FileMessage {
    path: PathBuf,
    /// How the file was read (form, gzipped): save writes the same.
    read_as: std::sync::OnceLock<(Form, bool)>,
}

impl MessagePane for FileMessage {
    fn load(&self) -> std::result::Result<Box<dyn MessageDyn>, String> {
        let loaded = io::load(&self.path, None).map_err(|e| e.message)?;
        let decoded = loaded.decoded;
        let _ = self.read_as.set((decoded.form, decoded.decoded.gzipped));
        Ok(decoded.decoded.message)
    }

    fn input_findings(&self) -> Vec<Finding> {
        match validate::report_of(&self.path) {
            Ok(report) => findings(report),
            Err(_) => Vec::new(),
        }
    }

    fn findings(&self, message: &dyn MessageDyn) -> Vec<Finding> {
        let report = protoprof_validate::validate_message(message, &Default::default());
        report.map(findings).unwrap_or_default()
    }

    fn binary(&self, message: &dyn MessageDyn) -> std::result::Result<Vec<u8>, String> {
        io::encode(message, &Default::default()).map_err(|e| e.to_string())
    }

    fn encode(&self, message: &dyn MessageDyn) -> std::result::Result<Vec<u8>, String> {
        let (form, gzipped) = *self.read_as.get().ok_or("the message was not read")?;
        edit::encoded_as_read(&self.path, message, form, gzipped).map_err(|e| e.message)
    }

    fn input(&self) -> &std::path::Path {
        &self.path
    }
}

/// A validation report's diagnostics as the page shows them.
fn findings(report: protoprof_validate::Report) -> Vec<Finding> {
    let finding = |d: protoprof_validate::Diagnostic| Finding {
        path: d.path,
        severity: d.severity.name().to_string(),
        rule: d.code.to_string(),
        message: d.message,
    };
    report.diagnostics.into_iter().map(finding).collect()
}

/// Opens `url` in the desktop's browser (`$BROWSER`, else `xdg-open` or
/// `open`); the URL is printed either way.
fn open_browser(url: &str) {
    let browser = std::env::var("BROWSER").ok().filter(|b| !b.is_empty());
    let candidates: Vec<String> = match browser {
        Some(b) => vec![b],
        None => vec!["xdg-open".into(), "open".into()],
    };
    for program in candidates {
        if std::process::Command::new(&program)
            .arg(url)
            .spawn()
            .is_ok()
        {
            return;
        }
    }
    eprintln!("protoprof: could not open a browser; open {url}");
}
