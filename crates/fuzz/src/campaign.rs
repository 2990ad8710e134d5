//! A fuzzing campaign for one target: coverage-guided when the build is
//! instrumented (see [`crate::coverage`]), blind otherwise.
//!
//! Inputs that reach a new feature join the in-memory corpus (and
//! `corpus_dir`, so the next campaign starts where this one stopped). A
//! panicking input is written to `crash_dir/<target>/<hash>.bin`, where the
//! test suite runs it on every `cargo test`; the campaign goes on and
//! reports each distinct panic once.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::coverage::CoverageMap;
use crate::mutate::{mutate_with, Rng};
use crate::targets::Target;

/// When a target's campaign stops: at whichever limit comes first.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Executions.
    pub runs: Option<u64>,
    /// Wall-clock time.
    pub time: Option<Duration>,
}

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct CampaignConfig {
    /// When to stop each target.
    pub budget: Budget,
    /// The random seed (a campaign is reproducible given its corpus).
    pub seed: u64,
    /// Where panicking inputs go (one directory per target).
    pub crash_dir: PathBuf,
    /// Where inputs that reached new coverage go, and are read back from.
    pub corpus_dir: Option<PathBuf>,
    /// Inputs longer than this are not kept in the corpus.
    pub max_kept_len: usize,
}

/// One distinct panic.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The panic message and where it was raised.
    pub message: String,
    /// Where the input was saved.
    pub saved_to: PathBuf,
}

/// What a target's campaign did.
#[derive(Clone, Debug, Default)]
pub struct TargetReport {
    /// The target's name.
    pub target: String,
    /// Executions.
    pub runs: u64,
    /// Time taken.
    pub elapsed: Duration,
    /// Edges taken at least once, and instrumented in all (0 when blind).
    pub edges: (usize, usize),
    /// (edge, hit-count bucket) features seen.
    pub features: usize,
    /// Corpus entries at the end (seeds kept plus inputs found).
    pub corpus_len: usize,
    /// The slowest single execution.
    pub slowest: Duration,
    /// Each distinct panic.
    pub findings: Vec<Finding>,
}

thread_local! {
    static IN_TARGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that records a target's panic quietly for
/// [`run_once`] to report; panics elsewhere go to the previous hook.
pub fn capture_panics() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_TARGET.with(|t| t.get()) {
                return previous(info);
            }
            let place = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{place}: {text}")));
        }));
    });
}

/// Runs `target` on `input`; the panic message if it panicked.
pub fn run_once(target: Target, input: &[u8]) -> Option<String> {
    IN_TARGET.with(|t| t.set(true));
    let result = panic::catch_unwind(AssertUnwindSafe(|| target(input)));
    IN_TARGET.with(|t| t.set(false));
    match result {
        Ok(()) => None,
        Err(_) => Some(
            LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "panic".into()),
        ),
    }
}

/// A campaign against one target, starting from `seeds`. `progress` is
/// called now and then with the report so far.
pub fn run_target(
    name: &str,
    target: Target,
    seeds: &[Vec<u8>],
    config: &CampaignConfig,
    progress: &mut dyn FnMut(&TargetReport),
) -> std::io::Result<TargetReport> {
    let mut state = State::new(name, target, config);
    let mut starting = seeds.to_vec();
    if let Some(dir) = &config.corpus_dir {
        let kept = read_inputs(&dir.join(name))?;
        starting.extend(kept.into_iter().filter(|i| i.len() <= config.max_kept_len));
    }
    for input in starting {
        state.execute(input, false)?;
    }
    let mut rng = Rng::new(config.seed);
    let started = Instant::now();
    let mut last_progress = started;
    while !state.corpus.is_empty() && !state.spent(started) {
        let input = state.next_input(&mut rng);
        state.execute(input, true)?;
        if state.report.runs & 1023 == 0 && last_progress.elapsed() >= Duration::from_secs(10) {
            last_progress = Instant::now();
            progress(&state.finish(started));
        }
    }
    Ok(state.finish(started))
}

struct State<'a> {
    target: Target,
    config: &'a CampaignConfig,
    coverage: CoverageMap,
    corpus: Vec<Vec<u8>>,
    report: TargetReport,
    panics_seen: Vec<String>,
}

impl<'a> State<'a> {
    fn new(name: &str, target: Target, config: &'a CampaignConfig) -> Self {
        State {
            target,
            config,
            coverage: CoverageMap::new(),
            corpus: Vec::new(),
            report: TargetReport {
                target: name.to_string(),
                ..Default::default()
            },
            panics_seen: Vec::new(),
        }
    }

    fn spent(&self, started: Instant) -> bool {
        let budget = self.config.budget;
        budget.runs.is_some_and(|runs| self.report.runs >= runs)
            || (self.report.runs & 255 == 0
                && budget.time.is_some_and(|time| started.elapsed() >= time))
    }

    /// A mutation of a corpus entry, favouring the most recent finds.
    fn next_input(&self, rng: &mut Rng) -> Vec<u8> {
        let n = self.corpus.len();
        let pick = if rng.below(2) == 0 {
            n - 1 - rng.below(n.min(64))
        } else {
            rng.below(n)
        };
        mutate_with(&self.corpus[pick], &self.corpus[rng.below(n)], rng)
    }

    /// Runs the target on `input`, keeps it if it reached something new
    /// (every seed is kept when the build is blind), saves it if it panicked.
    fn execute(&mut self, input: Vec<u8>, counted: bool) -> std::io::Result<()> {
        self.coverage.reset_counters();
        let start = Instant::now();
        let panicked = run_once(self.target, &input);
        self.report.slowest = self.report.slowest.max(start.elapsed());
        if counted {
            self.report.runs += 1;
        }
        let new = self.coverage.absorb();
        if let Some(message) = panicked {
            self.record_panic(message, &input)?;
        } else if input.len() <= self.config.max_kept_len
            && (new > 0 || (!counted && self.coverage.edges_total() == 0))
        {
            if counted {
                self.save(self.config.corpus_dir.as_deref(), &input)?;
            }
            self.corpus.push(input);
        }
        Ok(())
    }

    fn record_panic(&mut self, message: String, input: &[u8]) -> std::io::Result<()> {
        let place = message.split(": ").next().unwrap_or_default().to_string();
        if self.panics_seen.contains(&place) {
            return Ok(());
        }
        self.panics_seen.push(place);
        let saved_to = self.save(Some(&self.config.crash_dir), input)?;
        self.report.findings.push(Finding {
            message,
            saved_to: saved_to.unwrap_or_default(),
        });
        Ok(())
    }

    fn save(&self, dir: Option<&Path>, input: &[u8]) -> std::io::Result<Option<PathBuf>> {
        let Some(dir) = dir else { return Ok(None) };
        let dir = dir.join(&self.report.target);
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{:016x}.bin", fnv1a(input)));
        std::fs::write(&path, input)?;
        Ok(Some(path))
    }

    fn finish(&self, started: Instant) -> TargetReport {
        TargetReport {
            elapsed: started.elapsed(),
            edges: (self.coverage.edges_covered(), self.coverage.edges_total()),
            features: self.coverage.features(),
            corpus_len: self.corpus.len(),
            ..self.report.clone()
        }
    }
}

/// Every file directly in `dir` (none when it does not exist).
pub fn read_inputs(dir: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.sort();
    paths.into_iter().map(std::fs::read).collect()
}

/// FNV-1a, to name saved inputs by their content.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
