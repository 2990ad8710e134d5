//! The well-known types' own JSON forms, both ways: Timestamp (RFC 3339),
//! Duration (`"1.5s"`), the wrappers (their value), Struct, Value and
//! ListValue (any JSON), FieldMask (`"a.b,cD"`), Empty and Any (`@type`).
//! Fractions of a second print with 0, 3, 6 or 9 digits, as every
//! implementation of the mapping prints them. What the printer
//! (`proto3`) and the reader (`proto3_parse`) share; each dispatches the
//! types whose JSON holds other messages itself.

use protobuf::reflect::{FieldDescriptor, MessageDescriptor, ReflectValueBox, ReflectValueRef};
use protobuf::MessageDyn;
use serde_json::Value;

use protoprof_model_meta::dates::{civil_from_days, days_from_civil};

use crate::error::CodecError;

pub(crate) const WRAPPERS: [&str; 9] = [
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
];

/// Seconds of 9999-12-31T23:59:59Z, the last instant a Timestamp holds.
const MAX_TIMESTAMP_SECONDS: i64 = 253_402_300_799;
/// Seconds of 0001-01-01T00:00:00Z, the first.
const MIN_TIMESTAMP_SECONDS: i64 = -62_135_596_800;
/// Ten thousand years, the Duration range.
const MAX_DURATION_SECONDS: i64 = 315_576_000_000;

/// Whether `descriptor` has a JSON form of its own.
pub(crate) fn is_well_known(descriptor: &MessageDescriptor) -> bool {
    let name = descriptor.full_name();
    WRAPPERS.contains(&name)
        || matches!(
            name,
            "google.protobuf.Timestamp"
                | "google.protobuf.Duration"
                | "google.protobuf.Struct"
                | "google.protobuf.Value"
                | "google.protobuf.ListValue"
                | "google.protobuf.FieldMask"
                | "google.protobuf.Any"
        )
}

pub(crate) fn field(message: &dyn MessageDyn, name: &str) -> Option<ReflectValueBox> {
    let descriptor = message.descriptor_dyn();
    let field = descriptor.field_by_name(name)?;
    Some(field.get_singular_field_or_default(message).to_box())
}

fn int_field(message: &dyn MessageDyn, name: &str) -> i64 {
    match field(message, name) {
        Some(ReflectValueBox::I64(v)) => v,
        Some(ReflectValueBox::I32(v)) => i64::from(v),
        _ => 0,
    }
}

pub(crate) fn json_error(path: &str, detail: String) -> CodecError {
    CodecError::Json {
        path: path.to_string(),
        line: 0,
        column: 0,
        detail,
    }
}

pub(crate) fn timestamp_text(message: &dyn MessageDyn, path: &str) -> Result<String, CodecError> {
    let (seconds, nanos) = (int_field(message, "seconds"), int_field(message, "nanos"));
    if !(MIN_TIMESTAMP_SECONDS..=MAX_TIMESTAMP_SECONDS).contains(&seconds)
        || !(0..1_000_000_000).contains(&nanos)
    {
        return Err(json_error(
            path,
            format!("Timestamp {seconds}s {nanos}ns is outside 0001-01-01 to 9999-12-31"),
        ));
    }
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Ok(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{}Z",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60,
        fraction(nanos)
    ))
}

/// `.123`, `.123456` or `.123456789`: the fewest groups of three digits
/// that hold `nanos` exactly; nothing for 0.
fn fraction(nanos: i64) -> String {
    if nanos == 0 {
        String::new()
    } else if nanos % 1_000_000 == 0 {
        format!(".{:03}", nanos / 1_000_000)
    } else if nanos % 1000 == 0 {
        format!(".{:06}", nanos / 1000)
    } else {
        format!(".{nanos:09}")
    }
}

pub(crate) fn duration_text(message: &dyn MessageDyn, path: &str) -> Result<String, CodecError> {
    let (seconds, nanos) = (int_field(message, "seconds"), int_field(message, "nanos"));
    let same_sign = (seconds >= 0 && nanos >= 0) || (seconds <= 0 && nanos <= 0);
    if seconds.abs() > MAX_DURATION_SECONDS || nanos.abs() >= 1_000_000_000 || !same_sign {
        return Err(json_error(
            path,
            format!("Duration {seconds}s {nanos}ns is out of range or of mixed signs"),
        ));
    }
    let sign = if seconds < 0 || nanos < 0 { "-" } else { "" };
    Ok(format!("{sign}{}{}s", seconds.abs(), fraction(nanos.abs())))
}

pub(crate) fn field_mask_text(message: &dyn MessageDyn) -> String {
    let descriptor = message.descriptor_dyn();
    let paths = descriptor.field_by_name("paths").expect("FieldMask.paths");
    let paths = paths.get_repeated(message);
    paths
        .into_iter()
        .map(|p| match p {
            ReflectValueRef::String(s) => camel_case(s),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn camel_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut upper = false;
    for c in path.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn text_of<'v>(value: &'v Value, path: &str) -> Result<&'v str, CodecError> {
    value
        .as_str()
        .ok_or_else(|| json_error(path, format!("expected a string, found {value}")))
}

pub(crate) fn set_pair(message: &mut dyn MessageDyn, seconds: i64, nanos: i32) {
    let descriptor = message.descriptor_dyn();
    let set = |message: &mut dyn MessageDyn, name: &str, value: ReflectValueBox| {
        let field: FieldDescriptor = descriptor.field_by_name(name).expect("seconds and nanos");
        field.set_singular_field(message, value);
    };
    set(message, "seconds", ReflectValueBox::I64(seconds));
    set(message, "nanos", ReflectValueBox::I32(nanos));
}

pub(crate) fn snake_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 4);
    for c in path.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `1972-01-01T10:00:20.021-05:00` to seconds and nanoseconds since the
/// epoch in UTC.
pub(crate) fn parse_timestamp(text: &str) -> Option<(i64, i32)> {
    let b = text.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)? as u32, number(8..10)? as u32);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos = after_dot[..digits].parse::<i32>().ok()? * 10_i32.pow(9 - digits as u32);
        rest = &after_dot[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        zone if zone.len() == 6 && zone.as_bytes()[3] == b':' => {
            let sign = match zone.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hours: i64 = zone[1..3].parse().ok()?;
            let minutes: i64 = zone[4..6].parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    (MIN_TIMESTAMP_SECONDS..=MAX_TIMESTAMP_SECONDS)
        .contains(&seconds)
        .then_some((seconds, nanos))
}

/// `"-1.5s"` to seconds and nanoseconds of the same sign.
pub(crate) fn parse_duration(text: &str) -> Option<(i64, i32)> {
    let body = text.strip_suffix('s')?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, part) = body.split_once('.').unwrap_or((body, ""));
    if whole.is_empty() || !whole.bytes().all(|c| c.is_ascii_digit()) || part.len() > 9 {
        return None;
    }
    if !part.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let seconds: i64 = whole.parse().ok()?;
    let nanos = if part.is_empty() {
        0
    } else {
        part.parse::<i32>().ok()? * 10_i32.pow(9 - part.len() as u32)
    };
    if seconds > MAX_DURATION_SECONDS {
        return None;
    }
    Some(if negative {
        (-seconds, -nanos)
    } else {
        (seconds, nanos)
    })
}

/// A field path one level down.
pub(crate) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_and_durations_parse() {
        assert_eq!(
            parse_timestamp("1970-01-01T00:01:40.000000005Z"),
            Some((100, 5))
        );
        assert_eq!(
            parse_timestamp("1972-01-01T10:00:20.021-05:00"),
            Some((63_108_020 + 18_000, 21_000_000))
        );
        assert_eq!(parse_timestamp("1970-01-01 00:00:00Z"), None);
        assert_eq!(parse_duration("-1.5s"), Some((-1, -500_000_000)));
        assert_eq!(parse_duration("3s"), Some((3, 0)));
        assert_eq!(parse_duration("1.s"), Some((1, 0)));
        assert_eq!(parse_duration("s"), None);
        assert_eq!(fraction(5), ".000000005");
        assert_eq!(fraction(21_000_000), ".021");
    }
}
