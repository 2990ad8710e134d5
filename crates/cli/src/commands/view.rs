//! `protoprof view`: the whole message as text format, every reference
//! resolved in a comment beside it (`function_id: 3  # main.compute`),
//! labels, lines and locations summarised on their opening line.

use std::collections::HashMap;
use std::io::Write;

use protobuf::reflect::{MessageDescriptor, RuntimeFieldType, RuntimeType};
use protobuf::MessageDyn;
use protoprof_codec::{text, AutoView, PprofView, SampleSource};
use protoprof_model_meta::Fields;
use protoprof_model_meta::{FieldRef, RefKind, StringTable};
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::ProfilesDictionary;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::Profile as OtlpProfile;
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};

use crate::cli::ViewArgs;
use crate::error::Result;
use crate::io;

pub fn run(args: &ViewArgs) -> Result<u8> {
    let path = args.file.as_path();
    let view = io::decode_view(path, io::read_input(path)?, args.r#type.as_deref())?;
    io::page_with(|out| write_view(view, args, out))?;
    Ok(0)
}

fn write_view(view: AutoView<'static>, args: &ViewArgs, out: &mut dyn Write) -> IoResult {
    match view {
        AutoView::Pprof(view) if view.message.samples_are_bytes() => {
            write_pprof_view(&view.message, args, out)
        }
        AutoView::Pprof(view) => write_message(view.message.profile(), args, out),
        other @ (AutoView::Development(_) | AutoView::Experimental(_) | AutoView::Other(_)) => {
            let other = other.into_decoded();
            write_message(&*other.decoded.message, args, out)
        }
    }
}

/// The whole message as text format.
fn write_message(message: &dyn MessageDyn, args: &ViewArgs, out: &mut dyn Write) -> IoResult {
    let mut sink = Sink::new(message, args, out);
    text::print(message)
        .lines()
        .try_for_each(|line| sink.line(line))
}

/// A pprof profile whose samples are still bytes: its header's text with
/// the samples printed one at a time where they belong (text format orders
/// fields by number: the sample types, field 1, come before them), so no
/// sample is ever held as a model and no text but one block at a time.
fn write_pprof_view(view: &PprofView, args: &ViewArgs, out: &mut dyn Write) -> IoResult {
    let header = view.profile();
    let mut sink = Sink::new(header, args, out);
    let text = text::print(header);
    let mut lines = text.lines().peekable();
    while lines.peek().is_some_and(|l| l.starts_with("sample_type {")) {
        for line in lines.by_ref() {
            sink.line(line)?;
            if line == "}" {
                break;
            }
        }
    }
    let mut buffer = Sample::new();
    for i in 0..view.sample_count() {
        let sample = view.sample_fields(i, Fields::ALL, &mut buffer);
        sink.line("sample {")?;
        for line in text::print(sample).lines() {
            sink.line(&format!("  {line}"))?;
        }
        sink.line("}")?;
    }
    lines.try_for_each(|line| sink.line(line))
}

type IoResult = std::io::Result<()>;

/// Where text lines go: annotated unless `--raw`, cut unless `--full`.
struct Sink<'w> {
    annotator: Option<Annotator>,
    full: bool,
    out: &'w mut dyn Write,
}

impl<'w> Sink<'w> {
    fn new(message: &dyn MessageDyn, args: &ViewArgs, out: &'w mut dyn Write) -> Sink<'w> {
        Sink {
            annotator: (!args.raw).then(|| Annotator::new(message)),
            full: args.full,
            out,
        }
    }

    fn line(&mut self, line: &str) -> IoResult {
        let (out, full) = (&mut *self.out, self.full);
        match &mut self.annotator {
            Some(annotator) => {
                annotator.line(line, &mut |done| io::write_cut_line(out, done, full))
            }
            None => io::write_cut_line(out, line, full),
        }
    }
}

/// The tables one profile's references resolve against.
#[derive(Default)]
struct Tables {
    strings: Vec<String>,
    /// By id for pprof, by position for OTLP.
    functions: HashMap<u64, String>,
    locations: HashMap<u64, String>,
    mappings: HashMap<u64, String>,
    attributes: Vec<String>,
    links: Vec<String>,
    location_indices: Vec<i64>,
    /// v1development: each stack, leaf first.
    stacks: Vec<String>,
}

impl Tables {
    fn string(&self, i: i128) -> String {
        i64::try_from(i)
            .ok()
            .and_then(|i| self.strings.string_at(i))
            .map_or_else(|| "<out of range>".into(), |s| format!("{s:?}"))
    }

    fn from_pprof(p: &Profile) -> Tables {
        let s = |i: i64| p.string(i).to_string();
        let functions: HashMap<u64, String> =
            p.function.iter().map(|f| (f.id, s(f.name))).collect();
        let locations = p
            .location
            .iter()
            .map(|l| {
                (
                    l.id,
                    describe_location(
                        l.line.first().map(|x| (x.function_id, x.line)),
                        &functions,
                        l.address,
                    ),
                )
            })
            .collect();
        Tables {
            strings: p.string_table.clone(),
            locations,
            mappings: p.mapping.iter().map(|m| (m.id, s(m.filename))).collect(),
            functions,
            ..Default::default()
        }
    }

    fn from_otlp(p: &OtlpProfile) -> Tables {
        let s = |i: i64| p.string(i).to_string();
        let functions: HashMap<u64, String> = p
            .function
            .iter()
            .enumerate()
            .map(|(i, f)| (i as u64, s(f.name)))
            .collect();
        let locations = p
            .location
            .iter()
            .enumerate()
            .map(|(i, l)| {
                (
                    i as u64,
                    describe_location(
                        l.line.first().map(|x| (x.function_index, x.line)),
                        &functions,
                        l.address,
                    ),
                )
            })
            .collect();
        Tables {
            strings: p.string_table.clone(),
            locations,
            mappings: p
                .mapping
                .iter()
                .enumerate()
                .map(|(i, m)| (i as u64, s(m.filename)))
                .collect(),
            functions,
            attributes: p
                .attribute_table
                .iter()
                .map(|kv| super::summary::attributes(std::slice::from_ref(kv)).remove(0))
                .collect(),
            links: p
                .link_table
                .iter()
                .map(|l| format!("trace {} span {}", hex(&l.trace_id), hex(&l.span_id)))
                .collect(),
            location_indices: p.location_indices.clone(),
            stacks: Vec::new(),
        }
    }

    /// A v1development message's dictionary: every profile resolves
    /// against it, by position.
    fn from_development(d: &ProfilesDictionary) -> Tables {
        let s = |i: i32| d.string(i64::from(i)).to_string();
        let functions: HashMap<u64, String> = d
            .function_table
            .iter()
            .enumerate()
            .map(|(i, f)| (i as u64, s(f.name_strindex)))
            .collect();
        let locations: HashMap<u64, String> = d
            .location_table
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let first = l.lines.first();
                let line = first.map(|x| (x.function_index as u64, x.line));
                (i as u64, describe_location(line, &functions, l.address))
            })
            .collect();
        let attributes = d
            .attribute_table
            .iter()
            .map(|a| {
                let value = super::summary::any_value_text(a.value.as_ref(), &d.string_table);
                let unit = Some(s(a.unit_strindex)).filter(|u| !u.is_empty());
                let unit = unit.map(|u| format!(" {u}")).unwrap_or_default();
                format!("{}={value}{unit}", s(a.key_strindex))
            })
            .collect();
        let stacks = d
            .stack_table
            .iter()
            .map(|stack| describe_stack(&stack.location_indices, &locations))
            .collect();
        Tables {
            strings: d.string_table.clone(),
            mappings: (d.mapping_table.iter().enumerate())
                .map(|(i, m)| (i as u64, s(m.filename_strindex)))
                .collect(),
            links: d
                .link_table
                .iter()
                .map(|l| format!("trace {} span {}", hex(&l.trace_id), hex(&l.span_id)))
                .collect(),
            functions,
            locations,
            attributes,
            stacks,
            ..Default::default()
        }
    }

    fn resolve(&self, r: &FieldRef, value: i128) -> Option<String> {
        let key = u64::try_from(value).ok();
        let found = |map: &HashMap<u64, String>| {
            key.and_then(|k| map.get(&k))
                .cloned()
                .unwrap_or_else(|| "<missing>".into())
        };
        Some(match r.table.field {
            "string_table" => self.string(value),
            "function" => found(&self.functions),
            "location" => found(&self.locations),
            "mapping" if r.kind == RefKind::Id && value == 0 => "no mapping".into(),
            "mapping" => found(&self.mappings),
            "attribute_table" => key
                .and_then(|k| self.attributes.get(k as usize))
                .cloned()
                .unwrap_or_else(|| "<missing>".into()),
            "link_table" => key
                .and_then(|k| self.links.get(k as usize))
                .cloned()
                .unwrap_or_else(|| "<missing>".into()),
            "function_table" => found(&self.functions),
            "location_table" => found(&self.locations),
            "mapping_table" => found(&self.mappings),
            "stack_table" => key
                .and_then(|k| self.stacks.get(k as usize))
                .cloned()
                .unwrap_or_else(|| "<missing>".into()),
            "location_indices" => {
                let position = key.and_then(|k| self.location_indices.get(k as usize))?;
                format!("stack from {}", found_at(&self.locations, *position))
            }
            _ => return None,
        })
    }
}

fn found_at(map: &HashMap<u64, String>, position: i64) -> String {
    u64::try_from(position)
        .ok()
        .and_then(|p| map.get(&p))
        .cloned()
        .unwrap_or_else(|| "<missing>".into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn describe_location(
    first_line: Option<(u64, i64)>,
    functions: &HashMap<u64, String>,
    address: u64,
) -> String {
    match first_line {
        Some((function, line)) => {
            let name = functions
                .get(&function)
                .cloned()
                .unwrap_or_else(|| "<missing function>".into());
            if line != 0 {
                format!("{name}:{line}")
            } else {
                name
            }
        }
        None => format!("{address:#x}"),
    }
}

/// A stack as its frames, leaf first, the middle left out of long ones.
fn describe_stack(location_indices: &[i32], locations: &HashMap<u64, String>) -> String {
    let frame = |l: &i32| found_at(locations, i64::from(*l));
    let frames: Vec<String> = match location_indices.len() {
        0..=4 => location_indices.iter().map(frame).collect(),
        n => {
            let mut f: Vec<String> = location_indices[..2].iter().map(frame).collect();
            f.push(format!("… {} more", n - 3));
            f.push(frame(&location_indices[n - 1]));
            f
        }
    };
    match frames.is_empty() {
        true => "empty stack".into(),
        false => frames.join(" ← "),
    }
}

/// Every reference field of every schema, by (message, field).
fn reference_table() -> HashMap<(&'static str, &'static str), &'static FieldRef> {
    [
        &protoprof_model_pprof::SCHEMA,
        &protoprof_model_otlp::SCHEMA,
    ]
    .iter()
    .flat_map(|s| s.references)
    .map(|r| ((r.message, r.field), r))
    .collect()
}

struct Block {
    descriptor: Option<MessageDescriptor>,
    open_line: usize,
    fields: Vec<(String, String)>,
    tables: usize,
}

/// Adds `# ...` comments to text format, one line at a time: a block's
/// lines are held until it closes (its opening line gets its summary), and
/// each top-level block goes out as soon as it closes, so a streamed
/// profile is never held whole.
struct Annotator {
    tables: Vec<Tables>,
    references: HashMap<(&'static str, &'static str), &'static FieldRef>,
    stack: Vec<Block>,
    /// The lines of the open top-level block.
    lines: Vec<String>,
    next_otlp_profile: usize,
}

impl Annotator {
    /// An annotator for the text of `message` (of its header, for a view:
    /// the tables are all there is to resolve against).
    fn new(message: &dyn MessageDyn) -> Annotator {
        Annotator {
            tables: tables_of(message),
            references: reference_table(),
            stack: vec![Block {
                descriptor: Some(message.descriptor_dyn()),
                open_line: 0,
                fields: Vec::new(),
                tables: 0,
            }],
            lines: Vec::new(),
            next_otlp_profile: 0,
        }
    }

    /// Takes one line of text format; gives `out` every line that is done.
    fn line(&mut self, line: &str, out: &mut dyn FnMut(&str) -> IoResult) -> IoResult {
        let trimmed = line.trim();
        if let Some(name) = trimmed.strip_suffix(" {") {
            self.open(name, line);
        } else if trimmed == "}" && self.stack.len() > 1 {
            let block = self.stack.pop().expect("an open block");
            if let Some(summary) = summarize(&block, &self.tables) {
                self.lines[block.open_line].push_str(&format!("  # {summary}"));
            }
            self.lines.push(line.to_string());
        } else if let Some((name, value)) = trimmed.split_once(": ") {
            let annotated = self.field(line, name, value);
            self.lines.push(annotated);
        } else {
            self.lines.push(line.to_string());
        }
        if self.stack.len() == 1 {
            for done in self.lines.drain(..) {
                out(&done)?;
            }
        }
        Ok(())
    }

    fn open(&mut self, name: &str, line: &str) {
        let otlp_profile = "opentelemetry.proto.profiles.v1experimental.Profile";
        let current = self.stack.last().expect("the root block");
        let nested = current
            .descriptor
            .as_ref()
            .and_then(|d| d.field_by_name(name))
            .and_then(|f| match f.runtime_field_type() {
                RuntimeFieldType::Singular(RuntimeType::Message(m))
                | RuntimeFieldType::Repeated(RuntimeType::Message(m)) => Some(m),
                _ => None,
            });
        let mut table = current.tables;
        if nested
            .as_ref()
            .is_some_and(|m| m.full_name() == otlp_profile)
        {
            table = self.next_otlp_profile;
            self.next_otlp_profile += 1;
        }
        self.stack.push(Block {
            descriptor: nested,
            open_line: self.lines.len(),
            fields: Vec::new(),
            tables: table,
        });
        self.lines.push(line.to_string());
    }

    /// `line` (`name: value`) with what its reference resolves to.
    fn field(&mut self, line: &str, name: &str, value: &str) -> String {
        let mut out = line.to_string();
        let current = self.stack.last_mut().expect("a block");
        if let (Some(d), Some(t)) = (&current.descriptor, self.tables.get(current.tables)) {
            if let (Some(r), Ok(v)) = (
                self.references.get(&(d.full_name(), name)),
                value.parse::<i128>(),
            ) {
                let is_string = r.table.field == "string_table";
                let unset = r.message.contains(".v1development.");
                // Index 0 into the string table is the empty string, and
                // in v1development index 0 means "unset": say nothing.
                if !((is_string || unset) && v == 0) {
                    if let Some(resolved) = t.resolve(r, v) {
                        out.push_str(&format!("  # {resolved}"));
                    }
                }
            }
        }
        current.fields.push((name.to_string(), value.to_string()));
        out
    }
}

/// The tables each profile in `message` resolves against.
fn tables_of(message: &dyn MessageDyn) -> Vec<Tables> {
    let mut tables: Vec<Tables> = Vec::new();
    if let Some(p) = message.downcast_ref::<Profile>() {
        tables.push(Tables::from_pprof(p));
    } else if let Some(data) = io::development_data(message) {
        let empty = ProfilesDictionary::default();
        tables.push(Tables::from_development(
            data.dictionary.as_ref().unwrap_or(&empty),
        ));
    } else if let Some(data) = io::otlp_data(message) {
        for rp in &data.resource_profiles {
            for sp in &rp.scope_profiles {
                for c in &sp.profiles {
                    tables.push(
                        c.profile
                            .as_ref()
                            .map(Tables::from_otlp)
                            .unwrap_or_default(),
                    );
                }
            }
        }
    }
    tables
}

/// One line for a label (`thread="worker-3"`), a line (`main.compute:42`) or
/// a location (its leaf frame).
fn summarize(block: &Block, tables: &[Tables]) -> Option<String> {
    let descriptor = block.descriptor.as_ref()?;
    let t = tables.get(block.tables)?;
    let field = |name: &str| {
        block
            .fields
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.parse::<i128>().ok())
    };
    let string = |i: Option<i128>| i.map(|i| t.string(i).trim_matches('"').to_string());
    match descriptor.name() {
        "Label" => {
            let key = string(field("key")).unwrap_or_default();
            match (field("str"), field("num")) {
                (Some(s), _) => Some(format!("{key}={:?}", string(Some(s)).unwrap_or_default())),
                (None, num) => {
                    let unit = string(field("num_unit"))
                        .filter(|u| !u.is_empty())
                        .map(|u| format!(" {u}"))
                        .unwrap_or_default();
                    Some(format!("{key}={}{unit}", num.unwrap_or(0)))
                }
            }
        }
        "Line" => {
            let function = field("function_id")
                .or(field("function_index"))
                .unwrap_or(0);
            let name = u64::try_from(function)
                .ok()
                .and_then(|f| t.functions.get(&f))
                .cloned()
                .unwrap_or_default();
            Some(match field("line") {
                Some(line) => format!("{name}:{line}"),
                None => name,
            })
        }
        _ => None,
    }
}
