//! `top` as `go tool pprof -top` prints it: nodes below the node fraction
//! dropped, the node count applied, values scaled to one unit chosen as
//! pprof chooses it, and the header lines pprof writes (its
//! `internal/report`: `newTrimmedGraph`, `selectOutputUnit`,
//! `ProfileLabels`, `reportLabels`, `printText`).

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::selection::Selection;
use crate::top::{mark_rows, totals_selected, FunctionTotals, Order};
use crate::units::scale;

/// What a top report shows.
#[derive(Debug, Clone)]
pub struct TopOptions {
    /// Row order.
    pub order: Order,
    /// At most this many rows (0: all), pprof's `-nodecount`.
    pub node_count: usize,
    /// Rows whose cum is below this share of the shown total are dropped,
    /// pprof's `-nodefraction` (default 0.005).
    pub node_fraction: f64,
    /// The unit values are printed in: `minimum` (pprof's default: one
    /// unit chosen for the report), `auto` (each value its own), or a unit
    /// such as `ms`, `MB` or the sample unit itself for exact integers.
    pub unit: String,
}

impl Default for TopOptions {
    fn default() -> Self {
        TopOptions {
            order: Order::Flat,
            node_count: 0,
            node_fraction: 0.005,
            unit: "minimum".into(),
        }
    }
}

/// A top report: rows and what its header says.
#[derive(Debug, Clone)]
pub struct TopReport {
    /// The sample type's name and unit.
    pub sample_type: (String, String),
    /// The rows shown, in order.
    pub rows: Vec<FunctionTotals>,
    /// Every sample's value (percentages are of this).
    pub total: i64,
    /// The flat values of every node before any was dropped, summed
    /// (pprof's graph total: node and edge fractions are shares of it).
    pub graph_total: i64,
    /// Rows dropped below the node fraction, and the cut value.
    pub dropped: (usize, i64),
    /// Rows before the node count was applied.
    pub before_count: usize,
    /// The unit values are printed in (see [`TopOptions::unit`]).
    pub output_unit: String,
    /// The header leaves out the profile's labels (see
    /// [`Selection::compact_labels`]).
    pub compact_labels: bool,
    /// What shown values are multiplied by (see
    /// [`Selection::value_ratio`]).
    pub ratio: Option<f64>,
}

/// The top report of sample type `index` of the samples `selection` keeps.
pub fn top_report<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    options: &TopOptions,
) -> TopReport {
    let p = source.profile();
    let (mut rows, total) = totals_selected(source, index, options.order, selection);
    if selection.drop_negative {
        rows.retain(|r| !is_negative(r));
    }
    // pprof's graph total sums the flat values as summed, before `--mean`
    // divides them.
    let shown_total: i64 = rows
        .iter()
        .map(|r| r.flat_undivided)
        .fold(0, i64::saturating_add);
    let cutoff = (shown_total as f64 * options.node_fraction).abs() as i64;
    let before = rows.len();
    // pprof compares the undivided cum with the cutoff, even with `-mean`.
    rows.retain(|r| r.cum_undivided.unsigned_abs() >= cutoff.unsigned_abs());
    let dropped = (
        before - rows.len(),
        (total as f64 * options.node_fraction).abs() as i64,
    );
    let before_count = rows.len();
    if options.node_count > 0 {
        rows.truncate(options.node_count);
    }
    mark_rows(source, index, selection, &mut rows);
    let t = &p.sample_type[index];
    let sample_unit = p.string(t.unit).to_string();
    let ratio = selection.value_ratio();
    let output_unit = output_unit(&rows, total, &sample_unit, (&options.unit, ratio));
    TopReport {
        sample_type: (mean_prefix(selection) + p.string(t.type_), sample_unit),
        rows,
        total,
        graph_total: shown_total,
        dropped,
        before_count,
        output_unit,
        compact_labels: selection.compact_labels,
        ratio,
    }
}

/// pprof's `isNegative` (`-drop_negative`): a negative flat value, or none
/// and a negative cum, as summed (before `--mean` divides).
fn is_negative(row: &FunctionTotals) -> bool {
    row.flat_undivided < 0 || (row.flat_undivided == 0 && row.cum_undivided < 0)
}

/// `v` as pprof shows it with a ratio: multiplied and truncated toward
/// zero (Go's `int64(float64(v) * r)`).
pub fn ratio_scaled(v: i64, ratio: Option<f64>) -> i64 {
    match ratio {
        Some(r) => (v as f64 * r) as i64,
        None => v,
    }
}

/// The report pprof writes its labels from (`Total samples`, the tags'
/// totals): the whole profile (the kept samples with relative
/// percentages), values scaled each on its own.
pub fn label_report<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
) -> TopReport {
    let options = TopOptions {
        unit: "minimum".into(),
        ..Default::default()
    };
    let whole = match selection.relative_percentages {
        true => selection.clone(),
        false => Selection {
            mean: selection.mean,
            divide_by: selection.divide_by,
            ..Selection::default()
        },
    };
    let mut report = top_report(source, index, &whole, &options);
    report.output_unit = "minimum".into();
    report
}

/// `mean_` before the sample type's name with `--mean`, as pprof names it.
pub(crate) fn mean_prefix(selection: &Selection) -> String {
    match selection.mean {
        true => "mean_".into(),
        false => String::new(),
    }
}

/// pprof's `selectOutputUnit`: for `minimum`, the unit of the smallest
/// nonzero value shown, unless the total needs a larger one and the
/// smallest is under a hundredth of it; both multiplied by the ratio first.
pub(crate) fn output_unit(
    rows: &[FunctionTotals],
    total: i64,
    sample_unit: &str,
    (asked, ratio): (&str, Option<f64>),
) -> String {
    if asked != "minimum" || rows.is_empty() {
        return asked.to_string();
    }
    let shown = rows.iter().map(|r| match r.flat {
        0 => r.cum,
        flat => flat,
    });
    minimum_unit(shown, total, (sample_unit, ratio))
}

/// pprof's `selectOutputUnit` for `minimum` over the `shown` values: the
/// unit of the smallest nonzero one, unless the total needs a larger one
/// and the smallest is under a hundredth of it. Both are multiplied by
/// `ratio` first (pprof's `-divide_by`).
pub fn minimum_unit(
    shown: impl Iterator<Item = i64>,
    total: i64,
    (sample_unit, ratio): (&str, Option<f64>),
) -> String {
    let smallest = shown
        .map(i64::unsigned_abs)
        .filter(|v| *v > 0)
        .min()
        .map_or(total, |v| v as i64);
    let (smallest, total) = (ratio_scaled(smallest, ratio), ratio_scaled(total, ratio));
    let unit_of = |v: i64| scale(v, sample_unit, "minimum").1;
    let (min_unit, max_unit) = (unit_of(smallest), unit_of(total));
    let unit = match min_unit != max_unit && smallest.saturating_mul(100) < total {
        true => unit_of(smallest.saturating_mul(100)),
        false => min_unit,
    };
    match unit.is_empty() {
        true => sample_unit.to_string(),
        false => unit,
    }
}

impl TopReport {
    /// A value as pprof prints it: scaled to the report's unit, two
    /// decimals with `.00` dropped.
    pub fn format_value(&self, v: i64) -> String {
        let v = ratio_scaled(v, self.ratio);
        scaled_label(v, &self.sample_type.1, &self.output_unit)
    }

    /// The lines before the table: pprof's profile labels (see
    /// [`profile_labels`]), active filters, what is shown and dropped.
    pub fn header(&self, p: &Profile, filters: &[String]) -> Vec<String> {
        let mut lines = match self.compact_labels {
            true => Vec::new(),
            false => profile_labels(p, self),
        };
        if !filters.is_empty() {
            lines.push("Active filters:".into());
            lines.extend(filters.iter().map(|f| format!("   {}", cut(f, 80))));
        }
        let shown: i64 = self
            .rows
            .iter()
            .map(|r| r.flat)
            .fold(0, i64::saturating_add);
        lines.push(format!(
            "Showing nodes accounting for {}, {} of {} total",
            self.format_value(shown),
            percentage(shown, self.total).trim(),
            self.format_value(self.total)
        ));
        if self.total != 0 {
            if self.dropped.0 > 0 {
                let nodes = if self.dropped.0 > 1 { "nodes" } else { "node" };
                lines.push(format!(
                    "Dropped {} {nodes} (cum <= {})",
                    self.dropped.0,
                    self.format_value(self.dropped.1)
                ));
            }
            let shown_rows = self.rows.len();
            if shown_rows > 0 && shown_rows < self.before_count {
                lines.push(format!(
                    "Showing top {shown_rows} nodes out of {}",
                    self.before_count
                ));
            }
        }
        lines
    }

    /// The table as `go tool pprof -top` prints it, header line included.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:>10} {:>5}% {:>5}% {:>10} {:>5}%\n",
            "flat", "flat", "sum", "cum", "cum"
        );
        let mut sum = 0i64;
        for r in &self.rows {
            sum = sum.saturating_add(r.flat);
            let inline = match r.inline.label() {
                "" => String::new(),
                label => format!(" {label}"),
            };
            out.push_str(&format!(
                "{:>10} {} {} {:>10} {}  {}{inline}\n",
                self.format_value(r.flat),
                percentage(r.flat, self.total),
                percentage(sum, self.total),
                self.format_value(r.cum),
                percentage(r.cum, self.total),
                r.function
            ));
        }
        out
    }
}

/// pprof's `ProfileLabels`: the first mapping's file and build id,
/// comments, type, time (UTC) and duration with the total's share of it.
pub fn profile_labels(p: &Profile, report: &TopReport) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(m) = p.mapping.first() {
        let file = p.string(m.filename);
        if !file.is_empty() {
            lines.push(format!("File: {}", file.rsplit('/').next().unwrap_or(file)));
        }
        let build_id = p.string(m.build_id);
        if !build_id.is_empty() {
            lines.push(format!("Build ID: {build_id}"));
        }
    }
    for &c in &p.comment {
        let c = p.string(c);
        if !c.starts_with('#') {
            lines.push(c.to_string());
        }
    }
    if !report.sample_type.0.is_empty() {
        lines.push(format!("Type: {}", report.sample_type.0));
    }
    if p.time_nanos != 0 {
        lines.push(format!("Time: {}", go_time(p.time_nanos)));
    }
    if p.duration_nanos != 0 {
        let duration = scaled_label(p.duration_nanos, "nanoseconds", "auto");
        let (nanos, unit) = scale(report.total, &report.sample_type.1, "nanoseconds");
        let ratio = match unit == "ns" && nanos != 0.0 {
            true => format!("({})", percentage(nanos as i64, p.duration_nanos)),
            false => String::new(),
        };
        lines.push(format!(
            "Duration: {duration}, Total samples = {} {ratio}",
            report.format_value(report.total)
        ));
    }
    lines
}

/// pprof's `ScaledLabel`.
pub fn scaled_label(v: i64, from: &str, to: &str) -> String {
    let (value, unit) = scale(v, from, to);
    let text = format!("{value:.2}");
    let text = text.strip_suffix(".00").unwrap_or(&text);
    match text {
        "0" | "-0" => "0".into(),
        text => format!("{text}{unit}"),
    }
}

/// pprof's `Percentage`: `  100%`, `23.20%`, ` 0.31%` (two significant
/// digits below one percent).
pub fn percentage(value: i64, total: i64) -> String {
    let ratio = match total {
        0 => 0.0,
        t => (value as f64 / t as f64).abs() * 100.0,
    };
    if (99.95..=100.05).contains(&ratio) {
        "  100%".into()
    } else if ratio >= 1.0 {
        format!("{ratio:5.2}%")
    } else {
        format!("{:>5}%", go_g2(ratio))
    }
}

/// Go's `%.2g`: two significant digits, exponent form for tiny values.
fn go_g2(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let exponent = x.abs().log10().floor() as i32;
    if !(-4..2).contains(&exponent) {
        let text = format!("{x:.1e}");
        // Rust writes 1.5e-5; Go writes 1.5e-05.
        return match text.split_once('e') {
            Some((m, e)) => {
                let m = m.strip_suffix(".0").unwrap_or(m);
                let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
                format!("{m}e{sign}{digits:0>2}")
            }
            None => text,
        };
    }
    let decimals = (1 - exponent).max(0) as usize;
    let text = format!("{x:.decimals$}");
    // %g drops trailing zeros.
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A time as pprof prints it (Go's `2006-01-02 15:04:05 MST` layout), in
/// UTC.
fn go_time(nanos: i64) -> String {
    let local = crate::local_time::LocalTime::of(nanos.div_euclid(1_000_000_000));
    format!("{} {}", local.date_and_time(), local.zone)
}

pub use protoprof_model_meta::dates::civil_from_days;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_go() {
        assert_eq!(percentage(1, 1), "  100%");
        assert_eq!(percentage(232, 1000), "23.20%");
        assert_eq!(percentage(31, 10000), " 0.31%");
        assert_eq!(percentage(5, 100000), "0.005%");
        assert_eq!(percentage(0, 10), "    0%");
        assert_eq!(go_g2(0.000015), "1.5e-05");
        assert_eq!(scaled_label(740_000_000, "nanoseconds", "s"), "0.74s");
        assert_eq!(scaled_label(3_190_000_000, "nanoseconds", "s"), "3.19s");
        assert_eq!(scaled_label(524_800, "bytes", "kB"), "512.50kB");
        assert_eq!(scaled_label(0, "bytes", "kB"), "0");
        assert_eq!(scaled_label(319, "count", "count"), "319");
    }
}
