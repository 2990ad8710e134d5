//! Diagnostics, the report that collects them, and its two renderings.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::rules::{Rule, Severity};

/// How to validate.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Diagnostics kept per rule; the rest are counted only.
    pub max_per_rule: usize,
    /// Stop at the first error.
    pub fail_fast: bool,
    /// Also look for duplicate and unreferenced dictionary entries (OTLP
    /// v1development; `validate --strict`).
    pub duplicates_and_orphans: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_per_rule: 20,
            fail_fast: false,
            duplicates_and_orphans: false,
        }
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The rule's code, e.g. `PPROF-REF-003`.
    pub code: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// Field path from the validated message, e.g. `sample[1042].location_id[7]`.
    pub path: String,
    /// The offending value, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// What is wrong, with the limit it broke.
    pub message: String,
}

/// How many times one rule fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    /// The rule's code.
    pub code: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// How many times it fired.
    pub count: u64,
    /// Of `count`, how many are in `diagnostics`.
    pub shown: u64,
}

/// Everything validation found in one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Full name of the validated message type.
    pub message_type: String,
    /// Diagnostics of severity error, all counted.
    pub errors: u64,
    /// Diagnostics of severity warning, all counted.
    pub warnings: u64,
    /// Fail-fast mode stopped at the first error.
    pub stopped_early: bool,
    /// Per rule, how many times it fired.
    pub counts: Vec<RuleCount>,
    /// The diagnostics kept (up to `Options::max_per_rule` per rule).
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// Adds a finding made outside validation's own walk (what the decoder
    /// dropped: see [`crate::report_dropped_input`]), counted under `rule`
    /// and kept while the rule has fewer than `max_per_rule` shown.
    pub fn add(&mut self, rule: &'static Rule, path: String, message: String, max_per_rule: usize) {
        match rule.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        let at = match self.counts.iter().position(|c| c.code == rule.code) {
            Some(at) => at,
            None => {
                self.counts.push(RuleCount {
                    code: rule.code,
                    severity: rule.severity,
                    count: 0,
                    shown: 0,
                });
                self.counts.len() - 1
            }
        };
        let count = &mut self.counts[at];
        count.count += 1;
        if (count.shown as usize) < max_per_rule {
            count.shown += 1;
            self.diagnostics.push(Diagnostic {
                code: rule.code,
                severity: rule.severity,
                path,
                value: None,
                message,
            });
        }
    }

    /// No errors (warnings allowed).
    pub fn is_valid(&self) -> bool {
        self.errors == 0
    }

    /// The number of diagnostics of one rule.
    pub fn count(&self, code: &str) -> u64 {
        self.counts
            .iter()
            .find(|c| c.code == code)
            .map_or(0, |c| c.count)
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }

    /// One line per diagnostic, then what was not shown, then a summary.
    pub fn render_human(&self) -> String {
        let mut out = self.render_diagnostics("", &|_, label| label.to_string());
        let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        write!(
            out,
            "{}: {}, {}",
            self.message_type,
            plural(self.errors, "error"),
            plural(self.warnings, "warning")
        )
        .unwrap();
        if self.stopped_early {
            out.push_str(" (stopped at the first error)");
        }
        out.push('\n');
        out
    }

    /// The diagnostic lines (`error[CODE] path = value: message`) and the
    /// counts of those not shown, each line after `prefix`; `paint` styles
    /// the `severity[CODE]` label (colour, for a terminal).
    pub fn render_diagnostics(
        &self,
        prefix: &str,
        paint: &dyn Fn(Severity, &str) -> String,
    ) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            let value = d
                .value
                .as_deref()
                .map(|v| format!(" = {v}"))
                .unwrap_or_default();
            let path = if d.path.is_empty() {
                "(message)"
            } else {
                &d.path
            };
            let label = paint(d.severity, &format!("{}[{}]", d.severity.name(), d.code));
            writeln!(out, "{prefix}{label} {path}{value}: {}", d.message).unwrap();
        }
        for c in self.counts.iter().filter(|c| c.count > c.shown) {
            writeln!(
                out,
                "{prefix}  ... {} more {} ({}) not shown",
                c.count - c.shown,
                c.code,
                c.severity.name()
            )
            .unwrap();
        }
        out
    }
}

#[cfg(test)]
impl Report {
    /// Each diagnostic's code and the element of the repeated field `field`
    /// its path names, sorted (a test's view of which elements were
    /// reported).
    pub(crate) fn codes_by_element(&self, field: &str) -> Vec<(&'static str, usize)> {
        let opening = format!("{field}[");
        let element = |path: &str| {
            let at = path.find(&opening).expect("an element's path") + opening.len();
            path[at..].split(']').next().unwrap().parse().unwrap()
        };
        let mut found: Vec<_> = (self.diagnostics.iter())
            .map(|d| (d.code, element(&d.path)))
            .collect();
        found.sort_unstable();
        found
    }
}

/// Collects diagnostics under the options' caps. Messages are built by
/// closures only for the diagnostics that are kept, so a profile with a
/// million bad samples costs a million counter increments, not a million
/// strings.
pub(crate) struct Collector {
    options: Options,
    counts: BTreeMap<&'static str, (Severity, u64)>,
    diagnostics: Vec<Diagnostic>,
    stopped: bool,
}

impl Collector {
    pub fn new(options: Options) -> Self {
        Collector {
            options,
            counts: BTreeMap::new(),
            diagnostics: Vec::new(),
            stopped: false,
        }
    }

    /// Fail-fast mode has seen an error: callers may stop looping.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    #[inline]
    pub fn report(
        &mut self,
        rule: &'static Rule,
        path: impl FnOnce() -> String,
        value: Option<String>,
        message: impl FnOnce() -> String,
    ) {
        if self.stopped {
            return;
        }
        let entry = self.counts.entry(rule.code).or_insert((rule.severity, 0));
        entry.1 += 1;
        if entry.1 as usize <= self.options.max_per_rule {
            self.diagnostics.push(Diagnostic {
                code: rule.code,
                severity: rule.severity,
                path: path(),
                value,
                message: message(),
            });
        }
        if self.options.fail_fast && rule.severity == Severity::Error {
            self.stopped = true;
        }
    }

    /// A collector with the same options, for checks made on another
    /// thread, to be absorbed after this one's.
    pub fn fork(&self) -> Collector {
        Collector::new(self.options)
    }

    /// Takes in what `later` collected of the checks that come after this
    /// collector's, as if this one had made them: counts added, diagnostics
    /// kept in order up to the per-rule cap, nothing once this one stopped.
    pub fn absorb(&mut self, later: Collector) {
        if self.stopped {
            return;
        }
        let mut kept: BTreeMap<&'static str, usize> = BTreeMap::new();
        for d in &self.diagnostics {
            *kept.entry(d.code).or_default() += 1;
        }
        for (code, (severity, count)) in later.counts {
            self.counts.entry(code).or_insert((severity, 0)).1 += count;
        }
        for d in later.diagnostics {
            let kept = kept.entry(d.code).or_default();
            if *kept < self.options.max_per_rule {
                *kept += 1;
                self.diagnostics.push(d);
            }
        }
        self.stopped = later.stopped;
    }

    pub fn finish(self, message_type: &str) -> Report {
        let mut shown: BTreeMap<&str, u64> = BTreeMap::new();
        for d in &self.diagnostics {
            *shown.entry(d.code).or_default() += 1;
        }
        let counts: Vec<RuleCount> = self
            .counts
            .iter()
            .map(|(code, (severity, count))| RuleCount {
                code,
                severity: *severity,
                count: *count,
                shown: shown.get(code).copied().unwrap_or(0),
            })
            .collect();
        let total = |s: Severity| {
            counts
                .iter()
                .filter(|c| c.severity == s)
                .map(|c| c.count)
                .sum()
        };
        let mut diagnostics = self.diagnostics;
        // Errors first, then by code; within a rule, in the order found.
        diagnostics.sort_by_key(|d| (d.severity, d.code));
        Report {
            message_type: message_type.to_string(),
            errors: total(Severity::Error),
            warnings: total(Severity::Warning),
            stopped_early: self.stopped,
            counts,
            diagnostics,
        }
    }
}
