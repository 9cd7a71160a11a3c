//! The protobuf wire format, and the checks upb (the Python protobuf runtime) makes on an OTLP
//! trace request: the same bodies are refused by both decoders.
//!
//! upb refuses: a truncated value, a varint over 10 bytes, a tag over 5 bytes or 32 bits, field
//! number 0, wire types 6 and 7, an unmatched end-group, a string field that is not UTF-8, and
//! messages (or groups) nested more than 100 deep. A known field sent with the wrong wire type is
//! an unknown field to upb, skipped like any other.

#[derive(Debug)]
pub struct Malformed;

pub type Result<T> = std::result::Result<T, Malformed>;

/// upb's default `upb_DecodeOptions_MaxDepth`: submessages below the request.
pub const MAX_DEPTH: i32 = 100;

pub const VARINT: u8 = 0;
pub const FIXED64: u8 = 1;
pub const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
pub const FIXED32: u8 = 5;

pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    #[inline(always)]
    fn varint_of(&mut self, max_bytes: usize) -> Result<u64> {
        // One byte: nearly every tag and length here.
        if let Some(&byte) = self.buf.get(self.pos) {
            if byte < 0x80 {
                self.pos += 1;
                return Ok(u64::from(byte));
            }
        }
        let mut value: u64 = 0;
        for i in 0..max_bytes {
            let byte = *self.buf.get(self.pos).ok_or(Malformed)?;
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Malformed)
    }

    pub fn varint(&mut self) -> Result<u64> {
        self.varint_of(10)
    }

    /// (field number, wire type)
    #[inline(always)]
    pub fn tag(&mut self) -> Result<(u32, u8)> {
        let tag = self.varint_of(5)?;
        if tag > u64::from(u32::MAX) || tag >> 3 == 0 {
            return Err(Malformed);
        }
        Ok(((tag >> 3) as u32, (tag & 7) as u8))
    }

    #[inline(always)]
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.varint_of(5)?;
        if len > (self.buf.len() - self.pos) as u64 {
            return Err(Malformed);
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(&self.buf[start..self.pos])
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let end = self.pos.checked_add(N).ok_or(Malformed)?;
        let raw = self.buf.get(self.pos..end).ok_or(Malformed)?;
        self.pos = end;
        let mut out = [0u8; N];
        out.copy_from_slice(raw);
        Ok(out)
    }

    pub fn fixed64(&mut self) -> Result<u64> {
        self.fixed::<8>().map(u64::from_le_bytes)
    }

    pub fn fixed32(&mut self) -> Result<u32> {
        self.fixed::<4>().map(u32::from_le_bytes)
    }

    /// Skip a value this decoder does not read (`depth`: levels still allowed, for groups).
    pub fn skip(&mut self, field: u32, wire: u8, depth: i32) -> Result<()> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed64().map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.fixed32().map(drop),
            START_GROUP => {
                let depth = depth - 1;
                if depth < 0 {
                    return Err(Malformed);
                }
                loop {
                    let (inner, inner_wire) = self.tag()?;
                    if inner_wire == END_GROUP {
                        return if inner == field { Ok(()) } else { Err(Malformed) };
                    }
                    self.skip(inner, inner_wire, depth)?;
                }
            }
            _ => Err(Malformed),
        }
    }
}

/// The messages of an ExportTraceServiceRequest (opentelemetry-proto's trace, common and
/// resource protos).
#[derive(Clone, Copy)]
pub enum Msg {
    Request,
    ResourceSpans,
    Resource,
    EntityRef,
    ScopeSpans,
    Scope,
    Span,
    Event,
    Link,
    Status,
    KeyValue,
    AnyValue,
    ArrayValue,
    KeyValueList,
}

// The schema's, for tests only.
#[cfg(any(test, feature = "testing"))]
impl Msg {
    const ALL: [Msg; 14] = [
        Msg::Request,
        Msg::ResourceSpans,
        Msg::Resource,
        Msg::EntityRef,
        Msg::ScopeSpans,
        Msg::Scope,
        Msg::Span,
        Msg::Event,
        Msg::Link,
        Msg::Status,
        Msg::KeyValue,
        Msg::AnyValue,
        Msg::ArrayValue,
        Msg::KeyValueList,
    ];

    fn full_name(self) -> &'static str {
        match self {
            Msg::Request => "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
            Msg::ResourceSpans => "opentelemetry.proto.trace.v1.ResourceSpans",
            Msg::Resource => "opentelemetry.proto.resource.v1.Resource",
            Msg::EntityRef => "opentelemetry.proto.common.v1.EntityRef",
            Msg::ScopeSpans => "opentelemetry.proto.trace.v1.ScopeSpans",
            Msg::Scope => "opentelemetry.proto.common.v1.InstrumentationScope",
            Msg::Span => "opentelemetry.proto.trace.v1.Span",
            Msg::Event => "opentelemetry.proto.trace.v1.Span.Event",
            Msg::Link => "opentelemetry.proto.trace.v1.Span.Link",
            Msg::Status => "opentelemetry.proto.trace.v1.Status",
            Msg::KeyValue => "opentelemetry.proto.common.v1.KeyValue",
            Msg::AnyValue => "opentelemetry.proto.common.v1.AnyValue",
            Msg::ArrayValue => "opentelemetry.proto.common.v1.ArrayValue",
            Msg::KeyValueList => "opentelemetry.proto.common.v1.KeyValueList",
        }
    }
}

/// The table below as (message, field number, kind): the tests compare it with the installed
/// opentelemetry-proto's descriptors, so a field added there cannot be missed here.
#[cfg(any(test, feature = "testing"))]
pub fn schema() -> Vec<(&'static str, u32, String)> {
    let mut rows = Vec::new();
    for msg in Msg::ALL {
        for number in 1..=64 {
            if let Some(kind) = field(msg, number) {
                let kind = match kind {
                    Kind::Str => "string".to_string(),
                    Kind::Bytes => "bytes".to_string(),
                    Kind::Varint => "varint".to_string(),
                    Kind::Fixed64 => "fixed64".to_string(),
                    Kind::Fixed32 => "fixed32".to_string(),
                    Kind::Message(inner) => inner.full_name().to_string(),
                };
                rows.push((msg.full_name(), number, kind));
            }
        }
    }
    rows
}

enum Kind {
    Str,
    Bytes,
    Varint,
    Fixed64,
    Fixed32,
    Message(Msg),
}

impl Kind {
    fn wire(&self) -> u8 {
        match self {
            Kind::Str | Kind::Bytes | Kind::Message(_) => LEN,
            Kind::Varint => VARINT,
            Kind::Fixed64 => FIXED64,
            Kind::Fixed32 => FIXED32,
        }
    }
}

/// Every field of every message in the request: what upb checks (UTF-8, nesting) depends on it.
#[inline(always)]
fn field(msg: Msg, number: u32) -> Option<Kind> {
    use Kind::*;
    Some(match (msg, number) {
        (Msg::Request, 1) => Message(Msg::ResourceSpans),
        (Msg::ResourceSpans, 1) => Message(Msg::Resource),
        (Msg::ResourceSpans, 2) => Message(Msg::ScopeSpans),
        (Msg::ResourceSpans, 3) | (Msg::ScopeSpans, 3) => Str,
        (Msg::Resource, 1) => Message(Msg::KeyValue),
        (Msg::Resource, 2) => Varint,
        (Msg::Resource, 3) => Message(Msg::EntityRef),
        (Msg::EntityRef, 1..=4) => Str,
        (Msg::ScopeSpans, 1) => Message(Msg::Scope),
        (Msg::ScopeSpans, 2) => Message(Msg::Span),
        (Msg::Scope, 1 | 2) => Str,
        (Msg::Scope, 3) => Message(Msg::KeyValue),
        (Msg::Scope, 4) => Varint,
        (Msg::Span, 1 | 2 | 4) => Bytes,
        (Msg::Span, 3 | 5) => Str,
        (Msg::Span, 6 | 10 | 12 | 14) => Varint,
        (Msg::Span, 7 | 8) => Fixed64,
        (Msg::Span, 9) => Message(Msg::KeyValue),
        (Msg::Span, 11) => Message(Msg::Event),
        (Msg::Span, 13) => Message(Msg::Link),
        (Msg::Span, 15) => Message(Msg::Status),
        (Msg::Span, 16) => Fixed32,
        (Msg::Event, 1) => Fixed64,
        (Msg::Event, 2) => Str,
        (Msg::Event, 3) => Message(Msg::KeyValue),
        (Msg::Event, 4) => Varint,
        (Msg::Link, 1 | 2) => Bytes,
        (Msg::Link, 3) => Str,
        (Msg::Link, 4) => Message(Msg::KeyValue),
        (Msg::Link, 5) => Varint,
        (Msg::Link, 6) => Fixed32,
        (Msg::Status, 2) => Str,
        (Msg::Status, 3) => Varint,
        (Msg::KeyValue, 1) => Str,
        (Msg::KeyValue, 2) => Message(Msg::AnyValue),
        (Msg::KeyValue, 3) => Varint,
        (Msg::AnyValue, 1) => Str,
        (Msg::AnyValue, 2 | 3 | 8) => Varint,
        (Msg::AnyValue, 4) => Fixed64,
        (Msg::AnyValue, 5) => Message(Msg::ArrayValue),
        (Msg::AnyValue, 6) => Message(Msg::KeyValueList),
        (Msg::AnyValue, 7) => Bytes,
        (Msg::ArrayValue, 1) => Message(Msg::AnyValue),
        (Msg::KeyValueList, 1) => Message(Msg::KeyValue),
        _ => return None,
    })
}

/// Whether upb would parse `buf` as `msg`, `depth` levels of nesting still allowed.
pub fn check(buf: &[u8], msg: Msg, depth: i32) -> Result<()> {
    check_in(buf, msg, depth, false)
}

/// `check` of a request, but for its spans' attributes (Span field 9), whose framing only is
/// checked here: the decoder reads them and checks them as it reads (`Checked`, `utf8`), so
/// that the bulk of a body is not read twice (checking it whole first was a fifth of decoding;
/// this takes a tenth off). The attributes it does not read (a span refused for its ids or its
/// tenant) it hands to `check`.
pub fn check_request(body: &[u8]) -> Result<()> {
    check_in(body, Msg::Request, MAX_DEPTH, true)
}

/// How deep a span's KeyValue is: below the request, its ResourceSpans, ScopeSpans and Span.
pub const SPAN_ATTRIBUTE_DEPTH: i32 = MAX_DEPTH - 4;

fn check_in(buf: &[u8], msg: Msg, depth: i32, spans_attributes_later: bool) -> Result<()> {
    let mut r = Reader::new(buf);
    while !r.done() {
        let (number, wire) = r.tag()?;
        match field(msg, number) {
            Some(kind) if kind.wire() == wire => match kind {
                Kind::Str => drop(utf8(r.bytes()?)?),
                Kind::Bytes => drop(r.bytes()?),
                Kind::Varint => drop(r.varint()?),
                Kind::Fixed64 => drop(r.fixed64()?),
                Kind::Fixed32 => drop(r.fixed32()?),
                Kind::Message(inner) => {
                    let body = r.bytes()?;
                    if depth < 1 {
                        return Err(Malformed);
                    }
                    if !(spans_attributes_later && matches!(msg, Msg::Span) && number == 9) {
                        check_in(body, inner, depth - 1, spans_attributes_later)?;
                    }
                }
            },
            _ => r.skip(number, wire, depth)?,
        }
    }
    Ok(())
}

/// A string field's bytes as text, if they are UTF-8 (upb's check).
#[inline(always)]
pub fn utf8(s: &[u8]) -> Result<&str> {
    // Nearly every string is ASCII (so UTF-8): tested a word at a time first.
    if s.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(s) });
    }
    std::str::from_utf8(s).map_err(|_| Malformed)
}

/// The fields of a message not checked before, framing checked as they are read, as `check`
/// does (groups skipped, `depth` levels of them allowed); the strings and messages among them
/// are the reader's to check (`utf8`, and `check` or a `Checked` of its own).
pub struct Checked<'a> {
    reader: Reader<'a>,
    depth: i32,
}

pub fn checked(buf: &[u8], depth: i32) -> Checked<'_> {
    Checked { reader: Reader::new(buf), depth }
}

impl<'a> Iterator for Checked<'a> {
    type Item = Result<(u32, u8, Value<'a>)>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        next_field(&mut self.reader, self.depth)
    }
}

/// The next field of `r`, groups skipped (`depth` levels of them allowed): what both field
/// iterators read.
#[inline(always)]
fn next_field<'a>(r: &mut Reader<'a>, depth: i32) -> Option<Result<(u32, u8, Value<'a>)>> {
    loop {
        if r.done() {
            return None;
        }
        let (number, wire) = match r.tag() {
            Ok(tag) => tag,
            Err(err) => return Some(Err(err)),
        };
        let value = match wire {
            LEN => r.bytes().map(Value::Len),
            VARINT => r.varint().map(Value::Num),
            FIXED64 => r.fixed64().map(Value::Num),
            FIXED32 => r.fixed32().map(|n| Value::Num(u64::from(n))),
            _ => match r.skip(number, wire, depth) {
                Ok(()) => continue,
                Err(err) => return Some(Err(err)),
            },
        };
        return Some(value.map(|v| (number, wire, v)));
    }
}

/// The fields of a message already checked: (number, wire type, value), the value a slice
/// (LEN) or a number (VARINT, FIXED64, FIXED32); groups are skipped.
pub struct Fields<'a> {
    reader: Reader<'a>,
}

pub enum Value<'a> {
    Len(&'a [u8]),
    Num(u64),
}

pub fn fields(buf: &[u8]) -> Fields<'_> {
    Fields { reader: Reader::new(buf) }
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u32, u8, Value<'a>);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        // Checked before: no error can come; were one to, the fields stop there, not panic.
        next_field(&mut self.reader, MAX_DEPTH)?.ok()
    }
}

#[cfg(test)]
mod tests;
