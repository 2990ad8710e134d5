//! A pprof profile as the store's rows: one `samples` row per sample and
//! sample type, one `profiles` row, and the dictionary rows (stacks,
//! locations, functions, mappings) its samples use, once per partition.
//! One small function per kind of record.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Function, Location, Mapping, Profile, Sample};

use crate::ids::{Id, RowHasher};
use crate::layout::Partition;
use crate::schema::{FUNCTIONS, LOCATIONS, MAPPINGS, PROFILES, RESOURCE_COLUMNS, STACKS};

/// What a profile's resource says of it.
#[derive(Debug, Clone, Default)]
pub struct ProfileContext {
    /// `service.name`; `unknown_service` when empty.
    pub service_name: String,
    /// The other resource (and scope) attributes, in order.
    pub resource_attributes: Vec<(String, String)>,
    /// The profile's own id (OTLP's `profile_id`); else one is made from
    /// its content.
    pub profile_id: Option<Id>,
    /// Each sample's events, in the profile's sample order, where the
    /// source gives them (OTLP's `timestamps_unix_nano`); empty, or one
    /// per sample.
    pub sample_events: Vec<SampleEvents>,
}

impl ProfileContext {
    /// The service the store keeps the profile under: `service_name`, or
    /// OpenTelemetry's `unknown_service` when it is empty.
    pub fn stored_service_name(&self) -> String {
        service_name(self)
    }
}

/// The events a sample sums, as OTLP gives them: when each was taken and,
/// where each time has a value of its own, those values. pprof has no
/// such thing; its samples have none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleEvents {
    /// The events' times (Unix nanoseconds), in the source's order.
    pub timestamps_unix_nano: Vec<i64>,
    /// Each event's value, paired with `timestamps_unix_nano`; empty when
    /// the source gives times alone (each event then counts one).
    pub values: Vec<i64>,
}

impl SampleEvents {
    /// The earliest event's time, if there is one.
    pub fn earliest(&self) -> Option<i64> {
        self.timestamps_unix_nano.iter().copied().min()
    }
}

impl ProfileContext {
    /// Sample `n`'s events (none when the source gives none).
    pub(crate) fn events_of(&self, n: usize) -> &SampleEvents {
        static NONE: SampleEvents = SampleEvents {
            timestamps_unix_nano: Vec::new(),
            values: Vec::new(),
        };
        self.sample_events.get(n).unwrap_or(&NONE)
    }

    /// The time of the profile's partition: its start, or its earliest
    /// event when that is before it, so that no row is ever in a later
    /// partition than its time.
    pub(crate) fn partition_time(&self, start: i64) -> i64 {
        let earliest = self.sample_events.iter().filter_map(SampleEvents::earliest);
        earliest.fold(start, i64::min)
    }
}

/// A profile's header, as its `profiles` row and the per-row columns of
/// its samples take it.
#[derive(Debug, Clone)]
pub(crate) struct ProfileRow {
    pub id: Id,
    pub time_unix_nano: i64,
    pub duration_nano: i64,
    pub service_name: String,
    pub sample_types: Vec<(String, String)>,
    pub period_type: (String, String),
    pub period: i64,
    pub default_sample_type: String,
    pub comments: Vec<String>,
    pub drop_frames: String,
    pub keep_frames: String,
    pub doc_url: String,
    /// Resource attributes with columns of their own, by [`RESOURCE_COLUMNS`].
    pub resource_columns: Vec<Option<String>>,
    /// The other resource attributes.
    pub resource_attributes: Vec<(String, String)>,
    pub sample_count: i64,
    /// The profile's first mapping (pprof's main binary), once known.
    pub main_mapping_id: Option<Id>,
    /// Its `profiles` row is written in another partition: this copy is
    /// there for the per-row columns of samples moved apart from it.
    pub elsewhere: bool,
}

/// A sample's labels: string labels (each key once), string labels whose
/// key repeats, numeric labels (key, value, unit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct LabelSet {
    pub labels: Vec<(String, String)>,
    pub repeated: Vec<(String, String)>,
    pub numeric: Vec<(String, i64, String)>,
}

/// One sample's values, as rows.
#[derive(Debug, Clone)]
pub(crate) struct SampleRow {
    /// Index of its profile in the partition's profiles.
    pub profile: usize,
    /// Its earliest event's time, else its profile's start.
    pub time_unix_nano: i64,
    /// Its position in its profile.
    pub index: i64,
    pub stack_id: Id,
    pub values: Vec<i64>,
    pub label_set_id: Id,
    pub events: SampleEvents,
}

/// A location's row.
#[derive(Debug, Clone)]
pub(crate) struct LocationRow {
    pub id: Id,
    pub mapping_id: Option<Id>,
    pub address: u64,
    pub lines: Vec<LineRow>,
    pub is_folded: bool,
}

/// A line of a location's row: its function's row id, line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineRow {
    pub function_id: Option<Id>,
    pub line: i64,
    pub column: i64,
}

/// A function's row: the pprof function's strings resolved, and the id
/// that hashes exactly what it is made of ([`FunctionParts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FunctionRow {
    pub id: Id,
    pub name: String,
    pub system_name: String,
    pub filename: String,
    pub start_line: i64,
}

/// What a function's row is made of, borrowed: two functions are one row
/// when these are equal, and the row's id is their hash.
#[derive(PartialEq, Eq)]
struct FunctionParts<'a> {
    name: &'a str,
    system_name: &'a str,
    filename: &'a str,
    start_line: i64,
}

impl<'a> FunctionParts<'a> {
    fn of(strings: &'a Profile, f: &Function) -> Self {
        FunctionParts {
            name: strings.string(f.name),
            system_name: strings.string(f.system_name),
            filename: strings.string(f.filename),
            start_line: f.start_line,
        }
    }

    fn row(&self) -> FunctionRow {
        let FunctionParts {
            name,
            system_name,
            filename,
            start_line,
        } = *self;
        let id = RowHasher::new(FUNCTIONS)
            .text(name)
            .text(system_name)
            .text(filename)
            .int(start_line)
            .finish();
        FunctionRow {
            id,
            name: name.into(),
            system_name: system_name.into(),
            filename: filename.into(),
            start_line,
        }
    }
}

impl FunctionRow {
    /// The row of pprof function `f`, its strings from `strings`.
    pub(crate) fn of(strings: &Profile, f: &Function) -> FunctionRow {
        FunctionParts::of(strings, f).row()
    }

    fn parts(&self) -> FunctionParts<'_> {
        FunctionParts {
            name: &self.name,
            system_name: &self.system_name,
            filename: &self.filename,
            start_line: self.start_line,
        }
    }
}

/// A mapping's row: the pprof mapping's strings resolved, and the id
/// that hashes exactly what it is made of ([`MappingParts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MappingRow {
    pub id: Id,
    pub memory_start: u64,
    pub memory_limit: u64,
    pub file_offset: u64,
    pub filename: String,
    pub build_id: String,
    pub has_functions: bool,
    pub has_filenames: bool,
    pub has_line_numbers: bool,
    pub has_inline_frames: bool,
}

/// What a mapping's row is made of, borrowed (as [`FunctionParts`]).
#[derive(PartialEq, Eq)]
struct MappingParts<'a> {
    memory_start: u64,
    memory_limit: u64,
    file_offset: u64,
    filename: &'a str,
    build_id: &'a str,
    has_functions: bool,
    has_filenames: bool,
    has_line_numbers: bool,
    has_inline_frames: bool,
}

impl<'a> MappingParts<'a> {
    fn of(strings: &'a Profile, m: &Mapping) -> Self {
        MappingParts {
            memory_start: m.memory_start,
            memory_limit: m.memory_limit,
            file_offset: m.file_offset,
            filename: strings.string(m.filename),
            build_id: strings.string(m.build_id),
            has_functions: m.has_functions,
            has_filenames: m.has_filenames,
            has_line_numbers: m.has_line_numbers,
            has_inline_frames: m.has_inline_frames,
        }
    }

    fn row(&self) -> MappingRow {
        let MappingParts {
            memory_start,
            memory_limit,
            file_offset,
            filename,
            build_id,
            has_functions,
            has_filenames,
            has_line_numbers,
            has_inline_frames,
        } = *self;
        let id = RowHasher::new(MAPPINGS)
            .uint(memory_start)
            .uint(memory_limit)
            .uint(file_offset)
            .text(filename)
            .text(build_id)
            .flag(has_functions)
            .flag(has_filenames)
            .flag(has_line_numbers)
            .flag(has_inline_frames)
            .finish();
        MappingRow {
            id,
            memory_start,
            memory_limit,
            file_offset,
            filename: filename.into(),
            build_id: build_id.into(),
            has_functions,
            has_filenames,
            has_line_numbers,
            has_inline_frames,
        }
    }
}

impl MappingRow {
    /// The row of pprof mapping `m`, its strings from `strings`.
    pub(crate) fn of(strings: &Profile, m: &Mapping) -> MappingRow {
        MappingParts::of(strings, m).row()
    }

    fn parts(&self) -> MappingParts<'_> {
        MappingParts {
            memory_start: self.memory_start,
            memory_limit: self.memory_limit,
            file_offset: self.file_offset,
            filename: &self.filename,
            build_id: &self.build_id,
            has_functions: self.has_functions,
            has_filenames: self.has_filenames,
            has_line_numbers: self.has_line_numbers,
            has_inline_frames: self.has_inline_frames,
        }
    }
}

/// The rows of one partition of a batch.
#[derive(Default)]
pub(crate) struct PartitionRows {
    pub profiles: Vec<ProfileRow>,
    pub samples: Vec<SampleRow>,
    pub label_sets: HashMap<Id, LabelSet>,
    pub stacks: Vec<(Id, Vec<Id>)>,
    pub locations: Vec<LocationRow>,
    pub functions: Vec<FunctionRow>,
    pub mappings: Vec<MappingRow>,
    seen: HashSet<Id>,
    known: KnownEntries,
}

/// The row ids of the entries added before, by their pprof id, with
/// what each said. Profiles converted from one OTLP message share its
/// dictionary, and each entry keeps its id in every one of them: an entry
/// that says again what its id said before takes the row id made then
/// instead of being hashed again. What it says is compared, so an id
/// that names something else in another profile is hashed anew.
#[derive(Default)]
struct KnownEntries {
    /// Positions in the partition's rows, by pprof id.
    functions: HashMap<u64, usize>,
    mappings: HashMap<u64, usize>,
    locations: HashMap<u64, usize>,
    stacks: HashMap<Vec<Id>, Id>,
}

/// The ids a profile's own ids map to.
struct ProfileIds {
    functions: HashMap<u64, Id>,
    mappings: HashMap<u64, Id>,
    locations: HashMap<u64, Id>,
}

impl PartitionRows {
    /// Adds `p`'s rows; its partition is the caller's. Returns its id
    /// (`context`'s, else made from its rows).
    pub(crate) fn add(
        &mut self,
        p: &Profile,
        mut header: ProfileRow,
        context: &ProfileContext,
    ) -> Result<Id, String> {
        let mut ids = ProfileIds {
            functions: HashMap::new(),
            mappings: HashMap::new(),
            locations: HashMap::new(),
        };
        for f in &p.function {
            let id = self.function(p, f);
            ids.functions.insert(f.id, id);
        }
        for m in &p.mapping {
            let id = self.mapping(p, m);
            ids.mappings.insert(m.id, id);
        }
        header.main_mapping_id = p
            .mapping
            .first()
            .and_then(|m| ids.mappings.get(&m.id).copied());
        for l in &p.location {
            let id = self.location(l, &ids)?;
            ids.locations.insert(l.id, id);
        }
        let (profile, first) = (self.profiles.len(), self.samples.len());
        let time = header.time_unix_nano;
        self.profiles.push(header);
        for (n, s) in p.sample.iter().enumerate() {
            let stack = stack_of(s, &ids.locations).map_err(|e| format!("sample[{n}]: {e}"))?;
            let stack_id = self.stack(stack);
            let row = self.sample(p, s, stack_id, (profile, time, n as i64));
            self.samples.push(row.with_events(context.events_of(n)));
        }
        Ok(self.identify(profile, first, context))
    }

    /// Gives profile `profile` (its samples from `first` on) its id:
    /// `context`'s, else the hash of what its rows say.
    pub(crate) fn identify(
        &mut self,
        profile: usize,
        first: usize,
        context: &ProfileContext,
    ) -> Id {
        let id = match context.profile_id {
            Some(id) if id != [0; 16] => id,
            _ => content_id(&self.profiles[profile], &self.samples[first..], context),
        };
        self.profiles[profile].id = id;
        id
    }

    /// Takes in `other`'s rows (gathered apart, for the same partition):
    /// its dictionary rows not already here, its profiles and samples.
    pub(crate) fn absorb(&mut self, other: PartitionRows) {
        let offset = self.profiles.len();
        self.profiles.extend(other.profiles);
        self.samples.extend(other.samples.into_iter().map(|mut s| {
            s.profile += offset;
            s
        }));
        for (id, labels) in other.label_sets {
            self.label_sets.entry(id).or_insert(labels);
        }
        let seen = &mut self.seen;
        let mut new = |id: &Id| seen.insert(*id);
        self.stacks
            .extend(other.stacks.into_iter().filter(|s| new(&s.0)));
        self.locations
            .extend(other.locations.into_iter().filter(|l| new(&l.id)));
        self.functions
            .extend(other.functions.into_iter().filter(|f| new(&f.id)));
        self.mappings
            .extend(other.mappings.into_iter().filter(|m| new(&m.id)));
    }

    /// Drops the profiles `held` says are stored, and repeats of one
    /// gathered twice, with their samples; how many it dropped (a copy of
    /// a header whose profile is written elsewhere is not counted: that
    /// partition counts it). Their dictionary rows stay: other profiles
    /// may use them.
    pub(crate) fn drop_profiles(&mut self, held: impl Fn(&Id) -> bool) -> usize {
        let mut kept_ids = HashSet::new();
        let kept: Vec<bool> = (self.profiles.iter())
            .map(|p| !held(&p.id) && kept_ids.insert(p.id))
            .collect();
        if kept.iter().all(|k| *k) {
            return 0;
        }
        let dropped = (self.profiles.iter().zip(&kept))
            .filter(|(p, kept)| !**kept && !p.elsewhere)
            .count();
        let mut new_index = Vec::with_capacity(kept.len());
        let mut next = 0;
        for &k in &kept {
            new_index.push(next);
            next += usize::from(k);
        }
        let mut keep = kept.iter();
        self.profiles.retain(|_| keep.next() == Some(&true));
        self.samples.retain_mut(|s| {
            let keep = kept[s.profile];
            s.profile = new_index[s.profile];
            keep
        });
        dropped
    }

    /// The `samples` rows these rows make: one per sample and value.
    pub(crate) fn sample_row_count(&self) -> usize {
        self.samples.iter().map(|s| s.values.len().max(1)).sum()
    }

    /// The profiles whose `profiles` row these rows write.
    pub(crate) fn own_profiles(&self) -> impl Iterator<Item = &ProfileRow> {
        self.profiles.iter().filter(|p| !p.elsewhere)
    }

    fn first_time(&mut self, id: Id) -> bool {
        self.seen.insert(id)
    }

    fn function(&mut self, p: &Profile, f: &Function) -> Id {
        let parts = FunctionParts::of(p, f);
        if let Some(&at) = self.known.functions.get(&f.id) {
            if self.functions[at].parts() == parts {
                return self.functions[at].id;
            }
        }
        let row = parts.row();
        let id = row.id;
        if self.first_time(id) {
            self.known.functions.insert(f.id, self.functions.len());
            self.functions.push(row);
        }
        id
    }

    fn mapping(&mut self, p: &Profile, m: &Mapping) -> Id {
        let parts = MappingParts::of(p, m);
        if let Some(&at) = self.known.mappings.get(&m.id) {
            if self.mappings[at].parts() == parts {
                return self.mappings[at].id;
            }
        }
        let row = parts.row();
        let id = row.id;
        if self.first_time(id) {
            self.known.mappings.insert(m.id, self.mappings.len());
            self.mappings.push(row);
        }
        id
    }

    fn location(&mut self, l: &Location, ids: &ProfileIds) -> Result<Id, String> {
        let mapping_id = match l.mapping_id {
            0 => None,
            m => Some(*ids.mappings.get(&m).ok_or_else(|| {
                format!("location {} names mapping {m}, which does not exist", l.id)
            })?),
        };
        if let Some(&at) = self.known.locations.get(&l.id) {
            if self.locations[at].says(l, mapping_id, ids) {
                return Ok(self.locations[at].id);
            }
        }
        let row = location_row(l, mapping_id, |f| ids.functions.get(&f).copied());
        let id = row.id;
        if self.first_time(id) {
            self.known.locations.insert(l.id, self.locations.len());
            self.locations.push(row);
        }
        Ok(id)
    }

    /// Adds function row `row` unless the partition has it.
    pub(crate) fn take_function(&mut self, row: &FunctionRow) {
        if self.first_time(row.id) {
            self.functions.push(row.clone());
        }
    }

    /// Adds mapping row `row` unless the partition has it.
    pub(crate) fn take_mapping(&mut self, row: &MappingRow) {
        if self.first_time(row.id) {
            self.mappings.push(row.clone());
        }
    }

    /// Adds the stack row `(id, locations)` unless the partition has it;
    /// whether it did.
    pub(crate) fn take_stack(&mut self, id: Id, locations: &[Id]) -> bool {
        let first = self.first_time(id);
        if first {
            self.stacks.push((id, locations.to_vec()));
        }
        first
    }

    /// Adds the location row `row` unless the partition has it; whether
    /// it did.
    pub(crate) fn take_location(&mut self, row: &LocationRow) -> bool {
        let first = self.first_time(row.id);
        if first {
            self.locations.push(row.clone());
        }
        first
    }

    /// The id of the stack of locations `stack` (row ids, leaf first),
    /// its row added the first time.
    pub(crate) fn stack(&mut self, stack: Vec<Id>) -> Id {
        if let Some(&id) = self.known.stacks.get(&stack) {
            return id;
        }
        let id = stack_id(&stack);
        if self.take_stack(id, &stack) {
            self.known.stacks.insert(stack, id);
        }
        id
    }

    /// Sample `s`'s row (its strings in `strings`), its label set added.
    pub(crate) fn sample(
        &mut self,
        strings: &Profile,
        s: &Sample,
        stack_id: Id,
        at: (usize, i64, i64),
    ) -> SampleRow {
        let labels = label_set(strings, s);
        let label_set_id = labels.id();
        self.label_sets.entry(label_set_id).or_insert(labels);
        sample_row(s, stack_id, label_set_id, at)
    }

    /// Sample `s`'s row, its labels the set `labels` (added if new).
    pub(crate) fn sample_labelled(
        &mut self,
        s: &Sample,
        stack_id: Id,
        (label_set_id, labels): (Id, &LabelSet),
        at: (usize, i64, i64),
    ) -> SampleRow {
        (self.label_sets)
            .entry(label_set_id)
            .or_insert_with(|| labels.clone());
        sample_row(s, stack_id, label_set_id, at)
    }
}

impl SampleRow {
    /// The row with `events`, timed by the earliest of them.
    pub(crate) fn with_events(mut self, events: &SampleEvents) -> SampleRow {
        if let Some(earliest) = events.earliest() {
            self.time_unix_nano = earliest;
            self.events = events.clone();
        }
        self
    }
}

/// The row of sample `s` of profile `profile` (starting at `time`), at
/// `index` in it.
fn sample_row(
    s: &Sample,
    stack_id: Id,
    label_set_id: Id,
    (profile, time, index): (usize, i64, i64),
) -> SampleRow {
    SampleRow {
        profile,
        time_unix_nano: time,
        index,
        stack_id,
        values: s.value.clone(),
        label_set_id,
        events: SampleEvents::default(),
    }
}

/// The row id of the stack of locations `stack` (row ids, leaf first).
pub(crate) fn stack_id(stack: &[Id]) -> Id {
    let mut hasher = RowHasher::new(STACKS);
    for l in stack {
        hasher.id(Some(l));
    }
    hasher.finish()
}

/// The row ids of sample `s`'s locations, by `locations`.
pub(crate) fn stack_of(s: &Sample, locations: &HashMap<u64, Id>) -> Result<Vec<Id>, String> {
    s.location_id
        .iter()
        .map(|l| {
            locations
                .get(l)
                .copied()
                .ok_or_else(|| format!("location {l} does not exist"))
        })
        .collect()
}

/// A profile's id made from its rows: its header, its resource, and each
/// sample's stack, values, labels and events. What the rows do not keep
/// (the string table's order, entries no sample reaches) does not change
/// it.
fn content_id(header: &ProfileRow, samples: &[SampleRow], context: &ProfileContext) -> Id {
    let mut hasher = RowHasher::new(PROFILES);
    hasher.text(&header.service_name);
    hasher.uint(context.resource_attributes.len() as u64);
    for (k, v) in &context.resource_attributes {
        hasher.text(k).text(v);
    }
    hasher.int(header.time_unix_nano).int(header.duration_nano);
    hasher.uint(header.sample_types.len() as u64);
    for (t, u) in &header.sample_types {
        hasher.text(t).text(u);
    }
    hasher
        .text(&header.period_type.0)
        .text(&header.period_type.1)
        .int(header.period)
        .text(&header.default_sample_type);
    hasher.uint(header.comments.len() as u64);
    for c in &header.comments {
        hasher.text(c);
    }
    hasher
        .text(&header.drop_frames)
        .text(&header.keep_frames)
        .text(&header.doc_url);
    hasher.uint(samples.len() as u64);
    for s in samples {
        hasher.id(Some(&s.stack_id)).id(Some(&s.label_set_id));
        hasher.uint(s.values.len() as u64);
        for &v in &s.values {
            hasher.int(v);
        }
    }
    hash_events(&mut hasher, samples);
    hasher.finish()
}

/// The samples' events, where any has some: two profiles that differ only
/// in when their events happened are two profiles. A profile without
/// events hashes nothing here, so its id is what it was before events were
/// kept.
fn hash_events(hasher: &mut RowHasher, samples: &[SampleRow]) {
    if samples
        .iter()
        .all(|s| s.events.timestamps_unix_nano.is_empty())
    {
        return;
    }
    hasher.text("events");
    for s in samples {
        hasher
            .ints(&s.events.timestamps_unix_nano)
            .ints(&s.events.values);
    }
}

impl LocationRow {
    /// Whether `l` (its mapping's row id `mapping_id`, its functions' in
    /// `ids`) says what this row says.
    fn says(&self, l: &Location, mapping_id: Option<Id>, ids: &ProfileIds) -> bool {
        let function = |f: u64| match f {
            0 => None,
            f => ids.functions.get(&f).copied(),
        };
        self.mapping_id == mapping_id
            && self.address == l.address
            && self.is_folded == l.is_folded
            && self.lines.len() == l.line.len()
            && (self.lines.iter().zip(&l.line)).all(|(row, given)| {
                let given = LineRow {
                    function_id: function(given.function_id),
                    line: given.line,
                    column: given.column,
                };
                *row == given
            })
    }
}

impl LabelSet {
    /// The content hash of the set: samples with equal labels share it.
    pub(crate) fn id(&self) -> Id {
        let mut hasher = RowHasher::new("label_sets");
        hasher.uint(self.labels.len() as u64);
        for (k, v) in self.labels.iter().chain(&self.repeated) {
            hasher.text(k).text(v);
        }
        hasher.uint(self.numeric.len() as u64);
        for (k, v, unit) in &self.numeric {
            hasher.text(k).int(*v).text(unit);
        }
        hasher.finish()
    }
}

/// A location's row, its mapping's row id `mapping_id` and its lines'
/// functions' by `function` (a pprof function id's row id).
pub(crate) fn location_row(
    l: &Location,
    mapping_id: Option<Id>,
    function: impl Fn(u64) -> Option<Id>,
) -> LocationRow {
    let lines: Vec<LineRow> = l
        .line
        .iter()
        .map(|line| LineRow {
            function_id: match line.function_id {
                0 => None,
                f => function(f),
            },
            line: line.line,
            column: line.column,
        })
        .collect();
    let mut hasher = RowHasher::new(LOCATIONS);
    hasher
        .id(mapping_id.as_ref())
        .uint(l.address)
        .flag(l.is_folded);
    for line in &lines {
        hasher
            .id(line.function_id.as_ref())
            .int(line.line)
            .int(line.column);
    }
    LocationRow {
        id: hasher.finish(),
        mapping_id,
        address: l.address,
        lines,
        is_folded: l.is_folded,
    }
}

/// A sample's labels in the store's terms, each kind sorted (label order
/// in a pprof sample means nothing to pprof).
pub(crate) fn label_set(p: &Profile, s: &Sample) -> LabelSet {
    let mut set = LabelSet::default();
    let mut strings: Vec<(String, String)> = Vec::new();
    for l in &s.label {
        let key = p.string(l.key).to_string();
        if l.str != 0 {
            strings.push((key, p.string(l.str).to_string()));
        } else if l.num != 0 || l.num_unit != 0 {
            set.numeric
                .push((key, l.num, p.string(l.num_unit).to_string()));
        }
    }
    strings.sort();
    let mut keys = HashSet::new();
    for (k, v) in strings {
        match keys.insert(k.clone()) {
            true => set.labels.push((k, v)),
            false => set.repeated.push((k, v)),
        }
    }
    set.numeric.sort();
    set
}

/// What [`PartitionRows::add`] can fail on, checked before it adds any
/// row: every location's mapping and every sample's locations exist.
pub(crate) fn check_references(p: &Profile) -> Result<(), String> {
    let mappings: HashSet<u64> = p.mapping.iter().map(|m| m.id).collect();
    for l in &p.location {
        if l.mapping_id != 0 && !mappings.contains(&l.mapping_id) {
            return Err(format!(
                "location {} names mapping {}, which does not exist",
                l.id, l.mapping_id
            ));
        }
    }
    let locations: HashSet<u64> = p.location.iter().map(|l| l.id).collect();
    check_samples(&locations, &p.sample)
}

/// Every location of every sample is one of `locations`.
pub(crate) fn check_samples(locations: &HashSet<u64>, samples: &[Sample]) -> Result<(), String> {
    for (n, s) in samples.iter().enumerate() {
        if let Some(l) = s.location_id.iter().find(|l| !locations.contains(l)) {
            return Err(format!("sample[{n}]: location {l} does not exist"));
        }
    }
    Ok(())
}

/// Checks that `context` gives events for none of `p`'s samples or for
/// each, and values for none of a sample's events or for each.
pub(crate) fn check_events(p: &Profile, context: &ProfileContext) -> Result<(), String> {
    let events = &context.sample_events;
    if !events.is_empty() && events.len() != p.sample.len() {
        let (given, samples) = (events.len(), p.sample.len());
        return Err(format!("events given for {given} samples of {samples}"));
    }
    for (n, e) in events.iter().enumerate() {
        let (times, values) = (e.timestamps_unix_nano.len(), e.values.len());
        if values != 0 && values != times {
            return Err(format!(
                "sample[{n}]: {values} event values for {times} times"
            ));
        }
    }
    Ok(())
}

/// The header row of `p` (its strings in `strings`), with `context`'s
/// resource; its id is given once its samples are added.
pub(crate) fn profile_row(p: &Profile, strings: &Profile, context: &ProfileContext) -> ProfileRow {
    let s = |i: i64| strings.string(i).to_string();
    let mut resource_columns = vec![None; RESOURCE_COLUMNS.len()];
    let mut resource_attributes = Vec::new();
    for (key, value) in &context.resource_attributes {
        match RESOURCE_COLUMNS.iter().position(|(k, _)| k == key) {
            Some(at) if resource_columns[at].is_none() => {
                resource_columns[at] = Some(value.clone())
            }
            _ => resource_attributes.push((key.clone(), value.clone())),
        }
    }
    let period_type = p
        .period_type
        .as_ref()
        .map_or((String::new(), String::new()), |t| (s(t.type_), s(t.unit)));
    ProfileRow {
        id: [0; 16],
        time_unix_nano: p.time_nanos,
        duration_nano: p.duration_nanos,
        service_name: service_name(context),
        sample_types: p
            .sample_type
            .iter()
            .map(|t| (s(t.type_), s(t.unit)))
            .collect(),
        period_type,
        period: p.period,
        default_sample_type: s(p.default_sample_type),
        comments: p.comment.iter().map(|&c| s(c)).collect(),
        drop_frames: s(p.drop_frames),
        keep_frames: s(p.keep_frames),
        doc_url: s(p.doc_url),
        resource_columns,
        resource_attributes,
        sample_count: p.sample.len() as i64,
        main_mapping_id: None,
        elsewhere: false,
    }
}

/// `service.name`, or OpenTelemetry's `unknown_service`.
pub(crate) fn service_name(context: &ProfileContext) -> String {
    match context.service_name.as_str() {
        "" => "unknown_service".into(),
        name => name.into(),
    }
}

/// The partition of a profile: the hour (UTC) of its start, or of its
/// earliest event when that is before it, and its service; and that time.
pub(crate) fn partition_of(row: &ProfileRow, context: &ProfileContext) -> (Partition, i64) {
    let time = context.partition_time(row.time_unix_nano);
    (Partition::of(time, &row.service_name), time)
}

#[cfg(test)]
mod tests {
    use protoprof_model_pprof::perftools::profiles::{Function, Line, Location, Mapping};

    use crate::test_profiles::{count, profile};
    use crate::{ProfileContext, SampleEvents, Store, StoreWriter};

    /// `profile(value)` whose location 1 is at `address` in function 1,
    /// `name`, of mapping 1, `file`.
    fn named(value: i64, name: &str, address: u64, file: &str) -> super::Profile {
        let mut p = profile(value);
        p.string_table.extend([name.to_string(), file.to_string()]);
        let mut f = Function::new();
        (f.id, f.name) = (1, 3);
        p.function.push(f);
        let mut m = Mapping::new();
        (m.id, m.filename, m.memory_limit) = (1, 4, 1 << 20);
        p.mapping.push(m);
        let mut line = Line::new();
        (line.function_id, line.line) = (1, 7);
        let l: &mut Location = &mut p.location[0];
        (l.mapping_id, l.address) = (1, address);
        l.line.push(line);
        p
    }

    /// `sql`'s answer over `store` as JSON lines.
    fn answer(store: &Store, sql: &str) -> String {
        let mut out = Vec::new();
        let batches = store.sql(sql).unwrap();
        crate::write_answer(&batches, crate::SqlOutput::Json, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_sample_s_events_time_its_row_and_stay_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = profile(5);
        p.sample.push(p.sample[0].clone());
        let start = p.time_nanos;
        let second = 1_000_000_000;
        let events = |times: &[i64], values: &[i64]| SampleEvents {
            timestamps_unix_nano: times.iter().map(|t| start + t * second).collect(),
            values: values.to_vec(),
        };
        let timed = ProfileContext {
            sample_events: vec![events(&[30, 10, 20], &[1, 2, 2]), events(&[], &[])],
            ..Default::default()
        };
        // An event two hours before its profile's start puts the profile
        // in that hour's partition: no row is in a later one than its time.
        let mut early = profile(1);
        early.time_nanos += 1;
        let early_context = ProfileContext {
            sample_events: vec![events(&[-7200], &[])],
            ..Default::default()
        };
        let mut writer = StoreWriter::new(dir.path());
        writer
            .add_all(&[(&p, &timed), (&early, &early_context)])
            .unwrap();
        writer.flush().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let rows = answer(
            &store,
            "SELECT hour, sample_index, time_unix_nano - 1795757400000000000 AS t, \
             timestamps_unix_nano[1] - 1795757400000000000 AS first, \
             cardinality(timestamps_unix_nano) AS times, event_values, value \
             FROM samples ORDER BY time_unix_nano, sample_index",
        );
        let want = [
            r#"{"hour":"03","sample_index":0,"t":-7200000000000,"first":-7200000000000,"times":1,"value":1}"#,
            r#"{"hour":"05","sample_index":1,"t":0,"value":5}"#,
            r#"{"hour":"05","sample_index":0,"t":10000000000,"first":30000000000,"times":3,"event_values":[1,2,2],"value":5}"#,
        ];
        assert_eq!(rows.lines().collect::<Vec<_>>(), want, "{rows}");
        // Events for some samples but not all are refused, naming which.
        let short = ProfileContext {
            sample_events: vec![events(&[1], &[])],
            ..Default::default()
        };
        let refused = writer.add(&p, &short).unwrap_err().to_string();
        assert!(
            refused.contains("events given for 1 samples of 2"),
            "{refused}"
        );
        let unpaired = ProfileContext {
            sample_events: vec![events(&[1, 2], &[3]), events(&[], &[])],
            ..Default::default()
        };
        let refused = writer.add(&p, &unpaired).unwrap_err().to_string();
        assert!(
            refused.contains("sample[0]: 1 event values for 2 times"),
            "{refused}"
        );
    }

    #[test]
    fn profiles_that_differ_only_in_their_events_times_are_two() {
        let dir = tempfile::tempdir().unwrap();
        let p = profile(5);
        let at = |t: i64| ProfileContext {
            sample_events: vec![SampleEvents {
                timestamps_unix_nano: vec![p.time_nanos + t],
                values: vec![],
            }],
            ..Default::default()
        };
        let (first, again, later) = (at(1), at(1), at(2));
        let untimed = ProfileContext::default();
        let mut writer = StoreWriter::new(dir.path());
        let ids = writer
            .add_all(&[(&p, &first), (&p, &again), (&p, &later), (&p, &untimed)])
            .unwrap();
        assert_eq!(ids[0], ids[1], "the same profile, the same id");
        assert_ne!(ids[0], ids[2], "events at other times, another profile");
        // A profile without events keeps the id it had before events were
        // hashed, so that stores written then still know it.
        assert_eq!(crate::hex(&ids[3]), "8112ec56f616a35119ed6b3cbcfc6485");
        writer.flush().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let profiles = answer(&store, "SELECT count(*) AS n FROM profiles");
        assert_eq!(profiles.trim(), r#"{"n":3}"#);
    }

    #[test]
    fn an_id_that_names_another_entry_in_another_profile_is_not_taken_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let context = ProfileContext::default();
        let profiles = [
            named(1, "alpha", 0x10, "a.so"),
            named(2, "alpha", 0x10, "a.so"),
            named(3, "beta", 0x10, "a.so"),
            named(4, "beta", 0x20, "a.so"),
            named(5, "beta", 0x20, "b.so"),
        ];
        let mut writer = StoreWriter::new(dir.path());
        let each: Vec<_> = profiles.iter().map(|p| (p, &context)).collect();
        let ids = writer.add_all(&each).unwrap();
        writer.flush().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for (given, id) in profiles.iter().zip(&ids) {
            let back = store.get(*id).unwrap().profile;
            let s = |i: i64| back.string_table[i as usize].clone();
            let l = &back.location[0];
            let f = back.function.iter().find(|f| f.id == l.line[0].function_id);
            let m = back.mapping.iter().find(|m| m.id == l.mapping_id);
            let seen = (s(f.unwrap().name), l.address, s(m.unwrap().filename));
            let want = (
                given.string_table[3].clone(),
                given.location[0].address,
                given.string_table[4].clone(),
            );
            assert_eq!(seen, want);
        }
        let count = |table: &str| count(&store, table);
        assert_eq!((count("functions"), count("mappings")), (2, 2));
        assert_eq!((count("locations"), count("stacks")), (4, 4));
    }
}
