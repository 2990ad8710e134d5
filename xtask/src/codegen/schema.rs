//! Reads a model crate's proto files and derives its schema tables.
//!
//! References come from protoprof's custom field options (declared in
//! `proto/protoprof/options.proto`); their numbers are read from that file's
//! descriptor, so the options are named in one place only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};
use protobuf::descriptor::field_descriptor_proto::{Label, Type};
use protobuf::descriptor::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto};
use protobuf::UnknownValueRef;

/// What the generator knows about one model crate's schemas.
pub struct ParsedCrate {
    /// Files handed to protobuf-codegen: the crate's own plus the support files
    /// they import, sorted by path.
    pub files: Vec<ProtoFileInfo>,
    pub references: Vec<Reference>,
    pub services: Vec<ServiceInfo>,
    /// The crate's own messages (map entries left out), by full name.
    pub messages: BTreeMap<String, MessageInfo>,
}

/// What the reference walkers need to know of a message.
pub struct MessageInfo {
    /// Module protobuf-codegen wrote the message to.
    pub module: String,
    /// Protobuf package of the declaring file.
    pub package: String,
    /// Enclosing message names, outermost first, then the message's own name.
    pub nesting: Vec<String>,
    pub fields: Vec<FieldInfo>,
}

pub struct FieldInfo {
    pub name: String,
    pub number: u32,
    /// A `string` field (for a repeated one: a table of strings).
    pub string: bool,
    pub repeated: bool,
    /// A map field (its entries are not walked).
    pub map: bool,
    /// A member of a real oneof (stored in an enum by rust-protobuf).
    pub in_oneof: bool,
    /// Full name of the message type, for message fields.
    pub message_type: Option<String>,
}

pub struct ProtoFileInfo {
    /// Path relative to `proto/`.
    pub path: String,
    pub package: String,
    /// Its module under `pb/`: the file stem, or, when two files of the
    /// crate share a stem, the parent directory and the stem
    /// (`v1development_profiles`).
    pub module: String,
    /// The name protobuf-codegen gives it (always the stem).
    pub codegen_stem: String,
    /// Which protobuf-codegen run writes it: files that share a stem go to
    /// separate runs, since each run writes `<stem>.rs`.
    pub codegen_run: usize,
    /// Files it imports (paths relative to `proto/`).
    pub imports: Vec<String>,
    /// Annotation files (`protoprof/`), compiled but not part of the public tree.
    pub support: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Position,
    Id,
}

/// A table: a repeated field of a message, by full message name.
pub struct Table {
    pub message: String,
    pub field: String,
}

pub struct Reference {
    pub message: String,
    pub field: String,
    pub number: i32,
    pub repeated: bool,
    pub kind: RefKind,
    pub table: Table,
    pub zero_is_none: bool,
    pub empty_table_is_none: bool,
    pub slice_length: Option<String>,
    pub table_when_empty: Option<Table>,
}

pub struct ServiceInfo {
    pub full_name: String,
    pub file: String,
    pub methods: Vec<MethodInfo>,
}

pub struct MethodInfo {
    pub name: String,
    pub input: String,
    pub output: String,
    pub client_streaming: bool,
    pub server_streaming: bool,
}

const WELL_KNOWN_PREFIX: &str = "google/protobuf/";
const OPTIONS_FILE: &str = "protoprof/options.proto";

/// Parses `inputs` (paths relative to `proto_dir`) and everything they import.
pub fn parse(proto_dir: &Path, inputs: &[String], support_prefix: &str) -> Result<ParsedCrate> {
    let parsed = protobuf_parse::Parser::new()
        .pure()
        .include(proto_dir)
        .inputs(inputs.iter().map(|p| proto_dir.join(p)))
        .parse_and_typecheck()
        .context("the pure-Rust protobuf parser rejected the files")?;
    let by_name: BTreeMap<&str, &FileDescriptorProto> = parsed
        .file_descriptors
        .iter()
        .map(|f| (f.name(), f))
        .collect();

    let mut compiled_files = Vec::new();
    for name in by_name.keys().filter(|n| !n.starts_with(WELL_KNOWN_PREFIX)) {
        let own = inputs.iter().any(|i| i == name);
        ensure!(
            own || name.starts_with(support_prefix),
            "a file of this crate imports proto/{name}, which belongs to another model crate; \
             model crates must not depend on each other"
        );
        compiled_files.push(name.to_string());
    }

    let files = file_infos(&compiled_files, &by_name, support_prefix)?;

    let messages = collect_messages(&files, &by_name);
    let option_numbers = by_name
        .get(OPTIONS_FILE)
        .map(|file| {
            file.extension
                .iter()
                .map(|e| (e.number() as u32, e.name().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let (references, services) =
        collect_references_and_services(&files, &by_name, &option_numbers)?;
    Ok(ParsedCrate {
        files,
        references,
        services,
        messages,
    })
}

/// The crate's own messages (map entries left out), by full name.
fn collect_messages(
    files: &[ProtoFileInfo],
    by_name: &BTreeMap<&str, &FileDescriptorProto>,
) -> BTreeMap<String, MessageInfo> {
    let mut messages = BTreeMap::new();
    for info in files.iter().filter(|f| !f.support) {
        let file = by_name[info.path.as_str()];
        for (full_name, message) in MessageIndex::walk(file) {
            if message.options.as_ref().is_some_and(|o| o.map_entry()) {
                continue;
            }
            let relative = full_name
                .strip_prefix(&format!("{}.", file.package()))
                .unwrap_or(&full_name);
            // A map field's type is a nested entry message marked map_entry.
            let is_map = |f: &FieldDescriptorProto| {
                f.type_() == Type::TYPE_MESSAGE
                    && message.nested_type.iter().any(|n| {
                        n.options.as_ref().is_some_and(|o| o.map_entry())
                            && f.type_name().ends_with(&format!(".{}", n.name()))
                    })
            };
            let fields = message
                .field
                .iter()
                .map(|f| FieldInfo {
                    name: f.name().to_string(),
                    number: f.number() as u32,
                    string: f.type_() == Type::TYPE_STRING,
                    repeated: f.label() == Label::LABEL_REPEATED,
                    map: is_map(f),
                    in_oneof: f.oneof_index.is_some() && !f.proto3_optional(),
                    message_type: (f.type_() == Type::TYPE_MESSAGE)
                        .then(|| f.type_name().trim_start_matches('.').to_string()),
                })
                .collect();
            messages.insert(
                full_name.clone(),
                MessageInfo {
                    module: info.module.clone(),
                    package: file.package().to_string(),
                    nesting: relative.split('.').map(String::from).collect(),
                    fields,
                },
            );
        }
    }

    messages
}

/// Every reference the field options declare (checked), and every service.
fn collect_references_and_services(
    files: &[ProtoFileInfo],
    by_name: &BTreeMap<&str, &FileDescriptorProto>,
    option_numbers: &BTreeMap<u32, String>,
) -> Result<(Vec<Reference>, Vec<ServiceInfo>)> {
    let index = MessageIndex::new(by_name);
    let mut references = Vec::new();
    let mut services = Vec::new();
    for info in files.iter().filter(|f| !f.support) {
        let file = by_name[info.path.as_str()];
        for (full_name, message) in MessageIndex::walk(file) {
            // rust-protobuf encodes fields in declaration order; canonical
            // encoders (C++, Go) write them by number. Declaring them by number
            // keeps our output canonical and byte-identical to theirs.
            if let Some(pair) = message
                .field
                .windows(2)
                .find(|w| w[0].number() > w[1].number())
            {
                bail!(
                    "proto/{}: {full_name}: field `{}` = {} is declared after `{}` = {}; \
                     declare fields in field-number order",
                    info.path,
                    pair[1].name(),
                    pair[1].number(),
                    pair[0].name(),
                    pair[0].number()
                );
            }
            for field in &message.field {
                let location = format!("proto/{}: {}.{}", info.path, full_name, field.name());
                if let Some(reference) = read_reference(
                    &index,
                    option_numbers,
                    file.package(),
                    &full_name,
                    message,
                    field,
                )
                .with_context(|| location.clone())?
                {
                    references.push(reference);
                }
            }
        }
        for service in &file.service {
            services.push(ServiceInfo {
                full_name: format!("{}.{}", file.package(), service.name()),
                file: info.path.clone(),
                methods: service
                    .method
                    .iter()
                    .map(|m| MethodInfo {
                        name: m.name().to_string(),
                        input: m.input_type().trim_start_matches('.').to_string(),
                        output: m.output_type().trim_start_matches('.').to_string(),
                        client_streaming: m.client_streaming(),
                        server_streaming: m.server_streaming(),
                    })
                    .collect(),
            });
        }
    }
    Ok((references, services))
}

/// protobuf-codegen names a file's module after the file stem.
fn stem_of(path: &str) -> String {
    let stem = path.rsplit('/').next().unwrap_or(path);
    stem.strip_suffix(".proto")
        .unwrap_or(stem)
        .replace(['-', '.'], "_")
}

/// Each file's module and codegen run. The n-th file (in path order) of a
/// shared stem goes to run n and gets its parent directory in its module
/// name; the rest keep their stem and go to run 0.
fn file_infos(
    paths: &[String],
    by_name: &BTreeMap<&str, &FileDescriptorProto>,
    support_prefix: &str,
) -> Result<Vec<ProtoFileInfo>> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut shared: BTreeSet<String> = BTreeSet::new();
    for path in paths {
        *seen.entry(stem_of(path)).or_default() += 1;
    }
    shared.extend(seen.iter().filter(|(_, &n)| n > 1).map(|(s, _)| s.clone()));
    seen.clear();
    let mut files = Vec::new();
    for path in paths {
        let stem = stem_of(path);
        let run = seen.entry(stem.clone()).or_default();
        let (module, codegen_run) = if shared.contains(&stem) {
            let parent = path.rsplit('/').nth(1).unwrap_or_default();
            (format!("{}_{stem}", stem_of(parent)), *run)
        } else {
            (stem.clone(), 0)
        };
        *run += 1;
        let file = by_name[path.as_str()];
        files.push(ProtoFileInfo {
            path: path.clone(),
            package: file.package().to_string(),
            module,
            codegen_stem: stem,
            codegen_run,
            imports: file.dependency.clone(),
            support: path.starts_with(support_prefix),
        });
    }
    let mut modules: Vec<&str> = files.iter().map(|f| f.module.as_str()).collect();
    modules.sort_unstable();
    if let Some(pair) = modules.windows(2).find(|w| w[0] == w[1]) {
        bail!(
            "two proto files of one crate map to the module `{}`",
            pair[0]
        );
    }
    Ok(files)
}

/// Every message of the parsed files by full name (without the leading dot).
struct MessageIndex<'a> {
    messages: BTreeMap<String, &'a DescriptorProto>,
}

impl<'a> MessageIndex<'a> {
    fn new(files: &BTreeMap<&str, &'a FileDescriptorProto>) -> Self {
        let mut messages = BTreeMap::new();
        for file in files.values() {
            for (name, message) in Self::walk(file) {
                messages.insert(name, message);
            }
        }
        MessageIndex { messages }
    }

    /// Messages of one file, nested ones included, in declaration order.
    fn walk(file: &'a FileDescriptorProto) -> Vec<(String, &'a DescriptorProto)> {
        let mut out = Vec::new();
        let mut pending: Vec<(String, &DescriptorProto)> = file
            .message_type
            .iter()
            .rev()
            .map(|m| (format!("{}.{}", file.package(), m.name()), m))
            .collect();
        while let Some((name, message)) = pending.pop() {
            pending.extend(
                message
                    .nested_type
                    .iter()
                    .rev()
                    .map(|n| (format!("{name}.{}", n.name()), n)),
            );
            out.push((name, message));
        }
        out
    }

    /// Resolves `Message.field` relative to `package` to a repeated field.
    fn table(&self, package: &str, path: &str) -> Result<(Table, &'a FieldDescriptorProto)> {
        let (message, field) = path
            .rsplit_once('.')
            .with_context(|| format!("table `{path}` is not written `Message.field`"))?;
        let full = format!("{package}.{message}");
        let descriptor = self
            .messages
            .get(&full)
            .with_context(|| format!("table `{path}`: no message {full}"))?;
        let table_field = descriptor
            .field
            .iter()
            .find(|f| f.name() == field)
            .with_context(|| format!("table `{path}`: {full} has no field `{field}`"))?;
        ensure!(
            table_field.label() == Label::LABEL_REPEATED,
            "table `{path}` is not a repeated field"
        );
        Ok((
            Table {
                message: full,
                field: field.to_string(),
            },
            table_field,
        ))
    }

    fn message(&self, type_name: &str) -> Option<&'a DescriptorProto> {
        self.messages
            .get(type_name.trim_start_matches('.'))
            .copied()
    }
}

/// The protoprof options set on one field, by option name.
#[derive(Default)]
struct FieldOptions {
    strings: BTreeMap<String, String>,
    flags: BTreeMap<String, bool>,
}

fn read_options(
    option_numbers: &BTreeMap<u32, String>,
    field: &FieldDescriptorProto,
) -> Result<FieldOptions> {
    let mut options = FieldOptions::default();
    let Some(field_options) = field.options.as_ref() else {
        return Ok(options);
    };
    for (number, value) in field_options.special_fields.unknown_fields() {
        let Some(name) = option_numbers.get(&number) else {
            continue;
        };
        match value {
            UnknownValueRef::LengthDelimited(bytes) => {
                let text = std::str::from_utf8(bytes)
                    .with_context(|| format!("option {name} is not UTF-8"))?;
                options.strings.insert(name.clone(), text.to_string());
            }
            UnknownValueRef::Varint(v) => {
                options.flags.insert(name.clone(), v != 0);
            }
            _ => bail!("option {name} has an unexpected wire type"),
        }
    }
    Ok(options)
}

fn is_integer(field: &FieldDescriptorProto) -> bool {
    matches!(
        field.type_(),
        Type::TYPE_INT32
            | Type::TYPE_INT64
            | Type::TYPE_UINT32
            | Type::TYPE_UINT64
            | Type::TYPE_SINT32
            | Type::TYPE_SINT64
            | Type::TYPE_FIXED32
            | Type::TYPE_FIXED64
            | Type::TYPE_SFIXED32
            | Type::TYPE_SFIXED64
    )
}

fn read_reference(
    index: &MessageIndex<'_>,
    option_numbers: &BTreeMap<u32, String>,
    package: &str,
    message_name: &str,
    message: &DescriptorProto,
    field: &FieldDescriptorProto,
) -> Result<Option<Reference>> {
    let mut options = read_options(option_numbers, field)?;
    let index_into = options.strings.remove("index_into");
    let id_of = options.strings.remove("id_of");
    let slice_length = options.strings.remove("slice_length");
    let when_empty = options.strings.remove("index_into_when_empty");
    let zero_is_none = options.flags.remove("zero_is_none").unwrap_or(false);
    let empty_table_is_none = options.flags.remove("empty_table_is_none").unwrap_or(false);
    if let Some(unhandled) = options.strings.keys().chain(options.flags.keys()).next() {
        bail!(
            "option {unhandled} is declared in {OPTIONS_FILE} but the generator does not handle it"
        );
    }

    let (kind, table_path) = match (index_into, id_of) {
        (None, None) => {
            ensure!(
                slice_length.is_none()
                    && when_empty.is_none()
                    && !zero_is_none
                    && !empty_table_is_none,
                "reference modifiers without index_into or id_of"
            );
            return Ok(None);
        }
        (Some(path), None) => (RefKind::Position, path),
        (None, Some(path)) => (RefKind::Id, path),
        (Some(_), Some(_)) => bail!("both index_into and id_of"),
    };
    ensure!(is_integer(field), "a reference must be an integer field");
    ensure!(
        !zero_is_none || kind == RefKind::Id,
        "zero_is_none goes with id_of"
    );
    ensure!(
        !empty_table_is_none || kind == RefKind::Position,
        "empty_table_is_none goes with index_into"
    );
    ensure!(
        when_empty.is_none() || slice_length.is_some(),
        "index_into_when_empty goes with slice_length"
    );

    let (table, table_field) = index.table(package, &table_path)?;
    if kind == RefKind::Id {
        let entry = index
            .message(table_field.type_name())
            .with_context(|| format!("id_of `{table_path}`: the table does not hold messages"))?;
        ensure!(
            entry
                .field
                .iter()
                .any(|f| f.name() == "id" && is_integer(f)),
            "id_of `{table_path}`: its entries have no integer `id` field"
        );
    }
    if let Some(length) = &slice_length {
        ensure!(
            message
                .field
                .iter()
                .any(|f| f.name() == length && is_integer(f)),
            "slice_length `{length}` is not an integer field of {message_name}"
        );
    }
    let table_when_empty = when_empty
        .map(|path| index.table(package, &path).map(|(t, _)| t))
        .transpose()?;
    Ok(Some(Reference {
        message: message_name.to_string(),
        field: field.name().to_string(),
        number: field.number(),
        repeated: field.label() == Label::LABEL_REPEATED,
        kind,
        table,
        zero_is_none,
        empty_table_is_none,
        slice_length,
        table_when_empty,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A proto tree holding protoprof's real options file and `files`.
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        // The workspace found at run time: a shared target directory can
        // hold a test binary another clone built.
        let options = crate::workspace_root().join("proto").join(OPTIONS_FILE);
        std::fs::create_dir_all(dir.path().join("protoprof")).unwrap();
        std::fs::copy(options, dir.path().join(OPTIONS_FILE)).unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn parse_one(body: &str) -> Result<ParsedCrate> {
        let text = format!(
            "syntax = \"proto3\";\npackage t;\nimport \"protoprof/options.proto\";\n{body}"
        );
        let dir = tree(&[("t/t.proto", &text)]);
        parse(dir.path(), &["t/t.proto".to_string()], "protoprof/")
    }

    fn error_of(body: &str) -> String {
        match parse_one(body) {
            Ok(_) => panic!("accepted: {body}"),
            Err(err) => format!("{err:#}"),
        }
    }

    const TABLES: &str = "message Entry { uint64 id = 1; }\n\
                          message P { repeated Entry entry = 1; repeated string names = 2; int64 one = 3; }\n";

    #[test]
    fn reads_references_services_and_support_files() {
        let parsed = parse_one(&format!(
            "{TABLES}message U {{ int64 name = 1 [(protoprof.index_into) = \"P.names\"];\n\
             repeated uint64 entry_id = 2 [(protoprof.id_of) = \"P.entry\", (protoprof.zero_is_none) = true]; }}\n\
             service S {{ rpc Go(stream U) returns (P); }}"
        ))
        .unwrap();
        let paths: Vec<&str> = parsed.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["protoprof/options.proto", "t/t.proto"]);
        assert!(parsed.files[0].support && !parsed.files[1].support);
        let [name, id] = &parsed.references[..] else {
            panic!("two references expected")
        };
        assert!(
            name.kind == RefKind::Position
                && name.table.message == "t.P"
                && name.table.field == "names"
        );
        assert!(
            id.kind == RefKind::Id && id.repeated && id.zero_is_none && id.table.field == "entry"
        );
        let method = &parsed.services[0].methods[0];
        assert_eq!(
            (method.input.as_str(), method.output.as_str()),
            ("t.U", "t.P")
        );
        assert!(method.client_streaming && !method.server_streaming);
    }

    #[test]
    fn rejects_a_table_that_is_not_repeated() {
        let err = error_of(&format!(
            "{TABLES}message U {{ int64 x = 1 [(protoprof.index_into) = \"P.one\"]; }}"
        ));
        assert!(
            err.contains("t.U.x") && err.contains("is not a repeated field"),
            "{err}"
        );
    }

    #[test]
    fn rejects_an_unknown_table() {
        let err = error_of(&format!(
            "{TABLES}message U {{ int64 x = 1 [(protoprof.index_into) = \"Q.names\"]; }}"
        ));
        assert!(err.contains("no message t.Q"), "{err}");
    }

    #[test]
    fn rejects_id_of_a_table_without_ids() {
        let err = error_of(&format!(
            "{TABLES}message U {{ int64 x = 1 [(protoprof.id_of) = \"P.names\"]; }}"
        ));
        assert!(err.contains("does not hold messages"), "{err}");
    }

    #[test]
    fn rejects_a_reference_that_is_not_an_integer() {
        let err = error_of(&format!(
            "{TABLES}message U {{ string x = 1 [(protoprof.index_into) = \"P.names\"]; }}"
        ));
        assert!(err.contains("must be an integer"), "{err}");
    }

    #[test]
    fn rejects_modifiers_that_do_not_fit_the_kind() {
        let err = error_of(&format!(
            "{TABLES}message U {{ int64 x = 1 [(protoprof.index_into) = \"P.names\", (protoprof.zero_is_none) = true]; }}"
        ));
        assert!(err.contains("zero_is_none goes with id_of"), "{err}");
    }

    #[test]
    fn rejects_fields_out_of_number_order() {
        let err = error_of("message U { int64 b = 2; int64 a = 1; }");
        assert!(err.contains("`a` = 1 is declared after `b` = 2"), "{err}");
    }

    #[test]
    fn rejects_imports_across_model_crates() {
        let dir = tree(&[
            (
                "a/a.proto",
                "syntax = \"proto3\"; package a; import \"b/b.proto\"; message A { b.B b = 1; }",
            ),
            ("b/b.proto", "syntax = \"proto3\"; package b; message B {}"),
        ]);
        let err = parse(dir.path(), &["a/a.proto".to_string()], "protoprof/")
            .err()
            .expect("rejected");
        assert!(
            format!("{err:#}").contains("proto/b/b.proto, which belongs to another model crate")
        );
    }
}
