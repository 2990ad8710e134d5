//! Cargo as xtask runs it for the benchmarks and generators.

use std::path::Path;
use std::process::Command;

/// Cargo, run from xtask in `root` as from a shell. `cargo xtask` is `cargo
/// run`, which gives xtask `CARGO_MANIFEST_DIR`, `CARGO_PKG_*` and a
/// library path; a build script that tracks one of them (ring's tracks
/// `CARGO_MANIFEST_DIR`) would see it changed and rebuild everything above
/// it (DataFusion and Ballista in release: about 25 minutes here) each
/// time the same target directory is built from the shell and from xtask.
pub fn cargo(root: &Path) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(root);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_MANIFEST_")
            || ["CARGO_CRATE_NAME", "CARGO_BIN_NAME", "LD_LIBRARY_PATH"].contains(&&*key)
        {
            command.env_remove(&*key);
        }
    }
    command
}
