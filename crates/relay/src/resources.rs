//! What a resource is called and which version it has: the rules shared by
//! the relay and the management-server client, so both name a resource the
//! same way (docs/relay.md, "Names and versions").

use protobuf::well_known_types::any::Any;
use protobuf::{Message, MessageField, MessageFull};
use protoprof_model_relay::envoy::service::discovery::v3::Resource;
use sha2::{Digest, Sha256};

/// The prefix of the type URLs of packed messages.
pub const TYPE_URL_PREFIX: &str = "type.googleapis.com/";

/// The type URL of a message type, e.g. `type.googleapis.com/envoy.service.discovery.v3.Resource`.
pub fn type_url_of<M: MessageFull>() -> String {
    format!("{TYPE_URL_PREFIX}{}", M::descriptor().full_name())
}

/// The message type a type URL names (the part after the last `/`).
pub fn message_name(type_url: &str) -> &str {
    type_url.rsplit('/').next().unwrap_or(type_url)
}

/// One resource as the relay stores and serves it.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedResource {
    /// The delta form: name, version and the resource itself (with the
    /// wrapper's aliases, TTL and cache control when it came wrapped).
    pub resource: Resource,
    /// The state-of-the-world form exactly as it arrived: the `Any` of a
    /// `DiscoveryResponse`, which may be a `Resource` wrapper.
    pub sotw: Any,
}

/// Equality is reflexive (no floating-point fields), and `Eq` lets
/// `Arc<NamedResource>` compare by pointer first: comparing snapshots then
/// costs a pointer comparison for every copy they share.
impl Eq for NamedResource {}

impl NamedResource {
    /// The resource's name.
    pub fn name(&self) -> &str {
        &self.resource.name
    }

    /// The resource's version.
    pub fn version(&self) -> &str {
        &self.resource.version
    }

    /// The type URL of the resource itself (inside any wrapper).
    pub fn type_url(&self) -> &str {
        self.resource
            .resource
            .as_ref()
            .map_or("", |any| any.type_url.as_str())
    }

    /// A resource from a state-of-the-world `Any`. A `Resource` wrapper gives
    /// its name (and version, when set); anything else is named by its
    /// content. Fails only when a wrapper does not decode.
    pub fn from_sotw(any: Any) -> Result<NamedResource, String> {
        if any.type_url == type_url_of::<Resource>() {
            let mut resource = Resource::parse_from_bytes(&any.value)
                .map_err(|e| format!("a Resource wrapper that does not decode: {e}"))?;
            let inner = resource.resource.get_or_default().clone();
            if resource.name.is_empty() {
                resource.name = content_name(&inner);
            }
            if resource.version.is_empty() {
                resource.version = content_version(&inner);
            }
            return Ok(NamedResource {
                resource,
                sotw: any,
            });
        }
        let resource = Resource {
            name: content_name(&any),
            version: content_version(&any),
            resource: MessageField::some(any.clone()),
            ..Resource::default()
        };
        Ok(NamedResource {
            resource,
            sotw: any,
        })
    }

    /// A resource from a delta `Resource`: its own name; its own version, or
    /// one made from its content when it has none. The state-of-the-world
    /// form wraps it, so that a name given in delta survives.
    pub fn from_delta(mut resource: Resource) -> NamedResource {
        let inner = resource.resource.get_or_default().clone();
        if resource.version.is_empty() {
            resource.version = content_version(&inner);
        }
        let sotw = if resource.name.is_empty() {
            inner
        } else {
            Any {
                type_url: type_url_of::<Resource>(),
                value: resource.write_to_bytes().unwrap_or_default(),
                ..Any::default()
            }
        };
        NamedResource { resource, sotw }
    }
}

fn digest(any: &Any) -> String {
    let mut hash = Sha256::new();
    hash.update(any.type_url.as_bytes());
    hash.update([0]);
    hash.update(&any.value);
    short_hex(hash)
}

/// The first 8 bytes of a SHA-256, as 16 hex digits: the relay's names and
/// versions made from content.
pub(crate) fn short_hex(hash: Sha256) -> String {
    hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The name of a resource that has none: `sha256:` and the first 16 hex
/// digits of the SHA-256 of its type URL, a zero byte and its bytes.
pub fn content_name(any: &Any) -> String {
    format!("sha256:{}", digest(any))
}

/// The version of a resource that has none: the same digest as
/// [`content_name`], so a version changes exactly when the content does.
pub fn content_version(any: &Any) -> String {
    digest(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(type_url: &str, value: &[u8]) -> Any {
        Any {
            type_url: type_url.into(),
            value: value.to_vec(),
            ..Any::default()
        }
    }

    #[test]
    fn a_wrapper_names_its_resource_and_content_names_the_rest() {
        let inner = any("type.googleapis.com/x.Cluster", b"\x0a\x01a");
        let wrapper = Resource {
            name: "cluster-a".into(),
            resource: MessageField::some(inner.clone()),
            ..Resource::default()
        };
        let wrapped = NamedResource::from_delta(wrapper.clone());
        assert_eq!(wrapped.name(), "cluster-a");
        assert_eq!(wrapped.type_url(), "type.googleapis.com/x.Cluster");
        let again = NamedResource::from_sotw(wrapped.sotw.clone()).unwrap();
        assert_eq!(again.resource, wrapped.resource);

        let bare = NamedResource::from_sotw(inner.clone()).unwrap();
        assert!(bare.name().starts_with("sha256:"), "{}", bare.name());
        assert_eq!(bare.sotw, inner);
        let other =
            NamedResource::from_sotw(any("type.googleapis.com/x.Cluster", b"\x0a\x01b")).unwrap();
        assert_ne!(bare.name(), other.name());
        assert_ne!(bare.version(), other.version());
    }

    #[test]
    fn a_wrapper_that_does_not_decode_is_refused() {
        let broken = any(&type_url_of::<Resource>(), b"\x0a\xff");
        assert!(NamedResource::from_sotw(broken).is_err());
    }
}
