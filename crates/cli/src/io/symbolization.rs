//! How reports symbolize the profiles they read (`--symbolize`), as
//! pprof's `-symbolize`.

use std::sync::Mutex;

use protoprof_model_pprof::perftools::profiles::Profile;

use super::warnings::warn;
use crate::error::{CliError, Result};

/// How reports symbolize what they read; `None` (every other command):
/// profiles are left as they are.
static SYMBOLIZATION: Mutex<Option<protoprof_symbolize::Options>> = Mutex::new(None);

/// The command is a report: from here on, profiles read are symbolized
/// with pprof's `-symbolize` `mode` (`local` by default, as pprof's).
pub fn set_symbolization(mode: &str) -> Result<()> {
    let options = protoprof_symbolize::Options::parse(mode)
        .map_err(|e| CliError::failure(format!("--symbolize: {e}")))?;
    *SYMBOLIZATION.lock().unwrap_or_else(|e| e.into_inner()) = Some(options);
    Ok(())
}

/// Whether reports were asked not to symbolize (`--symbolize none`): as
/// pprof's `-symbolize=none`, names are then shown as the profile gives
/// them, not simplified.
pub fn symbolizes_nothing() -> bool {
    let options = SYMBOLIZATION.lock().unwrap_or_else(|e| e.into_inner());
    options
        .as_ref()
        .is_some_and(|o| o.mode == protoprof_symbolize::Mode::None)
}

/// The demangling mode reports were given (`--symbolize
/// demangle=full|templates|none`), which pprof forces on every function;
/// `None` for the default, which reports apply themselves.
fn forced_demangling() -> Option<protoprof_analysis::ForcedDemangling> {
    use protoprof_analysis::ForcedDemangling as Forced;
    use protoprof_symbolize::{Demangle, Mode};
    let options = SYMBOLIZATION.lock().unwrap_or_else(|e| e.into_inner());
    let options = options.as_ref().filter(|o| o.mode != Mode::None)?;
    match options.demangle {
        Demangle::Default => None,
        Demangle::Full => Some(Forced::Full),
        Demangle::Templates => Some(Forced::Templates),
        Demangle::None => Some(Forced::None),
    }
}

/// Whether reports show names as the profile gives them: symbolization
/// off (pprof skips its demangling step), or a demangling mode given
/// (the names are then as that mode made them).
pub fn names_as_given() -> bool {
    symbolizes_nothing() || forced_demangling().is_some()
}

/// `profile` (read from `what`) symbolized as [`set_symbolization`]
/// asked, with one warning naming the mappings it found no binary for.
/// Reports call it once per profile they analyse, after merging, as pprof
/// symbolizes the merged profile.
pub fn symbolize_for_report(what: impl std::fmt::Display, profile: &mut Profile) {
    let options = SYMBOLIZATION
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let Some(options) = options else {
        return;
    };
    let report = protoprof_symbolize::symbolize(profile, &options);
    let missing: Vec<&str> = report
        .mappings
        .iter()
        .filter(|m| m.skipped.is_none() && m.found.is_none())
        .map(|m| m.file.as_str())
        .collect();
    if !missing.is_empty() {
        let mut names = missing[..missing.len().min(3)].join(", ");
        if missing.len() > 3 {
            names.push_str(", …");
        }
        let message = format!(
            "frames left as addresses: no binary found for {} mapping(s) ({names}); set \
             PPROF_BINARY_PATH, or --symbolize none (`protoprof symbolize` says where it looked)",
            missing.len()
        );
        warn(what, message);
    }
    if let Some(mode) = forced_demangling() {
        let demangle = options.demangle;
        protoprof_analysis::force_demangled_names(profile, mode, &|s| demangle.mangled(s));
    }
}
