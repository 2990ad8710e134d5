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
        .flat_map(|span| span_tables().into_iter().map(move |t| span.file(root, &t)))
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
