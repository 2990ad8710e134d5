//! `store check`: every file of a store in a directory read whole, and
//! every reference its rows make looked up. A file that does not read as
//! its table (truncated, corrupt, of another schema) is listed, and with
//! `repair` moved aside into `DIR/.quarantine/` (engines read only the
//! tables' directories), under the store's lock, as compaction holds it.
//! References (a sample whose stack or profile is not there, a stack's
//! location, a location's function or mapping, a profile's main mapping)
//! are looked up by the engine once no file is unreadable.

use std::path::{Path, PathBuf};

use crate::diagnose::{problem_of, store_files, unreadable};
use crate::error::StoreError;
use crate::lock::StoreLock;

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    /// The files read.
    pub files: usize,
    /// Each file that does not read as its table.
    pub bad_files: Vec<BadFile>,
    /// Each kind of dangling reference found: what refers to what, how
    /// many, and one of them.
    pub dangling: Vec<String>,
}

/// A file that does not read as its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadFile {
    /// Where it was found.
    pub path: PathBuf,
    /// Why it does not read.
    pub problem: String,
    /// Where `repair` moved it.
    pub moved_to: Option<PathBuf>,
}

/// The references rows make, as SQL that counts those that name no row
/// and shows one: (what refers to what, the query).
const REFERENCES: [(&str, &str); 6] = [
    (
        "samples whose stack is not in stacks",
        "SELECT count(*), min(encode(CAST(stack_id AS BYTEA), 'hex')) FROM samples \
         WHERE stack_id NOT IN (SELECT stack_id FROM stacks)",
    ),
    (
        "samples whose profile is not in profiles",
        "SELECT count(*), min(encode(CAST(profile_id AS BYTEA), 'hex')) FROM samples \
         WHERE profile_id NOT IN (SELECT profile_id FROM profiles)",
    ),
    (
        "stacks naming a location not in locations",
        "SELECT count(*), min(encode(CAST(l AS BYTEA), 'hex')) FROM \
         (SELECT unnest(location_ids) AS l FROM stacks) \
         WHERE l NOT IN (SELECT location_id FROM locations)",
    ),
    (
        "locations naming a function not in functions",
        "SELECT count(*), min(encode(CAST(line['function_id'] AS BYTEA), 'hex')) FROM \
         (SELECT unnest(lines) AS line FROM locations) \
         WHERE line['function_id'] IS NOT NULL \
         AND line['function_id'] NOT IN (SELECT function_id FROM functions)",
    ),
    (
        "locations naming a mapping not in mappings",
        "SELECT count(*), min(encode(CAST(mapping_id AS BYTEA), 'hex')) FROM locations \
         WHERE mapping_id IS NOT NULL AND mapping_id NOT IN (SELECT mapping_id FROM mappings)",
    ),
    (
        "profiles whose main mapping is not in mappings",
        "SELECT count(*), min(encode(CAST(main_mapping_id AS BYTEA), 'hex')) FROM profiles \
         WHERE main_mapping_id IS NOT NULL \
         AND main_mapping_id NOT IN (SELECT mapping_id FROM mappings)",
    ),
];

/// Checks the store in directory `root`; with `repair`, moves each file
/// that does not read as its table aside first.
pub fn check(root: &Path, repair: bool) -> Result<Checked, StoreError> {
    if root.to_string_lossy().starts_with("s3://") {
        return Err(StoreError::Query(
            "store check reads a store in a directory; object storage is not checked yet".into(),
        ));
    }
    let _lock = match repair {
        true => Some(StoreLock::exclusive(root)?),
        false => None,
    };
    let mut checked = Checked::default();
    for (file, table) in store_files(root) {
        checked.files += 1;
        if let Some(problem) = problem_of(&file, &table).or_else(|| unreadable(&file)) {
            let moved_to = match repair {
                true => Some(quarantine(root, &file)?),
                false => None,
            };
            checked.bad_files.push(BadFile {
                path: file,
                problem,
                moved_to,
            });
        }
    }
    if checked.bad_files.is_empty() || repair {
        checked.dangling = dangling(root)?;
    }
    Ok(checked)
}

/// Moves `file` into `root/.quarantine/`, at its path below the store.
fn quarantine(root: &Path, file: &Path) -> Result<PathBuf, StoreError> {
    let below = file.strip_prefix(root).unwrap_or(file);
    let to = root.join(".quarantine").join(below);
    let io = |e: std::io::Error| StoreError::Io(format!("{}: {e}", file.display()));
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::rename(file, &to).map_err(io)?;
    Ok(to)
}

/// Each kind of dangling reference the store's rows make.
fn dangling(root: &Path) -> Result<Vec<String>, StoreError> {
    let store = crate::Store::open(root)?;
    let mut found = Vec::new();
    for (what, sql) in REFERENCES {
        let batches = store.sql(sql)?;
        let Some(batch) = batches.first().filter(|b| b.num_rows() > 0) else {
            continue;
        };
        let count = crate::read::int_values(batch.column(0))[0];
        if count > 0 {
            let one = crate::read::string_values(batch.column(1)).remove(0);
            found.push(format!("{count} {what} (one: {one})"));
        }
    }
    Ok(found)
}
