//! Symbolization of a real binary: a C program built here with `gcc -O2
//! -g` (a function inlined twice into another), addresses across its
//! code made into an unsymbolized pprof profile as a PIE loaded at a
//! runtime address, and every frame checked against `llvm-symbolizer
//! --inlining` (the tool pprof runs) on the same file addresses. Then the
//! same with the binary stripped and its debug file in a build-id
//! directory (where pprof finds no base), and with a build id that is not
//! the binary's.

mod common;

use std::process::Command;

use common::*;
use protoprof_symbolize::{symbolize, How};

#[test]
fn frames_equal_llvm_symbolizers_inline_chains() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let addresses = file_addresses(&binary);
    let expected = oracle(&binary, &addresses);
    assert!(
        expected.iter().any(|f| f.len() >= 3),
        "no address inside the twice-inlined square"
    );
    let mut p = profile(
        binary.to_str().unwrap(),
        &build_id(&binary),
        text_segment(&binary),
        &addresses,
    );
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let mapping = &report.mappings[0];
    assert_eq!(
        mapping.found.as_ref().unwrap().how,
        How::MappingPath,
        "{}",
        report.text()
    );
    assert_eq!(mapping.found.as_ref().unwrap().build_id_matched, Some(true));
    assert_eq!(
        (mapping.addresses, mapping.resolved),
        (addresses.len(), addresses.len())
    );
    assert_eq!(frames_of(&p), expected);
    let m = &p.mapping[0];
    assert!(m.has_functions && m.has_filenames && m.has_line_numbers && m.has_inline_frames);
    // Symbolized once: its locations have lines, and are left as they are.
    let again = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let skipped = again.mappings[0].skipped.as_deref().unwrap();
    assert!(
        skipped.contains("no locations that are only addresses"),
        "{skipped}"
    );
    assert_eq!(frames_of(&p), expected);
}

#[test]
fn a_stripped_binarys_debug_file_is_found_by_build_id_and_used() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let (addresses, id) = (file_addresses(&binary), build_id(&binary));
    let expected = oracle(&binary, &addresses);
    // The debug file alone in PPROF_BINARY_PATH's build-id layout; the
    // mapping's path is the stripped executable, which has no DWARF.
    let binaries = dir.path().join("binaries");
    let debug = binaries.join(&id[..2]).join(format!("{}.debug", &id[2..]));
    std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&binary)
        .arg(&debug));
    let stripped = dir.path().join("prog.stripped");
    run(Command::new("strip").arg("-o").arg(&stripped).arg(&binary));
    let mut p = profile(
        stripped.to_str().unwrap(),
        &id,
        text_segment(&binary),
        &addresses,
    );
    let report = symbolize(&mut p, &options(vec![binaries], dir.path()));
    let found = report.mappings[0].found.as_ref().unwrap();
    assert_eq!(
        (found.how, &found.path),
        (How::BuildIdDebugFile, &debug),
        "{}",
        report.text()
    );
    assert_eq!(frames_of(&p), expected);
}

#[test]
fn a_file_of_another_build_is_passed_over_and_said_so() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let addresses = file_addresses(&binary);
    let other = "0123456789abcdef0123456789abcdef01234567";
    let mut p = profile(
        binary.to_str().unwrap(),
        other,
        text_segment(&binary),
        &addresses,
    );
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let mapping = &report.mappings[0];
    assert!(mapping.found.is_none());
    assert_eq!(mapping.resolved, 0);
    assert!(
        mapping.passed_over[0].why.contains("is not the mapping's"),
        "{}",
        report.text()
    );
    assert!(p.location.iter().all(|l| l.line.is_empty()));
    assert!(report.text().contains("no file found"), "{}", report.text());
}

#[test]
fn a_gnu_debuglink_is_followed_when_its_crc_matches() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let binary = build(dir.path());
    let (addresses, id) = (file_addresses(&binary), build_id(&binary));
    let expected = oracle(&binary, &addresses);
    // A stripped executable that names its debug file beside it.
    let debug = dir.path().join("prog.debug");
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&binary)
        .arg(&debug));
    let stripped = dir.path().join("prog.stripped");
    run(Command::new("strip")
        .arg("-g")
        .arg("-o")
        .arg(&stripped)
        .arg(&binary));
    run(Command::new("objcopy")
        .current_dir(dir.path())
        .arg("--add-gnu-debuglink=prog.debug")
        .arg(&stripped));
    let segment = text_segment(&binary);
    let mut p = profile(stripped.to_str().unwrap(), &id, segment, &addresses);
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    let found = report.mappings[0].found.as_ref().unwrap();
    assert_eq!(
        found.debug_file.as_deref(),
        Some(debug.as_path()),
        "{}",
        report.text()
    );
    assert_eq!(frames_of(&p), expected);
    // The debug file changed since the link was made: its CRC no longer
    // matches, and it is not read (the symbol table's names are).
    let mut bytes = std::fs::read(&debug).unwrap();
    bytes.push(0);
    std::fs::write(&debug, bytes).unwrap();
    let mut p = profile(stripped.to_str().unwrap(), &id, segment, &addresses);
    let report = symbolize(&mut p, &options(Vec::new(), dir.path()));
    assert_eq!(report.mappings[0].found.as_ref().unwrap().debug_file, None);
    assert!(
        p.location.iter().all(|l| l.line.len() <= 1),
        "inline frames without DWARF"
    );
}

/// Debian's libc, whose debug file (`libc6-dbg`) has DWARF 5 units built
/// in relative directories (`./stdlib`): every frame of its `exit`
/// equals `llvm-symbolizer`'s, the files of a unit's directory 0 named
/// as LLVM names them (`./stdlib/./stdlib/exit.c`), not as gimli's
/// `addr2line` does (`./stdlib/exit.c`); `malloc`, which `.dynsym` also
/// names `__libc_malloc` after it, named as LLVM names it.
#[test]
fn libc_frames_equal_llvm_symbolizers_files_of_directory_zero_included() {
    if !tools_present() {
        return;
    }
    let libc = std::path::Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6");
    let debug_root = std::path::Path::new("/usr/lib/debug");
    let there = libc.exists() && {
        let id = build_id(libc);
        let debug = format!(".build-id/{}/{}.debug", &id[..2], &id[2..]);
        debug_root.join(debug).exists()
    };
    if !protoprof_tests::available_or_skip(there, "libc's debug file (libc6-dbg)") {
        return;
    }
    let symbols = run(Command::new("nm")
        .args(["-D", "-S", "--defined-only"])
        .arg(libc));
    let mut addresses = Vec::new();
    for line in symbols.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let name = f.last().and_then(|n| n.split('@').next());
        let wanted = matches!(
            name,
            Some("exit" | "on_exit" | "__cxa_thread_atexit_impl" | "malloc")
        );
        if let ([address, size, "T" | "W", _], true) = (&f[..], wanted) {
            let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
            let start = hex(address);
            addresses.extend((start..start + hex(size)).step_by(2));
        }
    }
    assert!(addresses.len() > 20, "{symbols}");
    let expected = oracle(libc, &addresses);
    let files = || expected.iter().flatten().map(|(_, file, _, _)| file);
    assert!(
        files().any(|f| f.contains("./stdlib/./stdlib/")),
        "no file of a directory 0: {:?}",
        files().collect::<Vec<_>>()
    );
    let id = build_id(libc);
    let mut p = profile(libc.to_str().unwrap(), &id, text_segment(libc), &addresses);
    symbolize(&mut p, &options(Vec::new(), debug_root));
    let ours = frames_of(&p);
    assert_eq!(ours.len(), expected.len());
    for ((address, ours), theirs) in addresses.iter().zip(&ours).zip(&expected) {
        assert_eq!(ours, theirs, "at {address:#x}");
    }
}
