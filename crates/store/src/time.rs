//! Times as users give them to `--from` and `--to`: RFC 3339
//! (`2026-11-27T05:00:00Z`), a day (`2026-11-27`, its midnight UTC), Unix
//! nanoseconds, `now`, or relative to now (`-1h`, `-30m`, `-7d`, `-90s`).

use chrono::{DateTime, NaiveDate};

use crate::error::StoreError;

/// `text` as Unix nanoseconds, relative times from `now` (Unix nanoseconds).
pub fn parse_time(text: &str, now: i64) -> Result<i64, StoreError> {
    let text = text.trim();
    let bad = || {
        StoreError::Query(format!(
            "time {text:?}: expected RFC 3339 (2026-11-27T05:00:00Z), a day (2026-11-27), \
             Unix nanoseconds, now, or a time before now (-1h, -30m, -7d, -90s)"
        ))
    };
    if text == "now" {
        return Ok(now);
    }
    if let Some(relative) = text.strip_prefix('-') {
        let (number, unit) = relative.split_at(relative.len().saturating_sub(1));
        let number: i64 = number.parse().map_err(|_| bad())?;
        let seconds = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            "w" => 7 * 86_400,
            _ => return Err(bad()),
        };
        let nanos = number
            .checked_mul(seconds * 1_000_000_000)
            .ok_or_else(bad)?;
        return Ok(now.saturating_sub(nanos));
    }
    if let Ok(nanos) = text.parse::<i64>() {
        return Ok(nanos);
    }
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return time.timestamp_nanos_opt().ok_or_else(bad);
    }
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = day.and_hms_opt(0, 0, 0).ok_or_else(bad)?;
        return midnight.and_utc().timestamp_nanos_opt().ok_or_else(bad);
    }
    Err(bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_in_every_form() {
        let now = 1_795_757_400_000_000_000;
        assert_eq!(parse_time("now", now).unwrap(), now);
        assert_eq!(parse_time("-1h", now).unwrap(), now - 3_600_000_000_000);
        assert_eq!(parse_time("2026-11-27T05:30:00Z", now).unwrap(), now);
        assert_eq!(parse_time("2026-11-27T06:30:00+01:00", now).unwrap(), now);
        assert_eq!(
            parse_time("2026-11-27", now).unwrap(),
            now - 19_800_000_000_000
        );
        assert_eq!(parse_time("17", now).unwrap(), 17);
        for bad in ["yesterday", "-1y", "-h", "2026-13-01"] {
            assert!(parse_time(bad, now).is_err(), "{bad}");
        }
    }
}
