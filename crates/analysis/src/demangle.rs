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
