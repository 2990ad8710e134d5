//! The gRPC routes, read from the generated service table
//! (`protoprof_model_relay::SCHEMA.services`), so they cannot drift from
//! `proto/`. What a method does follows from its message types: who sends
//! `DiscoveryResponse`s is a management server upstreaming, who sends
//! `DiscoveryRequest`s is a proxy subscribing.

use protobuf::MessageFull;
use protoprof_model_meta::{Method, Service};
use protoprof_model_relay::envoy::service::discovery::v3::{
    DeltaDiscoveryRequest, DeltaDiscoveryResponse, DiscoveryRequest, DiscoveryResponse,
};
use protoprof_model_relay::SCHEMA;

/// The relay's own service: management servers upstream, proxies subscribe.
pub const RELAY_SERVICE: &str = "quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService";
/// Envoy's aggregated discovery service, which the relay serves to proxies.
pub const ADS_SERVICE: &str = "envoy.service.discovery.v3.AggregatedDiscoveryService";

/// Who is on the other end of a stream, and in which form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A management server upstreaming state of the world (it sends responses).
    UpstreamSotw,
    /// A management server upstreaming incrementally.
    UpstreamDelta,
    /// A proxy subscribing to state of the world.
    ProxySotw,
    /// A proxy subscribing incrementally.
    ProxyDelta,
}

impl Role {
    /// The role of a method, from the messages it carries; `None` for a
    /// method the relay does not serve.
    pub fn of(method: &Method) -> Option<Role> {
        let name = |d: protobuf::reflect::MessageDescriptor| d.full_name().to_string();
        let (input, output) = (method.input, method.output);
        let pairs = [
            (
                name(DiscoveryResponse::descriptor()),
                name(DiscoveryRequest::descriptor()),
                Role::UpstreamSotw,
            ),
            (
                name(DeltaDiscoveryResponse::descriptor()),
                name(DeltaDiscoveryRequest::descriptor()),
                Role::UpstreamDelta,
            ),
            (
                name(DiscoveryRequest::descriptor()),
                name(DiscoveryResponse::descriptor()),
                Role::ProxySotw,
            ),
            (
                name(DeltaDiscoveryRequest::descriptor()),
                name(DeltaDiscoveryResponse::descriptor()),
                Role::ProxyDelta,
            ),
        ];
        let streaming = method.client_streaming && method.server_streaming;
        pairs
            .into_iter()
            .find(|(i, o, _)| streaming && i == input && o == output)
            .map(|(_, _, role)| role)
    }

    /// A short word for logs.
    pub fn label(self) -> &'static str {
        match self {
            Role::UpstreamSotw => "management server (state of the world)",
            Role::UpstreamDelta => "management server (delta)",
            Role::ProxySotw => "proxy (state of the world)",
            Role::ProxyDelta => "proxy (delta)",
        }
    }
}

/// One method the relay serves.
#[derive(Debug, Clone)]
pub struct Route {
    /// `/package.Service/Method`.
    pub path: String,
    /// The service's full name.
    pub service: &'static str,
    /// The method's name.
    pub method: &'static str,
    /// What the method does.
    pub role: Role,
}

/// Every method of every service in the schema that the relay serves.
pub fn routes() -> Vec<Route> {
    SCHEMA
        .services
        .iter()
        .flat_map(|service| service.methods.iter().map(move |m| (service, m)))
        .filter_map(|(service, method)| route(service, method))
        .collect()
}

fn route(service: &'static Service, method: &'static Method) -> Option<Route> {
    Some(Route {
        path: method.grpc_path(service),
        service: service.full_name,
        method: method.name,
        role: Role::of(method)?,
    })
}

/// The path of the method of `service` that has `role`.
pub fn path_of(service: &str, role: Role) -> Option<String> {
    routes()
        .into_iter()
        .find(|r| r.service == service && r.role == role)
        .map(|r| r.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_of_the_schema_is_served() {
        let methods: usize = SCHEMA.services.iter().map(|s| s.methods.len()).sum();
        let routes = routes();
        assert_eq!(routes.len(), methods, "{routes:#?}");
        let relay = |role| path_of(RELAY_SERVICE, role);
        assert_eq!(
            relay(Role::UpstreamSotw).as_deref(),
            Some("/quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService/StreamAggregatedResources")
        );
        assert_eq!(
            relay(Role::ProxyDelta).as_deref(),
            Some("/quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService/SubscribeDeltaResources")
        );
        assert_eq!(
            path_of(ADS_SERVICE, Role::ProxySotw).as_deref(),
            Some(
                "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
            )
        );
        assert!(path_of(ADS_SERVICE, Role::UpstreamDelta).is_none());
    }
}
