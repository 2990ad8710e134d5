//! String-table lookups. pprof and OTLP profiles keep every string once, in
//! a `string_table`, and refer to it by index; index 0 is the empty string.
//! Every layer looks strings up the same way: through [`StringTable`], which
//! the generated models implement for each message holding a string table.

/// A table of strings addressed by index.
pub trait StringTable {
    /// The strings, in table order.
    fn strings(&self) -> &[String];

    /// The string at `index`; `None` when the index is negative or past the
    /// end (a broken reference, which validation reports).
    #[inline]
    fn string_at(&self, index: i64) -> Option<&str> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strings().get(i))
            .map(String::as_str)
    }

    /// The string at `index`, or `""` when there is none: for display and
    /// conversion, where a broken reference reads as an unset one.
    #[inline]
    fn string(&self, index: i64) -> &str {
        self.string_at(index).unwrap_or("")
    }
}

impl StringTable for [String] {
    #[inline]
    fn strings(&self) -> &[String] {
        self
    }
}

impl StringTable for Vec<String> {
    #[inline]
    fn strings(&self) -> &[String] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_and_negative_indices_are_none() {
        let table = vec![String::new(), "main".to_string()];
        assert_eq!(table.string_at(1), Some("main"));
        assert_eq!(table.string_at(2), None);
        assert_eq!(table.string_at(-1), None);
        assert_eq!(table.string(2), "");
        assert_eq!(table.as_slice().string(1), "main");
    }
}
