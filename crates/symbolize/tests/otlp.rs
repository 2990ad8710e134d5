//! OTLP v1development symbolized in place, as the OpenTelemetry eBPF
//! profiler leaves it: native frames (`profile.frame.type = native`) whose
//! addresses are the file's own, in mappings named by base name and
//! identified by a GNU build id or by the profiler's `htlhash`. The
//! program of `common` is found by each, its frames equal
//! `llvm-symbolizer --inlining`'s; a kernel frame and a mapping whose
//! binary is not here are left as they were, and counted.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use protoprof_model_otlp::opentelemetry::proto::common::v1::AnyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    KeyValueAndUnit, Location, Mapping, ProfilesDictionary,
};
use protoprof_symbolize::{symbolize_dictionary, How};

/// The eBPF profiler's file id of `path`, computed by Python's hashlib:
/// SHA-256 of the first and last 4 KiB and the length (big-endian u64),
/// its first 16 bytes in hex.
fn htlhash_by_python(path: &Path) -> String {
    let script = "import hashlib,sys\n\
                  d=open(sys.argv[1],'rb').read()\n\
                  h=hashlib.sha256(d[:4096]+d[-4096:]+len(d).to_bytes(8,'big'))\n\
                  print(h.hexdigest()[:32])";
    run(Command::new("python3").args(["-c", script]).arg(path))
        .trim()
        .to_string()
}

/// A dictionary builder: strings and attributes added once each.
struct Builder(ProfilesDictionary);

impl Builder {
    fn new() -> Builder {
        let mut d = ProfilesDictionary::new();
        d.string_table.push(String::new());
        d.mapping_table.push(Mapping::new());
        d.location_table.push(Location::new());
        d.attribute_table.push(KeyValueAndUnit::new());
        Builder(d)
    }

    fn string(&mut self, s: &str) -> i32 {
        let d = &mut self.0;
        match d.string_table.iter().position(|x| x == s) {
            Some(i) => i as i32,
            None => {
                d.string_table.push(s.to_string());
                d.string_table.len() as i32 - 1
            }
        }
    }

    fn attribute(&mut self, key: &str, value: &str) -> i32 {
        let mut a = KeyValueAndUnit::new();
        a.key_strindex = self.string(key);
        let mut v = AnyValue::new();
        v.set_string_value(value.to_string());
        a.value = Some(v).into();
        self.0.attribute_table.push(a);
        self.0.attribute_table.len() as i32 - 1
    }

    /// A mapping of `name` with these attributes, as the profiler writes it.
    fn mapping(&mut self, name: &str, ids: &[(&str, &str)]) -> i32 {
        let mut m = Mapping::new();
        m.filename_strindex = self.string(name);
        m.memory_limit = 0x10_0000;
        for (key, value) in ids {
            let a = self.attribute(key, value);
            m.attribute_indices.push(a);
        }
        self.0.mapping_table.push(m);
        self.0.mapping_table.len() as i32 - 1
    }

    fn location(&mut self, mapping: i32, address: u64, frame_type: &str) {
        let mut l = Location::new();
        (l.mapping_index, l.address) = (mapping, address);
        let a = self.attribute("profile.frame.type", frame_type);
        l.attribute_indices.push(a);
        self.0.location_table.push(l);
    }
}

/// Location `i`'s frames as (system name, file, line, column).
fn frames_at(d: &ProfilesDictionary, i: usize) -> Vec<(String, String, i64, i64)> {
    let s = |i: i32| d.string_table[i as usize].clone();
    d.location_table[i]
        .lines
        .iter()
        .map(|line| {
            let f = &d.function_table[line.function_index as usize];
            (
                s(f.system_name_strindex),
                s(f.filename_strindex),
                line.line,
                line.column,
            )
        })
        .collect()
}

#[test]
fn native_frames_are_symbolized_in_place_by_build_id_and_by_htlhash() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let id = build_id(&binary);
    // The binary path directory: by build id, and by name (for htlhash).
    let binaries = dir.path().join("binaries");
    std::fs::create_dir_all(binaries.join(&id)).unwrap();
    std::fs::copy(&binary, binaries.join(&id).join("prog")).unwrap();
    std::fs::copy(&binary, binaries.join("prog-copy")).unwrap();
    let hash = htlhash_by_python(&binary);

    let addresses: Vec<u64> = file_addresses(&binary).into_iter().step_by(5).collect();
    let expected = oracle(&binary, &addresses);
    let mut b = Builder::new();
    let by_gnu = b.mapping("prog", &[("process.executable.build_id.gnu", &id)]);
    let by_hash = b.mapping(
        "prog-copy",
        &[("process.executable.build_id.htlhash", &hash)],
    );
    let missing = b.mapping(
        "libgone.so",
        &[("process.executable.build_id.gnu", "0123456789abcdef")],
    );
    for &a in &addresses {
        b.location(by_gnu, a, "native");
    }
    for &a in &addresses {
        b.location(by_hash, a, "native");
    }
    b.location(missing, 0x1234, "native");
    b.location(by_gnu, addresses[0], "kernel");
    let mut d = b.0;

    let report = symbolize_dictionary(&mut d, &options(vec![binaries.clone()], dir.path()));
    let text = report.text();
    let [gnu, htl, gone] = &report.mappings[..] else {
        panic!("{text}");
    };
    assert_eq!(
        gnu.found.as_ref().unwrap().how,
        How::BuildIdDirectory,
        "{text}"
    );
    assert_eq!(
        htl.found.as_ref().unwrap().how,
        How::BinaryPathName,
        "{text}"
    );
    for m in [gnu, htl] {
        assert_eq!(m.found.as_ref().unwrap().build_id_matched, Some(true));
        assert_eq!(
            (m.addresses, m.resolved),
            (addresses.len(), addresses.len())
        );
    }
    assert!(gone.found.is_none() && gone.addresses == 1, "{text}");

    let n = addresses.len();
    for (k, want) in expected.iter().enumerate() {
        assert_eq!(&frames_at(&d, 1 + k), want, "address 0x{:x}", addresses[k]);
        assert_eq!(&frames_at(&d, 1 + n + k), want);
    }
    // Left as they were: the frame of a binary not here, and a kernel frame.
    assert!(d.location_table[1 + 2 * n].lines.is_empty());
    assert!(d.location_table[2 + 2 * n].lines.is_empty());
    // pprof's flags, as the bridge reads them back.
    let flags: Vec<&str> = d.mapping_table[by_gnu as usize]
        .attribute_indices
        .iter()
        .map(|&i| d.string_table[d.attribute_table[i as usize].key_strindex as usize].as_str())
        .filter(|k| k.starts_with("pprof.mapping.has_"))
        .collect();
    assert_eq!(flags.len(), 4, "{flags:?}");

    // Symbolized: left alone a second time.
    let again = symbolize_dictionary(&mut d, &options(vec![binaries], dir.path()));
    assert!(again.mappings[0].skipped.is_some(), "{}", again.text());
}

#[test]
fn a_file_whose_htlhash_differs_is_passed_over() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let binaries = dir.path().join("binaries");
    std::fs::create_dir_all(&binaries).unwrap();
    std::fs::copy(&binary, binaries.join("prog")).unwrap();
    let mut b = Builder::new();
    let m = b.mapping(
        "prog",
        &[(
            "process.executable.build_id.htlhash",
            "00000000000000000000000000000000",
        )],
    );
    b.location(m, file_addresses(&binary)[0], "native");
    let mut d = b.0;
    let report = symbolize_dictionary(&mut d, &options(vec![binaries], dir.path()));
    let entry = &report.mappings[0];
    assert!(entry.found.is_none(), "{}", report.text());
    assert!(
        entry.passed_over[0].why.contains("htlhash"),
        "{}",
        report.text()
    );
    assert!(d.location_table[1].lines.is_empty());
}
