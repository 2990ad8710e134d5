//! Attribute values that earlier writers stored in Rust's debug form of
//! the generated OTLP messages (`ArrayValue(ArrayValue { values: [AnyValue
//! { value: Some(IntValue(0)), special_fields: … }], … })`), read back and
//! written as users write them: arrays and key-value lists as JSON, as
//! the writers store them now. `store compact` rewrites them.

use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, MapArray, RecordBatch, StringArray, StructArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::error::ArrowError;
use serde_json::Value as Json;

/// What only the debug form of a generated message holds.
const MARK: &str = "special_fields: SpecialFields";

/// `batch` with the debug forms in its `resource_attributes` map written
/// as JSON; as it is when it holds none.
pub(crate) fn readable_attributes(batch: RecordBatch) -> Result<RecordBatch, ArrowError> {
    if !holds_debug_forms(&batch) {
        return Ok(batch);
    }
    let Ok(at) = batch.schema().index_of("resource_attributes") else {
        return Ok(batch);
    };
    let Some(map) = batch.column(at).as_map_opt() else {
        return Ok(batch);
    };
    let Some(values) = map.values().as_string_opt::<i32>() else {
        return Ok(batch);
    };
    let rewritten: StringArray = values
        .iter()
        .map(|v| v.map(|text| readable(text).unwrap_or_else(|| text.to_string())))
        .collect();
    let (fields, mut columns, nulls) = map.entries().clone().into_parts();
    columns[1] = Arc::new(rewritten);
    let entries = StructArray::try_new(fields, columns, nulls)?;
    let DataType::Map(field, ordered) = map.data_type() else {
        return Ok(batch);
    };
    let map = MapArray::try_new(
        Arc::clone(field),
        map.offsets().clone(),
        entries,
        map.nulls().cloned(),
        *ordered,
    )?;
    let mut columns = batch.columns().to_vec();
    columns[at] = Arc::new(map);
    RecordBatch::try_new(batch.schema(), columns)
}

/// Whether `batch`'s `resource_attributes` hold a value in a debug form.
pub(crate) fn holds_debug_forms(batch: &RecordBatch) -> bool {
    let map = batch.column_by_name("resource_attributes");
    let values = map.and_then(|m| m.as_map_opt()).map(|m| m.values());
    let values = values.and_then(|v| v.as_string_opt::<i32>());
    values.is_some_and(|v| v.iter().flatten().any(|text| readable(text).is_some()))
}

/// The JSON text of a value in the debug form, `None` when `text` is not
/// one (a string that merely looks like it stays as it is).
pub(crate) fn readable(text: &str) -> Option<String> {
    if !text.contains(MARK) {
        return None;
    }
    let mut parser = Parser { text, at: 0 };
    let node = parser.node()?;
    parser.skip_space();
    if parser.at != text.len() {
        return None;
    }
    match json_of_variant(&node)? {
        Json::String(s) => Some(s),
        json => Some(json.to_string()),
    }
}

/// A debug form, parsed: `Name(…)`, `Name { field: … }`, `[…]`, a string,
/// or a bare word (a number, `None`, `true`).
#[derive(Debug)]
enum Node {
    Call(String, Vec<Node>),
    Struct(String, Vec<(String, Node)>),
    List(Vec<Node>),
    Str(String),
    Word(String),
}

/// `AnyValue`'s oneof variant (`IntValue(0)`, `ArrayValue(ArrayValue {…})`)
/// as JSON; an unset value is null.
fn json_of_variant(node: &Node) -> Option<Json> {
    let Node::Call(name, args) = node else {
        return match node {
            Node::Word(w) if w == "None" => Some(Json::Null),
            _ => None,
        };
    };
    let [arg] = &args[..] else { return None };
    Some(match (name.as_str(), arg) {
        ("Some", inner) => json_of_variant(inner)?,
        ("StringValue", Node::Str(s)) => Json::String(s.clone()),
        ("IntValue", Node::Word(n)) => Json::from(n.parse::<i64>().ok()?),
        ("BoolValue", Node::Word(b)) => Json::Bool(b.parse().ok()?),
        ("DoubleValue", Node::Word(d)) => double(d)?,
        ("BytesValue", Node::List(bytes)) => {
            use base64::Engine as _;
            let bytes: Option<Vec<u8>> = bytes.iter().map(|b| word(b)?.parse().ok()).collect();
            Json::String(base64::engine::general_purpose::STANDARD.encode(bytes?))
        }
        ("ArrayValue", Node::Struct(_, fields)) => {
            let values = list(field(fields, "values")?)?;
            Json::Array(values.iter().map(any_value).collect::<Option<_>>()?)
        }
        ("KvlistValue", Node::Struct(_, fields)) => {
            let values = list(field(fields, "values")?)?;
            let pairs = values.iter().map(key_value).collect::<Option<Vec<_>>>()?;
            Json::Object(pairs.into_iter().collect())
        }
        ("StringValueStrindex", _) => Json::Null,
        _ => return None,
    })
}

/// An `AnyValue { value: … }` as JSON.
fn any_value(node: &Node) -> Option<Json> {
    let Node::Struct(name, fields) = node else {
        return None;
    };
    (name == "AnyValue").then_some(())?;
    json_of_variant(field(fields, "value")?)
}

/// A `KeyValue { key: "…", value: MessageField(Some(AnyValue {…})) }`.
fn key_value(node: &Node) -> Option<(String, Json)> {
    let Node::Struct(name, fields) = node else {
        return None;
    };
    (name == "KeyValue").then_some(())?;
    let Node::Str(key) = field(fields, "key")? else {
        return None;
    };
    let value = match field(fields, "value")? {
        Node::Call(wrapper, args) if wrapper == "MessageField" => match &args[..] {
            [Node::Call(some, inner)] if some == "Some" => any_value(inner.first()?)?,
            [Node::Word(none)] if none == "None" => Json::Null,
            _ => return None,
        },
        _ => return None,
    };
    Some((key.clone(), value))
}

fn field<'n>(fields: &'n [(String, Node)], name: &str) -> Option<&'n Node> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn list(node: &Node) -> Option<&[Node]> {
    match node {
        Node::List(items) => Some(items),
        _ => None,
    }
}

fn word(node: &Node) -> Option<&str> {
    match node {
        Node::Word(w) => Some(w),
        _ => None,
    }
}

/// A double as Rust's debug form writes it (`1.5`, `NaN`, `inf`).
fn double(text: &str) -> Option<Json> {
    let value: f64 = text.parse().ok()?;
    Some(match serde_json::Number::from_f64(value) {
        Some(n) => Json::Number(n),
        None if value.is_nan() => Json::String("NaN".into()),
        None if value > 0.0 => Json::String("Infinity".into()),
        None => Json::String("-Infinity".into()),
    })
}

/// A recursive-descent reader of Rust's `{:?}` output.
struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn skip_space(&mut self) {
        let trimmed = self.rest().trim_start();
        self.at = self.text.len() - trimmed.len();
    }

    /// Takes `token` (after spaces) if it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        let found = self.rest().starts_with(token);
        if found {
            self.at += token.len();
        }
        found
    }

    fn node(&mut self) -> Option<Node> {
        self.skip_space();
        if self.eat("[") {
            return Some(Node::List(self.items("]", Parser::node)?));
        }
        if self.rest().starts_with('"') {
            return self.string().map(Node::Str);
        }
        let word = self.word()?;
        if self.eat("(") {
            return Some(Node::Call(word, self.items(")", Parser::node)?));
        }
        if self.eat("{") {
            return Some(Node::Struct(word, self.items("}", Parser::field)?));
        }
        Some(Node::Word(word))
    }

    fn field(&mut self) -> Option<(String, Node)> {
        let name = self.word()?;
        self.eat(":").then_some(())?;
        Some((name, self.node()?))
    }

    /// Items read by `item`, separated by commas, up to `close`.
    fn items<T>(&mut self, close: &str, item: fn(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        let mut out = Vec::new();
        loop {
            if self.eat(close) {
                return Some(out);
            }
            out.push(item(self)?);
            if !self.eat(",") {
                return self.eat(close).then_some(out);
            }
        }
    }

    /// A name or a number: letters, digits, `_`, `.`, `-`, `+`.
    fn word(&mut self) -> Option<String> {
        self.skip_space();
        let end = self
            .rest()
            .find(|c: char| !(c.is_alphanumeric() || "_.-+".contains(c)))
            .unwrap_or(self.rest().len());
        let word = self.rest()[..end].to_string();
        (!word.is_empty()).then_some(())?;
        self.at += end;
        Some(word)
    }

    /// A string literal as `{:?}` escapes it.
    fn string(&mut self) -> Option<String> {
        let mut chars = self.rest().char_indices().skip(1);
        let mut out = String::new();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += i + 1;
                    return Some(out);
                }
                '\\' => match chars.next()?.1 {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    'u' => {
                        let mut hex = String::new();
                        for (_, c) in chars.by_ref() {
                            match c {
                                '{' => {}
                                '}' => break,
                                c => hex.push(c),
                            }
                        }
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    other => out.push(other),
                },
                c => out.push(c),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECIAL: &str = "special_fields: SpecialFields { unknown_fields: UnknownFields { fields: None }, cached_size: CachedSize { size: 0 } }";

    fn any(value: &str) -> String {
        format!("AnyValue {{ value: {value}, {SPECIAL} }}")
    }

    /// The forms the writers stored before, as `{:?}` printed them.
    #[test]
    fn debug_forms_read_back_as_json() {
        let array = format!(
            "ArrayValue(ArrayValue {{ values: [{}, {}, {}, {}, {}], {SPECIAL} }})",
            any("Some(IntValue(0))"),
            any("Some(StringValue(\"a \\\"b\\\" \\u{1f600}\"))"),
            any("Some(DoubleValue(1.5))"),
            any("Some(BytesValue([255, 0]))"),
            any("None"),
        );
        assert_eq!(
            readable(&array).as_deref(),
            Some(r#"[0,"a \"b\" 😀",1.5,"/wA=",null]"#)
        );
        let kv = format!(
            "KvlistValue(KeyValueList {{ values: [KeyValue {{ key: \"k\", value: MessageField(Some({})), {SPECIAL} }}, KeyValue {{ key: \"n\", value: MessageField(None), {SPECIAL} }}], {SPECIAL} }})",
            any("Some(BoolValue(false))")
        );
        assert_eq!(readable(&kv).as_deref(), Some(r#"{"k":false,"n":null}"#));
        // Not a debug form: left as it is.
        for plain in [
            "eu-1",
            "[1, 2]",
            "ArrayValue(",
            "special_fields: SpecialFields {",
        ] {
            assert_eq!(readable(plain), None, "{plain}");
        }
    }

    /// The form the old writer printed for the bridge's own attribute.
    #[test]
    fn the_sample_type_order_of_old_stores_reads_back() {
        let stored = format!(
            "ArrayValue(ArrayValue {{ values: [{}, {}], {SPECIAL} }})",
            any("Some(IntValue(0))"),
            any("Some(IntValue(1))")
        );
        assert_eq!(readable(&stored).as_deref(), Some("[0,1]"));
    }
}
