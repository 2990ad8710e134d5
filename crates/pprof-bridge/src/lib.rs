//! Lossless conversion between pprof (`perftools.profiles.Profile`) and
//! OpenTelemetry Profiles v1experimental.
//!
//! - [`pprof_to_otlp`]: a pprof profile into `ProfilesData` (or an
//!   [`export_request`]); ids become positions, labels attributes, stacks
//!   shared slices, and nothing is lost on the way back.
//!   It takes the decoded model or the codec's `PprofView` (samples read one
//!   at a time); [`pprof_to_otlp_bytes`] also encodes, without an OTLP
//!   `Sample` message per sample.
//! - [`otlp_to_pprof`]: every `ProfileContainer` into a pprof profile;
//!   [`otlp_to_pprof_merged`] merges them when their sample types agree.
//! - [`semantic`]: the equality the round trips preserve.
//!
//! docs/pprof-bridge.md has the field-by-field mapping both ways and every
//! case where one side cannot hold what the other has.
//!
//! Validating and converting a large pprof profile without a model object
//! per sample, as the `protoprof` command does (the codec's view leaves the
//! samples in the input bytes; see docs/PERFORMANCE.md):
//!
//! ```
//! use protoprof_codec::{decode_pprof_view, DecodeOptions};
//! use protoprof_pprof_bridge::{otlp_to_pprof, pprof_to_otlp_bytes, ToOtlpOptions};
//! # use protobuf::Message;
//! # use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/cpu.pb.gz");
//! let bytes = std::fs::read(path)?;
//! // Samples stay in `bytes`; everything else is decoded.
//! let view = decode_pprof_view(&bytes, &DecodeOptions::default())?.message;
//! let report = protoprof_validate::validate_pprof(&view, &Default::default());
//! assert!(report.is_valid());
//! let otlp_bytes = pprof_to_otlp_bytes(&view, &ToOtlpOptions::default())?;
//! # let back = otlp_to_pprof(&ProfilesData::parse_from_bytes(&otlp_bytes)?)?;
//! # assert_eq!(back.value[0].sample.len(), 176);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod attribute_text;
mod development;
mod envelope;
mod error;
mod experimental;
mod interner;
mod labels;
pub mod merge;
mod names;
mod otlp_comments;
pub mod semantic;
mod tables;
pub mod temporality;

use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;

pub use attribute_text::attribute_value_text;
pub use development::encoding::DevelopmentEncoding;
pub use development::invalid_samples::drop_invalid_samples;
pub use development::samples::{sample_value, DevelopmentAsPprof, DevelopmentPprofSamples};
pub use development::shared::{development_to_pprof_shared, SharedDictionary};
pub use development::to_otlp::{
    pprof_to_development, pprof_to_development_bytes, pprof_to_development_encoding,
    ToDevelopmentOptions,
};
pub use development::to_pprof::{
    data_samples, development_as_pprof, development_to_pprof, development_to_pprof_each,
    development_to_pprof_each_with, development_to_pprof_with, development_to_sent_pprof,
    DevelopmentSource,
};
pub use envelope::Envelope;
pub use error::{BridgeError, BridgeWarning, Converted, DroppedSamples};
pub use experimental::invalid_samples::drop_invalid_experimental_samples;
pub use experimental::records::OtlpEncoding;
pub use experimental::samples::{
    experimental_data_samples, ExperimentalAsPprof, ExperimentalPprofSamples, ExperimentalSource,
};
pub use experimental::to_otlp::{
    pprof_to_container, pprof_to_otlp, pprof_to_otlp_bytes, pprof_to_otlp_encoding, ProfileId,
    ToOtlpOptions,
};
pub use experimental::to_pprof::{container_as_pprof, container_to_pprof, otlp_to_pprof};
pub use names::{
    semconv, DOC_URL_ATTRIBUTE, NANOSECONDS, NO_MAPPING_ATTRIBUTE, SPAN_ID_LABEL, TIMESTAMP_LABEL,
    TRACE_ID_LABEL,
};

/// `ProfilesData` as the collector's export request (the same wire form).
pub fn export_request(data: ProfilesData) -> ExportProfilesServiceRequest {
    ExportProfilesServiceRequest {
        resource_profiles: data.resource_profiles,
        ..Default::default()
    }
}

/// The one container of `data` as [`otlp_to_pprof_merged`] converts it,
/// but for the samples, which [`ExperimentalAsPprof::reading`] converts
/// from `samples` (one sample list per container, as `data` holds them or
/// as the codec's view leaves them in the input bytes) as they are read.
/// `None` when `data` holds other than one container: several are merged,
/// and a merge needs their samples converted.
///
/// # Panics
/// When `samples` does not hold one sample list.
pub fn experimental_as_pprof(
    data: &ProfilesData,
    samples: &ExperimentalSource,
) -> Option<Result<Converted<ExperimentalAsPprof>, BridgeError>> {
    let mut containers = data
        .resource_profiles
        .iter()
        .enumerate()
        .flat_map(|(i, rp)| {
            rp.scope_profiles
                .iter()
                .enumerate()
                .flat_map(move |(j, sp)| {
                    sp.profiles
                        .iter()
                        .enumerate()
                        .map(move |(k, c)| (i, j, k, rp, sp, c))
                })
        });
    let (i, j, k, rp, sp, container) = containers.next()?;
    if containers.next().is_some() {
        return None;
    }
    assert_eq!(samples.profile_count(), 1, "one sample list per container");
    let path = format!("resource_profiles[{i}].scope_profiles[{j}].profiles[{k}]");
    Some(container_as_pprof(
        container,
        &Envelope::of(rp, sp),
        &path,
        (samples, 0),
    ))
}

/// Every container of `data` as one pprof profile, merged as pprof merges
/// (the sample types must agree). One container is its profile as it is:
/// the exact inverse of [`pprof_to_otlp`], and no merge to pay for.
pub fn otlp_to_pprof_merged(data: &ProfilesData) -> Result<Converted<Profile>, BridgeError> {
    let mut converted = otlp_to_pprof(data)?;
    if converted.value.len() == 1 {
        return Ok(Converted {
            value: converted.value.pop().expect("one profile"),
            warnings: converted.warnings,
        });
    }
    let merged = merge::merge(&converted.value)?;
    Ok(Converted {
        value: merged,
        warnings: converted.warnings,
    })
}
