//! Where a profile sits in OTLP: its resource and instrumentation scope.

use protobuf::MessageField;
use protoprof_model_otlp::opentelemetry::proto::common::v1::InstrumentationScope;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;
use protoprof_model_otlp::opentelemetry::proto::resource::v1::Resource;

/// The resource and scope a container belongs to, with their schema URLs.
/// pprof -> OTLP builds one for the container it makes; OTLP -> pprof
/// carries the container's into `otlp:` comments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Envelope {
    /// The resource (`ResourceProfiles.resource`); OTLP lets it be absent.
    pub resource: MessageField<Resource>,
    /// `ResourceProfiles.schema_url`.
    pub resource_schema_url: String,
    /// The scope (`ScopeProfiles.scope`); OTLP lets it be absent.
    pub scope: MessageField<InstrumentationScope>,
    /// `ScopeProfiles.schema_url`.
    pub scope_schema_url: String,
}

impl Envelope {
    /// The envelope of the containers of `resource` and `scope`.
    pub fn of(resource: &otlp::ResourceProfiles, scope: &otlp::ScopeProfiles) -> Envelope {
        Envelope {
            resource: resource.resource.clone(),
            resource_schema_url: resource.schema_url.clone(),
            scope: scope.scope.clone(),
            scope_schema_url: scope.schema_url.clone(),
        }
    }

    /// `ProfilesData` with one resource and one scope holding `containers`.
    pub fn wrap(self, containers: Vec<otlp::ProfileContainer>) -> otlp::ProfilesData {
        otlp::ProfilesData {
            resource_profiles: vec![otlp::ResourceProfiles {
                resource: self.resource,
                schema_url: self.resource_schema_url,
                scope_profiles: vec![otlp::ScopeProfiles {
                    scope: self.scope,
                    schema_url: self.scope_schema_url,
                    profiles: containers,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }
    }
}
