//! The names pprof reports functions by: what its symbolizer makes of a
//! function's names before any report (`demangleSingleFunction` with its
//! default, simplified mode). A name given apart from the system name
//! stays; otherwise the system name is the name, and when it looks like
//! demangled C++ or Rust (`::`, `<>`, `[]`), its parameters `(…)` and
//! template arguments `<…>` are removed: `<hyper::Server<T> as
//! Future>::poll` is reported as `::poll`, as `go tool pprof` reports it.
//! Mangled names (`_Z…`, `_R…`) stay mangled: pprof would demangle them.

use std::borrow::Cow;

use protoprof_model_meta::StringTable;
use protoprof_model_pprof::perftools::profiles::{Function, Profile};
use regex::Regex;

/// The name pprof reports `function` by; with `as_given` (pprof's
/// `-symbolize=none`, which skips its demangling step), its name as the
/// profile gives it.
pub(crate) fn reported_name<'p>(
    p: &'p Profile,
    function: &Function,
    as_given: bool,
) -> Cow<'p, str> {
    let name = p.string(function.name);
    if as_given {
        return Cow::Borrowed(name);
    }
    let system = p.string(function.system_name);
    if !name.is_empty() && system != name {
        return Cow::Borrowed(name);
    }
    if !looks_like_demangled_cpp(system) {
        return Cow::Borrowed(system);
    }
    let without_params = remove_matching(system, b'(', b')');
    Cow::Owned(remove_matching(&without_params, b'<', b'>'))
}

/// A demangling mode given to pprof (`-symbolize=demangle=MODE`), which
/// forces it on every function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForcedDemangling {
    /// Demangled whole.
    Full,
    /// Demangled without parameters.
    Templates,
    /// Not demangled: the system names.
    None,
}

/// pprof's `Demangle` with a mode given (its `-symbolize=demangle=`): each function is named by its
/// system name, demangled by `mangled` when that is a mangled name (the
/// mode's demangler: `None` for a name that is not mangled); a name that
/// is not mangled but looks like demangled C++ loses its parameters with
/// `Templates`. Reports then show names as given (the selection's
/// `names_as_given`).
pub fn force_demangled_names(
    p: &mut Profile,
    mode: ForcedDemangling,
    mangled: &dyn Fn(&str) -> Option<String>,
) {
    let mut added: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for f in 0..p.function.len() {
        let (name, system) = (p.function[f].name, p.function[f].system_name);
        let system_text = p.string(system).to_string();
        if system_text.is_empty() {
            continue;
        }
        let new_name = match mode {
            ForcedDemangling::None => None,
            _ => mangled(&system_text)
                .or_else(|| system_text.strip_prefix('_').and_then(mangled))
                .or_else(|| {
                    let cut = mode == ForcedDemangling::Templates
                        && looks_like_demangled_cpp(&system_text);
                    cut.then(|| remove_matching(&system_text, b'(', b')'))
                }),
        };
        // pprof leaves an empty name empty only when it demangles nothing.
        p.function[f].name = match new_name {
            None if mode == ForcedDemangling::None && p.string(name).is_empty() => name,
            None => system,
            Some(text) => {
                let next = p.string_table.len() as i64;
                let at = *added.entry(text.clone()).or_insert(next);
                if at == next {
                    p.string_table.push(text);
                }
                at
            }
        };
    }
}

/// pprof's `looksLikeDemangledCPlusPlus`: not Java's `class.<init>`, not
/// Go's `pkg.(*T[…]).Method`.
fn looks_like_demangled_cpp(name: &str) -> bool {
    if name.contains(".<") || name.contains("]).") {
        return false;
    }
    name.contains(['<', '>', '[', ']']) || name.contains("::")
}

/// `name` with every outermost `open`…`close` run removed (pprof's
/// `removeMatching`): a `close` without its `open` stops the removal there,
/// an `open` never closed stays.
fn remove_matching(name: &str, open: u8, close: u8) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let (mut depth, mut start, mut first) = (0usize, 0usize, 0usize);
    for (i, &b) in bytes.iter().enumerate() {
        if b == open {
            if depth == 0 {
                first = i;
            }
            depth += 1;
        } else if b == close {
            if depth == 0 {
                break;
            }
            depth -= 1;
            if depth == 0 {
                out.extend_from_slice(&bytes[start..first]);
                start = i + 1;
            }
        }
    }
    out.extend_from_slice(&bytes[start..]);
    String::from_utf8(out).unwrap_or_else(|_| name.to_string())
}

/// A name as pprof's `ShortenFunctionName` shortens it for call graph
/// labels: Go's package path, a Java package or a C++ namespace dropped.
pub(crate) fn shortened_name(name: &str) -> Cow<'_, str> {
    use std::sync::LazyLock;
    static CPP_ANONYMOUS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\(anonymous namespace\)::").expect("valid"));
    static GO_VERSION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(.*?)/v(?:[2-9]|[1-9][0-9]+)([./].*)$").expect("valid"));
    static SHORTENERS: LazyLock<[Regex; 3]> = LazyLock::new(|| {
        [
            r"^(?:[\w\-\.]+/)+([^.]+\..+)",
            r"^(?:[a-z]\w*\.)*([A-Z][\w\$]*\.(?:<init>|[a-z][\w\$]*(?:\$\d+)?))(?:(?:\()|$)",
            r"^(?:[_a-zA-Z]\w*::)+(_*[A-Z]\w*::~?[_a-zA-Z]\w*(?:<.*>)?)",
        ]
        .map(|r| Regex::new(r).expect("valid"))
    });
    let name = CPP_ANONYMOUS.replace(name, "");
    let name = GO_VERSION.replace(&name, "${1}${2}").into_owned();
    for shortener in SHORTENERS.iter() {
        if let Some(found) = shortener.captures(&name) {
            let parts: String = found.iter().skip(1).flatten().map(|m| m.as_str()).collect();
            return Cow::Owned(parts);
        }
    }
    Cow::Owned(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forced_mode_names_every_function_by_its_system_name() {
        let strings = ["", "f", "_Zf", "ns::g(int)", "main.(*T).m", "shown"];
        let mut p = Profile {
            string_table: strings.map(String::from).to_vec(),
            ..Profile::default()
        };
        let function = |name: i64, system_name: i64| Function {
            name,
            system_name,
            ..Function::default()
        };
        p.function = vec![
            function(5, 2),
            function(3, 3),
            function(4, 4),
            function(0, 1),
        ];
        let mangled = |s: &str| (s == "_Zf").then(|| "f()".to_string());
        let names = |p: &Profile| -> Vec<String> {
            (p.function.iter())
                .map(|f| p.string(f.name).to_string())
                .collect()
        };
        let mut templates = p.clone();
        force_demangled_names(&mut templates, ForcedDemangling::Templates, &mangled);
        assert_eq!(names(&templates), ["f()", "ns::g", "main.(*T).m", "f"]);
        let mut full = p.clone();
        force_demangled_names(&mut full, ForcedDemangling::Full, &mangled);
        assert_eq!(names(&full), ["f()", "ns::g(int)", "main.(*T).m", "f"]);
        force_demangled_names(&mut p, ForcedDemangling::None, &mangled);
        assert_eq!(names(&p), ["_Zf", "ns::g(int)", "main.(*T).m", ""]);
    }

    #[test]
    fn template_arguments_and_parameters_go() {
        assert_eq!(
            remove_matching(
                "<pprof::Trace as pprof::backtrace::Trace>::trace",
                b'<',
                b'>'
            ),
            "::trace"
        );
        assert_eq!(remove_matching("a<b<c>>d<e>", b'<', b'>'), "ad");
        assert_eq!(remove_matching("f(int, char)", b'(', b')'), "f");
        assert_eq!(remove_matching("x>y<z", b'<', b'>'), "x>y<z");
        assert_eq!(remove_matching("a<b>c>d", b'<', b'>'), "ac>d");
        assert_eq!(remove_matching("a<b", b'<', b'>'), "a<b");
        assert!(!looks_like_demangled_cpp("java.lang.Object.<init>"));
        assert!(!looks_like_demangled_cpp("main.(*List[...]).Push"));
        assert!(looks_like_demangled_cpp("std::vector<int>::push_back"));
        assert!(!looks_like_demangled_cpp("main.burn"));
    }
}
