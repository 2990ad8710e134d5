//! Row ids: the first 16 bytes of the SHA-256 of what the row says, each
//! field written with its length, so that files written apart join on ids
//! without remapping. A cryptographic hash, since profiles come from
//! untrusted exporters: no one can make a function collide with another's
//! to poison a store.

use sha2::{Digest, Sha256};

/// A row's 16-byte id.
pub type Id = [u8; 16];

/// Hashes the fields of one row, each unambiguously delimited.
#[derive(Default)]
pub(crate) struct RowHasher(Sha256);

impl RowHasher {
    /// A hasher for rows of `table`: ids of different tables never meet.
    pub(crate) fn new(table: &str) -> Self {
        let mut hasher = RowHasher(Sha256::new());
        hasher.text(table);
        hasher
    }

    pub(crate) fn text(&mut self, text: &str) -> &mut Self {
        self.bytes(text.as_bytes())
    }

    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    pub(crate) fn int(&mut self, value: i64) -> &mut Self {
        self.0.update(value.to_le_bytes());
        self
    }

    pub(crate) fn uint(&mut self, value: u64) -> &mut Self {
        self.0.update(value.to_le_bytes());
        self
    }

    /// A list of integers: its length, then each, as [`Self::int`] hashes
    /// them (a few dozen at a time, not one update each).
    pub(crate) fn ints(&mut self, values: &[i64]) -> &mut Self {
        self.uint(values.len() as u64);
        let mut bytes = [0; 8 * 64];
        for chunk in values.chunks(64) {
            for (to, v) in bytes.chunks_exact_mut(8).zip(chunk) {
                to.copy_from_slice(&v.to_le_bytes());
            }
            self.0.update(&bytes[..8 * chunk.len()]);
        }
        self
    }

    pub(crate) fn flag(&mut self, value: bool) -> &mut Self {
        self.0.update([u8::from(value)]);
        self
    }

    pub(crate) fn id(&mut self, id: Option<&Id>) -> &mut Self {
        match id {
            Some(id) => {
                self.0.update([1]);
                self.0.update(id);
            }
            None => self.0.update([0]),
        }
        self
    }

    pub(crate) fn finish(&mut self) -> Id {
        let digest = std::mem::take(&mut self.0).finalize();
        let mut id = [0; 16];
        id.copy_from_slice(&digest[..16]);
        id
    }
}

/// An id as 32 lowercase hex digits, as `store get --profile-id` takes it.
pub fn hex(id: &Id) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// An id from 32 hex digits.
pub fn parse_hex(text: &str) -> Option<Id> {
    let text = text.trim();
    if text.len() != 32 || !text.is_ascii() {
        return None;
    }
    let mut id = [0; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_differ_by_field_boundaries_and_table() {
        let a = RowHasher::new("functions").text("ab").text("c").finish();
        let b = RowHasher::new("functions").text("a").text("bc").finish();
        let c = RowHasher::new("mappings").text("ab").text("c").finish();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, RowHasher::new("functions").text("ab").text("c").finish());
        assert_eq!(parse_hex(&hex(&a)), Some(a));
        // A list hashes as its length and each value.
        let values: Vec<i64> = (0..200).map(|v| v * 7 - 300).collect();
        let mut each = RowHasher::new("t");
        each.uint(values.len() as u64);
        for &v in &values {
            each.int(v);
        }
        assert_eq!(RowHasher::new("t").ints(&values).finish(), each.finish());
        assert_eq!(parse_hex("zz"), None);
    }
}
