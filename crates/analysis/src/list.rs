//! `go tool pprof -list REGEX`: the source of each function whose name
//! matches, every line with its flat and cum values (pprof's
//! `printSource`). Files are read through a [`SourceFiles`]; [`DiskSources`]
//! finds them as pprof does (`-source_path`, `-trim_path`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use protoprof_model_pprof::samples::ProfileSamples;
use regex::Regex;

use crate::report::{percentage, top_report, TopOptions};
use crate::selection::{Granularity, Selection};

/// Where the source files of a listing come from.
pub trait SourceFiles {
    /// The lines of the file a profile names `path`, or why it cannot be
    /// read (pprof's wording: `open /a/b.go: no such file or directory`).
    fn lines(&mut self, path: &str) -> Result<Vec<String>, String>;

    /// The path as the listing names it (pprof trims the profile's paths
    /// with the source and trim paths before any report).
    fn shown(&self, path: &str) -> String {
        path.to_string()
    }
}

/// Source files on disk, found as pprof finds them: a path is trimmed
/// (`trim_path`, or the part up to a search directory's own name), then
/// an absolute path is opened as it is, a relative one is looked for
/// under each search directory and its parents.
#[derive(Debug, Clone, Default)]
pub struct DiskSources {
    /// Directories to search, `:`-separated (pprof's `-source_path`;
    /// empty: the current directory).
    pub search_path: String,
    /// Prefixes to remove from the profile's paths, `:`-separated
    /// (pprof's `-trim_path`).
    pub trim_path: String,
    /// Read only files under the search directories (the web UI's rule):
    /// absolute paths are refused and parents are not searched.
    pub confined: bool,
}

impl SourceFiles for DiskSources {
    fn lines(&mut self, path: &str) -> Result<Vec<String>, String> {
        let search_path = match self.search_path.is_empty() {
            true => std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default(),
            false => self.search_path.clone(),
        };
        let trimmed = trim_path(path, &self.trim_path, &search_path);
        let text = self.open(&trimmed, &search_path)?;
        Ok(text.lines().map(String::from).collect())
    }

    fn shown(&self, path: &str) -> String {
        trim_path(path, &self.trim_path, &self.search_path)
    }
}

impl DiskSources {
    fn open(&self, path: &str, search_path: &str) -> Result<String, String> {
        let read_error = |file: &Path, e: std::io::Error| {
            let detail = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
                _ => e.to_string(),
            };
            format!("open {}: {detail}", file.display())
        };
        if Path::new(path).is_absolute() {
            if self.confined {
                return Err(format!("{path} is outside the source path {search_path}"));
            }
            return std::fs::read_to_string(path).map_err(|e| read_error(Path::new(path), e));
        }
        for dir in search_path.split(':').filter(|d| !d.is_empty()) {
            let mut dir = PathBuf::from(dir);
            loop {
                let candidate = dir.join(path);
                if self.confined && path.split('/').any(|part| part == "..") {
                    break;
                }
                if let Ok(text) = std::fs::read_to_string(&candidate) {
                    return Ok(text);
                }
                if self.confined || !dir.pop() {
                    break;
                }
            }
        }
        Err(format!("could not find file {path} on path {search_path}"))
    }
}

/// pprof's `trimPath`: without a trim path, the part of `path` up to a
/// search directory's name; then a configured or `/proc/self/cwd/` prefix.
fn trim_path(path: &str, trim: &str, search_path: &str) -> String {
    if trim.is_empty() {
        for dir in search_path.split(':').filter(|d| !d.is_empty()) {
            let base = Path::new(dir)
                .file_name()
                .map(|b| b.to_string_lossy().into_owned());
            let want = format!("/{}/", base.unwrap_or_else(|| dir.to_string()));
            if let Some(found) = path.find(&want) {
                return path[found + want.len()..].to_string();
            }
        }
    }
    let prefixes = trim.split(':').filter(|t| !t.is_empty());
    for prefix in prefixes.chain(["/proc/self/cwd/./", "/proc/self/cwd/"]) {
        let prefix = match prefix.ends_with('/') {
            true => prefix.to_string(),
            false => format!("{prefix}/"),
        };
        if let Some(rest) = path.strip_prefix(&prefix) {
            return rest.to_string();
        }
    }
    path.to_string()
}

/// One function's lines in one file, with their values.
struct Routine {
    name: String,
    file: String,
    /// (line, start line, flat, cum) of each node.
    nodes: Vec<(i64, i64, i64, i64)>,
}

/// What a listing shows for a function whose file cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingSource {
    /// The reason alone, as `go tool pprof -list` prints it.
    #[default]
    Error,
    /// The reason, then each sampled line with its values and `???` for
    /// its text, as pprof's web source view shows it: the usual case (a
    /// profile from another machine) still says which lines cost what.
    Placeholders,
}

/// The listing of the functions matching `rx`, as `go tool pprof -list`
/// prints it; `None` when no function matches.
pub fn source_listing<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    rx: &Regex,
    files: &mut dyn SourceFiles,
) -> Option<String> {
    source_listing_with(source, index, selection, (rx, files), MissingSource::Error)
}

/// [`source_listing`], with `missing` saying what is shown of a function
/// whose file cannot be read.
pub fn source_listing_with<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    (rx, files): (&Regex, &mut dyn SourceFiles),
    missing: MissingSource,
) -> Option<String> {
    // pprof lists at line granularity, with object files and start lines.
    let selection = Selection {
        granularity: Granularity::Lines,
        object_names: true,
        ..selection.clone()
    };
    let options = TopOptions {
        node_fraction: 0.0,
        unit: "minimum".into(),
        ..TopOptions::default()
    };
    let mut report = top_report(source, index, &selection, &options);
    report.output_unit = "minimum".into();
    let parts = crate::frames_for(source, &selection).parts;
    // Functions by name, each with its nodes by file (no file: `None`).
    let mut functions: BTreeMap<String, BTreeMap<Option<String>, Routine>> = BTreeMap::new();
    for row in &report.rows {
        let part = &parts[row.node as usize];
        let Some(name) = part.function.as_deref().filter(|n| rx.is_match(n)) else {
            continue;
        };
        let file = part.file.as_deref().map(|f| files.shown(f));
        let routine = functions
            .entry(name.to_string())
            .or_default()
            .entry(file.clone())
            .or_insert_with(|| Routine {
                name: name.to_string(),
                file: file.unwrap_or_default(),
                nodes: Vec::new(),
            });
        let line = part.line.unwrap_or(0);
        // pprof sums its nodes' values as summed: with `-mean`, undivided
        // (only the total is a mean).
        let (flat, cum) = (row.flat_undivided, row.cum_undivided);
        routine.nodes.push((line, part.start_line, flat, cum));
    }
    if functions.is_empty() {
        return None;
    }
    let value = |v: i64| report.format_value(v);
    let mut out = format!("Total: {}\n", value(report.total));
    let mut cache: HashMap<String, Result<Vec<String>, String>> = HashMap::new();
    for (name, by_file) in functions {
        let with_files: Vec<&Routine> = by_file
            .iter()
            .filter_map(|(file, r)| file.as_ref().map(|_| r))
            .collect();
        if with_files.is_empty() {
            out.push_str(&format!("No source information for {name}\n"));
            continue;
        }
        for routine in with_files {
            let lines = cache
                .entry(routine.file.clone())
                .or_insert_with(|| files.lines(&routine.file));
            write_routine(&mut out, routine, (lines, missing), (&value, report.total));
        }
    }
    Some(out)
}

/// One `ROUTINE` block: the sums, then each line from 5 before the first
/// sampled line (or from the function's start) to 5 after the last.
fn write_routine(
    out: &mut String,
    routine: &Routine,
    (lines, missing): (&Result<Vec<String>, String>, MissingSource),
    (value, total): (&dyn Fn(i64) -> String, i64),
) {
    let (flat, cum) = routine.nodes.iter().fold((0i64, 0i64), |(f, c), n| {
        (f.saturating_add(n.2), c.saturating_add(n.3))
    });
    out.push_str(&format!(
        "ROUTINE ======================== {} in {}\n",
        routine.name, routine.file
    ));
    out.push_str(&format!(
        "{:>10} {:>10} (flat, cum) {} of Total\n",
        value(flat),
        value(cum),
        percentage(cum, total)
    ));
    let dot_or = |v: i64| if v == 0 { ".".to_string() } else { value(v) };
    let lines = match (lines, missing) {
        (Ok(lines), _) => lines,
        (Err(e), MissingSource::Error) => {
            out.push_str(&format!(" Error: {e}\n"));
            return;
        }
        (Err(e), MissingSource::Placeholders) => {
            out.push_str(&format!(" Error: {e}\n"));
            for (lineno, flat, cum) in sampled_lines(routine) {
                let text = match lineno {
                    0 => "<instructions with unknown line numbers>",
                    _ => "???",
                };
                let (flat, cum) = (dot_or(flat), dot_or(cum));
                out.push_str(&format!("{flat:>10} {cum:>10} {lineno:>6}:{text}\n"));
            }
            return;
        }
    };
    const MARGIN: i64 = 5;
    let start_of = |(line, start, _, _): &(i64, i64, i64, i64)| match *start {
        0 => line - MARGIN,
        s => s,
    };
    let start = routine.nodes.iter().map(start_of).min().unwrap_or(1).max(1);
    let end = routine.nodes.iter().map(|n| n.0).max().unwrap_or(0) + MARGIN;
    for lineno in start..=end {
        let Some(text) = lines.get(lineno as usize - 1) else {
            break;
        };
        let (flat, cum) = routine
            .nodes
            .iter()
            .filter(|n| n.0 == lineno)
            .fold((0i64, 0i64), |(f, c), n| {
                (f.saturating_add(n.2), c.saturating_add(n.3))
            });
        out.push_str(&format!(
            "{:>10} {:>10} {lineno:>6}:{text}\n",
            dot_or(flat),
            dot_or(cum)
        ));
    }
}

/// Each line of `routine` that has samples, in order, with its summed
/// flat and cum.
fn sampled_lines(routine: &Routine) -> Vec<(i64, i64, i64)> {
    let mut by_line: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for &(line, _, flat, cum) in &routine.nodes {
        let sums = by_line.entry(line).or_default();
        *sums = (sums.0.saturating_add(flat), sums.1.saturating_add(cum));
    }
    by_line.into_iter().map(|(l, (f, c))| (l, f, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_trimmed_as_pprof_trims_them() {
        let search = "/home/me/work/myproj";
        assert_eq!(trim_path("/build/myproj/pkg/a.go", "", search), "pkg/a.go");
        assert_eq!(
            trim_path("/build/x/pkg/a.go", "/build/x", search),
            "pkg/a.go"
        );
        assert_eq!(trim_path("/proc/self/cwd/./a.go", "", search), "a.go");
        assert_eq!(trim_path("/other/a.go", "", search), "/other/a.go");
    }

    #[test]
    fn confined_sources_stay_under_the_search_path() {
        let dir = std::env::temp_dir().join(format!("protoprof-list-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(dir.join("src/a.go"), "one\ntwo\n").unwrap();
        std::fs::write(dir.join("secret.txt"), "no\n").unwrap();
        let mut sources = DiskSources {
            search_path: dir.join("src").to_string_lossy().into_owned(),
            trim_path: String::new(),
            confined: true,
        };
        assert_eq!(sources.lines("a.go").unwrap(), ["one", "two"]);
        assert!(sources
            .lines("/etc/passwd")
            .unwrap_err()
            .contains("outside the source path"));
        assert!(sources.lines("../secret.txt").is_err());
        assert!(
            sources.lines("secret.txt").is_err(),
            "parents are not searched"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
