//! The profile the filters leave, as `go tool pprof -proto` writes it:
//! samples the filters drop are gone, and every location keeps only the
//! lines hide, show, show_from and prune_from leave, as pprof's filters
//! edit the profile before it writes it. Everything else (sample types,
//! labels, mappings, functions, comments) is kept as it is.

use protoprof_model_pprof::perftools::profiles::{Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;

use crate::selection::Selection;

/// `source` with `selection`'s filters applied to its samples and
/// locations (its granularity plays no part).
pub fn filtered_profile<S: ProfileSamples>(source: &S, selection: &Selection) -> Profile {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let mut out = Profile {
        sample: Vec::new(),
        ..p.clone()
    };
    for (location, kept) in out.location.iter_mut().zip(frames.kept_lines()) {
        if let Some(lines) = kept {
            location.line = lines.to_vec();
        }
    }
    let mut buffer = Sample::new();
    let mut ids = Vec::new();
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, protoprof_model_meta::Fields::ALL, &mut buffer);
        if frames.select_locations(p, &s.location_id, &s.label, &mut ids) {
            let mut sample = s.clone();
            sample.location_id = ids.clone();
            out.sample.push(sample);
        }
    }
    out
}
