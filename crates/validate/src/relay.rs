//! Relay / xDS: type URLs agree (through `Resource` wrappers), delta responses
//! carry a nonce and name their resources, NACKs echo a nonce.
//!
//! Unknown fields are reported everywhere except inside `Node`: the relay's
//! Node is deliberately a subset of Envoy's, whose other fields (7-12) are
//! expected and carried unchanged.

use protobuf::Message;
use protoprof_model_meta::RefPath;
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse, Resource,
};

use crate::references::report_unknown;
use crate::report::{Collector, Options, Report};
use crate::rules;

/// A state-of-the-world resource may come wrapped in a `Resource` (for its
/// name, TTL or cache control); the type to check is then the wrapped one's.
const WRAPPER_TYPE_URL: &str = "type.googleapis.com/envoy.service.discovery.v3.Resource";

fn unknown(special: &protobuf::SpecialFields, message: &str, path: String, c: &mut Collector) {
    report_unknown(
        c,
        &rules::RELAY_UNKNOWN,
        message,
        || path,
        special.unknown_fields(),
    );
}

fn type_url(expected: &str, found: &str, at: impl FnOnce() -> String, c: &mut Collector) {
    if !expected.is_empty() && found != expected {
        c.report(
            &rules::RELAY_TYPE_URL,
            at,
            Some(format!("{found:?}")),
            || format!("the response's type_url is {expected:?}"),
        );
    }
}

/// Validates an xDS `DiscoveryResponse` (resource type URLs, unknown fields).
pub fn validate_discovery_response(r: &DiscoveryResponse, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    unknown(
        &r.special_fields,
        "DiscoveryResponse",
        String::new(),
        &mut c,
    );
    for (i, resource) in r.resources.iter().enumerate() {
        let at = || RefPath::new().with_field("resources", Some(i));
        if resource.type_url != WRAPPER_TYPE_URL {
            type_url(
                &r.type_url,
                &resource.type_url,
                || at() + ".type_url",
                &mut c,
            );
            continue;
        }
        match Resource::parse_from_bytes(&resource.value) {
            Ok(wrapper) => {
                let inner = wrapper
                    .resource
                    .as_ref()
                    .map_or("", |a| a.type_url.as_str());
                type_url(
                    &r.type_url,
                    inner,
                    || at() + ".value.resource.type_url",
                    &mut c,
                );
            }
            Err(e) => c.report(
                &rules::RELAY_WRAPPER,
                || at() + ".value",
                None,
                || format!("the wrapper does not decode: {e}"),
            ),
        }
    }
    c.finish("envoy.service.discovery.v3.DiscoveryResponse")
}

/// Validates an xDS `DeltaDiscoveryResponse` (resource type URLs, nonce, unknown fields).
pub fn validate_delta_discovery_response(r: &DeltaDiscoveryResponse, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    unknown(
        &r.special_fields,
        "DeltaDiscoveryResponse",
        String::new(),
        &mut c,
    );
    if r.nonce.is_empty() {
        c.report(
            &rules::RELAY_NONCE,
            || "nonce".into(),
            None,
            || "incremental xDS responses require a nonce".into(),
        );
    }
    for (i, resource) in r.resources.iter().enumerate() {
        let at = || RefPath::new().with_field("resources", Some(i));
        unknown(&resource.special_fields, "Resource", at(), &mut c);
        if resource.name.is_empty() {
            c.report(
                &rules::RELAY_NAME,
                || at() + ".name",
                None,
                || "incremental xDS identifies resources by name".into(),
            );
        }
        if let Some(any) = resource.resource.as_ref() {
            type_url(
                &r.type_url,
                &any.type_url,
                || at() + ".resource.type_url",
                &mut c,
            );
        }
    }
    c.finish("envoy.service.discovery.v3.DeltaDiscoveryResponse")
}

fn nack(error_detail_set: bool, nonce: &str, c: &mut Collector) {
    if error_detail_set && nonce.is_empty() {
        c.report(
            &rules::RELAY_NACK,
            || "response_nonce".into(),
            None,
            || "a NACK (error_detail set) must echo the nonce of the response it rejects".into(),
        );
    }
}

/// Validates an xDS `DiscoveryRequest` (NACK shape, unknown fields).
pub fn validate_discovery_request(r: &DiscoveryRequest, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    unknown(&r.special_fields, "DiscoveryRequest", String::new(), &mut c);
    nack(r.error_detail.is_some(), &r.response_nonce, &mut c);
    c.finish("envoy.service.discovery.v3.DiscoveryRequest")
}

/// Validates an xDS `DeltaDiscoveryRequest` (NACK shape, unknown fields).
pub fn validate_delta_discovery_request(r: &DeltaDiscoveryRequest, options: &Options) -> Report {
    let mut c = Collector::new(*options);
    unknown(
        &r.special_fields,
        "DeltaDiscoveryRequest",
        String::new(),
        &mut c,
    );
    nack(r.error_detail.is_some(), &r.response_nonce, &mut c);
    c.finish("envoy.service.discovery.v3.DeltaDiscoveryRequest")
}
