//! Which aggregation temporality a pprof sample type has. pprof does not say;
//! OTLP requires it (UNSPECIFIED must not be used).
//!
//! CUMULATIVE: values that count since the process started or describe the
//! state at one instant: Go's heap and allocs profiles (`alloc_objects`,
//! `alloc_space`, `inuse_objects`, `inuse_space`), Node.js heap snapshots
//! (`objects`, `space`), and counts of live things (`goroutine`,
//! `goroutines`, `threadcreate`). Everything else (CPU, wall time, sample
//! counts, contentions, delays, allocations recorded during the profile's
//! window) is DELTA: it counts what happened during the profile's duration.

use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::AggregationTemporality;

const CUMULATIVE_TYPES: [&str; 9] = [
    "alloc_objects",
    "alloc_space",
    "inuse_objects",
    "inuse_space",
    "objects",
    "space",
    "goroutine",
    "goroutines",
    "threadcreate",
];

/// The temporality the rules above give a sample type name.
pub fn for_sample_type(type_name: &str) -> AggregationTemporality {
    if CUMULATIVE_TYPES.contains(&type_name) {
        AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE
    } else {
        AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(
            for_sample_type("cpu"),
            AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA
        );
        assert_eq!(
            for_sample_type("samples"),
            AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA
        );
        assert_eq!(
            for_sample_type("inuse_space"),
            AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE
        );
        assert_eq!(
            for_sample_type("goroutine"),
            AggregationTemporality::AGGREGATION_TEMPORALITY_CUMULATIVE
        );
        assert_eq!(
            for_sample_type("alloc_in_new_tlab_bytes"),
            AggregationTemporality::AGGREGATION_TEMPORALITY_DELTA
        );
    }
}
