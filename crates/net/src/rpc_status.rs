//! `google.rpc.Status`, the error body of OTLP over HTTP, and the mapping
//! between gRPC codes and HTTP statuses the Collector applies
//! (`otlp-transport.md`): one table for the receiver's answers and the
//! sender's retries.

use tonic::Code;

/// `google.rpc.Status` with no details, encoded as protobuf: `code` is
/// field 1 (int32), `message` field 2 (string).
pub fn status_proto(code: Code, message: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 12);
    let code = code as i32 as u64;
    if code != 0 {
        out.push(0x08);
        put_varint(&mut out, code);
    }
    if !message.is_empty() {
        out.push(0x12);
        put_varint(&mut out, message.len() as u64);
        out.extend_from_slice(message.as_bytes());
    }
    out
}

/// `google.rpc.Status` in the protobuf JSON mapping, as the Collector
/// writes it for a JSON request.
pub fn status_json(code: Code, message: &str) -> Vec<u8> {
    serde_json::json!({ "code": code as i32, "message": message })
        .to_string()
        .into_bytes()
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The HTTP status the Collector answers for a gRPC `code`.
pub fn http_status_of(code: Code) -> u16 {
    match code {
        Code::Ok => 200,
        Code::Cancelled
        | Code::DeadlineExceeded
        | Code::Aborted
        | Code::OutOfRange
        | Code::Unavailable
        | Code::DataLoss => 503,
        Code::ResourceExhausted => 429,
        Code::InvalidArgument => 400,
        Code::Unauthenticated => 401,
        Code::PermissionDenied => 403,
        Code::Unimplemented => 404,
        _ => 500,
    }
}

/// Whether an exporter retries after `code` (the OTLP specification's
/// retryable codes; `RESOURCE_EXHAUSTED` only with a `RetryInfo`).
pub fn grpc_retryable(code: Code, has_retry_info: bool) -> bool {
    matches!(
        code,
        Code::Cancelled
            | Code::DeadlineExceeded
            | Code::Aborted
            | Code::OutOfRange
            | Code::Unavailable
            | Code::DataLoss
    ) || (code == Code::ResourceExhausted && has_retry_info)
}

/// Whether an exporter retries after HTTP `status`.
pub fn http_retryable(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

/// The message of a `google.rpc.Status` in protobuf (field 2).
pub fn status_message(bytes: &[u8]) -> Option<String> {
    let mut message = None;
    each_field(bytes, |number, value| {
        if number == 2 {
            message = Some(String::from_utf8_lossy(value).into_owned());
        }
    })?;
    message
}

/// The delay of the `google.rpc.RetryInfo` among the details of a
/// `google.rpc.Status` in protobuf (what gRPC carries in
/// `grpc-status-details-bin`).
pub fn retry_delay(status: &[u8]) -> Option<std::time::Duration> {
    let mut delay = None;
    each_field(status, |number, any| {
        if number != 3 || delay.is_some() {
            return;
        }
        let (mut type_url, mut value) = (&[][..], &[][..]);
        each_field(any, |n, v| match n {
            1 => type_url = v,
            2 => value = v,
            _ => {}
        });
        if type_url.ends_with(b"/google.rpc.RetryInfo") {
            delay = retry_info_delay(value);
        }
    })?;
    delay
}

/// `RetryInfo.retry_delay` (field 1, a `google.protobuf.Duration`).
fn retry_info_delay(retry_info: &[u8]) -> Option<std::time::Duration> {
    let mut duration = None;
    each_field(retry_info, |number, value| {
        if number == 1 {
            duration = Some(value);
        }
    })?;
    let (mut seconds, mut nanos) = (0u64, 0u64);
    each_varint(duration?, |n, v| match n {
        1 => seconds = v,
        2 => nanos = v,
        _ => {}
    })?;
    Some(std::time::Duration::new(
        seconds,
        nanos.min(999_999_999) as u32,
    ))
}

/// Hands each length-delimited field of `bytes` to `each`, skipping the
/// others; `None` when the bytes are not a message.
fn each_field<'a>(bytes: &'a [u8], mut each: impl FnMut(u32, &'a [u8])) -> Option<()> {
    let mut pos = 0;
    while pos < bytes.len() {
        let tag = varint(bytes, &mut pos)?;
        let (number, wire_type) = (u32::try_from(tag >> 3).ok()?, tag & 7);
        match wire_type {
            0 => drop(varint(bytes, &mut pos)?),
            1 => pos = pos.checked_add(8)?,
            5 => pos = pos.checked_add(4)?,
            2 => {
                let length = usize::try_from(varint(bytes, &mut pos)?).ok()?;
                let end = pos.checked_add(length).filter(|end| *end <= bytes.len())?;
                each(number, &bytes[pos..end]);
                pos = end;
            }
            _ => return None,
        }
    }
    (pos == bytes.len()).then_some(())
}

/// Each varint field of `bytes`.
fn each_varint(bytes: &[u8], mut each: impl FnMut(u32, u64)) -> Option<()> {
    let mut pos = 0;
    while pos < bytes.len() {
        let tag = varint(bytes, &mut pos)?;
        if tag & 7 != 0 {
            return None;
        }
        each(u32::try_from(tag >> 3).ok()?, varint(bytes, &mut pos)?);
    }
    Some(())
}

fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_bytes_match_the_collectors() {
        // What the Collector v0.165.0 answered to `Content-Encoding: br`.
        let body = status_proto(Code::InvalidArgument, "unsupported Content-Encoding: br");
        assert_eq!(&body[..3], b"\x08\x03\x12");
        assert_eq!(body.len(), 36);
        assert_eq!(
            String::from_utf8(status_json(Code::InvalidArgument, "x")).unwrap(),
            r#"{"code":3,"message":"x"}"#
        );
    }

    #[test]
    fn codes_map_as_the_collector_maps_them() {
        assert_eq!(http_status_of(Code::ResourceExhausted), 429);
        assert_eq!(http_status_of(Code::Unavailable), 503);
        assert_eq!(http_status_of(Code::Internal), 500);
        assert!(grpc_retryable(Code::Unavailable, false));
        assert!(!grpc_retryable(Code::ResourceExhausted, false));
        assert!(grpc_retryable(Code::ResourceExhausted, true));
        assert!(http_retryable(503) && !http_retryable(400));
    }

    #[test]
    fn retry_info_is_found_among_the_details() {
        // RetryInfo { retry_delay: Duration { seconds: 2, nanos: 500000000 } }
        let duration = [0x08, 0x02, 0x10, 0x80, 0xca, 0xb5, 0xee, 0x01];
        let mut retry_info = vec![0x0a, duration.len() as u8];
        retry_info.extend_from_slice(&duration);
        let type_url = b"type.googleapis.com/google.rpc.RetryInfo";
        let mut any = vec![0x0a, type_url.len() as u8];
        any.extend_from_slice(type_url);
        any.extend_from_slice(&[0x12, retry_info.len() as u8]);
        any.extend_from_slice(&retry_info);
        let mut status = status_proto(Code::Unavailable, "busy");
        status.extend_from_slice(&[0x1a, any.len() as u8]);
        status.extend_from_slice(&any);
        assert_eq!(
            retry_delay(&status),
            Some(std::time::Duration::from_millis(2500))
        );
        assert_eq!(status_message(&status).as_deref(), Some("busy"));
        assert_eq!(retry_delay(&status_proto(Code::Unavailable, "busy")), None);
    }
}
