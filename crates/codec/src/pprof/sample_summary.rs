//! What a pprof view finds about its samples while it checks them, when
//! asked to ([`crate::DecodeOptions::sample_summary`]): facts that spare a
//! reader a pass over every sample. Validation looks each location id up
//! and counts each sample's values; when every id between the smallest and
//! the largest names a location, and every sample has as many values as
//! there are sample types, it need do neither.

use std::ops::RangeInclusive;

/// The bounds of the location ids seen, the number of values every
/// sample seen has, and whether any sample's fields are out of order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SampleSummary {
    smallest_id: u64,
    largest_id: u64,
    values: ValueCounts,
    /// A sample has a field after one with a larger number (noted even
    /// when ids and values are not summed up: it costs a comparison).
    out_of_order: bool,
}

/// The value counts of the samples seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ValueCounts {
    NoSample,
    Each(usize),
    Differ,
}

impl Default for SampleSummary {
    /// The summary of no sample.
    fn default() -> Self {
        SampleSummary {
            smallest_id: u64::MAX,
            largest_id: 0,
            values: ValueCounts::NoSample,
            out_of_order: false,
        }
    }
}

impl SampleSummary {
    /// Adds a location id.
    #[inline]
    pub fn note_id(&mut self, id: u64) {
        self.smallest_id = self.smallest_id.min(id);
        self.largest_id = self.largest_id.max(id);
    }

    /// Adds a sample with `count` values.
    #[inline]
    pub fn note_value_count(&mut self, count: usize) {
        self.values = self.values.join(ValueCounts::Each(count));
    }

    /// Adds a field numbered `number` that follows one numbered `previous`
    /// (0 for the first) in its sample.
    #[inline]
    pub fn note_field(&mut self, previous: u32, number: u32) {
        self.out_of_order |= number < previous;
    }

    /// Whether every sample seen has its fields in number order, so that
    /// each field's occurrences lie side by side and none follows a field
    /// with a larger number.
    pub fn fields_in_order(self) -> bool {
        !self.out_of_order
    }

    /// The summary of the samples of both.
    #[must_use]
    pub fn join(self, other: SampleSummary) -> SampleSummary {
        SampleSummary {
            smallest_id: self.smallest_id.min(other.smallest_id),
            largest_id: self.largest_id.max(other.largest_id),
            values: self.values.join(other.values),
            out_of_order: self.out_of_order || other.out_of_order,
        }
    }

    /// The ids from the smallest to the largest (empty when none was seen).
    pub fn id_range(self) -> RangeInclusive<u64> {
        self.smallest_id..=self.largest_id
    }

    /// The number of values of every sample, when they all have the same.
    pub fn common_value_count(self) -> Option<usize> {
        match self.values {
            ValueCounts::Each(count) => Some(count),
            ValueCounts::NoSample | ValueCounts::Differ => None,
        }
    }
}

impl ValueCounts {
    fn join(self, other: ValueCounts) -> ValueCounts {
        match (self, other) {
            (ValueCounts::NoSample, counts) | (counts, ValueCounts::NoSample) => counts,
            (ValueCounts::Each(a), ValueCounts::Each(b)) if a == b => self,
            _ => ValueCounts::Differ,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_in_either_order_to_the_summary_of_all() {
        let of = |ids: &[u64], counts: &[usize]| {
            let mut summary = SampleSummary::default();
            ids.iter().for_each(|&id| summary.note_id(id));
            counts
                .iter()
                .for_each(|&count| summary.note_value_count(count));
            summary
        };
        let (first, second) = (of(&[5, 3], &[2, 2]), of(&[9], &[2]));
        for joined in [first.join(second), second.join(first)] {
            assert_eq!(joined, of(&[5, 3, 9], &[2, 2, 2]));
            assert_eq!(
                (joined.id_range(), joined.common_value_count()),
                (3..=9, Some(2))
            );
        }
        let none = SampleSummary::default();
        assert!(none.id_range().is_empty());
        assert_eq!(none.common_value_count(), None);
        assert_eq!(first.join(none), first);
        assert_eq!(first.join(of(&[], &[3])).common_value_count(), None);
        assert_eq!(of(&[], &[1, 1, 0]).common_value_count(), None);
    }

    #[test]
    fn fields_are_in_order_until_one_follows_a_larger_number() {
        let of = |numbers: &[u32]| {
            let mut summary = SampleSummary::default();
            let mut previous = 0;
            for &number in numbers {
                summary.note_field(previous, number);
                previous = number;
            }
            summary
        };
        let ordered = of(&[1, 2, 2, 3, 3]);
        assert!(ordered.fields_in_order());
        assert!(!of(&[1, 3, 2]).fields_in_order());
        assert!(!of(&[3, 1]).fields_in_order());
        assert!(!ordered.join(of(&[2, 1])).fields_in_order());
        assert!(!of(&[2, 1]).join(ordered).fields_in_order());
    }
}
