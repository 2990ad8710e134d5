//! pprof (`perftools.profiles.Profile`): the rules of profile.proto and
//! everything Go's `profile.Parse` + `CheckValid` reject.

use std::collections::HashMap;

use protoprof_model_meta::RefPath;
use protoprof_model_pprof::perftools::profiles::Profile;

use crate::common::{self, PPROF};
use crate::references::ReferenceChecker;
use crate::report::{Collector, Options, Report};
use crate::rules;

/// Validates a pprof profile.
pub fn validate_pprof(profile: &Profile, options: &Options) -> Report {
    let mut collector = Collector::new(*options);
    check(profile, &mut RefPath::new(), &mut collector);
    collector.finish("perftools.profiles.Profile")
}

fn check(p: &Profile, path: &mut RefPath, c: &mut Collector) {
    let rules = &PPROF;
    common::check_profile_fields!(p, rules, path, c);
    for (i, sample) in p.sample.iter().enumerate() {
        for (j, l) in sample.label.iter().enumerate() {
            let at = || format!("{}.label[{j}]", path.with_field("sample", Some(i)));
            common::label(l.key, l.str, l.num, l.num_unit, at, rules, c);
        }
        if c.stopped() {
            return;
        }
    }
    addresses_within_mappings(p, path, c);
    if c.stopped() {
        return;
    }
    let mut checker = ReferenceChecker::new(&protoprof_model_pprof::SCHEMA, p, &rules.refs, c);
    protoprof_model_pprof::refs::walk_profile(p, path, &mut checker);
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
