//! Types of the schema metadata that protoprof's model crates export, and the
//! small runtime support their generated code calls.
//!
//! `cargo xtask codegen` derives this metadata from `proto/` and writes it into
//! each model crate as a `static` [`Schema`]: which proto files the crate holds
//! (with their reflection descriptors), which integer fields point into which
//! table (the *reference table*), and which gRPC services exist (the *service
//! table*; rust-protobuf itself generates no service code). Later layers read
//! these tables instead of keeping hand-written lists.

#![warn(missing_docs)]

use protobuf::reflect::{FileDescriptor, MessageDescriptor};

pub mod dates;
mod ids;
mod index_table;
mod samples;
mod strings;
pub mod threads;
pub mod wire;
pub use ids::{DuplicateId, IdIndex};
pub use index_table::{IndexTable, RunIndex};
pub use samples::{
    DecodedProfileSet, Fields, ProfileSetAndTable, ProfileSetSamples, SampleSource, TableSource,
};
pub use strings::StringTable;

/// Everything a model crate knows about its schemas.
#[derive(Debug)]
pub struct Schema {
    /// Proto files compiled into the crate, in path order.
    pub files: &'static [ProtoFile],
    /// Every integer field that points into a table, in schema order.
    pub references: &'static [FieldRef],
    /// Every gRPC service declared in the crate's files.
    pub services: &'static [Service],
}

/// One compiled `.proto` file.
#[derive(Debug)]
pub struct ProtoFile {
    /// Path relative to `proto/`, e.g. `perftools/profiles/profile.proto`.
    pub path: &'static str,
    /// Protobuf package, e.g. `perftools.profiles`.
    pub package: &'static str,
    /// rust-protobuf's reflection descriptor of the file.
    pub descriptor: fn() -> &'static FileDescriptor,
}

/// How a reference field addresses its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// The value is a 0-based position in the table.
    Position,
    /// The value equals the `id` field of one entry of the table.
    Id,
}

/// A repeated field that holds a table, e.g. `perftools.profiles.Profile.location`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRef {
    /// Full name of the message holding the table.
    pub message: &'static str,
    /// Name of the repeated field.
    pub field: &'static str,
}

/// An integer field whose values point into a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldRef {
    /// Full name of the message declaring the field.
    pub message: &'static str,
    /// Field name.
    pub field: &'static str,
    /// Field number.
    pub number: u32,
    /// Whether every element of a repeated field is a reference.
    pub repeated: bool,
    /// By position or by id.
    pub kind: RefKind,
    /// The table pointed into.
    pub table: TableRef,
    /// `Id` only: 0 means "no reference" (otherwise 0 is invalid, ids being nonzero).
    pub zero_is_none: bool,
    /// `Position` only: a reference into an empty table means "none".
    pub empty_table_is_none: bool,
    /// The field starts a slice whose length is this sibling field.
    pub slice_length: Option<&'static str>,
    /// With `slice_length`: the table the slice addresses when `table` is empty.
    pub table_when_empty: Option<TableRef>,
}

/// A gRPC service.
#[derive(Debug)]
pub struct Service {
    /// Full name, e.g. `quilkin.relay.v1alpha1.AggregatedControlPlaneDiscoveryService`.
    pub full_name: &'static str,
    /// Proto file declaring it, relative to `proto/`.
    pub file: &'static str,
    /// The service's RPCs, in declaration order.
    pub methods: &'static [Method],
}

/// One RPC of a service.
#[derive(Debug)]
pub struct Method {
    /// Method name, e.g. `StreamAggregatedResources`.
    pub name: &'static str,
    /// Full message name of the request.
    pub input: &'static str,
    /// Full message name of the response.
    pub output: &'static str,
    /// The client sends a stream of requests.
    pub client_streaming: bool,
    /// The server sends a stream of responses.
    pub server_streaming: bool,
}

impl Method {
    /// The HTTP/2 path gRPC uses for this method: `/package.Service/Method`.
    pub fn grpc_path(&self, service: &Service) -> String {
        format!("/{}/{}", service.full_name, self.name)
    }
}

impl Schema {
    /// Reflection descriptors of every file of the crate.
    pub fn file_descriptors(&self) -> impl Iterator<Item = &'static FileDescriptor> + '_ {
        self.files.iter().map(|file| (file.descriptor)())
    }

    /// The descriptor of a message (nested ones included) by its full protobuf
    /// name, e.g. `perftools.profiles.Profile` or `.perftools.profiles.Profile`.
    pub fn message_by_full_name(&self, full_name: &str) -> Option<MessageDescriptor> {
        let full_name = full_name.strip_prefix('.').unwrap_or(full_name);
        self.files.iter().find_map(|file| {
            let relative = full_name
                .strip_prefix(file.package)
                .and_then(|rest| rest.strip_prefix('.'))?;
            (file.descriptor)().message_by_package_relative_name(relative)
        })
    }

    /// Every message of the crate, nested ones included, in declaration order
    /// (a message before the ones nested in it).
    /// Map-entry messages are left out: they are not types of their own.
    pub fn messages(&self) -> Vec<MessageDescriptor> {
        let mut out = Vec::new();
        let mut pending: Vec<MessageDescriptor> = Vec::new();
        for file in self.file_descriptors() {
            pending.extend(file.messages().collect::<Vec<_>>().into_iter().rev());
            while let Some(message) = pending.pop() {
                pending.extend(
                    message
                        .nested_messages()
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev(),
                );
                if !message.is_map_entry() {
                    out.push(message);
                }
            }
        }
        out
    }

    /// The references declared by one message.
    pub fn references_of<'a>(
        &'a self,
        message: &'a str,
    ) -> impl Iterator<Item = &'static FieldRef> + 'a {
        self.references.iter().filter(move |r| r.message == message)
    }

    /// A service by full name.
    pub fn service(&self, full_name: &str) -> Option<&'static Service> {
        self.services.iter().find(|s| s.full_name == full_name)
    }
}

/// Writes a message's unknown fields sorted by field number (values of one
/// number keep their order). Generated `write_to` code calls this instead of
/// rust-protobuf's own writer, which follows its hash map's order: canonical
/// encoders write fields by number, so sorting gives back their exact bytes.
pub fn write_unknown_fields_in_order(
    os: &mut protobuf::CodedOutputStream<'_>,
    fields: &protobuf::UnknownFields,
) -> protobuf::Result<()> {
    let mut iter = fields.iter();
    let Some(first) = iter.next() else {
        return Ok(());
    };
    let mut sorted = vec![first];
    sorted.extend(iter);
    sorted.sort_by_key(|(number, _)| *number);
    for (number, value) in sorted {
        os.write_unknown(number, value)?;
    }
    Ok(())
}

/// Where a reference walker is: field names and element indices from the
/// table root, e.g. `sample[3].label[0]`. Pushed and popped as the walker
/// descends, so walking allocates only when the path grows deeper.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefPath {
    segments: Vec<(&'static str, Option<usize>)>,
}

impl RefPath {
    /// The empty path (the table root).
    pub fn new() -> Self {
        RefPath::default()
    }

    /// Descends into `field` (element `index` when repeated).
    #[inline]
    pub fn push(&mut self, field: &'static str, index: Option<usize>) {
        self.segments.push((field, index));
    }

    /// Goes back up one level.
    #[inline]
    pub fn pop(&mut self) {
        self.segments.pop();
    }

    /// The path's fields and element indices, outermost first.
    pub fn segments(&self) -> &[(&'static str, Option<usize>)] {
        &self.segments
    }

    /// The path with one more field appended, as text.
    pub fn with_field(&self, field: &str, index: Option<usize>) -> String {
        let mut text = self.to_string();
        if !text.is_empty() {
            text.push('.');
        }
        text.push_str(field);
        if let Some(i) = index {
            text.push_str(&format!("[{i}]"));
        }
        text
    }
}

impl std::fmt::Display for RefPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (field, index)) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(field)?;
            if let Some(index) = index {
                write!(f, "[{index}]")?;
            }
        }
        Ok(())
    }
}

/// Receives what a generated reference walker (`refs::walk_*` in a model
/// crate) finds. The walkers are the reference table in executable form:
/// typed code generated from the same schema annotations, so every
/// reference is visited without reflection.
///
/// `id` is the reference's position in the crate's `SCHEMA.references`, so a
/// visitor can keep per-reference state in a plain vector.
pub trait ReferenceVisitor {
    /// One value of a reference field (`index`: its element index when repeated).
    fn reference(
        &mut self,
        id: usize,
        reference: &'static FieldRef,
        path: &RefPath,
        index: Option<usize>,
        value: i128,
    );

    /// A slice reference: the start field's value and the length field's value.
    fn slice(
        &mut self,
        id: usize,
        reference: &'static FieldRef,
        path: &RefPath,
        start: u64,
        length: u64,
    );

    /// A message (of type `message`, at `path`) that carries unknown fields.
    fn unknown_fields(
        &mut self,
        message: &'static str,
        path: &RefPath,
        fields: &protobuf::UnknownFields,
    ) {
        let _ = (message, path, fields);
    }

    /// Whether the walker visits the elements of the repeated message field
    /// `field` of a `message` at `path` (it asks before each such field).
    /// A visitor that returns `false` has visited them itself — through the
    /// public per-message `visit_*` functions of `refs.rs` — for example
    /// because it reads them from a source the walked message does not hold
    /// (samples left in the input bytes, decoded one at a time).
    fn walk_elements(
        &mut self,
        message: &'static str,
        field: &'static str,
        path: &mut RefPath,
    ) -> bool {
        let _ = (message, field, path);
        true
    }
}
