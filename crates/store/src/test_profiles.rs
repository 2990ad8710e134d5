//! Profiles the store's unit tests write, and what they ask of a store
//! (tests only).

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

/// The rows of `table` in `store`, counted by the engine.
pub(crate) fn count(store: &crate::Store, table: &str) -> i64 {
    let batches = store.sql(&format!("SELECT count(*) FROM {table}")).unwrap();
    let column = batches[0].column(0).as_any();
    let counts = column.downcast_ref::<datafusion::arrow::array::Int64Array>();
    counts.unwrap().value(0)
}

/// The sum of the first value of every sample `store` holds.
pub(crate) fn total(store: &crate::Store) -> i64 {
    let all = store.select(&crate::Query::default()).unwrap().profile;
    all.sample.iter().map(|s| s.value[0]).sum()
}

/// moto's S3 server on loopback with a bucket made, and a store in it
/// (`s3://store/unit`).
pub(crate) fn moto_store(
    python: &std::path::Path,
) -> (std::process::Child, crate::location::Location) {
    let (server, address) = protoprof_tests::moto_with_bucket(python, "store");
    (server, moto_location(&address, "unit"))
}

/// The store at `prefix` in the bucket `store` of moto's server at
/// `address`.
pub(crate) fn moto_location(address: &str, prefix: &str) -> crate::location::Location {
    let store = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(format!("http://{address}"))
        .with_allow_http(true)
        .with_bucket_name("store")
        .with_region("us-east-1")
        .with_access_key_id("protoprof")
        .with_secret_access_key("protoprof")
        .build()
        .unwrap();
    crate::location::Location::Object {
        bucket: url::Url::parse("s3://store").unwrap(),
        prefix: prefix.into(),
        store: std::sync::Arc::new(store),
    }
}
