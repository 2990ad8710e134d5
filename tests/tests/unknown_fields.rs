//! Fields a model does not know survive decode -> encode byte for byte.

use protobuf::{Message, UnknownValueRef};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_model_relay::envoy::service::discovery::v3::DiscoveryRequest;
use protoprof_tests::hex;

fn assert_round_trip<M: Message>(bytes: &[u8]) -> M {
    let message = M::parse_from_bytes(bytes).expect("decode");
    let again = message.write_to_bytes().expect("encode");
    assert_eq!(
        hex_string(&again),
        hex_string(bytes),
        "re-encoded bytes differ"
    );
    message
}

fn hex_string(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn envoy_full_node_inside_discovery_request() {
    // A DiscoveryRequest whose Node carries Envoy's fields 7-12, which the
    // relay's Node subset does not declare, plus an unknown field 7 of the
    // request itself (Envoy's dynamic_parameter_constraints).
    let node = hex(concat!(
        "0a 02 6e 31",             // id "n1"
        "12 01 63",                // cluster "c"
        "3a 05 31 2e 32 2e 33",    // 7 user_agent_version "1.2.3"
        "42 04 0a 02 08 01",       // 8 user_agent_build_version {version {major 1}}
        "4a 03 0a 01 65",          // 9 extensions [{name "e"}]
        "52 01 66",                // 10 client_features ["f"]
        "52 01 67",                //    client_features ["g"]
        "5a 00",                   // 11 listening_addresses [{}]
        "62 06 0a 01 6b 12 01 76", // 12 dynamic_parameters {"k": ...}
    ));
    let mut request = vec![0x0a, 0x01, 0x31, 0x12, node.len() as u8];
    request.extend_from_slice(&node);
    request.extend(hex("22 01 74  3a 00"));

    let decoded: DiscoveryRequest = assert_round_trip(&request);
    let node = decoded.node.as_ref().expect("node");
    assert_eq!(node.id, "n1");
    let unknown = node.special_fields.unknown_fields();
    assert_eq!(
        unknown.get(7),
        Some(UnknownValueRef::LengthDelimited(b"1.2.3"))
    );
    let numbers: Vec<u32> = {
        let mut n: Vec<u32> = unknown.iter().map(|(number, _)| number).collect();
        n.dedup();
        n
    };
    assert_eq!(
        numbers.len(),
        unknown.iter().count() - 1,
        "field 10 appears twice"
    );
}

#[test]
fn unknown_scalars_of_every_wire_type_in_pprof() {
    let bytes = hex(concat!(
        "32 00",                         // string_table [""]
        "48 05",                         // time_nanos 5
        "a0 06 2a",                      // 100: varint 42
        "ad 06 01 02 03 04",             // 101: fixed32
        "b1 06 01 02 03 04 05 06 07 08", // 102: fixed64
        "ba 06 02 68 69",                // 103: bytes "hi"
    ));
    let profile: Profile = assert_round_trip(&bytes);
    assert_eq!(profile.time_nanos, 5);
    assert_eq!(profile.special_fields.unknown_fields().iter().count(), 4);
}

#[test]
fn reserved_field_1000_of_resource_profiles_survives() {
    // ProfilesData { resource_profiles [{ 1000: "x" }] }: 1000 is reserved, so
    // the model keeps it as an unknown field.
    let bytes = hex("0a 04 c2 3e 01 78");
    let data: ProfilesData = assert_round_trip(&bytes);
    let unknown = data.resource_profiles[0].special_fields.unknown_fields();
    assert_eq!(
        unknown.get(1000),
        Some(UnknownValueRef::LengthDelimited(b"x"))
    );
}

#[test]
fn many_unknown_fields_keep_their_order() {
    // string_table [""] followed by unknown varint fields 100..=160, in order.
    let mut bytes = hex("32 00");
    for number in 100u32..=160 {
        let tag = number << 3;
        bytes.extend([
            (tag as u8 & 0x7f) | 0x80,
            (tag >> 7) as u8,
            number as u8 & 0x7f,
        ]);
    }
    let profile: Profile = assert_round_trip(&bytes);
    assert_eq!(profile.special_fields.unknown_fields().iter().count(), 61);
}
