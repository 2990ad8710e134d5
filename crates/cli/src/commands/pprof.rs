//! `protoprof pprof`: `go tool pprof`'s command line (`-top -nodecount=10
//! -sample_index=alloc_space heap.pb.gz`) read as Go's flag package reads
//! it, turned into the protoprof command that prints the same report, and
//! run. So `alias pprof='protoprof pprof'` works for the reports protoprof
//! has; pprof's others are refused by name, one line each. Without an
//! output flag, pprof's interactive shell (`shell.rs`) reads commands.

use std::path::Path;

use clap::{CommandFactory, Parser};

use crate::cli::Cli;
use crate::error::{CliError, Result};

/// What a pprof flag becomes.
#[derive(Clone, Copy)]
pub(super) enum Meaning {
    /// An output format without a value (`-top`): this command.
    Report(&'static [&'static str]),
    /// An output format with a regular expression (`-peek=main`).
    ReportOf(&'static str),
    /// `-http=host:port`: the web UI.
    Http,
    /// A boolean option: our `--flag`.
    Switch(&'static str),
    /// An option with a value: our `--flag VALUE`.
    Valued(&'static str),
    /// `-lines`, `-files`, …: our `--granularity`.
    Granularity(&'static str),
    /// pprof's default made explicit (`-flat`, `-no_browser`): nothing.
    Default,
    /// `-output=FILE`.
    Output,
    /// `-trim=false`: no node count, node or edge fraction.
    Trim,
}

use Meaning::*;

/// pprof's flags (`driver/cli.go`, `driver/config.go`), by name.
pub(super) const FLAGS: &[(&str, Meaning)] = &[
    ("top", Report(&["top"])),
    ("text", Report(&["top"])),
    ("traces", Report(&["traces"])),
    ("tree", Report(&["tree"])),
    ("tags", Report(&["tags"])),
    ("dot", Report(&["callgraph"])),
    ("svg", Report(&["callgraph", "--format", "svg"])),
    ("callgrind", Report(&["callgrind"])),
    ("peek", ReportOf("peek")),
    ("list", ReportOf("list")),
    ("http", Http),
    // Only marks that `-http` opens no browser; no command takes it.
    ("no_browser", Switch("--no-browser")),
    ("flat", Default),
    ("output", Output),
    ("nodecount", Valued("--nodecount")),
    ("nodefraction", Valued("--nodefraction")),
    ("edgefraction", Valued("--edgefraction")),
    ("focus", Valued("--focus")),
    ("ignore", Valued("--ignore")),
    ("hide", Valued("--hide")),
    ("show", Valued("--show")),
    ("show_from", Valued("--show-from")),
    ("prune_from", Valued("--prune-from")),
    ("tagfocus", Valued("--tagfocus")),
    ("tagignore", Valued("--tagignore")),
    ("tagshow", Valued("--tagshow")),
    ("taghide", Valued("--taghide")),
    ("tagroot", Valued("--tagroot")),
    ("tagleaf", Valued("--tagleaf")),
    ("sample_index", Valued("--sample-index")),
    ("unit", Valued("--unit")),
    ("base", Valued("--base")),
    ("diff_base", Valued("--diff-base")),
    ("source_path", Valued("--source-path")),
    ("trim_path", Valued("--trim-path")),
    ("seconds", Valued("--seconds")),
    ("timeout", Valued("--timeout")),
    ("normalize", Switch("--normalize")),
    ("mean", Switch("--mean")),
    ("noinlines", Switch("--noinlines")),
    ("relative_percentages", Switch("--relative-percentages")),
    ("cum", Switch("--cum")),
    ("functions", Granularity("functions")),
    ("filefunctions", Granularity("filefunctions")),
    ("files", Granularity("files")),
    ("lines", Granularity("lines")),
    ("addresses", Granularity("addresses")),
    ("disasm", ReportOf("disasm")),
    ("weblist", ReportOf("weblist")),
    ("raw", Report(&["raw"])),
    // pprof writes it gzipped, to standard output unless -output names a file.
    ("proto", Report(&["filter", "--gzip"])),
    ("topproto", Report(&["top", "--topproto"])),
    ("png", Report(&["callgraph", "--format", "png"])),
    ("pdf", Report(&["callgraph", "--format", "pdf"])),
    ("ps", Report(&["callgraph", "--format", "ps"])),
    ("gif", Report(&["callgraph", "--format", "gif"])),
    (
        "eog",
        Report(&["callgraph", "--format", "svg", "--view", "eog"]),
    ),
    (
        "evince",
        Report(&["callgraph", "--format", "pdf", "--view", "evince"]),
    ),
    (
        "gv",
        Report(&["callgraph", "--format", "ps", "--view", "gv"]),
    ),
    (
        "web",
        Report(&["callgraph", "--format", "svg", "--view", "browser"]),
    ),
    (
        "kcachegrind",
        Report(&["callgrind", "--view", "kcachegrind"]),
    ),
    ("comments", Report(&["comments"])),
    ("divide_by", Valued("--divide-by")),
    ("drop_negative", Switch("--drop-negative")),
    ("call_tree", Switch("--call-tree")),
    ("compact_labels", Switch("--compact-labels")),
    ("symbolize", Valued("--symbolize")),
    ("tools", Valued("--tools")),
    ("intel_syntax", Switch("--intel-syntax")),
    ("trim", Trim),
    ("add_comment", Valued("--add-comment")),
];

/// pprof's flags that take a value after them (`-nodecount 10`) when not
/// given one with `=`; the others are booleans, as Go's flag package
/// tells them apart.
fn takes_value(meaning: Meaning) -> bool {
    matches!(meaning, ReportOf(_) | Http | Valued(_) | Output)
}

/// Runs the protoprof command `words` (without `protoprof`).
pub(super) fn run_words(words: &[String]) -> Result<u8> {
    let mut argv = vec!["protoprof".to_string()];
    argv.extend(words.iter().cloned());
    let cli = Cli::try_parse_from(&argv).map_err(|e| {
        let line = crate::error::one_line_usage(&e.render().to_string(), "protoprof pprof --help");
        CliError::failure(format!("as `protoprof {}`: {line}", words.join(" ")))
    })?;
    super::run(cli)
}

/// What pprof's arguments ask for.
pub(super) enum Translated {
    /// A report: this protoprof command line.
    Command(Vec<String>),
    /// No output flag: the shell, with the flags given (pprof's names and
    /// their values, checked) and the sources.
    Shell {
        flags: Vec<(String, Option<String>)>,
        sources: Vec<String>,
    },
}

/// A flag as given: its name, and its value when given with `=`.
struct Given<'a> {
    name: &'a str,
    value: Option<&'a str>,
}

/// `-name`, `--name`, `-name=value`: `None` for a source or `--`.
fn flag_of(arg: &str) -> Option<Given<'_>> {
    let bare = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    if bare.is_empty() || bare.starts_with('-') {
        return None;
    }
    Some(match bare.split_once('=') {
        Some((name, value)) => Given {
            name,
            value: Some(value),
        },
        None => Given {
            name: bare,
            value: None,
        },
    })
}

/// pprof's arguments as a protoprof command line: flags until the first
/// argument that is not one (or `--`), as Go's flag package stops; the
/// rest are sources.
pub(super) fn translate(args: &[String]) -> Result<Translated> {
    let mut report: Option<(Vec<String>, String)> = None;
    let mut options: Vec<String> = Vec::new();
    let mut output = None;
    // Each flag as read, for the shell's options.
    let mut given_flags = Vec::new();
    let mut at = 0;
    while at < args.len() {
        let arg = &args[at];
        at += 1;
        if arg == "--" {
            break;
        }
        let Some(given) = flag_of(arg) else {
            at -= 1;
            break;
        };
        let Some(&(_, meaning)) = FLAGS.iter().find(|(n, _)| *n == given.name) else {
            return Err(usage(format!(
                "flag provided but not defined: -{}",
                given.name
            )));
        };
        let value = match (given.value, takes_value(meaning)) {
            (Some(v), _) => Some(v.to_string()),
            (None, true) => {
                let v = args
                    .get(at)
                    .ok_or_else(|| usage(format!("flag needs an argument: -{}", given.name)))?;
                at += 1;
                Some(v.clone())
            }
            (None, false) => None,
        };
        given_flags.push((given.name.to_string(), value.clone()));
        apply(
            given.name,
            meaning,
            value,
            (&mut report, &mut options, &mut output),
        )?;
    }
    // pprof's -trim=false outweighs -nodecount and the fractions.
    if let Some(at) = options.iter().position(|o| o == "--no-trim") {
        options.remove(at);
        for trimmed in ["--nodecount", "--nodefraction", "--edgefraction"] {
            set_option(&mut options, trimmed, "0".into());
        }
    }
    let mut sources = &args[at..];
    let Some((mut words, name)) = report else {
        // Each command is translated again, with the sources as given.
        let sources = sources.to_vec();
        return Ok(Translated::Shell {
            flags: given_flags,
            sources,
        });
    };
    // pprof's `[binary] profile…`: a first source that is an object file.
    if sources.len() > 1 && is_object_file(Path::new(&sources[0])) {
        options.extend(["--executable".to_string(), sources[0].clone()]);
        sources = &sources[1..];
    }
    if let Some(file) = output {
        if !accepts(&words[0], "--output") {
            return Err(usage(format!("-output with -{name}: protoprof writes this report to standard output only; redirect it")));
        }
        words.extend(["--output".to_string(), file]);
    }
    if words[0] == "filter" && !words.iter().any(|w| w == "--output") {
        words.extend(["--output".to_string(), "-".to_string()]);
    }
    // pprof shows -weblist in a browser unless -output names a file.
    if words[0] == "weblist" && !words.iter().any(|w| w == "--output") {
        words.extend(["--view".to_string(), "browser".to_string()]);
    }
    // `-http` opens the desktop's browser, as pprof's does, unless told not to.
    if words[0] == "serve" && !options.iter().any(|o| o == "--no-browser") {
        words.push("--open".into());
    }
    words.extend(applicable(&words[0], options));
    words.extend(sources.iter().cloned());
    Ok(Translated::Command(words))
}

/// What the slots gather: the report (command words and pprof's flag
/// name), the options, and `-output`.
type Slots<'a> = (
    &'a mut Option<(Vec<String>, String)>,
    &'a mut Vec<String>,
    &'a mut Option<String>,
);

/// Records one flag.
fn apply(name: &str, meaning: Meaning, value: Option<String>, slots: Slots<'_>) -> Result<()> {
    let (report, options, output) = slots;
    let on = || {
        !matches!(
            value.as_deref(),
            Some("false" | "0" | "f" | "F" | "FALSE" | "False")
        )
    };
    let command = match meaning {
        Report(words) if on() => Some(words.iter().map(|w| w.to_string()).collect()),
        ReportOf(word) => Some(vec![word.to_string(), value.clone().unwrap_or_default()]),
        Http => Some(vec![
            "serve".into(),
            "--listen".into(),
            value.clone().unwrap_or_default(),
        ]),
        Switch(ours) if on() => {
            options.push(ours.into());
            None
        }
        // As Go's flag package, the last of a repeated flag wins.
        Valued(ours) => {
            set_option(options, ours, value.unwrap_or_default());
            None
        }
        Trim if !on() => {
            options.push("--no-trim".into());
            None
        }
        Granularity(g) if on() => {
            if let Some(at) = options.iter().position(|o| o == "--granularity") {
                let mut both = [options[at + 1].as_str(), g];
                both.sort();
                if both[0] != both[1] {
                    return Err(usage(format!(
                        "conflicting options set: [{}]",
                        both.join(" ")
                    )));
                }
            }
            set_option(options, "--granularity", g.to_string());
            None
        }
        Output => {
            *output = value;
            None
        }
        _ => None,
    };
    if let Some(words) = command {
        if let Some((_, first)) = report {
            return Err(usage(format!(
                "-{first} and -{name}: must set at most one output format"
            )));
        }
        *report = Some((words, name.to_string()));
    }
    Ok(())
}

/// Whether `path` is an executable or library pprof's object tools open
/// (ELF, Mach-O or PE), by its first bytes.
fn is_object_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    if read.is_err() {
        return false;
    }
    let mach_o = [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xcf, 0xfa, 0xed, 0xfe],
        [0xca, 0xfe, 0xba, 0xbe],
    ];
    &magic == b"\x7fELF" || mach_o.contains(&magic) || magic.starts_with(b"MZ")
}

/// Sets the valued option `name` to `value`, replacing an earlier value.
fn set_option(options: &mut Vec<String>, name: &str, value: String) {
    if let Some(at) = options.iter().position(|o| o == name) {
        options.drain(at..at + 2);
    }
    options.extend([name.to_string(), value]);
}

/// `options` without those `command` does not take: pprof accepts every
/// option with every report and ignores those that do not apply
/// (`-nodecount` with `-traces`).
fn applicable(command: &str, options: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = options.into_iter().peekable();
    while let Some(flag) = words.next() {
        let valued = !FLAGS
            .iter()
            .any(|(_, meaning)| matches!(meaning, Switch(ours) if *ours == flag));
        let value = if valued { words.next() } else { None };
        if accepts(command, &flag) {
            match value {
                // Attached, so that a value such as `-inf` or a regex
                // `-x` is not read as an option of its own.
                Some(value) if value.starts_with('-') => out.push(format!("{flag}={value}")),
                value => {
                    out.push(flag);
                    out.extend(value);
                }
            }
        }
    }
    out
}

/// Whether protoprof's `command` takes the option `--long`.
fn accepts(command: &str, long: &str) -> bool {
    let long = long.trim_start_matches("--");
    let mut cli = Cli::command();
    // Global options (`--seconds`, `--timeout`) reach every command.
    cli.build();
    let Some(sub) = cli.find_subcommand(command) else {
        return false;
    };
    let takes = sub.get_arguments().any(|a| a.get_long() == Some(long));
    takes
}

fn usage(message: String) -> CliError {
    CliError::failure(format!("pprof: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Result<Vec<String>> {
        match translate(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())? {
            Translated::Command(words) => Ok(words),
            Translated::Shell { .. } => Err(usage("the shell".into())),
        }
    }

    #[test]
    fn pprofs_flags_read_as_gos_flag_package_reads_them() {
        let top = words(&[
            "-top",
            "-nodecount=10",
            "--sample_index",
            "alloc_space",
            "heap.pb.gz",
        ]);
        assert_eq!(
            top.unwrap(),
            [
                "top",
                "--nodecount",
                "10",
                "--sample-index",
                "alloc_space",
                "heap.pb.gz"
            ]
        );
        // Options a report does not take are left out, as pprof ignores them.
        let traces = words(&["-traces", "-nodecount", "5", "-lines", "cpu.pb"]).unwrap();
        assert_eq!(traces, ["traces", "--granularity", "lines", "cpu.pb"]);
        let peek = words(&["-peek", "main", "-cum=false", "a", "-top"]).unwrap();
        assert_eq!(
            peek,
            ["peek", "main", "a", "-top"],
            "flags stop at the first source"
        );
        let svg = words(&["-svg", "-output=g.svg", "cpu.pb"]).unwrap();
        assert_eq!(
            svg,
            [
                "callgraph",
                "--format",
                "svg",
                "--output",
                "g.svg",
                "cpu.pb"
            ]
        );
        let web = words(&["-weblist=work", "-source_path=src", "cpu.prof"]).unwrap();
        assert_eq!(
            web,
            [
                "weblist",
                "work",
                "--view",
                "browser",
                "--source-path",
                "src",
                "cpu.prof"
            ]
        );
        let web = words(&["-weblist", "work", "-output=w.html", "cpu.prof"]).unwrap();
        assert_eq!(web, ["weblist", "work", "--output", "w.html", "cpu.prof"]);
        let http = words(&["-http=:8080", "-no_browser", "cpu.pb"]).unwrap();
        assert_eq!(http, ["serve", "--listen", ":8080", "cpu.pb"]);
        let http = words(&["-http", "localhost:0", "cpu.pb"]).unwrap();
        assert_eq!(
            http,
            ["serve", "--listen", "localhost:0", "--open", "cpu.pb"]
        );
    }

    #[test]
    fn what_pprof_would_refuse_or_protoprof_lacks_is_one_line() {
        for (args, says) in [
            (&["-nodecount=3", "x"][..], "the shell"),
            (&["-top", "-tree", "x"], "at most one output format"),
            (&["-top", "-frobnicate", "x"], "not defined: -frobnicate"),
            (&["-top", "-focus"], "needs an argument: -focus"),
            (&["-divide_by"], "needs an argument: -divide_by"),
            (
                &["-top", "-lines", "-functions", "x"],
                "conflicting options set: [functions lines]",
            ),
            (&["-top", "-output=t.txt", "x"], "standard output only"),
        ] {
            let error = words(args).unwrap_err().message;
            assert!(error.contains(says), "{args:?}: {error}");
            assert_eq!(error.lines().count(), 1);
        }
    }
}
