//! pprof's warnings for filters that match nothing (its `warnNoMatches`:
//! "Focus expression matched no samples"), so that an empty report is
//! never printed in silence.

use protoprof_model_pprof::perftools::profiles::Sample;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::selection::Selection;

/// The names pprof gives the filters of `selection` that match nothing in
/// `source` (`Focus`, `Ignore`, `Hide`, `Show`, `ShowFrom`, `TagFocus`,
/// `TagIgnore`), each judged alone as pprof judges it: a sample filter
/// matches when it keeps (or, for an ignore, drops) a sample; hide matches
/// when it removes a frame.
pub fn filters_matching_nothing<S: ProfileSamples>(
    source: &S,
    selection: &Selection,
) -> Vec<&'static str> {
    let alone = |edit: &dyn Fn(&mut Selection)| {
        let mut only = Selection {
            granularity: selection.granularity,
            noinlines: selection.noinlines,
            ..Selection::default()
        };
        edit(&mut only);
        only
    };
    let everything = kept(source, &alone(&|_| {}));
    let mut unmatched = Vec::new();
    let keeps_some = |only: Selection| kept(source, &only).0 > 0;
    let drops_some = |only: Selection| kept(source, &only).0 < everything.0;
    if selection.focus.is_some() && !keeps_some(alone(&|s| s.focus = selection.focus.clone())) {
        unmatched.push("Focus");
    }
    if selection.ignore.is_some() && !drops_some(alone(&|s| s.ignore = selection.ignore.clone())) {
        unmatched.push("Ignore");
    }
    if selection.hide.is_some()
        && kept(source, &alone(&|s| s.hide = selection.hide.clone())) == everything
    {
        unmatched.push("Hide");
    }
    if selection.show.is_some() && !keeps_some(alone(&|s| s.show = selection.show.clone())) {
        unmatched.push("Show");
    }
    if selection.show_from.is_some()
        && !keeps_some(alone(&|s| s.show_from = selection.show_from.clone()))
    {
        unmatched.push("ShowFrom");
    }
    if selection.tag_focus.is_some()
        && !keeps_some(alone(&|s| s.tag_focus = selection.tag_focus.clone()))
    {
        unmatched.push("TagFocus");
    }
    if selection.tag_ignore.is_some()
        && !drops_some(alone(&|s| s.tag_ignore = selection.tag_ignore.clone()))
    {
        unmatched.push("TagIgnore");
    }
    unmatched
}

/// How many samples `selection` keeps, and how many frames they have.
fn kept<S: ProfileSamples>(source: &S, selection: &Selection) -> (usize, usize) {
    let p = source.profile();
    let frames = crate::frames_for(source, selection);
    let (mut buffer, mut stack) = (Sample::new(), Vec::new());
    let (mut samples, mut frame_count) = (0, 0);
    for n in 0..source.sample_count() {
        let s = source.sample_fields(n, crate::VALUES_STACK_AND_LABELS, &mut buffer);
        if frames.select(p, &s.location_id, &s.label, &mut stack) {
            samples += 1;
            frame_count += stack.len();
        }
    }
    (samples, frame_count)
}
