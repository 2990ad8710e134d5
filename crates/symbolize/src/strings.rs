//! A string table's index, so that symbolization adds each string once,
//! whichever table (a pprof profile's, an OTLP dictionary's) it writes.

use std::collections::HashMap;

/// Where each string of a table is (its first position).
pub(crate) struct StringIndex(HashMap<String, usize>);

impl StringIndex {
    /// The index of `table` as it is.
    pub(crate) fn of(table: &[String]) -> StringIndex {
        let mut index = HashMap::with_capacity(table.len());
        for (i, s) in table.iter().enumerate() {
            index.entry(s.clone()).or_insert(i);
        }
        StringIndex(index)
    }

    /// The position of `s` in `table`, appended when it is not there.
    pub(crate) fn position(&mut self, table: &mut Vec<String>, s: &str) -> usize {
        if let Some(&at) = self.0.get(s) {
            return at;
        }
        table.push(s.to_string());
        self.0.insert(s.to_string(), table.len() - 1);
        table.len() - 1
    }
}
