//! pprof's interactive shell: `protoprof pprof SOURCE` without an output
//! flag reads commands as `go tool pprof` does (`top 5`, `focus=main`,
//! `list burn`, `o`, `help`, `quit`). Each report is the protoprof command
//! the same pprof flags name (`pprof.rs`), run on the sources, so it
//! prints what that command prints; labels are compact, as in pprof's
//! shell. On a terminal, lines are edited with rustyline (history in
//! `~/.protoprof_pprof_history`, commands and options completed); from a
//! pipe, the prompt goes to standard output before each line, as pprof
//! writes it.

use std::io::{BufRead, IsTerminal, Write};

use super::pprof::{run_words, translate, Meaning, Translated, FLAGS};
use crate::error::{CliError, Result};

const PROMPT: &str = "(pprof) ";

/// pprof's granularity options, of which one is set at a time.
const GRANULARITIES: [&str; 5] = ["functions", "filefunctions", "files", "lines", "addresses"];

/// Runs the shell on `sources`, with pprof's `flags` from the command line
/// (names and values, as `translate` read them) as the options' first
/// values.
pub fn run(flags: Vec<(String, Option<String>)>, sources: Vec<String>) -> Result<u8> {
    if sources.is_empty() {
        return Err(CliError::failure(
            "pprof: give a profile (a file or URL) to the shell",
        ));
    }
    // pprof fetches its sources once, when the shell starts: each report
    // reads the copies (a CPU profile over HTTP takes its seconds once).
    set_fetch_options(&flags);
    let fetched = tempfile::tempdir()
        .map_err(|e| CliError::failure(format!("a directory for the fetched profiles: {e}")))?;
    let mut copies = 0;
    let mut fetch_once = |source: String| fetched_once(source, fetched.path(), &mut copies);
    let sources = sources
        .into_iter()
        .map(&mut fetch_once)
        .collect::<Result<_>>()?;
    let mut session = Session {
        options: Vec::new(),
        sources,
    };
    for (name, value) in flags {
        let value = match (name.as_str(), value) {
            ("base" | "diff_base", Some(base)) => Some(fetch_once(base)?),
            (_, value) => value,
        };
        session.set(&name, value);
    }
    // pprof's greeting: the profile's labels, then how to go on.
    for line in session.labels() {
        eprintln!("{line}");
    }
    eprintln!("Entering interactive mode (type \"help\" for commands, \"o\" for options)");
    let mut input = Input::open();
    while let Some(line) = input.line() {
        match session.line(line.trim()) {
            Ok(Step::Quit) => break,
            Ok(Step::Go) => {}
            Err(e) => eprintln!("{}", e.message),
        }
    }
    input.close();
    Ok(0)
}

/// `-seconds` and `-timeout` as the shell was started with, for fetching
/// its sources.
fn set_fetch_options(flags: &[(String, Option<String>)]) {
    let number = |name: &str| {
        (flags.iter().rev())
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref()?.parse().ok())
    };
    crate::fetch::set_fetch(crate::cli::FetchArgs {
        seconds: number("seconds"),
        timeout: number("timeout"),
        ..Default::default()
    });
}

/// `source` as the shell's reports read it: a URL fetched now into `dir`
/// (the `copies`-th copy), anything else as it is.
fn fetched_once(source: String, dir: &std::path::Path, copies: &mut usize) -> Result<String> {
    if !crate::fetch::names_url(std::path::Path::new(&source)) {
        return Ok(source);
    }
    let bytes = crate::io::read_input(std::path::Path::new(&source))?;
    *copies += 1;
    let copy = dir.join(format!("fetched-{copies}.pb"));
    std::fs::write(&copy, bytes)
        .map_err(|e| CliError::failure(format!("{}: {e}", copy.display())))?;
    Ok(copy.display().to_string())
}

/// What the shell does after a line.
enum Step {
    Go,
    Quit,
}

/// The options set (as pprof flag names and values, in the order set) and
/// the sources every report reads.
struct Session {
    options: Vec<(String, Option<String>)>,
    sources: Vec<String>,
}

impl Session {
    /// The labels pprof greets with (file, type, time, duration and
    /// total) of the profile the sources and options give; none when it
    /// cannot be read (the first report says why).
    fn labels(&self) -> Vec<String> {
        let mut flags = vec!["-top".to_string()];
        flags.extend(self.flag_words());
        flags.push("--".into());
        flags.extend(self.sources.iter().cloned());
        let Ok(Translated::Command(words)) = translate(&flags) else {
            return Vec::new();
        };
        let argv = std::iter::once("protoprof".to_string()).chain(words);
        match <crate::cli::Cli as clap::Parser>::try_parse_from(argv) {
            Ok(cli) => super::analyze::labels_of(&cli.command).unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    /// The options set, as pprof's flags.
    fn flag_words(&self) -> Vec<String> {
        (self.options.iter())
            .map(|(option, value)| match value {
                Some(value) => format!("-{option}={value}"),
                None => format!("-{option}"),
            })
            .collect()
    }

    fn line(&mut self, line: &str) -> Result<Step> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = words.first() else {
            return Ok(Step::Go);
        };
        match first {
            "quit" | "exit" | "q" => return Ok(Step::Quit),
            "help" => help(),
            "o" | "options" => self.print_options(),
            _ if line.contains('=') => self.assign(line)?,
            _ => self.command(&words)?,
        }
        Ok(Step::Go)
    }

    /// `name=value` (or `name = value`); an empty value unsets it.
    fn assign(&mut self, line: &str) -> Result<()> {
        let (name, value) = line.split_once('=').expect("checked by the caller");
        let (name, value) = (name.trim(), value.trim());
        match name {
            "granularity" if GRANULARITIES.contains(&value) => self.set(value, None),
            "sort" if value == "cum" || value == "flat" => self.set(value, None),
            "granularity" | "sort" => return Err(usage(format!("{value:?} is not a {name}"))),
            _ => {
                let meaning = meaning_of(name)?;
                if matches!(meaning, Meaning::Report(_) | Meaning::ReportOf(_)) {
                    return Err(usage(format!("{name} is a command, not an option")));
                }
                match value.is_empty() {
                    true => self.options.retain(|(n, _)| n != name),
                    false => self.set(name, Some(value.to_string())),
                }
            }
        }
        Ok(())
    }

    /// Sets option `name`: a granularity or sort replaces the other ones.
    fn set(&mut self, name: &str, value: Option<String>) {
        let group: &[&str] = match name {
            n if GRANULARITIES.contains(&n) => &GRANULARITIES,
            "cum" | "flat" => &["cum", "flat"],
            n => &[n][..],
        };
        let group: Vec<String> = group.iter().map(|g| g.to_string()).collect();
        self.options.retain(|(n, _)| !group.contains(n));
        self.options.push((name.to_string(), value));
    }

    /// A report: `top 10 main -runtime` (a count, focus and ignore regexes
    /// for this command only), `top10`, `list REGEX`, `peek REGEX`.
    fn command(&self, words: &[&str]) -> Result<()> {
        let (name, count) = split_count(words[0]);
        let meaning = meaning_of(name)?;
        let mut flags = vec![];
        let mut rest = &words[1..];
        match meaning {
            Meaning::Report(_) => flags.push(format!("-{name}")),
            Meaning::ReportOf(_) => {
                let Some((regex, more)) = rest.split_first() else {
                    return Err(usage(format!("command {name} requires an argument")));
                };
                flags.push(format!("-{name}={regex}"));
                rest = more;
            }
            _ => {
                return Err(usage(format!(
                    "{name} is an option: set it as {name}=VALUE"
                )))
            }
        }
        let mut options = self.options.clone();
        let mut set = |n: &str, v: String| {
            options.retain(|(o, _)| o != n);
            options.push((n.to_string(), Some(v)));
        };
        if let Some(count) = count {
            set("nodecount", count.to_string());
        }
        let (focus, ignore) = focus_and_ignore(rest, &mut |n| set("nodecount", n.to_string()));
        let (focus_name, ignore_name) = match name {
            "tags" => ("tagfocus", "tagignore"),
            _ => ("focus", "ignore"),
        };
        if let Some(focus) = focus {
            set(focus_name, focus);
        }
        if let Some(ignore) = ignore {
            set(ignore_name, ignore);
        }
        // The shell's labels are compact, as pprof's are.
        flags.push("-compact_labels".into());
        let session = Session {
            options,
            sources: Vec::new(),
        };
        flags.extend(session.flag_words());
        flags.push("--".into());
        flags.extend(self.sources.iter().cloned());
        match translate(&flags)? {
            Translated::Command(words) => run_words(&words).map(|_| ()),
            Translated::Shell { .. } => Err(usage(format!("{name} is not a report"))),
        }
    }

    fn print_options(&self) {
        if self.options.is_empty() {
            eprintln!("  (all options at pprof's defaults)");
        }
        for (name, value) in &self.options {
            match value {
                Some(value) => eprintln!("  {name:<24} = {value}"),
                None => eprintln!("  {name}"),
            }
        }
    }
}

/// `top10` as `top` and 10.
fn split_count(word: &str) -> (&str, Option<u32>) {
    let letters = word.trim_end_matches(|c: char| c.is_ascii_digit());
    match (letters.len() < word.len(), word[letters.len()..].parse()) {
        (true, Ok(n)) if FLAGS.iter().any(|(f, _)| *f == letters) => (letters, Some(n)),
        _ => (word, None),
    }
}

/// A command's arguments as pprof reads them: a number is the node count,
/// `-REGEX` is ignored, any other REGEX focused on (several joined by `|`).
fn focus_and_ignore(
    args: &[&str],
    node_count: &mut dyn FnMut(u32),
) -> (Option<String>, Option<String>) {
    let (mut focus, mut ignore) = (Vec::new(), Vec::new());
    for arg in args {
        if let Ok(n) = arg.parse::<u32>() {
            node_count(n);
        } else if let Some(regex) = arg.strip_prefix('-') {
            ignore.push(regex.to_string());
        } else {
            focus.push(arg.to_string());
        }
    }
    let joined = |v: Vec<String>| (!v.is_empty()).then(|| v.join("|"));
    (joined(focus), joined(ignore))
}

fn meaning_of(name: &str) -> Result<Meaning> {
    FLAGS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, m)| *m)
        .ok_or_else(|| usage(format!("unrecognized command or option: {name}")))
}

fn usage(message: String) -> CliError {
    CliError::failure(format!("pprof: {message}"))
}

fn help() {
    let commands: Vec<&str> = (FLAGS.iter())
        .filter(|(_, m)| matches!(m, Meaning::Report(_) | Meaning::ReportOf(_)))
        .map(|(n, _)| *n)
        .filter(|n| *n != "http")
        .collect();
    let options: Vec<&str> = (FLAGS.iter())
        .filter(|(_, m)| matches!(m, Meaning::Valued(_) | Meaning::Switch(_)))
        .map(|(n, _)| *n)
        .collect();
    eprintln!("  Commands: {}", commands.join(" "));
    eprintln!("    top 10 main -runtime: at most 10 rows, focused on main, runtime ignored");
    eprintln!("    list REGEX, peek REGEX: the functions REGEX matches");
    eprintln!(
        "  Options (NAME=VALUE; NAME= unsets): {}",
        options.join(" ")
    );
    eprintln!("    granularity=functions|filefunctions|files|lines|addresses, sort=flat|cum");
    eprintln!("  o: the options set; quit: leave");
}

/// Where lines come from: a terminal's line editor, or a pipe.
enum Input {
    Terminal(Box<rustyline::Editor<Completion, rustyline::history::FileHistory>>),
    Piped(std::io::StdinLock<'static>),
}

impl Input {
    fn open() -> Input {
        if std::io::stdin().is_terminal() {
            if let Ok(mut editor) = rustyline::Editor::new() {
                editor.set_helper(Some(Completion));
                let _ = editor.load_history(&history_file());
                return Input::Terminal(Box::new(editor));
            }
        }
        Input::Piped(std::io::stdin().lock())
    }

    /// The next line; `None` at its end (or Ctrl-D).
    fn line(&mut self) -> Option<String> {
        match self {
            Input::Terminal(editor) => match editor.readline(PROMPT) {
                Ok(line) => {
                    let _ = editor.add_history_entry(line.as_str());
                    Some(line)
                }
                // Ctrl-C abandons the line, as in pprof.
                Err(rustyline::error::ReadlineError::Interrupted) => Some(String::new()),
                Err(_) => None,
            },
            Input::Piped(stdin) => {
                let mut out = std::io::stdout();
                let _ = out.write_all(PROMPT.as_bytes()).and_then(|_| out.flush());
                let mut line = String::new();
                match stdin.read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                }
            }
        }
    }

    fn close(self) {
        if let Input::Terminal(mut editor) = self {
            let _ = editor.save_history(&history_file());
        }
    }
}

fn history_file() -> std::path::PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_default();
    std::path::Path::new(&home).join(".protoprof_pprof_history")
}

/// Completes the first word as a command or option name.
struct Completion;

impl rustyline::Helper for Completion {}
impl rustyline::hint::Hinter for Completion {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Completion {}
impl rustyline::validate::Validator for Completion {}

impl rustyline::completion::Completer for Completion {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let word = &line[..pos];
        if word.contains(char::is_whitespace) {
            return Ok((pos, Vec::new()));
        }
        let mut names: Vec<String> = (FLAGS.iter())
            .map(|(n, _)| n.to_string())
            .chain(["granularity", "sort", "help", "quit"].map(String::from))
            .filter(|n| n.starts_with(word))
            .collect();
        names.sort();
        Ok((0, names))
    }
}
