//! Writing: profiles gathered by partition, then flushed as one Parquet
//! file per table and partition, each written to a hidden name, synced,
//! and renamed into place (dictionaries first, samples last, so a reader
//! never meets a sample whose stack is not yet there).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::DataType;
use protoprof_model_pprof::perftools::profiles::Profile;

use crate::arrays::{
    fixed, flags, ids, ints, list, nullable_list, optional_strings, string_maps, strings, structs,
    uints,
};
use crate::bounds;
use crate::error::StoreError;
use crate::files::{parquet_bytes, write_files, FileKind, NewFile};
use crate::held::HeldProfiles;
use crate::ids::Id;
use crate::late::take_late_samples;
use crate::layout::{table_directory, Partition};
use crate::location::Location;
use crate::lock::WriteLocks;
use crate::pause::{self, Point};
use crate::rows::{
    check_events, check_references, check_samples, partition_of, profile_row, PartitionRows,
    ProfileContext, ProfileRow,
};
use crate::schema::{
    label_fields, line_fields, numeric_label_fields, schema_of, value_type_fields, FUNCTIONS,
    LOCATIONS, MAPPINGS, PROFILES, RESOURCE_COLUMNS, SAMPLES, STACKS,
};
use crate::shared_rows::SharedEntries;

/// Gathers profiles and writes them to a store.
pub struct StoreWriter {
    root: PathBuf,
    /// Where `root` is, when given rather than read from `root` (tests:
    /// an object store's client made for a test server).
    location: Option<Location>,
    partitions: BTreeMap<Partition, PartitionRows>,
    rows: usize,
    /// What this writer's flushes know the store holds.
    held: HeldProfiles,
}

/// What one flush wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flushed {
    /// The profiles written.
    pub profiles: usize,
    /// The `samples` rows written.
    pub sample_rows: usize,
    /// The profiles not written because the store held them already
    /// (another writer wrote them since this one last looked), or because
    /// they were gathered twice.
    pub repeats: usize,
    /// The files written.
    pub files: Vec<PathBuf>,
}

impl StoreWriter {
    /// A writer to the store at `root` (created on the first flush).
    pub fn new(root: &Path) -> Self {
        StoreWriter {
            root: root.to_path_buf(),
            location: None,
            partitions: BTreeMap::new(),
            rows: 0,
            held: HeldProfiles::default(),
        }
    }

    /// A writer to the store `root` names, at `location`.
    #[cfg(test)]
    pub(crate) fn on(root: &Path, location: Location) -> Self {
        StoreWriter {
            location: Some(location),
            ..StoreWriter::new(root)
        }
    }

    /// Adds a profile; its rows are written by the next [`Self::flush`].
    /// Returns its id. A profile refused adds no row.
    pub fn add(&mut self, p: &Profile, context: &ProfileContext) -> Result<Id, StoreError> {
        let ids = self.add_all(&[(p, context)])?;
        Ok(ids[0])
    }

    /// Adds `profiles`, all of them or none: each one's references are
    /// checked before any row is added. Returns their ids (each one's own,
    /// else made from its rows).
    pub fn add_all(
        &mut self,
        profiles: &[(&Profile, &ProfileContext)],
    ) -> Result<Vec<Id>, StoreError> {
        for (n, (p, context)) in profiles.iter().enumerate() {
            check_references(p)
                .and_then(|()| check_events(p, context))
                .map_err(|e| refused(profiles.len(), n, e))?;
        }
        let mut ids = Vec::with_capacity(profiles.len());
        for (p, context) in profiles {
            let header = profile_row(p, p, context);
            ids.push(self.add_placed(p, header, context, |rows, header| {
                rows.add(p, header, context).map_err(StoreError::Invalid)
            })?);
        }
        Ok(ids)
    }

    /// Adds `profiles`, whose mappings, locations, functions and strings
    /// are `dictionary`'s (the profiles of one OTLP message, as the bridge
    /// converts them sharing one dictionary), all of them or none. Their
    /// rows and ids are those [`Self::add_all`] gives each converted alone.
    pub fn add_sharing(
        &mut self,
        dictionary: &Profile,
        profiles: &[(&Profile, &ProfileContext)],
    ) -> Result<Vec<Id>, StoreError> {
        check_references(dictionary).map_err(StoreError::Invalid)?;
        let locations = dictionary.location.iter().map(|l| l.id).collect();
        for (n, (p, context)) in profiles.iter().enumerate() {
            check_samples(&locations, &p.sample)
                .and_then(|()| check_events(p, context))
                .map_err(|e| refused(profiles.len(), n, e))?;
        }
        let mut shared = SharedEntries::new(dictionary);
        let mut ids = Vec::with_capacity(profiles.len());
        for (p, context) in profiles {
            let header = profile_row(p, dictionary, context);
            ids.push(self.add_placed(p, header, context, |rows, header| {
                Ok(rows.add_shared(&mut shared, p, header, context))
            })?);
        }
        Ok(ids)
    }

    /// Adds profile `p`'s rows, which `add` makes, to its partition
    /// (`partition_of`), then moves its samples past that partition's hour
    /// to their own (`late.rs`). Returns its id.
    fn add_placed(
        &mut self,
        p: &Profile,
        header: ProfileRow,
        context: &ProfileContext,
        add: impl FnOnce(&mut PartitionRows, ProfileRow) -> Result<Id, StoreError>,
    ) -> Result<Id, StoreError> {
        let (partition, time) = partition_of(&header, context);
        let rows = self.partitions.entry(partition).or_default();
        let first = rows.samples.len();
        let id = add(rows, header)?;
        let late = take_late_samples(rows, first, time);
        self.take_in(late);
        self.rows += p.sample.len() * p.sample_type.len().max(1);
        Ok(id)
    }

    /// Keeps only the profiles of `ids` (and each once), with their samples.
    pub(crate) fn keep_only(&mut self, ids: &std::collections::HashSet<Id>) {
        self.rows = 0;
        for rows in self.partitions.values_mut() {
            rows.drop_profiles(|id| !ids.contains(id));
            self.rows += rows.sample_row_count();
        }
    }

    /// Takes in what `other` gathered (for the same store), as if it had
    /// been added here: rows are made apart, without a lock, and gathered
    /// under one.
    pub(crate) fn absorb(&mut self, other: StoreWriter) {
        self.take_in(other.partitions);
        self.rows += other.rows;
    }

    /// Takes in rows gathered apart, by partition.
    fn take_in(&mut self, partitions: impl IntoIterator<Item = (Partition, PartitionRows)>) {
        for (partition, rows) in partitions {
            match self.partitions.get_mut(&partition) {
                Some(here) => here.absorb(rows),
                None => {
                    self.partitions.insert(partition, rows);
                }
            }
        }
    }

    /// The `samples` rows gathered and not yet written.
    pub fn pending_rows(&self) -> usize {
        self.rows
    }

    /// Writes what was gathered, one file per table and partition. A
    /// profile the store holds already, or gathered twice, is written once:
    /// in a directory, a flush holds the write lock while it reads the
    /// `profiles` files other writers added to its partitions and writes.
    pub fn flush(&mut self) -> Result<Flushed, StoreError> {
        let mut held = std::mem::take(&mut self.held);
        let flushed = self.flush_against(&mut held);
        self.held = held;
        flushed
    }

    /// [`Self::flush`], knowing what `held` says the store holds.
    pub(crate) fn flush_against(&mut self, held: &mut HeldProfiles) -> Result<Flushed, StoreError> {
        if self.partitions.is_empty() {
            return Ok(Flushed::default());
        }
        let location = match &self.location {
            Some(location) => location.clone(),
            None => Location::of(&self.root)?,
        };
        pause::at(Point::BeforeLocks);
        let locks = WriteLocks::take(&location)?;
        pause::at(Point::Locked);
        let new_store = location.block_on(bounds::is_new(&location))?;
        match &location {
            Location::Local(root) => held.read_partitions(root, self.partitions.keys()),
            Location::Object { .. } => {
                held.read_object_partitions(&location, self.partitions.keys())?
            }
        }
        pause::at(Point::HeldRead);
        let batch = crate::layout::batch_name();
        let mut flushed = Flushed::default();
        let mut written = Vec::new();
        for (partition, mut rows) in std::mem::take(&mut self.partitions) {
            flushed.repeats += rows.drop_profiles(|id| held.contains(id));
            if rows.profiles.is_empty() {
                continue;
            }
            flushed.profiles += rows.own_profiles().count();
            let tables = table_batches(&rows)?;
            flushed.sample_rows += tables.last().map_or(0, |(_, b)| b.num_rows());
            let ids: Vec<Id> = rows.own_profiles().map(|p| p.id).collect();
            written.push(PartitionFiles {
                partition,
                tables,
                ids,
            });
        }
        flushed.files = match &location {
            Location::Local(root) => write_partitions(root, &batch, &written, held)?,
            Location::Object { .. } => put_partitions(&location, &batch, &written, (held, &locks))?,
        };
        // Every row this layout writes is in its own time's hour: a store
        // it created says so (`bounds.rs`).
        if new_store && !written.is_empty() {
            location.block_on(bounds::mark(&location))??;
        }
        self.rows = 0;
        Ok(flushed)
    }
}

/// The files of one partition a flush writes: each table's rows
/// (dictionaries first, samples last), and the ids of its profiles.
struct PartitionFiles {
    partition: Partition,
    tables: Vec<(&'static str, RecordBatch)>,
    ids: Vec<Id>,
}

/// Writes every partition's files in the store directory `root`, all at
/// once, `samples` files last; then notes their profiles in `held`. Held
/// only once every table's file is in place: a flush that fails half way
/// writes its profiles again when retried.
fn write_partitions(
    root: &Path,
    batch: &str,
    written: &[PartitionFiles],
    held: &mut HeldProfiles,
) -> Result<Vec<PathBuf>, StoreError> {
    // Each file, and the profiles it holds when it is a `profiles` file.
    let (mut files, mut profiles_of) = (Vec::new(), Vec::new());
    for w in written {
        for (table, records) in &w.tables {
            let dir = table_directory(root, table).join(w.partition.directory());
            let last = *table == SAMPLES;
            files.push(NewFile { dir, records, last });
            profiles_of.push((*table == PROFILES).then_some(&w.ids));
        }
    }
    let paths = write_files(&files, batch, FileKind::Flush)?;
    for (path, ids) in paths.iter().zip(profiles_of) {
        if let Some(ids) = ids {
            held.wrote(path.clone(), ids.iter().copied());
        }
    }
    Ok(paths)
}

/// Puts every partition's files in object storage, one PUT each:
/// dictionaries and profiles first; then, once `locks` are confirmed
/// still held, the `samples` files, which make each partition's flush
/// count; then notes their profiles in `held`.
fn put_partitions(
    location: &Location,
    batch: &str,
    written: &[PartitionFiles],
    (held, locks): (&mut HeldProfiles, &WriteLocks),
) -> Result<Vec<PathBuf>, StoreError> {
    let runtime = crate::location::client_runtime()?;
    let name = |w: &PartitionFiles, table: &str| {
        format!("{table}/{}/{batch}.parquet", w.partition.object_path())
    };
    let mut paths = Vec::new();
    let mut samples = Vec::new();
    for w in written {
        for (table, records) in &w.tables {
            let name = name(w, table);
            let bytes = parquet_bytes(records, &name, FileKind::Flush)?;
            match *table == SAMPLES {
                true => samples.push((name, bytes)),
                false => paths.push(PathBuf::from(runtime.block_on(location.put(&name, bytes))?)),
            }
        }
    }
    pause::at(Point::BeforeSamples);
    locks.confirm()?;
    for (name, bytes) in samples {
        paths.push(PathBuf::from(runtime.block_on(location.put(&name, bytes))?));
    }
    for w in written {
        let profiles = location.object_path(&name(w, PROFILES))?;
        held.put(&profiles, w.ids.iter().copied());
    }
    Ok(paths)
}

/// Why profile `n` of `count` is refused.
fn refused(count: usize, n: usize, e: String) -> StoreError {
    match count {
        1 => StoreError::Invalid(e),
        _ => StoreError::Invalid(format!("profile {n}: {e}")),
    }
}

/// Each table's record batch, dictionaries first, samples last.
fn table_batches(rows: &PartitionRows) -> Result<Vec<(&'static str, RecordBatch)>, StoreError> {
    let batch = |table: &'static str, columns: Vec<ArrayRef>| {
        RecordBatch::try_new(schema_of(table), columns)
            .map(|b| (table, b))
            .map_err(|e| StoreError::Engine(format!("{table}: {e}")))
    };
    Ok(vec![
        batch(MAPPINGS, mapping_columns(rows))?,
        batch(FUNCTIONS, function_columns(rows))?,
        batch(LOCATIONS, location_columns(rows))?,
        batch(STACKS, stack_columns(rows))?,
        batch(PROFILES, profile_columns(rows))?,
        batch(SAMPLES, sample_columns(rows))?,
    ])
}

fn mapping_columns(rows: &PartitionRows) -> Vec<ArrayRef> {
    let m = &rows.mappings;
    vec![
        ids(m.iter().map(|m| Some(&m.id))),
        uints(m.iter().map(|m| m.memory_start)),
        uints(m.iter().map(|m| m.memory_limit)),
        uints(m.iter().map(|m| m.file_offset)),
        strings(m.iter().map(|m| m.filename.as_str())),
        strings(m.iter().map(|m| m.build_id.as_str())),
        flags(m.iter().map(|m| m.has_functions)),
        flags(m.iter().map(|m| m.has_filenames)),
        flags(m.iter().map(|m| m.has_line_numbers)),
        flags(m.iter().map(|m| m.has_inline_frames)),
    ]
}

fn function_columns(rows: &PartitionRows) -> Vec<ArrayRef> {
    let f = &rows.functions;
    vec![
        ids(f.iter().map(|f| Some(&f.id))),
        strings(f.iter().map(|f| f.name.as_str())),
        strings(f.iter().map(|f| f.system_name.as_str())),
        strings(f.iter().map(|f| f.filename.as_str())),
        ints(f.iter().map(|f| f.start_line)),
    ]
}

fn location_columns(rows: &PartitionRows) -> Vec<ArrayRef> {
    let l = &rows.locations;
    let lines = l.iter().flat_map(|l| l.lines.iter());
    let line_items = structs(
        line_fields(),
        vec![
            ids(lines.clone().map(|l| l.function_id.as_ref())),
            ints(lines.clone().map(|l| l.line)),
            ints(lines.map(|l| l.column)),
        ],
    );
    let lines_type = schema_of(LOCATIONS).field(3).data_type().clone();
    vec![
        ids(l.iter().map(|l| Some(&l.id))),
        ids(l.iter().map(|l| l.mapping_id.as_ref())),
        uints(l.iter().map(|l| l.address)),
        list(
            &lines_type,
            l.iter().map(|l| l.lines.len()).collect(),
            line_items,
        ),
        flags(l.iter().map(|l| l.is_folded)),
    ]
}

fn stack_columns(rows: &PartitionRows) -> Vec<ArrayRef> {
    let s = &rows.stacks;
    let items = ids(s.iter().flat_map(|(_, l)| l.iter().map(Some)));
    let list_type = schema_of(STACKS).field(1).data_type().clone();
    vec![
        ids(s.iter().map(|(id, _)| Some(id))),
        list(&list_type, s.iter().map(|(_, l)| l.len()).collect(), items),
    ]
}

fn profile_columns(rows: &PartitionRows) -> Vec<ArrayRef> {
    let p: Vec<&ProfileRow> = rows.own_profiles().collect();
    let schema = schema_of(PROFILES);
    let types = p.iter().flat_map(|p| p.sample_types.iter());
    let type_items = structs(
        value_type_fields(),
        vec![
            strings(types.clone().map(|(t, _)| t.as_str())),
            strings(types.map(|(_, u)| u.as_str())),
        ],
    );
    let comments = strings(p.iter().flat_map(|p| p.comments.iter().map(String::as_str)));
    let attributes: Vec<&[(String, String)]> =
        p.iter().map(|p| &p.resource_attributes[..]).collect();
    let data_type = |i: usize| schema.field(i).data_type().clone();
    vec![
        ids(p.iter().map(|p| Some(&p.id))),
        ints(p.iter().map(|p| p.time_unix_nano)),
        ints(p.iter().map(|p| p.duration_nano)),
        strings(p.iter().map(|p| p.service_name.as_str())),
        list(
            &data_type(4),
            p.iter().map(|p| p.sample_types.len()).collect(),
            type_items,
        ),
        strings(p.iter().map(|p| p.period_type.0.as_str())),
        strings(p.iter().map(|p| p.period_type.1.as_str())),
        ints(p.iter().map(|p| p.period)),
        strings(p.iter().map(|p| p.default_sample_type.as_str())),
        list(
            &data_type(9),
            p.iter().map(|p| p.comments.len()).collect(),
            comments,
        ),
        strings(p.iter().map(|p| p.drop_frames.as_str())),
        strings(p.iter().map(|p| p.keep_frames.as_str())),
        strings(p.iter().map(|p| p.doc_url.as_str())),
        string_maps(&data_type(13), &attributes),
        ints(p.iter().map(|p| p.sample_count)),
        ids(p.iter().map(|p| p.main_mapping_id.as_ref())),
    ]
}

/// One `samples` row: (sample, sample type), in the file's order.
type SampleRowAt = (usize, usize);

/// The rows of `samples`, sorted by sample type and time (the partition
/// fixes the service), so that statistics let an engine skip the rest.
fn sample_order(rows: &PartitionRows) -> Vec<SampleRowAt> {
    let mut order: Vec<(&str, i64, SampleRowAt)> = Vec::new();
    for (n, s) in rows.samples.iter().enumerate() {
        let types = &rows.profiles[s.profile].sample_types;
        for (t, (name, _)) in types.iter().enumerate().take(s.values.len()) {
            order.push((name.as_str(), s.time_unix_nano, (n, t)));
        }
    }
    order.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    order.into_iter().map(|(_, _, at)| at).collect()
}

fn sample_columns(rows: &PartitionRows) -> Vec<ArrayRef> {
    let order = sample_order(rows);
    let schema = schema_of(SAMPLES);
    let data_type = |name: &str| {
        let field = schema.field_with_name(name).expect("a samples column");
        field.data_type().clone()
    };
    let sample = |&(n, _): &SampleRowAt| &rows.samples[n];
    let profile = |at: &SampleRowAt| &rows.profiles[sample(at).profile];
    let labels = |at: &SampleRowAt| &rows.label_sets[&sample(at).label_set_id];
    let mut columns = vec![
        ints(order.iter().map(|at| sample(at).time_unix_nano)),
        ints(order.iter().map(|at| profile(at).time_unix_nano)),
        ids(order.iter().map(|at| Some(&profile(at).id))),
        strings(order.iter().map(|at| profile(at).service_name.as_str())),
        strings(
            order
                .iter()
                .map(|at| profile(at).sample_types[at.1].0.as_str()),
        ),
        strings(
            order
                .iter()
                .map(|at| profile(at).sample_types[at.1].1.as_str()),
        ),
        strings(order.iter().map(|at| profile(at).period_type.0.as_str())),
        strings(order.iter().map(|at| profile(at).period_type.1.as_str())),
        ints(order.iter().map(|at| profile(at).period)),
        ids(order.iter().map(|at| Some(&sample(at).stack_id))),
        ints(order.iter().map(|at| sample(at).values[at.1])),
        ints(order.iter().map(|at| sample(at).index)),
    ];
    for c in 0..RESOURCE_COLUMNS.len() {
        columns.push(optional_strings(
            order
                .iter()
                .map(|at| profile(at).resource_columns[c].as_deref()),
        ));
    }
    let resource: Vec<&[(String, String)]> = order
        .iter()
        .map(|at| &profile(at).resource_attributes[..])
        .collect();
    columns.push(string_maps(&data_type("resource_attributes"), &resource));
    let label_maps: Vec<&[(String, String)]> =
        order.iter().map(|at| &labels(at).labels[..]).collect();
    columns.push(string_maps(&data_type("labels"), &label_maps));
    columns.push(repeated_labels(
        &order,
        &labels,
        &data_type("repeated_labels"),
    ));
    columns.push(numeric_labels(
        &order,
        &labels,
        &data_type("numeric_labels"),
    ));
    columns.push(ids(order.iter().map(|at| Some(&sample(at).label_set_id))));
    let link = |at: &SampleRowAt, key: &str, size: usize| -> Option<Vec<u8>> {
        let value = labels(at).labels.iter().find(|(k, _)| k == key)?;
        hex_bytes(&value.1, size)
    };
    let traces: Vec<Option<Vec<u8>>> = order.iter().map(|at| link(at, "trace_id", 16)).collect();
    let spans: Vec<Option<Vec<u8>>> = order.iter().map(|at| link(at, "span_id", 8)).collect();
    columns.push(fixed(16, traces.iter().map(Option::as_deref)));
    columns.push(fixed(8, spans.iter().map(Option::as_deref)));
    let events = |at: &SampleRowAt| &sample(at).events;
    let times = order.iter().map(|at| &events(at).timestamps_unix_nano[..]);
    columns.push(int_lists(&data_type("timestamps_unix_nano"), times));
    let values = order.iter().map(|at| &events(at).values[..]);
    columns.push(int_lists(&data_type("event_values"), values));
    columns
}

/// A list column of integers, each row's list given; empty lists are null.
fn int_lists<'a>(list_type: &DataType, rows: impl Iterator<Item = &'a [i64]> + Clone) -> ArrayRef {
    let lengths = rows.clone().map(<[i64]>::len).collect();
    nullable_list(list_type, lengths, ints(rows.flatten().copied()))
}

fn repeated_labels<'a>(
    order: &[SampleRowAt],
    labels: &impl Fn(&SampleRowAt) -> &'a crate::rows::LabelSet,
    list_type: &DataType,
) -> ArrayRef {
    let all = order.iter().flat_map(|at| labels(at).repeated.iter());
    let items = structs(
        label_fields(),
        vec![
            strings(all.clone().map(|(k, _)| k.as_str())),
            strings(all.map(|(_, v)| v.as_str())),
        ],
    );
    let lengths = order.iter().map(|at| labels(at).repeated.len()).collect();
    nullable_list(list_type, lengths, items)
}

fn numeric_labels<'a>(
    order: &[SampleRowAt],
    labels: &impl Fn(&SampleRowAt) -> &'a crate::rows::LabelSet,
    list_type: &DataType,
) -> ArrayRef {
    let all = order.iter().flat_map(|at| labels(at).numeric.iter());
    let items = structs(
        numeric_label_fields(),
        vec![
            strings(all.clone().map(|(k, _, _)| k.as_str())),
            ints(all.clone().map(|(_, v, _)| *v)),
            strings(all.map(|(_, _, u)| u.as_str())),
        ],
    );
    let lengths = order.iter().map(|at| labels(at).numeric.len()).collect();
    nullable_list(list_type, lengths, items)
}

/// `size` bytes from `2 * size` lowercase or uppercase hex digits.
fn hex_bytes(text: &str, size: usize) -> Option<Vec<u8>> {
    if text.len() != 2 * size || !text.is_ascii() {
        return None;
    }
    (0..size)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
        .collect()
}
