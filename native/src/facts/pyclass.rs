//! `SpanFacts` as a Python class: built by keyword, read through properties.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySet};

use super::to_python::{calls_py, document_py, feedback_py, messages_py, opt_messages_py, tool_call_py};
use super::{Document, Feedback, Message, SpanFacts, ToolCall};
use crate::pyvalue::from_py;
use crate::value::Value;

const ROLES: [&str; 6] = ["llm", "retrieval", "tool", "agent", "chain", "other"];

// -- from Python ------------------------------------------------------------------------------

fn opt_string(obj: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
    Ok(match from_py(obj)? {
        Value::Null => None,
        Value::Str(s) => Some(s.into_owned()),
        other => Some(crate::readers::py_str(&other)),
    })
}

fn tool_call_from(obj: &Bound<'_, PyAny>) -> PyResult<ToolCall> {
    Ok(ToolCall {
        name: opt_string(&obj.getattr(intern!(obj.py(), "name"))?)?.unwrap_or_default(),
        arguments: from_py(&obj.getattr(intern!(obj.py(), "arguments"))?)?,
        result: from_py(&obj.getattr(intern!(obj.py(), "result"))?)?,
        error: opt_string(&obj.getattr(intern!(obj.py(), "error"))?)?,
        call_id: opt_string(&obj.getattr(intern!(obj.py(), "call_id"))?)?,
    })
}

fn calls_from(obj: &Bound<'_, PyAny>) -> PyResult<Vec<ToolCall>> {
    obj.try_iter()?.map(|c| tool_call_from(&c?)).collect()
}

fn messages_from(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Message>> {
    let py = obj.py();
    obj.try_iter()?
        .map(|m| {
            let m = m?;
            Ok(Message {
                role: opt_string(&m.getattr(intern!(py, "role"))?)?.unwrap_or_default(),
                content: opt_string(&m.getattr(intern!(py, "content"))?)?,
                tool_calls: calls_from(&m.getattr(intern!(py, "tool_calls"))?)?,
                tool_call_id: opt_string(&m.getattr(intern!(py, "tool_call_id"))?)?,
            })
        })
        .collect()
}

fn opt<T>(obj: &Bound<'_, PyAny>, read: impl Fn(&Bound<'_, PyAny>) -> PyResult<T>) -> PyResult<Option<T>> {
    if obj.is_none() {
        Ok(None)
    } else {
        read(obj).map(Some)
    }
}

#[pymethods]
impl SpanFacts {
    /// By keyword, as monitor.model's dataclass was: ids, timing and status, and any of the
    /// mapped fields (role, conventions, messages as Message, tool calls as ToolCall, ...).
    #[new]
    #[pyo3(signature = (*, span_id, trace_id=b"".to_vec(), parent_span_id=b"".to_vec(),
                        service=None, tenant=None, name=String::new(), start_ns=0, end_ns=0,
                        error=None, is_root=false, is_log_fragment=false, **mapped))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        span_id: Vec<u8>,
        trace_id: Vec<u8>,
        parent_span_id: Vec<u8>,
        service: Option<String>,
        tenant: Option<String>,
        name: String,
        start_ns: u64,
        end_ns: u64,
        error: Option<String>,
        is_root: bool,
        is_log_fragment: bool,
        mapped: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut s = SpanFacts::new(&trace_id, &span_id);
        s.parent_span_id = parent_span_id;
        (s.service, s.tenant, s.name, s.error) = (service, tenant, name, error);
        (s.start_ns, s.end_ns, s.is_root, s.is_log_fragment) = (start_ns, end_ns, is_root, is_log_fragment);
        for (key, value) in mapped.into_iter().flat_map(|d| d.iter()) {
            let key: String = key.extract()?;
            let f = &mut s.facts;
            match key.as_str() {
                "role" => {
                    let role: String = value.extract()?;
                    f.role = ROLES
                        .iter()
                        .find(|r| **r == role)
                        .ok_or_else(|| PyValueError::new_err(format!("unknown role '{role}'")))?;
                }
                "conventions" => {
                    for name in value.try_iter()? {
                        s.add_convention(&name?.extract::<String>()?);
                    }
                }
                "input_messages" => f.input_messages = opt(&value, messages_from)?,
                "output_messages" => f.output_messages = opt(&value, messages_from)?,
                "event_inputs" => f.event_inputs = messages_from(&value)?,
                "event_outputs" => f.event_outputs = messages_from(&value)?,
                "input_text" => f.input_text = opt_string(&value)?,
                "output_text" => f.output_text = opt_string(&value)?,
                "model" => f.model = opt_string(&value)?,
                "question" => f.question = opt_string(&value)?,
                "answer" => f.answer = opt_string(&value)?,
                "route" => f.route = opt_string(&value)?,
                "scenario_id" => f.scenario_id = opt_string(&value)?,
                "conversation_id" => f.conversation_id = opt_string(&value)?,
                "session_end" => f.session_end = value.extract()?,
                "input_tokens" => f.input_tokens = value.extract()?,
                "output_tokens" => f.output_tokens = value.extract()?,
                "tool" => f.tool = opt(&value, tool_call_from)?,
                "expected_tool_calls" => f.expected_tool_calls = opt(&value, calls_from)?,
                "documents" => {
                    f.documents = value
                        .try_iter()?
                        .map(|d| {
                            let d = d?;
                            Ok(Document {
                                id: opt_string(&d.getattr("id")?)?,
                                content: opt_string(&d.getattr("content")?)?,
                                score: d.getattr("score")?.extract()?,
                            })
                        })
                        .collect::<PyResult<_>>()?;
                }
                "feedback" => {
                    f.feedback = opt(&value, |v| {
                        let score: f64 = v.getattr("score")?.extract()?;
                        if !(-1.0..=1.0).contains(&score) {
                            // as the mappers drop such scores
                            return Err(PyValueError::new_err(format!(
                                "feedback score {score} is outside -1..1"
                            )));
                        }
                        Ok(Feedback { score, comment: opt_string(&v.getattr("comment")?)? })
                    })?;
                }
                _ => return Err(PyTypeError::new_err(format!("SpanFacts has no field '{key}'"))),
            }
        }
        Ok(s)
    }

    #[pyo3(name = "merge")]
    fn py_merge(&mut self, other: &SpanFacts) {
        self.merge(other)
    }

    fn __repr__(&self) -> String {
        format!("{self:?}")
    }

    #[getter]
    fn trace_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.trace_id)
    }
    #[getter]
    fn span_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.span_id)
    }
    #[getter]
    fn parent_span_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.parent_span_id)
    }
    #[getter]
    fn service(&self) -> Option<&str> {
        self.service.as_deref()
    }
    #[getter]
    fn tenant(&self) -> Option<&str> {
        self.tenant.as_deref()
    }
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }
    #[getter]
    fn start_ns(&self) -> u64 {
        self.start_ns
    }
    #[getter]
    fn end_ns(&self) -> u64 {
        self.end_ns
    }
    #[getter]
    fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
    #[getter]
    fn is_root(&self) -> bool {
        self.is_root
    }
    #[getter]
    fn is_log_fragment(&self) -> bool {
        self.is_log_fragment
    }
    #[getter]
    fn conventions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PySet>> {
        PySet::new(py, &self.conventions)
    }
    #[getter]
    fn role(&self) -> &'static str {
        self.facts.role
    }
    #[getter]
    fn input_messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_messages_py(py, &self.facts.input_messages)
    }
    #[getter]
    fn output_messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        opt_messages_py(py, &self.facts.output_messages)
    }
    #[getter]
    fn event_inputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        messages_py(py, &self.facts.event_inputs)
    }
    #[getter]
    fn event_outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        messages_py(py, &self.facts.event_outputs)
    }
    #[getter]
    fn input_text(&self) -> Option<&str> {
        self.facts.input_text.as_deref()
    }
    #[getter]
    fn output_text(&self) -> Option<&str> {
        self.facts.output_text.as_deref()
    }
    #[getter]
    fn documents<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let docs = self.facts.documents.iter().map(|d| document_py(py, d)).collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, docs)
    }
    #[getter]
    fn tool<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.facts.tool.as_ref().map(|c| tool_call_py(py, c)).transpose()
    }
    #[getter]
    fn model(&self) -> Option<&str> {
        self.facts.model.as_deref()
    }
    #[getter]
    fn question(&self) -> Option<&str> {
        self.facts.question.as_deref()
    }
    #[getter]
    fn answer(&self) -> Option<&str> {
        self.facts.answer.as_deref()
    }
    #[getter]
    fn route(&self) -> Option<&str> {
        self.facts.route.as_deref()
    }
    #[getter]
    fn feedback<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.facts.feedback.as_ref().map(|f| feedback_py(py, f)).transpose()
    }
    #[getter]
    fn scenario_id(&self) -> Option<&str> {
        self.facts.scenario_id.as_deref()
    }
    #[getter]
    fn expected_tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        self.facts.expected_tool_calls.as_deref().map(|c| calls_py(py, c)).transpose()
    }
    #[getter]
    fn conversation_id(&self) -> Option<&str> {
        self.facts.conversation_id.as_deref()
    }
    #[getter]
    fn session_end(&self) -> bool {
        self.facts.session_end
    }
    #[getter]
    fn input_tokens(&self) -> i64 {
        self.facts.input_tokens
    }
    #[getter]
    fn output_tokens(&self) -> i64 {
        self.facts.output_tokens
    }
    /// Bytes the assembler accounts for these facts (see `size`).
    #[getter(size)]
    fn py_size(&self) -> usize {
        self.size()
    }
}

/// Spans by the conventions they used ("unknown": none), log fragments left out: what
/// `assistant_spans_by_convention_total` counts, without a Python set per span.
#[pyfunction]
pub fn count_conventions(facts: &Bound<'_, PyList>) -> PyResult<Vec<(String, u64)>> {
    let mut counts: Vec<(String, u64)> = Vec::new();
    for item in facts.iter() {
        let span = item.downcast_into::<SpanFacts>()?;
        let span = span.borrow();
        if span.is_log_fragment {
            continue;
        }
        let unknown = ["unknown".to_string()];
        let names = if span.conventions.is_empty() { &unknown[..] } else { &span.conventions[..] };
        for name in names {
            match counts.iter_mut().find(|(n, _)| n == name) {
                Some((_, count)) => *count += 1,
                None => counts.push((name.clone(), 1)),
            }
        }
    }
    Ok(counts)
}
