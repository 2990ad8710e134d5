//! protoprof's project automation, run as `cargo xtask <task>`.

mod bench;
mod bench_protoc;
mod bench_receive;
mod bench_store;
mod bench_store_fleet;
mod bench_store_spread;
mod bench_symbolize;
mod bench_web;
mod cargo;
mod codegen;
mod fuzz;
mod synth;
mod ui_compare;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  codegen           regenerate the model crates from proto/
  codegen --check   fail, naming each file, when the checked-in model crates are stale
  gen-profiles [--sizes MB,MB,...] [--seed N] [--shape shared|distinct]
                    write synthetic pprof profiles (raw and gzip) to target/synth/
                    (default sizes 1,10,100; --shape distinct: every stack its own,
                    as distinct-<N>MB.pb)
  gen-profiles --fleet N
                    N profiles of a fleet (10 services, 100 hosts, 3 versions) in
                    target/synth/fleet/, with fleet.tsv naming each one's labels
  bench-compare [--sizes MB,MB,...] [--rows TEXT] [--shape shared|distinct]
                    protoprof next to Go's pprof and prost on the same inputs
                    (table printed and written to target/bench/bench-compare.md;
                    --rows: only the pipelines whose name contains TEXT;
                    --shape: which synthetic profiles)
  bench-store [--profiles N] [--source synthetic|corpus|both]
                    the profile store: N profiles of a synthetic fleet and N of the
                    corpus added (bytes on disk, ingest rate), merged top over a tenth
                    and all of them against go tool pprof and DuckDB
                    (target/bench/bench-store.md)
  bench-store-spread [--profiles N] [--days D]
                    the store filled as continuous profiling fills it: a real Go CPU
                    profile N times spread over D days; one hour of it against a
                    store of its day, all of it against the files
                    (target/bench/bench-store-spread.md)
  bench-store-fleet [--services S] [--hosts H] [--every-minutes M] [--days D]
                    a fleet's store for a month: S services on H hosts, one profile
                    each every M minutes, real and synthetic profiles; one hour of
                    it against a store of its day, a service and all of it
                    (target/bench/bench-store-fleet.md)
  bench-receive [--sizes MB,MB,...] [--megabytes N] [--clients N] [--flood N]
                    OTLP/HTTP through protoprof receive (validating) and through the
                    Collector's otlpreceiver -> nop (tools/otelcol): requests/s, MB/s,
                    peak memory, and peak memory under a flood of N clients
  bench-protoc [--sizes MB,MB,...] [--rounds N]
                    the text format of a large pprof profile: protoc --decode next to
                    protoprof decode with profile.proto as a user schema (and built in)
  bench-web [--sizes MB,MB,...] [--rounds N] [--only protoprof|pprof]
                    time to the first complete flame graph and peak memory of
                    protoprof serve next to go tool pprof -http on synthetic profiles
  bench-symbolize [--addresses N] [--rounds N] [--binary ELF]
                    protoprof symbolize next to llvm-symbolizer --inlining and upstream
                    pprof -symbolize=local on N addresses of a large binary (default:
                    upstream pprof, tools/pprof-upstream): median time, peak memory
  ui-compare [PROFILE]
                    the flame graph's first screen in protoprof serve, go tool pprof -http
                    and speedscope (npm) on one profile (default: the corpus's Go CPU
                    profile), as headless Chromium draws them, in target/ui-compare/
  fuzz [--runs N] [--seconds N] [--target NAME]... [--corpus DIR] [--markdown] [SEEDS...]
                    coverage-guided fuzzing campaign over every target (seeds default to
                    $PROTOPROF_CORPUS or ../shared/corpus; panics saved to tests/fuzz-regressions/)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen::write(&workspace_root()),
        ["codegen", "--check"] => codegen::check(&workspace_root()),
        ["gen-profiles", rest @ ..] => synth::gen_profiles(&workspace_root(), rest),
        ["bench-compare", rest @ ..] => bench::bench_compare(&workspace_root(), rest),
        ["bench-protoc", rest @ ..] => bench_protoc::bench_protoc(&workspace_root(), rest),
        ["bench-web", rest @ ..] => bench_web::bench_web(&workspace_root(), rest),
        ["bench-receive", rest @ ..] => bench_receive::bench_receive(&workspace_root(), rest),
        ["bench-store", rest @ ..] => bench_store::bench_store(&workspace_root(), rest),
        ["bench-store-fleet", rest @ ..] => {
            bench_store_fleet::bench_store_fleet(&workspace_root(), rest)
        }
        ["bench-store-spread", rest @ ..] => {
            bench_store_spread::bench_store_spread(&workspace_root(), rest)
        }
        ["bench-symbolize", rest @ ..] => bench_symbolize::bench_symbolize(&workspace_root(), rest),
        ["fuzz", rest @ ..] => fuzz::fuzz(&workspace_root(), rest),
        ["ui-compare", rest @ ..] => ui_compare::ui_compare(&workspace_root(), rest),
        ["help" | "--help" | "-h"] => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: xtask lives one level below it. `cargo run` names
/// xtask's directory at run time; the compile-time one is a fallback only,
/// since a target directory shared by clones can hold a binary another
/// clone built (cargo's unit hashes do not depend on where a workspace is).
fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .parent()
        .expect("xtask sits inside the workspace")
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    /// `cargo test` alone catches stale models, as `cargo xtask codegen
    /// --check` does in CI: the checked-in model crates are what `proto/`
    /// generates today.
    #[test]
    fn generated_model_crates_are_up_to_date() {
        if let Err(err) = super::codegen::check(&super::workspace_root()) {
            panic!("{err:#}");
        }
    }
}
