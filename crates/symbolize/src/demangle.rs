//! Names as pprof shows them: C++ (Itanium) and Rust symbols demangled,
//! by default without parameters and template arguments.

use serde::Serialize;

/// How names are demangled, as pprof's `demangle=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum Demangle {
    /// Simplified: no parameters, no template arguments.
    #[default]
    Default,
    /// Demangled whole.
    Full,
    /// Demangled with template arguments, without parameters.
    Templates,
    /// Kept as the binary has them.
    None,
}

impl Demangle {
    /// `none`, `full`, `templates` or `default`.
    pub fn parse(text: &str) -> Result<Demangle, String> {
        Ok(match text {
            "default" => Demangle::Default,
            "full" => Demangle::Full,
            "templates" => Demangle::Templates,
            "none" => Demangle::None,
            other => {
                return Err(format!(
                    "demangle={other}: none, full, templates or default"
                ))
            }
        })
    }

    /// `raw` demangled as this mode shows it, when it is a mangled C++ or
    /// Rust name (`None` otherwise, and with `none`).
    pub fn mangled(self, raw: &str) -> Option<String> {
        (self != Demangle::None)
            .then(|| demangled(raw, self == Demangle::Full))
            .flatten()
            .map(|name| self.shaped(name))
    }

    /// `raw` as this mode shows it.
    pub fn name(self, raw: &str) -> String {
        if self == Demangle::None {
            return raw.to_string();
        }
        let whole = self == Demangle::Full;
        self.shaped(demangled(raw, whole).unwrap_or_else(|| raw.to_string()))
    }

    /// A demangled name cut as this mode shows it.
    fn shaped(self, name: String) -> String {
        match self {
            // pprof's full demangling leaves out GCC's clone suffixes.
            Demangle::Full => without_clone_suffixes(&name),
            Demangle::None => name,
            Demangle::Templates => without_parameters(&name),
            Demangle::Default => without_templates(&without_parameters(&name)),
        }
    }
}

/// The symbol demangled, when it is a Rust or C++ one; unless `whole`,
/// without a C++ function's parameters and return type.
fn demangled(raw: &str, whole: bool) -> Option<String> {
    if let Ok(rust) = rustc_demangle::try_demangle(raw) {
        // `{:#}` leaves out the hash suffix.
        return Some(format!("{rust:#}"));
    }
    if !raw.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(raw).ok()?;
    let options = match whole {
        true => cpp_demangle::DemangleOptions::new(),
        false => cpp_demangle::DemangleOptions::new()
            .no_params()
            .no_return_type(),
    };
    symbol.demangle_with_options(&options).ok()
}

/// `f(long) [clone .isra.0] [clone .cold]` → `f(long)`: the clone
/// suffixes the C++ demangler prints, which Go's demangler leaves out with
/// its `NoClones`.
fn without_clone_suffixes(name: &str) -> String {
    let mut name = name;
    while let Some(at) = name.rfind(" [clone ").filter(|_| name.ends_with(']')) {
        name = &name[..at];
    }
    name.to_string()
}

/// `ns::f(int, char) const` → `ns::f`: the outermost parenthesised list at
/// the end, and what follows it, removed (an `(anonymous namespace)` inside
/// the name stays).
fn without_parameters(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut depth = 0i32;
    let mut cut = None;
    for (i, &b) in bytes.iter().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    cut = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    match cut {
        Some(at) if at > 0 && !name[at..].starts_with("(anonymous") => name[..at].to_string(),
        _ => name.to_string(),
    }
}

/// `std::vector<int>::push_back` → `std::vector::push_back`: every
/// `<…>` removed (`operator<` and `operator<<` kept).
fn without_templates(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    let mut chars = name.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let operator = name[..i].ends_with("operator");
        match c {
            '<' if operator => {
                out.push(c);
                if let Some((_, '<' | '=')) = chars.peek() {
                    out.push(chars.next().expect("peeked").1);
                }
            }
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_shows_what_pprof_shows() {
        let cpp = "_ZN2ns6vectorIiE4pushERKi";
        // A function template's return type goes with its parameters.
        let template = "_ZN6shapes4areaIdEET_S1_";
        assert_eq!(
            Demangle::Full.name(template),
            "double shapes::area<double>(double)"
        );
        assert_eq!(Demangle::Templates.name(template), "shapes::area<double>");
        assert_eq!(Demangle::Default.name(template), "shapes::area");
        assert_eq!(Demangle::None.name(cpp), cpp);
        assert_eq!(
            Demangle::Full.name(cpp),
            "ns::vector<int>::push(int const&)"
        );
        assert_eq!(Demangle::Templates.name(cpp), "ns::vector<int>::push");
        assert_eq!(
            Demangle::Full.name("_ZN4calc6Worker3runEl.isra.0"),
            "calc::Worker::run(long)"
        );
        assert_eq!(Demangle::Default.name(cpp), "ns::vector::push");
        let rust = "_ZN4core3fmt5write17h0123456789abcdefE";
        assert_eq!(Demangle::Default.name(rust), "core::fmt::write");
        assert_eq!(Demangle::Default.name("main"), "main");
        assert_eq!(without_templates("operator<<"), "operator<<");
        assert_eq!(
            without_parameters("(anonymous namespace)::f()"),
            "(anonymous namespace)::f"
        );
        assert!(Demangle::parse("odd").is_err());
    }
}
