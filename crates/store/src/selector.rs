//! Label selectors as Pyroscope and Parca users type them:
//! `{service.name="checkout", host.name=~"eu-.*"}` (braces optional), with
//! `=`, `!=`, `=~` and `!~`; regexes match whole values (Prometheus's
//! rule), and a label a row lacks reads as the empty string.

use datafusion::functions::core::expr_fn::coalesce;
use datafusion::functions_nested::expr_fn::{array_element, map_extract};
use datafusion::logical_expr::{binary_expr, col, lit, Expr, Operator};

use crate::error::StoreError;
use crate::schema::RESOURCE_COLUMNS;

/// How a matcher compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOp {
    /// `=`
    Equal,
    /// `!=`
    NotEqual,
    /// `=~`
    Regex,
    /// `!~`
    NotRegex,
}

/// One `key op "value"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher {
    /// The label or attribute.
    pub key: String,
    /// The comparison.
    pub op: MatchOp,
    /// The value or regex.
    pub value: String,
}

/// Parses a selector; an empty one selects everything.
pub fn parse_selector(text: &str) -> Result<Vec<Matcher>, StoreError> {
    let error = |at: usize, what: &str| {
        StoreError::Query(format!("selector {text:?}: {what} at character {}", at + 1))
    };
    let chars: Vec<char> = text.chars().collect();
    let mut at = 0;
    let skip_space = |at: &mut usize| {
        while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
            *at += 1;
        }
    };
    skip_space(&mut at);
    let braced = chars.get(at) == Some(&'{');
    if braced {
        at += 1;
    }
    let mut matchers = Vec::new();
    loop {
        skip_space(&mut at);
        match chars.get(at) {
            None if !braced => break,
            Some('}') if braced => {
                at += 1;
                skip_space(&mut at);
                if at < chars.len() {
                    return Err(error(at, "text after the closing brace"));
                }
                break;
            }
            None => return Err(error(at, "no closing brace")),
            _ => {}
        }
        let start = at;
        while chars
            .get(at)
            .is_some_and(|c| c.is_alphanumeric() || "_.:-/".contains(*c))
        {
            at += 1;
        }
        if at == start {
            return Err(error(at, "expected a label name"));
        }
        let key: String = chars[start..at].iter().collect();
        skip_space(&mut at);
        let op = match (chars.get(at), chars.get(at + 1)) {
            (Some('='), Some('~')) => MatchOp::Regex,
            (Some('!'), Some('~')) => MatchOp::NotRegex,
            (Some('!'), Some('=')) => MatchOp::NotEqual,
            (Some('='), _) => MatchOp::Equal,
            _ => return Err(error(at, "expected =, !=, =~ or !~")),
        };
        at += if op == MatchOp::Equal { 1 } else { 2 };
        skip_space(&mut at);
        let value = quoted(&chars, &mut at).map_err(|what| error(at, what))?;
        if matches!(op, MatchOp::Regex | MatchOp::NotRegex) {
            regex::Regex::new(&anchored(&value)).map_err(|e| {
                // The regex crate's message draws a caret under the
                // pattern; its last line says what is wrong.
                let message = e.to_string();
                let why = message.lines().map(str::trim).rfind(|l| !l.is_empty());
                let why = why
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
                    .to_string();
                StoreError::Query(format!("selector {text:?}: regex {value:?}: {why}"))
            })?;
        }
        matchers.push(Matcher { key, op, value });
        skip_space(&mut at);
        match chars.get(at) {
            Some(',') => at += 1,
            Some('}') if braced => {}
            None if !braced => {}
            _ => return Err(error(at, "expected , between matchers")),
        }
    }
    Ok(matchers)
}

/// A double-quoted string with `\"`, `\\`, `\n` and `\t` escapes.
fn quoted(chars: &[char], at: &mut usize) -> Result<String, &'static str> {
    if chars.get(*at) != Some(&'"') {
        return Err("expected a double-quoted value");
    }
    *at += 1;
    let mut value = String::new();
    loop {
        match chars.get(*at) {
            None => return Err("unterminated string"),
            Some('"') => {
                *at += 1;
                return Ok(value);
            }
            Some('\\') => {
                value.push(match chars.get(*at + 1) {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some(&c @ ('"' | '\\')) => c,
                    _ => return Err("unknown escape"),
                });
                *at += 2;
            }
            Some(&c) => {
                value.push(c);
                *at += 1;
            }
        }
    }
}

/// A regex that must match the whole value.
fn anchored(regex: &str) -> String {
    format!("^(?:{regex})$")
}

/// The column or map entry a key reads: `service.name` and the resource
/// attributes with columns read those; any other key the sample's label,
/// else the resource attribute, else "".
pub(crate) fn key_expr(key: &str) -> Expr {
    if is_service_key(key) {
        return col("service_name");
    }
    if let Some(column) = resource_column(key) {
        return coalesce(vec![col(column), lit("")]);
    }
    let entry = |map: &str| array_element(map_extract(col(map), lit(key)), lit(1i64));
    coalesce(vec![entry("labels"), entry("resource_attributes"), lit("")])
}

/// Whether `key` names the service (`service.name`, or its column).
pub(crate) fn is_service_key(key: &str) -> bool {
    key == "service.name" || key == "service_name"
}

/// The resource column `key` names (by attribute or column name).
fn resource_column(key: &str) -> Option<&'static str> {
    let named = RESOURCE_COLUMNS
        .iter()
        .find(|(a, c)| *a == key || *c == key);
    named.map(|(_, column)| *column)
}

/// Whether `key` reads a column of its own (the service, a resource
/// column), not a sample's label or another attribute.
pub(crate) fn has_column(key: &str) -> bool {
    is_service_key(key) || resource_column(key).is_some()
}

/// The filter a matcher makes.
pub(crate) fn matcher_expr(m: &Matcher) -> Expr {
    let key = key_expr(&m.key);
    match m.op {
        MatchOp::Equal => key.eq(lit(m.value.clone())),
        MatchOp::NotEqual => key.not_eq(lit(m.value.clone())),
        MatchOp::Regex => binary_expr(key, Operator::RegexMatch, lit(anchored(&m.value))),
        MatchOp::NotRegex => binary_expr(key, Operator::RegexNotMatch, lit(anchored(&m.value))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse_as_pyroscope_users_type_them() {
        let m =
            parse_selector(r#"{service.name="checkout", host.name=~"eu-.*",x!="a\"b"}"#).unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].op, MatchOp::Regex);
        assert_eq!(m[2].value, "a\"b");
        assert_eq!(parse_selector("a!~\"b\"").unwrap()[0].op, MatchOp::NotRegex);
        assert!(parse_selector("").unwrap().is_empty());
        for bad in [
            "{a=\"b\"",
            "a=b",
            "a==\"b\"",
            "=\"b\"",
            "a=~\"(\"",
            "{a=\"b\"} x",
        ] {
            let e = parse_selector(bad).unwrap_err().to_string();
            assert!(e.starts_with("selector"), "{bad}: {e}");
        }
    }
}
