//! What symbolization did, mapping by mapping: pprof says none of it.

use serde::Serialize;

use crate::lookup::{Found, PassedOver};

/// What [`crate::symbolize`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// One entry per mapping, in the profile's order.
    pub mappings: Vec<MappingReport>,
}

/// One mapping.
#[derive(Debug, Clone, Serialize)]
pub struct MappingReport {
    /// The mapping's file name.
    pub file: String,
    /// Its build id, empty when it has none.
    pub build_id: String,
    /// The file it was symbolized from.
    pub found: Option<Found>,
    /// Files looked at and passed over.
    pub passed_over: Vec<PassedOver>,
    /// Distinct addresses of its locations.
    pub addresses: usize,
    /// Of them, those that got at least one frame.
    pub resolved: usize,
    /// Why it was left as it was, when it was.
    pub skipped: Option<String>,
}

/// Why a mapping with no address to look up is left alone.
pub(crate) const NOTHING_TO_DO: &str = "no locations that are only addresses";

impl Report {
    /// One line per mapping, as the command line prints it; those with
    /// nothing to symbolize counted on one line at the end.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let idle = |m: &&MappingReport| m.skipped.as_deref() == Some(NOTHING_TO_DO);
        for m in self.mappings.iter().filter(|m| !idle(m)) {
            let name = if m.file.is_empty() {
                "(no file)"
            } else {
                &m.file
            };
            let line = match (&m.skipped, &m.found) {
                (Some(why), _) => format!("{name}: left as it was: {why}"),
                (None, Some(found)) => {
                    let id = match found.build_id_matched {
                        Some(true) => ", build id matched",
                        _ => ", no build id to match",
                    };
                    let debug = match &found.debug_file {
                        Some(debug) => format!(", frames from {}", debug.display()),
                        None => String::new(),
                    };
                    format!(
                        "{name}: {} of {} addresses from {} ({}{id}{debug})",
                        m.resolved,
                        m.addresses,
                        found.path.display(),
                        found.how.text()
                    )
                }
                (None, None) => format!(
                    "{name}: no file found ({} addresses left as they were)",
                    m.addresses
                ),
            };
            out.push_str(&line);
            out.push('\n');
            for passed in &m.passed_over {
                out.push_str(&format!(
                    "  passed over {}: {}\n",
                    passed.path.display(),
                    passed.why
                ));
            }
        }
        let idle = self.mappings.iter().filter(idle).count();
        if idle > 0 {
            out.push_str(&format!(
                "{idle} other mapping(s): nothing to symbolize (no locations that are only addresses)\n"
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::How;

    /// How a file was found is said in words, never as the enum's name.
    #[test]
    fn the_report_says_how_in_words() {
        let hows = [
            How::BuildIdDirectory,
            How::BuildIdDebugFile,
            How::SystemDebugFile,
            How::BinaryPathName,
            How::MappingPath,
            How::DebugBeside,
            How::Debuginfod,
        ];
        for how in hows {
            let report = Report {
                mappings: vec![MappingReport {
                    file: "/usr/bin/spin".into(),
                    build_id: String::new(),
                    found: Some(Found {
                        path: "/usr/bin/spin".into(),
                        how,
                        build_id_matched: None,
                        debug_file: None,
                    }),
                    passed_over: Vec::new(),
                    addresses: 3,
                    resolved: 2,
                    skipped: None,
                }],
            };
            let text = report.text();
            assert!(!text.contains(&format!("{how:?}")), "{text}");
            assert!(text.contains(how.text()), "{text}");
        }
    }
}
