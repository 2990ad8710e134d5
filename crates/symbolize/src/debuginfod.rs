//! A debuginfod client, as elfutils' is configured: the servers of
//! `DEBUGINFOD_URLS` (space-separated; off when unset or empty) asked for
//! a build id's `debuginfo`, then its `executable`, each answer kept in
//! elfutils' cache layout (`<cache>/<build id>/debuginfo`), in
//! `DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`, else
//! `~/.cache/debuginfod_client`, so elfutils' tools and protoprof share it.
//! `DEBUGINFOD_TIMEOUT` (seconds, default 90) bounds each request. A file
//! whose build id is not the one asked for is not kept. Misses are cached
//! as elfutils caches them: when every server answered that it has not an
//! artifact, an empty file takes its place, and the servers are not asked
//! again for it until it is older than the cache's `cache_miss_s` seconds
//! (600 unless that file says otherwise).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where debuginfod servers are, and where their answers are kept.
#[derive(Debug, Clone)]
pub struct Debuginfod {
    /// The servers, asked in order.
    pub urls: Vec<String>,
    /// The cache directory.
    pub cache: PathBuf,
    /// How long one request may take.
    pub timeout: Duration,
}

impl Debuginfod {
    /// The client elfutils' variables configure; `None` when
    /// `DEBUGINFOD_URLS` names no server.
    pub fn from_env() -> Option<Debuginfod> {
        let urls: Vec<String> = std::env::var("DEBUGINFOD_URLS")
            .ok()?
            .split_whitespace()
            .map(|u| u.trim_end_matches('/').to_string())
            .collect();
        if urls.is_empty() {
            return None;
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let cache = match (
            var("DEBUGINFOD_CACHE_PATH"),
            var("XDG_CACHE_HOME"),
            var("HOME"),
        ) {
            (Some(path), _, _) => PathBuf::from(path),
            (None, Some(xdg), _) => Path::new(&xdg).join("debuginfod_client"),
            (None, None, home) => {
                Path::new(&home.unwrap_or_default()).join(".cache/debuginfod_client")
            }
        };
        let seconds = std::env::var("DEBUGINFOD_TIMEOUT")
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(90);
        Some(Debuginfod {
            urls,
            cache,
            timeout: Duration::from_secs(seconds),
        })
    }

    /// The file of build id `id` (hex), from the cache or a server: where
    /// it is kept and its bytes (read once, to check its build id); each
    /// failure said, for the report.
    pub(crate) fn fetch(&self, id: &str) -> Result<(PathBuf, Vec<u8>), Vec<String>> {
        let id = id.to_ascii_lowercase();
        if id.len() < 2 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(vec![format!("{id:?} is not a build id debuginfod serves")]);
        }
        let mut failures = Vec::new();
        let miss_seconds = self.miss_seconds();
        for artifact in ["debuginfo", "executable"] {
            let cached = self.cache.join(&id).join(artifact);
            if let Some(data) = read_if_of(&cached, &id) {
                return Ok((cached, data));
            }
            if recent_miss(&cached, miss_seconds) {
                let why = format!("not found less than {miss_seconds} s ago (cached miss)");
                failures.push(format!("{}: {why}", cached.display()));
                continue;
            }
            let mut every_server_answered = true;
            for url in &self.urls {
                let address = format!("{url}/buildid/{id}/{artifact}");
                match self.download(&address, &cached, &id) {
                    Ok(data) => return Ok((cached, data)),
                    Err((answered, why)) => {
                        every_server_answered &= answered;
                        failures.push(format!("{address}: {why}"));
                    }
                }
            }
            if every_server_answered {
                note_miss(&cached);
            }
        }
        Err(failures)
    }

    /// elfutils' `cache_miss_s`: how long a miss is remembered.
    fn miss_seconds(&self) -> u64 {
        std::fs::read_to_string(self.cache.join("cache_miss_s"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(600)
    }

    /// `address` saved at `path` (through a temporary file renamed into
    /// place, so a reader never sees half of it), if its build id is `id`;
    /// its bytes. A failure says whether the server answered (a status
    /// other than 200), and why.
    fn download(&self, address: &str, path: &Path, id: &str) -> Result<Vec<u8>, (bool, String)> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let mut response = agent
            .get(address)
            .call()
            .map_err(|e| (false, e.to_string()))?;
        if response.status() != ureq::http::StatusCode::OK {
            return Err((true, response.status().to_string()));
        }
        self.keep(&mut response, path, id)
            .map_err(|why| (false, why))
    }

    /// The body of `response` kept at `path` if its build id is `id`.
    fn keep(
        &self,
        response: &mut ureq::http::Response<ureq::Body>,
        path: &Path,
        id: &str,
    ) -> Result<Vec<u8>, String> {
        let dir = path.parent().expect("a file in the cache");
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let temporary = dir.join(format!(".{}.{}", std::process::id(), unique()));
        let written = (|| -> std::io::Result<()> {
            let mut file = std::fs::File::create(&temporary)?;
            std::io::copy(&mut response.body_mut().as_reader(), &mut file)?;
            file.flush()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(e.to_string());
        }
        let Some(data) = read_if_of(&temporary, id) else {
            let _ = std::fs::remove_file(&temporary);
            return Err(format!("the file served is not of build id {id}"));
        };
        std::fs::rename(&temporary, path).map_err(|e| e.to_string())?;
        Ok(data)
    }
}

/// Whether `path` is a miss noted less than `seconds` ago: an empty file,
/// as elfutils leaves one.
fn recent_miss(path: &Path, seconds: u64) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    let age = meta.modified().ok().and_then(|m| m.elapsed().ok());
    meta.len() == 0 && age.is_some_and(|age| age < Duration::from_secs(seconds))
}

/// An empty file at `path`, in place of an artifact no server has.
fn note_miss(path: &Path) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // A file of the artifact that is there stays; a stale miss is renewed.
    let kept = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    if !kept {
        let _ = std::fs::File::create(path);
    }
}

/// The bytes of the file at `path`, if it is there and has GNU build id
/// `id`.
fn read_if_of(path: &Path, id: &str) -> Option<Vec<u8>> {
    let data = std::fs::read(path).ok()?;
    let found = crate::build_id::build_id_hex(&data).ok()??;
    (found == id).then_some(data)
}

/// A number not used before by this process, for temporary names.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
