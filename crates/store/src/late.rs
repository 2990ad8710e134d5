//! Samples past their profile's partition's hour. A profile's rows sit in
//! the partition of its start (or of its earliest event, when that is
//! before it), so a reader bounds a range's partitions by its end. To
//! bound them by its start as well, every `samples` row sits in the hour
//! of its own time: a sample whose earliest event is past its profile's
//! partition's hour (an OTLP profile whose events cross the hour) moves
//! to its own hour's partition, with the dictionary rows it uses and a
//! copy of its profile's header marked as written elsewhere. Its
//! `profiles` row stays where the profile is.

use foldhash::{HashMap, HashMapExt};

use crate::ids::Id;
use crate::layout::{hour_start, Partition, HOUR};
use crate::rows::{PartitionRows, SampleRow};

/// Moves the samples of `rows` from `first` on (one profile's, the last
/// it holds) that are past `partition_time`'s hour out of it: the rows
/// of each partition they go to, by partition.
pub(crate) fn take_late_samples(
    rows: &mut PartitionRows,
    first: usize,
    partition_time: i64,
) -> Vec<(Partition, PartitionRows)> {
    let bound = hour_start(partition_time).saturating_add(HOUR);
    if rows.samples[first..]
        .iter()
        .all(|s| s.time_unix_nano < bound)
    {
        return Vec::new();
    }
    let tail = rows.samples.split_off(first);
    let (late, kept): (Vec<SampleRow>, Vec<SampleRow>) =
        tail.into_iter().partition(|s| s.time_unix_nano >= bound);
    rows.samples.extend(kept);
    let mut header = rows.profiles[late[0].profile].clone();
    header.elsewhere = true;
    let dictionary = Dictionary::of(rows);
    let mut moved: Vec<(Partition, PartitionRows)> = Vec::new();
    for mut sample in late {
        let partition = Partition::of(sample.time_unix_nano, &header.service_name);
        let at = match moved.iter().position(|(p, _)| *p == partition) {
            Some(at) => at,
            None => {
                let mut apart = PartitionRows::default();
                apart.profiles.push(header.clone());
                moved.push((partition, apart));
                moved.len() - 1
            }
        };
        let apart = &mut moved[at].1;
        dictionary.copy_used(rows, &sample, apart);
        sample.profile = 0;
        apart.samples.push(sample);
    }
    moved
}

/// Where each dictionary row of a partition's rows is, by id.
struct Dictionary {
    stacks: HashMap<Id, usize>,
    locations: HashMap<Id, usize>,
    functions: HashMap<Id, usize>,
    mappings: HashMap<Id, usize>,
}

impl Dictionary {
    fn of(rows: &PartitionRows) -> Dictionary {
        let at = |ids: &mut dyn Iterator<Item = Id>| {
            let mut positions = HashMap::new();
            for (n, id) in ids.enumerate() {
                positions.insert(id, n);
            }
            positions
        };
        Dictionary {
            stacks: at(&mut rows.stacks.iter().map(|s| s.0)),
            locations: at(&mut rows.locations.iter().map(|l| l.id)),
            functions: at(&mut rows.functions.iter().map(|f| f.id)),
            mappings: at(&mut rows.mappings.iter().map(|m| m.id)),
        }
    }

    /// Adds to `apart` the rows of `from` that `sample` uses: its label
    /// set, stack, the stack's locations and their functions and mappings.
    fn copy_used(&self, from: &PartitionRows, sample: &SampleRow, apart: &mut PartitionRows) {
        if let Some(labels) = from.label_sets.get(&sample.label_set_id) {
            (apart.label_sets)
                .entry(sample.label_set_id)
                .or_insert_with(|| labels.clone());
        }
        let Some(&stack) = self.stacks.get(&sample.stack_id) else {
            return;
        };
        let (id, locations) = &from.stacks[stack];
        if !apart.take_stack(*id, locations) {
            return;
        }
        for location in locations {
            let Some(&at) = self.locations.get(location) else {
                continue;
            };
            let row = &from.locations[at];
            if !apart.take_location(row) {
                continue;
            }
            if let Some(&m) = row.mapping_id.as_ref().and_then(|m| self.mappings.get(m)) {
                apart.take_mapping(&from.mappings[m]);
            }
            for function in row.lines.iter().filter_map(|line| line.function_id) {
                if let Some(&f) = self.functions.get(&function) {
                    apart.take_function(&from.functions[f]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use protoprof_model_pprof::perftools::profiles::{Function, Line};

    use crate::test_profiles::{count, profile};
    use crate::{ProfileContext, Query, SampleEvents, Store, StoreWriter};

    use super::HOUR;

    /// A profile whose second sample's event comes three days after its
    /// start: that sample's row sits in its own hour, with its stack's
    /// rows, and the profile's row where the profile starts; a range of
    /// either hour reads what it holds, and the store is marked.
    #[test]
    fn a_sample_past_its_partition_s_hour_moves_to_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = profile(5);
        p.string_table.push("late_function".into());
        let mut f = Function::new();
        (f.id, f.name) = (1, 3);
        p.function.push(f);
        let mut late_location = p.location[0].clone();
        late_location.id = 2;
        let mut line = Line::new();
        line.function_id = 1;
        late_location.line.push(line);
        p.location.push(late_location);
        let mut late = p.sample[0].clone();
        (late.location_id, late.value) = (vec![2], vec![7]);
        p.sample.push(late);
        let start = p.time_nanos;
        let events = |t: i64| SampleEvents {
            timestamps_unix_nano: vec![t],
            values: vec![],
        };
        let context = ProfileContext {
            sample_events: vec![events(start + 60), events(start + 72 * HOUR)],
            ..Default::default()
        };
        let mut writer = StoreWriter::new(dir.path());
        writer.add(&p, &context).unwrap();
        writer.flush().unwrap();
        assert!(dir.path().join(".layout").exists(), "the store is marked");
        // Sent again, it is one repeat, not one per partition it is in.
        let mut again = StoreWriter::new(dir.path());
        again.add(&p, &context).unwrap();
        let flushed = again.flush().unwrap();
        assert_eq!((flushed.profiles, flushed.repeats), (0, 1));
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(count(&store, "profiles"), 1);
        let partitions = store
            .sql("SELECT DISTINCT dt, hour FROM samples ORDER BY dt, hour")
            .unwrap();
        let days = crate::read::string_values(partitions[0].column(0));
        assert_eq!(days, ["2026-11-27", "2026-11-30"]);
        let located = "SELECT count(*) FROM stacks WHERE dt = '2026-11-30'";
        let stacks = crate::read::int_values(store.sql(located).unwrap()[0].column(0));
        assert_eq!(stacks, [1]);
        let range = |from: i64, to: i64| {
            let query = Query {
                from: Some(from),
                to: Some(to),
                ..Default::default()
            };
            store.select(&query).unwrap()
        };
        let later = range(start + 72 * HOUR, start + 73 * HOUR);
        assert_eq!(later.profile.sample.len(), 1);
        assert_eq!(later.profile.sample[0].value, [7]);
        let name = later.profile.function[0].name as usize;
        assert_eq!(later.profile.string_table[name], "late_function");
        assert_eq!(later.profile.time_nanos, start);
        let samples = later.reads.iter().find(|r| r.table == "samples").unwrap();
        assert_eq!(samples.files, samples.queries, "{:?}", later.reads);
        let first = range(start, start + HOUR);
        assert_eq!(first.profile.sample.len(), 1);
        assert_eq!(first.profile.sample[0].value, [5]);
    }
}
