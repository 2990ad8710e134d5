//! The page's state as URL query parameters, with pprof's names (`f`, `i`,
//! `h`, `s`, `sf`, `prunefrom`, `tf`, `ti`, `ts`, `th`, `si`, `g`,
//! `noinlines`, `n`, `nf`, `ef`), so that a pprof user's links carry over;
//! protoprof's own additions are `tagroot` (OTLP breakdowns: label keys as
//! root frames), `pivot` (a frame's callers) and `min` (the narrowest
//! flame graph node sent, as a share of the total).

use protoprof_analysis::{Granularity, Selection, TagFilter, TreeOptions};

use crate::WebError;

/// A request's query, decoded.
#[derive(Debug, Default, Clone)]
pub struct Params {
    pairs: Vec<(String, String)>,
}

impl Params {
    /// Reads `a=1&b=x%20y` (`+` is a space, as HTML forms write it).
    pub fn parse(query: &str) -> Params {
        let pairs = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (unescape(k), unescape(v))
            })
            .collect();
        Params { pairs }
    }

    /// The last value of `name`, when given and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v != "false" && v != "0")
    }

    fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, WebError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| WebError::Param {
                name: name.to_string(),
                detail: format!("{v:?} is not a number"),
            }),
        }
    }

    /// The sample filters and granularity the parameters ask for.
    pub fn selection(&self) -> Result<Selection, WebError> {
        let regex = |name: &'static str| Selection::regex(name, self.get(name).unwrap_or(""));
        let tag = |name: &'static str| {
            self.get(name)
                .map(|v| TagFilter::parse(name, v))
                .transpose()
        };
        let build = || -> Result<Selection, protoprof_analysis::SelectionError> {
            Ok(Selection {
                focus: regex("f")?,
                ignore: regex("i")?,
                hide: regex("h")?,
                show: regex("s")?,
                show_from: regex("sf")?,
                prune_from: regex("prunefrom")?,
                tag_focus: tag("tf")?,
                tag_ignore: tag("ti")?,
                tag_show: regex("ts")?,
                tag_hide: regex("th")?,
                granularity: Granularity::Functions,
                noinlines: self.flag("noinlines"),
                object_names: false,
                relative_percentages: self.flag("rel"),
                mean: self.flag("mean"),
                // The page's header shows the labels once, apart.
                compact_labels: false,
                drop_negative: false,
                call_tree: false,
                names_as_given: false,
                divide_by: None,
            })
        };
        let mut selection = build().map_err(|e| WebError::Param {
            name: e.option.to_string(),
            detail: e.detail,
        })?;
        selection.granularity = self.granularity()?;
        Ok(selection)
    }

    fn granularity(&self) -> Result<Granularity, WebError> {
        Ok(match self.get("g") {
            None | Some("functions") => Granularity::Functions,
            Some("filefunctions") => Granularity::FileFunctions,
            Some("files") => Granularity::Files,
            Some("lines") => Granularity::Lines,
            Some("addresses") => Granularity::Addresses,
            Some(other) => {
                return Err(WebError::Param {
                    name: "g".into(),
                    detail: format!(
                        "{other:?}: one of functions, filefunctions, files, lines, addresses"
                    ),
                })
            }
        })
    }

    /// The call graph's trimming (`n`, `nf`, `ef`), pprof's defaults.
    pub fn tree_options(&self) -> Result<TreeOptions, WebError> {
        let default = TreeOptions::default();
        Ok(TreeOptions {
            node_count: self.number("n", default.node_count)?,
            node_fraction: self.number("nf", default.node_fraction)?,
            edge_fraction: self.number("ef", default.edge_fraction)?,
            unit: default.unit,
        })
    }

    /// The label keys to add as root frames (`tagroot=service.name,thread.name`).
    pub fn tag_root(&self) -> Vec<String> {
        self.get("tagroot")
            .map(|v| {
                v.split(',')
                    .filter(|k| !k.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The narrowest flame graph node sent, as a share of the total.
    pub fn min_share(&self) -> Result<f64, WebError> {
        let share: f64 = self.number("min", 0.0002)?;
        Ok(share.clamp(0.0, 1.0))
    }

    /// A regex parameter compiled (`pivot`, or `f` as pprof's peek reads it).
    pub fn regex(&self, name: &'static str) -> Result<Option<regex::Regex>, WebError> {
        Selection::regex(name, self.get(name).unwrap_or("")).map_err(|e| WebError::Param {
            name: name.into(),
            detail: e.detail,
        })
    }
}

/// Percent-decoding (`+` is a space, as forms write it); bytes that do
/// not form UTF-8 are replaced.
fn unescape(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_as_browsers_encode_them() {
        let p = Params::parse("f=main%5C.%28%2A&g=lines&h=a+b&x=%zz&y=%4");
        assert_eq!(p.get("f"), Some("main\\.(*"));
        assert_eq!(p.get("h"), Some("a b"));
        assert_eq!(p.get("x"), Some("%zz"));
        assert_eq!(p.get("y"), Some("%4"));
        assert_eq!(p.get("none"), None);
        assert!(matches!(p.granularity(), Ok(Granularity::Lines)));
    }

    #[test]
    fn bad_parameters_name_themselves() {
        let err = Params::parse("f=(").selection().unwrap_err().to_string();
        assert!(err.starts_with("f: "), "{err}");
        let err = Params::parse("g=bytes")
            .selection()
            .unwrap_err()
            .to_string();
        assert!(err.contains("g: \"bytes\""), "{err}");
        let err = Params::parse("n=many")
            .tree_options()
            .unwrap_err()
            .to_string();
        assert!(err.contains("n: \"many\" is not a number"), "{err}");
    }
}
