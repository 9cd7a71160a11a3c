//! Readers shared by the convention rules: JSON, text, numbers, ids, indexed keys (Python's
//! monitor/ingest/semconv/_common.py, whose answers they give). Every value read from a span
//! passes through one of these, so a wrong type (an integer model name, an array where an id
//! belongs, Infinity as a token count, JSON nested thousands deep) is coerced or dropped here and
//! counted in `Issues`, never met later in assembly or judging.

use std::borrow::Cow;
use std::fmt::Write;

use crate::json;
use crate::value::{write_float_repr, Ordered, Value};

pub const MAX_JSON_DEPTH: usize = 32; // deeper tool arguments and message parts are dropped
pub const MAX_TOKENS: i64 = 1 << 31; // a token count beyond this is not a count

/// Things not understood, by reason (the `assistant_span_mapping_issues_total` counter).
#[derive(Default, Debug)]
pub struct Issues(pub Vec<(String, u64)>);

impl Issues {
    pub fn add(&mut self, reason: &str) {
        match self.0.iter_mut().find(|(r, _)| r == reason) {
            Some(slot) => slot.1 += 1,
            None => self.0.push((reason.to_string(), 1)),
        }
    }
}

fn too_deep(value: &Value) -> bool {
    value.depth() > MAX_JSON_DEPTH
}

fn loads<'a>(text: &'a str, issues: &mut Issues) -> Option<Value<'a>> {
    let parsed = json::parse(text).ok()?;
    if parsed.mended {
        issues.add("lone_surrogate");
    }
    Some(parsed.value)
}

/// A JSON-encoded attribute decoded; structured values pass through; garbage counted as
/// `reason`, values nested too deep as `value_too_deep`.
pub fn json_value<'a>(value: Option<&'a Value<'a>>, issues: &mut Issues, reason: &str) -> Option<Value<'a>> {
    let decoded = match value? {
        Value::Str(text) => match loads(text, issues) {
            Some(decoded) => decoded,
            None => {
                issues.add(reason);
                return None;
            }
        },
        other => other.clone(),
    };
    if decoded == Value::Null {
        return None; // JSON's null: no value
    }
    if matches!(decoded, Value::List(_) | Value::Map(_)) && too_deep(&decoded) {
        issues.add("value_too_deep");
        return None;
    }
    Some(decoded)
}

/// Text: a string as it is; parts given as a list, their text joined by lines; anything else
/// as its JSON.
pub fn text(value: Option<&Value>) -> Option<String> {
    text_at(value?, 0)
}

fn text_at(value: &Value, depth: usize) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        Value::List(items) if depth < MAX_JSON_DEPTH => {
            let texts: Vec<String> = items
                .iter()
                .filter_map(|item| match item {
                    Value::Map(_) => {
                        let content = item.get("content").filter(|c| c.truthy());
                        text_at(content.or_else(|| item.get("text"))?, depth + 1)
                    }
                    other => text_at(other, depth + 1),
                })
                .filter(|t| !t.is_empty())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        other => Some(other.to_json()),
    }
}

/// Tool arguments and results: the decoded value when they are JSON, else the value as given;
/// nested deeper than MAX_JSON_DEPTH: counted, and kept as the text it was (dropped if it
/// was not text). A non-finite number is no value.
pub fn maybe_json<'a>(value: Option<&'a Value<'a>>, issues: &mut Issues) -> Option<Value<'a>> {
    match value? {
        Value::Str(text) => match loads(text, issues) {
            None => Some(Value::Str(text.clone())),
            Some(decoded) if matches!(decoded, Value::List(_) | Value::Map(_)) && too_deep(&decoded) => {
                issues.add("value_too_deep");
                Some(Value::Str(text.clone()))
            }
            Some(decoded) => Some(decoded),
        },
        Value::Float(x) if !x.is_finite() => None,
        v @ (Value::List(_) | Value::Map(_)) if too_deep(v) => {
            issues.add("value_too_deep");
            None
        }
        other => Some(other.clone()),
    }
}

/// Python's `float(s)` of a string, finite or not: surrounding whitespace, underscores between
/// digits.
fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.contains("__") || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    t.replace('_', "").parse::<f64>().ok()
}

/// A finite float, or None (NaN and Infinity are not scores).
pub fn float(value: Option<&Value>) -> Option<f64> {
    let number = match value? {
        Value::Int(n) => *n as f64,
        Value::BigInt(digits) => digits.parse::<f64>().ok()?,
        Value::Float(x) => *x,
        Value::Str(s) => parse_float(s)?,
        _ => return None, // None, bools, lists and maps
    };
    number.is_finite().then_some(number)
}

/// A token count: a non-negative integer below MAX_TOKENS, else 0 (counted).
pub fn int(value: Option<&Value>, issues: &mut Issues) -> i64 {
    let Some(value) = value else { return 0 };
    let number = match value {
        Value::Null => return 0,
        Value::Bool(b) => i64::from(*b),
        Value::Int(n) => *n,
        Value::Float(x) if x.is_finite() => x.trunc().clamp(-1.0, MAX_TOKENS as f64) as i64,
        Value::Str(s) => {
            let t = s.trim();
            let plain = !t.starts_with('_') && !t.ends_with('_') && !t.contains("__");
            if plain {
                t.replace('_', "").parse::<i64>().unwrap_or(-1)
            } else {
                -1
            }
        }
        _ => -1, // a big integer, a non-finite float, a list, a map
    };
    if (0..MAX_TOKENS).contains(&number) {
        return number;
    }
    issues.add("invalid_token_count");
    0
}

/// A finite number of sane size: something an id or a name may be coerced from.
fn scalar(value: &Value) -> bool {
    match value {
        Value::Int(_) => true,
        Value::BigInt(digits) => digits.trim_start_matches('-').len() <= 64, // below 10**64
        Value::Float(x) => x.is_finite(),
        _ => false,
    }
}

/// A string-typed field (model, ids): strings pass, numbers are coerced (counted
/// `<name>_coerced`), anything else is dropped (counted `<name>_wrong_type`).
pub fn string(value: Option<&Value>, issues: &mut Issues, name: &str) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::Str(s) => Some(s.to_string()),
        v if scalar(v) => {
            issues.add(&format!("{name}_coerced"));
            Some(py_str(v))
        }
        _ => {
            issues.add(&format!("{name}_wrong_type"));
            None
        }
    }
}

/// Python's `str(x)`.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::Str(s) => s.to_string(),
        other => py_repr(other),
    }
}

/// Python's `repr(x)` (for containers: `str(x)` is their repr). Unicode beyond ASCII is
/// written as it is, as Python does for printable characters.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(value, &mut out);
    out
}

fn write_repr(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::BigInt(digits) => out.push_str(digits),
        Value::Float(x) if x.is_nan() => out.push_str("nan"),
        Value::Float(x) if x.is_infinite() => out.push_str(if *x > 0.0 { "inf" } else { "-inf" }),
        Value::Float(x) => write_float_repr(*x, out),
        Value::Str(s) => {
            let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
            out.push(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if !printable(c) => {
                        let n = c as u32;
                        let _ = match n {
                            0..=0xff => write!(out, "\\x{n:02x}"),
                            0x100..=0xffff => write!(out, "\\u{n:04x}"),
                            _ => write!(out, "\\U{n:08x}"),
                        };
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
        }
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out);
            }
            out.push(']');
        }
        Value::Map(items) => {
            out.push('{');
            for (i, (key, item)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(&Value::Str(key.clone()), out);
                out.push_str(": ");
                write_repr(item, out);
            }
            out.push('}');
        }
    }
}

/// Python's `str.isprintable` for one character, without Unicode's tables: control and format
/// characters, separators other than the space, and private use are not printable (unassigned
/// code points, which Python escapes too, are written as they are).
fn printable(c: char) -> bool {
    let n = c as u32;
    !matches!(n,
        0..=0x1f | 0x7f..=0xa0 | 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x890..=0x891
        | 0x8e2 | 0x1680 | 0x180e | 0x2000..=0x200f | 0x2028..=0x202f | 0x205f..=0x2064
        | 0x2066..=0x206f | 0x3000 | 0xd800..=0xf8ff | 0xfeff | 0xfff9..=0xfffb | 0x110bd
        | 0x110cd | 0x13430..=0x1343f | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a | 0xe0001
        | 0xe0020..=0xe007f | 0xf0000..)
}

/// A member of a map the rules read: a span attribute or a JSON object's member, or one of
/// `indexed`'s groups' (references into the attributes, not copies).
pub trait Entry {
    fn key(&self) -> &str;
    fn value(&self) -> &Value<'_>;
}

impl Entry for (Cow<'_, str>, Value<'_>) {
    fn key(&self) -> &str {
        &self.0
    }
    fn value(&self) -> &Value<'_> {
        &self.1
    }
}

impl Entry for (&str, &Value<'_>) {
    fn key(&self) -> &str {
        self.0
    }
    fn value(&self) -> &Value<'_> {
        self.1
    }
}

/// Unflatten `prefix.N.rest = v` keys into [{rest: v}, ...] ordered by N (N: 1 to 9 ASCII
/// digits).
pub fn indexed<'a, E: Entry>(attrs: &'a [E], prefix: &str) -> Vec<Vec<(&'a str, &'a Value<'a>)>> {
    // Groups and their fields found by hash past 16 (`Ordered`): a hostile span's 40,000
    // fields in one group cost 2.5 s compared one by one.
    let mut groups: Ordered<u32, Ordered<&str, &Value>> = Ordered::default();
    for entry in attrs {
        let (key, value) = (entry.key(), entry.value());
        let Some((index, rest)) = key.strip_prefix(prefix).and_then(|t| t.split_once('.')) else {
            continue;
        };
        if rest.is_empty()
            || index.is_empty()
            || index.len() > 9
            || !index.bytes().all(|b| b.is_ascii_digit())
        {
            continue;
        }
        groups.slot(index.parse().unwrap_or_default()).insert(rest, value);
    }
    let mut groups = groups.finish();
    groups.sort_unstable_by_key(|(number, _)| *number); // each number once
    groups.into_iter().map(|(_, fields)| fields.finish()).collect()
}

/// The id frameworks (LangChain's retrievers, vector stores) keep in a document's metadata.
pub fn metadata_id(metadata: Option<&Value>) -> Option<String> {
    let metadata @ Value::Map(_) = metadata? else { return None };
    ["id", "doc_id", "document_id"].iter().find_map(|key| match metadata.get(key)? {
        v @ (Value::Str(_) | Value::Int(_) | Value::BigInt(_) | Value::Bool(_)) => Some(py_str(v)),
        _ => None,
    })
}

/// A tool's output logged as the LangChain ToolMessage it became, in either serialised form
/// ({"type": "tool", "data": {...}} or {"lc": 1, "id": [..., "ToolMessage"], "kwargs": {...}}):
/// its content, and the error when its status says the tool failed. A failure the tool handled
/// leaves the span's own status OK, so this is the only sign of it. None: not a tool message.
pub fn tool_message<'a>(value: Option<&'a Value<'a>>) -> Option<(Option<Value<'a>>, Option<String>)> {
    let mut value = value?;
    let Value::Map(items) = value else { return None };
    // A LangChain callback's payload: {"output": ..., "kwargs"?: ...}
    if value.get("output").is_some() && items.iter().all(|(k, _)| k == "output" || k == "kwargs") {
        value = value.get("output")?;
        if !matches!(value, Value::Map(_)) {
            return None;
        }
    }
    let body = if value.get("type") == Some(&Value::Str("tool".into()))
        && matches!(value.get("data"), Some(Value::Map(_)))
    {
        value.get("data")?
    } else if matches!(value.get("lc"), Some(Value::Int(1) | Value::Bool(true)) | Some(Value::Float(1.0)))
        && matches!(value.get("id"), Some(Value::List(id)) if id.last() == Some(&Value::Str("ToolMessage".into())))
        && matches!(value.get("kwargs"), Some(Value::Map(_)))
    {
        value.get("kwargs")?
    } else {
        return None;
    };
    let content = body.get("content").cloned();
    let failed = body.get("status") == Some(&Value::Str("error".into()));
    let error = failed.then(|| match content.as_ref().filter(|c| c.truthy()) {
        Some(c) => py_str(c),
        None => "tool error".to_string(),
    });
    Some((content, error))
}
