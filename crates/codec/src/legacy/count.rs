//! Go's `debug=1` count profiles in text (`goroutine profile: total N`,
//! `threadcreate profile: total N`, then `COUNT @ 0x… 0x…` per stack), into
//! the pprof model as Go's `profile/legacy_profile.go` (`parseGoCount`)
//! reads them: one sample type named by the header, every address moved
//! back one byte onto its call, the memory map (if any) after a `---` line.

use std::sync::OnceLock;

use protoprof_model_pprof::perftools::profiles::Profile;
use regex::Regex;

use crate::legacy::cpu::{build, Addresses, Kind, LegacyError, RawSample, CPU_PROFILER_FRAMES};
use crate::legacy::maps;

fn regexes() -> &'static [Regex; 2] {
    static RE: OnceLock<[Regex; 2]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(r"\A(\S+) profile: total \d+\z").expect("valid"),
            Regex::new(r"\A(\d+) @(( 0x[0-9a-f]+)+)\z").expect("valid"),
        ]
    })
}

/// The profile, when `bytes` are a Go count profile.
pub fn parse_count(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let [start, sample_re] = regexes();
    let mut lines = text.lines().skip_while(|l| maps::is_space_or_comment(l));
    let kind_name = start.captures(lines.next()?)?.get(1)?.as_str().to_string();
    let mut addresses = Addresses::default();
    let mut samples = Vec::new();
    let malformed =
        |line: &str| LegacyError(format!("{kind_name} profile: malformed line {line:?}"));
    let mut rest: Vec<&str> = Vec::new();
    for line in lines.by_ref() {
        if maps::is_space_or_comment(line) {
            continue;
        }
        if line.starts_with("---") {
            rest.push(line);
            break;
        }
        let Some(c) = sample_re.captures(line) else {
            return Some(Err(malformed(line)));
        };
        let Ok(count) = c[1].parse::<i64>() else {
            return Some(Err(malformed(line)));
        };
        let Ok(stack) = maps::hex_addresses(&c[2], true) else {
            return Some(Err(malformed(line)));
        };
        let stack = stack.into_iter().map(|a| addresses.intern(a)).collect();
        samples.push(RawSample {
            values: vec![count],
            stack,
            block_size: None,
        });
    }
    rest.extend(lines);
    let kind = Kind {
        sample_types: vec![(kind_name.clone(), "count".into())],
        period_type: (kind_name, "count".into()),
        period: 1,
        drop_frames: CPU_PROFILER_FRAMES.into(),
        duplicate_leaf: false,
    };
    Some(Ok(build(
        samples,
        &addresses.list,
        maps::after_sentinel(rest),
        &kind,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_broken_lines() {
        let p = parse_count(
            b"# comment\ngoroutine profile: total 3\n2 @ 0x401001 0x402002\n1 @ 0x401001\n",
        )
        .unwrap()
        .unwrap();
        assert_eq!(p.sample.len(), 2);
        assert_eq!(p.sample[0].value, [2]);
        assert_eq!(p.location[0].address, 0x401000);
        assert!(parse_count(b"goroutine profile: total 1\nnonsense\n")
            .unwrap()
            .is_err());
        assert!(
            parse_count(b"goroutine profile: total 1\n1 @ 0xfffffffffffffffffff\n")
                .unwrap()
                .is_err()
        );
        assert!(parse_count(b"heap profile: 1: 1 [1: 1] @ heap/2\n").is_none());
    }
}
