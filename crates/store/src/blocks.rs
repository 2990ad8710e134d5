//! Day blocks. Once a day is over, `store compact` merges each service's
//! hours of it, in every table, into one partition of its own,
//! `dt=D/hour=all/service=S` (`layout::DAY_BLOCK`): a day of a service is
//! then one file per table, its dictionary rows once, where hourly
//! partitions repeated them in every hour. A range reads a day block when
//! it touches its day (`bounds.rs`), and skips its pages by their time.
//!
//! Each table's day is swapped whole: its blocks (and the hours of the
//! services left as they are, hard-linked) are written into a hidden
//! sibling of the day's directory, `.dt=D.compact`, exchanged with it in
//! one atomic swap. Every swap of a compaction is made in one burst,
//! dictionaries first, counted in `swaps.rs` so that a reader that read
//! across it reads again. Profiles sent again for a blocked day are
//! written to its hours, and found stored in its block (`held.rs`); the
//! next compaction merges them in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{io_at, StoreError};
use crate::layout::{table_directory, DAY, DAY_BLOCK, HOUR};
use crate::merge::{
    compact_rows_of_files, parquet_files, Compacted, PartitionNames, COMPACTION_ORDER,
};
use crate::schema::SAMPLES;
use crate::swaps::{sibling, swap};

/// A service's day is made a block only when its `samples` rows number
/// at most this: a block's rows are merged in memory, as an hour's are.
/// A busier service's hours stay hours (and are compacted as such).
const BLOCK_ROWS: i64 = 4_000_000;

/// How long after its end a day is blocked: profiles that arrive late (a
/// collector's batch, a request retried) are mostly in by then. Any that
/// arrive later go to its hours, merged in at the next compaction.
const DAY_OVER_AFTER: i64 = HOUR;

/// One partition directory of a day: its hour (`HH` or the block's) and
/// its service (as in its directory's name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place {
    pub(crate) hour: String,
    pub(crate) service: String,
}

/// One table's partitions of one day, each with its Parquet files.
pub(crate) type DayFiles = BTreeMap<Place, Vec<PathBuf>>;

/// A day's directory of one table and its staged replacement.
pub(crate) struct Staged {
    table: usize,
    day: PathBuf,
    staging: PathBuf,
}

/// Writes the day blocks of every service of every day of the store at
/// `root` that is over at `now` (Unix nanoseconds) and has hours to
/// merge, beside the days' directories. Nothing is swapped yet.
pub(crate) fn stage_day_blocks(
    root: &Path,
    now: i64,
    done: &mut Compacted,
) -> Result<Vec<Staged>, StoreError> {
    let mut staged = Vec::new();
    for dt in days_over(root, now) {
        let files: Vec<DayFiles> = (COMPACTION_ORDER.iter())
            .map(|table| day_files(&table_directory(root, table).join(format!("dt={dt}"))))
            .collect();
        let blocked = services_to_block(&files)?;
        if blocked.is_empty() {
            continue;
        }
        let names: BTreeMap<&String, String> = (blocked.iter())
            .map(|service| (service, block_name(&files, service)))
            .collect();
        for (table, day_files) in files.iter().enumerate() {
            if day_files.is_empty() {
                continue;
            }
            let day = table_directory(root, COMPACTION_ORDER[table]).join(format!("dt={dt}"));
            let staging = sibling(&day, "compact");
            stage_day(
                &day,
                &staging,
                day_files,
                &names,
                COMPACTION_ORDER[table],
                done,
            )?;
            staged.push(Staged {
                table,
                day,
                staging,
            });
        }
    }
    // Dictionaries before what refers to them, whatever the day.
    staged.sort_by_key(|s| s.table);
    Ok(staged)
}

/// Swaps every staged day in, in one counted burst; the directories
/// that now hold the old files, to remove once readers are off them.
pub(crate) fn swap_staged(root: &Path, staged: Vec<Staged>) -> Result<Vec<PathBuf>, StoreError> {
    if staged.is_empty() {
        return Ok(Vec::new());
    }
    let swapping = crate::swaps::begin(root)?;
    let mut old = Vec::new();
    for day in staged {
        swap(&day.day, &day.staging)?;
        old.push(day.staging);
    }
    swapping.end()?;
    Ok(old)
}

/// The days (`YYYY-MM-DD`) any table of the store holds that ended at
/// least [`DAY_OVER_AFTER`] before `now`.
pub(crate) fn days_over(root: &Path, now: i64) -> BTreeSet<String> {
    let mut days = BTreeSet::new();
    for table in COMPACTION_ORDER {
        for name in visible_names(&table_directory(root, table)) {
            let Some(dt) = name.strip_prefix("dt=") else {
                continue;
            };
            let end = day_start(dt).map(|start| start.saturating_add(DAY));
            if end.is_some_and(|end| is_over(end, now)) {
                days.insert(dt.to_string());
            }
        }
    }
    days
}

/// Whether days ending at `end` are over at `now`: at least
/// [`DAY_OVER_AFTER`] past it.
pub(crate) fn is_over(end: i64, now: i64) -> bool {
    end.saturating_add(DAY_OVER_AFTER) <= now
}

/// Unix nanoseconds of the start of the day `dt` names (`YYYY-MM-DD`).
pub(crate) fn day_start(dt: &str) -> Option<i64> {
    let mut parts = dt.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let days = protoprof_model_meta::dates::days_from_civil(year, month, day);
    days.checked_mul(DAY)
}

/// The names in `dir` that are not hidden.
pub(crate) fn visible_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = (std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|entry| entry.file_name().to_string_lossy().to_string())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// The partitions of the day directory `day` (of one table).
pub(crate) fn day_files(day: &Path) -> DayFiles {
    let mut files = DayFiles::new();
    for hour in visible_names(day) {
        let Some(hour_value) = hour.strip_prefix("hour=") else {
            continue;
        };
        for service in visible_names(&day.join(&hour)) {
            let Some(service_name) = service.strip_prefix("service=") else {
                continue;
            };
            let place = Place {
                hour: hour_value.to_string(),
                service: service_name.to_string(),
            };
            files.insert(place, parquet_files(&day.join(&hour).join(&service)));
        }
    }
    files
}

/// The services of a day (each table's partitions of it) that have hours
/// to merge, or blocks of several files, and rows few enough to merge.
fn services_to_block(files: &[DayFiles]) -> Result<BTreeSet<String>, StoreError> {
    let mut merge = BTreeSet::new();
    for day in files {
        let mut blocks = BTreeMap::new();
        for (place, files) in day {
            if files.is_empty() {
                continue;
            }
            if place.hour != DAY_BLOCK {
                merge.insert(place.service.clone());
            }
            if place.hour == DAY_BLOCK {
                *blocks.entry(&place.service).or_insert(0) += files.len();
            }
        }
        merge.extend(
            blocks
                .into_iter()
                .filter(|(_, n)| *n > 1)
                .map(|(s, _)| s.clone()),
        );
    }
    let samples = COMPACTION_ORDER.iter().position(|t| *t == SAMPLES);
    let samples = &files[samples.expect("samples are compacted")];
    let mut blocked = BTreeSet::new();
    for service in merge {
        let mut rows = 0;
        for (_, files) in samples.iter().filter(|(p, _)| p.service == service) {
            for file in files {
                rows += rows_in(file)?;
            }
        }
        if rows <= BLOCK_ROWS {
            blocked.insert(service);
        }
    }
    Ok(blocked)
}

/// The rows a Parquet file holds, as its footer says.
fn rows_in(file: &Path) -> Result<i64, StoreError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let opened = std::fs::File::open(file).map_err(io_at(file))?;
    let reader = SerializedFileReader::new(opened).map_err(|e| {
        StoreError::Engine(format!(
            "{}: {e}; nothing was compacted in its day",
            file.display()
        ))
    })?;
    Ok(reader.metadata().file_metadata().num_rows())
}

/// The name of a service's block files, the same in every table (so that
/// a `profiles` file's flush is known by its `samples` file of the same
/// name): as a merged partition's, among all the service's files of the
/// day.
fn block_name(files: &[DayFiles], service: &str) -> String {
    let mut names = PartitionNames::default();
    for (place, files) in files.iter().flatten() {
        if place.service == service {
            for file in files {
                let stem = file.file_stem().map(|s| s.to_string_lossy().to_string());
                names.note(service.to_string(), stem.unwrap_or_default());
            }
        }
    }
    names.merged(service)
}

/// Writes into `staging` the day `day` of `table` as it is to be: the
/// services of `names` each merged into its block, named so, the others'
/// partitions hard-linked as they are.
fn stage_day(
    day: &Path,
    staging: &Path,
    files: &DayFiles,
    names: &BTreeMap<&String, String>,
    table: &str,
    done: &mut Compacted,
) -> Result<(), StoreError> {
    // A staging directory a killed compaction left is gone already
    // (`compact.rs` removes leftovers first).
    std::fs::create_dir_all(staging).map_err(io_at(staging))?;
    for (service, name) in names {
        let merged: Vec<PathBuf> = (files.iter())
            .filter(|(place, _)| &&place.service == service)
            .flat_map(|(_, files)| files.iter().cloned())
            .collect();
        if merged.is_empty() {
            continue;
        }
        let block = staging
            .join(format!("hour={DAY_BLOCK}"))
            .join(format!("service={service}"));
        let shown = format!("{} (service={service})", day.display());
        let rows = compact_rows_of_files(&merged, table, &shown, &block, name)?;
        done.count(merged.len(), rows);
    }
    for place in files.keys() {
        if !names.contains_key(&place.service) {
            let below = Path::new(&format!("hour={}", place.hour))
                .join(format!("service={}", place.service));
            link_directory(&day.join(&below), &staging.join(&below))?;
        }
    }
    crate::files::sync_dir(staging)
}

/// Hard-links every file of `from` into `to` (made).
fn link_directory(from: &Path, to: &Path) -> Result<(), StoreError> {
    std::fs::create_dir_all(to).map_err(io_at(to))?;
    for entry in std::fs::read_dir(from).map_err(io_at(from))? {
        let entry = entry.map_err(io_at(from))?;
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let target = to.join(entry.file_name());
            std::fs::hard_link(entry.path(), &target).map_err(io_at(&target))?;
        }
    }
    crate::files::sync_dir(to)
}

#[cfg(test)]
mod tests {
    #[test]
    fn days_start_at_midnight_utc() {
        assert_eq!(super::day_start("1970-01-02"), Some(super::DAY));
        // 2026-11-27T00:00:00Z
        assert_eq!(
            super::day_start("2026-11-27"),
            Some(1_795_737_600_000_000_000)
        );
        assert_eq!(super::day_start("2026-11"), None);
        assert_eq!(super::day_start("all"), None);
    }
}
