//! The dictionary entries one profile's samples reach: its stacks'
//! locations, their mappings and their lines' functions. A profile
//! converted on its own (`convert --split`, a profile store's rows) keeps
//! those and pprof's main binary (the first mapping) and leaves out the
//! rest of the dictionary its message shares, as pprof's `Compact` does.
//! An eBPF export shares one dictionary among a thousand profiles of a few
//! samples each: converting all of it for each made splitting quadratic.

use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

use crate::development::source::DevelopmentSource;

/// Which mapping, location and function entries to convert, by index.
pub(crate) struct UsedEntries {
    mappings: Vec<bool>,
    locations: Vec<bool>,
    functions: Vec<bool>,
}

impl UsedEntries {
    /// The entries the samples of profile `profile` in `source` reach.
    /// Indices out of range are passed over: converting the samples
    /// reports them where they are.
    pub(crate) fn of(
        d: &dev::ProfilesDictionary,
        source: &DevelopmentSource,
        profile: usize,
    ) -> Self {
        let mut used = UsedEntries {
            mappings: vec![false; d.mapping_table.len()],
            locations: vec![false; d.location_table.len()],
            functions: vec![false; d.function_table.len()],
        };
        // pprof's first mapping is the main binary; `top` names it.
        mark(&mut used.mappings, 1);
        let mut stacks = vec![false; source.entry_count()];
        let (mut sample, mut stack) = (dev::Sample::new(), dev::Stack::new());
        for i in 0..source.sample_count(profile) {
            let s = source.sample(profile, i, &mut sample);
            let Ok(index) = usize::try_from(s.stack_index) else {
                continue;
            };
            if index >= stacks.len() || std::mem::replace(&mut stacks[index], true) {
                continue;
            }
            for &l in &source.entry(index, &mut stack).location_indices {
                used.location(d, l);
            }
        }
        used
    }

    fn location(&mut self, d: &dev::ProfilesDictionary, index: i32) {
        if !mark(&mut self.locations, index) {
            return;
        }
        let l = &d.location_table[index as usize];
        mark(&mut self.mappings, l.mapping_index);
        for line in &l.lines {
            mark(&mut self.functions, line.function_index);
        }
    }

    pub(crate) fn mapping(&self, index: usize) -> bool {
        self.mappings.get(index).copied().unwrap_or(false)
    }

    pub(crate) fn location_entry(&self, index: usize) -> bool {
        self.locations.get(index).copied().unwrap_or(false)
    }

    pub(crate) fn function(&self, index: usize) -> bool {
        self.functions.get(index).copied().unwrap_or(false)
    }
}

/// Marks `index` in `table` when it is in range and not 0 ("unset");
/// whether it was newly marked.
fn mark(table: &mut [bool], index: i32) -> bool {
    match usize::try_from(index) {
        Ok(i) if i > 0 && i < table.len() => !std::mem::replace(&mut table[i], true),
        _ => false,
    }
}
