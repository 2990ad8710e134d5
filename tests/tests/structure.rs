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

/// Folders whose files must not import from the folders listed with them
/// (docs/ARCHITECTURE.md's code map says why for each).
const FOLDERS_APART: &[(&str, &[&str])] = &[
    ("crates/codec/src/pprof", &["crates/codec/src/otlp"]),
    (
        "crates/codec/src/legacy",
        &[
            "crates/codec/src/pprof",
            "crates/codec/src/otlp",
            "crates/codec/src/json",
        ],
    ),
    (
        "crates/pprof-bridge/src/experimental",
        &["crates/pprof-bridge/src/development"],
    ),
    (
        "crates/validate/src/v1experimental",
        &["crates/validate/src/v1development"],
    ),
    (
        "crates/validate/src/v1development",
        &["crates/validate/src/v1experimental"],
    ),
];

/// Every hand-written source directory of a crate that docs/ARCHITECTURE.md's
/// code map must cover: each crate's `src` but the generated models', and
/// xtask's.
fn mapped_source_dirs() -> BTreeSet<PathBuf> {
    let root = workspace_root();
    let mut dirs: BTreeSet<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|entry| {
            Path::new("crates")
                .join(entry.expect("entry").file_name())
                .join("src")
        })
        .filter(|src| root.join(src).is_dir() && !GENERATED.iter().any(|g| src == Path::new(g)))
        .collect();
    dirs.insert(PathBuf::from("xtask/src"));
    dirs
}

/// The `.rs` files (`otlp/revision.rs`) and folders (`otlp/`) below `dir`,
/// relative to it.
fn tree_names(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(dir.join(&relative)).expect("a readable folder") {
            let entry = entry.expect("a readable entry");
            let path = relative.join(entry.file_name());
            let name = path.to_string_lossy().replace('\\', "/");
            if entry.file_type().expect("a file type").is_dir() {
                names.insert(format!("{name}/"));
                pending.push(path);
            } else if name.ends_with(".rs") {
                names.insert(name);
            }
        }
    }
    names
}

/// The text between backticks, in order.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// Whether a backticked name is a source path: a `.rs` file or a folder
/// (`name/`), of path characters only.
fn is_source_path(name: &str) -> bool {
    let path_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-./".contains(c));
    path_chars && (name.ends_with(".rs") || name.ends_with('/'))
}

/// Paths that name a place from the workspace root (`tests/tests/x.rs`),
/// not a file of the section's own directory.
fn is_workspace_path(name: &str) -> bool {
    ["crates/", "tests/", "xtask/", "bench/"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The code map's sections: each `### DIR` heading under `## Code map`, with
/// the source paths its text names relative to DIR.
fn code_map_sections(text: &str) -> BTreeMap<PathBuf, BTreeSet<String>> {
    let Some((_, map)) = text.split_once("\n## Code map\n") else {
        return BTreeMap::new();
    };
    let map = map.split("\n## ").next().unwrap_or(map);
    map.split("\n### ")
        .skip(1)
        .map(|section| {
            let (heading, body) = section.split_once('\n').unwrap_or((section, ""));
            let names = backticked(body)
                .filter(|n| is_source_path(n) && !is_workspace_path(n))
                .map(str::to_string)
                .collect();
            (PathBuf::from(heading.trim()), names)
        })
        .collect()
}

/// What differs between a code map section and its directory's tree.
fn code_map_problems(
    dir: &Path,
    named: &BTreeSet<String>,
    present: &BTreeSet<String>,
) -> Vec<String> {
    let dir = dir.display();
    let unnamed = present
        .difference(named)
        .map(|n| format!("{dir}: `{n}` is not in the code map"));
    let absent = named
        .difference(present)
        .map(|n| format!("{dir}: the code map names `{n}`, which does not exist"));
    unnamed.chain(absent).collect()
}

#[test]
fn the_code_map_names_every_file_and_nothing_else() {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let sections = code_map_sections(&text);
    let mapped: BTreeSet<PathBuf> = sections.keys().cloned().collect();
    assert_eq!(mapped, mapped_source_dirs(), "the code map's sections");
    let mut problems = Vec::new();
    for (dir, named) in &sections {
        problems.extend(code_map_problems(dir, named, &tree_names(&root.join(dir))));
    }
    for name in backticked(&text).filter(|n| is_source_path(n) && is_workspace_path(n)) {
        if !root.join(name).exists() {
            problems.push(format!(
                "ARCHITECTURE.md names `{name}`, which does not exist"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The items a `mod.rs` may not hold: code, as opposed to declarations and
/// re-exports.
fn code_items(code: &str) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "fn",
        "struct",
        "enum",
        "impl",
        "trait",
        "static",
        "const",
        "type",
        "macro_rules!",
    ];
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let words: Vec<&str> = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!'))
            .collect();
        if let Some(k) = KEYWORDS.iter().find(|k| words.contains(k)) {
            found.push(format!("line {}: `{k}`", n + 1));
        }
    }
    found
}

#[test]
fn library_folders_hold_declarations_and_re_exports_only() {
    let root = workspace_root();
    let mut problems = Vec::new();
    let libraries = mapped_source_dirs()
        .into_iter()
        .filter(|src| root.join(src).join("lib.rs").is_file());
    for src in libraries {
        for name in tree_names(&root.join(&src))
            .iter()
            .filter(|n| n.ends_with("/mod.rs"))
        {
            let source = std::fs::read_to_string(root.join(&src).join(name)).expect("UTF-8");
            for item in code_items(&code_only(&source)) {
                problems.push(format!("{}/{name}: {item}", src.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "code in a mod.rs:\n{}",
        problems.join("\n")
    );
}

/// Files beside a folder named after it (`legacy_cpu.rs` or `legacy.rs`
/// beside `legacy/`): code that belongs in the folder.
fn named_after_a_folder(names: &BTreeSet<String>) -> Vec<String> {
    let folders: Vec<&str> = names.iter().filter_map(|n| n.strip_suffix('/')).collect();
    names
        .iter()
        .filter(|file| file.ends_with(".rs"))
        .filter(|file| {
            let (parent, stem) = match file.trim_end_matches(".rs").rsplit_once('/') {
                Some((parent, stem)) => (format!("{parent}/"), stem),
                None => (String::new(), file.trim_end_matches(".rs")),
            };
            folders.iter().any(|folder| {
                let Some(sibling) = folder.strip_prefix(parent.as_str()) else {
                    return false;
                };
                !sibling.contains('/')
                    && (stem == sibling || stem.starts_with(&format!("{sibling}_")))
            })
        })
        .cloned()
        .collect()
}

#[test]
fn no_file_beside_a_folder_carries_its_name() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for src in mapped_source_dirs() {
        for file in named_after_a_folder(&tree_names(&root.join(&src))) {
            problems.push(format!("{}/{file}", src.display()));
        }
    }
    assert!(
        problems.is_empty(),
        "files that belong in the folder they are named after:\n{}",
        problems.join("\n")
    );
}

#[test]
fn folders_kept_apart_import_nothing_of_each_other() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for files in source_files().into_values() {
        let known: BTreeSet<PathBuf> = files.iter().cloned().collect();
        for (folder, apart) in FOLDERS_APART {
            for file in files.iter().filter(|f| f.starts_with(folder)) {
                let source = std::fs::read_to_string(root.join(file)).expect("UTF-8 source");
                for target in imports(file, &code_only(&source), &known) {
                    if let Some(other) = apart.iter().find(|a| target.starts_with(a)) {
                        problems.push(format!(
                            "{} imports {} ({other})",
                            file.display(),
                            target.display()
                        ));
                    }
                }
            }
        }
    }
    for folder in FOLDERS_APART
        .iter()
        .flat_map(|(f, apart)| std::iter::once(f).chain(apart.iter()))
    {
        assert!(root.join(folder).is_dir(), "{folder} is no folder");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_layout_checks_see_what_they_look_for() {
    let map = "\n## Code map\n\n### a/src\n- `lib.rs`, `x/`, `x/y.rs`, `tests/tests/t.rs`, `Foo`\n## Next\n`z.rs`\n";
    let sections = code_map_sections(map);
    let named: Vec<&String> = sections[Path::new("a/src")].iter().collect();
    assert_eq!(named, ["lib.rs", "x/", "x/y.rs"]);
    let present: BTreeSet<String> = ["lib.rs", "x/", "x/z.rs"].map(String::from).into();
    assert_eq!(
        code_map_problems(Path::new("a/src"), &sections[Path::new("a/src")], &present).len(),
        2
    );
    assert_eq!(code_items("pub mod a;\npub use a::*;\n").len(), 0);
    assert_eq!(code_items("mod a;\npub fn b() {}\n"), ["line 2: `fn`"]);
    let names: BTreeSet<String> = [
        "legacy/",
        "legacy/cpu.rs",
        "legacy_heap.rs",
        "otlp.rs",
        "x/",
        "x/x_y.rs",
        "lib.rs",
    ]
    .map(String::from)
    .into();
    assert_eq!(named_after_a_folder(&names), ["legacy_heap.rs"]);
}

/// The module a file belongs to at the top of its crate: the folder
/// (`binary` for `src/binary/message.rs`) or the file (`detect` for
/// `src/detect.rs`) directly under the source root.
fn top_module(file: &Path) -> PathBuf {
    let root = source_root(file);
    let below = file.strip_prefix(&root).expect("a file is under its root");
    let first = below.components().next().expect("a file has a name");
    let first = Path::new(first.as_os_str());
    root.join(first.with_extension(""))
}

/// The folders (top-level modules) of each crate layer too, as
/// docs/ARCHITECTURE.md says: no folder imports one that imports it back,
/// through any of their files.
#[test]
fn no_folder_imports_one_that_imports_it_back() {
    let root = workspace_root();
    let mut cycles = Vec::new();
    for files in source_files().into_values() {
        let known: BTreeSet<PathBuf> = files.iter().cloned().collect();
        let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for file in &files {
            let source = std::fs::read_to_string(root.join(file)).expect("UTF-8 source");
            let from = top_module(file);
            let targets = imports(file, &code_only(&source), &known);
            let entry = graph.entry(from.clone()).or_default();
            entry.extend(targets.iter().map(|t| top_module(t)).filter(|t| *t != from));
        }
        if let Some(cycle) = find_cycle(&graph) {
            let names: Vec<String> = cycle.iter().map(|f| f.display().to_string()).collect();
            cycles.push(names.join(" -> "));
        }
    }
    assert!(cycles.is_empty(), "folder cycles:\n{}", cycles.join("\n"));
}
