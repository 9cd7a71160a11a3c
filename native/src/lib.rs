//! assistant-monitor's OTLP trace decoder, compiled: ExportTraceServiceRequest bytes in, the
//! values monitor/ingest/otlp.py maps out. The semantic-convention rules stay in Python
//! (monitor/ingest/semconv/): this module reads the wire, checks ids, walks attribute values
//! (truncation, depth limit, bytes as base64) and builds the dicts the mappers read.
//!
//! `TraceDecoder.traces(body)` returns `(received, items, truncated, too_deep)`; each item, in
//! request order, is one of
//!   (trace_id, span_id, parent_span_id, service, tenant, name, start_ns, end_ns, is_root,
//!    error, attributes, events)                     a span to map (events: [(name, attributes)])
//!   (reason, span name)                             a span refused for its id
//!   ("tenant_mismatch", span count, tenant is None)  a resource's spans refused
//! and a malformed body raises ValueError (otlp.py words the error, as for its own decoder).

mod wire;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};

use wire::{fields, Value, FIXED32, FIXED64, LEN, VARINT};

const STATUS_ERROR: i32 = 2;
const PARENT_IS_REMOTE: u64 = 0x300; // Span.flags: "has is_remote" and "parent is remote"

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

fn as_str(raw: &[u8]) -> &str {
    // UTF-8 was checked by wire::check; an empty string if it somehow was not.
    std::str::from_utf8(raw).unwrap_or_default()
}

fn any_value<'a>(pieces: &[&'a [u8]]) -> Any<'a> {
    let mut value = Any::Unset;
    for piece in pieces {
        for (number, wire, v) in fields(piece) {
            value = match (number, wire, v) {
                (1, LEN, Value::Len(s)) => Any::Str(as_str(s)),
                (2, VARINT, Value::Num(n)) => Any::Bool(n != 0),
                (3, VARINT, Value::Num(n)) => Any::Int(n as i64),
                (4, FIXED64, Value::Num(n)) => Any::Double(f64::from_bits(n)),
                (5, LEN, Value::Len(s)) => match value {
                    Any::Array(mut parts) => {
                        parts.push(s);
                        Any::Array(parts)
                    }
                    _ => Any::Array(vec![s]),
                },
                (6, LEN, Value::Len(s)) => match value {
                    Any::KvList(mut parts) => {
                        parts.push(s);
                        Any::KvList(parts)
                    }
                    _ => Any::KvList(vec![s]),
                },
                (7, LEN, Value::Len(s)) => Any::Bytes(s),
                (8, VARINT, Value::Num(n)) => Any::StrIndex(n as i32),
                _ => continue,
            };
        }
    }
    value
}

/// A KeyValue: its key (the last one given) and the pieces of its value.
fn key_value(buf: &[u8]) -> (&str, Vec<&[u8]>) {
    let mut key = "";
    let mut value = Vec::with_capacity(1);
    for (number, wire, v) in fields(buf) {
        match (number, wire, v) {
            (1, LEN, Value::Len(s)) => key = as_str(s),
            (2, LEN, Value::Len(s)) => value.push(s),
            _ => {}
        }
    }
    (key, value)
}

/// The string of an AnyValue, "" when it holds anything else (protobuf's `string_value`).
fn string_value<'a>(pieces: &[&'a [u8]]) -> &'a str {
    match any_value(pieces) {
        Any::Str(s) => s,
        _ => "",
    }
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as Python's base64.b64encode (a dozen lines: no crate needed).
fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
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
}

impl Walk {
    /// One AnyValue as Python: strings cut at max_len characters, arrays and kvlists below
    /// max_depth (None beyond), bytes as base64 text. Counts what it cut or dropped.
    fn value<'py>(
        &mut self,
        py: Python<'py>,
        pieces: &[&[u8]],
        depth: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match any_value(pieces) {
            Any::Unset => py.None().into_bound(py),
            Any::Str(s) => {
                if s.len() > self.max_len {
                    if let Some((cut, _)) = s.char_indices().nth(self.max_len) {
                        self.truncated += 1;
                        return Ok(PyString::new(py, &s[..cut]).into_any());
                    }
                }
                PyString::new(py, s).into_any()
            }
            Any::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
            Any::Int(n) => n.into_pyobject(py)?.into_any(),
            Any::StrIndex(n) => n.into_pyobject(py)?.into_any(),
            Any::Double(x) => x.into_pyobject(py)?.into_any(),
            Any::Bytes(b) => PyString::new(py, &base64(b)).into_any(),
            Any::Array(_) | Any::KvList(_) if depth >= self.max_depth => {
                self.too_deep += 1;
                py.None().into_bound(py)
            }
            Any::Array(parts) => {
                let list = PyList::empty(py);
                for part in parts {
                    for (number, wire, v) in fields(part) {
                        if let (1, LEN, Value::Len(item)) = (number, wire, v) {
                            list.append(self.value(py, &[item], depth + 1)?)?;
                        }
                    }
                }
                list.into_any()
            }
            Any::KvList(parts) => {
                let dict = PyDict::new(py);
                for part in parts {
                    for (number, wire, v) in fields(part) {
                        if let (1, LEN, Value::Len(kv)) = (number, wire, v) {
                            let (key, value) = key_value(kv);
                            dict.set_item(key, self.value(py, &value, depth + 1)?)?;
                        }
                    }
                }
                dict.into_any()
            }
        })
    }

    /// A span's or an event's attributes (`number`: the repeated KeyValue field) as a dict.
    fn attributes<'py>(
        &mut self,
        py: Python<'py>,
        buf: &[u8],
        number: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (n, wire, v) in fields(buf) {
            if let (true, LEN, Value::Len(kv)) = (n == number, wire, v) {
                let (key, value) = key_value(kv);
                dict.set_item(PyString::new(py, key), self.value(py, &value, 0)?)?;
            }
        }
        Ok(dict)
    }
}

#[pyclass(frozen, module = "assistant_monitor_native")]
struct TraceDecoder {
    max_len: usize,
    max_depth: usize,
    tenant_id: Option<String>,
    service_key: String,
    tenant_key: String,
    event_prefixes: Vec<String>,
}

#[pymethods]
impl TraceDecoder {
    #[new]
    #[pyo3(signature = (*, max_attribute_length, max_value_depth, tenant_id, service_key, tenant_key, event_prefixes))]
    fn new(
        max_attribute_length: usize,
        max_value_depth: usize,
        tenant_id: Option<String>,
        service_key: String,
        tenant_key: String,
        event_prefixes: Vec<String>,
    ) -> Self {
        TraceDecoder {
            max_len: max_attribute_length,
            max_depth: max_value_depth,
            tenant_id,
            service_key,
            tenant_key,
            event_prefixes,
        }
    }

    fn traces<'py>(&self, py: Python<'py>, body: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
        py.allow_threads(|| wire::check(body, wire::Msg::Request, wire::MAX_DEPTH))
            .map_err(|_| PyValueError::new_err("malformed"))?;
        let mut walk = Walk {
            max_len: self.max_len,
            max_depth: self.max_depth,
            truncated: 0,
            too_deep: 0,
        };
        let items = PyList::empty(py);
        let mut received: u64 = 0;
        for (number, wire, v) in fields(body) {
            if let (1, LEN, Value::Len(rs)) = (number, wire, v) {
                received += self.resource_spans(py, rs, &mut walk, &items)?;
            }
        }
        (received, items, walk.truncated, walk.too_deep).into_pyobject(py)
    }
}

impl TraceDecoder {
    /// One ResourceSpans into `items`; returns its span count (refused ones included).
    fn resource_spans<'py>(
        &self,
        py: Python<'py>,
        buf: &[u8],
        walk: &mut Walk,
        items: &Bound<'py, PyList>,
    ) -> PyResult<u64> {
        let (mut service, mut tenant): (&str, &str) = ("", "");
        let mut count: u64 = 0;
        for (number, wire, v) in fields(buf) {
            match (number, wire, v) {
                (1, LEN, Value::Len(resource)) => {
                    for (n, w, kv) in fields(resource) {
                        if let (1, LEN, Value::Len(kv)) = (n, w, kv) {
                            let (key, value) = key_value(kv);
                            if key == self.service_key {
                                service = string_value(&value);
                            } else if key == self.tenant_key {
                                tenant = string_value(&value);
                            }
                        }
                    }
                }
                (2, LEN, Value::Len(scope_spans)) => {
                    count += fields(scope_spans)
                        .filter(|f| f.0 == 2 && f.1 == LEN)
                        .count() as u64;
                }
                _ => {}
            }
        }
        // `string_value or None`, as the Python decoder reads them.
        let tenant = if tenant.is_empty() {
            None
        } else {
            Some(tenant)
        };
        if let Some(expected) = &self.tenant_id {
            if tenant != Some(expected.as_str()) {
                items.append(("tenant_mismatch", count, tenant.is_none()))?;
                return Ok(count);
            }
        }
        let service = if service.is_empty() {
            py.None().into_bound(py)
        } else {
            PyString::new(py, service).into_any()
        };
        let tenant = match tenant {
            None => py.None().into_bound(py),
            Some(t) => PyString::new(py, t).into_any(),
        };
        for (number, wire, v) in fields(buf) {
            if let (2, LEN, Value::Len(scope_spans)) = (number, wire, v) {
                for (n, w, span) in fields(scope_spans) {
                    if let (2, LEN, Value::Len(span)) = (n, w, span) {
                        items.append(self.span(py, span, &service, &tenant, walk)?)?;
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
        service: &Bound<'py, PyAny>,
        tenant: &Bound<'py, PyAny>,
        walk: &mut Walk,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (mut trace_id, mut span_id, mut parent): (&[u8], &[u8], &[u8]) = (b"", b"", b"");
        let mut name = "";
        let (mut start, mut end, mut flags) = (0u64, 0u64, 0u64);
        let (mut status_code, mut status_message) = (0i32, "");
        for (number, wire, v) in fields(buf) {
            match (number, wire, v) {
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
        if trace_id.len() != 16 || trace_id.iter().all(|&b| b == 0) {
            return ("invalid_trace_id", name).into_pyobject(py);
        }
        if span_id.len() != 8 || span_id.iter().all(|&b| b == 0) {
            return ("invalid_span_id", name).into_pyobject(py);
        }
        let events = PyList::empty(py);
        for (number, wire, v) in fields(buf) {
            if let (11, LEN, Value::Len(event)) = (number, wire, v) {
                let mut event_name = "";
                for (n, w, s) in fields(event) {
                    if let (2, LEN, Value::Len(s)) = (n, w, s) {
                        event_name = as_str(s);
                    }
                }
                if self
                    .event_prefixes
                    .iter()
                    .any(|p| event_name.starts_with(p.as_str()))
                {
                    events.append((event_name, walk.attributes(py, event, 3)?))?;
                }
            }
        }
        let attributes = walk.attributes(py, buf, 9)?;
        let is_root = parent.is_empty() || flags & PARENT_IS_REMOTE == PARENT_IS_REMOTE;
        let error = if status_code == STATUS_ERROR {
            Some(if status_message.is_empty() {
                "error"
            } else {
                status_message
            })
        } else {
            None
        };
        let parts: [Bound<'py, PyAny>; 12] = [
            PyBytes::new(py, trace_id).into_any(),
            PyBytes::new(py, span_id).into_any(),
            PyBytes::new(py, parent).into_any(),
            service.clone(),
            tenant.clone(),
            PyString::new(py, name).into_any(),
            start.into_pyobject(py)?.into_any(),
            end.into_pyobject(py)?.into_any(),
            PyBool::new(py, is_root).to_owned().into_any(),
            error.into_pyobject(py)?.into_any(),
            attributes.into_any(),
            events.into_any(),
        ];
        PyTuple::new(py, parts)
    }
}

/// monitor/ingest/semconv/_common.py `_indexed`, the mappers' costliest helper: unflatten
/// `prefix.N.rest = v` keys of a dict into [{rest: v}, ...] ordered by N (N: 1 to 9 ASCII
/// digits). None where Python must decide: not a dict, or a key that is not UTF-8.
#[pyfunction]
fn indexed<'py>(
    py: Python<'py>,
    attrs: &Bound<'py, PyAny>,
    prefix: &str,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let Ok(dict) = attrs.downcast_exact::<PyDict>() else {
        return Ok(None);
    };
    let mut groups: std::collections::BTreeMap<u32, Bound<'py, PyDict>> = Default::default();
    for (key, value) in dict.iter() {
        let Ok(key) = key.downcast::<PyString>() else {
            continue;
        };
        let Ok(key) = key.to_str() else {
            return Ok(None);
        };
        let Some(tail) = key.strip_prefix(prefix) else {
            continue;
        };
        let Some((index, rest)) = tail.split_once('.') else {
            continue;
        };
        if rest.is_empty()
            || index.is_empty()
            || index.len() > 9
            || !index.bytes().all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let n: u32 = index.parse().unwrap_or_default();
        groups
            .entry(n)
            .or_insert_with(|| PyDict::new(py))
            .set_item(rest, value)?;
    }
    Ok(Some(PyList::new(py, groups.into_values())?))
}

/// The protobuf fields the decoder knows, as (message, number, kind): see wire::schema.
#[pyfunction]
fn schema() -> Vec<(&'static str, u32, String)> {
    wire::schema()
}

#[pymodule]
fn assistant_monitor_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TraceDecoder>()?;
    m.add_function(wrap_pyfunction!(indexed, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    Ok(())
}
