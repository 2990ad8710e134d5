//! A pprof string table that grows as conversion needs new strings.

use foldhash::{HashMap, HashMapExt};

use protoprof_model_meta::StringTable;

/// A string table and the position of each string in it; new strings are
/// appended, existing ones keep their index.
#[derive(Default)]
pub(crate) struct StringInterner {
    pub table: Vec<String>,
    index: HashMap<String, i64>,
    /// An index other than 0 holding "", once one is needed.
    empty_label_value: Option<i64>,
}

impl StringInterner {
    /// Starts from an existing table (the first index of a repeated string wins).
    pub fn new(table: Vec<String>) -> Self {
        let mut index = HashMap::with_capacity(table.len());
        for (i, s) in table.iter().enumerate() {
            index.entry(s.clone()).or_insert(i as i64);
        }
        StringInterner {
            table,
            index,
            empty_label_value: None,
        }
    }

    /// The index of `s`, appended when new.
    pub fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.table.push(s.to_string());
        let i = self.table.len() as i64 - 1;
        self.index.insert(s.to_string(), i);
        i
    }

    /// The index of a string label's value `s`. An empty value gets an
    /// index other than 0 holding "" (appended once, on first use): `str` 0
    /// means "not a string label", and Go reads the label as numeric.
    pub fn intern_label_value(&mut self, s: &str) -> i64 {
        if !s.is_empty() {
            return self.intern(s);
        }
        if let Some(i) = self.empty_label_value {
            return i;
        }
        let i = match self.table.iter().skip(1).position(String::is_empty) {
            Some(i) => i + 1,
            None => {
                self.table.push(String::new());
                self.table.len() - 1
            }
        };
        self.empty_label_value = Some(i as i64);
        i as i64
    }
}

impl StringTable for StringInterner {
    fn strings(&self) -> &[String] {
        &self.table
    }
}
