//! Profiles the store's unit tests write (tests only).

use protoprof_model_pprof::perftools::profiles::{Location, Profile, Sample, ValueType};

/// A profile of one sample at one location, its value `value`.
pub(crate) fn profile(value: i64) -> Profile {
    let mut p = Profile::new();
    p.string_table = vec!["".into(), "cpu".into(), "nanoseconds".into()];
    let mut t = ValueType::new();
    (t.type_, t.unit) = (1, 2);
    p.sample_type.push(t);
    let mut l = Location::new();
    l.id = 1;
    p.location.push(l);
    let mut s = Sample::new();
    s.location_id = vec![1];
    s.value = vec![value];
    p.sample.push(s);
    p.time_nanos = 1_795_757_400_000_000_000;
    p
}
