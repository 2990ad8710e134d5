//! A binary's symbol table as `llvm-symbolizer` reads it to name the
//! outermost frame at an address (its `--use-symbol-table`, on by
//! default): functions and data of `.symtab`, else of `.dynsym`; of the
//! symbols at one address the largest, then the last in the table (LLVM
//! sorts them stably by address and size alone: `libc.so.6`'s `malloc`
//! is `__libc_malloc`, which comes after it in `.dynsym`). So a
//! stripped `libc.so.6` names `__libc_start_main` what its DWARF calls
//! `__libc_start_main_impl`, as pprof (through `llvm-symbolizer`) does.

use object::{Object, ObjectSymbol, SymbolKind};

/// Symbols by address: (address, size, name), one per address.
#[derive(Debug, Clone, Default)]
pub(crate) struct SymbolTable(Vec<(u64, u64, String)>);

impl SymbolTable {
    /// The symbols of the object file `data`; empty when it is not one.
    pub(crate) fn read(data: &[u8]) -> SymbolTable {
        let symbols = by_address(data);
        SymbolTable(
            symbols
                .into_iter()
                .map(|(a, s, n)| (a, s, n.to_string()))
                .collect(),
        )
    }

    /// The symbols of `data` that [`SymbolTable::name_at`] reads for
    /// `addresses` (each one's last symbol at or before it): what a large
    /// binary's table is read for, without keeping all of its names.
    pub(crate) fn read_for(data: &[u8], addresses: &[u64]) -> SymbolTable {
        let symbols = by_address(data);
        let mut kept: Vec<usize> = (addresses.iter())
            .filter_map(|&a| symbols.partition_point(|(s, ..)| *s <= a).checked_sub(1))
            .collect();
        kept.sort_unstable();
        kept.dedup();
        let owned = kept.into_iter().map(|i| {
            let (a, s, n) = symbols[i];
            (a, s, n.to_string())
        });
        SymbolTable(owned.collect())
    }

    /// The name of the symbol holding `address`: the last at or before
    /// it, unless its size says it ends before.
    pub(crate) fn name_at(&self, address: u64) -> Option<&str> {
        let after = self.0.partition_point(|(a, ..)| *a <= address);
        let (start, size, name) = self.0.get(after.checked_sub(1)?)?;
        let ends_before = *size != 0 && start.saturating_add(*size) <= address;
        (!ends_before).then_some(name.as_str())
    }
}

/// The functions and data of `.symtab` (else `.dynsym`), by address, one
/// per address: the largest, then the last in the table.
fn by_address(data: &[u8]) -> Vec<(u64, u64, &str)> {
    let Ok(file) = object::File::parse(data) else {
        return Vec::new();
    };
    fn named<'data>(s: &object::Symbol<'data, '_>) -> Option<(u64, u64, &'data str)> {
        let kind = matches!(s.kind(), SymbolKind::Text | SymbolKind::Data);
        let name = s.name().ok().filter(|n| !n.is_empty())?;
        (kind && s.is_definition()).then_some((s.address(), s.size(), name))
    }
    let mut symbols: Vec<(u64, u64, &str)> = file.symbols().filter_map(|s| named(&s)).collect();
    if symbols.is_empty() {
        symbols = file.dynamic_symbols().filter_map(|s| named(&s)).collect();
    }
    symbols.sort_by_key(|&(address, size, _)| (address, size));
    let mut kept: Vec<(u64, u64, &str)> = Vec::with_capacity(symbols.len());
    for symbol in symbols {
        match kept.last_mut() {
            Some(last) if last.0 == symbol.0 => *last = symbol,
            _ => kept.push(symbol),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_symbol_holding_an_address_names_it() {
        let table = SymbolTable(vec![(0x10, 0x10, "a".into()), (0x30, 0, "b".into())]);
        assert_eq!(table.name_at(0x0f), None);
        assert_eq!(table.name_at(0x10), Some("a"));
        assert_eq!(table.name_at(0x1f), Some("a"));
        assert_eq!(table.name_at(0x20), None);
        assert_eq!(table.name_at(0x1000), Some("b"));
    }

    #[test]
    fn a_table_read_for_addresses_names_them_as_the_whole_table_does() {
        let data = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let whole = SymbolTable::read(&data);
        assert!(whole.0.len() > 100, "{} symbols", whole.0.len());
        // Symbol starts, addresses inside and between symbols, and beyond.
        let mut addresses: Vec<u64> = (whole.0.iter().step_by(7))
            .flat_map(|(a, s, _)| [a.saturating_sub(1), *a, a + s / 2, a + s, a + s + 1])
            .collect();
        addresses.extend([0, u64::MAX]);
        let some = SymbolTable::read_for(&data, &addresses);
        assert!(some.0.len() < whole.0.len());
        for a in addresses {
            assert_eq!(some.name_at(a), whole.name_at(a), "{a:#x}");
        }
    }
}
