//! What identifies a binary: its GNU build id, and the OpenTelemetry eBPF
//! profiler's file id (`htlhash`) of its bytes.

/// The GNU build id of the object file `data`, as hex.
pub(crate) fn build_id_hex(data: &[u8]) -> Result<Option<String>, String> {
    let file = object::File::parse(data).map_err(|e| format!("not an object file: {e}"))?;
    build_id_of(&file)
}

/// The GNU build id of the parsed object `file`, as hex.
pub(crate) fn build_id_of(file: &object::File) -> Result<Option<String>, String> {
    let id = object::Object::build_id(file).map_err(|e| e.to_string())?;
    Ok(id.map(|id| id.iter().map(|b| format!("{b:02x}")).collect()))
}

/// The eBPF profiler's file id (`htlhash`): the first 16 bytes of the
/// SHA-256 of the file's first and last 4 KiB and its length (big-endian
/// u64), as hex.
pub(crate) fn htlhash(data: &[u8]) -> String {
    use sha2::Digest;
    const PART: usize = 4096;
    let mut hasher = sha2::Sha256::new();
    hasher.update(&data[..data.len().min(PART)]);
    hasher.update(&data[data.len().saturating_sub(PART)..]);
    hasher.update((data.len() as u64).to_be_bytes());
    hasher.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
