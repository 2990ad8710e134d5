//! Validation of pprof, OTLP Profiles (v1experimental and v1development) and relay messages
//! against every requirement their schemas state.
//!
//! Each problem is a [`Diagnostic`]: a stable rule code (`PPROF-REF-003`), a
//! severity, the field path (`sample[1042].location_id[7]`), the offending
//! value and a one-line explanation. Index checks run through the reference
//! walkers generated from the schema annotations (the checking code names
//! no field), so a new index field is checked without editing this crate. The
//! rule catalogue is [`rules::ALL`] and `docs/validation-rules.md`.

#![warn(missing_docs)]

mod common;
mod pprof;
mod references;
mod relay;
mod report;
pub mod rules;
mod v1development;
mod v1experimental;

use protobuf::MessageDyn;

pub use pprof::validate_pprof;
pub use relay::{
    validate_delta_discovery_request, validate_delta_discovery_response,
    validate_discovery_request, validate_discovery_response,
};
pub use report::{Diagnostic, Options, Report, RuleCount};
pub use rules::{Rule, Severity};
pub use v1development::data::{
    validate_development_data, validate_development_parts, validate_development_request,
};
pub use v1development::parts::DevelopmentParts;
pub use v1experimental::data::{
    validate_container, validate_export_request, validate_profiles_data, validate_profiles_parts,
};
pub use v1experimental::samples::ExperimentalParts;

/// Validates any message protoprof has rules for; `None` for other types.
pub fn validate_message(message: &dyn MessageDyn, options: &Options) -> Option<Report> {
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development as dev_collector;
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental as collector;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;
    use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
    use protoprof_model_relay::envoy::service::discovery::v3 as xds;
    let any = message;
    if let Some(m) = any.downcast_ref::<protoprof_model_pprof::perftools::profiles::Profile>() {
        return Some(validate_pprof(m, options));
    }
    if let Some(m) = any.downcast_ref::<otlp::ProfilesData>() {
        return Some(validate_profiles_data(m, options));
    }
    if let Some(m) = any.downcast_ref::<collector::ExportProfilesServiceRequest>() {
        return Some(validate_export_request(m, options));
    }
    if let Some(m) = any.downcast_ref::<dev::ProfilesData>() {
        return Some(validate_development_data(m, options));
    }
    if let Some(m) = any.downcast_ref::<dev_collector::ExportProfilesServiceRequest>() {
        return Some(validate_development_request(m, options));
    }
    if let Some(m) = any.downcast_ref::<otlp::ProfileContainer>() {
        return Some(validate_container(m, options));
    }
    if let Some(m) = any.downcast_ref::<xds::DiscoveryRequest>() {
        return Some(validate_discovery_request(m, options));
    }
    if let Some(m) = any.downcast_ref::<xds::DiscoveryResponse>() {
        return Some(validate_discovery_response(m, options));
    }
    if let Some(m) = any.downcast_ref::<xds::DeltaDiscoveryRequest>() {
        return Some(validate_delta_discovery_request(m, options));
    }
    if let Some(m) = any.downcast_ref::<xds::DeltaDiscoveryResponse>() {
        return Some(validate_delta_discovery_response(m, options));
    }
    None
}

/// Adds to `report` an error (`JSON-KEY-001`) for each JSON key the decoder
/// dropped, given as its path (the codec's `UnknownJsonKey` warnings): data
/// that was not read is never "valid".
pub fn report_dropped_input(report: &mut Report, dropped_keys: &[String], options: &Options) {
    for path in dropped_keys {
        report.add(
            &rules::JSON_UNKNOWN_KEY,
            path.clone(),
            "names no field of its message: its value was not read".into(),
            options.max_per_rule,
        );
    }
}
