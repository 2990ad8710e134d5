//! Analyses of pprof profiles: what `go tool pprof` reports.
//!
//! - [`top`]: flat and cumulative value per function, as `-top` does: flat
//!   goes to the first line of a sample's leaf location (its innermost,
//!   possibly inlined, function); a function appearing several times in one
//!   stack (inlined or recursive) counts once in cum; samples whose value is
//!   0 are left out, so functions only they reach do not appear.
//! - [`folded`]: collapsed stacks (`root;...;leaf value`) for flame graphs.
//! - [`diff`]: per-function differences between two profiles.
//!
//! Sums saturate, so extreme values cannot overflow.

use std::collections::HashMap;

use protoprof_model_meta::Fields;
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;
use serde::Serialize;

/// Which sample value to use: a sample type name, or its position.
/// `None` picks `default_sample_type`, or the last sample type (pprof's rule).
pub fn sample_index(p: &Profile, selector: Option<&str>) -> Result<usize, String> {
    let names: Vec<&str> = p.sample_type.iter().map(|t| text(p, t.type_)).collect();
    if names.is_empty() {
        return Err("the profile has no sample types".into());
    }
    match selector {
        None => {
            let default = text(p, p.default_sample_type);
            Ok(names
                .iter()
                .position(|n| !default.is_empty() && *n == default)
                .unwrap_or(names.len() - 1))
        }
        Some(s) => match s.parse::<usize>() {
            Ok(i) if i < names.len() => Ok(i),
            Ok(i) => Err(format!(
                "sample index {i} out of range: the profile has {} sample types",
                names.len()
            )),
            Err(_) => names.iter().position(|n| *n == s).ok_or_else(|| {
                format!("no sample type {s:?}; the profile has {}", names.join(", "))
            }),
        },
    }
}

pub fn text(p: &Profile, i: i64) -> &str {
    usize::try_from(i)
        .ok()
        .and_then(|i| p.string_table.get(i))
        .map_or("", String::as_str)
}

/// Function names interned once, and each location's frames as name ids,
/// innermost (leaf) first; a location without lines is named by its address.
struct Frames {
    names: Vec<String>,
    /// Location id -> its frames.
    by_location: ByLocation,
}

/// Frames by location id, in one shared array (no pointer to follow per
/// stack entry): a vector indexed by id when ids are dense (the usual
/// 1..=n), a hash map otherwise.
struct ByLocation {
    frames: Vec<u32>,
    index: LocationIndex,
}

enum LocationIndex {
    /// `frames[start..end]` by id; `start == u32::MAX`: no such location.
    Dense(Vec<(u32, u32)>),
    Sparse(HashMap<u64, (u32, u32)>),
}

impl ByLocation {
    fn new(entries: Vec<(u64, Vec<u32>)>) -> ByLocation {
        let mut frames = Vec::new();
        let mut spans = Vec::with_capacity(entries.len());
        for (id, names) in entries {
            let start = frames.len() as u32;
            frames.extend(names);
            spans.push((id, (start, frames.len() as u32)));
        }
        let max = spans.iter().map(|(id, _)| *id).max().unwrap_or(0);
        // As a map built from the list would, the last entry of an id wins.
        let index = if max > 4 * spans.len() as u64 + 1024 {
            LocationIndex::Sparse(spans.into_iter().collect())
        } else {
            let mut dense = vec![(u32::MAX, 0); max as usize + 1];
            for (id, span) in spans {
                dense[id as usize] = span;
            }
            LocationIndex::Dense(dense)
        };
        ByLocation { frames, index }
    }

    #[inline]
    fn get(&self, id: &u64) -> Option<&[u32]> {
        let (start, end) = match &self.index {
            LocationIndex::Dense(dense) => usize::try_from(*id)
                .ok()
                .and_then(|i| dense.get(i))
                .copied()
                .filter(|(start, _)| *start != u32::MAX)?,
            LocationIndex::Sparse(map) => *map.get(id)?,
        };
        Some(&self.frames[start as usize..end as usize])
    }
}

impl Frames {
    fn new(p: &Profile) -> Frames {
        let mut names: Vec<String> = Vec::new();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut intern = |name: String| -> u32 {
            *ids.entry(name.clone()).or_insert_with(|| {
                names.push(name);
                names.len() as u32 - 1
            })
        };
        let function_names: HashMap<u64, &str> =
            p.function.iter().map(|f| (f.id, text(p, f.name))).collect();
        let by_location = p
            .location
            .iter()
            .map(|l| {
                let mut frames: Vec<u32> = l
                    .line
                    .iter()
                    .map(|line| {
                        intern(
                            function_names
                                .get(&line.function_id)
                                .copied()
                                .unwrap_or("")
                                .to_string(),
                        )
                    })
                    .collect();
                if frames.is_empty() {
                    frames.push(intern(format!("{:#x}", l.address)));
                }
                (l.id, frames)
            })
            .collect();
        Frames {
            names,
            by_location: ByLocation::new(by_location),
        }
    }
}

/// One function's totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionTotals {
    pub function: String,
    pub flat: i64,
    pub cum: i64,
}

/// How [`top`] orders its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Flat,
    Cum,
}

/// The part of a sample the analyses read: values and stack.
const VALUES_AND_STACK: Fields = Fields::only(&[1, 2]);

/// Flat and cumulative value of `index` per function, largest first (by
/// flat or cum, then the other, then name), and the profile's total.
/// `source` is the decoded model or the codec's `PprofView`.
pub fn top<S: ProfileSamples>(
    source: &S,
    index: usize,
    order: Order,
) -> (Vec<FunctionTotals>, i64) {
    let frames = Frames::new(source.profile());
    let mut flat = vec![0i128; frames.names.len()];
    let mut cum = vec![0i128; frames.names.len()];
    // The last sample each function was counted in, for "once per sample".
    let mut counted_in = vec![usize::MAX; frames.names.len()];
    let mut reached = vec![false; frames.names.len()];
    let mut total: i128 = 0;
    let mut buffer = Sample::new();
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, VALUES_AND_STACK, &mut buffer);
        // Samples with no value here add nothing, and pprof leaves them
        // out: their functions would show as all-zero rows.
        let Some(&v) = s.value.get(index).filter(|v| **v != 0) else {
            continue;
        };
        let v = i128::from(v);
        total += v;
        for (i, id) in s.location_id.iter().enumerate() {
            let Some(names) = frames.by_location.get(id) else {
                continue;
            };
            for (j, &name) in names.iter().enumerate() {
                let name = name as usize;
                reached[name] = true;
                if i == 0 && j == 0 {
                    flat[name] += v;
                }
                if counted_in[name] != n {
                    counted_in[name] = n;
                    cum[name] += v;
                }
            }
        }
    }
    let mut rows: Vec<FunctionTotals> = (0..frames.names.len())
        .filter(|&i| reached[i])
        .map(|i| FunctionTotals {
            function: frames.names[i].clone(),
            flat: saturate(flat[i]),
            cum: saturate(cum[i]),
        })
        .collect();
    rows.sort_by(|a, b| {
        let key = |r: &FunctionTotals| match order {
            Order::Flat => (r.flat, r.cum),
            Order::Cum => (r.cum, r.flat),
        };
        key(b)
            .cmp(&key(a))
            .then_with(|| a.function.cmp(&b.function))
    });
    (rows, saturate(total))
}

fn saturate(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// Collapsed stacks, root first (`main;work;leaf`), with their summed
/// value; stacks whose value is 0 are left out. Sorted by stack.
pub fn folded<S: ProfileSamples>(source: &S, index: usize) -> Vec<(String, i64)> {
    let frames = Frames::new(source.profile());
    let mut stacks: HashMap<Vec<u32>, i128> = HashMap::new();
    let (mut stack, mut buffer) = (Vec::new(), Sample::new());
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, VALUES_AND_STACK, &mut buffer);
        let Some(&v) = s.value.get(index) else {
            continue;
        };
        stack.clear();
        for id in s.location_id.iter().rev() {
            if let Some(names) = frames.by_location.get(id) {
                stack.extend(names.iter().rev());
            }
        }
        match stacks.get_mut(&stack) {
            Some(total) => *total += i128::from(v),
            None => {
                stacks.insert(stack.clone(), i128::from(v));
            }
        }
    }
    // ';' separates frames and ' ' the value: keep names from breaking that.
    let names: Vec<String> = frames.names.iter().map(|n| n.replace(';', ":")).collect();
    let mut out: Vec<(String, i64)> = stacks
        .into_iter()
        .filter(|(_, v)| *v != 0)
        .map(|(stack, v)| {
            (
                stack
                    .iter()
                    .map(|&i| names[i as usize].as_str())
                    .collect::<Vec<_>>()
                    .join(";"),
                saturate(v),
            )
        })
        .collect();
    out.sort();
    out
}

/// One function's totals in two profiles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionDiff {
    pub function: String,
    pub flat_base: i64,
    pub flat: i64,
    pub cum_base: i64,
    pub cum: i64,
}

impl FunctionDiff {
    pub fn flat_delta(&self) -> i64 {
        self.flat.saturating_sub(self.flat_base)
    }
    pub fn cum_delta(&self) -> i64 {
        self.cum.saturating_sub(self.cum_base)
    }
}

/// Per-function differences of `new` against `base` (like pprof's
/// `-diff_base`), largest change of flat first, then of cum. Functions whose
/// values did not change are left out.
pub fn diff(
    base: &Profile,
    base_index: usize,
    new: &Profile,
    new_index: usize,
) -> Vec<FunctionDiff> {
    let (before, _) = top(base, base_index, Order::Flat);
    let (after, _) = top(new, new_index, Order::Flat);
    let mut rows: HashMap<String, FunctionDiff> = HashMap::new();
    for r in before {
        rows.insert(
            r.function.clone(),
            FunctionDiff {
                function: r.function,
                flat_base: r.flat,
                flat: 0,
                cum_base: r.cum,
                cum: 0,
            },
        );
    }
    for r in after {
        let row = rows.entry(r.function.clone()).or_insert(FunctionDiff {
            function: r.function,
            flat_base: 0,
            flat: 0,
            cum_base: 0,
            cum: 0,
        });
        row.flat = r.flat;
        row.cum = r.cum;
    }
    let mut out: Vec<FunctionDiff> = rows
        .into_values()
        .filter(|r| r.flat_delta() != 0 || r.cum_delta() != 0)
        .collect();
    out.sort_by(|a, b| {
        (b.flat_delta().unsigned_abs(), b.cum_delta().unsigned_abs())
            .cmp(&(a.flat_delta().unsigned_abs(), a.cum_delta().unsigned_abs()))
            .then_with(|| a.function.cmp(&b.function))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoprof_model_pprof::perftools::profiles::{Function, Line, Location, Sample, ValueType};

    /// main -> work -> leaf, with work inlining helper into its location,
    /// and a recursive sample main -> work -> work.
    fn profile() -> Profile {
        let strings = ["", "samples", "count", "main", "work", "leaf", "helper"];
        let function = (1..=4)
            .map(|i| Function {
                id: i,
                name: i as i64 + 2,
                ..Default::default()
            })
            .collect();
        let loc = |id: u64, functions: &[u64]| Location {
            id,
            line: functions
                .iter()
                .map(|&f| Line {
                    function_id: f,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        Profile {
            sample_type: vec![ValueType {
                type_: 1,
                unit: 2,
                ..Default::default()
            }],
            sample: vec![
                Sample {
                    location_id: vec![3, 2, 1],
                    value: vec![10],
                    ..Default::default()
                },
                Sample {
                    location_id: vec![2, 2, 1],
                    value: vec![5],
                    ..Default::default()
                },
            ],
            location: vec![loc(1, &[1]), loc(2, &[4, 2]), loc(3, &[3])],
            function,
            string_table: strings.map(String::from).to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn flat_goes_to_the_leaf_and_cum_counts_once() {
        let (rows, total) = top(&profile(), 0, Order::Flat);
        assert_eq!(total, 15);
        let get = |name: &str| rows.iter().find(|r| r.function == name).unwrap().clone();
        assert_eq!((get("leaf").flat, get("leaf").cum), (10, 10));
        // The second sample's leaf location inlines helper into work: flat to helper.
        assert_eq!((get("helper").flat, get("helper").cum), (5, 15));
        assert_eq!((get("work").flat, get("work").cum), (0, 15));
        assert_eq!((get("main").flat, get("main").cum), (0, 15));
        assert_eq!(rows[0].function, "leaf");
    }

    #[test]
    fn folded_stacks_are_root_first_and_inline_expanded() {
        let stacks = folded(&profile(), 0);
        assert_eq!(
            stacks,
            vec![
                ("main;work;helper;leaf".to_string(), 10),
                ("main;work;helper;work;helper".to_string(), 5)
            ]
        );
    }

    #[test]
    fn sample_index_by_name_number_and_default() {
        let mut p = profile();
        assert_eq!(sample_index(&p, None), Ok(0));
        assert_eq!(sample_index(&p, Some("samples")), Ok(0));
        assert!(sample_index(&p, Some("cpu"))
            .unwrap_err()
            .contains("no sample type \"cpu\""));
        assert!(sample_index(&p, Some("3")).is_err());
        p.sample_type.clear();
        assert!(sample_index(&p, None).is_err());
    }

    #[test]
    fn diff_orders_by_change() {
        let base = profile();
        let mut new = profile();
        new.sample[0].value[0] = 30;
        let rows = diff(&base, 0, &new, 0);
        assert_eq!(rows[0].function, "leaf");
        assert_eq!(rows[0].flat_delta(), 20);
        assert!(rows.iter().all(|r| r.function != "nothing"));
    }

    #[test]
    fn extreme_values_saturate() {
        let mut p = profile();
        p.sample[0].value[0] = i64::MAX;
        p.sample[1].value[0] = i64::MAX;
        let (_, total) = top(&p, 0, Order::Flat);
        assert_eq!(total, i64::MAX);
    }
}
