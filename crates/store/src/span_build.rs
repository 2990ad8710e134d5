//! Writing spans (`spans.rs`): `store compact`, once every day of a span
//! is over and has its rollup, sums the span from the shorter spans and
//! days within it, as a report sums them (`rollup_read.rs`),
//! keeps the dictionary rows its stacks need, and removes the spans no
//! longer named so.

use std::collections::HashSet;
use std::path::Path;

use crate::blocks::is_over;
use crate::error::StoreError;
use crate::explain::Reads;
use crate::files::{write_files, FileKind, NewFile};
use crate::layout::DAY;
use crate::rollup_build::{conformed_to, remove_files_but, rollup_samples, summed_samples};
use crate::rollup_read::RollupPlan;
use crate::rollups::{Level, DAY_LABEL_SETS};
use crate::select::{column_ids, first_of_each, Places, Store};
use crate::spans::{
    due_spans, pieces, rollup_table_schema, services_days, span_table, span_tables, ServiceDays,
    Span, DICTIONARY_TABLES,
};

/// Writes every span of the store at `root` that is over at `now`, has
/// its days' rollups and is not written yet, shorter spans first;
/// removes the spans no longer named so. How many it wrote.
pub(crate) fn build_spans(root: &Path, now: i64) -> Result<usize, StoreError> {
    let services = services_days(root, |_| true, |_| true);
    let mut written = 0;
    let mut store = None;
    for days in services.values() {
        for span in due_spans(root, days) {
            let end = (span.first + span.days).saturating_mul(DAY);
            if !is_over(end, now) || span.is_rolled_up(root) {
                continue;
            }
            let store = match &mut store {
                Some(store) => store,
                None => store.insert(Store::open(root)?),
            };
            write_span(store, root, days, &span)?;
            written += 1;
        }
    }
    let current: HashSet<_> = (services.values())
        .flat_map(|days| due_spans(root, days))
        .flat_map(|span| span.files(root))
        .collect();
    remove_files_but(root, &span_tables(), &current)?;
    Ok(written)
}

/// Sums `span` (of `days`, its service's) from the spans and days within
/// it, into its span tables' files, its samples last.
fn write_span(
    store: &Store,
    root: &Path,
    days: &ServiceDays,
    span: &Span,
) -> Result<(), StoreError> {
    let within: Vec<i64> = days
        .range(span.first..span.first + span.days)
        .map(|(n, _)| *n)
        .collect();
    let pieces = pieces(root, (days, &within), |_| true, span.days, &|_| true);
    let ctx = store.context();
    let tables = store.block_on(async {
        let mut reads = Reads::default();
        let mut tables = Vec::new();
        let (mut stack_ids, mut mapping_ids) = (Vec::new(), Vec::new());
        // Per resource, then per service: the service's plan reads the
        // label sets and dictionaries too.
        let levels = [Level::Resource, Level::Service];
        let plans = levels.map(|level| RollupPlan::of(root, level, pieces.clone()));
        for (level, plan) in levels.into_iter().zip(&plans) {
            let keyed = plan.keyed_samples(ctx).await?;
            let samples = reads.collect(summed_samples(keyed, level)?).await?;
            stack_ids.extend(column_ids(&samples, "stack_id"));
            tables.push((level.samples(), rollup_samples(&samples)?));
            let profiles = reads
                .collect(plan.rows(ctx, level.profiles()).await?)
                .await?;
            mapping_ids.extend(column_ids(&profiles, "main_mapping_id"));
            tables.push((level.profiles(), profiles));
        }
        let plan = &plans[1];
        let label_sets = reads.collect(plan.rows(ctx, DAY_LABEL_SETS).await?).await?;
        let label_sets = first_of_each(label_sets, "label_set_id", &mut HashSet::new())?;
        tables.push((DAY_LABEL_SETS, label_sets));
        let places = Places(plan.partitions());
        let found = store
            .dictionaries(stack_ids, mapping_ids, &places, Some(plan), &mut reads)
            .await?;
        let dictionaries = [
            found.stacks,
            found.locations,
            found.functions,
            found.mappings,
        ];
        tables.extend(DICTIONARY_TABLES.into_iter().zip(dictionaries));
        Ok::<_, StoreError>(tables)
    })?;
    let records = (tables.iter())
        .map(|(table, batches)| {
            let span = span_table(table);
            let schema = rollup_table_schema(&span).expect("a span table");
            Ok((span, conformed_to(&schema, batches)?))
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let files: Vec<NewFile> = (records.iter())
        .map(|(table, records)| NewFile {
            dir: span
                .file(root, table)
                .parent()
                .unwrap_or(root)
                .to_path_buf(),
            records,
            last: table.ends_with("samples"),
        })
        .collect();
    write_files(&files, &span.name(), FileKind::Compacted)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollup_build::build_rollups;
    use crate::test_profiles::profile;
    use crate::{ProfileContext, Query, SampleEvents, StoreWriter};

    /// 2026-11-02T00:00:00Z.
    const NOV_2: i64 = 1_793_577_600_000_000_000;
    const HOUR: i64 = crate::layout::HOUR;

    /// A profile `value` at `time` for 10 s, with a second sample labelled
    /// `kind=<kind>`, each sample's events as given.
    fn timed(
        value: i64,
        time: i64,
        kind: &str,
    ) -> protoprof_model_pprof::perftools::profiles::Profile {
        use protoprof_model_pprof::perftools::profiles::Label;
        let mut p = profile(value);
        (p.time_nanos, p.duration_nanos) = (time, 10_000_000_000);
        p.string_table.extend(["kind".into(), kind.into()]);
        let mut labelled = p.sample[0].clone();
        let mut label = Label::new();
        (label.key, label.str) = (3, 4);
        labelled.label.push(label);
        labelled.value = vec![value + 1];
        p.sample.push(labelled);
        p
    }

    /// A series reads the days rolled up from their values per hour, and
    /// counts as the raw rows count: events at their times (across
    /// midnight too), times that say nothing of the value whole; per step
    /// of whole hours, grouped by nothing, the service or a host; with
    /// spans of days there too (which a series does not read). Finer
    /// steps, a label grouped by and a function read raw rows.
    #[test]
    fn series_read_from_rollups_count_as_the_raw_rows() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut writer = StoreWriter::new(root);
        let context = |host: &str, events: &[(&[i64], &[i64])]| ProfileContext {
            service_name: "s".into(),
            resource_attributes: vec![("host.name".into(), host.into())],
            sample_events: (events.iter())
                .map(|(times, values)| SampleEvents {
                    timestamps_unix_nano: times.to_vec(),
                    values: values.to_vec(),
                })
                .collect(),
            ..Default::default()
        };
        for k in 0..12 {
            let time = NOV_2 - 30 * HOUR + k * 7 * HOUR + k * 1_000_000;
            let p = timed(k + 1, time, ["x", "y"][k as usize % 3 % 2]);
            writer
                .add(&p, &context(["a", "b"][k as usize % 2], &[]))
                .unwrap();
        }
        // Events across midnight: paired with values, times alone that
        // count one each, and one time for a value of 4 (counted whole).
        let at = |seconds: i64| NOV_2 + seconds * 1_000_000_000;
        let paired: (&[i64], &[i64]) = (&[at(-2), at(3)], &[2, 3]);
        let alone: (&[i64], &[i64]) = (&[at(-1), at(1), at(2), at(4), at(5), at(6)], &[]);
        let crossing = timed(5, at(-5), "x");
        writer
            .add(&crossing, &context("a", &[paired, alone]))
            .unwrap();
        let whole: (&[i64], &[i64]) = (&[at(3 * 3600 + 1)], &[]);
        let mut late = timed(4, at(-3600), "y");
        late.sample.truncate(1);
        writer.add(&late, &context("b", &[whole])).unwrap();
        writer.flush().unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let now = now.unwrap().as_nanos() as i64;
        assert_eq!(build_rollups(root, now).unwrap(), 4);
        assert!(build_spans(root, now).unwrap() > 0);
        let (rolled, raw) = (
            Store::open(root).unwrap(),
            Store::open(root).unwrap().rollups(false),
        );
        let day = |n: i64| Some(NOV_2 + (n - 2) * 24 * HOUR);
        let ranges = [
            (None, None),
            (day(2), day(3)),
            (Some(NOV_2 - 12 * HOUR), day(4)),
        ];
        let steps = ["1h", "2h", "1d", "7d", "10m"];
        let groups = [None, Some("service.name"), Some("host.name"), Some("kind")];
        for ((from, to), step, group) in itertools_product(&ranges, &steps, &groups) {
            let series = crate::SeriesQuery {
                query: Query {
                    from: *from,
                    to: *to,
                    ..Default::default()
                },
                step_nanos: crate::parse_step(step).unwrap(),
                group_by: group.map(String::from),
                function: None,
            };
            let ours = rolled.series_points(&series).unwrap();
            assert!(!ours.is_empty());
            assert_eq!(
                ours,
                raw.series_points(&series).unwrap(),
                "{from:?} {step} {group:?}"
            );
            let reads = rolled.block_on(rolled.series_rollups(&series)).is_some();
            let whole_hours = *step != "10m" && *group != Some("kind");
            assert_eq!(reads, whole_hours, "{from:?} {step} {group:?}");
        }
    }

    /// Every combination of one of `a`, one of `b` and one of `c`.
    fn itertools_product<'x, A, B, C>(
        a: &'x [A],
        b: &'x [B],
        c: &'x [C],
    ) -> impl Iterator<Item = (&'x A, &'x B, &'x C)> {
        a.iter()
            .flat_map(move |x| b.iter().flat_map(move |y| c.iter().map(move |z| (x, y, z))))
    }
}
