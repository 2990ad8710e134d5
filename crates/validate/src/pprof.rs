//! pprof (`perftools.profiles.Profile`): the rules of profile.proto and
//! everything Go's `profile.Parse` + `CheckValid` reject.

use std::collections::HashMap;

use protoprof_model_meta::{Fields, RefPath};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::common::{self, PPROF};
use crate::references::{ElementsFrom, ReferenceChecker};
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
    // The walk over samples reads them from the source (which may hold them
    // as bytes, outside the walked profile), one at a time, and checks each
    // sample's labels in the same pass.
    let mut buffer = Sample::new();
    let walk = |checker: &mut ReferenceChecker, message, field, path: &mut RefPath| {
        if (message, field) != ("perftools.profiles.Profile", "sample") {
            return true;
        }
        for i in 0..source.sample_count() {
            // Values were counted before; the walk needs the rest.
            let sample = source.sample_fields(i, LOCATIONS_AND_LABELS, &mut buffer);
            path.push("sample", Some(i));
            check_sample(sample, path, checker);
            path.pop();
            if checker.collector().stopped() {
                break;
            }
        }
        false
    };
    let mut visitor = ElementsFrom {
        inner: checker,
        walk,
    };
    protoprof_model_pprof::refs::walk_profile(p, path, &mut visitor);
}

const LOCATIONS_AND_LABELS: Fields = Fields::only(&[sample::LOCATION_ID, sample::LABEL]);

/// One sample's labels, and its references.
fn check_sample(sample: &Sample, path: &mut RefPath, checker: &mut ReferenceChecker) {
    for (j, l) in sample.label.iter().enumerate() {
        let at = || format!("{path}.label[{j}]");
        let collector = checker.collector();
        common::label(l.key, l.str, l.num, l.num_unit, at, &PPROF, collector);
    }
    protoprof_model_pprof::refs::visit_perftools_profiles_sample(sample, path, checker);
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
