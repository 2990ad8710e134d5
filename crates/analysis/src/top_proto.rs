//! `-topproto` as pprof writes it (its `printTopProto`): the rows of `-top`
//! as a profile of their own, one location and one sample per row, whose
//! values are the row's cum and flat in the report's unit.

use std::collections::HashMap;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{
    Function, Line, Location, Profile, Sample, ValueType,
};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::report::{top_report, TopOptions};
use crate::selection::Selection;
use crate::units::scale;

/// The top report of sample type `index` as pprof's `-topproto` profile:
/// sample types `cum` and `flat` in the report's unit, each row a location
/// (its address and line where the granularity keeps them) of a function
/// made once per name, file and start line.
pub fn top_proto<S: ProfileSamples>(
    source: &S,
    index: usize,
    selection: &Selection,
    options: &TopOptions,
) -> Profile {
    let p = source.profile();
    let report = top_report(source, index, selection, options);
    let parts = crate::frames_for(source, selection).parts;
    let mut strings = Strings::default();
    let unit = strings.id(&report.output_unit);
    let mut out = Profile {
        sample_type: vec![
            value_type(strings.id("cum"), unit),
            value_type(strings.id("flat"), unit),
        ],
        time_nanos: p.time_nanos,
        duration_nanos: p.duration_nanos,
        period: p.period,
        ..Default::default()
    };
    if let Some(t) = p.period_type.as_ref() {
        let period_type = value_type(strings.id(p.string(t.type_)), strings.id(p.string(t.unit)));
        out.period_type = Some(period_type).into();
    }
    let mut functions: HashMap<(String, String, i64), u64> = HashMap::new();
    for (i, row) in report.rows.iter().enumerate() {
        let part = &parts[row.node as usize];
        let (name, file) = (
            part.function.clone().unwrap_or_default(),
            part.file.clone().unwrap_or_default(),
        );
        let key = (name, file, part.start_line);
        let next = functions.len() as u64 + 1;
        let function_id = *functions.entry(key.clone()).or_insert_with(|| {
            out.function.push(Function {
                id: next,
                name: strings.id(&key.0),
                filename: strings.id(&key.1),
                start_line: key.2,
                ..Default::default()
            });
            next
        });
        let id = i as u64 + 1;
        out.location.push(Location {
            id,
            address: part.address_value,
            line: vec![Line {
                function_id,
                line: part.line.unwrap_or(0),
                ..Default::default()
            }],
            ..Default::default()
        });
        let in_unit = |v: i64| scale(v, &report.sample_type.1, &report.output_unit).0 as i64;
        out.sample.push(Sample {
            location_id: vec![id],
            value: vec![in_unit(row.cum), in_unit(row.flat)],
            ..Default::default()
        });
    }
    out.string_table = strings.table;
    out
}

fn value_type(type_: i64, unit: i64) -> ValueType {
    ValueType {
        type_,
        unit,
        ..Default::default()
    }
}

/// A string table built as strings are first asked for ("" first).
struct Strings {
    table: Vec<String>,
    ids: HashMap<String, i64>,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            table: vec![String::new()],
            ids: HashMap::from([(String::new(), 0)]),
        }
    }
}

impl Strings {
    fn id(&mut self, s: &str) -> i64 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        self.table.push(s.to_string());
        let id = self.table.len() as i64 - 1;
        self.ids.insert(s.to_string(), id);
        id
    }
}
