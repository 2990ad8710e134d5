//! Units as pprof knows them (its `internal/measurement`): memory (powers
//! of 1024), time and Google compute units, each with its aliases, so a
//! value in one unit can be compared with a range written in another
//! (`--tagfocus 1kb:1mb` against labels in bytes).

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
        let name = match lower.chars().count() > 2 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
