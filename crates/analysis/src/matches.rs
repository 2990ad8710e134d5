//! pprof's warnings for filters that match nothing (its `warnNoMatches`:
//! "Focus expression matched no samples"), so that an empty report is
//! never printed in silence.

use protoprof_model_pprof::perftools::profiles::Sample;
use protoprof_model_pprof::samples::ProfileSamples;

use crate::selection::Selection;

/// What a filter does when it matches: keep samples (focus, show,
/// show-from, tag focus), drop samples (ignore, tag ignore), or remove
/// frames (hide).
#[derive(Clone, Copy)]
enum Matching {
    KeepsSamples,
    DropsSamples,
    RemovesFrames,
}

/// A filter: pprof's name for it, whether it is given, what it does when
/// it matches, and how to give it alone.
type Filter<'a> = (&'static str, bool, Matching, &'a dyn Fn(&mut Selection));

/// The names pprof gives the filters of `selection` that match nothing in
/// `source` (`Focus`, `Ignore`, `Hide`, `Show`, `ShowFrom`, `TagFocus`,
/// `TagIgnore`), each judged alone as pprof judges it. Without filters the
/// samples are not read.
pub fn filters_matching_nothing<S: ProfileSamples>(
    source: &S,
    selection: &Selection,
) -> Vec<&'static str> {
    let s = selection;
    let filters: [Filter; 7] = [
        ("Focus", s.focus.is_some(), Matching::KeepsSamples, &|o| {
            o.focus = s.focus.clone()
        }),
        ("Ignore", s.ignore.is_some(), Matching::DropsSamples, &|o| {
            o.ignore = s.ignore.clone()
        }),
        ("Hide", s.hide.is_some(), Matching::RemovesFrames, &|o| {
            o.hide = s.hide.clone()
        }),
        ("Show", s.show.is_some(), Matching::KeepsSamples, &|o| {
            o.show = s.show.clone()
        }),
        (
            "ShowFrom",
            s.show_from.is_some(),
            Matching::KeepsSamples,
            &|o| o.show_from = s.show_from.clone(),
        ),
        (
            "TagFocus",
            s.tag_focus.is_some(),
            Matching::KeepsSamples,
            &|o| o.tag_focus = s.tag_focus.clone(),
        ),
        (
            "TagIgnore",
            s.tag_ignore.is_some(),
            Matching::DropsSamples,
            &|o| o.tag_ignore = s.tag_ignore.clone(),
        ),
    ];
    let alone = |set: &dyn Fn(&mut Selection)| {
        let mut only = Selection {
            granularity: s.granularity,
            noinlines: s.noinlines,
            ..Selection::default()
        };
        set(&mut only);
        only
    };
    // What no filter keeps, read once and only when a filter needs it.
    let mut everything = None;
    let mut unmatched = Vec::new();
    for (name, _, matching, set) in filters.iter().filter(|f| f.1) {
        let with = kept(source, &alone(set));
        let mut all = || *everything.get_or_insert_with(|| kept(source, &alone(&|_| {})));
        let matched = match matching {
            Matching::KeepsSamples => with.0 > 0,
            Matching::DropsSamples => with.0 < all().0,
            Matching::RemovesFrames => with != all(),
        };
        if !matched {
            unmatched.push(*name);
        }
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
