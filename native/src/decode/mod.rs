//! `TraceDecoder.traces(body)` reads an ExportTraceServiceRequest's bytes (wire/: no protobuf
//! objects), checks ids and tenant, walks attribute values (truncation, depth limit, bytes as
//! base64: attributes.rs), maps each span by the convention rules (conventions/) and builds its
//! SpanFacts (facts/). It returns a `DecodedTraces`: the SpanFacts of the spans mapped and a
//! `Refusal` for each span, or resource's spans, refused, both in request order; a malformed
//! body raises ValueError (monitor/ingest/otlp.py words the error).

mod attributes;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::wire::{self, fields, Value, FIXED32, FIXED64, LEN, VARINT};
use crate::{conventions, facts, guarded, readers};
use attributes::{key_value, string_value, Walk};

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

/// A string field of a body `wire::check_request` accepted, outside spans' attributes.
fn as_str(raw: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(raw).is_ok());
    // SAFETY: `traces` walks only a body that wire::check_request accepted, and it validated as
    // UTF-8 every occurrence of each field read here as a string (Span.5, Status.2, Event.2: a
    // field wire::field declares `Str`, sent as LEN, in the same message). Validating again was
    // 7 % of decoding. Attributes' strings are checked as they are read (`wire::utf8`).
    unsafe { std::str::from_utf8_unchecked(raw) }
}

/// A span, or a resource's spans, that the decoder refused, and why.
#[pyclass(frozen, get_all, module = "monitor._native")]
pub struct Refusal {
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
pub struct DecodedTraces {
    received: u64,
    facts: Py<PyList>,
    refused: Py<PyList>,
    issues: Vec<(String, u64)>,
}

#[pyclass(frozen, module = "monitor._native")]
pub struct TraceDecoder {
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
        let mut events: Vec<conventions::Event> = Vec::new();
        for event in event_bufs {
            let (mut event_name, mut event_kvs) = ("", Vec::new());
            for (n, w, v) in fields(event) {
                match (n, w, v) {
                    (2, LEN, Value::Len(s)) => event_name = as_str(s),
                    (3, LEN, Value::Len(kv)) => event_kvs.push(kv),
                    _ => {}
                }
            }
            if conventions::EVENT_PREFIXES.iter().any(|p| event_name.starts_with(p)) {
                let attributes = walk.attributes(&event_kvs, EVENT_ATTRIBUTE_DEPTH)?;
                events.push((event_name.to_string(), attributes));
            }
        }
        let attributes = walk.attributes(&key_values, wire::SPAN_ATTRIBUTE_DEPTH)?;
        let facts = match guarded(|| conventions::extract(&attributes, name, &events, &mut walk.issues)) {
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
