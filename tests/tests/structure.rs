//! The structural invariants of docs/ARCHITECTURE.md, checked on the
//! workspace's own hand-written sources: no module imports another that
//! imports it back (within a crate), and no function is longer than
//! [`MAX_FUNCTION_LINES`]. Generated code (the model crates' `src/`) is
//! left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use protoprof_tests::workspace_root;

/// "About 120 lines" (issue 11), signature and closing brace included.
const MAX_FUNCTION_LINES: usize = 120;

/// Directories holding generated code only.
const GENERATED: &[&str] = &[
    "crates/model-pprof/src",
    "crates/model-otlp/src",
    "crates/model-relay/src",
];

/// Every hand-written `.rs` file, relative to the workspace root, by crate
/// source root (`crates/codec/src`, `xtask/src`, `tests/tests`, ...).
fn source_files() -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let root = workspace_root();
    let mut by_root: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(root.join(&dir)).expect("readable workspace") {
            let entry = entry.expect("readable entry");
            let name = entry.file_name().to_string_lossy().to_string();
            let path = dir.join(&name);
            if entry.file_type().expect("file type").is_dir() {
                let skipped = name.starts_with('.') || name == "target";
                if !skipped && !GENERATED.iter().any(|g| path == Path::new(g)) {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                let source_root = source_root(&path);
                by_root.entry(source_root).or_default().push(path);
            }
        }
    }
    by_root
}

/// The directory a file's `crate::` paths are resolved against: the
/// nearest enclosing `src`, `tests` or `benches` directory.
fn source_root(file: &Path) -> PathBuf {
    file.ancestors()
        .skip(1)
        .find(|dir| {
            dir.file_name()
                .is_some_and(|n| n == "src" || n == "tests" || n == "benches")
        })
        .unwrap_or_else(|| file.parent().expect("a file has a parent"))
        .to_path_buf()
}

/// The source with comments, string literals and character literals blanked
/// (their braces and `crate::` must not count), lines kept.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i..].starts_with(&['/', '*']) {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i..].starts_with(&['*', '/']) {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if let Some(len) = raw_string_len(rest) {
            out.extend(rest[..len].iter().map(|&c| blank(c)));
            i += len;
        } else if chars[i] == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                for &c in &chars[i..(i + step).min(chars.len())] {
                    out.push(blank(c));
                }
                i += step;
            }
            out.push(' ');
            i += 1;
        } else if let Some(len) = char_literal_len(rest) {
            out.extend(std::iter::repeat_n(' ', len));
            i += len;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The length of a raw string literal (`r"..."`, `r#"..."#`, `br"..."`) at
/// the start of `rest`.
fn raw_string_len(rest: &[char]) -> Option<usize> {
    let start = match rest {
        ['b', 'r', ..] => 2,
        ['r', ..] => 1,
        _ => return None,
    };
    let hashes = rest[start..].iter().take_while(|&&c| c == '#').count();
    if rest.get(start + hashes) != Some(&'"') {
        return None;
    }
    let body = start + hashes + 1;
    let closing: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    (body..rest.len())
        .find(|&j| rest[j..].starts_with(&closing))
        .map(|j| j + closing.len())
}

/// The length of a character literal (`'{'`, `'\n'`, `'\u{1f}'`) at the
/// start of `rest`; lifetimes (`'a`) are not literals.
fn char_literal_len(rest: &[char]) -> Option<usize> {
    match rest {
        ['\'', '\\', ..] => rest[2..].iter().position(|&c| c == '\'').map(|p| p + 3),
        ['\'', _, '\'', ..] => Some(3),
        _ => None,
    }
}

/// Functions longer than the limit: (first line, length, name).
fn long_functions(code: &str) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(name) = function_name(line) else {
            continue;
        };
        let mut depth = 0i64;
        let mut opened = false;
        for (offset, body_line) in lines[start..].iter().enumerate() {
            depth += body_line.matches('{').count() as i64;
            depth -= body_line.matches('}').count() as i64;
            opened |= body_line.contains('{');
            let declaration_only = !opened && body_line.trim_end().ends_with(';');
            if declaration_only {
                break;
            }
            if opened && depth <= 0 {
                if offset + 1 > MAX_FUNCTION_LINES {
                    found.push((start + 1, offset + 1, name));
                }
                break;
            }
        }
    }
    found
}

/// The name of the function a line declares, if it does.
fn function_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(word) = words.next() {
        let qualifier = word.starts_with("pub")
            || matches!(word, "const" | "async" | "unsafe" | "extern" | "default");
        if word == "fn" {
            let name = words.next()?;
            let end = name.find(['(', '<']).unwrap_or(name.len());
            return Some(name[..end].to_string());
        }
        if !qualifier && !word.starts_with("\"C\"") {
            return None;
        }
    }
    None
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let root = workspace_root();
    let mut too_long = Vec::new();
    for file in source_files().into_values().flatten() {
        let source = std::fs::read_to_string(root.join(&file)).expect("UTF-8 source");
        for (line, length, name) in long_functions(&code_only(&source)) {
            too_long.push(format!(
                "{}:{line}: fn {name} is {length} lines",
                file.display()
            ));
        }
    }
    assert!(
        too_long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them):\n{}",
        too_long.join("\n")
    );
}

/// The files a file's `crate::`, `super::` and `self::` paths lead to,
/// among `files` (the files of its crate).
fn imports(file: &Path, code: &str, files: &BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
    let source_root = source_root(file);
    let module_dir = module_dir(file);
    let mut out = BTreeSet::new();
    for path in module_paths(code) {
        let (base, segments) = match path.split_first() {
            Some((first, rest)) if first == "crate" => (source_root.clone(), rest),
            Some((first, rest)) if first == "super" => match module_dir.parent() {
                Some(parent) if module_dir != source_root => (parent.to_path_buf(), rest),
                _ => continue,
            },
            Some((first, rest)) if first == "self" => (module_dir.clone(), rest),
            _ => continue,
        };
        if let Some(target) = resolve(&base, segments, files) {
            if target != file {
                out.insert(target);
            }
        }
    }
    out
}

/// The directory a file's child modules live in (`a.rs` -> `a/`; `mod.rs`,
/// `lib.rs`, `main.rs` -> their own directory).
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().expect("a file has a parent");
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => parent.to_path_buf(),
        Some(stem) => parent.join(stem),
        None => parent.to_path_buf(),
    }
}

/// The longest prefix of `segments` below `base` that names a module file
/// (not a crate root or `mod.rs`: a parent's re-exports are not an import).
fn resolve(base: &Path, segments: &[String], files: &BTreeSet<PathBuf>) -> Option<PathBuf> {
    (1..=segments.len()).rev().find_map(|n| {
        let dir: PathBuf = segments[..n - 1].iter().collect();
        let file = base.join(dir).join(format!("{}.rs", segments[n - 1]));
        files.contains(&file).then_some(file)
    })
}

/// Every path starting with `crate`, `super` or `self`, `use` groups
/// flattened (`use crate::{a, b::c}` gives `crate::a` and `crate::b::c`).
fn module_paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let at_word_start = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let keyword = ["crate", "super", "self"]
            .into_iter()
            .find(|k| chars[i..].starts_with(&k.chars().collect::<Vec<_>>()));
        match keyword {
            Some(k) if at_word_start && chars[i + k.len()..].starts_with(&[':', ':']) => {
                i = read_path(&chars, i, vec![], &mut out);
            }
            _ => i += 1,
        }
    }
    out
}

/// Reads a path (and its `{...}` group) starting at `i`, appending each full
/// path to `out`; returns the position after it.
fn read_path(
    chars: &[char],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            i += 1;
            loop {
                i = read_path(chars, i, prefix.clone(), out);
                while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    i += 1;
                }
                match chars.get(i) {
                    Some('}') => return i + 1,
                    None => return i,
                    _ => {}
                }
            }
        }
        let start = i;
        while chars
            .get(i)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            i += 1;
        }
        if i == start {
            out.push(prefix);
            return i.max(start + 1);
        }
        prefix.push(chars[start..i].iter().collect());
        if chars[i..].starts_with(&[':', ':']) {
            i += 2;
        } else {
            out.push(prefix);
            return i;
        }
    }
}

/// A cycle in `graph`, as the files around it.
fn find_cycle(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    fn visit(
        node: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        stack: &mut Vec<PathBuf>,
        done: &mut BTreeSet<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            return Some(stack[at..].to_vec());
        }
        if !done.insert(node.clone()) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let root = workspace_root();
    let mut cycles = Vec::new();
    for files in source_files().into_values() {
        let known: BTreeSet<PathBuf> = files.iter().cloned().collect();
        let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = files
            .iter()
            .map(|file| {
                let source = std::fs::read_to_string(root.join(file)).expect("UTF-8 source");
                (file.clone(), imports(file, &code_only(&source), &known))
            })
            .collect();
        if let Some(cycle) = find_cycle(&graph) {
            let names: Vec<String> = cycle.iter().map(|f| f.display().to_string()).collect();
            cycles.push(names.join(" -> "));
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_checks_see_what_they_look_for() {
    // A checker that finds nothing in anything would pass vacuously.
    let code = code_only("fn a() {\n let s = \"}}\"; let c = '{';\n}\n// fn b() {\n");
    assert_eq!(code.matches('{').count(), 1);
    let long = format!("fn long() {{\n{}}}\n", "x();\n".repeat(MAX_FUNCTION_LINES));
    assert_eq!(
        long_functions(&long),
        vec![(1, MAX_FUNCTION_LINES + 2, "long".into())]
    );
    assert!(long_functions("pub(crate) fn short() {}\n").is_empty());
    let paths = module_paths("use crate::{a, b::{c, d}};\nlet x = super::e::f();\n");
    let paths: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        ["crate::a", "crate::b::c", "crate::b::d", "super::e::f"]
    );
    let files: BTreeSet<PathBuf> = ["src/a.rs", "src/b.rs"].map(PathBuf::from).into();
    let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = [
        ("src/a.rs", "use crate::b::thing;"),
        ("src/b.rs", "use crate::a::Other;"),
    ]
    .into_iter()
    .map(|(f, code)| (PathBuf::from(f), imports(Path::new(f), code, &files)))
    .collect();
    assert!(find_cycle(&graph).is_some());
}

/// CI runs the README's test command exactly as README.md writes it, so a
/// relative path or a missing install step shows in CI as it would for a
/// newcomer.
#[test]
fn ci_runs_the_readme_test_command_as_written() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let ci = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    let command = readme
        .lines()
        .find(|line| line.contains("cargo test"))
        .expect("README.md has a test command")
        .trim();
    assert!(
        ci.lines().any(|line| line.trim() == command),
        ".ci/run does not run README.md's test command `{command}` as written"
    );
}

/// The README's Rust examples are the crates' doc examples (which `cargo
/// test` compiles and runs): every line of each README example stands in a
/// doc example of some crate, so the README cannot show code that does not
/// build.
#[test]
fn readme_examples_are_doc_examples() {
    let root = workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let docs: String = [
        "crates/model-pprof/src/lib.rs",
        "crates/pprof-bridge/src/lib.rs",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(root.join(f)).expect("a crate root"))
    .collect();
    let doc_lines: BTreeSet<&str> = docs
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("//!")
                .or(l.trim().strip_prefix("///"))
        })
        .map(str::trim)
        .collect();
    let mut examples = 0;
    for block in readme.split("```rust\n").skip(1) {
        examples += 1;
        let code = block.split("```").next().unwrap_or_default();
        for line in code.lines().map(str::trim).filter(|l| !l.is_empty()) {
            assert!(
                doc_lines.contains(line),
                "README.md example line `{line}` is in no crate's doc example"
            );
        }
    }
    assert_eq!(examples, 2, "README.md's Rust examples");
}
