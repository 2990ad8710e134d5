//! OTLP profiles of either package as pprof, for the commands that read
//! pprof: the bridge's conversions with their warnings printed, and
//! samples that refer to nothing left out or refused.

use std::borrow::Cow;
use std::path::Path;

use protobuf::MessageDyn;
use protoprof_codec::{AutoDecoded, DevelopmentView, EncodedSamples, ExperimentalView, PprofView};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesData as DevelopmentData;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_pprof_bridge::{
    BridgeError, Converted, DevelopmentAsPprof, DroppedSamples, ExperimentalAsPprof,
};

use super::warnings::{converting, refuses_invalid_samples, shown, warn};
use crate::error::{CliError, Context, Result};

/// OTLP v1development as one pprof profile but for its samples, which
/// `reading(&view)` converts as they are read; the bridge's warnings are
/// printed, and the view's dictionary is shed: only samples and stacks are
/// read from here on.
///
/// Samples whose references resolve to nothing are left out with one
/// warning (see [`set_converting`](super::warnings::set_converting)): the view is then replaced by
/// one of the rest.
pub fn development_as_pprof(path: &Path, view: &mut DevelopmentView) -> Result<DevelopmentAsPprof> {
    let converted = match protoprof_pprof_bridge::development_as_pprof(view.data(), view) {
        Err(error) if mendable(&error) => {
            let placeholder = DevelopmentView::from_data(DevelopmentData::default());
            let whole = std::mem::replace(view, placeholder).into_data();
            *view = without_invalid_samples(path, whole, error)?;
            protoprof_pprof_bridge::development_as_pprof(view.data(), view)
        }
        converted => converted,
    }
    .context(shown(path))?;
    print_bridge_warnings(path, &converted.warnings);
    view.shed_dictionary();
    Ok(converted.value)
}

/// `data`, which failed to convert with `error`, without the samples whose
/// references resolve to nothing, as a view to convert again; with one
/// warning that counts them and names the first. `error` when no sample
/// is at fault, or when such samples are refused.
fn without_invalid_samples(
    path: &Path,
    mut data: DevelopmentData,
    error: BridgeError,
) -> Result<DevelopmentView<'static>> {
    let dropped = protoprof_pprof_bridge::drop_invalid_samples(&mut data);
    left_out(path, dropped, error)?;
    Ok(DevelopmentView::from_data(data))
}

/// [`without_invalid_samples`] of v1experimental data, converted again,
/// its containers merged.
fn without_invalid_experimental_samples(
    path: &Path,
    mut data: ProfilesData,
    error: BridgeError,
) -> Result<Converted<Profile>> {
    let dropped = protoprof_pprof_bridge::drop_invalid_experimental_samples(&mut data);
    left_out(path, dropped, error)?;
    protoprof_pprof_bridge::otlp_to_pprof_merged(&data).context(shown(path))
}

/// Says what was `dropped`, once; `error` when nothing was (no sample is
/// at fault) or when such samples are refused.
pub fn left_out(path: &Path, dropped: Option<DroppedSamples>, error: BridgeError) -> Result<()> {
    let Some(dropped) = dropped else {
        return Err(error).context(shown(path));
    };
    if refuses_invalid_samples() {
        return Err(CliError::failure(format!(
            "{}: {error}; {} samples of {} refer to entries that do not exist: \
             `--drop-invalid` converts the rest",
            shown(path),
            dropped.count,
            dropped.of
        )));
    }
    warn(shown(path), dropped);
    Ok(())
}

/// Whether a conversion failed on a reference to nothing that leaving out
/// samples may mend (and the command leaves them out).
fn mendable(error: &BridgeError) -> bool {
    matches!(error, BridgeError::Unresolved { .. })
}

/// OTLP v1development as one pprof profile (as [`otlp_message_as_pprof`]
/// converts it), read from the view one sample at a time and kept encoded:
/// no model object per sample on either side.
pub fn development_as_pprof_view(
    path: &Path,
    mut view: DevelopmentView,
) -> Result<PprofView<'static>> {
    // pprof samples hold what the OTLP samples and stacks held, about.
    let mut samples = EncodedSamples::with_capacity(view.byte_size() + view.byte_size() / 8);
    let converted = development_as_pprof(path, &mut view)?;
    converted
        .reading(&view)
        .drain_into(&mut |s| samples.push(s));
    // The input is no longer needed: free it before the caller goes on.
    drop(view);
    Ok(samples.into_view(converted.into_header()))
}

/// OTLP v1experimental of one container as one pprof profile but for its
/// samples, which `reading(&view)` converts as they are read; the bridge's
/// warnings are printed, and the view's tables are shed: only samples are
/// read from here on. `None` when the input holds other than one container
/// (several are merged: [`experimental_whole_as_pprof`]).
pub fn experimental_as_pprof(
    path: &Path,
    view: &mut ExperimentalView,
) -> Option<Result<ExperimentalAsPprof>> {
    let converted = protoprof_pprof_bridge::experimental_as_pprof(view.data(), view)?;
    // Left to the whole path, which leaves the broken samples out (or
    // refuses them, saying how many).
    if converted.as_ref().is_err_and(mendable) {
        return None;
    }
    Some(converted.context(shown(path)).map(|converted| {
        print_bridge_warnings(path, &converted.warnings);
        view.shed_tables();
        converted.value
    }))
}

/// OTLP v1experimental decoded whole and converted, its containers merged.
pub fn experimental_whole_as_pprof(path: &Path, view: ExperimentalView) -> Result<Profile> {
    let data = view.into_data();
    let converted = match protoprof_pprof_bridge::otlp_to_pprof_merged(&data) {
        Err(error) if mendable(&error) => without_invalid_experimental_samples(path, data, error)?,
        converted => converted.context(shown(path))?,
    };
    print_bridge_warnings(path, &converted.warnings);
    Ok(converted.value)
}

/// OTLP v1experimental as one pprof profile, as [`development_as_pprof_view`]
/// makes it of v1development: one container read from the view one sample
/// at a time and kept encoded; several decoded whole and merged.
pub fn experimental_as_pprof_view(
    path: &Path,
    mut view: ExperimentalView,
) -> Result<PprofView<'static>> {
    let Some(converted) = experimental_as_pprof(path, &mut view) else {
        return experimental_whole_as_pprof(path, view).map(PprofView::from_profile);
    };
    let converted = converted?;
    let mut samples = EncodedSamples::with_capacity(view.byte_size() + view.byte_size() / 8);
    converted
        .reading(&view)
        .drain_into(&mut |s| samples.push(s));
    drop(view);
    Ok(samples.into_view(converted.into_header()))
}

/// OTLP profiles as one pprof profile (all containers merged, as their
/// sample types must agree).
pub fn otlp_as_pprof(path: &Path, decoded: &AutoDecoded) -> Result<Profile> {
    otlp_message_as_pprof(path, &*decoded.decoded.message).ok_or_else(|| {
        CliError::failure(format!(
            "{}: {} is not a profile",
            shown(path),
            decoded.descriptor.full_name()
        ))
    })?
}

/// OTLP profiles of either package as one pprof profile, with the bridge's
/// warnings printed; `None` when `message` is not OTLP profiles.
pub fn otlp_message_as_pprof(path: &Path, message: &dyn MessageDyn) -> Option<Result<Profile>> {
    let converted: Result<Converted<Profile>> = if let Some(data) = otlp_data(message) {
        match protoprof_pprof_bridge::otlp_to_pprof_merged(&data) {
            Err(error) if mendable(&error) => {
                without_invalid_experimental_samples(path, data.into_owned(), error)
            }
            converted => converted.context(shown(path)),
        }
    } else {
        let data = development_data(message)?;
        match protoprof_pprof_bridge::development_to_pprof(&data) {
            Err(error) if mendable(&error) => {
                let view = without_invalid_samples(path, data.into_owned(), error);
                let pprof = view.and_then(|view| development_as_pprof_view(path, view));
                return Some(pprof.map(|view| view.into_profile()));
            }
            converted => converted.context(shown(path)),
        }
    };
    Some(converted.map(|converted| {
        print_bridge_warnings(path, &converted.warnings);
        converted.value
    }))
}

/// What a conversion of `path` could not carry exactly, on standard error.
pub fn print_bridge_warnings(path: &Path, warnings: &[protoprof_pprof_bridge::BridgeWarning]) {
    let converting = converting();
    for w in warnings {
        if converting || !w.is_timestamps_dropped() {
            warn(shown(path), w);
        }
    }
}

/// OTLP v1development data whatever its top-level type; borrowed when it
/// is `ProfilesData` already (profiles can be gigabytes in memory), copied
/// out of an export request.
pub fn development_data(message: &dyn MessageDyn) -> Option<Cow<'_, DevelopmentData>> {
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
    if let Some(d) = message.downcast_ref::<DevelopmentData>() {
        return Some(Cow::Borrowed(d));
    }
    message
        .downcast_ref::<ExportProfilesServiceRequest>()
        .map(|r| {
            Cow::Owned(DevelopmentData {
                resource_profiles: r.resource_profiles.clone(),
                dictionary: r.dictionary.clone(),
                ..Default::default()
            })
        })
}

/// OTLP data whatever its top-level type (the export request has the same
/// form); borrowed when it is `ProfilesData` already.
pub fn otlp_data(message: &dyn MessageDyn) -> Option<Cow<'_, ProfilesData>> {
    use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1experimental::ExportProfilesServiceRequest;
    if let Some(d) = message.downcast_ref::<ProfilesData>() {
        return Some(Cow::Borrowed(d));
    }
    message
        .downcast_ref::<ExportProfilesServiceRequest>()
        .map(|r| {
            Cow::Owned(ProfilesData {
                resource_profiles: r.resource_profiles.clone(),
                ..Default::default()
            })
        })
}

/// Each v1development profile as pprof, named by its path; samples whose
/// references resolve to nothing refused, or left out with `--drop-invalid`.
pub fn development_each(
    path: &Path,
    data: &mut Cow<'_, DevelopmentData>,
) -> Result<Vec<(String, Profile)>> {
    let each = match protoprof_pprof_bridge::development_to_pprof_each(data) {
        Ok(each) => each,
        Err(error) => {
            let dropped = protoprof_pprof_bridge::drop_invalid_samples(data.to_mut());
            left_out(path, dropped, error)?;
            protoprof_pprof_bridge::development_to_pprof_each(data).context(shown(path))?
        }
    };
    let each = each.into_iter().map(|(at, converted)| {
        print_bridge_warnings(path, &converted.warnings);
        (at, converted.value)
    });
    Ok(each.collect())
}

/// Each v1experimental container as pprof, as [`development_each`].
pub fn experimental_each(
    path: &Path,
    data: &mut Cow<'_, ProfilesData>,
) -> Result<Vec<(String, Profile)>> {
    let converted = match protoprof_pprof_bridge::otlp_to_pprof(data) {
        Ok(converted) => converted,
        Err(error) => {
            let dropped = protoprof_pprof_bridge::drop_invalid_experimental_samples(data.to_mut());
            left_out(path, dropped, error)?;
            protoprof_pprof_bridge::otlp_to_pprof(data).context(shown(path))?
        }
    };
    print_bridge_warnings(path, &converted.warnings);
    let at = |n: usize| format!("container {n}");
    Ok(converted
        .value
        .into_iter()
        .enumerate()
        .map(|(n, p)| (at(n), p))
        .collect())
}
