//! Units as pprof knows them (its `internal/measurement`): memory (powers
//! of 1024), time and Google compute units, each with its aliases, so a
//! value in one unit can be compared with a range written in another
//! (`--tagfocus 1kb:1mb` against labels in bytes), and profiles in
//! different units merged.

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Profile, ValueType};

/// One unit of a kind: its name, the lower-case spellings it is known by,
/// and its size in the kind's smallest unit.
struct Unit {
    name: &'static str,
    aliases: &'static [&'static str],
    factor: f64,
}

/// A kind of unit and the unit a value falls back to.
struct Kind {
    units: &'static [Unit],
    default: (&'static str, f64),
}

const MEMORY: Kind = Kind {
    units: &[
        Unit {
            name: "B",
            aliases: &["b", "byte"],
            factor: 1.0,
        },
        Unit {
            name: "kB",
            aliases: &["kb", "kbyte", "kilobyte"],
            factor: 1024.0,
        },
        Unit {
            name: "MB",
            aliases: &["mb", "mbyte", "megabyte"],
            factor: 1048576.0,
        },
        Unit {
            name: "GB",
            aliases: &["gb", "gbyte", "gigabyte"],
            factor: 1073741824.0,
        },
        Unit {
            name: "TB",
            aliases: &["tb", "tbyte", "terabyte"],
            factor: 1099511627776.0,
        },
        Unit {
            name: "PB",
            aliases: &["pb", "pbyte", "petabyte"],
            factor: 1125899906842624.0,
        },
    ],
    default: ("B", 1.0),
};

const TIME: Kind = Kind {
    units: &[
        Unit {
            name: "ns",
            aliases: &["ns", "nanosecond"],
            factor: 1.0,
        },
        Unit {
            name: "us",
            aliases: &["μs", "us", "microsecond"],
            factor: 1e3,
        },
        Unit {
            name: "ms",
            aliases: &["ms", "millisecond"],
            factor: 1e6,
        },
        Unit {
            name: "s",
            aliases: &["s", "sec", "second"],
            factor: 1e9,
        },
        Unit {
            name: "hrs",
            aliases: &["hour", "hr"],
            factor: 3.6e12,
        },
    ],
    default: ("s", 1e9),
};

const GCU: Kind = Kind {
    units: &[
        Unit {
            name: "n*GCU",
            aliases: &["nanogcu"],
            factor: 1e-9,
        },
        Unit {
            name: "u*GCU",
            aliases: &["microgcu"],
            factor: 1e-6,
        },
        Unit {
            name: "m*GCU",
            aliases: &["milligcu"],
            factor: 1e-3,
        },
        Unit {
            name: "GCU",
            aliases: &["gcu"],
            factor: 1.0,
        },
        Unit {
            name: "k*GCU",
            aliases: &["kilogcu"],
            factor: 1e3,
        },
        Unit {
            name: "M*GCU",
            aliases: &["megagcu"],
            factor: 1e6,
        },
        Unit {
            name: "G*GCU",
            aliases: &["gigagcu"],
            factor: 1e9,
        },
        Unit {
            name: "T*GCU",
            aliases: &["teragcu"],
            factor: 1e12,
        },
        Unit {
            name: "P*GCU",
            aliases: &["petagcu"],
            factor: 1e15,
        },
    ],
    default: ("GCU", 1.0),
};

impl Kind {
    /// The unit `name` spells, case-insensitively, a plural `s` dropped.
    fn sniff(&self, name: &str) -> Option<&Unit> {
        let lower = name.to_lowercase();
        // pprof's `sniffUnit` measures the name in bytes: `μs` (3 bytes)
        // loses its `s` and so is no unit to pprof, whatever its alias list
        // says. Reports must scale as pprof's do.
        let name = match lower.len() > 2 {
            true => lower.strip_suffix('s').unwrap_or(&lower),
            false => &lower,
        };
        self.units.iter().find(|u| u.aliases.contains(&name))
    }

    /// The largest unit the value is at least one of.
    fn auto_scale(&self, value: f64) -> Option<(f64, &'static str)> {
        let mut best: Option<&Unit> = None;
        for u in self.units {
            if u.factor >= best.map_or(0.0, |b| b.factor) && value / u.factor >= 1.0 {
                best = Some(u);
            }
        }
        best.map(|u| (value / u.factor, u.name))
    }

    fn convert(&self, value: i64, from: &str, to: &str) -> Option<(f64, &'static str)> {
        let from = self.sniff(from)?;
        let v = value as f64 * from.factor;
        let fallback = (v / self.default.1, self.default.0);
        if to == "minimum" || to == "auto" {
            return Some(self.auto_scale(v).unwrap_or(fallback));
        }
        Some(match self.sniff(to) {
            Some(to) => (v / to.factor, to.name),
            None => fallback,
        })
    }
}

/// `value` in `from` units expressed in `to` units, and the name of the unit
/// it ends up in (pprof's `measurement.Scale`): `to` may be `auto` (the
/// largest unit the value is at least one of); a unit of no known kind
/// leaves the value as it is.
pub fn scale(value: i64, from: &str, to: &str) -> (f64, String) {
    if value < 0 && value.checked_neg().is_some() {
        let (v, u) = scale(-value, from, to);
        return (-v, u);
    }
    for kind in [&MEMORY, &TIME, &GCU] {
        if let Some((v, u)) = kind.convert(value, from, to) {
            return (v, u.to_string());
        }
    }
    match to {
        "count" | "sample" | "unit" | "minimum" | "auto" => (value as f64, String::new()),
        other => (value as f64, other.to_string()),
    }
}

/// Whether `unit` is one of a kind's units (memory, time, GCU).
fn kind_of(unit: &str) -> Option<usize> {
    [&MEMORY, &TIME, &GCU]
        .iter()
        .position(|k| k.sniff(unit).is_some())
}

/// pprof's `compatibleValueTypes`: the same type (a plural `s` aside) in
/// the same unit or units of one kind.
fn compatible(a: (&str, &str), b: (&str, &str)) -> bool {
    let trim = |t: &str| t.strip_suffix('s').unwrap_or(t).to_string();
    trim(a.0) == trim(b.0) && (a.1 == b.1 || kind_of(a.1).is_some_and(|k| kind_of(b.1) == Some(k)))
}

/// Whether profiles to be merged name any sample type or the period type
/// in different units, so that [`scale_profiles`] would rewrite values.
/// When they do not, they can be merged as they are, samples unread.
pub fn units_differ(profiles: &[&Profile]) -> bool {
    let units = |p: &Profile| {
        let unit = |t: &ValueType| p.string(t.unit).to_string();
        let samples: Vec<String> = p.sample_type.iter().map(unit).collect();
        (samples, p.period_type.as_ref().map(unit))
    };
    let mut all = profiles.iter().map(|p| units(p));
    let first = all.next();
    all.any(|u| Some(&u) != first.as_ref())
}

/// Profiles to be merged brought to common units, as pprof's
/// `measurement.ScaleProfiles`: per sample type (and the period type) the
/// finest unit any of them uses, values scaled (rounded) into it. An error
/// names types that cannot be brought together.
pub fn scale_profiles(profiles: &mut [Profile]) -> Result<(), String> {
    if profiles.len() <= 1 {
        return Ok(());
    }
    let (period_unit, units) = {
        let all: Vec<&Profile> = profiles.iter().collect();
        common_units(&all)?
    };
    for p in profiles.iter_mut() {
        if let (Some(unit), Some(t)) = (&period_unit, p.period_type.as_ref()) {
            p.period = scale(p.period, p.string(t.unit), unit).0 as i64;
            let index = crate::base::intern(p, unit);
            p.period_type.as_mut().expect("checked").unit = index;
        }
        let mut ratios = vec![1.0; units.len()];
        for (i, unit) in units.iter().enumerate() {
            let Some(unit) = unit else { continue };
            ratios[i] = scale(1, p.string(p.sample_type[i].unit), unit).0;
            p.sample_type[i].unit = crate::base::intern(p, unit);
        }
        crate::base::scale(p, &ratios);
    }
    Ok(())
}

/// The units profiles to be merged meet in, as [`scale_profiles`] finds
/// them without changing anything: the period type's and each sample
/// type's (`None` where fewer than two profiles have it), or why the
/// profiles cannot be merged (pprof's `ScaleProfiles` checks). Comparing
/// profiles (`diff`) checks them so too.
pub fn common_units(
    profiles: &[&Profile],
) -> Result<(Option<String>, Vec<Option<String>>), String> {
    let Some(first) = profiles.first() else {
        return Ok((None, Vec::new()));
    };
    let count = first.sample_type.len();
    if let Some(p) = profiles.iter().find(|p| p.sample_type.len() != count) {
        return Err(format!(
            "inconsistent sample type counts: {count} and {}",
            p.sample_type.len()
        ));
    }
    let type_of =
        |p: &Profile, t: &ValueType| (p.string(t.type_).to_string(), p.string(t.unit).to_string());
    let period_types: Vec<(String, String)> = profiles
        .iter()
        .filter_map(|p| p.period_type.as_ref().map(|t| type_of(p, t)))
        .collect();
    let period_unit = common_unit(&period_types).map_err(|e| format!("period type: {e}"))?;
    let mut units = Vec::with_capacity(count);
    for i in 0..count {
        let types: Vec<(String, String)> = profiles
            .iter()
            .map(|p| type_of(p, &p.sample_type[i]))
            .collect();
        units.push(common_unit(&types).map_err(|e| format!("sample types: {e}"))?);
    }
    Ok((period_unit, units))
}

/// The finest unit among `types` (`None` for fewer than two), or why they
/// do not go together.
fn common_unit(types: &[(String, String)]) -> Result<Option<String>, String> {
    if types.len() <= 1 {
        return Ok(None);
    }
    let mut finest = &types[0];
    for t in &types[1..] {
        if !compatible((&finest.0, &finest.1), (&t.0, &t.1)) {
            return Err(format!("incompatible types: {finest:?} {t:?}"));
        }
        if scale(1, &t.1, &finest.1).0 < 1.0 {
            finest = t;
        }
    }
    Ok(Some(finest.1.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unit_named_with_mu_is_no_unit_to_pprof() {
        // Go's pprof trims the plural `s` of names longer than two bytes.
        assert_eq!(scale(150, "μs", "minimum"), (150.0, String::new()));
        assert_eq!(scale(150, "μs", "μs"), (150.0, "μs".into()));
        assert_eq!(scale(1500, "us", "minimum"), (1.5, "ms".into()));
    }

    #[test]
    fn scales_as_pprof() {
        assert_eq!(scale(2048, "bytes", "kb"), (2.0, "kB".into()));
        assert_eq!(scale(1, "mb", "kB"), (1024.0, "kB".into()));
        assert_eq!(scale(1_500_000, "nanoseconds", "auto"), (1.5, "ms".into()));
        assert_eq!(scale(-3, "s", "ms"), (-3000.0, "ms".into()));
        assert_eq!(scale(7, "count", "auto"), (7.0, String::new()));
        assert_eq!(scale(7, "widgets", "widgets"), (7.0, "widgets".into()));
        // A unit of a known kind asked in an unknown one: the kind's default.
        assert_eq!(scale(2048, "bytes", ""), (2048.0, "B".into()));
    }

    #[test]
    fn profiles_meet_in_the_finer_unit() {
        let profile = |unit: &str, value: i64| Profile {
            sample_type: vec![ValueType {
                type_: 1,
                unit: 2,
                ..Default::default()
            }],
            sample: vec![protoprof_model_pprof::perftools::profiles::Sample {
                value: vec![value],
                ..Default::default()
            }],
            string_table: vec!["".into(), "cpu".into(), unit.into()],
            ..Default::default()
        };
        let mut both = [profile("nanoseconds", 1500), profile("microseconds", 3)];
        scale_profiles(&mut both).unwrap();
        assert_eq!(both[1].sample[0].value, [3000]);
        assert_eq!(both[1].string(both[1].sample_type[0].unit), "nanoseconds");
        let mut clash = [profile("nanoseconds", 1), profile("bytes", 1)];
        assert!(scale_profiles(&mut clash).is_err());
    }
}
