//! Legacy thread profiles (`--- threadz N ---`, then `--- Thread ID (name:
//! NAME/TID) stack: ---` sections of addresses), into the pprof model as
//! Go's `profile/legacy_profile.go` (`parseThread`) reads them: one sample
//! per thread (a `[same as previous thread]` adds one to the last), every
//! address but the leaf's moved back one byte, the memory map after its
//! sentinel line, a duplicated leaf dropped.

use std::sync::OnceLock;

use protoprof_model_pprof::perftools::profiles::Profile;
use regex::Regex;

use crate::legacy::cpu::{
    build, owned, Addresses, Kind, LegacyError, RawSample, CPU_PROFILER_FRAMES,
};
use crate::legacy::maps;

fn regexes() -> &'static [Regex; 2] {
    static RE: OnceLock<[Regex; 2]> = OnceLock::new();
    RE.get_or_init(|| {
        [
            Regex::new(r"--- threadz \d+ ---").expect("valid"),
            Regex::new(r"--- Thread ([[:xdigit:]]+) \(name: (.*)/(\d+)\) stack: ---")
                .expect("valid"),
        ]
    })
}

/// The profile, when `bytes` are a legacy thread profile.
pub fn parse_thread(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let [threadz, thread] = regexes();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = lines.iter().position(|l| !maps::is_space_or_comment(l))?;
    if threadz.is_match(lines[i]) {
        // Over the header's comments to the first stack.
        while i + 1 < lines.len() {
            i += 1;
            if maps::is_sentinel(lines[i]) || lines[i].starts_with('-') {
                break;
            }
        }
    } else if !thread.is_match(lines[i]) {
        return None;
    }
    Some(threads(&lines, i))
}

/// The threads from line `i` on, then the memory map.
fn threads(lines: &[&str], mut i: usize) -> Result<Profile, LegacyError> {
    let [_, thread] = regexes();
    let mut addresses = Addresses::default();
    let mut samples: Vec<RawSample> = Vec::new();
    let mut line = lines[i].to_string();
    while !maps::is_sentinel(&line) {
        if line.starts_with("---- no stack trace for") {
            break;
        }
        if !thread.is_match(&line) {
            return Err(LegacyError(format!(
                "thread profile: expected a thread, found {line:?}"
            )));
        }
        let (next, at, stack) = thread_stack(lines, i)?;
        (line, i) = (next, at);
        let Some(stack) = stack.filter(|s| !s.is_empty()) else {
            // "[same as previous thread]": one more of the last.
            if let Some(last) = samples.last_mut() {
                last.values[0] += 1;
            }
            continue;
        };
        // Every address but the leaf's moved back onto its call.
        let frames = stack
            .into_iter()
            .enumerate()
            .map(|(k, a)| addresses.intern(if k > 0 { a.wrapping_sub(1) } else { a }))
            .collect();
        samples.push(RawSample {
            values: vec![1],
            stack: frames,
            block_size: None,
        });
    }
    let kind = Kind {
        sample_types: owned(&[("thread", "count")]),
        period_type: ("thread".into(), "count".into()),
        period: 1,
        drop_frames: CPU_PROFILER_FRAMES.into(),
        duplicate_leaf: true,
    };
    Ok(build(
        samples,
        &addresses.list,
        maps::after_sentinel(lines[i..].iter().copied()),
        &kind,
    ))
}

/// The addresses of the thread whose header is line `i` (`None` for a
/// `[same as previous thread]`), the line that ends it (trimmed) and its
/// position.
fn thread_stack(
    lines: &[&str],
    mut i: usize,
) -> Result<(String, usize, Option<Vec<u64>>), LegacyError> {
    let mut addresses = Vec::new();
    let mut same = false;
    let mut line = String::new();
    while i + 1 < lines.len() {
        i += 1;
        line = lines[i].trim().to_string();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("---") {
            break;
        }
        if line.contains("same as previous thread") {
            same = true;
            continue;
        }
        let found = maps::hex_addresses(&line, false)
            .map_err(|bad| LegacyError(format!("thread profile: address {bad}")))?;
        addresses.extend(found);
    }
    Ok((line, i, (!same).then_some(addresses)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_same_as_previous_and_broken_input() {
        let text = "--- threadz 1 ---\n\
                    --- Thread 1 (name: main/1) stack: ---\n  PC: 0x401000 0x402001\n\
                    --- Thread 2 (name: t/2) stack: ---\n  [same as previous thread]\n\
                    --- Memory map: ---\n00400000-00500000: /bin/app\n";
        let p = parse_thread(text.as_bytes()).unwrap().unwrap();
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.sample[0].value, [2]);
        assert_eq!(p.location[1].address, 0x402000);
        assert_eq!(p.location[0].mapping_id, 1);
        assert!(parse_thread(b"--- threadz 1 ---\nsomething else\n")
            .unwrap()
            .is_err());
        assert!(
            parse_thread(b"--- Thread 1 (name: m/1) stack: ---\n0xfffffffffffffffffff\n---\n")
                .unwrap()
                .is_err()
        );
        assert!(parse_thread(b"goroutine profile: total 1\n").is_none());
    }
}
