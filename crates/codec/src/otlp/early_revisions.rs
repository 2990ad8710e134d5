//! OTLP profiles v1development of opentelemetry-proto v1.4.0 to v1.7.0,
//! upgraded into the current revision's model (and encoded, so the reader
//! goes on as for current input). Unlike v1.8/v1.9 (`upgrade.rs`,
//! a renumbering), these differ in structure:
//!
//! - where the tables are: inside each Profile (v1.4/v1.5), in
//!   `ProfilesData` fields 2–8 (v1.6), in a `ProfilesDictionary` (v1.7);
//! - index 0 is a real entry there, while the current schema reserves it
//!   for the zero value: every entry moves one up (strings excepted, whose
//!   entry 0 was "" already), and unset optional indices become 0;
//! - a sample is a slice of `Profile.location_indices`: it becomes a
//!   `stack_table` entry, each distinct stack once;
//! - a Profile has several sample types: it becomes one Profile per type
//!   (the default sample type's first, since consumers show the first),
//!   each sample carrying its value of that type (timestamps on each);
//! - attributes are `KeyValue`s with units in a side table: they become
//!   `KeyValueAndUnit`s;
//! - `Mapping.has_*` and `Location.is_folded` become the `pprof.mapping.*`
//!   and `pprof.location.is_folded` attributes, comments the
//!   `pprof.profile.comment` attribute; time and duration change type.
//!
//! `ValueType.aggregation_temporality` has no place in the current schema:
//! dropped and counted for the warning. docs/codec.md has the table.

use std::collections::HashMap;

use protobuf::{Message, MessageField};
use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, ArrayValue, InstrumentationScope,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;

use crate::binary::wire::{self, WireField, LEN, VARINT};
use crate::error::{CodecError, WireProblem};
use crate::otlp::revision::OtlpRevision;

/// Field numbers of a Profile that differ between v1.4/v1.5 and v1.6/v1.7.
struct ProfileFields {
    tables_inside: bool,
    location_indices: u32,
    time: u32,
    duration: u32,
    period_type: u32,
    period: u32,
    comments: u32,
    default_sample_type: u32,
    profile_id: u32,
    dropped: u32,
    payload_format: u32,
    payload: u32,
    attribute_indices: u32,
}

const V1_4_TO_1_5: ProfileFields = ProfileFields {
    tables_inside: true,
    location_indices: 5,
    time: 11,
    duration: 12,
    period_type: 13,
    period: 14,
    comments: 15,
    default_sample_type: 16,
    profile_id: 17,
    dropped: 19,
    payload_format: 20,
    payload: 21,
    attribute_indices: 22,
};

const V1_6_TO_1_7: ProfileFields = ProfileFields {
    tables_inside: false,
    location_indices: 3,
    time: 4,
    duration: 5,
    period_type: 6,
    period: 7,
    comments: 8,
    default_sample_type: 9,
    profile_id: 10,
    dropped: 11,
    payload_format: 12,
    payload: 13,
    attribute_indices: 14,
};

/// v1.4.0's `Profile.attributes`, inline KeyValues (v1.5.0 replaced them).
const V1_4_PROFILE_ATTRIBUTES: u32 = 18;

/// An upgraded message (encoded) and what it could not carry.
pub(crate) struct Rebuilt {
    pub bytes: Vec<u8>,
    /// `ValueType.aggregation_temporality` fields dropped.
    pub temporalities_dropped: usize,
    /// Samples whose timestamps did not pair with their values.
    pub timestamp_lists_dropped: usize,
    /// Samples whose location slice lay outside `location_indices`.
    pub slices_out_of_range: usize,
}

/// The upgraded message (encoded), and what it could not carry.
pub(crate) fn upgrade(bytes: &[u8], revision: OtlpRevision) -> Result<Rebuilt, CodecError> {
    let layout = match revision {
        OtlpRevision::V1_4To1_5 => &V1_4_TO_1_5,
        _ => &V1_6_TO_1_7,
    };
    let mut up = Upgrader::new(layout);
    let mut out = dev::ProfilesData::new();
    let top = wire::all_fields(bytes, "")?;
    // The shared tables first: profiles refer to them.
    let shared = match revision {
        OtlpRevision::V1_6 => Some(Tables::read(&top, [2, 3, 4, 5, 6, 7, 8])?),
        OtlpRevision::V1_7 => match top.iter().find(|f| f.number == 2 && f.wire_type == LEN) {
            Some(d) => Some(Tables::read(
                &wire::all_fields(d.value, "dictionary")?,
                [1, 2, 3, 4, 5, 6, 7],
            )?),
            None => None,
        },
        _ => None,
    };
    let base = match &shared {
        Some(tables) => up.tables(tables)?,
        None => Bases::default(),
    };
    for (i, f) in top
        .iter()
        .enumerate()
        .filter(|(_, f)| f.number == 1 && f.wire_type == LEN)
    {
        let at = format!("resource_profiles[{i}]");
        out.resource_profiles
            .push(up.resource_profiles(f.value, &base, &at)?);
    }
    out.dictionary = MessageField::some(up.finish());
    let encoded = out.write_to_bytes().map_err(|e| CodecError::Encode {
        message: "opentelemetry.proto.profiles.v1development.ProfilesData".into(),
        detail: e.to_string(),
    })?;
    Ok(Rebuilt {
        bytes: encoded,
        temporalities_dropped: up.temporalities_dropped,
        timestamp_lists_dropped: up.timestamp_lists_dropped,
        slices_out_of_range: up.slices_out_of_range,
    })
}

/// Where one old table's entries went in the new dictionary.
#[derive(Default, Clone, Copy)]
struct TableBase {
    /// New index of old index 1 is `base + 1`, and so on.
    base: i32,
    /// The old table's entry 0 was the zero value, as producers wrote it
    /// before the schema required it: old index 0 means "unset", new 0.
    zero_first: bool,
}

impl TableBase {
    /// The base for a table about to be appended to a new one of `len`
    /// entries; `entries` are the old table's.
    fn new(len: usize, entries: &[&[u8]]) -> Self {
        let zero_first = entries.first().is_some_and(|e| is_zero_message(e));
        TableBase {
            base: len as i32 - i32::from(zero_first),
            zero_first,
        }
    }

    fn index(self, old: i64) -> i32 {
        match (old, self.zero_first) {
            (0, true) => 0,
            _ => self.base + old as i32,
        }
    }

    /// The old entries to append (the zero one is not).
    fn entries<'t, 'a>(self, entries: &'t [&'a [u8]]) -> &'t [&'a [u8]] {
        &entries[usize::from(self.zero_first)..]
    }
}

/// Where one set of old tables went in the new dictionary, and the old
/// string indices' new ones.
#[derive(Default, Clone)]
struct Bases {
    mapping: TableBase,
    location: TableBase,
    function: TableBase,
    link: TableBase,
    attribute: TableBase,
    strings: Vec<i32>,
}

impl Bases {
    fn string(&self, old: i64) -> i32 {
        usize::try_from(old)
            .ok()
            .and_then(|i| self.strings.get(i))
            .copied()
            .unwrap_or(0)
    }
}

/// Whether an encoded message is its type's zero value: every field it
/// has is 0 or empty (some writers spell out zero fields).
fn is_zero_message(bytes: &[u8]) -> bool {
    wire::fields(bytes).all(|f| match f {
        Ok(f) if f.wire_type == LEN => f.value.is_empty(),
        Ok(f) => f.value.iter().all(|&b| b == 0),
        Err(_) => false,
    })
}

/// The old tables, as their encoded entries.
struct Tables<'a> {
    mappings: Vec<&'a [u8]>,
    locations: Vec<&'a [u8]>,
    functions: Vec<&'a [u8]>,
    links: Vec<&'a [u8]>,
    strings: Vec<&'a [u8]>,
    attributes: Vec<&'a [u8]>,
    units: Vec<&'a [u8]>,
}

impl<'a> Tables<'a> {
    /// The tables in `fields`, at numbers mapping, location, function,
    /// link, string, attribute, attribute unit.
    fn read(fields: &[WireField<'a>], numbers: [u32; 7]) -> Result<Self, CodecError> {
        let table = |n: u32| -> Vec<&'a [u8]> {
            fields
                .iter()
                .filter(|f| f.number == n && f.wire_type == LEN)
                .map(|f| f.value)
                .collect()
        };
        Ok(Tables {
            mappings: table(numbers[0]),
            locations: table(numbers[1]),
            functions: table(numbers[2]),
            links: table(numbers[3]),
            strings: table(numbers[4]),
            attributes: table(numbers[5]),
            units: table(numbers[6]),
        })
    }
}

struct Upgrader {
    layout: &'static ProfileFields,
    d: dev::ProfilesDictionary,
    strings: HashMap<String, i32>,
    attributes: HashMap<Vec<u8>, i32>,
    stacks: HashMap<Vec<i32>, i32>,
    temporalities_dropped: usize,
    timestamp_lists_dropped: usize,
    slices_out_of_range: usize,
}

/// The stack index a sample gets whose location slice lies outside its
/// profile's `location_indices`: out of range of any stack table, so that
/// validation reports the sample and analysis names it, where the rebuild
/// failing would have stopped every command.
const STACK_OUT_OF_RANGE: i32 = i32::MAX;

impl Upgrader {
    fn new(layout: &'static ProfileFields) -> Self {
        let d = dev::ProfilesDictionary {
            mapping_table: vec![dev::Mapping::new()],
            location_table: vec![dev::Location::new()],
            function_table: vec![dev::Function::new()],
            link_table: vec![dev::Link {
                trace_id: vec![0; 16],
                span_id: vec![0; 8],
                ..Default::default()
            }],
            string_table: vec![String::new()],
            attribute_table: vec![dev::KeyValueAndUnit::new()],
            stack_table: vec![dev::Stack::new()],
            ..Default::default()
        };
        Upgrader {
            layout,
            d,
            strings: HashMap::from([(String::new(), 0)]),
            attributes: HashMap::new(),
            stacks: HashMap::from([(Vec::new(), 0)]),
            temporalities_dropped: 0,
            timestamp_lists_dropped: 0,
            slices_out_of_range: 0,
        }
    }

    fn finish(&mut self) -> dev::ProfilesDictionary {
        std::mem::take(&mut self.d)
    }

    fn intern(&mut self, s: &str) -> i32 {
        if let Some(&i) = self.strings.get(s) {
            return i;
        }
        self.d.string_table.push(s.to_string());
        let i = self.d.string_table.len() as i32 - 1;
        self.strings.insert(s.to_string(), i);
        i
    }

    /// An attribute entry (each distinct one once).
    fn attribute(&mut self, key: &str, value: AnyValue, unit: i32) -> i32 {
        let entry = dev::KeyValueAndUnit {
            key_strindex: self.intern(key),
            value: MessageField::some(value),
            unit_strindex: unit,
            ..Default::default()
        };
        let encoded = entry.write_to_bytes().unwrap_or_default();
        let table = &mut self.d.attribute_table;
        *self.attributes.entry(encoded).or_insert_with(|| {
            table.push(entry);
            table.len() as i32 - 1
        })
    }

    fn flag(&mut self, key: &str) -> i32 {
        self.attribute(key, any(Value::BoolValue(true)), 0)
    }

    /// Appends a set of old tables to the dictionary.
    fn tables(&mut self, t: &Tables) -> Result<Bases, CodecError> {
        let mut base = Bases {
            strings: Vec::with_capacity(t.strings.len()),
            ..Default::default()
        };
        for s in &t.strings {
            let s = std::str::from_utf8(s).map_err(|_| invalid_utf8("string_table"))?;
            let i = self.intern(s);
            base.strings.push(i);
        }
        base.attribute = TableBase::new(self.d.attribute_table.len(), &t.attributes);
        self.attribute_table(t, &base)?;
        base.function = TableBase::new(self.d.function_table.len(), &t.functions);
        for f in base.function.entries(&t.functions) {
            let f = self.function(f, &base)?;
            self.d.function_table.push(f);
        }
        base.mapping = TableBase::new(self.d.mapping_table.len(), &t.mappings);
        for m in base.mapping.entries(&t.mappings) {
            let m = self.mapping(m, &base)?;
            self.d.mapping_table.push(m);
        }
        base.link = TableBase::new(self.d.link_table.len(), &t.links);
        for l in base.link.entries(&t.links) {
            let link = dev::Link::parse_from_bytes(l).map_err(|e| decode_error("link_table", e))?;
            self.d.link_table.push(link);
        }
        base.location = TableBase::new(self.d.location_table.len(), &t.locations);
        for l in base.location.entries(&t.locations) {
            let l = self.location(l, &base)?;
            self.d.location_table.push(l);
        }
        Ok(base)
    }

    /// Every old attribute as a new entry, in order (so old index i is
    /// found from the base even where two are equal), with its key's unit.
    fn attribute_table(&mut self, t: &Tables, base: &Bases) -> Result<(), CodecError> {
        let mut units: HashMap<i32, i32> = HashMap::new();
        for u in &t.units {
            let f = wire::all_fields(u, "attribute_units")?;
            units.insert(base.string(int(&f, 1)?), base.string(int(&f, 2)?));
        }
        for a in base.attribute.entries(&t.attributes) {
            let f = wire::all_fields(a, "attribute_table")?;
            let key = text(&f, 1)?;
            let value = message::<AnyValue>(&f, 2)?;
            let entry = dev::KeyValueAndUnit {
                key_strindex: self.intern(&key),
                unit_strindex: units.get(&self.intern(&key)).copied().unwrap_or(0),
                value: MessageField::some(value),
                ..Default::default()
            };
            self.d.attribute_table.push(entry);
        }
        Ok(())
    }

    fn function(&mut self, bytes: &[u8], base: &Bases) -> Result<dev::Function, CodecError> {
        let f = wire::all_fields(bytes, "function_table")?;
        Ok(dev::Function {
            name_strindex: base.string(int(&f, 1)?),
            system_name_strindex: base.string(int(&f, 2)?),
            filename_strindex: base.string(int(&f, 3)?),
            start_line: int(&f, 4)?,
            ..Default::default()
        })
    }

    fn mapping(&mut self, bytes: &[u8], base: &Bases) -> Result<dev::Mapping, CodecError> {
        let f = wire::all_fields(bytes, "mapping_table")?;
        let mut attribute_indices: Vec<i32> = ints(&f, 5)?
            .into_iter()
            .map(|i| base.attribute.index(i))
            .collect();
        for (number, key) in [
            (6, "pprof.mapping.has_functions"),
            (7, "pprof.mapping.has_filenames"),
            (8, "pprof.mapping.has_line_numbers"),
            (9, "pprof.mapping.has_inline_frames"),
        ] {
            if int(&f, number)? != 0 {
                attribute_indices.push(self.flag(key));
            }
        }
        Ok(dev::Mapping {
            memory_start: int(&f, 1)? as u64,
            memory_limit: int(&f, 2)? as u64,
            file_offset: int(&f, 3)? as u64,
            filename_strindex: base.string(int(&f, 4)?),
            attribute_indices,
            ..Default::default()
        })
    }

    fn location(&mut self, bytes: &[u8], base: &Bases) -> Result<dev::Location, CodecError> {
        let f = wire::all_fields(bytes, "location_table")?;
        let mut lines = Vec::new();
        for l in f.iter().filter(|x| x.number == 3 && x.wire_type == LEN) {
            let lf = wire::all_fields(l.value, "location_table.line")?;
            lines.push(dev::Line {
                function_index: base.function.index(int(&lf, 1)?),
                line: int(&lf, 2)?,
                column: int(&lf, 3)?,
                ..Default::default()
            });
        }
        let mut attribute_indices: Vec<i32> = ints(&f, 5)?
            .into_iter()
            .map(|i| base.attribute.index(i))
            .collect();
        if int(&f, 4)? != 0 {
            attribute_indices.push(self.flag("pprof.location.is_folded"));
        }
        Ok(dev::Location {
            // Optional: absent means no mapping.
            mapping_index: match present(&f, 1) {
                true => base.mapping.index(int(&f, 1)?),
                false => 0,
            },
            address: int(&f, 2)? as u64,
            lines,
            attribute_indices,
            ..Default::default()
        })
    }

    fn resource_profiles(
        &mut self,
        bytes: &[u8],
        base: &Bases,
        at: &str,
    ) -> Result<dev::ResourceProfiles, CodecError> {
        let f = wire::all_fields(bytes, at)?;
        let mut out = dev::ResourceProfiles {
            resource: optional_message::<Resource>(&f, 1)?,
            schema_url: text(&f, 3)?,
            ..Default::default()
        };
        for (j, s) in f
            .iter()
            .filter(|x| x.number == 2 && x.wire_type == LEN)
            .enumerate()
        {
            let at = format!("{at}.scope_profiles[{j}]");
            let sf = wire::all_fields(s.value, &at)?;
            let mut scope = dev::ScopeProfiles {
                scope: optional_message::<InstrumentationScope>(&sf, 1)?,
                schema_url: text(&sf, 3)?,
                ..Default::default()
            };
            for (k, p) in sf
                .iter()
                .filter(|x| x.number == 2 && x.wire_type == LEN)
                .enumerate()
            {
                let at = format!("{at}.profiles[{k}]");
                scope.profiles.extend(self.profile(p.value, base, &at)?);
            }
            out.scope_profiles.push(scope);
        }
        Ok(out)
    }
}

/// The parts of an old Profile that every new Profile made from it shares.
struct ProfileHeader {
    types: Vec<(i32, i32)>,
    default_type: usize,
}

impl Upgrader {
    /// One old Profile as one new Profile per sample type.
    fn profile(
        &mut self,
        bytes: &[u8],
        shared: &Bases,
        at: &str,
    ) -> Result<Vec<dev::Profile>, CodecError> {
        let layout = self.layout;
        let f = wire::all_fields(bytes, at)?;
        let base = match layout.tables_inside {
            true => self.tables(&Tables::read(&f, [3, 4, 6, 9, 10, 7, 8])?)?,
            false => shared.clone(),
        };
        let header = self.header(&f, &base)?;
        let template = self.profile_template(&f, &base)?;
        let location_indices: Vec<i64> = ints(&f, layout.location_indices)?;
        let mut samples = Vec::new();
        for (i, s) in f
            .iter()
            .filter(|x| x.number == 2 && x.wire_type == LEN)
            .enumerate()
        {
            samples.push(self.sample(
                s.value,
                &base,
                &location_indices,
                &format!("{at}.sample[{i}]"),
            )?);
        }
        let count = header.types.len().max(1);
        let mut order: Vec<usize> = (0..count).collect();
        if header.default_type < count {
            order.retain(|&k| k != header.default_type);
            order.insert(0, header.default_type);
        }
        let mut unpaired = 0;
        let profiles: Vec<dev::Profile> = order
            .iter()
            .enumerate()
            .map(|(n, &k)| {
                let mut p = template.clone();
                if n > 0 {
                    p.profile_id.clear(); // ids are unique: the first keeps it
                }
                p.sample_type = header
                    .types
                    .get(k)
                    .map(|&(type_strindex, unit_strindex)| dev::ValueType {
                        type_strindex,
                        unit_strindex,
                        ..Default::default()
                    })
                    .into();
                p.samples = samples
                    .iter()
                    .map(|(s, values)| {
                        let mut s = s.clone();
                        s.values = values.get(k).map(|v| vec![*v]).unwrap_or_default();
                        // Values were aggregates, timestamps a side list; now
                        // they pair up event by event.
                        if !s.values.is_empty()
                            && s.values.len() != s.timestamps_unix_nano.len()
                            && !s.timestamps_unix_nano.is_empty()
                        {
                            s.timestamps_unix_nano.clear();
                            unpaired += 1;
                        }
                        s
                    })
                    .collect();
                p
            })
            .collect();
        self.timestamp_lists_dropped += unpaired;
        Ok(profiles)
    }

    /// Sample types (temporality dropped) and the default one's position.
    fn header(&mut self, f: &[WireField], base: &Bases) -> Result<ProfileHeader, CodecError> {
        let mut types = Vec::new();
        for t in f.iter().filter(|x| x.number == 1 && x.wire_type == LEN) {
            types.push(self.value_type(t.value, base)?);
        }
        let default = int(f, self.layout.default_sample_type)?;
        let default_type = match self.layout.tables_inside {
            // v1.4/v1.5: a string index naming the type.
            true => {
                let name = base.string(default);
                match name {
                    0 => 0,
                    _ => types.iter().position(|t| t.0 == name).unwrap_or(0),
                }
            }
            false => usize::try_from(default).unwrap_or(0),
        };
        Ok(ProfileHeader {
            types,
            default_type,
        })
    }

    fn value_type(&mut self, bytes: &[u8], base: &Bases) -> Result<(i32, i32), CodecError> {
        let f = wire::all_fields(bytes, "sample_type")?;
        if present(&f, 3) {
            self.temporalities_dropped += 1;
        }
        Ok((base.string(int(&f, 1)?), base.string(int(&f, 2)?)))
    }

    /// A new Profile with everything but sample type and samples.
    fn profile_template(
        &mut self,
        f: &[WireField],
        base: &Bases,
    ) -> Result<dev::Profile, CodecError> {
        let l = self.layout;
        let mut attribute_indices: Vec<i32> = ints(f, l.attribute_indices)?
            .into_iter()
            .map(|i| base.attribute.index(i))
            .collect();
        if l.tables_inside {
            for kv in f
                .iter()
                .filter(|x| x.number == V1_4_PROFILE_ATTRIBUTES && x.wire_type == LEN)
            {
                let kf = wire::all_fields(kv.value, "attributes")?;
                let (key, value) = (text(&kf, 1)?, message::<AnyValue>(&kf, 2)?);
                attribute_indices.push(self.attribute(&key, value, 0));
            }
        }
        let comments: Vec<AnyValue> = ints(f, l.comments)?
            .into_iter()
            .map(|c| {
                any(Value::StringValue(
                    self.d.string_table[base.string(c) as usize].clone(),
                ))
            })
            .collect();
        if !comments.is_empty() {
            let value = any(Value::ArrayValue(ArrayValue {
                values: comments,
                ..Default::default()
            }));
            attribute_indices.push(self.attribute("pprof.profile.comment", value, 0));
        }
        let period_type = match f
            .iter()
            .find(|x| x.number == l.period_type && x.wire_type == LEN)
        {
            Some(t) => {
                let (type_strindex, unit_strindex) = self.value_type(t.value, base)?;
                MessageField::some(dev::ValueType {
                    type_strindex,
                    unit_strindex,
                    ..Default::default()
                })
            }
            None => MessageField::none(),
        };
        Ok(dev::Profile {
            time_unix_nano: int(f, l.time)? as u64,
            duration_nano: int(f, l.duration)? as u64,
            period_type,
            period: int(f, l.period)?,
            profile_id: bytes_field(f, l.profile_id),
            dropped_attributes_count: int(f, l.dropped)? as u32,
            original_payload_format: text(f, l.payload_format)?,
            original_payload: bytes_field(f, l.payload),
            attribute_indices,
            ..Default::default()
        })
    }

    /// The index of `stack` in the stack table, added when new.
    fn stack_index(&mut self, stack: Vec<i32>) -> i32 {
        if let Some(&i) = self.stacks.get(&stack) {
            return i;
        }
        self.d.stack_table.push(dev::Stack {
            location_indices: stack.clone(),
            ..Default::default()
        });
        let i = self.d.stack_table.len() as i32 - 1;
        self.stacks.insert(stack, i);
        i
    }

    /// A sample without values, and its values (one per old sample type).
    fn sample(
        &mut self,
        bytes: &[u8],
        base: &Bases,
        location_indices: &[i64],
        at: &str,
    ) -> Result<(dev::Sample, Vec<i64>), CodecError> {
        let f = wire::all_fields(bytes, at)?;
        let (start, length) = (int(&f, 1)?, int(&f, 2)?);
        let slice = usize::try_from(start)
            .ok()
            .zip(usize::try_from(length).ok())
            .and_then(|(s, n)| location_indices.get(s..s.checked_add(n)?));
        let stack_index = match slice {
            Some(slice) => {
                self.stack_index(slice.iter().map(|&l| base.location.index(l)).collect())
            }
            None => {
                self.slices_out_of_range += 1;
                STACK_OUT_OF_RANGE
            }
        };
        let sample = dev::Sample {
            stack_index,
            attribute_indices: ints(&f, 4)?
                .into_iter()
                .map(|i| base.attribute.index(i))
                .collect(),
            link_index: match present(&f, 5) {
                true => base.link.index(int(&f, 5)?),
                false => 0,
            },
            timestamps_unix_nano: ints(&f, 6)?.into_iter().map(|t| t as u64).collect(),
            ..Default::default()
        };
        Ok((sample, ints(&f, 3)?))
    }
}

fn any(value: Value) -> AnyValue {
    AnyValue {
        value: Some(value),
        ..Default::default()
    }
}

fn problem(at: &str, problem: WireProblem) -> CodecError {
    CodecError::Wire {
        offset: 0,
        path: at.to_string(),
        problem,
    }
}

fn decode_error(at: &str, e: protobuf::Error) -> CodecError {
    invalid(at, e.to_string())
}

/// Old-revision data the upgrade cannot make sense of.
fn invalid(at: &str, detail: String) -> CodecError {
    CodecError::Decode {
        message: format!("OTLP profiles v1development (older revision), {at}"),
        detail,
    }
}

fn invalid_utf8(at: &str) -> CodecError {
    CodecError::InvalidUtf8 {
        offset: 0,
        path: at.to_string(),
    }
}

fn present(f: &[WireField], number: u32) -> bool {
    f.iter().any(|x| x.number == number)
}

/// The last value of a varint field (proto3: the last one wins), 0 when absent.
fn int(f: &[WireField], number: u32) -> Result<i64, CodecError> {
    match f.iter().rev().find(|x| x.number == number) {
        Some(x) if x.wire_type == VARINT => {
            let v =
                wire::read_varint(x.value, &mut 0, x.value.len()).map_err(|p| problem("", p))?;
            Ok(v as i64)
        }
        Some(x) => Err(invalid(
            &format!("field {number}"),
            format!("not a varint (wire type {})", x.wire_type),
        )),
        None => Ok(0),
    }
}

/// Every value of a repeated varint field, packed or not.
fn ints(f: &[WireField], number: u32) -> Result<Vec<i64>, CodecError> {
    let mut out = Vec::new();
    for x in f.iter().filter(|x| x.number == number) {
        let mut pos = 0;
        let end = x.value.len();
        if x.wire_type == LEN {
            while pos < end {
                out.push(
                    wire::read_varint(x.value, &mut pos, end).map_err(|p| problem("", p))? as i64,
                );
            }
        } else {
            out.push(wire::read_varint(x.value, &mut pos, end).map_err(|p| problem("", p))? as i64);
        }
    }
    Ok(out)
}

fn bytes_field(f: &[WireField], number: u32) -> Vec<u8> {
    f.iter()
        .rev()
        .find(|x| x.number == number && x.wire_type == LEN)
        .map_or_else(Vec::new, |x| x.value.to_vec())
}

fn text(f: &[WireField], number: u32) -> Result<String, CodecError> {
    let bytes = bytes_field(f, number);
    String::from_utf8(bytes).map_err(|_| invalid_utf8(&format!("field {number}")))
}

fn message<M: Message>(f: &[WireField], number: u32) -> Result<M, CodecError> {
    Ok(optional_message::<M>(f, number)?.unwrap_or_default())
}

fn optional_message<M: Message>(
    f: &[WireField],
    number: u32,
) -> Result<MessageField<M>, CodecError> {
    match f
        .iter()
        .rev()
        .find(|x| x.number == number && x.wire_type == LEN)
    {
        Some(x) => M::parse_from_bytes(x.value)
            .map(MessageField::some)
            .map_err(|e| decode_error(M::NAME, e)),
        None => Ok(MessageField::none()),
    }
}

#[cfg(test)]
mod tests {
    use protoprof_model_meta::wire::{write_len_prefix, write_tag, write_varint, VARINT};

    use super::*;

    fn len(out: &mut Vec<u8>, number: u32, payload: &[u8]) {
        write_len_prefix(out, number, payload.len());
        out.extend_from_slice(payload);
    }

    fn varint(out: &mut Vec<u8>, number: u32, value: u64) {
        write_tag(out, number, VARINT);
        write_varint(out, value);
    }

    /// A string, a function, a location, a mapping: the tables both tests use.
    fn tables(out: &mut Vec<u8>, numbers: [u32; 5], strings: &[&str]) {
        let [mapping, location, function, string, attribute] = numbers;
        let mut m = Vec::new();
        varint(&mut m, 1, 0x1000);
        varint(&mut m, 2, 0x2000);
        varint(&mut m, 6, 1); // has_functions
        len(out, mapping, &m);
        let mut line = Vec::new();
        varint(&mut line, 1, 0); // function 0: a real one here
        varint(&mut line, 2, 42);
        let mut l = Vec::new();
        varint(&mut l, 1, 0); // mapping_index 0, present: the first mapping
        len(&mut l, 3, &line);
        len(out, location, &l);
        let mut f = Vec::new();
        varint(&mut f, 1, 1);
        len(out, function, &f);
        for s in strings {
            len(out, string, s.as_bytes());
        }
        let mut kv = Vec::new();
        len(&mut kv, 1, b"thread.name");
        let mut value = Vec::new();
        len(&mut value, 1, b"main");
        len(&mut kv, 2, &value);
        len(out, attribute, &kv);
    }

    /// One sample of two types (values 3 and 30) on the one location, with
    /// attribute 0, in a profile whose default type is the second.
    fn profile(out: &mut Vec<u8>, location_indices: u32, default: (u32, u64)) {
        for (t, u) in [(2, 3), (4, 3)] {
            let mut vt = Vec::new();
            varint(&mut vt, 1, t);
            varint(&mut vt, 2, u);
            varint(&mut vt, 3, 1); // temporality
            len(out, 1, &vt);
        }
        let mut s = Vec::new();
        varint(&mut s, 1, 0);
        varint(&mut s, 2, 1);
        len(&mut s, 3, &[3, 30]);
        len(&mut s, 4, &[0]);
        len(out, 2, &s);
        len(out, location_indices, &[0]);
        varint(out, default.0, default.1);
    }

    fn check(data: &dev::ProfilesData, upgraded: &Rebuilt) {
        let d = data.dictionary.as_ref().unwrap();
        let profiles = &data.resource_profiles[0].scope_profiles[0].profiles;
        // The default type (cpu) first, one value each, temporalities counted.
        let names: Vec<&str> = profiles
            .iter()
            .map(|p| d.string_table[p.sample_type.type_strindex as usize].as_str())
            .collect();
        assert_eq!(names, ["cpu", "samples"]);
        assert_eq!(profiles[0].samples[0].values, [30]);
        assert_eq!(profiles[1].samples[0].values, [3]);
        assert_eq!(upgraded.temporalities_dropped, 2);
        // Every entry one up behind the zero entries, the stack interned.
        let stack = &d.stack_table[profiles[0].samples[0].stack_index as usize];
        assert_eq!(stack.location_indices, [1]);
        let location = &d.location_table[1];
        assert_eq!(
            (location.mapping_index, location.lines[0].function_index),
            (1, 1)
        );
        assert_eq!(
            d.string_table[d.function_table[1].name_strindex as usize],
            "main"
        );
        let attribute = &d.attribute_table[profiles[0].samples[0].attribute_indices[0] as usize];
        assert_eq!(
            d.string_table[attribute.key_strindex as usize],
            "thread.name"
        );
        let flag = &d.attribute_table[d.mapping_table[1].attribute_indices[0] as usize];
        assert_eq!(
            d.string_table[flag.key_strindex as usize],
            "pprof.mapping.has_functions"
        );
    }

    #[test]
    fn v1_6_tables_in_profiles_data() {
        let strings = ["", "main", "samples", "count", "cpu"];
        let mut p = Vec::new();
        profile(&mut p, 3, (9, 1)); // default_sample_type_index 1
        let (mut sp, mut rp, mut top) = (Vec::new(), Vec::new(), Vec::new());
        len(&mut sp, 2, &p);
        len(&mut rp, 2, &sp);
        len(&mut top, 1, &rp);
        tables(&mut top, [2, 3, 4, 6, 7], &strings);
        let upgraded = upgrade(&top, OtlpRevision::V1_6).unwrap();
        let data = dev::ProfilesData::parse_from_bytes(&upgraded.bytes).unwrap();
        check(&data, &upgraded);
    }

    #[test]
    fn v1_4_tables_in_each_profile() {
        let strings = ["", "main", "samples", "count", "cpu"];
        let mut p = Vec::new();
        profile(&mut p, 5, (16, 4)); // default_sample_type_strindex "cpu"
        tables(&mut p, [3, 4, 6, 10, 7], &strings);
        let (mut sp, mut rp, mut top) = (Vec::new(), Vec::new(), Vec::new());
        len(&mut sp, 2, &p);
        len(&mut rp, 2, &sp);
        len(&mut top, 1, &rp);
        let upgraded = upgrade(&top, OtlpRevision::V1_4To1_5).unwrap();
        let data = dev::ProfilesData::parse_from_bytes(&upgraded.bytes).unwrap();
        check(&data, &upgraded);
    }
}
