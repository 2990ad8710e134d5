//! A binary's symbol table as `llvm-symbolizer` reads it to name the
//! outermost frame at an address (its `--use-symbol-table`, on by
//! default): functions and data of `.symtab`, else of `.dynsym`; of the
//! symbols at one address the largest, then the last by name. So a
//! stripped `libc.so.6` names `__libc_start_main` what its DWARF calls
//! `__libc_start_main_impl`, as pprof (through `llvm-symbolizer`) does.

use object::{Object, ObjectSymbol, SymbolKind};

/// Symbols by address: (address, size, name), one per address.
#[derive(Debug, Clone, Default)]
pub(crate) struct SymbolTable(Vec<(u64, u64, String)>);

impl SymbolTable {
    /// The symbols of the object file `data`; empty when it is not one.
    pub(crate) fn read(data: &[u8]) -> SymbolTable {
        let Ok(file) = object::File::parse(data) else {
            return SymbolTable::default();
        };
        let named = |s: &object::Symbol<'_, '_>| {
            let kind = matches!(s.kind(), SymbolKind::Text | SymbolKind::Data);
            let name = s.name().ok().filter(|n| !n.is_empty())?;
            (kind && s.is_definition()).then(|| (s.address(), s.size(), name.to_string()))
        };
        let mut symbols: Vec<(u64, u64, String)> =
            file.symbols().filter_map(|s| named(&s)).collect();
        if symbols.is_empty() {
            symbols = file.dynamic_symbols().filter_map(|s| named(&s)).collect();
        }
        symbols.sort();
        // Of the symbols at one address, the last: the largest, then the
        // last by name.
        let mut kept: Vec<(u64, u64, String)> = Vec::with_capacity(symbols.len());
        for symbol in symbols {
            match kept.last_mut() {
                Some(last) if last.0 == symbol.0 => *last = symbol,
                _ => kept.push(symbol),
            }
        }
        SymbolTable(kept)
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
}
