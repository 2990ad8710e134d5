//! Which samples an analysis counts and how it names their frames: pprof's
//! sample filters (`-focus`, `-ignore`, `-hide`, `-show`, `-show_from`,
//! `-tagfocus`, `-tagignore`, `-prune_from`) and granularities
//! (`-functions` … `-addresses`, `-noinlines`), with pprof's semantics
//! (its `profile/filter.go`, `prune.go` and `driver_focus.go`).

use std::collections::HashMap;

use regex::Regex;

use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Label, Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::units::scale;

/// How frames are named, and so merged: pprof's granularities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Granularity {
    /// By function name (pprof's default).
    #[default]
    Functions,
    /// By function name and file.
    FileFunctions,
    /// By file.
    Files,
    /// By function, file and line.
    Lines,
    /// By address, function, file and line.
    Addresses,
}

/// Why a selection cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{option} {value:?}: {detail}")]
pub struct SelectionError {
    /// The option, e.g. `focus`.
    pub option: &'static str,
    /// Its value.
    pub value: String,
    /// What is wrong with it.
    pub detail: String,
}

/// Sample filters and granularity; the default selects every sample and
/// names frames by function, as pprof does without options.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Keep samples with a frame matching (function name, file or mapping file).
    pub focus: Option<Regex>,
    /// Drop samples with a frame matching.
    pub ignore: Option<Regex>,
    /// Remove matching frames from stacks.
    pub hide: Option<Regex>,
    /// Keep only matching frames in stacks.
    pub show: Option<Regex>,
    /// Cut stacks above (rootward of) the outermost matching frame.
    pub show_from: Option<Regex>,
    /// Cut stacks beneath (leafward of) the innermost matching function.
    pub prune_from: Option<Regex>,
    /// Keep samples whose labels match.
    pub tag_focus: Option<TagFilter>,
    /// Drop samples whose labels match.
    pub tag_ignore: Option<TagFilter>,
    /// Show only the labels whose key matches (pprof's `-tagshow`), after
    /// the tag filters have chosen the samples.
    pub tag_show: Option<Regex>,
    /// Show no label whose key matches (pprof's `-taghide`).
    pub tag_hide: Option<Regex>,
    /// How frames are named.
    pub granularity: Granularity,
    /// Attribute inlined frames to the function they were inlined into.
    pub noinlines: bool,
    /// Tell nodes apart by their object file and start line too (pprof's
    /// `ObjNames`, which its callgrind output sets).
    pub object_names: bool,
    /// Percentages of the samples the filters keep, not of the whole
    /// profile (pprof's `-relative_percentages`).
    pub relative_percentages: bool,
    /// Each value divided by the first sample type's (a count), summed
    /// alike (pprof's `-mean`: the mean delay of a contention profile).
    pub mean: bool,
    /// Reports' headers without the profile's labels (file, type, time),
    /// as pprof's `-compact_labels` and its interactive shell print them.
    pub compact_labels: bool,
    /// Nodes whose flat value is negative (or zero with a negative cum)
    /// left out of graph-based reports, as pprof's `-drop_negative`.
    pub drop_negative: bool,
    /// Function names as the profile gives them, not simplified (pprof's
    /// `-symbolize=none`, which skips its demangling step too).
    pub names_as_given: bool,
    /// A node per call path instead of per function (pprof's
    /// `-call_tree`, which it honours in the call graph and callgrind).
    pub call_tree: bool,
    /// Values shown divided by this (pprof's `-divide_by`); `None` is 1.
    /// Percentages are of the undivided values, as pprof's are.
    pub divide_by: Option<f64>,
}

impl Selection {
    /// What shown values are multiplied by: pprof's `Ratio`, one over
    /// `-divide_by`, applied only when positive and not 1.
    pub fn value_ratio(&self) -> Option<f64> {
        let ratio = 1.0 / self.divide_by?;
        (ratio > 0.0 && ratio != 1.0).then_some(ratio)
    }

    /// A regex option as pprof compiles it (Go's RE2 syntax, which Rust's
    /// `regex` shares for what profiles use); empty means unset.
    pub fn regex(option: &'static str, value: &str) -> Result<Option<Regex>, SelectionError> {
        if value.is_empty() {
            return Ok(None);
        }
        Regex::new(value).map(Some).map_err(|e| SelectionError {
            option,
            value: value.to_string(),
            detail: e.to_string(),
        })
    }

    /// Whether any filter of samples or frames is set (granularity, and
    /// `tag_show`/`tag_hide`, which only choose labels to show, aside).
    pub fn filters(&self) -> bool {
        [
            &self.focus,
            &self.ignore,
            &self.hide,
            &self.show,
            &self.show_from,
            &self.prune_from,
        ]
        .iter()
        .any(|r| r.is_some())
            || self.tag_focus.is_some()
            || self.tag_ignore.is_some()
    }

    /// The filters in force, as pprof lists them under "Active filters:".
    ///
    /// As pprof, it lists neither `prune_from` nor the granularity.
    pub fn active_filters(&self) -> Vec<String> {
        let regexes = [
            ("focus", &self.focus),
            ("ignore", &self.ignore),
            ("hide", &self.hide),
            ("show", &self.show),
            ("show_from", &self.show_from),
        ];
        let mut out: Vec<String> = regexes
            .iter()
            .filter_map(|(name, r)| r.as_ref().map(|r| format!("{name}={}", r.as_str())))
            .collect();
        for (name, tag) in [
            ("tagfocus", &self.tag_focus),
            ("tagignore", &self.tag_ignore),
        ] {
            if let Some(t) = tag {
                out.push(format!("{name}={}", t.text));
            }
        }
        for (name, r) in [("tagshow", &self.tag_show), ("taghide", &self.tag_hide)] {
            if let Some(r) = r {
                out.push(format!("{name}={}", r.as_str()));
            }
        }
        out
    }

    /// Whether labels of `key` are shown (pprof's `FilterTagsByName`).
    pub fn shows_tag(&self, key: &str) -> bool {
        self.tag_show.as_ref().is_none_or(|r| r.is_match(key))
            && !self.tag_hide.as_ref().is_some_and(|r| r.is_match(key))
    }
}

/// A `-tagfocus`/`-tagignore` value: `[key=]regex[,regex…]` for string
/// labels, or `[key=]range` for numeric ones (`32kb`, `:64kb`, `4mb:`,
/// `12kb:64mb`; units as pprof scales them).
#[derive(Debug, Clone)]
pub struct TagFilter {
    text: String,
    key: Option<String>,
    test: TagTest,
}

impl TagFilter {
    /// Whether the filter was read as a numeric range (`1kb:1mb`), not as
    /// regular expressions: pprof says so when it reads one.
    pub fn is_range(&self) -> bool {
        matches!(self.test, TagTest::Range { .. })
    }
}

#[derive(Debug, Clone)]
enum TagTest {
    /// Without a key every regex must match some `key:value`; with one, any
    /// regex matching any of the key's values will do.
    Strings(Vec<Regex>),
    /// Values (scaled to `unit`) in `[min, max]`.
    Range {
        min: Option<f64>,
        max: Option<f64>,
        unit: String,
    },
}

impl TagFilter {
    /// Parses a filter as pprof does; `option` names it in errors.
    pub fn parse(option: &'static str, text: &str) -> Result<TagFilter, SelectionError> {
        let (key, value) = match text.split_once('=') {
            Some((k, v)) => (Some(k.to_string()), v),
            None => (None, text),
        };
        let test = match parse_range(value) {
            Some(range) => range,
            None => {
                let regexes = value
                    .split(',')
                    .map(|r| Selection::regex(option, r).map(|r| r.unwrap_or_else(any)))
                    .collect::<Result<_, _>>()?;
                TagTest::Strings(regexes)
            }
        };
        Ok(TagFilter {
            text: text.to_string(),
            key,
            test,
        })
    }

    /// Whether a sample with these labels matches.
    pub(crate) fn matches(&self, p: &Profile, labels: &[Label], units: &LabelUnits) -> bool {
        let s = |i: i64| p.string(i);
        match &self.test {
            TagTest::Strings(regexes) => {
                let strings = labels.iter().filter(|l| l.str != 0);
                match &self.key {
                    None => regexes.iter().all(|rx| {
                        strings
                            .clone()
                            .any(|l| rx.is_match(&format!("{}:{}", s(l.key), s(l.str))))
                    }),
                    Some(key) => strings
                        .filter(|l| s(l.key) == key)
                        .any(|l| regexes.iter().any(|rx| rx.is_match(s(l.str)))),
                }
            }
            TagTest::Range { min, max, unit } => labels
                .iter()
                .filter(|l| l.str == 0 && !is_empty_label(l))
                .filter(|l| self.key.as_deref().is_none_or(|k| s(l.key) == k))
                .any(|l| {
                    let (v, u) = scale(l.num, units.of(s(l.key)), unit);
                    u == *unit && min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m)
                }),
        }
    }
}

fn any() -> Regex {
    Regex::new("").expect("the empty regex")
}

/// A numeric range as pprof's `parseTagFilterRange` reads it; `None` when
/// the text is not one (then it is a regex).
fn parse_range(text: &str) -> Option<TagTest> {
    let number = Regex::new(r"([+-]?[0-9]+)([[:alpha:]]+)?").expect("valid");
    let found: Vec<(String, i64, String)> = number
        .captures_iter(text)
        .take(2)
        .map(|c| {
            let whole = c[0].to_string();
            let value = c[1].parse().unwrap_or(0);
            let unit = c.get(2).map_or("", |u| u.as_str()).to_string();
            (whole, value, unit)
        })
        .collect();
    let (first, v1, u1) = found.first()?;
    let (low, unit) = scale(*v1, u1, u1);
    let range = |min, max| {
        Some(TagTest::Range {
            min,
            max,
            unit: unit.clone(),
        })
    };
    match &found[..] {
        [_] if text == first => range(Some(low), Some(low)),
        [_] if text == format!("{first}:") => range(Some(low), None),
        [_] if text == format!(":{first}") => range(None, Some(low)),
        [_, (second, v2, u2)] if text == format!("{first}:{second}") => {
            let (high, unit2) = scale(*v2, u2, &unit);
            (unit2 == unit).then_some(())?;
            range(Some(low), Some(high))
        }
        _ => None,
    }
}

/// The unit of each numeric label key (pprof's `NumLabelUnits`): the first
/// unit a label of the key states, else one inferred from the key.
pub(crate) struct LabelUnits(HashMap<String, String>);

impl LabelUnits {
    pub(crate) fn of<'a>(&'a self, key: &'a str) -> &'a str {
        match self.0.get(key) {
            Some(unit) => unit,
            None => match key {
                "alignment" | "request" => "bytes",
                other => other,
            },
        }
    }

    /// Reads every numeric label's unit from the samples' labels (one pass
    /// over them).
    pub(crate) fn read<S: ProfileSamples>(source: &S) -> Self {
        let p = source.profile();
        let mut units = HashMap::new();
        let mut buffer = Sample::new();
        for n in 0..source.sample_count() {
            let s = source.sample_fields(n, Fields::only(&[sample::LABEL]), &mut buffer);
            for l in s.label.iter().filter(|l| l.str == 0 && l.num_unit != 0) {
                units
                    .entry(p.string(l.key).to_string())
                    .or_insert_with(|| p.string(l.num_unit).to_string());
            }
        }
        LabelUnits(units)
    }
}

/// `fn` names as pprof's pruning compares them: a leading `.` dropped, and
/// cut at the first `(` that does not start `(anonymous namespace)` or
/// `operator()`.
pub(crate) fn simplify_function(name: &str) -> &str {
    let name = name.strip_prefix('.').unwrap_or(name);
    let mut from = 0;
    while let Some(found) = name[from..].find(['(', 'o']) {
        let at = from + found;
        let rest = &name[at..];
        if let Some(reserved) = ["(anonymous namespace)", "operator()"]
            .iter()
            .find(|r| rest.starts_with(**r))
        {
            from = at + reserved.len();
        } else if rest.starts_with('(') {
            return &name[..at];
        } else {
            from = at + 1;
        }
    }
    name
}

/// Whether Go's pprof reads `label` as no label at all: neither a string,
/// nor a number, nor a unit (its `postDecode` drops such labels, so
/// neither `-tags`, `-traces` nor tag filters see them).
pub(crate) fn is_empty_label(label: &Label) -> bool {
    label.str == 0 && label.num == 0 && label.num_unit == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_as_pprof_reads_them() {
        let range = |t: &str| match parse_range(t) {
            Some(TagTest::Range { min, max, unit }) => Some((min, max, unit)),
            _ => None,
        };
        assert_eq!(
            range("1kb:1mb"),
            Some((Some(1.0), Some(1024.0), "kB".into()))
        );
        assert_eq!(range("32kb"), Some((Some(32.0), Some(32.0), "kB".into())));
        assert_eq!(range(":64"), Some((None, Some(64.0), String::new())));
        assert_eq!(range("4mb:"), Some((Some(4.0), None, "MB".into())));
        assert_eq!(range("worker"), None);
        assert_eq!(range("1ms:2kb"), None);
    }

    #[test]
    fn pruning_names() {
        assert_eq!(simplify_function(".foo(int)"), "foo");
        assert_eq!(
            simplify_function("(anonymous namespace)::f(x)"),
            "(anonymous namespace)::f"
        );
        assert_eq!(simplify_function("A::operator()(int)"), "A::operator()");
        assert_eq!(simplify_function("main.main"), "main.main");
    }
}
