//! Where rows go: `DIR/<table>/dt=YYYY-MM-DD/hour=HH/service=NAME/<batch>.parquet`,
//! Hive-style partitions of every table by the profile's start hour (UTC)
//! and its service; a day's hours merged by `store compact` sit in its
//! day block, `hour=all` (`blocks.rs`). A service name is percent-encoded
//! but for letters, digits, `.`, `_` and `-`, so any name is one directory.

use std::path::{Path, PathBuf};

use datafusion::arrow::datatypes::DataType;
use datafusion::datasource::listing::ListingTableUrl;

/// A partition: the day and hour a profile starts (UTC), and its service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partition {
    /// `2026-11-27`.
    pub dt: String,
    /// `05`.
    pub hour: String,
    /// The service name, unescaped.
    pub service: String,
}

impl Partition {
    /// The partition of a profile that starts at `time_unix_nano` (0 and
    /// times before 1970 fall in 1970-01-01) for `service`.
    pub fn of(time_unix_nano: i64, service: &str) -> Partition {
        let seconds = time_unix_nano.max(0) / 1_000_000_000;
        let (dt, hour) = day_and_hour(seconds);
        Partition {
            dt,
            hour,
            service: service.to_string(),
        }
    }

    /// The day block of the partition's day and service: where `store
    /// compact` merges the day's hours once the day is over.
    pub fn day_block(&self) -> Partition {
        Partition {
            hour: DAY_BLOCK.to_string(),
            ..self.clone()
        }
    }

    /// The partition's path under a table's in object storage.
    pub fn object_path(&self) -> String {
        format!(
            "dt={}/hour={}/service={}",
            self.dt,
            self.hour,
            escape(&self.service)
        )
    }

    /// The partition's directory under a table's.
    pub fn directory(&self) -> PathBuf {
        PathBuf::from(format!("dt={}", self.dt))
            .join(format!("hour={}", self.hour))
            .join(format!("service={}", escape(&self.service)))
    }
}

/// The `hour` of a day block: the partition that holds a whole day's
/// rows of a service. It sorts after every hour (`00` to `23`).
pub const DAY_BLOCK: &str = "all";

/// A day, in nanoseconds.
pub(crate) const DAY: i64 = 24 * HOUR;

/// A partition's span: an hour, in nanoseconds.
pub(crate) const HOUR: i64 = 3_600 * 1_000_000_000;

/// The start of the hour `time_unix_nano` falls in, as partitions take
/// it (times before 1970 fall in its first hour).
pub(crate) fn hour_start(time_unix_nano: i64) -> i64 {
    time_unix_nano.max(0) / HOUR * HOUR
}

/// `YYYY-MM-DD` and `HH` of a Unix time in seconds (UTC).
fn day_and_hour(seconds: i64) -> (String, String) {
    let days = seconds.div_euclid(86_400);
    let hour = seconds.rem_euclid(86_400) / 3600;
    let (y, m, d) = protoprof_model_meta::dates::civil_from_days(days);
    (format!("{y:04}-{m:02}-{d:02}"), format!("{hour:02}"))
}

/// A service name as a directory name.
pub fn escape(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'_' | b'-'
                if !out.is_empty() || b != b'.' =>
            {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    if out.is_empty() {
        out.push_str("%00");
    }
    out
}

/// A directory's service name as [`escape`] wrote it, decoded as the
/// engine decodes it (`%XX` to its byte).
pub(crate) fn unescape(name: &str) -> String {
    percent_encoding::percent_decode_str(name)
        .decode_utf8_lossy()
        .into_owned()
}

/// The partition columns as the engine reads them from directory names.
pub fn partition_columns() -> Vec<(String, DataType)> {
    crate::schema::PARTITIONS
        .iter()
        .map(|p| (p.to_string(), DataType::Utf8))
        .collect()
}

/// The directory of `table` in the store at `root`.
pub fn table_directory(root: &Path, table: &str) -> PathBuf {
    root.join(table)
}

/// The URL the engine lists `table` at.
pub fn table_url(root: &Path, table: &str) -> Result<ListingTableUrl, String> {
    let dir = table_directory(root, table);
    let text = format!("{}/", dir.display());
    ListingTableUrl::parse(&text).map_err(|e| format!("{}: {e}", dir.display()))
}

/// A batch's file name: the time and a random part, so that writers
/// never clash and names sort by time.
pub(crate) fn batch_name() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut random = [0u8; 6];
    // Without randomness the time alone still tells batches apart.
    let _ = getrandom::fill(&mut random);
    let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("{now:020}-{random}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_utc_hours_and_escaped_services() {
        // 2026-11-27T05:30:00Z
        let p = Partition::of(1_795_757_400_000_000_000, "check out/v2");
        assert_eq!((p.dt.as_str(), p.hour.as_str()), ("2026-11-27", "05"));
        assert_eq!(
            p.directory(),
            PathBuf::from("dt=2026-11-27/hour=05/service=check%20out%2Fv2")
        );
        assert_eq!(Partition::of(0, "").dt, "1970-01-01");
        assert_eq!(escape(".."), "%2E.");
        assert_eq!(escape(""), "%00");
        for name in ["check out/v2", "..", "ünï", "a%2", "plain"] {
            assert_eq!(unescape(&escape(name)), name);
        }
    }
}
