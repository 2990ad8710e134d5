//! Flat and cumulative value per function, as `go tool pprof -top`.

use protoprof_model_pprof::perftools::profiles::Sample;
use protoprof_model_pprof::samples::ProfileSamples;
use serde::Serialize;

use crate::saturate;
use crate::selection::Selection;

/// One function's totals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionTotals {
    /// Function name (or the address of a location without lines).
    pub function: String,
    /// Value of the samples whose leaf frame is this function.
    pub flat: i64,
    /// Value of the samples whose stack holds this function.
    pub cum: i64,
}

/// How [`top`] orders its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By flat value, then cum.
    Flat,
    /// By cum value, then flat.
    Cum,
}

/// Flat and cumulative value of `index` per function, largest first (by
/// flat or cum, then the other, then name), and the profile's total.
/// `source` is the decoded model or the codec's `PprofView`.
pub fn top<S: ProfileSamples>(
    source: &S,
    index: usize,
    order: Order,
) -> (Vec<FunctionTotals>, i64) {
    top_selected(source, index, order, &Selection::default())
}

/// [`top`] of the samples `selection` keeps, their frames named at its
/// granularity. The total is that of every sample, as pprof computes its
/// percentages against the whole profile.
pub fn top_selected<S: ProfileSamples>(
    source: &S,
    index: usize,
    order: Order,
    selection: &Selection,
) -> (Vec<FunctionTotals>, i64) {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let fields = crate::sample_fields(selection);
    let mut sums = Sums::new(frames.names.len());
    let (mut buffer, mut nodes) = (Sample::new(), Vec::new());
    let mut total = 0i128;
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, fields, &mut buffer);
        // Samples with no value here add nothing, and pprof leaves them
        // out: their functions would show as all-zero rows.
        let Some(&v) = s.value.get(index).filter(|v| **v != 0) else {
            continue;
        };
        total += i128::from(v);
        if frames.select(p, &s.location_id, &s.label, &mut nodes) {
            sums.add_sample(n, i128::from(v), &nodes);
        }
    }
    let mut rows = sums.rows(&frames.names);
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

/// Running totals per interned name.
struct Sums {
    flat: Vec<i128>,
    cum: Vec<i128>,
    /// The last sample each function was counted in, for "once per sample".
    counted_in: Vec<usize>,
    reached: Vec<bool>,
}

impl Sums {
    fn new(names: usize) -> Sums {
        Sums {
            flat: vec![0; names],
            cum: vec![0; names],
            counted_in: vec![usize::MAX; names],
            reached: vec![false; names],
        }
    }

    /// One sample's value: flat to its leaf node, cum once to each node.
    #[inline]
    fn add_sample(&mut self, n: usize, v: i128, nodes: &[u32]) {
        for (i, &name) in nodes.iter().enumerate() {
            let name = name as usize;
            self.reached[name] = true;
            if i == 0 {
                self.flat[name] += v;
            }
            if self.counted_in[name] != n {
                self.counted_in[name] = n;
                self.cum[name] += v;
            }
        }
    }

    fn rows(&self, names: &[String]) -> Vec<FunctionTotals> {
        (0..names.len())
            .filter(|&i| self.reached[i])
            .map(|i| FunctionTotals {
                function: names[i].clone(),
                flat: saturate(self.flat[i]),
                cum: saturate(self.cum[i]),
            })
            .collect()
    }
}
