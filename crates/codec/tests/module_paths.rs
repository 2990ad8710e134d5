//! The module paths from before the folder layout (`legacy_cpu`,
//! `pprof_view`, `otlp_revision`, ...) still name the same modules, so
//! callers that import them keep building and get the same items.

use std::any::TypeId;

use protoprof_codec as codec;

#[test]
fn the_paths_of_before_the_folders_name_the_same_types() {
    let same = [
        (
            TypeId::of::<codec::pprof_view::PprofView<'static>>(),
            TypeId::of::<codec::pprof::view::PprofView<'static>>(),
        ),
        (
            TypeId::of::<codec::development_view::DevelopmentView<'static>>(),
            TypeId::of::<codec::otlp::development_view::DevelopmentView<'static>>(),
        ),
        (
            TypeId::of::<codec::experimental_view::ExperimentalView<'static>>(),
            TypeId::of::<codec::otlp::experimental_view::ExperimentalView<'static>>(),
        ),
        (
            TypeId::of::<codec::otlp_revision::OtlpRevision>(),
            TypeId::of::<codec::otlp::revision::OtlpRevision>(),
        ),
        (
            TypeId::of::<codec::legacy_cpu::LegacyError>(),
            TypeId::of::<codec::legacy::cpu::LegacyError>(),
        ),
    ];
    for (i, (old, new)) in same.iter().enumerate() {
        assert_eq!(old, new, "pair {i}");
    }
}

#[test]
fn the_paths_of_before_the_folders_name_the_same_functions() {
    let heap = b"heap profile: 1: 8 [1: 8] @ heap/1048576\n1: 8 [1: 8] @ 0x1000\n";
    let old = codec::legacy_heap::parse_heap(heap).expect("a heap profile");
    let new = codec::legacy::heap::parse_heap(heap).expect("a heap profile");
    assert_eq!(old.expect("parses"), new.expect("parses"));
    let old = codec::otlp_upgrade::to_current(b"").map(|(bytes, _)| bytes.into_owned());
    let new = codec::otlp::upgrade::to_current(b"").map(|(bytes, _)| bytes.into_owned());
    assert_eq!(old.ok(), new.ok());
}
