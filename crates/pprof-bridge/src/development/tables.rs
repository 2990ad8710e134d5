//! What both v1development -> pprof paths convert alike: the dictionary's
//! mappings, locations and functions (entry i becomes id i), stacks, sample
//! attributes as labels, links as trace/span labels, values as label text.

use protoprof_model_meta::{StringTable, TableSource};
use protoprof_model_otlp::fields::opentelemetry::proto::profiles::v1development::stack;
use protoprof_model_otlp::opentelemetry::proto::common::v1::{any_value, AnyValue, KeyValueList};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::development::used::UsedEntries;
use crate::error::{unresolved, BridgeError, BridgeWarning};
use crate::interner::StringInterner;
use crate::otlp_comments;

/// The dictionary being converted, the pprof string table being built, and
/// the warnings so far.
pub(crate) struct FromDevelopment<'d> {
    pub d: &'d dev::ProfilesDictionary,
    /// The stack table, wherever it is held.
    stacks: &'d dyn TableSource<Entry = dev::Stack>,
    stack: dev::Stack,
    /// Whether every stack holds nothing but location indices, each in the
    /// location table ([`Self::stacks_fit`]); asked once.
    stacks_fit: Option<bool>,
    pub strings: StringInterner,
    pub warnings: Vec<BridgeWarning>,
    /// The entries to convert when not all of them: one profile's.
    used: Option<UsedEntries>,
}

impl<'d> FromDevelopment<'d> {
    /// Ready to convert `data`, whose dictionary (or an empty one) it reads.
    pub(crate) fn of(
        data: &'d dev::ProfilesData,
        stacks: &'d dyn TableSource<Entry = dev::Stack>,
    ) -> Self {
        static EMPTY: std::sync::OnceLock<dev::ProfilesDictionary> = std::sync::OnceLock::new();
        FromDevelopment {
            d: data
                .dictionary
                .as_ref()
                .unwrap_or_else(|| EMPTY.get_or_init(dev::ProfilesDictionary::default)),
            stacks,
            stack: dev::Stack::default(),
            stacks_fit: None,
            strings: StringInterner::new(vec![String::new()]),
            warnings: Vec::new(),
            used: None,
        }
    }

    /// Converts only the mappings, locations and functions in `used`.
    pub(crate) fn convert_only(&mut self, used: UsedEntries) {
        self.used = Some(used);
    }

    /// The dictionary string at `index` ("" when out of range: validation
    /// reports that; conversion does not stop for a missing name).
    pub(crate) fn string(&self, index: i32) -> &str {
        self.d.string(i64::from(index))
    }

    pub(crate) fn intern(&mut self, index: i32) -> i64 {
        // The dictionary outlives `self`: its string is borrowed, not copied.
        let d = self.d;
        self.strings.intern(d.string(i64::from(index)))
    }

    pub(crate) fn warn(&mut self, path: String, message: impl Into<String>) {
        self.warnings.push(BridgeWarning {
            path,
            message: message.into(),
        });
    }

    pub(crate) fn mappings(&mut self) -> Vec<pprof::Mapping> {
        let d = self.d;
        self.entries_to_convert(d.mapping_table.len(), UsedEntries::mapping)
            .into_iter()
            .map(|i| {
                let m = &d.mapping_table[i];
                let mut mapping = pprof::Mapping {
                    id: i as u64,
                    memory_start: m.memory_start,
                    memory_limit: m.memory_limit,
                    file_offset: m.file_offset,
                    filename: self.intern(m.filename_strindex),
                    ..Default::default()
                };
                self.mapping_attributes(&m.attribute_indices, &mut mapping);
                mapping
            })
            .collect()
    }

    /// The indices (from 1) of a table of `len` entries to convert: all of
    /// them, or those `used` says the profile reaches.
    fn entries_to_convert(&self, len: usize, used: fn(&UsedEntries, usize) -> bool) -> Vec<usize> {
        (1..len)
            .filter(|&i| self.used.as_ref().is_none_or(|u| used(u, i)))
            .collect()
    }

    /// Build ids (OpenTelemetry's `process.executable.build_id.*`) and
    /// pprof's `has_*` flags (`pprof.mapping.*`).
    pub(crate) fn mapping_attributes(&mut self, indices: &[i32], mapping: &mut pprof::Mapping) {
        for &index in indices {
            let Some(a) = entry(&self.d.attribute_table, index) else {
                continue;
            };
            let key = self.string(a.key_strindex).to_string();
            let value = a.value.as_ref();
            let flag = matches!(
                value.and_then(|v| v.value.as_ref()),
                Some(any_value::Value::BoolValue(true))
            );
            match key.as_str() {
                "pprof.mapping.has_functions" => mapping.has_functions = flag,
                "pprof.mapping.has_filenames" => mapping.has_filenames = flag,
                "pprof.mapping.has_line_numbers" => mapping.has_line_numbers = flag,
                "pprof.mapping.has_inline_frames" => mapping.has_inline_frames = flag,
                k if k.starts_with("process.executable.build_id") && mapping.build_id == 0 => {
                    let text = self.any_text(value);
                    mapping.build_id = self.strings.intern(&text);
                }
                _ => {}
            }
        }
    }

    pub(crate) fn locations(&mut self) -> Result<Vec<pprof::Location>, BridgeError> {
        let d = self.d;
        let indices = self.entries_to_convert(d.location_table.len(), UsedEntries::location_entry);
        let mut out = Vec::with_capacity(indices.len());
        for i in indices {
            let l = &d.location_table[i];
            let at = || format!("dictionary.location_table[{i}]");
            let mapping_id = table_id(l.mapping_index, d.mapping_table.len()).ok_or_else(|| {
                unresolved(at() + ".mapping_index", "mapping", l.mapping_index as u64)
            })?;
            let mut line = Vec::with_capacity(l.lines.len());
            for (j, x) in l.lines.iter().enumerate() {
                // A pprof line names its function (id 0 is invalid there):
                // a line whose function is unset carries nothing pprof keeps.
                if x.function_index == 0 {
                    if !self
                        .warnings
                        .iter()
                        .any(|w| w.message.starts_with(NO_FUNCTION))
                    {
                        self.warn(format!("{}.lines[{j}]", at()), NO_FUNCTION);
                    }
                    continue;
                }
                let function_id =
                    table_id(x.function_index, d.function_table.len()).ok_or_else(|| {
                        unresolved(
                            format!("{}.lines[{j}].function_index", at()),
                            "function",
                            x.function_index as u64,
                        )
                    })?;
                line.push(pprof::Line {
                    function_id,
                    line: x.line,
                    column: x.column,
                    ..Default::default()
                });
            }
            let is_folded = l
                .attribute_indices
                .iter()
                .any(|&a| self.attribute_key(a) == "pprof.location.is_folded");
            out.push(pprof::Location {
                id: i as u64,
                mapping_id,
                address: l.address,
                line,
                is_folded,
                ..Default::default()
            });
        }
        Ok(out)
    }

    pub(crate) fn attribute_key(&self, index: i32) -> &str {
        entry(&self.d.attribute_table, index).map_or("", |a| self.string(a.key_strindex))
    }

    pub(crate) fn functions(&mut self) -> Vec<pprof::Function> {
        let d = self.d;
        self.entries_to_convert(d.function_table.len(), UsedEntries::function)
            .into_iter()
            .map(|i| {
                let f = &d.function_table[i];
                pprof::Function {
                    id: i as u64,
                    name: self.intern(f.name_strindex),
                    system_name: self.intern(f.system_name_strindex),
                    filename: self.intern(f.filename_strindex),
                    start_line: f.start_line,
                    ..Default::default()
                }
            })
            .collect()
    }

    /// Whether the stack table's source can tell that no stack holds
    /// anything but location indices, each in the location table
    /// ([`TableSource::sole_field_range`]): then every stack passes
    /// [`Self::check_stack`] once its index is in the table.
    pub(crate) fn stacks_fit(&mut self) -> bool {
        let locations = self.d.location_table.len() as u64;
        let stacks = self.stacks;
        *self.stacks_fit.get_or_insert_with(|| {
            let range = stacks.sole_field_range(stack::LOCATION_INDICES);
            range.is_some_and(|r| r.is_empty() || *r.end() < locations)
        })
    }

    /// Checks that stack `index` is in the table, without reading it.
    pub(crate) fn check_stack_index(&self, index: i32, at: &SampleAt) -> Result<(), BridgeError> {
        match usize::try_from(index) {
            Ok(i) if i < self.stacks.entry_count() => Ok(()),
            _ => Err(unresolved(
                format!("{at}.stack_index"),
                "stack",
                index as u64,
            )),
        }
    }

    /// Checks that stack `index` is in the table and that each of its
    /// locations is, so that [`location_ids`] may take it as it is; the stack.
    pub(crate) fn check_stack(
        &mut self,
        index: i32,
        at: &SampleAt,
    ) -> Result<&dev::Stack, BridgeError> {
        self.check_stack_index(index, at)?;
        let stack = self.stacks.entry(index as usize, &mut self.stack);
        let locations = self.d.location_table.len();
        match stack
            .location_indices
            .iter()
            .position(|&l| table_id(l, locations).is_none())
        {
            None => Ok(stack),
            Some(k) => Err(unresolved(
                format!("dictionary.stack_table[{index}].location_indices[{k}]"),
                "location",
                stack.location_indices[k] as u64,
            )),
        }
    }

    /// The labels of attribute entry `index`, the `k`th of the sample `at`
    /// (an array becomes one label per element when `expand_arrays`).
    pub(crate) fn attribute_entry_labels(
        &mut self,
        (k, index): (usize, i32),
        at: &SampleAt,
        expand_arrays: bool,
    ) -> Result<Vec<pprof::Label>, BridgeError> {
        let a = entry(&self.d.attribute_table, index).ok_or_else(|| {
            unresolved(
                format!("{at}.attribute_indices[{k}]"),
                "attribute",
                index as u64,
            )
        })?;
        let key = self.intern(a.key_strindex);
        match a.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(any_value::Value::ArrayValue(array)) if expand_arrays => Ok(array
                .values
                .iter()
                .map(|element| self.value_label(key, Some(element), a.unit_strindex))
                .collect()),
            _ => Ok(vec![self.value_label(
                key,
                a.value.as_ref(),
                a.unit_strindex,
            )]),
        }
    }

    /// One label: a number with `unit` (or, for a `{value, unit}` list as
    /// pprof -> v1development writes a repeated key's odd unit, with that
    /// unit), anything else as text.
    fn value_label(&mut self, key: i64, value: Option<&AnyValue>, unit: i32) -> pprof::Label {
        let numeric = |num: i64, num_unit: i64| pprof::Label {
            key,
            num,
            num_unit,
            ..Default::default()
        };
        match value.and_then(|v| v.value.as_ref()) {
            Some(any_value::Value::IntValue(n)) => {
                let num_unit = if unit == 0 { 0 } else { self.intern(unit) };
                numeric(*n, num_unit)
            }
            Some(any_value::Value::KvlistValue(list)) => match number_with_unit(list) {
                Some((n, u)) => numeric(n, self.strings.intern(u)),
                None => self.text_label(key, value),
            },
            _ => self.text_label(key, value),
        }
    }

    fn text_label(&mut self, key: i64, value: Option<&AnyValue>) -> pprof::Label {
        let text = self.any_text(value);
        pprof::Label {
            key,
            str: self.strings.intern_label_value(&text),
            ..Default::default()
        }
    }

    /// `trace_id` and `span_id` labels (lowercase hex), as pprof producers
    /// write them, for link entry `index` (not 0), the link of sample `at`.
    pub(crate) fn link_entry_labels(
        &mut self,
        index: i32,
        at: &SampleAt,
    ) -> Result<Vec<pprof::Label>, BridgeError> {
        let link = entry(&self.d.link_table, index)
            .ok_or_else(|| unresolved(format!("{at}.link_index"), "link", index as u64))?;
        let mut labels = Vec::with_capacity(2);
        for (key, bytes) in [("trace_id", &link.trace_id), ("span_id", &link.span_id)] {
            let text = otlp_comments::hex(bytes);
            labels.push(pprof::Label {
                key: self.strings.intern(key),
                str: self.strings.intern_label_value(&text),
                ..Default::default()
            });
        }
        Ok(labels)
    }

    /// A value as label text: strings as they are (indices resolved),
    /// numbers and booleans as written, bytes in hex, lists in brackets.
    pub(crate) fn any_text(&self, value: Option<&AnyValue>) -> String {
        match value.and_then(|v| v.value.as_ref()) {
            None => String::new(),
            Some(any_value::Value::StringValue(s)) => s.clone(),
            Some(any_value::Value::StringValueStrindex(i)) => self.string(*i).to_string(),
            Some(any_value::Value::BoolValue(b)) => b.to_string(),
            Some(any_value::Value::IntValue(n)) => n.to_string(),
            Some(any_value::Value::DoubleValue(x)) => x.to_string(),
            Some(any_value::Value::BytesValue(b)) => otlp_comments::hex(b),
            Some(any_value::Value::ArrayValue(a)) => {
                let items: Vec<String> = a.values.iter().map(|v| self.any_text(Some(v))).collect();
                format!("[{}]", items.join(","))
            }
            Some(any_value::Value::KvlistValue(l)) => {
                let items: Vec<String> = l
                    .values
                    .iter()
                    .map(|kv| format!("{}={}", kv.key, self.any_text(kv.value.as_ref())))
                    .collect();
                format!("{{{}}}", items.join(","))
            }
            // The oneof is non-exhaustive: a value kind added later.
            Some(other) => format!("{other:?}"),
        }
    }
}

/// Where a sample is, for errors and warnings: written out only when one
/// is made, not for each of a million samples converted.
pub(crate) struct SampleAt<'a> {
    /// The profile's path.
    pub profile: &'a str,
    /// The sample's position in it.
    pub sample: usize,
}

impl std::fmt::Display for SampleAt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}.samples[{}]", self.profile, self.sample)
    }
}

/// The warning for lines whose function is unset (reported once).
const NO_FUNCTION: &str =
    "lines without a function (function_index 0) dropped: a pprof line must name its function";

/// The location ids of `stack`, leaf first as in pprof: its dictionary
/// indices less the zeros (entry i is location id i), as
/// [`FromDevelopment::check_stack`] found them in range, so not negative.
pub(crate) fn location_ids(stack: &dev::Stack) -> impl Iterator<Item = u32> + '_ {
    let indices = stack.location_indices.iter();
    indices.filter(|&&l| l != 0).map(|&l| l as u32)
}

/// Entry `index` of a dictionary table (`None` when negative or past the end).
pub(crate) fn entry<T>(table: &[T], index: i32) -> Option<&T> {
    usize::try_from(index).ok().and_then(|i| table.get(i))
}

/// A dictionary index as a pprof id: 0 stays 0 ("none"), others must be in
/// the table.
pub(crate) fn table_id(index: i32, len: usize) -> Option<u64> {
    match usize::try_from(index) {
        Ok(0) => Some(0),
        Ok(i) if i < len => Some(i as u64),
        _ => None,
    }
}

/// A `{value: int, unit: string}` list, as pprof -> v1development writes a
/// number whose unit differs from the rest of its key's.
fn number_with_unit(list: &KeyValueList) -> Option<(i64, &str)> {
    let [value, unit] = &list.values[..] else {
        return None;
    };
    match (
        value.key.as_str(),
        value.value.as_ref().and_then(|v| v.value.as_ref()),
        unit.key.as_str(),
        unit.value.as_ref().and_then(|v| v.value.as_ref()),
    ) {
        (
            "value",
            Some(any_value::Value::IntValue(n)),
            "unit",
            Some(any_value::Value::StringValue(u)),
        ) => Some((*n, u.as_str())),
        _ => None,
    }
}
