//! Java's legacy profiles, into the pprof model as Go's
//! `profile/legacy_java_profile.go` reads them: the CPU variant of the
//! gperftools format (header word 3 is 1) and the `--- heapz 1 ---` /
//! `--- contentionz 1 ---` text profiles, each followed by a symbol table
//! (`0xADDRESS function (File.java:LINE)`) that names every location. The
//! addresses only key the symbol table: they are 0 in the result, and no
//! mapping is made.

use std::collections::HashMap;
use std::sync::OnceLock;

use protobuf::MessageField;
use protoprof_model_pprof::perftools::profiles::{Function, Line, Location, Profile};
use regex::Regex;

use crate::legacy::cpu::{
    header_of, pprof_samples, read_samples, Addresses, LegacyError, RawSample, StringsBuilder,
};
use crate::legacy::maps;

fn regexes() -> &'static [Regex; 5] {
    static RE: OnceLock<[Regex; 5]> = OnceLock::new();
    RE.get_or_init(|| {
        let compile = |s: &str| Regex::new(s).expect("valid");
        [
            compile(r"([\w ]+)=([\w ]+)"),
            compile(r" *(\d+) +(\d+) +@ +([ x0-9a-f]*)"),
            compile(r"^\s*0x([[:xdigit:]]+)\s+(.*)\s*$"),
            compile(r"^(.*)\s+\((.+):(-?[[:digit:]]+)\)$"),
            compile(r"^(.*)\s+\((.*)\)$"),
        ]
    })
}

/// What a Java profile's header and samples say.
struct Java {
    sample_types: Vec<(String, String)>,
    period_type: (String, String),
    period: i64,
    duration_nanos: i64,
}

/// The profile, when `bytes` are a Java CPU profile (binary).
pub fn parse_java_cpu(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let (word, period_us, rest) = header_of(bytes, 1)?;
    let period = (period_us as i64).saturating_mul(1000);
    Some(
        read_samples(word, period, rest, false).map(|(samples, addresses, rest)| {
            let java = Java {
                sample_types: vec![
                    ("samples".into(), "count".into()),
                    ("cpu".into(), "nanoseconds".into()),
                ],
                period_type: ("cpu".into(), "nanoseconds".into()),
                period,
                duration_nanos: 0,
            };
            build(&java, samples, &addresses, &String::from_utf8_lossy(rest))
        }),
    )
}

/// The profile, when `bytes` are a Java heapz or contentionz profile.
pub fn parse_java_text(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (first, body) = text.split_once('\n')?;
    let heap = match first.trim() {
        "--- heapz 1 ---" => true,
        "--- contentionz 1 ---" => false,
        _ => return None,
    };
    let lines: Vec<&str> = body.split_inclusive('\n').collect();
    let (java, at) = match header(heap, &lines)? {
        Ok(h) => h,
        Err(e) => return Some(Err(e)),
    };
    Some(
        samples(heap, &java, &lines[at..]).map(|(samples, addresses, rest)| {
            let symbols: String = lines[at + rest..].concat();
            build(&java, samples, &addresses, &symbols)
        }),
    )
}

/// `name = value` attributes up to the first line that is none; `None`
/// when one is not what a Java profile has (then it is no Java profile).
fn header(heap: bool, lines: &[&str]) -> Option<Result<(Java, usize), LegacyError>> {
    let [attribute, ..] = regexes();
    let mut java = Java {
        sample_types: Vec::new(),
        period_type: (String::new(), String::new()),
        period: 0,
        duration_nanos: 0,
    };
    let mut at = 0;
    // Only lines that end in a newline count, as pprof reads them.
    while at < lines.len() && lines[at].ends_with('\n') {
        let line = lines[at].trim();
        if !line.is_empty() {
            let Some(c) = attribute.captures(line) else {
                break;
            };
            let (name, value) = (c[1].trim(), c[2].trim().to_string());
            let number = |v: &str| {
                v.parse::<i64>()
                    .map_err(|_| LegacyError(format!("Java profile: attribute {line:?}")))
            };
            match (heap, name) {
                (_, "format") if value != "java" => return None,
                (_, "format") => {}
                (true, "resolution") => {
                    java.sample_types = vec![
                        ("inuse_objects".into(), "count".into()),
                        ("inuse_space".into(), value),
                    ]
                }
                (false, "resolution") => {
                    java.sample_types = vec![
                        ("contentions".into(), "count".into()),
                        ("delay".into(), value),
                    ]
                }
                (false, "sampling period") => {
                    java.period_type = ("contentions".into(), "count".into());
                    java.period = match number(&value) {
                        Ok(v) => v,
                        Err(e) => return Some(Err(e)),
                    };
                }
                (false, "ms since reset") => match number(&value) {
                    Ok(v) => java.duration_nanos = v.saturating_mul(1_000_000),
                    Err(e) => return Some(Err(e)),
                },
                _ => return None,
            }
        }
        at += 1;
    }
    Some(Ok((java, at)))
}

type Samples = (Vec<RawSample>, Vec<u64>, usize);

/// Sample lines (`VALUE2 VALUE1 @ 0x…`), up to the first line that is none.
fn samples(heap: bool, java: &Java, lines: &[&str]) -> Result<Samples, LegacyError> {
    let [_, sample_re, ..] = regexes();
    let (mut out, mut addresses) = (Vec::new(), Addresses::default());
    let mut at = 0;
    while at < lines.len() && lines[at].ends_with('\n') {
        let line = lines[at].trim();
        if !line.is_empty() {
            let Some(c) = sample_re.captures(line) else {
                break;
            };
            let bad = || LegacyError(format!("Java profile: sample {line:?}"));
            let stack = maps::hex_addresses(&c[3], false)
                .map_err(|_| bad())?
                .into_iter()
                .map(|a| addresses.intern(a))
                .collect();
            let (mut v0, mut v1) = (
                c[2].parse::<i64>().map_err(|_| bad())?,
                c[1].parse::<i64>().map_err(|_| bad())?,
            );
            let mut block_size = None;
            if heap {
                if v0 == 0 {
                    return Err(LegacyError(format!(
                        "Java profile: sample {line:?}: the count is 0"
                    )));
                }
                block_size = Some(v1 / v0);
                (v0, v1) = crate::legacy::heap::scale(v0, v1, 524_288);
            } else if java.period != 0 {
                (v0, v1) = (
                    v0.saturating_mul(java.period),
                    v1.saturating_mul(java.period),
                );
            }
            out.push(RawSample {
                values: vec![v0, v1],
                stack,
                block_size,
            });
        }
        at += 1;
    }
    Ok((out, addresses.list, at))
}

/// The model: every location named from the symbol table (a location the
/// table does not name keeps its address), functions by name, locations
/// and functions numbered by first use, addresses then cleared.
fn build(java: &Java, samples: Vec<RawSample>, addresses: &[u64], symbols: &str) -> Profile {
    let [_, _, location_re, file_line, path] = regexes();
    let mut named: HashMap<u64, (String, String, i64)> = HashMap::new();
    for line in symbols.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some(c) = location_re.captures(line) else {
            continue;
        };
        let Ok(address) = u64::from_str_radix(&c[1], 16) else {
            continue;
        };
        let text = &c[2];
        let (function, file, number) = if let Some(f) = file_line.captures(text) {
            let n = f[3].parse::<i64>().ok().filter(|n| *n > 0).unwrap_or(0);
            (f[1].to_string(), f[2].to_string(), n)
        } else if let Some(f) = path.captures(text) {
            let base = f[2].rsplit('/').next().unwrap_or(&f[2]).to_string();
            (f[1].to_string(), base, 0)
        } else if text.contains("generated stub/JIT") {
            ("STUB".to_string(), String::new(), 0)
        } else {
            (text.to_string(), String::new(), 0)
        };
        named.insert(address, (function, file, number));
    }
    let mut p = Profile::new();
    let mut strings = StringsBuilder::default();
    let mut function_ids: HashMap<String, u64> = HashMap::new();
    let mut location_ids: HashMap<usize, u64> = HashMap::new();
    for s in &samples {
        for &at in &s.stack {
            if location_ids.contains_key(&at) {
                continue;
            }
            let id = p.location.len() as u64 + 1;
            location_ids.insert(at, id);
            let mut location = Location {
                id,
                address: addresses[at],
                ..Default::default()
            };
            if let Some((function, file, number)) = named.get(&addresses[at]) {
                let function_id = *function_ids.entry(function.clone()).or_insert_with(|| {
                    let name = strings.intern(function);
                    p.function.push(Function {
                        id: p.function.len() as u64 + 1,
                        name,
                        system_name: name,
                        filename: strings.intern(file),
                        ..Default::default()
                    });
                    p.function.len() as u64
                });
                location.line = vec![Line {
                    function_id,
                    line: *number,
                    ..Default::default()
                }];
            }
            // Aggregated without addresses, as pprof does for a better merge.
            location.address = 0;
            p.location.push(location);
        }
    }
    p.sample = pprof_samples(&samples, |at| location_ids[&at], &mut strings);
    p.sample_type = java
        .sample_types
        .iter()
        .map(|(t, u)| strings.value_type(t, u))
        .collect();
    p.period_type =
        MessageField::some(strings.value_type(&java.period_type.0, &java.period_type.1));
    p.period = java.period;
    p.duration_nanos = java.duration_nanos;
    p.string_table = strings.table;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_profile_with_symbols_and_broken_ones() {
        let text = "--- heapz 1 ---\nformat = java\nresolution = bytes\n\
                    1 2 @ 0x10 0x20\n\
                    0x10 com.example.leaf (Leaf.java:12)\n0x20 com.example.main (Main.java)\n";
        let p = parse_java_text(text.as_bytes()).unwrap().unwrap();
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.location.len(), 2);
        assert!(p
            .location
            .iter()
            .all(|l| l.address == 0 && l.line.len() == 1));
        assert_eq!(p.location[0].line[0].line, 12);
        assert!(parse_java_text(b"--- heapz 1 ---\nformat = go\n").is_none());
        assert!(parse_java_text(b"--- heapz 1 ---\nformat = java\n1 0 @ 0x10\n").is_some());
        assert!(
            parse_java_text(b"--- heapz 1 ---\nformat = java\n5 0 @ 0x10\n")
                .unwrap()
                .is_err()
        );
    }
}
