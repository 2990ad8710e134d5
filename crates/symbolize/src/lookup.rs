//! Where a mapping's binary is: the places pprof looks (`PPROF_BINARY_PATH`,
//! by build id and by name), `/usr/lib/debug/.build-id`, and the mapping's
//! own path, in that order; a file whose build id is not the mapping's is
//! passed over.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::build_id::{build_id_hex, build_id_of, htlhash};
use crate::debuginfod::Debuginfod;

/// Where binaries are looked for.
#[derive(Debug, Clone)]
pub struct BinarySearch {
    /// pprof's `PPROF_BINARY_PATH` directories (default
    /// `$HOME/pprof/binaries`).
    pub dirs: Vec<PathBuf>,
    /// The root of the system's separate debug files (`/usr/lib/debug`).
    pub debug_root: PathBuf,
    /// debuginfod servers, asked by build id when no file is found here.
    pub debuginfod: Option<Debuginfod>,
}

impl Default for BinarySearch {
    fn default() -> Self {
        BinarySearch::from_env()
    }
}

impl BinarySearch {
    /// `PPROF_BINARY_PATH` (colon-separated) or `$HOME/pprof/binaries`,
    /// `/usr/lib/debug`, and the debuginfod servers of `DEBUGINFOD_URLS`.
    pub fn from_env() -> BinarySearch {
        let dirs = match std::env::var_os("PPROF_BINARY_PATH") {
            Some(path) => std::env::split_paths(&path)
                .filter(|p| !p.as_os_str().is_empty())
                .collect(),
            None => std::env::var_os("HOME")
                .map(|home| vec![Path::new(&home).join("pprof/binaries")])
                .unwrap_or_default(),
        };
        BinarySearch {
            dirs,
            debug_root: PathBuf::from("/usr/lib/debug"),
            debuginfod: Debuginfod::from_env(),
        }
    }
}

/// How a file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// `$dir/<build id>/<basename>` (or any file there), or perf's
    /// `$dir/<path>/<build id>`, in a binary path directory.
    BuildIdDirectory,
    /// `$dir/<id[:2]>/<id[2:]>.debug` in a binary path directory.
    BuildIdDebugFile,
    /// `/usr/lib/debug/.build-id/<id[:2]>/<id[2:]>.debug`.
    SystemDebugFile,
    /// `$dir/<basename>`, `$dir/<path>` or a debug file beside it
    /// (`$dir/<path>.debug`, `$dir/<dir>/.debug/<base>.debug`,
    /// `$dir/usr/lib/debug/<dir>/<base>.debug`) in a binary path directory.
    BinaryPathName,
    /// The mapping's own path.
    MappingPath,
    /// `<path>.debug`, `<dir>/.debug/<base>.debug` or
    /// `/usr/lib/debug/<dir>/<base>.debug`.
    DebugBeside,
    /// From a debuginfod server (or its cache), by build id.
    Debuginfod,
}

impl How {
    /// How the file was found, in words, as the command line prints it.
    pub fn text(self) -> &'static str {
        match self {
            How::BuildIdDirectory => "by build id in a binary path directory",
            How::BuildIdDebugFile => "by build id, a debug file in a binary path directory",
            How::SystemDebugFile => "by build id in /usr/lib/debug/.build-id",
            How::BinaryPathName => "by name in a binary path directory",
            How::MappingPath => "at the mapping's path",
            How::DebugBeside => "a debug file beside the mapping's path",
            How::Debuginfod => "from debuginfod",
        }
    }

    /// Whether the file was found under a binary path directory
    /// (`PPROF_BINARY_PATH`), where pprof names the mapping by it.
    pub fn is_binary_path(self) -> bool {
        matches!(
            self,
            How::BuildIdDirectory | How::BuildIdDebugFile | How::BinaryPathName
        )
    }
}

/// The file a mapping is symbolized from.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    /// Its path.
    pub path: PathBuf,
    /// How it was found.
    pub how: How,
    /// Whether its build id is the mapping's; `None` when the mapping has
    /// none to compare.
    pub build_id_matched: Option<bool>,
    /// The separate debug file its frames were read from, when it has one
    /// (by its own build id under the debug directories, or by its
    /// `.gnu_debuglink` with the CRC checked).
    pub debug_file: Option<PathBuf>,
}

/// A file looked at and passed over, with why.
#[derive(Debug, Clone, Serialize)]
pub struct PassedOver {
    /// Its path.
    pub path: PathBuf,
    /// Why (another build id, not an object file).
    pub why: String,
}

/// What names a mapping's file beyond its name: its GNU build id, else
/// the OpenTelemetry eBPF profiler's `htlhash` (hex, each maybe empty).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FileIds<'a> {
    pub(crate) gnu: &'a str,
    pub(crate) htlhash: &'a str,
}

impl FileIds<'_> {
    /// Why the object file `data` is not the one these name, if it is not.
    fn mismatch(&self, data: &[u8]) -> Result<Option<String>, String> {
        let gnu = build_id_hex(data)?;
        if !self.gnu.is_empty() {
            return Ok(match gnu {
                Some(id) if id.eq_ignore_ascii_case(self.gnu) => None,
                other => Some(format!(
                    "build id {} is not the mapping's {}",
                    other.as_deref().unwrap_or("(none)"),
                    self.gnu
                )),
            });
        }
        if !self.htlhash.is_empty() {
            let id = htlhash(data);
            return Ok((!id.eq_ignore_ascii_case(self.htlhash))
                .then(|| format!("htlhash {id} is not the mapping's {}", self.htlhash)));
        }
        Ok(None)
    }

    fn any(&self) -> bool {
        !self.gnu.is_empty() || !self.htlhash.is_empty()
    }
}

/// The file `mapping_file` named by `ids` is symbolized from, with its
/// bytes (read once, to check it), and the files passed over on the way;
/// debuginfod is asked last, by GNU build id.
pub(crate) fn find(
    search: &BinarySearch,
    mapping_file: &str,
    ids: FileIds,
) -> (Option<(Found, Vec<u8>)>, Vec<PassedOver>) {
    let mut passed = Vec::new();
    for (path, how) in candidates(search, mapping_file, ids.gnu) {
        if !path.is_file() {
            continue;
        }
        let read = std::fs::read(&path).map_err(|e| e.to_string());
        match read.and_then(|data| ids.mismatch(&data).map(|why| (why, data))) {
            Err(why) | Ok((Some(why), _)) => passed.push(PassedOver { path, why }),
            Ok((None, data)) => {
                let matched = ids.any().then_some(true);
                return (Some((found(path, how, matched), data)), passed);
            }
        }
    }
    if let (true, Some(debuginfod)) = (!ids.gnu.is_empty(), &search.debuginfod) {
        match debuginfod.fetch(ids.gnu) {
            Ok((path, data)) => {
                return (
                    Some((found(path, How::Debuginfod, Some(true)), data)),
                    passed,
                )
            }
            Err(failures) => passed.extend(failures.into_iter().map(|why| PassedOver {
                path: PathBuf::from("debuginfod"),
                why,
            })),
        }
    }
    (None, passed)
}

/// The mapping's own binary, where what was found for it is a debug
/// file of its build id (`/usr/lib/debug/.build-id/…`): its symbol table
/// names outermost frames, as `llvm-symbolizer` given the binary (as
/// pprof gives it) names them. A debug file's `.symtab` lists a
/// function's aliases in another order (libc's `malloc` and
/// `__libc_malloc`).
pub(crate) fn own_binary(mapping_file: &str, ids: FileIds, found: &Found) -> Option<Vec<u8>> {
    let debug_file = matches!(found.how, How::SystemDebugFile | How::BuildIdDebugFile);
    let path = Path::new(mapping_file);
    if !debug_file || ids.gnu.is_empty() || !path.is_file() || path == found.path {
        return None;
    }
    let data = std::fs::read(path).ok()?;
    matches!(ids.mismatch(&data), Ok(None)).then_some(data)
}

fn found(path: PathBuf, how: How, build_id_matched: Option<bool>) -> Found {
    Found {
        path,
        how,
        build_id_matched,
        debug_file: None,
    }
}

/// Where to look, in order: pprof's list, with `/usr/lib/debug/.build-id`
/// after the binary path's build-id places.
fn candidates(search: &BinarySearch, mapping_file: &str, build_id: &str) -> Vec<(PathBuf, How)> {
    let mapping = Path::new(mapping_file);
    let base = mapping.file_name().map(PathBuf::from);
    let mut out = Vec::new();
    // The mapping's path below a directory, as pprof joins it.
    let below = |dir: &Path| dir.join(mapping_file.trim_start_matches('/'));
    if build_id.len() > 2 {
        let (head, tail) = build_id.split_at(2);
        for dir in &search.dirs {
            let by_id = dir.join(build_id);
            if let Some(base) = &base {
                out.push((by_id.join(base), How::BuildIdDirectory));
            }
            // Any file in the build id's directory (a kernel's `vmlinux`
            // for `[kernel.kallsyms]`), in name order as pprof globs them.
            let mut named: Vec<PathBuf> = std::fs::read_dir(&by_id)
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            named.sort();
            out.extend(named.into_iter().map(|p| (p, How::BuildIdDirectory)));
            // perf's build-id cache: `<dir>/<path>/<build id>`.
            if !mapping_file.is_empty() {
                out.push((below(dir).join(build_id), How::BuildIdDirectory));
            }
            out.push((
                dir.join(head).join(format!("{tail}.debug")),
                How::BuildIdDebugFile,
            ));
        }
        let system = search
            .debug_root
            .join(".build-id")
            .join(head)
            .join(format!("{tail}.debug"));
        out.push((system, How::SystemDebugFile));
    }
    if let Some(base) = &base {
        let name = format!("{}.debug", base.to_string_lossy());
        let parent = mapping.parent().unwrap_or(Path::new(""));
        let parent = parent.strip_prefix("/").unwrap_or(parent);
        for dir in &search.dirs {
            out.push((dir.join(base), How::BinaryPathName));
            // The mapping's whole path below the directory (perf's
            // `--symfs`), and the debug files beside it there.
            let whole = below(dir);
            let mut debug = whole.clone().into_os_string();
            debug.push(".debug");
            out.push((whole, How::BinaryPathName));
            out.push((PathBuf::from(debug), How::BinaryPathName));
            out.push((
                dir.join(parent).join(".debug").join(&name),
                How::BinaryPathName,
            ));
            out.push((
                dir.join("usr/lib/debug").join(parent).join(&name),
                How::BinaryPathName,
            ));
        }
    }
    // A relative path is the working directory's, as pprof opens it (the
    // form a `[binary] profile` command line gives).
    if !mapping_file.is_empty() && !mapping.is_absolute() {
        out.push((mapping.to_path_buf(), How::MappingPath));
    }
    if mapping.is_absolute() {
        out.push((mapping.to_path_buf(), How::MappingPath));
        let mut debug = mapping.as_os_str().to_owned();
        debug.push(".debug");
        out.push((PathBuf::from(debug), How::DebugBeside));
        if let (Some(dir), Some(base)) = (mapping.parent(), &base) {
            let mut name = base.as_os_str().to_owned();
            name.push(".debug");
            out.push((dir.join(".debug").join(&name), How::DebugBeside));
            let relative = dir.strip_prefix("/").unwrap_or(dir);
            out.push((
                search.debug_root.join(relative).join(&name),
                How::DebugBeside,
            ));
        }
    }
    out
}

/// The separate debug file of the object file `data` (at `path`): by its
/// build id, in the binary path's and the system's build-id directories,
/// then by its `.gnu_debuglink` name beside it, in `.debug/` beside it and
/// under the system's debug root, with the link's CRC checked.
pub(crate) fn separate_debug_file(
    search: &BinarySearch,
    path: &Path,
    data: &[u8],
) -> Option<PathBuf> {
    let file = object::File::parse(data).ok()?;
    if let Ok(Some(id)) = build_id_of(&file) {
        if id.len() > 2 {
            let (head, tail) = id.split_at(2);
            let name = format!("{tail}.debug");
            let system = search.debug_root.join(".build-id");
            let roots = search.dirs.iter().chain(std::iter::once(&system));
            for root in roots {
                let candidate = root.join(head).join(&name);
                if candidate.is_file() && candidate != path {
                    return Some(candidate);
                }
            }
        }
    }
    let (name, crc) = object::Object::gnu_debuglink(&file).ok()??;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let dir = path.parent()?;
    let relative = dir.strip_prefix("/").unwrap_or(dir);
    [
        dir.join(name),
        dir.join(".debug").join(name),
        search.debug_root.join(relative).join(name),
    ]
    .into_iter()
    .find(|candidate| candidate != path && crc_of(candidate) == Some(crc))
}

/// The CRC-32 `.gnu_debuglink` records of the file at `path`.
fn crc_of(path: &Path) -> Option<u32> {
    let data = std::fs::read(path).ok()?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&data);
    Some(hasher.finalize())
}
