//! The copy of a fetched profile that pprof users expect to find: in
//! `$PPROF_TMPDIR`, else `$HOME/pprof`, else the system's temporary
//! directory, named `pprof.<binary>.<sample types>.NNN.pb.gz` as pprof
//! names it (the binary is the base name of the first mapping's file, the
//! sample types are in order, NNN counts from 001 to the first name not
//! taken).
//!
//! Unlike pprof, which writes the profile again after parsing it, the copy
//! holds the bytes as they came (gzip-compressed when they were not), so
//! nothing the fetch brought is lost or changed.

use std::io::Write;
use std::path::{Path, PathBuf};

use protoprof_codec::{decode_pprof_view, gzip, DecodeOptions, SampleSource};

use crate::NetError;

/// The directory copies are saved in, created when missing.
pub fn copy_dir() -> Result<PathBuf, NetError> {
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::var_os("PPROF_TMPDIR").filter(|d| !d.is_empty()) {
        candidates.push(PathBuf::from(dir));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        candidates.push(Path::new(&home).join("pprof"));
    }
    candidates.push(std::env::temp_dir());
    let mut last = None;
    for dir in candidates {
        match std::fs::create_dir_all(&dir) {
            Ok(()) => return Ok(dir),
            Err(source) => last = Some(NetError::Save { path: dir, source }),
        }
    }
    Err(last.expect("the temporary directory is always a candidate"))
}

/// The name's prefix pprof gives a copy of `bytes`: `pprof.`, the binary's
/// base name when the first mapping has a file, then each sample type.
/// Bytes that are no pprof profile get `pprof.` alone.
pub fn name_prefix(bytes: &[u8]) -> String {
    let mut prefix = String::from("pprof.");
    let Ok(decoded) = decode_pprof_view(bytes, &DecodeOptions::default()) else {
        return prefix;
    };
    let profile = decoded.message.profile();
    let string = |i: i64| {
        usize::try_from(i)
            .ok()
            .and_then(|i| profile.string_table.get(i))
            .map(String::as_str)
            .unwrap_or("")
    };
    if let Some(file) = profile.mapping.first().map(|m| string(m.filename)) {
        if !file.is_empty() {
            let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
            prefix.push_str(base);
            prefix.push('.');
        }
    }
    for sample_type in &profile.sample_type {
        prefix.push_str(string(sample_type.type_));
        prefix.push('.');
    }
    prefix
}

/// Saves `bytes` in `dir` under the first free pprof name; returns its path.
pub fn save_copy(bytes: &[u8], dir: &Path) -> Result<PathBuf, NetError> {
    let prefix = name_prefix(bytes);
    let gzipped = gzip::is_gzip(bytes);
    for index in 1..10_000 {
        let path = dir.join(format!("{prefix}{index:03}.pb.gz"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path);
        match file {
            Ok(file) => {
                return write_copy(file, bytes, gzipped)
                    .map(|()| path.clone())
                    .map_err(|source| NetError::Save { path, source })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(NetError::Save { path, source }),
        }
    }
    Err(NetError::Save {
        path: dir.join(format!("{prefix}001.pb.gz")),
        source: std::io::Error::new(std::io::ErrorKind::AlreadyExists, "every name is taken"),
    })
}

/// gzip's default level, the one every protoprof writer uses.
const GZIP_LEVEL: u32 = 6;

fn write_copy(mut file: std::fs::File, bytes: &[u8], gzipped: bool) -> std::io::Result<()> {
    if gzipped {
        file.write_all(bytes)?;
    } else {
        gzip::compress_into(&mut file, GZIP_LEVEL, |out| out.write_all(bytes))?;
    }
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_named_as_pprof_names_them_and_never_replace_one() {
        // Tests run in the package's root.
        let example = "../../examples/cpu.pb.gz";
        let bytes = std::fs::read(example).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let first = save_copy(&bytes, dir.path()).unwrap();
        let second = save_copy(&bytes, dir.path()).unwrap();
        let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name(&first), "pprof.main.samples.cpu.001.pb.gz");
        assert_eq!(name(&second), "pprof.main.samples.cpu.002.pb.gz");
        assert_eq!(std::fs::read(&first).unwrap(), bytes);
        let raw = save_copy(b"not a profile", dir.path()).unwrap();
        assert_eq!(name(&raw), "pprof.001.pb.gz");
        let mut inflated = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(std::fs::File::open(&raw).unwrap()),
            &mut inflated,
        )
        .unwrap();
        assert_eq!(inflated, b"not a profile");
    }
}
