//! Legacy profile formats `go tool pprof` reads, against pprof's own test
//! inputs and their expected parses (Debian's golang-github-google-pprof-dev
//! ships both: `profile/testdata/*.cpu`, `*.heap`, `*.growth` and their
//! `.string`): the samples, locations and mappings protoprof reads are the
//! ones Go's parser gives.

use protoprof_codec::detect::Form;
use protoprof_codec::{decode_any, DecodeOptions, PprofProfile};
use protoprof_model_meta::StringTable;

/// (values, location ids) per sample; (id, address, mapping id, its line
/// as `function file:line s=start`) per location; (id, start, limit,
/// offset, file) per mapping.
type Parse = (
    Vec<(Vec<i64>, Vec<u64>)>,
    Vec<(u64, u64, u64, String)>,
    Vec<(u64, u64, u64, u64, String)>,
);

/// Go's `Profile.String()` output, read back section by section.
fn expected(text: &str) -> Parse {
    // The lines of a section, after its title (and, for samples, the line
    // naming the sample types).
    let section = |name: &str, header: usize| -> Vec<&str> {
        text.lines()
            .skip_while(|l| !l.starts_with(name))
            .skip(1 + header)
            .take_while(|l| {
                l.starts_with(' ') || l.chars().next().is_some_and(|c| c.is_ascii_digit())
            })
            .collect()
    };
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let samples = section("Samples:", 1)
        .into_iter()
        .filter(|l| !l.contains('[')) // a sample's labels, on their own line
        .map(|l| {
            let (values, ids) = l.split_once(':').unwrap();
            let values = values
                .split_whitespace()
                .map(|v| v.parse().unwrap())
                .collect();
            let ids = ids.split_whitespace().map(|v| v.parse().unwrap()).collect();
            (values, ids)
        })
        .collect();
    let locations = section("Locations", 0)
        .into_iter()
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let id = fields[0].trim_end_matches(':').parse().unwrap();
            let (mapping, rest) = match fields.get(2).and_then(|f| f.strip_prefix("M=")) {
                Some(m) => (m.parse().unwrap(), &fields[3..]),
                None => (0, &fields[2..]),
            };
            (id, hex(fields[1]), mapping, rest.join(" "))
        })
        .collect();
    let mappings = section("Mappings", 0)
        .into_iter()
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let id = fields[0].trim_end_matches(':').parse().unwrap();
            let range: Vec<u64> = fields[1].split('/').map(hex).collect();
            let file = fields.get(2).unwrap_or(&"").to_string();
            (id, range[0], range[1], range[2], file)
        })
        .collect();
    (samples, locations, mappings)
}

fn ours(p: &PprofProfile) -> Parse {
    let samples = p
        .sample
        .iter()
        .map(|s| (s.value.clone(), s.location_id.clone()))
        .collect();
    let line = |l: &protoprof_model_pprof::perftools::profiles::Location| -> String {
        l.line
            .iter()
            .map(|x| {
                let f = p.function.iter().find(|f| f.id == x.function_id).unwrap();
                let (name, file) = (p.string(f.name), p.string(f.filename));
                let line = format!("{name} {file}:{}:{} s={}", x.line, x.column, f.start_line);
                match p.string(f.system_name) {
                    system if system != name => format!("{line}({system})"),
                    _ => line,
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let locations = p
        .location
        .iter()
        .map(|l| (l.id, l.address, l.mapping_id, line(l)))
        .collect();
    let mappings = p
        .mapping
        .iter()
        .map(|m| {
            let file = p.string(m.filename).to_string();
            (m.id, m.memory_start, m.memory_limit, m.file_offset, file)
        })
        .collect();
    (samples, locations, mappings)
}

#[test]
fn legacy_cpu_and_heap_profiles_parse_as_go_parses_them() {
    let Some(dir) = protoprof_tests::legacy_testdata() else {
        return;
    };
    let mut checked = 0;
    let names = protoprof_tests::LEGACY_INPUTS;
    for name in names {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let decoded = decode_any(&bytes, None, &DecodeOptions::default()).unwrap();
        assert_eq!(decoded.form, Form::Legacy, "{name}");
        let p = decoded
            .decoded
            .message
            .downcast_ref::<PprofProfile>()
            .unwrap();
        let want = expected(&std::fs::read_to_string(dir.join(format!("{name}.string"))).unwrap());
        let got = ours(p);
        assert!(
            !want.0.is_empty() && !want.1.is_empty(),
            "{name}: nothing read from .string"
        );
        assert_eq!(got.0, want.0, "{name}: samples");
        assert_eq!(got.1, want.1, "{name}: locations");
        assert_eq!(got.2, want.2, "{name}: mappings");
        let report = protoprof_validate::validate_pprof(p, &Default::default());
        assert!(report.is_valid(), "{name}:\n{}", report.render_human());
        checked += 1;
    }
    assert_eq!(checked, names.len());
}
