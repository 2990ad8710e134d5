//! v1development -> pprof for messages in the shape pprof -> v1development
//! writes (one resource, one scope whose `pprof.scope.sample_type_order`
//! names one Profile per pprof sample type, the Profiles lining up sample
//! by sample): the pprof profile comes back as it was, with sample types in
//! their order, one sample per position and every `pprof.*` attribute
//! restored. What pprof has no field for (resource, scope, profile ids,
//! other profile attributes) goes into `otlp:` comments, which
//! pprof -> v1development reads back.

use protoprof_model_otlp::opentelemetry::proto::common::v1::{
    any_value::Value, AnyValue, KeyValue,
};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
use protoprof_model_pprof::perftools::profiles as pprof;

use crate::development::samples::{DevelopmentAsPprof, Layout, SampleTables};
use crate::development::source::DevelopmentSource;
use crate::development::tables::{entry, FromDevelopment, SampleAt};
use crate::error::BridgeError;
use crate::names::semconv;
use crate::otlp_comments::{key, CommentWriter};

/// A message in the shape pprof -> v1development writes.
pub(crate) struct PprofShape<'a> {
    resource: &'a dev::ResourceProfiles,
    scope: &'a dev::ScopeProfiles,
    /// Element k: the position of the Profile holding pprof sample type k.
    order: Vec<usize>,
    /// The values of the profiles after the first, sample by sample (read
    /// by the shape check, so converting a sample reads one OTLP sample).
    later_values: Vec<i64>,
}

/// The outcome of looking for the pprof shape.
pub(crate) enum Shape<'a> {
    /// No `pprof.scope.sample_type_order`: data from elsewhere.
    Other,
    /// The attribute is there but the message does not line up (edited or
    /// merged since): why.
    Broken(String),
    /// The shape, ready to restore.
    Pprof(PprofShape<'a>),
}

/// Whether `data` has the shape pprof -> v1development writes.
pub(crate) fn shape<'a>(data: &'a dev::ProfilesData, samples: &DevelopmentSource) -> Shape<'a> {
    let Some(order) = sample_type_order(data) else {
        return Shape::Other;
    };
    let ([resource], [scope]) = (
        &data.resource_profiles[..],
        &data.resource_profiles[0].scope_profiles[..],
    ) else {
        return Shape::Broken("more than one resource or scope".into());
    };
    let profiles = &scope.profiles;
    let mut seen = vec![false; profiles.len()];
    let permutation = order.len().max(1) == profiles.len()
        && order
            .iter()
            .all(|&k| k < seen.len() && !std::mem::replace(&mut seen[k], true));
    if !permutation {
        return Shape::Broken(format!(
            "its order {order:?} does not name each of the {} profiles once",
            profiles.len()
        ));
    }
    let later_values = match aligned_values(profiles, order.len(), samples) {
        Ok(values) => values,
        Err(why) => return Shape::Broken(why),
    };
    Shape::Pprof(PprofShape {
        resource,
        scope,
        order,
        later_values,
    })
}

/// `pprof.scope.sample_type_order` of the first scope, as positions.
fn sample_type_order(data: &dev::ProfilesData) -> Option<Vec<usize>> {
    let scope = data
        .resource_profiles
        .first()?
        .scope_profiles
        .first()?
        .scope
        .as_ref()?;
    let kv = scope
        .attributes
        .iter()
        .find(|kv| kv.key == semconv::SAMPLE_TYPE_ORDER)?;
    let Some(Value::ArrayValue(array)) = kv.value.as_ref().and_then(|v| v.value.as_ref()) else {
        return Some(vec![usize::MAX]); // present but not a list: reported as broken
    };
    let positions = array.values.iter().map(|v| match v.value {
        Some(Value::IntValue(n)) => usize::try_from(n).unwrap_or(usize::MAX),
        _ => usize::MAX,
    });
    Some(positions.collect())
}

/// The values of the profiles after the first, sample by sample, when
/// the profiles hold one pprof sample per position; otherwise why not.
/// They do when they have the same header, the same sample count, and
/// sample i with the same stack, attributes and link everywhere, one value
/// each (none when pprof had no sample type), no timestamps.
fn aligned_values(
    profiles: &[dev::Profile],
    types: usize,
    samples: &DevelopmentSource,
) -> Result<Vec<i64>, String> {
    let first = &profiles[0];
    let header = |p: &dev::Profile| {
        (
            p.time_unix_nano,
            p.duration_nano,
            p.period,
            p.period_type.clone(),
            p.attribute_indices.clone(),
        )
    };
    let count = samples.sample_count(0);
    for (k, p) in profiles.iter().enumerate() {
        if header(p) != header(first) || samples.sample_count(k) != count {
            return Err(format!(
                "profile {k} differs from profile 0 in its header or sample count"
            ));
        }
    }
    let width = usize::from(types > 0);
    let mut later_values = Vec::with_capacity(count * width * (profiles.len() - 1));
    let (mut first_buffer, mut buffer) = (dev::Sample::new(), dev::Sample::new());
    for i in 0..count {
        let s0 = samples.sample(0, i, &mut first_buffer);
        for k in 0..profiles.len() {
            let s = if k == 0 {
                s0
            } else {
                samples.sample(k, i, &mut buffer)
            };
            let same = s.stack_index == s0.stack_index
                && s.attribute_indices == s0.attribute_indices
                && s.link_index == s0.link_index;
            if !same || s.values.len() != width || !s.timestamps_unix_nano.is_empty() {
                return Err(format!(
                    "sample {i} of profile {k} is not pprof's sample {i}"
                ));
            }
            if k > 0 {
                later_values.extend_from_slice(&s.values);
            }
        }
    }
    Ok(later_values)
}

impl PprofShape<'_> {
    /// The pprof profile back, without its samples, and how to read them.
    pub(crate) fn restore(
        mut self,
        cx: &mut FromDevelopment,
        samples: &DevelopmentSource,
    ) -> Result<DevelopmentAsPprof, BridgeError> {
        let mut out = pprof::Profile {
            mapping: cx.mappings(),
            location: cx.locations()?,
            function: cx.functions(),
            ..Default::default()
        };
        let tables = self.note_samples(cx, samples)?;
        let first = &self.scope.profiles[0];
        out.sample_type = self
            .order
            .iter()
            .map(|&k| value_type(cx, &self.scope.profiles[k].sample_type))
            .collect();
        if first.period_type.is_some() {
            out.period_type = protobuf::MessageField::some(value_type(cx, &first.period_type));
        }
        out.period = first.period;
        out.time_nanos = first.time_unix_nano as i64;
        out.duration_nanos = first.duration_nano as i64;
        let other_attributes = self.profile_attributes(cx, &mut out);
        out.default_sample_type = self.default_sample_type(cx);
        self.envelope_comments(cx, &mut out.comment, other_attributes);
        out.string_table = std::mem::take(&mut cx.strings.table);
        let layout = Layout::Aligned {
            order: std::mem::take(&mut self.order),
            later_values: std::mem::take(&mut self.later_values),
            stride: self.scope.profiles.len() - 1,
        };
        Ok(DevelopmentAsPprof::new(out, layout, tables))
    }

    /// Every sample of the first profile noted (the others line up with
    /// it): its indices checked, the entries it uses converted.
    fn note_samples(
        &self,
        cx: &mut FromDevelopment,
        samples: &DevelopmentSource,
    ) -> Result<SampleTables, BridgeError> {
        let count = samples.sample_count(0);
        let mut tables = SampleTables::for_dictionary(cx, samples.entry_count(), count);
        let mut buffer = dev::Sample::new();
        for i in 0..count {
            let at = SampleAt {
                profile: "resource_profiles[0].scope_profiles[0].profiles[0]",
                sample: i,
            };
            tables.note(cx, samples.sample(0, i, &mut buffer), &at, true)?;
        }
        Ok(tables)
    }

    /// Comments, drop/keep frames and doc URL from their `pprof.profile.*`
    /// attributes; the other profile attributes, for `otlp:` comments.
    fn profile_attributes(
        &self,
        cx: &mut FromDevelopment,
        out: &mut pprof::Profile,
    ) -> Vec<KeyValue> {
        let mut others = Vec::new();
        for &index in &self.scope.profiles[0].attribute_indices {
            let Some(a) = entry(&cx.d.attribute_table, index) else {
                continue; // validation reports it
            };
            let name = cx.string(a.key_strindex).to_string();
            let value = a.value.as_ref();
            match name.as_str() {
                semconv::COMMENT => {
                    out.comment = strings(value).map(|c| cx.strings.intern(&c)).collect()
                }
                semconv::DROP_FRAMES => out.drop_frames = cx.strings.intern(&cx.any_text(value)),
                semconv::KEEP_FRAMES => out.keep_frames = cx.strings.intern(&cx.any_text(value)),
                semconv::DOC_URL => out.doc_url = cx.strings.intern(&cx.any_text(value)),
                semconv::NEGATIVE_START_LINES => restore_start_lines(&ints(value), out),
                semconv::NEGATIVE_LINES => restore_lines(&ints(value), out),
                _ => others.push(KeyValue {
                    key: name,
                    value: a.value.clone(),
                    ..Default::default()
                }),
            }
        }
        others
    }

    fn default_sample_type(&self, cx: &mut FromDevelopment) -> i64 {
        let scope = self.scope.scope.as_ref();
        let kv = scope.and_then(|s| {
            s.attributes
                .iter()
                .find(|kv| kv.key == semconv::DEFAULT_SAMPLE_TYPE)
        });
        match kv.map(|kv| cx.any_text(kv.value.as_ref())) {
            Some(name) if !name.is_empty() => cx.strings.intern(&name),
            _ => 0,
        }
    }

    /// `otlp:` comments for the resource, the scope (but its `pprof.scope.*`
    /// attributes), the first profile's id and dropped count, and the
    /// profile attributes pprof has no field for.
    fn envelope_comments(
        &self,
        cx: &mut FromDevelopment,
        comments: &mut Vec<i64>,
        others: Vec<KeyValue>,
    ) {
        let (resource, scope) = (self.resource, self.scope);
        let first = &scope.profiles[0];
        let mut w = CommentWriter {
            strings: &mut cx.strings,
            comments: std::mem::take(comments),
            warnings: &mut cx.warnings,
        };
        if let Some(r) = resource.resource.as_ref() {
            w.attributes(
                key::RESOURCE_ATTRIBUTE,
                &r.attributes,
                "resource_profiles[0].resource",
            );
            if r.dropped_attributes_count != 0 {
                w.add(
                    key::RESOURCE_DROPPED,
                    &r.dropped_attributes_count.to_string(),
                );
            }
        }
        if !resource.schema_url.is_empty() {
            w.add(key::RESOURCE_SCHEMA_URL, &resource.schema_url);
        }
        if let Some(s) = scope.scope.as_ref() {
            w.add(key::SCOPE_NAME, &s.name);
            w.add(key::SCOPE_VERSION, &s.version);
            if s.dropped_attributes_count != 0 {
                w.add(key::SCOPE_DROPPED, &s.dropped_attributes_count.to_string());
            }
            let carried: Vec<KeyValue> = s
                .attributes
                .iter()
                .filter(|kv| !kv.key.starts_with("pprof.scope."))
                .cloned()
                .collect();
            w.attributes(
                key::SCOPE_ATTRIBUTE,
                &carried,
                "resource_profiles[0].scope_profiles[0].scope",
            );
        }
        if !scope.schema_url.is_empty() {
            w.add(key::SCOPE_SCHEMA_URL, &scope.schema_url);
        }
        if first.profile_id.len() == 16 {
            w.add(
                key::PROFILE_ID,
                &crate::otlp_comments::hex(&first.profile_id),
            );
        }
        if first.dropped_attributes_count != 0 {
            w.add(
                key::CONTAINER_DROPPED,
                &first.dropped_attributes_count.to_string(),
            );
        }
        w.attributes(
            key::CONTAINER_ATTRIBUTE,
            &others,
            "resource_profiles[0].scope_profiles[0].profiles[0]",
        );
        *comments = w.comments;
    }
}

fn value_type(
    cx: &mut FromDevelopment,
    t: &protobuf::MessageField<dev::ValueType>,
) -> pprof::ValueType {
    let t = t.as_ref();
    pprof::ValueType {
        type_: cx.intern(t.map_or(0, |t| t.type_strindex)),
        unit: cx.intern(t.map_or(0, |t| t.unit_strindex)),
        ..Default::default()
    }
}

/// The integers of an int array (or of one int).
fn ints(value: Option<&AnyValue>) -> Vec<i64> {
    match value.and_then(|v| v.value.as_ref()) {
        Some(Value::ArrayValue(a)) => (a.values.iter())
            .filter_map(|v| match v.value {
                Some(Value::IntValue(n)) => Some(n),
                _ => None,
            })
            .collect(),
        Some(Value::IntValue(n)) => vec![*n],
        _ => Vec::new(),
    }
}

/// pprof's negative `Function.start_line`s, from `(k, start_line)` pairs.
fn restore_start_lines(pairs: &[i64], out: &mut pprof::Profile) {
    for pair in pairs.chunks_exact(2) {
        let function = usize::try_from(pair[0]).ok();
        if let Some(f) = function.and_then(|k| out.function.get_mut(k)) {
            f.start_line = pair[1];
        }
    }
}

/// pprof's negative line numbers, from `(k, j, line, column)` quadruples.
fn restore_lines(quads: &[i64], out: &mut pprof::Profile) {
    for quad in quads.chunks_exact(4) {
        let (k, j) = (usize::try_from(quad[0]).ok(), usize::try_from(quad[1]).ok());
        let location = k.and_then(|k| out.location.get_mut(k));
        if let Some(line) = location.and_then(|l| j.and_then(|j| l.line.get_mut(j))) {
            (line.line, line.column) = (quad[2], quad[3]);
        }
    }
}

/// The strings of a string array (a lone string counts as one).
fn strings(value: Option<&AnyValue>) -> impl Iterator<Item = String> + '_ {
    let items: Vec<String> = match value.and_then(|v| v.value.as_ref()) {
        Some(Value::ArrayValue(a)) => a
            .values
            .iter()
            .filter_map(|v| match &v.value {
                Some(Value::StringValue(s)) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        Some(Value::StringValue(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    items.into_iter()
}
