//! Span facts as monitor.model's pydantic objects, built without validating again.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString};

use super::{Document, Feedback, Message, ToolCall};
use crate::pyvalue::to_py;

/// The pydantic classes Python reads the facts and turns as (monitor.model's), handed in by
/// `register_models` when that module is imported: the compiled core imports no module of the
/// project.
pub struct Models {
    pub turn: Py<PyAny>,
    message: Py<PyAny>,
    tool_call: Py<PyAny>,
    document: Py<PyAny>,
    feedback: Py<PyAny>,
    pub step: Py<PyAny>,
    pub signals: Py<PyAny>,
}

static MODELS: pyo3::sync::GILOnceCell<Models> = pyo3::sync::GILOnceCell::new();

pub fn models(py: Python<'_>) -> PyResult<&'static Models> {
    MODELS.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err("no models registered: import monitor.model first")
    })
}

/// monitor.model's classes, once: the first registration stands.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn register_models(
    py: Python<'_>,
    turn: Py<PyAny>,
    message: Py<PyAny>,
    tool_call: Py<PyAny>,
    document: Py<PyAny>,
    feedback: Py<PyAny>,
    step: Py<PyAny>,
    signals: Py<PyAny>,
) {
    let _ = MODELS.set(py, Models { turn, message, tool_call, document, feedback, step, signals });
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
pub fn model<'py>(
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

pub(super) fn messages_py<'py>(py: Python<'py>, messages: &[Message]) -> PyResult<Bound<'py, PyList>> {
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

pub(super) fn opt_messages_py<'py>(
    py: Python<'py>,
    messages: &Option<Vec<Message>>,
) -> PyResult<Bound<'py, PyAny>> {
    match messages {
        Some(m) => Ok(messages_py(py, m)?.into_any()),
        None => Ok(py.None().into_bound(py)),
    }
}
