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
    // Counted once for all when the source knows they are all the same.
    let common_value_count = source.common_value_count();
    let value_count = |i: usize| common_value_count.unwrap_or_else(|| source.value_count(i));
    common::check_profile_fields!(p, source.sample_count(), value_count, rules, path, c);
    if c.stopped() {
        return;
    }
    addresses_within_mappings(p, path, c);
    if c.stopped() {
        return;
    }
    let checker = ReferenceChecker::new(&protoprof_model_pprof::SCHEMA, p, &rules.refs, c);
    let fields = fields_to_walk(source, &checker);
    // The walk over samples reads them from the source (which may hold them
    // as bytes, outside the walked profile), one at a time, and checks each
    // sample's labels in the same pass.
    let walk = |checker: &mut ReferenceChecker, message, field, path: &mut RefPath| {
        if (message, field) != ("perftools.profiles.Profile", "sample") {
            return true;
        }
        check_samples(source, fields, path, checker);
        false
    };
    let mut visitor = ElementsFrom {
        inner: checker,
        walk,
    };
    protoprof_model_pprof::refs::walk_profile(p, path, &mut visitor);
}

/// The sample fields whose checks are left to the walk: labels, and
/// location ids unless the source knows bounds of them (the codec's view
/// does) between which every id names a location. Values were counted
/// before.
fn fields_to_walk<S: ProfileSamples>(source: &S, checker: &ReferenceChecker) -> Fields {
    let location_ids = source.field_range(sample::LOCATION_ID);
    match location_ids.is_some_and(|ids| checker.tables().names_every_id("location", ids)) {
        true => Fields::only(&[sample::LABEL]),
        false => Fields::only(&[sample::LOCATION_ID, sample::LABEL]),
    }
}

/// Every sample's `fields`, on two threads for large profiles
/// ([`ReferenceChecker::check_each_in_halves`]).
fn check_samples<S: ProfileSamples>(
    source: &S,
    fields: Fields,
    path: &mut RefPath,
    checker: &mut ReferenceChecker,
) {
    let count = source.sample_count();
    let check = sample_check(source, fields);
    checker.check_each_in_halves(count, ("sample", path), Sample::new, check);
}

/// The check of sample `i` of `source`, its `fields` read into a buffer.
fn sample_check<S: ProfileSamples>(
    source: &S,
    fields: Fields,
) -> impl Fn(&mut Sample, usize, &mut RefPath, &mut ReferenceChecker) + Sync + '_ {
    move |buffer, i, path, checker| {
        let sample = source.sample_fields(i, fields, buffer);
        check_sample(sample, path, checker);
    }
}

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

#[cfg(test)]
mod tests {
    use protoprof_model_pprof::perftools::profiles::{Label, Location};

    use super::*;
    use crate::references::PARALLEL_ELEMENTS;

    /// Samples over 10 locations and 4 strings; some (in both halves)
    /// point at a missing location or label strings out of range.
    fn profile(samples: usize) -> Profile {
        let mut p = Profile::new();
        p.string_table = ["", "a", "b", "c"].map(String::from).to_vec();
        p.location = (1..=10)
            .map(|id| Location {
                id,
                ..Default::default()
            })
            .collect();
        for i in 0..samples {
            let bad_location = i % 7919 == 5;
            let bad_label = i % 10007 == 3;
            p.sample.push(Sample {
                location_id: vec![1 + (i % 10) as u64, if bad_location { 99 } else { 2 }],
                value: vec![1],
                label: vec![Label {
                    key: 1,
                    str: if bad_label { 40 } else { 2 },
                    ..Default::default()
                }],
                ..Default::default()
            });
        }
        p
    }

    fn report(p: &Profile, options: Options, two_threads: bool) -> Report {
        let mut collector = Collector::new(options);
        let mut checker = ReferenceChecker::new(
            &protoprof_model_pprof::SCHEMA,
            p,
            &PPROF.refs,
            &mut collector,
        );
        let mut path = RefPath::new();
        let fields = Fields::only(&[sample::LOCATION_ID, sample::LABEL]);
        match two_threads {
            true => check_samples(p, fields, &mut path, &mut checker),
            false => {
                let (all, check) = (0..p.sample.len(), &sample_check(p, fields));
                checker.check_each(all, ("sample", &mut path), &mut Sample::new(), check)
            }
        }
        collector.finish("perftools.profiles.Profile")
    }

    #[test]
    fn two_threads_report_what_one_thread_reports() {
        let p = profile(PARALLEL_ELEMENTS * 2 + 1);
        let capped = |max_per_rule| Options {
            max_per_rule,
            ..Default::default()
        };
        for options in [
            Options::default(),
            capped(3),
            capped(1000),
            Options {
                fail_fast: true,
                ..Default::default()
            },
        ] {
            let one = report(&p, options, false);
            assert!(one.errors > 20 || options.fail_fast, "{one:?}");
            assert_eq!(report(&p, options, true), one, "{options:?}");
        }
        // Errors only in the second half, with fail-fast: it stops there.
        let mut p = profile(PARALLEL_ELEMENTS * 2);
        for s in &mut p.sample[..PARALLEL_ELEMENTS + 7] {
            s.location_id = vec![1];
            s.label.clear();
        }
        let options = Options {
            fail_fast: true,
            ..Default::default()
        };
        let one = report(&p, options, false);
        assert!(one.stopped_early && one.errors == 1, "{one:?}");
        assert_eq!(report(&p, options, true), one);
    }
}
