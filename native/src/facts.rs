//! `SpanFacts`: what one span (or log events about it) tells about the turn, in convention-free
//! terms. The decoders build them, the assembler (assemble.rs) holds and reads them; none of
//! their content becomes a Python object on the way. Python sees them through read-only
//! properties (as monitor.model's Message, ToolCall, RetrievedDocument and Feedback), and builds
//! them by keyword (tests, log fragments, the Python decoder).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySet, PyString};

use crate::semconv::{Document, Facts, Feedback, Message, ToolCall};
use crate::value::Value;
use crate::{from_py, to_py};

const ROLES: [&str; 6] = ["llm", "retrieval", "tool", "agent", "chain", "other"];

#[pyclass(module = "monitor._native")]
#[derive(Debug, Clone)]
pub struct SpanFacts {
    pub trace_id: Vec<u8>,
    pub span_id: Vec<u8>,
    pub parent_span_id: Vec<u8>,
    pub service: Option<String>,
    pub tenant: Option<String>,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub error: Option<String>,
    pub is_root: bool,            // no parent, or a parent in another process (remote)
    pub is_log_fragment: bool,    // built from log events, merged into the span's facts
    pub conventions: Vec<String>, // sorted, each once
    pub facts: Facts,             // what the convention rules read (semconv.rs)
}

impl SpanFacts {
    pub fn new(trace_id: &[u8], span_id: &[u8]) -> Self {
        SpanFacts {
            trace_id: trace_id.to_vec(),
            span_id: span_id.to_vec(),
            parent_span_id: Vec::new(),
            service: None,
            tenant: None,
            name: String::new(),
            start_ns: 0,
            end_ns: 0,
            error: None,
            is_root: false,
            is_log_fragment: false,
            conventions: Vec::new(),
            facts: Facts::default(),
        }
    }

    /// The rules' output for this span; its conventions join those it had.
    pub fn set_facts(&mut self, mut facts: Facts) {
        for name in facts.conventions.drain(..) {
            self.add_convention(name);
        }
        self.facts = facts;
    }

    fn add_convention(&mut self, name: &str) {
        if let Err(at) = self.conventions.binary_search_by(|c| c.as_str().cmp(name)) {
            self.conventions.insert(at, name.to_string());
        }
    }

    /// Fold facts about the same span (from log events or a re-sent span) into this one.
    pub fn merge(&mut self, other: &SpanFacts) {
        let (f, o) = (&mut self.facts, &other.facts);
        fn fill<T: Clone>(slot: &mut Option<T>, other: &Option<T>) {
            if slot.is_none() {
                slot.clone_from(other);
            }
        }
        fill(&mut f.input_messages, &o.input_messages);
        fill(&mut f.output_messages, &o.output_messages);
        fill(&mut f.input_text, &o.input_text);
        fill(&mut f.output_text, &o.output_text);
        fill(&mut f.tool, &o.tool);
        fill(&mut f.model, &o.model);
        fill(&mut f.question, &o.question);
        fill(&mut f.answer, &o.answer);
        fill(&mut f.route, &o.route);
        fill(&mut f.feedback, &o.feedback);
        fill(&mut f.scenario_id, &o.scenario_id);
        fill(&mut f.expected_tool_calls, &o.expected_tool_calls);
        fill(&mut f.conversation_id, &o.conversation_id);
        fill(&mut self.error, &other.error);
        if f.documents.is_empty() {
            f.documents.clone_from(&o.documents);
        }
        f.event_inputs.extend(o.event_inputs.iter().cloned());
        f.event_outputs.extend(o.event_outputs.iter().cloned());
        if f.role == "other" {
            f.role = o.role;
        }
        for name in &other.conventions {
            self.add_convention(name);
        }
        if !other.is_log_fragment {
            if self.parent_span_id.is_empty() {
                self.parent_span_id.clone_from(&other.parent_span_id);
            }
            if self.service.as_deref().unwrap_or("").is_empty() {
                self.service.clone_from(&other.service);
            }
            if self.name.is_empty() {
                self.name.clone_from(&other.name);
            }
            let f = &mut self.facts;
            for (mine, theirs) in [(&mut self.start_ns, other.start_ns), (&mut self.end_ns, other.end_ns)] {
                if *mine == 0 {
                    *mine = theirs;
                }
            }
            if f.input_tokens == 0 {
                f.input_tokens = o.input_tokens;
            }
            if f.output_tokens == 0 {
                f.output_tokens = o.output_tokens;
            }
            self.is_root = self.is_root || other.is_root;
            self.is_log_fragment = false;
        }
    }

    /// What these facts hold in memory, about: each string's text plus a string object's
    /// overhead, a fixed cost per object. The assembler's byte bound counts this.
    pub fn size(&self) -> usize {
        const SPAN: usize = 1024; // the object, its ids, lists, the slot holding it
        let f = &self.facts;
        let mut size = SPAN;
        for text in [
            &self.service,
            &self.tenant,
            &f.input_text,
            &f.output_text,
            &f.model,
            &f.question,
            &f.answer,
            &f.route,
            &f.scenario_id,
            &f.conversation_id,
            &self.error,
        ]
        .into_iter()
        .flatten()
        {
            size += str_size(text);
        }
        size += str_size(&self.name);
        for messages in [
            f.input_messages.as_deref().unwrap_or(&[]),
            f.output_messages.as_deref().unwrap_or(&[]),
            &f.event_inputs,
            &f.event_outputs,
        ] {
            for m in messages {
                size += ITEM + str_size(&m.role) + opt_size(&m.content) + opt_size(&m.tool_call_id);
                size += m.tool_calls.iter().map(call_size).sum::<usize>();
            }
        }
        for d in &f.documents {
            size += ITEM + opt_size(&d.content) + opt_size(&d.id);
        }
        size += f.tool.iter().chain(f.expected_tool_calls.iter().flatten()).map(call_size).sum::<usize>();
        if let Some(feedback) = &f.feedback {
            size += ITEM + opt_size(&feedback.comment);
        }
        size
    }
}

const ITEM: usize = 120; // a message, document, tool call or container entry
const STR: usize = 49; // a string object, before its text

fn str_size(s: &str) -> usize {
    STR + s.len()
}

fn opt_size(s: &Option<String>) -> usize {
    s.as_deref().map_or(32, str_size)
}

fn value_size(value: &Value) -> usize {
    let (mut size, mut stack) = (0, vec![value]);
    while let Some(item) = stack.pop() {
        match item {
            Value::Str(s) => size += str_size(s),
            Value::List(items) => {
                size += ITEM * items.len();
                stack.extend(items);
            }
            Value::Map(items) => {
                size += ITEM * items.len();
                for (k, v) in items {
                    size += str_size(k);
                    stack.push(v);
                }
            }
            _ => size += 32,
        }
    }
    size
}

fn call_size(c: &ToolCall) -> usize {
    ITEM + str_size(&c.name)
        + value_size(&c.arguments)
        + value_size(&c.result)
        + opt_size(&c.error)
        + opt_size(&c.call_id)
}

// -- as Python sees them ----------------------------------------------------------------------

/// The pydantic classes Python reads the facts and turns as (monitor.model's), handed in by
/// `register_models` when that module is imported: the compiled core imports no module of the
/// project.
pub struct Models {
    pub turn: Py<PyAny>,
    message: Py<PyAny>,
    tool_call: Py<PyAny>,
    document: Py<PyAny>,
    feedback: Py<PyAny>,
}

static MODELS: pyo3::sync::GILOnceCell<Models> = pyo3::sync::GILOnceCell::new();

pub fn models(py: Python<'_>) -> PyResult<&'static Models> {
    MODELS.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err("no models registered: import monitor.model first")
    })
}

/// monitor.model's classes, once: the first registration stands.
#[pyfunction]
pub fn register_models(
    py: Python<'_>,
    turn: Py<PyAny>,
    message: Py<PyAny>,
    tool_call: Py<PyAny>,
    document: Py<PyAny>,
    feedback: Py<PyAny>,
) {
    let _ = MODELS.set(py, Models { turn, message, tool_call, document, feedback });
}

pub fn opt_str<'py>(py: Python<'py>, s: &Option<String>) -> Bound<'py, PyAny> {
    match s {
        Some(s) => PyString::new(py, s).into_any(),
        None => py.None().into_bound(py),
    }
}

static OBJECT_NEW: pyo3::sync::GILOnceCell<Py<PyAny>> = pyo3::sync::GILOnceCell::new();

/// An instance of the pydantic model `class` holding `values` (every field, in declaration
/// order), `given` naming the fields set: what `model_construct` makes, without its Python
/// loop. Only for values built here from typed Rust values, which already have their fields'
/// types: validating them again took a third of assembly's time (bench/ingest.py's mix).
pub fn construct<'py>(
    class: &Bound<'py, PyAny>,
    values: Bound<'py, PyDict>,
    given: Bound<'py, PySet>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = class.py();
    let new = OBJECT_NEW.get_or_try_init(py, || {
        py.import("builtins")?.getattr("object")?.getattr("__new__").map(Bound::unbind)
    })?;
    let model = new.bind(py).call1((class,))?;
    untrack(&values);
    untrack(&given);
    let none = py.None().into_bound(py);
    for (slot, value) in [
        (intern!(py, "__dict__"), values.as_any()),
        (intern!(py, "__pydantic_fields_set__"), given.as_any()),
        (intern!(py, "__pydantic_extra__"), &none),
        (intern!(py, "__pydantic_private__"), &none),
    ] {
        // object.__setattr__: BaseModel's own __setattr__ would validate the assignment.
        if unsafe { pyo3::ffi::PyObject_GenericSetAttr(model.as_ptr(), slot.as_ptr(), value.as_ptr()) } != 0 {
            return Err(PyErr::fetch(py));
        }
    }
    untrack(&model);
    Ok(model)
}

/// Takes a container out of the cycle collector's sight. For the acyclic trees of fresh objects
/// a turn is made of (models, their dicts and sets, lists of strings or models), nothing of
/// ours can ever point back into: reference counting frees them all the same, and the
/// collector's young-generation passes no longer walk the thousands of turns a tick completes
/// (a third of building a tick's turns).
pub fn untrack<T>(object: &Bound<'_, T>) {
    let object = object.as_ptr();
    unsafe {
        if pyo3::ffi::PyObject_GC_IsTracked(object) == 1 {
            // a string has no collector header
            pyo3::ffi::PyObject_GC_UnTrack(object.cast());
        }
    }
}

/// A model whose fields are all given, built from `(name, value)` pairs in declaration order.
fn model<'py>(
    class: &Py<PyAny>,
    py: Python<'py>,
    fields: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyAny>> {
    let values = PyDict::new(py);
    for (name, value) in fields {
        values.set_item(*name, value)?;
    }
    construct(class.bind(py), values, PySet::new(py, fields.iter().map(|(name, _)| *name))?)
}

/// A ToolCall.
pub fn tool_call_py<'py>(py: Python<'py>, c: &ToolCall) -> PyResult<Bound<'py, PyAny>> {
    model(
        &models(py)?.tool_call,
        py,
        &[
            (intern!(py, "name"), PyString::new(py, &c.name).into_any()),
            (intern!(py, "arguments"), to_py(py, &c.arguments)?),
            (intern!(py, "result"), to_py(py, &c.result)?),
            (intern!(py, "error"), opt_str(py, &c.error)),
            (intern!(py, "call_id"), opt_str(py, &c.call_id)),
        ],
    )
}

/// A RetrievedDocument.
pub fn document_py<'py>(py: Python<'py>, d: &Document) -> PyResult<Bound<'py, PyAny>> {
    model(
        &models(py)?.document,
        py,
        &[
            (intern!(py, "id"), opt_str(py, &d.id)),
            (intern!(py, "content"), opt_str(py, &d.content)),
            (intern!(py, "score"), d.score.into_pyobject(py)?.into_any()),
        ],
    )
}

/// A Feedback (its score within -1..1: the mappers and SpanFacts' constructor refuse others).
pub fn feedback_py<'py>(py: Python<'py>, f: &Feedback) -> PyResult<Bound<'py, PyAny>> {
    model(
        &models(py)?.feedback,
        py,
        &[
            (intern!(py, "score"), f.score.into_pyobject(py)?.into_any()),
            (intern!(py, "comment"), opt_str(py, &f.comment)),
        ],
    )
}

pub fn calls_py<'py>(py: Python<'py>, calls: &[ToolCall]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, calls.iter().map(|c| tool_call_py(py, c)).collect::<PyResult<Vec<_>>>()?)
}

fn messages_py<'py>(py: Python<'py>, messages: &[Message]) -> PyResult<Bound<'py, PyList>> {
    let class = models(py)?.message.bind(py);
    let list = PyList::empty(py);
    for m in messages {
        list.append(class.call1((
            &m.role,
            opt_str(py, &m.content),
            calls_py(py, &m.tool_calls)?,
            opt_str(py, &m.tool_call_id),
        ))?)?;
    }
    Ok(list)
}

fn opt_messages_py<'py>(py: Python<'py>, messages: &Option<Vec<Message>>) -> PyResult<Bound<'py, PyAny>> {
    match messages {
        Some(m) => Ok(messages_py(py, m)?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}

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
