//! Attribute values off the wire: an AnyValue's members merged, a KeyValue's key and value
//! pieces, and the walk that makes them `value::Value`s within the configured bounds.

use std::borrow::Cow;

use crate::wire::{self, Value, FIXED64, LEN, VARINT};
use crate::{readers, value};

/// An AnyValue's oneof after all its occurrences (a repeated message field merges, the last
/// member set wins, as protobuf's parsers do).
enum Any<'a> {
    Unset,
    Str(&'a str),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(&'a [u8]),
    Array(Vec<&'a [u8]>),
    KvList(Vec<&'a [u8]>),
    StrIndex(i32),
}

/// An AnyValue (its pieces, merged in order) at nesting `depth`, checked as `wire::check`
/// would: every string member is UTF-8, and an array or key-value list that a later member
/// replaced is checked whole, though not read.
fn any_value<'a>(pieces: &[&'a [u8]], depth: i32) -> wire::Result<Any<'a>> {
    let mut value = Any::Unset;
    for piece in pieces {
        for field in wire::checked(piece, depth) {
            let (number, wire, v) = field?;
            if matches!((number, wire), (5 | 6, LEN)) && depth < 1 {
                return Err(wire::Malformed); // a list nested past upb's limit
            }
            let next = match (number, wire, v) {
                (1, LEN, Value::Len(s)) => Any::Str(wire::utf8(s)?),
                (2, VARINT, Value::Num(n)) => Any::Bool(n != 0),
                (3, VARINT, Value::Num(n)) => Any::Int(n as i64),
                (4, FIXED64, Value::Num(n)) => Any::Double(f64::from_bits(n)),
                (5, LEN, Value::Len(s)) => {
                    if let Any::Array(parts) = &mut value {
                        parts.push(s);
                        continue;
                    }
                    Any::Array(vec![s])
                }
                (6, LEN, Value::Len(s)) => {
                    if let Any::KvList(parts) = &mut value {
                        parts.push(s);
                        continue;
                    }
                    Any::KvList(vec![s])
                }
                (7, LEN, Value::Len(s)) => Any::Bytes(s),
                (8, VARINT, Value::Num(n)) => Any::StrIndex(n as i32),
                _ => continue,
            };
            // A list replaced by another member is not read: checked here, as upb parses it.
            match &value {
                Any::Array(parts) => unread(parts, wire::Msg::ArrayValue, depth)?,
                Any::KvList(parts) => unread(parts, wire::Msg::KeyValueList, depth)?,
                _ => {}
            }
            value = next;
        }
    }
    Ok(value)
}

/// Parts of a message at nesting `depth` that are not read: checked whole.
pub(super) fn unread(parts: &[&[u8]], msg: wire::Msg, depth: i32) -> wire::Result<()> {
    parts.iter().try_for_each(|part| wire::check(part, msg, depth - 1))
}

/// The pieces of a message field given more than once (merged in order, as protobuf parsers
/// do): nearly always one, held without allocating.
pub(super) enum Pieces<'a> {
    One(&'a [u8]),
    Many(Vec<&'a [u8]>),
}

impl<'a> Pieces<'a> {
    fn push(&mut self, piece: &'a [u8]) {
        *self = match std::mem::replace(self, Pieces::Many(Vec::new())) {
            Pieces::Many(pieces) if pieces.is_empty() => Pieces::One(piece),
            Pieces::Many(mut pieces) => {
                pieces.push(piece);
                Pieces::Many(pieces)
            }
            Pieces::One(first) => Pieces::Many(vec![first, piece]),
        };
    }

    pub(super) fn as_slice(&self) -> &[&'a [u8]] {
        match self {
            Pieces::One(piece) => std::slice::from_ref(piece),
            Pieces::Many(pieces) => pieces,
        }
    }
}

/// A KeyValue at nesting `depth`: its key (the last one given) and the pieces of its value,
/// each key given checked UTF-8; the value is checked as it is read (`any_value`).
pub(super) fn key_value(buf: &[u8], depth: i32) -> wire::Result<(&str, Pieces<'_>)> {
    let mut key = "";
    let mut value = Pieces::Many(Vec::new());
    for field in wire::checked(buf, depth) {
        match field? {
            (1, LEN, Value::Len(s)) => key = wire::utf8(s)?,
            (2, LEN, Value::Len(s)) if depth >= 1 => value.push(s),
            (2, LEN, _) => return Err(wire::Malformed),
            _ => {}
        }
    }
    Ok((key, value))
}

/// The string of an AnyValue, "" when it holds anything else (protobuf's `string_value`).
pub(super) fn string_value<'a>(pieces: &[&'a [u8]], depth: i32) -> wire::Result<&'a str> {
    Ok(match any_value(pieces, depth)? {
        Any::Str(s) => s,
        _ => "",
    })
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as Python's base64.b64encode (a dozen lines: no crate needed).
fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

pub(super) struct Walk {
    pub(super) max_len: usize,
    pub(super) max_depth: usize,
    pub(super) truncated: u64,
    pub(super) too_deep: u64,
    pub(super) issues: readers::Issues, // what the rules could not read, by reason
}

impl Walk {
    /// One AnyValue, `level` arrays and lists down in its attribute and at protobuf nesting
    /// `depth` (checked as it is read): strings cut at max_len characters, arrays and kvlists
    /// below max_depth levels (null beyond), bytes as base64 text. Counts what it cut or dropped.
    fn value<'a>(&mut self, pieces: &[&'a [u8]], level: usize, depth: i32) -> wire::Result<value::Value<'a>> {
        use value::Value as V;
        Ok(match any_value(pieces, depth)? {
            Any::Unset => V::Null,
            Any::Str(s) => {
                if s.len() > self.max_len {
                    if let Some((cut, _)) = s.char_indices().nth(self.max_len) {
                        self.truncated += 1;
                        return Ok(V::Str(Cow::Borrowed(&s[..cut])));
                    }
                }
                V::Str(Cow::Borrowed(s))
            }
            Any::Bool(b) => V::Bool(b),
            Any::Int(n) => V::Int(n),
            Any::StrIndex(n) => V::Int(n.into()),
            Any::Double(x) => V::Float(x),
            Any::Bytes(b) => V::Str(Cow::Owned(base64(b))),
            Any::Array(parts) if level >= self.max_depth => {
                self.too_deep += 1;
                unread(&parts, wire::Msg::ArrayValue, depth)?;
                V::Null
            }
            Any::KvList(parts) if level >= self.max_depth => {
                self.too_deep += 1;
                unread(&parts, wire::Msg::KeyValueList, depth)?;
                V::Null
            }
            Any::Array(parts) => {
                // ArrayValue at depth - 1, its AnyValues at depth - 2.
                let mut items = Vec::new();
                for part in parts {
                    for field in wire::checked(part, depth - 1) {
                        if let (1, LEN, Value::Len(item)) = field? {
                            if depth < 2 {
                                return Err(wire::Malformed);
                            }
                            items.push(self.value(&[item], level + 1, depth - 2)?);
                        }
                    }
                }
                V::List(items)
            }
            Any::KvList(parts) => {
                // KeyValueList at depth - 1, its KeyValues at depth - 2.
                let mut map = value::MapBuilder::default();
                for part in parts {
                    for field in wire::checked(part, depth - 1) {
                        if let (1, LEN, Value::Len(kv)) = field? {
                            if depth < 2 {
                                return Err(wire::Malformed);
                            }
                            let (key, value) = key_value(kv, depth - 2)?;
                            let value = self.value(value.as_slice(), level + 1, depth - 3)?;
                            map.insert(Cow::Borrowed(key), value);
                        }
                    }
                }
                V::Map(map.finish())
            }
        })
    }

    /// A span's or an event's attributes (its KeyValues, at protobuf nesting `depth`, in
    /// order), each key once, as a dict holds them.
    pub(super) fn attributes<'a>(
        &mut self,
        key_values: &[&'a [u8]],
        depth: i32,
    ) -> wire::Result<Vec<(Cow<'a, str>, value::Value<'a>)>> {
        let mut map = value::MapBuilder::with_capacity(key_values.len());
        for kv in key_values {
            let (key, value) = key_value(kv, depth)?;
            let value = self.value(value.as_slice(), 0, depth - 1)?;
            map.insert(Cow::Borrowed(key), value);
        }
        Ok(map.finish())
    }
}
