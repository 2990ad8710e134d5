//! `go tool pprof -raw`: the profile as pprof's `Profile.String` prints it,
//! with an empty mapping where the profile has none (as pprof's driver
//! adds one), and names as its symbolizer leaves them (`crate::demangle`).
//! Times are printed in the local zone, as Go prints them.

use protoprof_model_meta::{IdIndex, StringTable};
use protoprof_model_pprof::perftools::profiles::{Location, Mapping, Profile, Sample};

/// `p` as `go tool pprof -raw` prints it; with `names_as_given`, its
/// function names as it gives them (pprof's `-symbolize=none`).
pub fn raw_text(p: &Profile, names_as_given: bool) -> String {
    let mut lines = Vec::new();
    for &c in &p.comment {
        lines.push(format!("Comment: {}", p.string(c)));
    }
    if p.doc_url != 0 {
        lines.push(format!("Doc: {}", p.string(p.doc_url)));
    }
    let period_type = p.period_type.as_ref();
    let (pt, pu) = period_type.map_or((0, 0), |t| (t.type_, t.unit));
    lines.push(format!("PeriodType: {} {}", p.string(pt), p.string(pu)));
    lines.push(format!("Period: {}", p.period));
    if p.time_nanos != 0 {
        lines.push(format!("Time: {}", go_time_string(p.time_nanos)));
    }
    if p.duration_nanos != 0 {
        let duration: String = go_duration(p.duration_nanos).chars().take(4).collect();
        lines.push(format!("Duration: {duration}"));
    }
    lines.push("Samples:".into());
    lines.push(sample_types(p));
    lines.extend(p.sample.iter().map(|s| sample_text(p, s)));
    lines.push("Locations".into());
    let refs = Refs::of(p, names_as_given);
    lines.extend(p.location.iter().map(|l| location_text(p, l, &refs)));
    lines.push("Mappings".into());
    if p.mapping.is_empty() {
        let drivers = Mapping {
            id: DRIVERS_MAPPING,
            ..Mapping::new()
        };
        lines.push(mapping_text(p, &drivers));
    }
    lines.extend(p.mapping.iter().map(|m| mapping_text(p, m)));
    lines.join("\n") + "\n"
}

/// The header of the sample lines: `type/unit` each, the default marked.
fn sample_types(p: &Profile) -> String {
    let default = p.string(p.default_sample_type);
    let types: Vec<String> = (p.sample_type.iter())
        .map(|t| {
            let mark = if p.string(t.type_) == default {
                "[dflt]"
            } else {
                ""
            };
            format!("{}/{}{mark}", p.string(t.type_), p.string(t.unit))
        })
        .collect();
    types.join(" ")
}

fn sample_text(p: &Profile, s: &Sample) -> String {
    let mut line: String = s.value.iter().map(|v| format!(" {v:>10}")).collect();
    line.push_str(": ");
    for id in &s.location_id {
        line.push_str(&format!("{id} "));
    }
    const LABEL_INDENT: &str = "                ";
    let (strings, numbers) = labels_of(p, s);
    if !strings.is_empty() {
        line.push_str(&format!("\n{LABEL_INDENT}{}", strings.join(" ")));
    }
    if !numbers.is_empty() {
        line.push_str(&format!("\n{LABEL_INDENT}{}", numbers.join(" ")));
    }
    line
}

/// A sample's string and numeric labels as pprof's parser groups them by
/// key (values in order; units only where a key has one), each sorted.
fn labels_of(p: &Profile, s: &Sample) -> (Vec<String>, Vec<String>) {
    let mut strings: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut numbers: Vec<(&str, Vec<i64>, Vec<&str>)> = Vec::new();
    for l in &s.label {
        let key = p.string(l.key);
        if l.str != 0 {
            match strings.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(p.string(l.str)),
                None => strings.push((key, vec![p.string(l.str)])),
            }
        } else if l.num != 0 || l.num_unit != 0 {
            let at = match numbers.iter().position(|(k, _, _)| *k == key) {
                Some(at) => at,
                None => {
                    numbers.push((key, Vec::new(), Vec::new()));
                    numbers.len() - 1
                }
            };
            let (_, values, units) = &mut numbers[at];
            if l.num_unit != 0 {
                units.resize(values.len(), "");
                units.push(p.string(l.num_unit));
            }
            values.push(l.num);
        }
    }
    let mut strings: Vec<String> = (strings.into_iter())
        .map(|(k, v)| format!("{k}:[{}]", v.join(" ")))
        .collect();
    let mut numbers: Vec<String> = (numbers.into_iter())
        .map(|(k, values, mut units)| {
            if units.is_empty() {
                let values: Vec<String> = values.iter().map(i64::to_string).collect();
                return format!("{k}:[{}]", values.join(" "));
            }
            units.resize(values.len(), "");
            let pairs: Vec<String> = (values.iter().zip(&units))
                .map(|(v, u)| format!("{v} {u}"))
                .collect();
            format!("{k}:[{}]", pairs.join(" "))
        })
        .collect();
    strings.sort();
    numbers.sort();
    (strings, numbers)
}

fn location_text(p: &Profile, l: &Location, refs: &Refs) -> String {
    let mut head = format!("{:>6}: {:#x} ", l.id, l.address);
    if let Some(m) = refs.mapping_of(l) {
        head.push_str(&format!("M={m} "));
    }
    if l.is_folded {
        head.push_str("[F] ");
    }
    if l.line.is_empty() {
        return head;
    }
    let mut out = Vec::new();
    for line in &l.line {
        let text = match refs.functions.get(line.function_id) {
            None => "??".to_string(),
            Some(f) => {
                let f = &p.function[f as usize];
                let name = crate::demangle::reported_name(p, f, refs.names_as_given);
                let system_name = p.string(f.system_name);
                let mut text = format!(
                    "{name} {}:{}:{} s={}",
                    p.string(f.filename),
                    line.line,
                    line.column,
                    f.start_line
                );
                if name != system_name {
                    text.push_str(&format!("({system_name})"));
                }
                text
            }
        };
        out.push(head.clone() + &text);
        // Only the first line names the location.
        head = " ".repeat(13);
    }
    out.join("\n")
}

fn mapping_text(p: &Profile, m: &Mapping) -> String {
    let bits: String = [
        (m.has_functions, "[FN]"),
        (m.has_filenames, "[FL]"),
        (m.has_line_numbers, "[LN]"),
        (m.has_inline_frames, "[IN]"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, b)| *b)
    .collect();
    format!(
        "{}: {:#x}/{:#x}/{:#x} {} {} {bits}",
        m.id,
        m.memory_start,
        m.memory_limit,
        m.file_offset,
        p.string(m.filename),
        p.string(m.build_id)
    )
}

/// The id of the empty mapping pprof's driver adds to a profile that has
/// none, every location in it.
const DRIVERS_MAPPING: u64 = 1;

/// What locations refer to, found by id as pprof's parser finds it (a
/// mapping of id 0 included; the last of a repeated id).
struct Refs {
    functions: IdIndex<u32>,
    mappings: IdIndex<()>,
    /// No mapping in the profile: every location is in the driver's.
    no_mappings: bool,
    names_as_given: bool,
}

impl Refs {
    fn of(p: &Profile, names_as_given: bool) -> Refs {
        Refs {
            functions: IdIndex::positions(p.function.iter().map(|f| f.id)).0,
            mappings: IdIndex::set(p.mapping.iter().map(|m| m.id)),
            no_mappings: p.mapping.is_empty(),
            names_as_given,
        }
    }

    /// The id of `l`'s mapping, where it has one.
    fn mapping_of(&self, l: &Location) -> Option<u64> {
        match self.no_mappings {
            true => Some(DRIVERS_MAPPING),
            false => self.mappings.contains(l.mapping_id).then_some(l.mapping_id),
        }
    }
}

/// Go's `time.Time.String` of `nanos` since the epoch, in the local zone.
fn go_time_string(nanos: i64) -> String {
    let local = crate::local_time::LocalTime::of(nanos.div_euclid(1_000_000_000));
    go_time_string_at(&local, nanos)
}

/// Go's `time.Time.String` of `local`, the civil time of `nanos`.
fn go_time_string_at(local: &crate::local_time::LocalTime, nanos: i64) -> String {
    let fraction = match nanos.rem_euclid(1_000_000_000) {
        0 => String::new(),
        f => format!(".{f:09}").trim_end_matches('0').to_string(),
    };
    format!(
        "{}{fraction} {} {}",
        local.date_and_time(),
        local.numeric_offset(),
        local.zone
    )
}

/// Go's `time.Duration.String`: `1h2m3.5s`, `1.5ms`, `0s`.
fn go_duration(nanos: i64) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n == 0 {
        return "0s".into();
    }
    let fixed = |value: u64, unit: u64, suffix: &str| {
        let whole = value / unit;
        let digits = unit.ilog10() as usize;
        let fraction = format!("{:0digits$}", value % unit);
        let fraction = fraction.trim_end_matches('0');
        match fraction.is_empty() {
            true => format!("{whole}{suffix}"),
            false => format!("{whole}.{fraction}{suffix}"),
        }
    };
    let text = match n {
        n if n < 1_000 => format!("{n}ns"),
        n if n < 1_000_000 => fixed(n, 1_000, "µs"),
        n if n < 1_000_000_000 => fixed(n, 1_000_000, "ms"),
        n => {
            let (hours, minutes) = (n / 3_600_000_000_000, n / 60_000_000_000 % 60);
            let seconds = fixed(n % 60_000_000_000, 1_000_000_000, "s");
            match (hours, minutes) {
                (0, 0) => seconds,
                (0, m) => format!("{m}m{seconds}"),
                (h, m) => format!("{h}h{m}m{seconds}"),
            }
        }
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations_read_as_gos() {
        let at = |nanos: i64| {
            let utc = crate::local_time::LocalTime::utc(nanos.div_euclid(1_000_000_000));
            go_time_string_at(&utc, nanos)
        };
        assert_eq!(
            at(1_654_798_932_062_349_000),
            "2022-06-09 18:22:12.062349 +0000 UTC"
        );
        assert_eq!(at(0), "1970-01-01 00:00:00 +0000 UTC");
        assert_eq!(go_duration(10_123_456_789), "10.123456789s");
        assert_eq!(go_duration(1_500), "1.5µs");
        assert_eq!(go_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(go_duration(61_500_000_000), "1m1.5s");
        assert_eq!(go_duration(-2_000_000), "-2ms");
    }
}
