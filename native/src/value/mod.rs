//! A value the convention rules read: a span attribute (string, bool, int, double, bytes as
//! base64, array, key-value list) or a decoded JSON value. Python's reading of the same value is
//! the contract: the rules were first written in Python, and their tests hold Python's answers
//! (`str(x)`, `json.dumps(x, ensure_ascii=False)`, truthiness), so those are given here.

use std::borrow::Cow;
use std::fmt::Write;

use crate::HashMap;

/// Strings borrow from what they were read from (a request's body, a JSON text) where they
/// can: a span's attributes are read by the rules and dropped, and copying them was half of
/// decoding's allocations. What outlives the body (a tool call's arguments) is `owned`.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value<'a> {
    #[default]
    Null,
    Bool(bool),
    Int(i64),
    /// A JSON integer beyond i64, as its digits: Python reads it exactly.
    BigInt(String),
    Float(f64),
    Str(Cow<'a, str>),
    List(Vec<Value<'a>>),
    /// Insertion order; a repeated key keeps its first place and its last value (a dict's).
    Map(Vec<(Cow<'a, str>, Value<'a>)>),
}

/// Entries in the order their keys first came, each key once with its last value (a Python
/// dict's way). A key is found by a hash index once there are more than 16, so that a hostile
/// object of 100,000 keys does not cost 100,000² comparisons.
pub struct Ordered<K, V> {
    items: Vec<(K, V)>,
    index: Option<HashMap<K, usize>>,
}

/// A JSON object's or an attribute list's entries, as `Value::Map` holds them.
pub type MapBuilder<'a> = Ordered<Cow<'a, str>, Value<'a>>;

impl<K, V> Default for Ordered<K, V> {
    fn default() -> Self {
        Ordered { items: Vec::new(), index: None }
    }
}

impl<K: Clone + Eq + std::hash::Hash, V> Ordered<K, V> {
    pub fn with_capacity(capacity: usize) -> Self {
        Ordered { items: Vec::with_capacity(capacity), index: None }
    }

    pub fn insert(&mut self, key: K, value: V) {
        match self.position(&key) {
            Some(n) => self.items[n].1 = value,
            None => {
                self.push(key, value);
            }
        }
    }

    /// The value of `key`, a default one put in its place first if it has none.
    pub fn slot(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let at = match self.position(&key) {
            Some(n) => n,
            None => self.push(key, V::default()),
        };
        &mut self.items[at].1
    }

    /// Where `key` is; past 16 entries, found by the hash index (built then).
    fn position(&mut self, key: &K) -> Option<usize> {
        if self.index.is_none() && self.items.len() >= 16 {
            let index = self.items.iter().enumerate().map(|(n, (k, _))| (k.clone(), n)).collect();
            self.index = Some(index);
        }
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.items.iter().position(|(k, _)| k == key),
        }
    }

    fn push(&mut self, key: K, value: V) -> usize {
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), self.items.len());
        }
        self.items.push((key, value));
        self.items.len() - 1
    }

    pub fn entries(&self) -> &[(K, V)] {
        &self.items
    }

    pub fn finish(self) -> Vec<(K, V)> {
        self.items
    }
}

/// A value kept past what it was read from (a tool call's arguments or result); none: null.
pub fn owned(value: Option<Value<'_>>) -> Value<'static> {
    value.map_or(Value::Null, Value::into_owned)
}

impl<'a> Value<'a> {
    /// The same value owning its strings: to keep past what it was read from.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(n) => Value::Int(n),
            Value::BigInt(digits) => Value::BigInt(digits),
            Value::Float(x) => Value::Float(x),
            Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
            Value::List(items) => Value::List(items.into_iter().map(Value::into_owned).collect()),
            Value::Map(items) => Value::Map(
                items.into_iter().map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned())).collect(),
            ),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s.as_ref()),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Map(items) => items.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python's `bool(x)`.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(n) => *n != 0,
            Value::BigInt(_) => true,
            Value::Float(x) => *x != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(items) => !items.is_empty(),
            Value::Map(items) => !items.is_empty(),
        }
    }

    /// How deep lists and maps nest (a scalar: 0), iteratively: a value may nest thousands deep.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 0usize)];
        while let Some((value, depth)) = stack.pop() {
            match value {
                Value::List(items) => {
                    deepest = deepest.max(depth + 1);
                    stack.extend(items.iter().map(|v| (v, depth + 1)));
                }
                Value::Map(items) => {
                    deepest = deepest.max(depth + 1);
                    stack.extend(items.iter().map(|(_, v)| (v, depth + 1)));
                }
                _ => {}
            }
        }
        deepest
    }

    /// Python's `json.dumps(x, ensure_ascii=False)`: ", " and ": " between items, NaN and
    /// Infinity as Python writes them.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_json(self, &mut out, &PYTHON_JSON);
        out
    }

    /// As pydantic writes a value of an `Any` field: no spaces, a float that is not finite as
    /// null (its `ser_json_inf_nan` default).
    pub fn write_pydantic_json(&self, out: &mut String) {
        write_json(self, out, &PYDANTIC_JSON);
    }
}

/// How a JSON writer spells what Python's writers differ on.
struct Style {
    item_separator: &'static str,
    key_separator: &'static str,
    not_finite_as_null: bool,
}

const PYTHON_JSON: Style = Style { item_separator: ", ", key_separator: ": ", not_finite_as_null: false };
const PYDANTIC_JSON: Style = Style { item_separator: ",", key_separator: ":", not_finite_as_null: true };

fn write_json(value: &Value, out: &mut String, style: &Style) {
    // Iterative over an explicit stack of pending writes: no recursion on deep values.
    enum Step<'a> {
        Value(&'a Value<'a>),
        Text(&'static str),
        Key(&'a str),
    }
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                write_json_str(k, out);
                out.push_str(style.key_separator);
            }
            Step::Value(v) => match v {
                Value::Null => out.push_str("null"),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Int(n) => {
                    let _ = write!(out, "{n}");
                }
                Value::BigInt(digits) => out.push_str(digits),
                Value::Float(x) if style.not_finite_as_null => write_pydantic_float(*x, out),
                Value::Float(x) => write_json_float(*x, out),
                Value::Str(s) => write_json_str(s, out),
                Value::List(items) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(style.item_separator));
                        }
                    }
                }
                Value::Map(items) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    for (i, (key, item)) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(key));
                        if i > 0 {
                            stack.push(Step::Text(style.item_separator));
                        }
                    }
                }
            },
        }
    }
}

/// A float as pydantic writes it: the shortest digits that read back as `x`; null when it is not
/// finite (its `ser_json_inf_nan` default).
pub fn write_pydantic_float(x: f64, out: &mut String) {
    match x.is_finite() {
        true => write_float_repr(x, out),
        false => out.push_str("null"),
    }
}

pub fn write_json_str(s: &str, out: &mut String) {
    // Runs that need no escape are copied whole, found eight bytes at a time: a turn's JSON is
    // mostly document text, and this loop was a third of assembly's tick. Every byte that needs
    // escaping is ASCII, and no byte of a multi-byte UTF-8 character is, so `start..i` always
    // falls on characters.
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            if !needs_escape(u64::from_le_bytes(word.try_into().unwrap_or_default())) {
                i += 8;
                continue;
            }
        }
        let escape = match bytes[i] {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{:04x}", bytes[i]);
        } else {
            out.push_str(escape);
        }
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Whether any of the eight bytes of `word` is below 0x20, a quote or a backslash: a byte that
/// ends a run of plain characters in JSON text, written or read. Each test is the classic "has a
/// zero byte" (x - 0x01..) & !x & 0x80..: exact about whether any byte matches, which is all
/// that is asked.
pub(crate) fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * b'"' as u64);
    let backslash = word ^ (ONES * b'\\' as u64);
    (below_space | (quote.wrapping_sub(ONES) & !quote) | (backslash.wrapping_sub(ONES) & !backslash)) & HIGH
        != 0
}

/// A float as json.dumps writes it: NaN and the infinities by name.
fn write_json_float(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        write_float_repr(x, out);
    }
}

/// Python's `repr(x)` of a finite float, onto `text`: the shortest digits that read back as `x`,
/// written positionally for exponents -4..16 ("0.0001", "1e+16", "1e-05", "3.0").
pub fn write_float_repr(x: f64, text: &mut String) {
    // Rust's `{:e}` gives the shortest round-trip digits: "1.5e-5", "-3e0". (Where 17 are needed,
    // its last may differ from Python's: 847 of 300,000 random floats; the same float either way.)
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let (lead, rest) = mantissa.split_once('.').unwrap_or((mantissa, "")); // one digit, then more
    text.push_str(sign);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            text.push_str("0.");
            (0..-exp - 1).for_each(|_| text.push('0'));
            text.push_str(lead);
            text.push_str(rest);
        } else if exp as usize >= rest.len() {
            text.push_str(lead);
            text.push_str(rest);
            (0..exp as usize - rest.len()).for_each(|_| text.push('0'));
            text.push_str(".0");
        } else {
            text.push_str(lead);
            text.push_str(&rest[..exp as usize]);
            text.push('.');
            text.push_str(&rest[exp as usize..]);
        }
    } else {
        text.push_str(lead);
        if !rest.is_empty() {
            text.push('.');
            text.push_str(rest);
        }
        let _ = write!(text, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

#[cfg(test)]
mod tests;
