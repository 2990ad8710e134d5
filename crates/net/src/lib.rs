//! protoprof's network side: profiles fetched from running programs over
//! HTTP and HTTPS, as `go tool pprof` fetches them.
//!
//! - [`source_url`]: which inputs are URLs, and pprof's adjustment of one
//!   (`--seconds` into the query, the timeout it implies);
//! - [`fetch`]: the request, with TLS options ([`tls`]), a timeout, a bound
//!   on the body, and the server's own message on an answer other than 200;
//! - [`saved`]: the copy of each fetched profile pprof users expect, in
//!   `$PPROF_TMPDIR` (else `$HOME/pprof`), named as pprof names it.
//!
//! ```no_run
//! use protoprof_net::{fetch_profile, FetchOptions};
//!
//! let options = FetchOptions { seconds: Some(5), ..FetchOptions::default() };
//! let fetched = fetch_profile("http://localhost:6060/debug/pprof/profile", &options)?;
//! let saved = protoprof_net::saved::save_copy(&fetched.bytes, &protoprof_net::saved::copy_dir()?)?;
//! println!("{} bytes from {}, saved in {}", fetched.bytes.len(), fetched.url, saved.display());
//! # Ok::<(), protoprof_net::NetError>(())
//! ```

#![warn(missing_docs)]

pub mod counts;
pub mod error;
pub mod fetch;
pub mod grpc_bytes;
pub mod receive;
pub mod rpc_status;
pub mod saved;
pub mod send;
pub mod source_url;
pub mod tls;

pub use counts::Counts;
pub use error::NetError;
pub use fetch::{fetch_profile, FetchOptions, Fetched};
pub use source_url::is_url;
