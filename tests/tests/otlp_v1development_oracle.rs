//! OpenTelemetry's own generated types (the `opentelemetry-proto` crate,
//! prost, generated from proto v1.10.0) as the oracle for v1development:
//! both read every current-revision corpus file to the same values, field
//! by field, and what protoprof writes reads back in the oracle equal to
//! protoprof's model.

use prost::Message as _;
use protobuf::Message as _;
use protoprof_codec::{decode_any, DecodeOptions};
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development as ours_collector;
use protoprof_model_otlp::opentelemetry::proto::common::v1 as ours_common;
use protoprof_tests::{corpus_dir, files_under};

use opentelemetry_proto::tonic::collector::profiles::v1development as theirs_collector;
use opentelemetry_proto::tonic::common::v1 as theirs_common;

/// Every field of a message as `path = value` lines. The two type systems
/// name fields alike (prost and rust-protobuf both keep the .proto names),
/// so one macro describes either; only the oneof's enum path differs.
macro_rules! describe {
    ($request:expr, $any:path) => {{
        use $any as any_value;
        let mut out: Vec<String> = Vec::new();
        let any = |v: Option<&any_value::Value>| -> String {
            match v {
                None => "none".into(),
                Some(any_value::Value::StringValue(s)) => format!("str {s:?}"),
                Some(any_value::Value::BoolValue(b)) => format!("bool {b}"),
                Some(any_value::Value::IntValue(i)) => format!("int {i}"),
                Some(any_value::Value::DoubleValue(d)) => format!("double {d}"),
                Some(any_value::Value::BytesValue(b)) => format!("bytes {b:?}"),
                Some(any_value::Value::StringValueStrindex(i)) => format!("strindex {i}"),
                Some(_) => "nested".into(),
            }
        };
        // Arrays one level deep (pprof -> v1development writes lists of
        // comments, sample type orders and repeated label keys).
        let any = |v: Option<&any_value::Value>| -> String {
            match v {
                Some(any_value::Value::ArrayValue(a)) => {
                    let items: Vec<String> =
                        a.values.iter().map(|x| any(x.value.as_ref())).collect();
                    format!("array {items:?}")
                }
                other => any(other),
            }
        };
        let r = $request;
        for (i, rp) in r.resource_profiles.iter().enumerate() {
            if let Some(res) = rp.resource.as_ref() {
                for kv in &res.attributes {
                    let v = kv.value.as_ref().and_then(|v| v.value.as_ref());
                    out.push(format!("rp{i}.resource {:?}/{} = {}", kv.key, kv.key_strindex, any(v)));
                }
            }
            out.push(format!("rp{i}.schema_url {:?}", rp.schema_url));
            for (j, sp) in rp.scope_profiles.iter().enumerate() {
                if let Some(scope) = sp.scope.as_ref() {
                    out.push(format!("rp{i}.sp{j}.scope {:?} {:?}", scope.name, scope.version));
                    for kv in &scope.attributes {
                        let v = kv.value.as_ref().and_then(|v| v.value.as_ref());
                        out.push(format!("rp{i}.sp{j}.scope {:?} = {}", kv.key, any(v)));
                    }
                }
                for (k, p) in sp.profiles.iter().enumerate() {
                    let at = format!("rp{i}.sp{j}.p{k}");
                    let vt = |t: Option<(i32, i32)>| format!("{t:?}");
                    out.push(format!(
                        "{at} sample_type {} period_type {} period {} time {} duration {} id {:?} attrs {:?} payload {:?}/{}",
                        vt(p.sample_type.as_ref().map(|t| (t.type_strindex, t.unit_strindex))),
                        vt(p.period_type.as_ref().map(|t| (t.type_strindex, t.unit_strindex))),
                        p.period, p.time_unix_nano, p.duration_nano, p.profile_id,
                        p.attribute_indices, p.original_payload_format, p.original_payload.len()
                    ));
                    for (n, s) in p.samples.iter().enumerate() {
                        out.push(format!(
                            "{at}.s{n} stack {} attrs {:?} link {} values {:?} times {:?}",
                            s.stack_index, s.attribute_indices, s.link_index, s.values,
                            s.timestamps_unix_nano
                        ));
                    }
                }
            }
        }
        if let Some(d) = r.dictionary.as_ref() {
            out.extend(d.string_table.iter().enumerate().map(|(i, s)| format!("string {i} {s:?}")));
            for (i, m) in d.mapping_table.iter().enumerate() {
                out.push(format!(
                    "mapping {i} {:#x} {:#x} {:#x} {} {:?}",
                    m.memory_start, m.memory_limit, m.file_offset, m.filename_strindex,
                    m.attribute_indices
                ));
            }
            for (i, l) in d.location_table.iter().enumerate() {
                let lines: Vec<_> = l.lines.iter().map(|x| (x.function_index, x.line, x.column)).collect();
                out.push(format!(
                    "location {i} {} {:#x} {lines:?} {:?}",
                    l.mapping_index, l.address, l.attribute_indices
                ));
            }
            for (i, f) in d.function_table.iter().enumerate() {
                out.push(format!(
                    "function {i} {} {} {} {}",
                    f.name_strindex, f.system_name_strindex, f.filename_strindex, f.start_line
                ));
            }
            for (i, l) in d.link_table.iter().enumerate() {
                out.push(format!("link {i} {:?} {:?}", l.trace_id, l.span_id));
            }
            for (i, a) in d.attribute_table.iter().enumerate() {
                let v = a.value.as_ref().and_then(|v| v.value.as_ref());
                out.push(format!("attribute {i} {} {} {}", a.key_strindex, any(v), a.unit_strindex));
            }
            for (i, s) in d.stack_table.iter().enumerate() {
                out.push(format!("stack {i} {:?}", s.location_indices));
            }
        }
        out
    }};
}

fn current_revision_files() -> Vec<std::path::PathBuf> {
    let Some(corpus) = corpus_dir() else {
        return Vec::new();
    };
    files_under(&corpus.join("otlp/v1development"))
        .into_iter()
        .filter(|p| {
            p.to_string_lossy().contains("-1.10-") && p.extension().is_some_and(|e| e == "pb")
        })
        .collect()
}

fn read_ours(bytes: &[u8]) -> ours_collector::ExportProfilesServiceRequest {
    let decoded = decode_any(
        bytes,
        Some("opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"),
        &DecodeOptions::default(),
    )
    .unwrap();
    *decoded
        .decoded
        .message
        .downcast_box::<ours_collector::ExportProfilesServiceRequest>()
        .unwrap()
}

fn assert_same(ours: Vec<String>, theirs: Vec<String>, what: &str) {
    assert!(ours.len() > 10, "{what}: only {} lines", ours.len());
    if let Some(i) = (0..ours.len().min(theirs.len())).find(|&i| ours[i] != theirs[i]) {
        panic!(
            "{what}: first difference\n  protoprof: {}\n  oracle:    {}",
            ours[i], theirs[i]
        );
    }
    assert_eq!(ours.len(), theirs.len(), "{what}");
}

#[test]
fn protoprof_reads_every_current_file_as_the_oracle_does() {
    let files = current_revision_files();
    if corpus_dir().is_some() {
        assert!(files.len() >= 2);
    }
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let theirs =
            theirs_collector::ExportProfilesServiceRequest::decode(bytes.as_slice()).unwrap();
        let ours = read_ours(&bytes);
        assert_same(
            describe!(&ours, ours_common::any_value),
            describe!(&theirs, theirs_common::any_value),
            &path.display().to_string(),
        );
        // The corpus has the first capture as OTLP/JSON too (protojson):
        // protoprof's JSON reader gives what the oracle reads from binary.
        let json = path.with_extension("json");
        if json.exists() {
            let from_json = read_ours(&std::fs::read(&json).unwrap());
            assert_same(
                describe!(&from_json, ours_common::any_value),
                describe!(&theirs, theirs_common::any_value),
                &json.display().to_string(),
            );
        }
    }
}

#[test]
fn what_protoprof_writes_the_oracle_reads_back_equal() {
    for path in current_revision_files() {
        let ours = read_ours(&std::fs::read(&path).unwrap());
        let written = ours.write_to_bytes().unwrap();
        let theirs =
            theirs_collector::ExportProfilesServiceRequest::decode(written.as_slice()).unwrap();
        assert_same(
            describe!(&ours, ours_common::any_value),
            describe!(&theirs, theirs_common::any_value),
            &path.display().to_string(),
        );
        // And the oracle's encoding of it is the bytes protoprof wrote: the
        // same fields, in field-number order, packed as proto3 packs.
        assert_eq!(theirs.encode_to_vec(), written, "{}", path.display());
    }
}

/// What pprof -> v1development writes from every convertible pprof file of
/// the corpus reads back in the oracle equal to protoprof's model, and the
/// oracle encodes it to the same bytes.
#[test]
fn pprof_converted_to_v1development_reads_equal_in_the_oracle() {
    use protoprof_codec::PprofProfile;
    use protoprof_pprof_bridge::{
        pprof_to_development, Converted, ProfileId, ToDevelopmentOptions,
    };
    let Some(corpus) = corpus_dir() else { return };
    let options = ToDevelopmentOptions {
        profile_id: ProfileId::ContentHash,
        ..Default::default()
    };
    let mut checked = 0;
    for path in files_under(&corpus.join("pprof")) {
        let bytes = std::fs::read(&path).unwrap();
        let input = protoprof_codec::decode::<PprofProfile>(&bytes, &DecodeOptions::default())
            .unwrap()
            .message;
        let Ok(Converted { value: data, .. }) = pprof_to_development(&input, &options) else {
            continue; // the files bridge_corpus.rs lists as not convertible
        };
        let written = data.write_to_bytes().unwrap();
        let ours =
            ours_collector::ExportProfilesServiceRequest::parse_from_bytes(&written).unwrap();
        let theirs =
            theirs_collector::ExportProfilesServiceRequest::decode(written.as_slice()).unwrap();
        assert_same(
            describe!(&ours, ours_common::any_value),
            describe!(&theirs, theirs_common::any_value),
            &path.display().to_string(),
        );
        assert_eq!(theirs.encode_to_vec(), written, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 42, "{checked} files checked");
}
