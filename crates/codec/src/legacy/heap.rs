//! Legacy heap profiles in text (`heap profile: N: B [N: B] @ heap/RATE`,
//! gperftools' heapz and growthz, Go's `debug=1` heap dump), into the pprof
//! model as Go's `profile/legacy_profile.go` reads them: one sample per
//! line (in-use count and bytes, and allocated ones when they differ),
//! scaled up for sampling (`heap_v2`: each value divided by the chance
//! `1 - e^(-size/rate)` that an allocation of the average size was
//! sampled), a `bytes` label with the block size, every address moved back
//! one byte onto its call, then the memory map after its sentinel line.

use std::sync::OnceLock;

use protoprof_model_pprof::perftools::profiles::Profile;
use regex::Regex;

use crate::legacy::cpu::{build, owned, Addresses, Kind, LegacyError, RawSample};
use crate::legacy::maps;

fn regexes() -> &'static [Regex; 3] {
    static RE: OnceLock<[Regex; 3]> = OnceLock::new();
    RE.get_or_init(|| {
        let compile = |s: &str| Regex::new(s).expect("valid");
        [
            compile(r"heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] *@ *(heap[_a-z0-9]*)/?(\d*)"),
            compile(r"heap profile: *(\d+): *(\d+) *\[ *(\d+): *(\d+) *\] @ (?:growthz?|fragmentationz?)"),
            compile(r"(-?\d+): *(-?\d+) *\[ *(\d+): *(\d+) *] @([ x0-9a-f]*)"),
        ]
    })
}

/// How the header says the values were sampled.
struct Header {
    /// `heap_v2` sampling: values are scaled by the rate.
    v2: bool,
    period: i64,
    alloc: bool,
}

fn header(line: &str) -> Option<Result<Header, LegacyError>> {
    let [heap, growth, ..] = regexes();
    if let Some(c) = heap.captures(line) {
        let period: i64 = match c.get(6).map_or("", |m| m.as_str()) {
            "" => 0,
            n => match n.parse() {
                Ok(n) => n,
                Err(_) => return Some(Err(LegacyError(format!("heap profile rate {n:?}")))),
            },
        };
        let alloc = (c[3] != c[1] && &c[3] != "0") || (c[4] != c[2] && &c[4] != "0");
        let (v2, period) = match &c[5] {
            "heapz_v2" | "heap_v2" => (true, period),
            "heapprofile" => (false, 1),
            "heap" => (true, period / 2),
            _ => return None,
        };
        return Some(Ok(Header { v2, period, alloc }));
    }
    growth.is_match(line).then_some(Ok(Header {
        v2: false,
        period: 1,
        alloc: false,
    }))
}

/// Whether `bytes` start as a legacy heap profile does.
pub fn is_heap_profile(bytes: &[u8]) -> bool {
    let first = bytes.split(|b| *b == b'\n').next().unwrap_or(&[]);
    std::str::from_utf8(first).is_ok_and(|l| header(l).is_some())
}

/// The profile, when `bytes` are a legacy heap profile.
pub fn parse_heap(bytes: &[u8]) -> Option<Result<Profile, LegacyError>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    let header = match header(lines.next()?)? {
        Ok(h) => h,
        Err(e) => return Some(Err(e)),
    };
    Some(parse_body(header, lines))
}

fn parse_body<'a>(
    h: Header,
    mut lines: impl Iterator<Item = &'a str>,
) -> Result<Profile, LegacyError> {
    let [_, _, sample_re] = regexes();
    let mut addresses = Addresses::default();
    let mut samples = Vec::new();
    let mut map_text = String::new();
    for line in lines.by_ref() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if maps::is_sentinel(line) {
            break;
        }
        let c = sample_re
            .captures(line)
            .ok_or_else(|| LegacyError(format!("heap profile: not a sample: {line:?}")))?;
        let mut values = Vec::with_capacity(4);
        let mut block_size = 0;
        let pairs: &[(usize, &str)] = match h.alloc {
            true => &[(3, "allocation"), (1, "inuse")],
            false => &[(1, "inuse")],
        };
        for &(i, label) in pairs {
            let (count, size) = value_pair(&c[i], &c[i + 1], label)?;
            if count != 0 {
                block_size = size.wrapping_div(count);
            }
            let (count, size) = match h.v2 && count != 0 {
                true => scale(count, size, h.period),
                false => (count, size),
            };
            values.extend([count, size]);
        }
        let stack = maps::hex_addresses(&c[5], true)
            .map_err(|bad| LegacyError(format!("heap profile: address {bad}")))?
            .into_iter()
            .map(|a| addresses.intern(a))
            .collect();
        samples.push(RawSample {
            values,
            stack,
            block_size: Some(block_size),
        });
    }
    for line in lines {
        map_text.push_str(line);
        map_text.push('\n');
    }
    let kind = Kind {
        sample_types: owned(match h.alloc {
            true => &[
                ("alloc_objects", "count"),
                ("alloc_space", "bytes"),
                ("inuse_objects", "count"),
                ("inuse_space", "bytes"),
            ],
            false => &[("objects", "count"), ("space", "bytes")],
        }),
        period_type: ("space".into(), "bytes".into()),
        period: h.period,
        drop_frames: String::new(),
        duplicate_leaf: false,
    };
    Ok(build(
        samples,
        &addresses.list,
        maps::parse(&map_text),
        &kind,
    ))
}

fn value_pair(count: &str, size: &str, label: &str) -> Result<(i64, i64), LegacyError> {
    let parse = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| LegacyError(format!("heap profile: malformed {label} value {s:?}")))
    };
    let (count, size) = (parse(count)?, parse(size)?);
    if count == 0 && size != 0 {
        return Err(LegacyError(format!(
            "heap profile: {label} count was 0 but {label} bytes was {size}"
        )));
    }
    Ok((count, size))
}

/// pprof's `scaleHeapSample`: values of a sampled heap profile scaled by
/// the chance an allocation of their average size was sampled.
pub(crate) fn scale(count: i64, size: i64, rate: i64) -> (i64, i64) {
    if count == 0 || size == 0 {
        return (0, 0);
    }
    if rate <= 1 {
        return (count, size);
    }
    let average = size as f64 / count as f64;
    let scale = 1.0 / (1.0 - (-average / rate as f64).exp());
    ((count as f64 * scale) as i64, (size as f64 * scale) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_scaled_labelled_and_mapped() {
        let text = "heap profile: 1: 1024 [ 2: 4096] @ heap_v2/524288\n\
                    1: 1024 [2: 4096] @ 0x401001 0x402001\n\
                    --- Memory map: ---\n\
                    00400000-00500000 r-xp 00000000 fc:00 1 /bin/app\n";
        let p = parse_heap(text.as_bytes()).unwrap().unwrap();
        assert_eq!(
            p.sample_type.len(),
            4,
            "allocated values differ from in-use ones"
        );
        let s = &p.sample[0];
        // Sampled: the chance a 2 KiB allocation is sampled at 512 KiB is small.
        assert!(s.value[1] > 4096 && s.value[3] > 1024, "{:?}", s.value);
        // The block size is the in-use one (read last, as pprof does).
        assert_eq!(s.label[0].num, 1024);
        assert_eq!(p.location[0].address, 0x401000);
        assert_eq!(p.location[0].mapping_id, 1);
    }

    #[test]
    fn broken_lines_are_errors_not_panics() {
        for text in [
            "heap profile: 1: 1 [1: 1] @ heap/2\nnot a sample\n",
            "heap profile: 1: 1 [1: 1] @ heap/2\n0: 5 [0: 0] @ 0x1\n",
            "heap profile: 1: 1 [1: 1] @ heap/2\n-1: -9223372036854775808 [0: 0] @ 0xffffffffffffffffff\n",
            "heap profile: 1: 1 [1: 1] @ heap/99999999999999999999\n",
        ] {
            let result = parse_heap(text.as_bytes());
            assert!(result.is_none_or(|r| r.is_err() || r.is_ok()));
        }
        assert!(
            parse_heap(b"heap profile: 1: 1 [1: 1] @ heap/2\nnot a sample\n")
                .unwrap()
                .is_err()
        );
        assert!(parse_heap(b"goroutine profile: total 3\n").is_none());
    }
}
