//! v1development data of the revisions before v1.8 (v1.4–v1.7), read by
//! upgrading it into the current model, checked against what the old bytes
//! say read here independently: a minimal wire walk with the old field
//! numbers of `../shared/schemas/otlp-v1development.md`, summing each sample
//! type's values and naming each sample's leaf function.

use std::collections::BTreeMap;

use protoprof_codec::{decode_any, DecodeOptions};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_tests::{corpus_dir, files_under};

/// (field number, wire type, payload or varint value) of one message.
fn walk(bytes: &[u8]) -> Vec<(u32, u8, &[u8], u64)> {
    let mut out = Vec::new();
    let mut pos = 0;
    let varint = |pos: &mut usize| {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = bytes[*pos];
            *pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                return v;
            }
        }
    };
    while pos < bytes.len() {
        let tag = varint(&mut pos);
        let (number, wire_type) = ((tag >> 3) as u32, (tag & 7) as u8);
        match wire_type {
            0 => {
                let v = varint(&mut pos);
                out.push((number, 0, &bytes[0..0], v));
            }
            2 => {
                let len = varint(&mut pos) as usize;
                out.push((number, 2, &bytes[pos..pos + len], 0));
                pos += len;
            }
            1 => pos += 8,
            5 => pos += 4,
            other => panic!("wire type {other}"),
        }
    }
    out
}

fn all(bytes: &[u8], number: u32) -> Vec<&[u8]> {
    walk(bytes)
        .into_iter()
        .filter(|f| f.0 == number && f.1 == 2)
        .map(|f| f.2)
        .collect()
}

fn int(bytes: &[u8], number: u32) -> u64 {
    walk(bytes)
        .into_iter()
        .rev()
        .find(|f| f.0 == number && f.1 == 0)
        .map_or(0, |f| f.3)
}

/// Repeated varints, packed or not.
fn ints(bytes: &[u8], number: u32) -> Vec<u64> {
    let mut out = Vec::new();
    for f in walk(bytes).into_iter().filter(|f| f.0 == number) {
        if f.1 == 0 {
            out.push(f.3);
        } else {
            let mut packed = Vec::new();
            for b in f.2 {
                packed.push(*b);
                if b & 0x80 == 0 {
                    let mut v = 0u64;
                    for (i, p) in packed.iter().enumerate() {
                        v |= u64::from(p & 0x7f) << (7 * i);
                    }
                    out.push(v);
                    packed.clear();
                }
            }
        }
    }
    out
}

/// What the old bytes say: per sample type name its total, and the leaf
/// function names of all samples (a multiset).
type Facts = (BTreeMap<String, i64>, BTreeMap<String, usize>);

/// v1.4/v1.5: tables inside each Profile; v1.7: in a dictionary (field 2).
fn old_facts(bytes: &[u8], v1_7: bool) -> Facts {
    let (mut totals, mut leaves) = (BTreeMap::new(), BTreeMap::new());
    let dictionary = all(bytes, 2).first().copied().unwrap_or(&[]);
    for rp in all(bytes, 1) {
        for sp in all(rp, 2) {
            for p in all(sp, 2) {
                let tables = if v1_7 { dictionary } else { p };
                let (strings, locations, functions) = match v1_7 {
                    true => (all(tables, 5), all(tables, 2), all(tables, 3)),
                    false => (all(tables, 10), all(tables, 4), all(tables, 6)),
                };
                let location_indices = ints(p, if v1_7 { 3 } else { 5 });
                let string = |i: u64| String::from_utf8(strings[i as usize].to_vec()).unwrap();
                let types: Vec<String> = all(p, 1).iter().map(|t| string(int(t, 1))).collect();
                for s in all(p, 2) {
                    for (k, v) in ints(s, 3).iter().enumerate() {
                        *totals.entry(types[k].clone()).or_insert(0) += *v as i64;
                    }
                    let (start, len) = (int(s, 1) as usize, int(s, 2) as usize);
                    if len == 0 {
                        continue;
                    }
                    let leaf = locations[location_indices[start] as usize];
                    let name = match all(leaf, 3).first() {
                        Some(line) => string(int(functions[int(line, 1) as usize], 1)),
                        None => String::new(),
                    };
                    // One leaf per sample type's profile after the upgrade.
                    *leaves.entry(name).or_insert(0) += types.len().max(1);
                }
            }
        }
    }
    (totals, leaves)
}

fn new_facts(data: &dev::ProfilesData) -> Facts {
    let d = data.dictionary.as_ref().unwrap();
    let string = |i: i32| d.string_table[i as usize].clone();
    let (mut totals, mut leaves) = (BTreeMap::new(), BTreeMap::new());
    for p in data
        .resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles)
    {
        let name = string(p.sample_type.type_strindex);
        for s in &p.samples {
            *totals.entry(name.clone()).or_insert(0) += s.values.iter().sum::<i64>();
            let stack = &d.stack_table[s.stack_index as usize].location_indices;
            let Some(&leaf) = stack.first() else { continue };
            let leaf = &d.location_table[leaf as usize];
            let name = match leaf.lines.first() {
                Some(line) => string(d.function_table[line.function_index as usize].name_strindex),
                None => String::new(),
            };
            *leaves.entry(name).or_insert(0) += 1;
        }
    }
    (totals, leaves)
}

#[test]
fn revisions_before_v1_8_are_upgraded_keeping_values_and_stacks() {
    let Some(corpus) = corpus_dir() else { return };
    let mut checked = 0;
    for path in files_under(&corpus.join("otlp/v1development")) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let v1_7 = name.contains("-1.7-");
        if !(v1_7 || name.contains("-1.5-")) || !name.ends_with(".pb") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let decoded = decode_any(&bytes, None, &DecodeOptions::default()).unwrap();
        let data = decoded
            .decoded
            .message
            .downcast_ref::<dev::ProfilesData>()
            .unwrap_or_else(|| panic!("{name}: {}", decoded.descriptor.full_name()));
        let (old_totals, old_leaves) = old_facts(&bytes, v1_7);
        let (new_totals, new_leaves) = new_facts(data);
        assert!(!old_totals.is_empty(), "{name}");
        assert_eq!(old_totals, new_totals, "{name}: totals per sample type");
        assert_eq!(old_leaves, new_leaves, "{name}: leaf functions");
        let report = protoprof_validate::validate_development_data(
            data,
            &protoprof_validate::Options::default(),
        );
        assert!(report.is_valid(), "{name}:\n{}", report.render_human());
        checked += 1;
    }
    assert!(checked >= 3, "{checked} files");
}
