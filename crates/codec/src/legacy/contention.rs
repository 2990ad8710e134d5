//! Legacy contention profiles in text (`--- contentionz`, Go's `--- mutex:`
//! and `--- contention:`), into the pprof model as Go's
//! `profile/legacy_profile.go` (`parseContention`) reads them: attributes
//! (`cycles/second`, `sampling period`, `ms since reset`) then one sample
//! per line (`CYCLES COUNT @ 0x…`), unsampled by the period and converted
//! from cycles to nanoseconds with the clock rate, every address moved back
//! one byte, the memory map after its sentinel line.

use std::sync::OnceLock;

use protoprof_model_pprof::perftools::profiles::Profile;
use regex::Regex;

use crate::legacy::cpu::{build, owned, Addresses, Kind, LegacyError, RawSample};
use crate::legacy::maps;

/// pprof's `lockRxStr`: the lock profiler's own frames.
const LOCK_FRAMES: &str = "RecordLockProfileData|(base::)?RecordLockProfileData.*|\
(base::)?SubmitMutexProfileData.*|(base::)?SubmitSpinLockProfileData.*|\
(base::Mutex::)?AwaitCommon.*|(base::Mutex::)?Unlock.*|(base::Mutex::)?UnlockSlow.*|\
(base::Mutex::)?ReaderUnlock.*|(base::MutexLock::)?~MutexLock.*|(Mutex::)?AwaitCommon.*|\
(Mutex::)?Unlock.*|(Mutex::)?UnlockSlow.*|(Mutex::)?ReaderUnlock.*|(MutexLock::)?~MutexLock.*|\
(SpinLock::)?Unlock.*|(SpinLock::)?SlowUnlock.*|(SpinLockHolder::)?~SpinLockHolder.*";

fn regexes() -> &'static [Regex; 1] {
    static RE: OnceLock<[Regex; 1]> = OnceLock::new();
    RE.get_or_init(|| [Regex::new(r"(\d+) *(\d+) @([ x0-9a-f]*)").expect("valid")])
}

/// An integer as Go's `strconv.ParseInt(s, 0, 64)` reads it (a `0x`, `0o`,
/// `0b` or `0` prefix picks the base).
fn go_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(h) = lower.strip_prefix("0x") {
        (16, h)
    } else if let Some(o) = lower.strip_prefix("0o") {
        (8, o)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (2, b)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let v = i64::from_str_radix(&body.replace('_', ""), radix).ok()?;
    Some(if negative { -v } else { v })
}

/// The header's attributes.
#[derive(Default)]
struct Attributes {
    cpu_hz: i64,
    period: i64,
    duration_nanos: i64,
}

/// The profile, when `bytes` are a legacy contention profile.
pub fn parse_contention(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines().peekable();
    let first = lines.next()?;
    if !["--- contentionz ", "--- mutex:", "--- contention:"]
        .iter()
        .any(|p| first.starts_with(p))
    {
        return None;
    }
    let mut a = Attributes {
        period: 1,
        ..Default::default()
    };
    // "key = value" lines up to the first sample (or "---").
    while let Some(line) = lines.peek().map(|l| l.trim()) {
        if line.is_empty() || line.starts_with('#') {
            lines.next();
            continue;
        }
        let Some((key, value)) = line.split_once('=').filter(|_| !line.starts_with("---")) else {
            break;
        };
        let value = go_int(value.trim());
        match (key.trim(), value) {
            ("cycles/second", Some(v)) => a.cpu_hz = v,
            ("sampling period", Some(v)) => a.period = v,
            ("ms since reset", Some(v)) => a.duration_nanos = v.saturating_mul(1_000_000),
            ("discarded samples", _) => {}
            _ => return None, // not a contention profile pprof reads
        }
        lines.next();
    }
    Some(samples(a, lines))
}

fn samples<'a>(
    a: Attributes,
    lines: impl Iterator<Item = &'a str>,
) -> Result<Profile, LegacyError> {
    let [sample_re] = regexes();
    let mut addresses = Addresses::default();
    let mut out = Vec::new();
    let mut rest: Vec<&str> = Vec::new();
    let mut lines = lines.into_iter();
    for raw in lines.by_ref() {
        let line = raw.trim();
        if line.starts_with("---") {
            rest.push(line);
            break;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let c = sample_re
            .captures(line)
            .ok_or_else(|| LegacyError(format!("contention profile: not a sample: {line:?}")))?;
        let number = |i: usize| {
            c[i].parse::<i64>()
                .map_err(|_| LegacyError(format!("contention profile: malformed sample {line:?}")))
        };
        let (mut cycles, mut count) = (number(1)?, number(2)?);
        if a.period > 0 {
            if a.cpu_hz > 0 {
                let ghz = a.cpu_hz as f64 / 1e9;
                cycles = (cycles as f64 * a.period as f64 / ghz) as i64;
            }
            count = count.saturating_mul(a.period);
        }
        let stack = maps::hex_addresses(&c[3], true)
            .map_err(|bad| LegacyError(format!("contention profile: address {bad}")))?
            .into_iter()
            .map(|a| addresses.intern(a))
            .collect();
        out.push(RawSample {
            values: vec![count, cycles],
            stack,
            block_size: None,
        });
    }
    rest.extend(lines);
    let kind = Kind {
        sample_types: owned(&[("contentions", "count"), ("delay", "nanoseconds")]),
        period_type: ("contentions".into(), "count".into()),
        period: a.period,
        drop_frames: LOCK_FRAMES.into(),
        duplicate_leaf: false,
    };
    let mut p = build(out, &addresses.list, maps::after_sentinel(rest), &kind);
    p.duration_nanos = a.duration_nanos;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_integers_and_broken_samples() {
        assert_eq!(go_int("0x10"), Some(16));
        assert_eq!(go_int("010"), Some(8));
        assert_eq!(go_int("-42"), Some(-42));
        assert_eq!(go_int("x"), None);
        let p = parse_contention(
            b"--- contentionz 1 ---\ncycles/second = 2000000000\nsampling period = 10\n100 2 @ 0x401001\n",
        )
        .unwrap()
        .unwrap();
        // 2 contentions x period 10; 100 cycles x 10 at 2 GHz = 500 ns.
        assert_eq!(p.sample[0].value, [20, 500]);
        assert!(parse_contention(b"--- mutex:\nnot a sample\n")
            .unwrap()
            .is_err());
        assert!(parse_contention(b"--- mutex:\nformat = java\n").is_none());
    }
}
