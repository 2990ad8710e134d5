//! Times as Go prints them, in the local zone (Go's `time.Local`: `TZ`,
//! else `/etc/localtime`), as pprof prints a profile's time: the C
//! library reads the same zone files, so the offset and the zone's
//! abbreviation (`CET`, `IST`) are the ones Go shows.

/// A moment's civil time in the local zone.
pub(crate) struct LocalTime {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) second: i64,
    /// Seconds east of UTC.
    pub(crate) offset: i64,
    /// The zone's abbreviation.
    pub(crate) zone: String,
}

impl LocalTime {
    /// `seconds` since the epoch in the local zone (UTC where the C
    /// library cannot say).
    pub(crate) fn of(seconds: i64) -> LocalTime {
        local(seconds).unwrap_or_else(|| LocalTime::utc(seconds))
    }

    /// `seconds` since the epoch in UTC.
    pub(crate) fn utc(seconds: i64) -> LocalTime {
        let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
        let (year, month, day) = protoprof_model_meta::dates::civil_from_days(days);
        LocalTime {
            year,
            month,
            day,
            hour: rest / 3600,
            minute: rest % 3600 / 60,
            second: rest % 60,
            offset: 0,
            zone: "UTC".into(),
        }
    }

    /// `2006-01-02 15:04:05`.
    pub(crate) fn date_and_time(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// Go's `-0700`.
    pub(crate) fn numeric_offset(&self) -> String {
        let sign = if self.offset < 0 { '-' } else { '+' };
        let minutes = self.offset.abs() / 60;
        format!("{sign}{:02}{:02}", minutes / 60, minutes % 60)
    }
}

#[cfg(unix)]
fn local(seconds: i64) -> Option<LocalTime> {
    let t = libc::time_t::try_from(seconds).ok()?;
    // SAFETY: `tm` is plain data the call fills in; `localtime_r` only
    // reads `t` and writes `tm`, and `tm_zone` points into the C
    // library's static zone data, read before any other call.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return None;
        }
        let zone = match tm.tm_zone.is_null() {
            true => String::new(),
            false => std::ffi::CStr::from_ptr(tm.tm_zone)
                .to_string_lossy()
                .into_owned(),
        };
        Some(LocalTime {
            year: i64::from(tm.tm_year) + 1900,
            month: u32::try_from(tm.tm_mon + 1).ok()?,
            day: u32::try_from(tm.tm_mday).ok()?,
            hour: i64::from(tm.tm_hour),
            minute: i64::from(tm.tm_min),
            second: i64::from(tm.tm_sec),
            offset: tm.tm_gmtoff,
            zone,
        })
    }
}

#[cfg(not(unix))]
fn local(_seconds: i64) -> Option<LocalTime> {
    None
}

#[cfg(test)]
mod tests {
    use super::LocalTime;

    #[test]
    fn offsets_print_as_gos() {
        let at = |offset: i64| LocalTime {
            offset,
            ..LocalTime::utc(0)
        };
        assert_eq!(at(0).numeric_offset(), "+0000");
        assert_eq!(at(19_800).numeric_offset(), "+0530");
        assert_eq!(at(-12_600).numeric_offset(), "-0330");
        assert_eq!(
            LocalTime::utc(1_700_000_000).date_and_time(),
            "2023-11-14 22:13:20"
        );
    }
}
