//! assistant-monitor's OTLP trace decoder and semantic-convention rules, compiled.
//!
//! `TraceDecoder.traces(body)` reads an ExportTraceServiceRequest's bytes (wire.rs: no protobuf
//! objects), checks ids and tenant, walks attribute values (truncation, depth limit, bytes as
//! base64), maps each span by the convention rules (semconv.rs) and builds its SpanFacts
//! (facts.rs). It returns a `DecodedTraces`: the SpanFacts of the spans mapped and a `Refusal`
//! for each span, or resource's spans, refused, both in request order; a malformed body raises
//! ValueError (monitor/ingest/otlp.py words the error).
//! `map_span` and `map_log_events` apply the same rules to values Python decoded (the Python
//! decoder, OTLP/JSON, log records). `Assembler` (assemble.rs) turns spans into turns.

mod assemble;
mod facts;
mod grpc;
mod json;
mod readers;
mod sample;
mod semconv;
#[cfg(feature = "testing")]
mod testing;
mod value;
mod wire;

use std::borrow::Cow;

use libmimalloc_sys as mi;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

// The crate's hash maps (assembly's, a big JSON object's key index) are seeded per map, as
// hashbrown's default: std's SipHash was a tenth of assembly's tick, most of it hashing
// documents' contents to drop the repeated ones.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub(crate) type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

// Decoding a span makes many small strings and vectors, freed together with its turn: mimalloc
// (as pydantic-core and polars use) takes 10-15 % off decoding and assembly.
#[global_allocator]
static GLOBAL: Mimalloc = Mimalloc;

/// mimalloc through its plain entry points wherever a word's alignment will do, as Rust's own
/// System allocator uses malloc: the `mimalloc` crate's allocator calls the aligned ones for
/// every allocation, whose fast path is longer and which take the generic path for anything
/// over 1 KiB. Every mimalloc block is word-aligned.
struct Mimalloc;

const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: mimalloc's functions meet GlobalAlloc's contract; `mi_free` frees blocks of either kind.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        mi::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

use wire::{fields, Value, FIXED32, FIXED64, LEN, VARINT};

const STATUS_ERROR: i32 = 2;
const PARENT_IS_REMOTE: u64 = 0x300; // Span.flags: "has is_remote" and "parent is remote"
                                     // How deep KeyValues nest in a request (wire::check's depth): a resource's below the request,
                                     // ResourceSpans and Resource; an event's below the span's Event.
const RESOURCE_ATTRIBUTE_DEPTH: i32 = wire::MAX_DEPTH - 3;
const EVENT_ATTRIBUTE_DEPTH: i32 = wire::SPAN_ATTRIBUTE_DEPTH - 1;

impl From<wire::Malformed> for PyErr {
    fn from(_: wire::Malformed) -> PyErr {
        PyValueError::new_err("malformed") // monitor/ingest/otlp.py words the error
    }
}

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

/// A string field of a body `wire::check_request` accepted, outside spans' attributes.
fn as_str(raw: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(raw).is_ok());
    // SAFETY: `traces` walks only a body that wire::check_request accepted, and it validated as
    // UTF-8 every occurrence of each field read here as a string (Span.5, Status.2, Event.2: a
    // field wire::field declares `Str`, sent as LEN, in the same message). Validating again was
    // 7 % of decoding. Attributes' strings are checked as they are read (`wire::utf8`).
    unsafe { std::str::from_utf8_unchecked(raw) }
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
fn unread(parts: &[&[u8]], msg: wire::Msg, depth: i32) -> wire::Result<()> {
    parts.iter().try_for_each(|part| wire::check(part, msg, depth - 1))
}

/// The pieces of a message field given more than once (merged in order, as protobuf parsers
/// do): nearly always one, held without allocating.
enum Pieces<'a> {
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

    fn as_slice(&self) -> &[&'a [u8]] {
        match self {
            Pieces::One(piece) => std::slice::from_ref(piece),
            Pieces::Many(pieces) => pieces,
        }
    }
}

/// A KeyValue at nesting `depth`: its key (the last one given) and the pieces of its value,
/// each key given checked UTF-8; the value is checked as it is read (`any_value`).
fn key_value(buf: &[u8], depth: i32) -> wire::Result<(&str, Pieces<'_>)> {
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
fn string_value<'a>(pieces: &[&'a [u8]], depth: i32) -> wire::Result<&'a str> {
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

struct Walk {
    max_len: usize,
    max_depth: usize,
    truncated: u64,
    too_deep: u64,
    issues: readers::Issues, // what the rules could not read, by reason
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
    fn attributes<'a>(
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

/// A span, or a resource's spans, that the decoder refused, and why.
#[pyclass(frozen, get_all, module = "monitor._native")]
struct Refusal {
    /// "invalid_trace_id", "invalid_span_id", "tenant_mismatch", or "mapping_error": the rules
    /// failed on the span (a bug).
    reason: &'static str,
    /// How many spans: 1, or a resource's count when its tenant is not this sidecar's.
    spans: u64,
    /// The span's name, where its id was invalid.
    span_name: Option<String>,
    /// A tenant mismatch where the resource named no tenant at all.
    tenant_missing: bool,
}

/// One request's spans: how many were received, the facts of those mapped and what was
/// refused (each in request order), and the issues found, by reason.
#[pyclass(frozen, get_all, module = "monitor._native")]
struct DecodedTraces {
    received: u64,
    facts: Py<PyList>,
    refused: Py<PyList>,
    issues: Vec<(String, u64)>,
}

#[pyclass(frozen, module = "monitor._native")]
struct TraceDecoder {
    max_len: usize,
    max_depth: usize,
    tenant_id: Option<String>,
    service_key: String,
    tenant_key: String,
}

#[pymethods]
impl TraceDecoder {
    #[new]
    #[pyo3(signature = (*, max_attribute_length, max_value_depth, tenant_id, service_key, tenant_key))]
    fn new(
        max_attribute_length: usize,
        max_value_depth: usize,
        tenant_id: Option<String>,
        service_key: String,
        tenant_key: String,
    ) -> Self {
        TraceDecoder {
            max_len: max_attribute_length,
            max_depth: max_value_depth,
            tenant_id,
            service_key,
            tenant_key,
        }
    }

    fn traces(&self, py: Python<'_>, body: &[u8]) -> PyResult<DecodedTraces> {
        py.allow_threads(|| wire::check_request(body))?;
        let mut walk = Walk {
            max_len: self.max_len,
            max_depth: self.max_depth,
            truncated: 0,
            too_deep: 0,
            issues: readers::Issues::default(),
        };
        let out = Decoded { facts: PyList::empty(py), refused: PyList::empty(py) };
        let mut received: u64 = 0;
        for (number, wire, v) in fields(body) {
            if let (1, LEN, Value::Len(rs)) = (number, wire, v) {
                received += self.resource_spans(py, rs, &mut walk, &out)?;
            }
        }
        let mut issues = walk.issues.0;
        for (reason, count) in [("value_truncated", walk.truncated), ("value_too_deep", walk.too_deep)] {
            if count > 0 {
                issues.push((reason.to_string(), count));
            }
        }
        Ok(DecodedTraces { received, facts: out.facts.unbind(), refused: out.refused.unbind(), issues })
    }
}

/// A request's spans as Python receives them: the facts apart, so that it takes them as they
/// are, without looking at each.
struct Decoded<'py> {
    facts: Bound<'py, PyList>,
    refused: Bound<'py, PyList>,
}

impl TraceDecoder {
    /// One ResourceSpans into `out`; returns its span count (refused ones included).
    fn resource_spans<'py>(
        &self,
        py: Python<'py>,
        buf: &[u8],
        walk: &mut Walk,
        out: &Decoded<'py>,
    ) -> PyResult<u64> {
        let (mut service, mut tenant): (&str, &str) = ("", "");
        let mut count: u64 = 0;
        for (number, wire, v) in fields(buf) {
            match (number, wire, v) {
                (1, LEN, Value::Len(resource)) => {
                    for (n, w, kv) in fields(resource) {
                        if let (1, LEN, Value::Len(kv)) = (n, w, kv) {
                            // Checked already (wire::check_request): Resource's KeyValues.
                            let (key, value) = key_value(kv, RESOURCE_ATTRIBUTE_DEPTH)?;
                            let value_depth = RESOURCE_ATTRIBUTE_DEPTH - 1;
                            if key == self.service_key {
                                service = string_value(value.as_slice(), value_depth)?;
                            } else if key == self.tenant_key {
                                tenant = string_value(value.as_slice(), value_depth)?;
                            }
                        }
                    }
                }
                (2, LEN, Value::Len(scope_spans)) => {
                    count += fields(scope_spans).filter(|f| f.0 == 2 && f.1 == LEN).count() as u64;
                }
                _ => {}
            }
        }
        // `string_value or None`, as the Python decoder reads them.
        let tenant = if tenant.is_empty() { None } else { Some(tenant) };
        if let Some(expected) = &self.tenant_id {
            if tenant != Some(expected.as_str()) {
                // Its spans' attributes are not read, so not checked yet.
                wire::check(buf, wire::Msg::ResourceSpans, wire::MAX_DEPTH - 1)?;
                let refusal = Refusal {
                    reason: "tenant_mismatch",
                    spans: count,
                    span_name: None,
                    tenant_missing: tenant.is_none(),
                };
                out.refused.append(refusal)?;
                return Ok(count);
            }
        }
        let service = (!service.is_empty()).then(|| service.to_string());
        let tenant = tenant.map(str::to_string);
        for (number, wire, v) in fields(buf) {
            if let (2, LEN, Value::Len(scope_spans)) = (number, wire, v) {
                for (n, w, span) in fields(scope_spans) {
                    if let (2, LEN, Value::Len(span)) = (n, w, span) {
                        self.span(py, span, &service, &tenant, walk, out)?;
                    }
                }
            }
        }
        Ok(count)
    }

    fn span<'py>(
        &self,
        py: Python<'py>,
        buf: &[u8],
        service: &Option<String>,
        tenant: &Option<String>,
        walk: &mut Walk,
        out: &Decoded<'py>,
    ) -> PyResult<()> {
        let (mut trace_id, mut span_id, mut parent): (&[u8], &[u8], &[u8]) = (b"", b"", b"");
        let mut name = "";
        let (mut start, mut end, mut flags) = (0u64, 0u64, 0u64);
        let (mut status_code, mut status_message) = (0i32, "");
        // One pass over the span's fields; its attributes and events are read once its ids
        // have passed.
        let (mut key_values, mut event_bufs): (Vec<&[u8]>, Vec<&[u8]>) = (Vec::with_capacity(16), Vec::new()); // most spans carry fewer than 16 attributes
        for (number, wire, v) in fields(buf) {
            match (number, wire, v) {
                (9, LEN, Value::Len(kv)) => key_values.push(kv),
                (11, LEN, Value::Len(event)) => event_bufs.push(event),
                (1, LEN, Value::Len(s)) => trace_id = s,
                (2, LEN, Value::Len(s)) => span_id = s,
                (4, LEN, Value::Len(s)) => parent = s,
                (5, LEN, Value::Len(s)) => name = as_str(s),
                (7, FIXED64, Value::Num(n)) => start = n,
                (8, FIXED64, Value::Num(n)) => end = n,
                (16, FIXED32, Value::Num(n)) => flags = n,
                (15, LEN, Value::Len(status)) => {
                    for (n, w, s) in fields(status) {
                        match (n, w, s) {
                            (2, LEN, Value::Len(s)) => status_message = as_str(s),
                            (3, VARINT, Value::Num(c)) => status_code = c as i32,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        let refused = if trace_id.len() != 16 || trace_id.iter().all(|&b| b == 0) {
            Some("invalid_trace_id")
        } else if span_id.len() != 8 || span_id.iter().all(|&b| b == 0) {
            Some("invalid_span_id")
        } else {
            None
        };
        if let Some(reason) = refused {
            // Its attributes are not read, so not checked yet.
            for kv in &key_values {
                wire::check(kv, wire::Msg::KeyValue, wire::SPAN_ATTRIBUTE_DEPTH)?;
            }
            let refusal =
                Refusal { reason, spans: 1, span_name: Some(name.to_string()), tenant_missing: false };
            return out.refused.append(refusal);
        }
        let mut events: Vec<semconv::Event> = Vec::new();
        for event in event_bufs {
            let (mut event_name, mut event_kvs) = ("", Vec::new());
            for (n, w, v) in fields(event) {
                match (n, w, v) {
                    (2, LEN, Value::Len(s)) => event_name = as_str(s),
                    (3, LEN, Value::Len(kv)) => event_kvs.push(kv),
                    _ => {}
                }
            }
            if semconv::EVENT_PREFIXES.iter().any(|p| event_name.starts_with(p)) {
                let attributes = walk.attributes(&event_kvs, EVENT_ATTRIBUTE_DEPTH)?;
                events.push((event_name.to_string(), attributes));
            }
        }
        let attributes = walk.attributes(&key_values, wire::SPAN_ATTRIBUTE_DEPTH)?;
        let facts = match guarded(|| semconv::extract(&attributes, &events, &mut walk.issues)) {
            Ok(facts) => facts,
            // The span is refused and counted, not the request failed.
            Err(_) => {
                let refusal =
                    Refusal { reason: "mapping_error", spans: 1, span_name: None, tenant_missing: false };
                return out.refused.append(refusal);
            }
        };
        let is_root = parent.is_empty() || flags & PARENT_IS_REMOTE == PARENT_IS_REMOTE;
        let error = if status_code == STATUS_ERROR {
            Some(if status_message.is_empty() { "error" } else { status_message })
        } else {
            None
        };
        let mut span = facts::SpanFacts::new(trace_id, span_id);
        span.parent_span_id = parent.to_vec();
        (span.service, span.tenant) = (service.clone(), tenant.clone());
        span.name = name.to_string();
        (span.start_ns, span.end_ns, span.is_root) = (start, end, is_root);
        span.error = error.map(str::to_string);
        span.set_facts(facts);
        out.facts.append(Bound::new(py, span)?)
    }
}

/// A value as Python: lists, dicts (keys in order), ints of any size, floats.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &value::Value) -> PyResult<Bound<'py, PyAny>> {
    use value::Value as V;
    Ok(match value {
        V::Null => py.None().into_bound(py),
        V::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        V::Int(n) => n.into_pyobject(py)?.into_any(),
        V::BigInt(digits) => py.get_type::<pyo3::types::PyInt>().call1((digits.as_str(),))?,
        V::Float(x) => x.into_pyobject(py)?.into_any(),
        V::Str(s) => PyString::new(py, s).into_any(),
        V::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        V::Map(items) => {
            let dict = PyDict::new(py);
            for (key, item) in items {
                dict.set_item(key, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python value as the rules read it: a string with an unpaired surrogate is mended (U+FFFD),
/// a value of another type is read as its `str`.
pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<value::Value<'static>> {
    use value::Value as V;
    Ok(if obj.is_none() {
        V::Null
    } else if let Ok(b) = obj.downcast_exact::<PyBool>() {
        V::Bool(b.is_true())
    } else if let Ok(s) = obj.downcast::<PyString>() {
        V::Str(s.to_string_lossy().into_owned().into())
    } else if obj.is_instance_of::<pyo3::types::PyInt>() {
        match obj.extract::<i64>() {
            Ok(n) => V::Int(n),
            Err(_) => V::BigInt(obj.str()?.to_string_lossy().into_owned()),
        }
    } else if let Ok(x) = obj.downcast::<pyo3::types::PyFloat>() {
        V::Float(x.value())
    } else if let Ok(list) = obj.downcast::<PyList>() {
        V::List(list.iter().map(|item| from_py(&item)).collect::<PyResult<_>>()?)
    } else if let Ok(tuple) = obj.downcast::<PyTuple>() {
        V::List(tuple.iter().map(|item| from_py(&item)).collect::<PyResult<_>>()?)
    } else if let Ok(dict) = obj.downcast::<PyDict>() {
        let mut items = Vec::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            items.push((key.str()?.to_string_lossy().into_owned().into(), from_py(&item)?));
        }
        V::Map(items)
    } else {
        V::Str(obj.str()?.to_string_lossy().into_owned().into())
    })
}

/// The rules on one span, a panic in them (a bug) made an ordinary error: the span is refused
/// and counted, not the request failed (PyO3's PanicException is no Exception).
fn guarded<T>(rules: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(rules))
        .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the convention rules failed on a span"))
}

fn attrs_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(Cow<'static, str>, value::Value<'static>)>> {
    match from_py(obj)? {
        value::Value::Map(items) => Ok(items),
        _ => Ok(Vec::new()),
    }
}

fn events_from_py(events: &Bound<'_, PyAny>) -> PyResult<Vec<semconv::Event<'static>>> {
    let mut out = Vec::new();
    for event in events.try_iter()? {
        let (name, attrs): (Bound<'_, PyAny>, Bound<'_, PyAny>) = event?.extract()?;
        out.push((name.str()?.to_string_lossy().into_owned(), attrs_from_py(&attrs)?));
    }
    Ok(out)
}

/// The rules (semconv.rs) on a span's attributes and events given as Python values (the
/// Python decoder's, OTLP/JSON's), into `facts`; returns the issues found.
#[pyfunction]
fn map_span(
    facts: &Bound<'_, facts::SpanFacts>,
    attrs: &Bound<'_, PyAny>,
    events: &Bound<'_, PyAny>,
) -> PyResult<Vec<(String, u64)>> {
    let attrs = attrs_from_py(attrs)?;
    let events = events_from_py(events)?;
    let mut issues = readers::Issues::default();
    let mapped = guarded(|| semconv::extract(&attrs, &events, &mut issues))?;
    facts.borrow_mut().set_facts(mapped);
    Ok(issues.0)
}

/// Log records' GenAI events about one span, in order, into its fragment `facts`; returns the
/// issues found.
#[pyfunction]
fn map_log_events(
    facts: &Bound<'_, facts::SpanFacts>,
    events: &Bound<'_, PyAny>,
) -> PyResult<Vec<(String, u64)>> {
    let events = events_from_py(events)?;
    let mut issues = readers::Issues::default();
    let mapped = guarded(|| semconv::extract_events(&events, &mut issues))?;
    facts.borrow_mut().set_facts(mapped);
    Ok(issues.0)
}

/// zlib's CRC-32 of `data`, resumed from `value` (`zlib.crc32(data, value)`), with SIMD: the
/// write-ahead log's record checksum, over every request body it logs.
#[pyfunction]
#[pyo3(signature = (data, value = 0))]
fn crc32(data: &[u8], value: u32) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial(value);
    hasher.update(data);
    hasher.finalize()
}

/// `monitor._native`: the compiled module of the `monitor` package.
#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic's default message may quote the text it failed on: where it happened, only.
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!("monitor._native: a bug at {at}");
    }));
    m.add_class::<TraceDecoder>()?;
    m.add_class::<DecodedTraces>()?;
    m.add_class::<Refusal>()?;
    m.add_class::<grpc::GrpcServer>()?;
    m.add_class::<grpc::GrpcCall>()?;
    m.add_class::<facts::SpanFacts>()?;
    m.add_function(wrap_pyfunction!(facts::count_conventions, m)?)?;
    m.add_function(wrap_pyfunction!(facts::register_models, m)?)?;
    m.add_class::<assemble::Assembler>()?;
    m.add_class::<assemble::Completed>()?;
    m.add_class::<assemble::TurnRecord>()?;
    m.add_class::<sample::TurnSampler>()?;
    m.add_function(wrap_pyfunction!(crc32, m)?)?;
    m.add_function(wrap_pyfunction!(map_span, m)?)?;
    m.add_function(wrap_pyfunction!(map_log_events, m)?)?;
    m.add("EVENT_PREFIXES", semconv::EVENT_PREFIXES.to_vec())?;
    #[cfg(feature = "testing")]
    testing::register(m)?;
    Ok(())
}
