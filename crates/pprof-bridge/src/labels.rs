//! pprof labels as OTLP attributes, timestamps and trace links: which
//! labels are special (by their key's string, classified once per string),
//! which units numeric labels have, and when a sample's labels can become
//! attributes at all. Independent of the OTLP version written.

use std::collections::HashMap;

use protoprof_model_meta::{Fields, StringTable};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles as pprof;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::names::{NANOSECONDS, SPAN_ID_LABEL, TIMESTAMP_LABEL, TRACE_ID_LABEL};
use crate::otlp_comments;
use crate::tables::{AttrValue, AttributeTable};

/// The part of a sample label passes read.
pub(crate) const LABELS: Fields = Fields::only(&[sample::LABEL]);

/// What a string-table entry is, for the label keys and units the bridge
/// treats specially; computed once per entry instead of once per label.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum StringClass {
    Plain,
    TraceId,
    SpanId,
    Timestamp,
    Nanoseconds,
}

fn classify(strings: &[String]) -> Vec<StringClass> {
    strings
        .iter()
        .map(|s| match s.as_str() {
            TRACE_ID_LABEL => StringClass::TraceId,
            SPAN_ID_LABEL => StringClass::SpanId,
            TIMESTAMP_LABEL => StringClass::Timestamp,
            NANOSECONDS => StringClass::Nanoseconds,
            _ => StringClass::Plain,
        })
        .collect()
}

/// Units of numeric labels by key (compared as strings: a string table may
/// hold the same string twice): usable as `attribute_units` only when every
/// numeric label of the key has the same unit.
pub(crate) struct LabelUnits<'a> {
    /// Key -> (string index of the key, unit, string index of the unit), first use.
    unit: HashMap<&'a str, (i64, &'a str, i64)>,
    conflicting: std::collections::HashSet<&'a str>,
}

impl LabelUnits<'_> {
    pub fn attribute_units(&self) -> Vec<otlp::AttributeUnit> {
        let mut units: Vec<otlp::AttributeUnit> = self
            .unit
            .iter()
            .filter(|(key, (_, unit, _))| !unit.is_empty() && !self.conflicting.contains(*key))
            .map(|(_, &(attribute_key, _, unit))| otlp::AttributeUnit {
                attribute_key,
                unit,
                ..Default::default()
            })
            .collect();
        units.sort_by_key(|u| u.attribute_key);
        units
    }
}

pub(crate) fn label_units<'a, S: ProfileSamples>(
    source: &S,
    strings: &'a [String],
) -> LabelUnits<'a> {
    let mut unit: HashMap<&str, (i64, &str, i64)> = HashMap::new();
    let mut conflicting = std::collections::HashSet::new();
    let mut buffer = pprof::Sample::new();
    for i in 0..source.sample_count() {
        let labels = &source.sample_fields(i, LABELS, &mut buffer).label;
        for l in labels.iter().filter(|l| l.str == 0) {
            let (key, unit_name) = (strings.string(l.key), strings.string(l.num_unit));
            let first = unit.entry(key).or_insert((l.key, unit_name, l.num_unit));
            if first.1 != unit_name {
                conflicting.insert(key);
            }
        }
    }
    LabelUnits { unit, conflicting }
}

/// What converting one sample's labels needs from the whole profile.
pub(crate) struct LabelContext<'a> {
    pub strings: &'a [String],
    pub classes: Vec<StringClass>,
    pub units: LabelUnits<'a>,
}

impl<'a> LabelContext<'a> {
    /// Classifies the profile's strings and reads its label units.
    pub fn new<S: ProfileSamples>(source: &'a S) -> Self {
        let strings = &source.profile().string_table;
        LabelContext {
            strings,
            classes: classify(strings),
            units: label_units(source, strings),
        }
    }

    fn class(&self, i: i64) -> StringClass {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.classes.get(i))
            .copied()
            .unwrap_or(StringClass::Plain)
    }

    fn string(&self, i: i64) -> &str {
        self.strings.string(i)
    }

    fn is_timestamp(&self, l: &pprof::Label) -> bool {
        self.class(l.key) == StringClass::Timestamp
            && l.str == 0
            && self.class(l.num_unit) == StringClass::Nanoseconds
            && l.num >= 0
    }

    /// The bytes of the only label with this key class, when they are a
    /// canonical lowercase hex id of `len` bytes (so they print back the same).
    fn id_label(
        &self,
        s: &pprof::Sample,
        class: StringClass,
        len: usize,
    ) -> Option<(Vec<u8>, i64)> {
        let mut found = s.label.iter().filter(|l| self.class(l.key) == class);
        let only = found.next().filter(|_| found.next().is_none())?;
        let text = self.string(only.str);
        let bytes = otlp_comments::unhex(text)
            .filter(|b| b.len() == len && only.num == 0 && only.num_unit == 0)?;
        (otlp_comments::hex(&bytes) == text).then_some((bytes, only.key))
    }
}

/// A trace link: trace id and span id.
pub(crate) type Link = (Vec<u8>, Vec<u8>);

/// A sample's labels as attributes, timestamps and (when `links_allowed`) a
/// trace link. `None` when some label cannot be an attribute: then all of the
/// sample's labels stay deprecated labels, exactly as pprof had them.
pub(crate) fn convert_labels(
    s: &pprof::Sample,
    cx: &LabelContext,
    attributes: &mut AttributeTable,
    sample_attributes: &mut Vec<u64>,
    timestamps: &mut Vec<u64>,
    links_allowed: bool,
) -> Option<Option<Link>> {
    // A trace_id without its span_id (or the reverse) stays an attribute.
    let link = match links_allowed {
        true => {
            cx.id_label(s, StringClass::TraceId, 16)
                .zip(cx.id_label(s, StringClass::SpanId, 8))
        }
        false => None,
    };
    let link_keys = link.as_ref().map(|((_, t), (_, s))| [*t, *s]);
    let plain = |l: &pprof::Label| {
        !cx.is_timestamp(l) && !link_keys.is_some_and(|keys| keys.contains(&l.key))
    };
    if !representable(&s.label, &plain, cx) {
        return None;
    }
    for l in s.label.iter().filter(|l| plain(l)) {
        let value = if l.str != 0 {
            AttrValue::Str(l.str)
        } else {
            AttrValue::Int(l.num)
        };
        sample_attributes.push(attributes.intern(l.key, cx.string(l.key), value, cx.strings));
    }
    timestamps.extend(
        s.label
            .iter()
            .filter(|l| cx.is_timestamp(l))
            .map(|l| l.num as u64),
    );
    Some(link.map(|((trace, _), (span, _))| (trace, span)))
}

/// Attributes can hold the labels `keep` selects: keys present and unique
/// (as strings), at most one of str/num, units that attribute_units can state.
fn representable(
    labels: &[pprof::Label],
    keep: &dyn Fn(&pprof::Label) -> bool,
    cx: &LabelContext,
) -> bool {
    for (i, l) in labels.iter().enumerate().filter(|(_, l)| keep(l)) {
        let key = cx.string(l.key);
        let both = l.str != 0 && l.num != 0;
        let string_with_unit = l.str != 0 && !cx.string(l.num_unit).is_empty();
        let unit_conflict = l.str == 0 && cx.units.conflicting.contains(key);
        let duplicate_key = labels[..i]
            .iter()
            .filter(|o| keep(o))
            .any(|o| o.key == l.key || cx.string(o.key) == key);
        if key.is_empty() || both || string_with_unit || unit_conflict || duplicate_key {
            return false;
        }
    }
    true
}
