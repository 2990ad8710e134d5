//! protoprof's web UI: what `go tool pprof -http` is to pprof users, on
//! protoprof's analyses.
//!
//! [`WebServer::bind`] takes a [`Served`] profile (parsed once, kept for
//! every request) and a [`ServeConfig`]; [`WebServer::serve`] answers until
//! a signal. The page (`/ui/flamegraph`, `/ui/top`, `/ui/graph`, `/ui/peek`,
//! `/ui/traces`, `/ui/tags`, `/ui/message`) is one embedded HTML document
//! whose script draws what `/api/…` answers in JSON; every number comes
//! from the same analysis as the command line's reports. The state lives
//! in the URL, with pprof's parameter names ([`params`]).
//!
//! Profiles are untrusted: the page writes every string as text, never as
//! markup, under a content security policy that runs no inline script; a
//! server bound to loopback answers loopback clients only, and only
//! requests naming a loopback host (no DNS rebinding). It reads no file
//! itself (the caller's [`MessagePane`] reads the input), and writes one only
//! when the message editor saves: by a plain name beside the input, asked
//! by a POST only the page's own origin can send.
//!
//! ```no_run
//! use protoprof_web::{ServeConfig, Served, WebServer};
//! # let profile = protoprof_model_pprof::perftools::profiles::Profile::default();
//! let served = Served::new("cpu.pb.gz", profile);
//! let server = WebServer::bind(&ServeConfig::default(), served)?;
//! println!("Serving web UI on {}", server.url());
//! server.serve(async { tokio::signal::ctrl_c().await.ok(); })?;
//! # Ok::<(), protoprof_web::WebError>(())
//! ```

#![warn(missing_docs)]

mod api;
mod assets;
mod cache;
mod graphviz;
mod http_guard;
mod message;
pub mod params;
mod served;
mod served_profile;
mod server;
mod state;
mod store;

pub use graphviz::{dot_to_svg, render_dot, with_pan_and_zoom, GraphvizError};
pub use served::{
    Compare, Finding, MessagePane, Series, SeriesPoint, Served, StorePane, StoreSelection,
};
pub use served_profile::{PprofSource, ServedProfile};
pub use server::{ServeConfig, WebServer};

/// Why the server cannot start or a request cannot be answered.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The listen address cannot be bound.
    #[error("cannot listen on {address}: {message}")]
    Listen {
        /// The address asked for.
        address: String,
        /// Why not.
        message: String,
    },
    /// A query parameter the page sent is not usable.
    #[error("{name}: {detail}")]
    Param {
        /// The parameter, by its URL name.
        name: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The profile cannot give what was asked.
    #[error("{0}")]
    Analysis(String),
}
