//! The message view's parts on small messages built here: paths, labels
//! and summaries, references by id and through OTLP's dictionary, bytes,
//! edits and search.

use protobuf::{Message, MessageDyn, MessageFull};
use protoprof_model_pprof::perftools::profiles::{Function, Line, Location, Profile, Sample};

use super::describe::Describer;
use super::edit::{self, Edit};
use super::path::{self, parse};
use super::refs::{self, IdIndexes, References};
use super::{node, search, wire};

/// Two samples over three locations with sparse ids; location 20 has an
/// inlined frame (two lines, innermost first).
fn profile() -> Profile {
    let strings = [
        "",
        "main.leaf",
        "main.inlined",
        "main.main",
        "samples",
        "count",
    ];
    let mut p = Profile::new();
    p.string_table = strings.iter().map(|s| s.to_string()).collect();
    for (id, name) in [(7, 1), (8, 2), (9, 3)] {
        let mut f = Function::new();
        (f.id, f.name) = (id, name);
        p.function.push(f);
    }
    for (id, lines) in [(10, vec![(7, 12)]), (20, vec![(8, 5), (9, 30)])] {
        let mut l = Location::new();
        (l.id, l.address) = (id, 0x1000 + id);
        for (function_id, number) in lines {
            let mut line = Line::new();
            (line.function_id, line.line) = (function_id, number);
            l.line.push(line);
        }
        p.location.push(l);
    }
    for (locations, value) in [(vec![10, 20], 3), (vec![20], 300)] {
        let mut s = Sample::new();
        (s.location_id, s.value) = (locations, vec![value]);
        p.sample.push(s);
    }
    p
}

fn describe<R>(m: &dyn MessageDyn, f: impl FnOnce(&Describer) -> R) -> R {
    let (references, ids) = (References::of_profiles(), IdIndexes::default());
    f(&Describer {
        root: m,
        references: &references,
        ids: &ids,
    })
}

#[test]
fn paths_parse_and_render_as_validation_writes_them() {
    let steps = parse("sample[3].location_id[0]").unwrap();
    assert_eq!(path::render(&steps), "sample[3].location_id[0]");
    assert!(parse("").unwrap().is_empty());
    for bad in ["sample[x]", "a..b", "sample[1", "se ven"] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_sample_reads_as_its_values_and_frames_leaf_first() {
    let p = profile();
    let line = describe(&p, |d| node::node(d, &parse("sample").unwrap(), 0).unwrap());
    assert_eq!(line.count, 2);
    assert_eq!(
        line.children[0].text,
        "value: [3] · location_id: main.leaf:12 ← main.inlined:5 ← main.main:30"
    );
    // An id points at the entry holding it, wherever it sits.
    let ids = describe(&p, |d| {
        node::node(d, &parse("sample[1].location_id").unwrap(), 0).unwrap()
    });
    let pointed = ids.children[0].points_to.as_ref().unwrap();
    assert_eq!(pointed.path, "location[1]");
    assert_eq!(pointed.label, "main.inlined:5 ← main.main:30");
}

#[test]
fn a_reference_to_nothing_says_so() {
    let mut p = profile();
    p.sample[0].location_id[0] = 99;
    let summary = describe(&p, |d| node::node(d, &parse("sample").unwrap(), 0).unwrap());
    assert!(
        summary.children[0].text.contains("99 (points nowhere)"),
        "{}",
        summary.children[0].text
    );
}

#[test]
fn otlp_references_find_the_dictionary_beside_the_profiles() {
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData;
    let root = ProfilesData::descriptor();
    let at = parse("resource_profiles[0].scope_profiles[0].profiles[0].samples[0]").unwrap();
    let r = References::of_profiles();
    let stack = r
        .of(
            "opentelemetry.proto.profiles.v1development.Sample",
            "stack_index",
        )
        .unwrap();
    assert_eq!(
        refs::table_path(&root, &at, &stack.table).as_deref(),
        Some("dictionary.stack_table")
    );
}

#[test]
fn bytes_are_found_along_the_path_packed_elements_alone() {
    let p = profile();
    let bytes = p.write_to_bytes().unwrap();
    let root = Profile::descriptor();
    // The second sample's only value, 300: a varint of two bytes.
    let value = wire::locate(&bytes, &root, &parse("sample[1].value[0]").unwrap()).unwrap();
    assert_eq!(
        &bytes[value.offset..value.offset + value.length],
        &[0xac, 0x02]
    );
    assert_eq!(value.hex, "ac 02");
    // A whole element: its tag (field 4, length-delimited), then itself.
    let location = wire::locate(&bytes, &root, &parse("location[1]").unwrap()).unwrap();
    let found = &bytes[location.offset..location.offset + location.length];
    assert_eq!(found[0], 4 << 3 | 2);
    assert_eq!(
        Location::parse_from_bytes(&found[2..]).unwrap(),
        p.location[1]
    );
    let missing = wire::locate(&bytes, &root, &parse("period_type").unwrap());
    assert!(missing.unwrap_err().contains("not in the encoding"));
}

#[test]
fn edits_set_add_and_remove_and_say_what_is_wrong() {
    let mut p = profile();
    let mut apply = |edit: Edit| edit::apply(&mut p, &edit);
    apply(Edit::Set {
        path: "sample[1].value[0]".into(),
        value: "0x10".into(),
    })
    .unwrap();
    apply(Edit::Set {
        path: "string_table[1]".into(),
        value: "main.renamed".into(),
    })
    .unwrap();
    assert_eq!(
        apply(Edit::Add {
            path: "sample".into(),
            value: String::new()
        })
        .unwrap(),
        "sample[2]"
    );
    apply(Edit::Remove {
        path: "sample[0]".into(),
    })
    .unwrap();
    let bad = apply(Edit::Set {
        path: "period".into(),
        value: "ten".into(),
    });
    assert_eq!(bad.unwrap_err(), "\"ten\" is not a valid int64");
    let bad = apply(Edit::Remove {
        path: "sample[9]".into(),
    });
    assert!(bad.unwrap_err().contains("there are 2 elements"));
    let bad = apply(Edit::Set {
        path: "sample[0]".into(),
        value: "1".into(),
    });
    assert!(bad.unwrap_err().contains("field by field"));
    assert_eq!(p.sample.len(), 2);
    assert_eq!(p.sample[0].value, vec![16]);
    assert!(p.sample[1].value.is_empty());
    assert_eq!(p.string_table[1], "main.renamed");
}

#[test]
fn search_finds_names_through_their_string_references() {
    let p = profile();
    let found = describe(&p, |d| search::search(d, "INLINED"));
    let paths: Vec<&str> = found.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["function[1].name", "string_table[2]"]);
    assert!(!found.stopped);
}
