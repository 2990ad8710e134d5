//! Loading user schemas: `.proto` files as protoc finds them, or the
//! descriptor sets `protoc --descriptor_set_out` and `buf build` write.

use std::path::{Path, PathBuf};

use protobuf::descriptor::{FileDescriptorProto, FileDescriptorSet};
use protobuf::reflect::{FileDescriptor, MessageDescriptor};
use protobuf::Message;

use crate::limits::Limits;

/// Where the schemas come from.
#[derive(Debug, Clone, Default)]
pub struct SchemaSources {
    /// `.proto` files to load, with everything they import.
    pub protos: Vec<PathBuf>,
    /// Directories imports are found under (protoc's `-I`). When empty,
    /// each `.proto` file's own directory.
    pub proto_paths: Vec<PathBuf>,
    /// Binary `FileDescriptorSet` files.
    pub descriptor_sets: Vec<PathBuf>,
}

impl SchemaSources {
    /// Whether any schema is named.
    pub fn is_empty(&self) -> bool {
        self.protos.is_empty() && self.descriptor_sets.is_empty()
    }
}

/// What went wrong loading a schema; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// A `.proto` file (or one it imports) does not parse or type-check:
    /// the parser's message, led by the file and the line and column it
    /// gives.
    #[error("{0}")]
    Parse(String),
    /// A `.proto` file is not under any of the proto paths.
    #[error("{file}: not under any proto path ({paths}); add its directory with -I")]
    OutsideProtoPaths {
        /// The file.
        file: String,
        /// The proto paths in force.
        paths: String,
    },
    /// A descriptor set cannot be read or is not a `FileDescriptorSet`.
    #[error("{file}: {detail}")]
    DescriptorSet {
        /// The file.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// The files do not make one consistent schema (a missing dependency,
    /// an unresolved type).
    #[error("the schemas do not fit together: {0}")]
    Inconsistent(String),
    /// A message type is not declared by the loaded schemas.
    #[error("`{name}` is not a message of the loaded schemas{}", suggestion(.close))]
    UnknownType {
        /// The name asked for.
        name: String,
        /// Declared names that end like it.
        close: Vec<String>,
    },
}

fn suggestion(close: &[String]) -> String {
    match close {
        [] => String::new(),
        names => format!("; did you mean {}?", names.join(" or ")),
    }
}

/// The files of the user's schemas and every message they declare.
#[derive(Debug, Clone)]
pub struct SchemaSet {
    files: Vec<FileDescriptor>,
    messages: Vec<MessageDescriptor>,
}

impl SchemaSet {
    /// Loads every `.proto` file and descriptor set `sources` names; a
    /// descriptor set larger than `limits.max_input_bytes` is refused.
    pub fn load(sources: &SchemaSources, limits: &Limits) -> Result<SchemaSet, SchemaError> {
        let mut protos = Vec::new();
        for path in &sources.descriptor_sets {
            protos.extend(read_descriptor_set(path, limits)?);
        }
        if !sources.protos.is_empty() {
            protos.extend(parse_protos(&sources.protos, &sources.proto_paths)?);
        }
        SchemaSet::from_protos(deduplicated(protos))
    }

    /// A set made of file descriptors, in any order (dependencies are
    /// resolved among them).
    pub fn from_protos(protos: Vec<FileDescriptorProto>) -> Result<SchemaSet, SchemaError> {
        let files = FileDescriptor::new_dynamic_fds(protos, &[])
            .map_err(|e| SchemaError::Inconsistent(e.to_string()))?;
        let mut messages: Vec<MessageDescriptor> = files
            .iter()
            .flat_map(|f| f.messages())
            .flat_map(nested)
            .collect();
        messages.retain(|m| !m.is_map_entry());
        messages.sort_by(|a, b| a.full_name().cmp(b.full_name()));
        Ok(SchemaSet { files, messages })
    }

    /// The files, as loaded.
    pub fn files(&self) -> &[FileDescriptor] {
        &self.files
    }

    /// Every message type, nested ones included (map entries left out),
    /// sorted by full name.
    pub fn messages(&self) -> &[MessageDescriptor] {
        &self.messages
    }

    /// A message type by full name (a leading `.` is allowed).
    pub fn message(&self, full_name: &str) -> Result<MessageDescriptor, SchemaError> {
        let name = full_name.strip_prefix('.').unwrap_or(full_name);
        if let Some(found) = self.messages.iter().find(|m| m.full_name() == name) {
            return Ok(found.clone());
        }
        let tail = format!(".{}", name.rsplit('.').next().unwrap_or(name));
        let close = self
            .messages
            .iter()
            .map(|m| m.full_name())
            .filter(|n| n.ends_with(&tail) || *n == &tail[1..])
            .map(str::to_string)
            .collect();
        Err(SchemaError::UnknownType {
            name: name.to_string(),
            close,
        })
    }

    /// The message a type URL (`type.googleapis.com/pkg.Msg`) names, if the
    /// set declares it: how `Any` is resolved.
    pub fn message_of_type_url(&self, type_url: &str) -> Option<MessageDescriptor> {
        let name = type_url.rsplit('/').next()?;
        self.message(name).ok()
    }

    /// The set as one `FileDescriptorSet` (what `--descriptor_set_out`
    /// writes with `--include_imports`).
    pub fn to_descriptor_set(&self) -> FileDescriptorSet {
        let mut set = FileDescriptorSet::new();
        set.file = self.files.iter().map(|f| f.proto().clone()).collect();
        set
    }
}

fn nested(message: MessageDescriptor) -> Vec<MessageDescriptor> {
    let mut all = vec![message.clone()];
    for inner in message.nested_messages() {
        all.extend(nested(inner));
    }
    all
}

/// Files loaded twice (from two sets, or a set and a `.proto`) count once.
fn deduplicated(protos: Vec<FileDescriptorProto>) -> Vec<FileDescriptorProto> {
    let mut seen = std::collections::HashSet::new();
    protos
        .into_iter()
        .filter(|p| seen.insert(p.name().to_string()))
        .collect()
}

fn read_descriptor_set(
    path: &Path,
    limits: &Limits,
) -> Result<Vec<FileDescriptorProto>, SchemaError> {
    let error = |detail: String| SchemaError::DescriptorSet {
        file: path.display().to_string(),
        detail,
    };
    let file = std::fs::File::open(path).map_err(|e| error(e.to_string()))?;
    let bytes = crate::binary::read_file(&file, limits.max_input_bytes)
        .map_err(|e| error(e.to_string()))?;
    let (bytes, _) =
        crate::binary::inflate::inflate_input(&bytes, limits).map_err(|e| error(e.to_string()))?;
    let set = FileDescriptorSet::parse_from_bytes(&bytes)
        .map_err(|e| error(format!("not a binary FileDescriptorSet: {e}")))?;
    if set.file.is_empty() {
        return Err(error("a FileDescriptorSet with no files".into()));
    }
    Ok(set.file)
}

/// Parses `protos` as protoc would with `-I` for each of `proto_paths` (or,
/// with none, each file's own directory).
fn parse_protos(
    protos: &[PathBuf],
    proto_paths: &[PathBuf],
) -> Result<Vec<FileDescriptorProto>, SchemaError> {
    let paths: Vec<PathBuf> = match proto_paths {
        [] => protos.iter().map(|p| parent_dir(p)).collect(),
        given => given.to_vec(),
    };
    let protos: Vec<PathBuf> = protos.iter().map(|p| found_under(p, &paths)).collect();
    let protos = protos.as_slice();
    for proto in protos {
        check_under_paths(proto, &paths)?;
    }
    let parsed = protobuf_parse::Parser::new()
        .pure()
        .includes(&paths)
        .inputs(protos)
        .parse_and_typecheck()
        .map_err(|e| {
            let inputs: Vec<String> = protos.iter().map(|p| p.display().to_string()).collect();
            SchemaError::Parse(one_line(&format!("{e:#}"), &inputs.join(", ")))
        })?;
    Ok(parsed.file_descriptors)
}

/// A `--proto` path as protoc takes it: as given when it names a file,
/// else, when relative, the first file of that name under a proto path
/// (`--proto google/protobuf/descriptor.proto -I /usr/include`).
fn found_under(proto: &Path, paths: &[PathBuf]) -> PathBuf {
    if proto.is_file() || proto.is_absolute() {
        return proto.to_path_buf();
    }
    paths
        .iter()
        .map(|dir| dir.join(proto))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| proto.to_path_buf())
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn check_under_paths(proto: &Path, paths: &[PathBuf]) -> Result<(), SchemaError> {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let file = absolute(proto);
    if paths.iter().any(|dir| file.starts_with(absolute(dir))) {
        return Ok(());
    }
    Err(SchemaError::OutsideProtoPaths {
        file: proto.display().to_string(),
        paths: paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// The parser's error on one line, `file:line:column: what`. Its chain of
/// causes (anyhow's alternate display joins them with `: `) names the file
/// (``error in `FILE` ``) and the place (`at L:C`), and ends with what is
/// wrong; `inputs` name the file when the chain does not.
fn one_line(chain: &str, inputs: &str) -> String {
    let causes: Vec<&str> = chain.split(": ").collect();
    let file = causes.iter().find_map(|c| {
        c.split_once("error in `")?
            .1
            .split_once('`')
            .map(|(f, _)| f)
    });
    let place = causes.iter().find_map(|c| {
        let (line, column) = c.strip_prefix("at ")?.split_once(':')?;
        (line.parse::<u32>().is_ok() && column.parse::<u32>().is_ok())
            .then(|| format!("{line}:{column}"))
    });
    let detail = causes.last().copied().unwrap_or_default();
    match (file, place) {
        (Some(file), Some(place)) => format!("{file}:{place}: {detail}"),
        (Some(file), None) => format!("{file}: {detail}"),
        _ => {
            let mut unique: Vec<&str> = Vec::new();
            for cause in causes.into_iter().filter(|c| *c != "using pure parser") {
                if !unique.contains(&cause) {
                    unique.push(cause);
                }
            }
            format!("{inputs}: {}", unique.join(": "))
        }
    }
}
