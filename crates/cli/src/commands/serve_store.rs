//! `serve --store`: the store behind the page, opened once. The page
//! selects again (selector, time range), charts totals over time and
//! compares two selections; each answer is the same merge the reports'
//! `--store` makes.

use protoprof_analysis as analysis;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_store::{SeriesQuery, Store};
use protoprof_web::{Compare, Series, SeriesPoint, StorePane, StoreSelection};

use crate::cli::InputArgs;
use crate::commands::{analyze, store};
use crate::error::{CliError, Result};

/// The store and the options of the command that serves it.
pub(crate) struct StoreSelections {
    store: Store,
    input: InputArgs,
}

impl StoreSelections {
    /// Opens `--store` (on `--cluster` when given) for the page.
    pub(crate) fn open(input: &InputArgs) -> Result<StoreSelections> {
        let Some(dir) = &input.store else {
            return Err(CliError::failure("no --store"));
        };
        Ok(StoreSelections {
            store: store::open_on(dir, input.cluster.as_deref())?
                .strict(input.strict)
                .rollups(!input.no_rollups),
            input: input.clone(),
        })
    }

    /// The merged profile of `selection`, label frames added as the
    /// command's `--tagroot` asks.
    pub(crate) fn profile_of(&self, selection: &StoreSelection) -> Result<Profile> {
        let selected = store::select_from(&self.store, fields(selection), &self.input.sample_type);
        store::warn_skipped(&self.store);
        let mut p = selected?.profile;
        analyze::add_label_frames(&mut p, &self.input);
        Ok(p)
    }
}

impl StorePane for StoreSelections {
    fn initial(&self) -> StoreSelection {
        selection_of(&self.input)
    }

    fn labels(&self) -> std::result::Result<Vec<(String, Vec<String>)>, String> {
        self.store.label_values().map_err(|e| e.to_string())
    }

    fn select(
        &self,
        selection: &StoreSelection,
        base: Option<&StoreSelection>,
    ) -> std::result::Result<(Profile, Option<Compare>), String> {
        let new = self.profile_of(selection).map_err(|e| e.message)?;
        let Some(base_selection) = base else {
            return Ok((new, None));
        };
        let base = self.profile_of(base_selection).map_err(|e| e.message)?;
        // As `--diff_base`: the base's samples negated and kept apart.
        let mut scaled = new.clone();
        if self.input.normalize {
            analysis::base::normalize(&mut scaled, &base);
        }
        let negated = analysis::base::as_base(base.clone(), true);
        let profile = analyze::merged(vec![scaled, negated]).map_err(|e| e.message)?;
        let compare = Compare {
            new,
            base,
            base_title: base_selection.title(),
        };
        Ok((profile, Some(compare)))
    }

    fn series(
        &self,
        selection: &StoreSelection,
        sample_type: &str,
        step: &str,
        group_by: &str,
    ) -> std::result::Result<Series, String> {
        let query = store::store_query(fields(selection), &self.input.sample_type)
            .map_err(|e| e.message)?;
        let step_nanos = protoprof_store::parse_step(step).map_err(|e| e.to_string())?;
        let series = SeriesQuery {
            query,
            step_nanos,
            group_by: non_empty(group_by).map(str::to_string),
            function: None,
        };
        let points = self
            .store
            .series_points(&series)
            .map_err(|e| e.to_string())?;
        // One sample type: the one asked for, else the first there is.
        let chosen = match points.iter().find(|p| p.sample_type.0 == sample_type) {
            Some(p) => p.sample_type.clone(),
            None => points
                .first()
                .map(|p| p.sample_type.clone())
                .unwrap_or_default(),
        };
        Ok(Series {
            sample_type: chosen.0.clone(),
            unit: chosen.1.clone(),
            step_ms: step_nanos / 1_000_000,
            points: points
                .into_iter()
                .filter(|p| p.sample_type == chosen)
                .map(|p| SeriesPoint {
                    time_ms: p.time_nanos.div_euclid(1_000_000),
                    group: p.group,
                    value: p.value,
                })
                .collect(),
        })
    }
}

/// The selection `--select`, `--from` and `--to` name.
pub(crate) fn selection_of(input: &InputArgs) -> StoreSelection {
    let text = |t: &Option<String>| t.clone().unwrap_or_default();
    StoreSelection {
        select: text(&input.select),
        from: text(&input.from),
        to: text(&input.to),
    }
}

/// A selection's fields as the store's query takes them, empty ones unset.
fn fields(selection: &StoreSelection) -> (Option<&str>, Option<&str>, Option<&str>) {
    (
        non_empty(&selection.select),
        non_empty(&selection.from),
        non_empty(&selection.to),
    )
}

/// `text`, unless it is empty.
fn non_empty(text: &str) -> Option<&str> {
    Some(text).filter(|t| !t.is_empty())
}
