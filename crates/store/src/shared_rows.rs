//! Rows of profiles that share one dictionary (the profiles of one OTLP
//! message, converted together): each dictionary entry's row is made once
//! for all of them, the first time a sample reaches it, and added to each
//! partition whose samples reach it. The rows are those each profile
//! converted alone makes: the entries its samples reach, and the first
//! mapping (pprof's main binary).

use foldhash::{HashMap, HashMapExt};

use protoprof_model_pprof::perftools::profiles::{Profile, Sample};

use crate::ids::Id;
use crate::rows::{
    label_set, location_row, stack_id, FunctionRow, LabelSet, LocationRow, MappingRow,
    PartitionRows, ProfileContext, ProfileRow,
};

/// A dictionary's rows, made as samples reach its entries.
pub(crate) struct SharedEntries<'d> {
    dictionary: &'d Profile,
    /// Each entry's position in its table, by pprof id.
    function_at: HashMap<u64, usize>,
    mapping_at: HashMap<u64, usize>,
    location_at: HashMap<u64, usize>,
    /// Rows made, by pprof id.
    functions: HashMap<u64, FunctionRow>,
    mappings: HashMap<u64, MappingRow>,
    locations: HashMap<u64, LocationRow>,
    /// Each stack (pprof location ids, leaf first): its id and its
    /// locations' row ids.
    stacks: HashMap<Vec<u64>, (Id, Vec<Id>)>,
    /// Each list of labels (key, value, number, unit: indices into the
    /// shared strings) as a label set and its id: an eBPF export's
    /// thousands of samples have a few hundred.
    label_sets: HashMap<Vec<[i64; 4]>, (Id, LabelSet)>,
}

impl<'d> SharedEntries<'d> {
    /// The rows of `dictionary`'s entries, none made yet. Its locations'
    /// mappings, and the locations of the samples to add, must have been
    /// checked.
    pub(crate) fn new(dictionary: &'d Profile) -> Self {
        let positions =
            |ids: &mut dyn Iterator<Item = u64>| ids.enumerate().map(|(at, id)| (id, at)).collect();
        SharedEntries {
            dictionary,
            function_at: positions(&mut dictionary.function.iter().map(|f| f.id)),
            mapping_at: positions(&mut dictionary.mapping.iter().map(|m| m.id)),
            location_at: positions(&mut dictionary.location.iter().map(|l| l.id)),
            functions: HashMap::new(),
            mappings: HashMap::new(),
            locations: HashMap::new(),
            stacks: HashMap::new(),
            label_sets: HashMap::new(),
        }
    }

    /// Sample `s`'s label set and its id.
    fn label_set(&mut self, s: &Sample) -> (Id, &LabelSet) {
        let key: Vec<[i64; 4]> = (s.label.iter())
            .map(|l| [l.key, l.str, l.num, l.num_unit])
            .collect();
        let dictionary = self.dictionary;
        let (id, set) = self.label_sets.entry(key).or_insert_with(|| {
            let set = label_set(dictionary, s);
            (set.id(), set)
        });
        (*id, set)
    }

    fn function(&mut self, id: u64) -> Option<&FunctionRow> {
        let dictionary = self.dictionary;
        let f = &dictionary.function[*self.function_at.get(&id)?];
        let row = (self.functions.entry(id)).or_insert_with(|| FunctionRow::of(dictionary, f));
        Some(row)
    }

    fn mapping(&mut self, id: u64) -> Option<&MappingRow> {
        let dictionary = self.dictionary;
        let m = &dictionary.mapping[*self.mapping_at.get(&id)?];
        let row = (self.mappings.entry(id)).or_insert_with(|| MappingRow::of(dictionary, m));
        Some(row)
    }

    /// The row of location `id` (which exists).
    fn location(&mut self, id: u64) -> &LocationRow {
        if !self.locations.contains_key(&id) {
            let dictionary = self.dictionary;
            let l = &dictionary.location[self.location_at[&id]];
            let mapping_id = match l.mapping_id {
                0 => None,
                m => self.mapping(m).map(|row| row.id),
            };
            for line in &l.line {
                self.function(line.function_id);
            }
            let functions = &self.functions;
            let row = location_row(l, mapping_id, |f| functions.get(&f).map(|r| r.id));
            self.locations.insert(id, row);
        }
        &self.locations[&id]
    }

    /// The id of the stack of pprof locations `ids`, and its locations'
    /// row ids.
    fn stack(&mut self, ids: &[u64]) -> (Id, &[Id]) {
        if !self.stacks.contains_key(ids) {
            let rows: Vec<Id> = ids.iter().map(|&l| self.location(l).id).collect();
            self.stacks.insert(ids.to_vec(), (stack_id(&rows), rows));
        }
        let (id, rows) = &self.stacks[ids];
        (*id, rows)
    }

    /// Adds location `id`'s row to `rows` unless it is there, with its
    /// mapping's and its functions'.
    fn add_location_to(&mut self, id: u64, rows: &mut PartitionRows) {
        let row = self.location(id).clone();
        if !rows.take_location(&row) {
            return;
        }
        let dictionary = self.dictionary;
        let l = &dictionary.location[self.location_at[&id]];
        if let Some(mapping) = self.mapping(l.mapping_id) {
            rows.take_mapping(mapping);
        }
        for line in &l.line {
            if let Some(function) = self.function(line.function_id) {
                rows.take_function(function);
            }
        }
    }
}

impl PartitionRows {
    /// Adds the rows of `part`, a profile whose dictionary and strings
    /// are `shared`'s; its partition is the caller's. Returns its id.
    pub(crate) fn add_shared(
        &mut self,
        shared: &mut SharedEntries,
        part: &Profile,
        mut header: ProfileRow,
        context: &ProfileContext,
    ) -> Id {
        // pprof's first mapping is the main binary, in every profile.
        if let Some(main) = shared.dictionary.mapping.first() {
            let row = shared.mapping(main.id).expect("the first mapping");
            self.take_mapping(row);
            header.main_mapping_id = Some(row.id);
        }
        let (profile, first) = (self.profiles.len(), self.samples.len());
        let time = header.time_unix_nano;
        self.profiles.push(header);
        self.samples.reserve(part.sample.len());
        for (n, s) in part.sample.iter().enumerate() {
            let (stack_id, locations) = shared.stack(&s.location_id);
            if self.take_stack(stack_id, locations) {
                for &l in &s.location_id {
                    shared.add_location_to(l, self);
                }
            }
            let labels = shared.label_set(s);
            let row = self.sample_labelled(s, stack_id, labels, (profile, time, n as i64));
            self.samples.push(row.with_events(context.events_of(n)));
        }
        self.identify(profile, first, context)
    }
}
