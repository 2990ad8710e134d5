//! What `send` sends for one input: OTLP v1development export requests.
//! pprof is converted by the bridge; OTLP v1development of any revision
//! the codec reads is sent in the current one. An input larger than the
//! receiver's limit is split between profiles, each request carrying the
//! dictionary, so each stands alone.

use crate::Counts;
use protobuf::{Message, MessageDyn};
use protoprof_codec::{decode_any_view, AutoView, DecodeOptions};
use protoprof_model_meta::ProfileSetSamples;
use protoprof_model_otlp::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use protoprof_model_otlp::opentelemetry::proto::common::v1::KeyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    ProfilesData, ResourceProfiles, ScopeProfiles,
};
use protoprof_pprof_bridge::{pprof_to_development_bytes, ToDevelopmentOptions};

use crate::receive::check::EXPORT_REQUEST;
use crate::NetError;

/// How inputs become requests.
#[derive(Debug, Clone, Default)]
pub struct PayloadOptions {
    /// The largest request, in bytes.
    pub max_request_bytes: usize,
    /// How inputs are decoded.
    pub decode: DecodeOptions,
    /// Resource attributes given to converted pprof profiles.
    pub resource_attributes: Vec<KeyValue>,
}

/// One export request, encoded.
#[derive(Debug, Clone)]
pub struct Request {
    /// `ExportProfilesServiceRequest`, binary.
    pub bytes: Vec<u8>,
    /// Profiles and samples in it.
    pub counts: Counts,
}

/// The requests that carry input `what` (its `bytes`, possibly gzip).
pub fn requests_of(
    what: &str,
    bytes: Vec<u8>,
    options: &PayloadOptions,
) -> Result<Vec<Request>, NetError> {
    let fail = |message: String| NetError::Payload {
        what: what.to_string(),
        message,
    };
    let view = decode_any_view(bytes, None, &options.decode).map_err(|e| fail(e.to_string()))?;
    let request = match view {
        AutoView::Pprof(view) => {
            let conversion = ToDevelopmentOptions {
                resource_attributes: options.resource_attributes.clone(),
                ..ToDevelopmentOptions::default()
            };
            let bytes = pprof_to_development_bytes(&view.message, &conversion)
                .map_err(|e| fail(e.to_string()))?
                .value;
            if bytes.len() <= options.max_request_bytes {
                return Ok(vec![counted_in_view(bytes).map_err(fail)?]);
            }
            ExportProfilesServiceRequest::parse_from_bytes(&bytes)
                .map_err(|e| fail(e.to_string()))?
        }
        AutoView::Development(view) => request_of(view.message.into_message())
            .ok_or_else(|| fail("not OTLP profiles v1development".into()))?,
        other => {
            let decoded = other.into_decoded();
            let name = decoded.descriptor.full_name().to_string();
            request_of(decoded.decoded.message).ok_or_else(|| {
                fail(format!(
                    "{name} is not sent as it is: send takes pprof and OTLP profiles v1development \
                     (convert v1experimental first: protoprof convert --to otlp)"
                ))
            })?
        }
    };
    split(request, options.max_request_bytes).map_err(fail)
}

/// The export request of v1development data or of a request.
fn request_of(message: Box<dyn MessageDyn>) -> Option<ExportProfilesServiceRequest> {
    let message = match message.downcast_box::<ExportProfilesServiceRequest>() {
        Ok(request) => return Some(*request),
        Err(message) => message,
    };
    let data = *message.downcast_box::<ProfilesData>().ok()?;
    Some(ExportProfilesServiceRequest {
        resource_profiles: data.resource_profiles,
        dictionary: data.dictionary,
        special_fields: data.special_fields,
    })
}

/// `bytes` (an encoded request) with its profiles and samples counted
/// through the codec's view, which leaves the samples in the bytes: no
/// model is built of a request that is sent as it is.
fn counted_in_view(bytes: Vec<u8>) -> Result<Request, String> {
    let options = DecodeOptions::default();
    let counts = match decode_any_view(&bytes[..], Some(EXPORT_REQUEST), &options) {
        Ok(AutoView::Development(view)) => {
            let view = &view.message;
            Counts::of((0..view.profile_count()).map(|n| view.sample_count(n)))
        }
        Ok(_) => return Err(format!("the conversion is not an {EXPORT_REQUEST}")),
        Err(e) => return Err(e.to_string()),
    };
    Ok(Request { bytes, counts })
}

fn counted(bytes: Vec<u8>, request: &ExportProfilesServiceRequest) -> Request {
    let profiles = profiles_of(request);
    Request {
        bytes,
        counts: Counts::of(profiles.iter().map(|p| p.samples.len())),
    }
}

fn profiles_of(
    request: &ExportProfilesServiceRequest,
) -> Vec<&protoprof_model_otlp::opentelemetry::proto::profiles::v1development::Profile> {
    request
        .resource_profiles
        .iter()
        .flat_map(|r| &r.scope_profiles)
        .flat_map(|s| &s.profiles)
        .collect()
}

/// `request` as requests of at most `max` bytes, split between profiles
/// (in order), each with the dictionary.
fn split(request: ExportProfilesServiceRequest, max: usize) -> Result<Vec<Request>, String> {
    let whole = request.write_to_bytes().map_err(|e| e.to_string())?;
    if whole.len() <= max {
        return Ok(vec![counted(whole, &request)]);
    }
    let mut pieces = Pieces::new(&request);
    for (r, resource) in request.resource_profiles.iter().enumerate() {
        for (s, scope) in resource.scope_profiles.iter().enumerate() {
            for profile in &scope.profiles {
                let size = profile.compute_size() as usize + 32;
                if pieces.size + size > max && pieces.holds_profiles {
                    pieces.finish()?;
                }
                pieces.add(([r, s], resource, scope), profile.clone(), size);
                if pieces.size > max {
                    return Err(format!(
                        "one profile with the dictionary takes {} bytes, more than the request \
                         limit of {max} bytes",
                        pieces.size
                    ));
                }
            }
        }
    }
    pieces.finish()?;
    Ok(pieces.done)
}

/// Requests being filled.
struct Pieces {
    dictionary_size: usize,
    template: ExportProfilesServiceRequest,
    current: ExportProfilesServiceRequest,
    /// The (resource, scope) the current request's last scope holds.
    last: Option<[usize; 2]>,
    size: usize,
    holds_profiles: bool,
    done: Vec<Request>,
}

impl Pieces {
    fn new(request: &ExportProfilesServiceRequest) -> Pieces {
        let template = ExportProfilesServiceRequest {
            dictionary: request.dictionary.clone(),
            ..Default::default()
        };
        let dictionary_size = template.compute_size() as usize;
        Pieces {
            dictionary_size,
            current: template.clone(),
            template,
            last: None,
            size: dictionary_size,
            holds_profiles: false,
            done: Vec::new(),
        }
    }

    fn add(
        &mut self,
        (at, resource, scope): ([usize; 2], &ResourceProfiles, &ScopeProfiles),
        profile: protoprof_model_otlp::opentelemetry::proto::profiles::v1development::Profile,
        size: usize,
    ) {
        if self.last.map(|[r, _]| r) != Some(at[0]) {
            let mut copy = resource.clone();
            copy.scope_profiles.clear();
            self.size += copy.compute_size() as usize + 8;
            self.current.resource_profiles.push(copy);
        }
        let resource_copy = self
            .current
            .resource_profiles
            .last_mut()
            .expect("pushed above");
        if self.last != Some(at) {
            let mut copy = scope.clone();
            copy.profiles.clear();
            self.size += copy.compute_size() as usize + 8;
            resource_copy.scope_profiles.push(copy);
        }
        let scope_copy = resource_copy
            .scope_profiles
            .last_mut()
            .expect("pushed above");
        scope_copy.profiles.push(profile);
        self.size += size;
        self.last = Some(at);
        self.holds_profiles = true;
    }

    fn finish(&mut self) -> Result<(), String> {
        if !self.holds_profiles {
            return Ok(());
        }
        let request = std::mem::replace(&mut self.current, self.template.clone());
        let bytes = request.write_to_bytes().map_err(|e| e.to_string())?;
        self.done.push(counted(bytes, &request));
        self.last = None;
        self.size = self.dictionary_size;
        self.holds_profiles = false;
        Ok(())
    }
}
