//! pprof (`perftools.profiles.Profile`): the rules of profile.proto and
//! everything Go's `profile.Parse` + `CheckValid` reject.

use std::collections::HashMap;

use protoprof_model_meta::{FieldRef, Fields, RefPath, ReferenceVisitor};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::common::{self, PPROF};
use crate::references::ReferenceChecker;
use crate::report::{Collector, Options, Report};
use crate::rules;

/// Validates a pprof profile: the decoded model, or the codec's `PprofView`
/// (samples read one at a time from the input bytes, without a `Sample`
/// per sample). Both give the same report.
pub fn validate_pprof<S: ProfileSamples>(source: &S, options: &Options) -> Report {
    let mut collector = Collector::new(*options);
    check(source, &mut RefPath::new(), &mut collector);
    collector.finish("perftools.profiles.Profile")
}

fn check<S: ProfileSamples>(source: &S, path: &mut RefPath, c: &mut Collector) {
    let rules = &PPROF;
    let p = source.profile();
    let value_count = |i: usize| source.value_count(i);
    common::check_profile_fields!(p, source.sample_count(), value_count, rules, path, c);
    if c.stopped() {
        return;
    }
    addresses_within_mappings(p, path, c);
    if c.stopped() {
        return;
    }
    let checker = ReferenceChecker::new(&protoprof_model_pprof::SCHEMA, p, &rules.refs, c);
    let mut visitor = SampleChecker {
        checker,
        source,
        buffer: Sample::new(),
    };
    protoprof_model_pprof::refs::walk_profile(p, path, &mut visitor);
}

const LOCATIONS_AND_LABELS: Fields = Fields::only(&[sample::LOCATION_ID, sample::LABEL]);

/// The reference checker, plus what is checked per sample: the walk over
/// samples reads them from the [`SampleSource`] (which may hold them as
/// bytes, outside the walked profile), one at a time, and checks each
/// sample's labels in the same pass.
struct SampleChecker<'s, 'c, S> {
    checker: ReferenceChecker<'c>,
    source: &'s S,
    buffer: Sample,
}

impl<S: ProfileSamples> ReferenceVisitor for SampleChecker<'_, '_, S> {
    #[inline]
    fn reference(
        &mut self,
        id: usize,
        r: &'static FieldRef,
        path: &RefPath,
        index: Option<usize>,
        value: i128,
    ) {
        self.checker.reference(id, r, path, index, value);
    }

    fn slice(&mut self, id: usize, r: &'static FieldRef, path: &RefPath, start: u64, len: u64) {
        self.checker.slice(id, r, path, start, len);
    }

    fn unknown_fields(
        &mut self,
        message: &'static str,
        path: &RefPath,
        fields: &protobuf::UnknownFields,
    ) {
        self.checker.unknown_fields(message, path, fields);
    }

    fn walk_elements(
        &mut self,
        message: &'static str,
        field: &'static str,
        path: &mut RefPath,
    ) -> bool {
        if (message, field) != ("perftools.profiles.Profile", "sample") {
            return true;
        }
        let rules = &PPROF;
        for i in 0..self.source.sample_count() {
            // Values were counted before; the walk needs the rest.
            let sample = self
                .source
                .sample_fields(i, LOCATIONS_AND_LABELS, &mut self.buffer);
            path.push("sample", Some(i));
            for (j, l) in sample.label.iter().enumerate() {
                let at = || format!("{path}.label[{j}]");
                common::label(
                    l.key,
                    l.str,
                    l.num,
                    l.num_unit,
                    at,
                    rules,
                    self.checker.collector(),
                );
            }
            protoprof_model_pprof::refs::visit_perftools_profiles_sample(
                sample,
                path,
                &mut self.checker,
            );
            path.pop();
            if self.checker.collector().stopped() {
                break;
            }
        }
        false
    }
}

/// A location's address lies in its mapping's [memory_start, memory_limit).
fn addresses_within_mappings(p: &Profile, path: &RefPath, c: &mut Collector) {
    let ranges: HashMap<u64, (u64, u64)> = p
        .mapping
        .iter()
        .map(|m| (m.id, (m.memory_start, m.memory_limit)))
        .collect();
    for (i, l) in p.location.iter().enumerate() {
        let Some(&(start, limit)) = ranges.get(&l.mapping_id) else {
            continue;
        };
        if l.address == 0 || l.mapping_id == 0 || limit <= start {
            continue; // no address, no mapping, or a mapping without a range
        }
        if !(start..limit).contains(&l.address) {
            c.report(
                &rules::PPROF_LOC_ADDRESS,
                || path.with_field("location", Some(i)) + ".address",
                Some(format!("{:#x}", l.address)),
                || {
                    format!(
                        "outside mapping {}'s range [{start:#x}, {limit:#x})",
                        l.mapping_id
                    )
                },
            );
        }
    }
}
