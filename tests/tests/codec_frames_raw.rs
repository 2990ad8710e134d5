//! Framed streams (gRPC, varint-delimited, the Collector file exporter's)
//! and schema-less decoding.

use protobuf::well_known_types::any::Any;
use protobuf::Message;
use protoprof_codec::frame::{write_frame, FrameReader, Framing};
use protoprof_codec::raw::{decode_raw, render, RawValue};
use protoprof_codec::{decode, CodecError, DecodeOptions};
use protoprof_model_relay::envoy::config::core::v3::ControlPlane;
use protoprof_model_relay::envoy::service::discovery::v3::DiscoveryResponse;
use protoprof_tests::corpus_dir;

/// A relay capture: the management server's opening empty response, then two real ones.
fn responses() -> Vec<DiscoveryResponse> {
    let resource = Any::pack(&ControlPlane {
        identifier: "cp-1".into(),
        ..Default::default()
    })
    .unwrap();
    vec![
        DiscoveryResponse::default(),
        DiscoveryResponse {
            version_info: "1".into(),
            resources: vec![resource.clone()],
            nonce: "a".into(),
            ..Default::default()
        },
        DiscoveryResponse {
            version_info: "2".into(),
            resources: vec![resource; 3],
            nonce: "b".into(),
            ..Default::default()
        },
    ]
}

#[test]
fn streams_round_trip_in_every_framing() {
    let options = DecodeOptions {
        allow_empty: true,
        ..Default::default()
    };
    for (framing, gzip) in [
        (Framing::Grpc, None),
        (Framing::Grpc, Some(6)),
        (Framing::VarintDelimited, None),
    ] {
        let mut stream = Vec::new();
        for response in responses() {
            write_frame(
                &mut stream,
                framing,
                &response.write_to_bytes().unwrap(),
                gzip,
            )
            .unwrap();
        }
        let frames: Vec<_> = FrameReader::new(&stream, framing, 1 << 20)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[1].compressed, gzip.is_some());
        let decoded: Vec<DiscoveryResponse> = frames
            .iter()
            .map(|f| decode(&f.payload, &options).unwrap().message)
            .collect();
        assert_eq!(decoded, responses(), "{framing:?} gzip {gzip:?}");
    }
}

#[test]
fn broken_frames_are_reported_with_index_and_offset() {
    let mut stream = Vec::new();
    for response in responses() {
        write_frame(
            &mut stream,
            Framing::Grpc,
            &response.write_to_bytes().unwrap(),
            None,
        )
        .unwrap();
    }
    let truncated = &stream[..stream.len() - 3];
    let results: Vec<_> = FrameReader::new(truncated, Framing::Grpc, 1 << 20).collect();
    assert_eq!(results.len(), 3);
    match &results[2] {
        Err(CodecError::Frame {
            index: 2,
            offset,
            detail,
        }) => {
            assert_eq!(
                *offset as usize,
                5 + 5 + responses()[1].compute_size() as usize
            );
            assert!(detail.contains("only"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
    let big = [0u8, 0x7f, 0xff, 0xff, 0xff];
    let error = FrameReader::new(&big, Framing::Grpc, 1024)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        error.to_string().contains("exceeds the limit of 1024"),
        "{error}"
    );
    let error = FrameReader::new(&[2u8, 0, 0, 0, 0], Framing::Grpc, 1024)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        error.to_string().contains("compressed flag is 2"),
        "{error}"
    );
}

#[test]
fn raw_decode_guesses_messages_strings_and_packed_arrays() {
    let bytes = responses()[1].write_to_bytes().unwrap();
    let fields = decode_raw(&bytes, 100).unwrap();
    assert!(matches!(&fields[0].value, RawValue::String(s) if s == "1"));
    assert!(matches!(&fields[1].value, RawValue::Message(_)));
    insta::assert_snapshot!("raw_discovery_response", render(&fields));
    // pprof sample: packed location ids.
    let sample = [0x12, 0x07, 0x0a, 0x03, 0x01, 0x02, 0x96, 0x01];
    let fields = decode_raw(&sample[..7], 100);
    assert!(fields.is_err(), "truncated input is an error");
}

#[test]
fn raw_decode_stops_guessing_at_the_depth_limit() {
    let Some(corpus) = corpus_dir() else { return };
    let input = std::fs::read(corpus.join("malformed/nested-unknown-field-100k.pb")).unwrap();
    let fields = decode_raw(&input, 100).expect("deep nesting stays bytes past the limit");
    assert!(fields.iter().any(|f| f.number == 100));
    let groups = std::fs::read(corpus.join("malformed/nested-unknown-groups-100k.pb")).unwrap();
    assert!(decode_raw(&groups, 100).is_err());
}

/// The Collector file exporter's protobuf form (each message behind a
/// 4-byte big-endian length), as the profiling SIG publishes benchmark
/// data: detected, split, and written back byte for byte.
#[test]
fn file_exporter_streams_are_detected_and_split() {
    use protoprof_codec::detect::{detect, Form};
    use protoprof_codec::frame::{write_frame, FrameReader, Framing};
    let Some(corpus) = protoprof_tests::corpus_dir() else {
        return;
    };
    let dir = corpus.join("otlp/v1development");
    let messages: Vec<Vec<u8>> = [
        "v1development-1.10-ebpf-export-request.pb",
        "v1development-1.8-ebpf-export-request.pb",
    ]
    .iter()
    .map(|name| std::fs::read(dir.join(name)).unwrap())
    .collect();
    let mut stream = Vec::new();
    for m in &messages {
        write_frame(&mut stream, Framing::FileExporter, m, None).unwrap();
    }
    assert_eq!(&stream[..4], &(messages[0].len() as u32).to_be_bytes());
    let detection = detect(&stream, &protoprof_codec::Limits::default()).unwrap();
    assert_eq!(detection.form, Form::FileExporterFrames);
    let payloads: Vec<Vec<u8>> = FrameReader::new(&stream, Framing::FileExporter, 1 << 30)
        .map(|f| f.unwrap().payload.into_owned())
        .collect();
    assert_eq!(payloads, messages);
    // A cut stream is an error naming the frame, not a shorter stream.
    let cut = &stream[..stream.len() - 1];
    let last = FrameReader::new(cut, Framing::FileExporter, 1 << 30)
        .last()
        .unwrap();
    assert!(last.unwrap_err().to_string().contains("frame 1"));
}
