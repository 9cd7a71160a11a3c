//! `monitor._native.testing`: hooks for the Python tests that hold the compiled rules to their
//! references (Python's json, the readers' expected answers, opentelemetry-proto's descriptors),
//! built only with the `testing` feature (.ci/run's install): the shipped module has none.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::assemble::compose::compose;
use crate::facts::SpanFacts;
use crate::pyvalue::{from_py, to_py};
use crate::{json, readers, value, wire};

/// A reader's answer, and its issues by reason.
type ReadResult<'py> = (Bound<'py, PyAny>, Vec<(String, u64)>);

/// One of readers.rs's readers on a Python value: (its answer, issues by reason).
#[pyfunction]
fn read<'py>(
    py: Python<'py>,
    reader: &str,
    value: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<ReadResult<'py>> {
    use value::Value as V;
    let value = from_py(value)?;
    let arg = if value == V::Null { None } else { Some(&value) };
    let mut issues = readers::Issues::default();
    let answer: Option<V> = match reader {
        "json" => readers::json_value(arg, &mut issues, name),
        "text" => readers::text(arg).map(|t| V::Str(t.into())),
        "maybe_json" => readers::maybe_json(arg, &mut issues),
        "float" => readers::float(arg).map(V::Float),
        "int" => Some(V::Int(readers::int(arg, &mut issues))),
        "str" => readers::string(arg, &mut issues, name).map(|t| V::Str(t.into())),
        "py_str" => Some(V::Str(readers::py_str(&value).into())),
        "metadata_id" => readers::metadata_id(arg).map(|t| V::Str(t.into())),
        "tool_message" => readers::tool_message(arg).map(|(content, error)| {
            V::List(vec![content.unwrap_or(V::Null), error.map_or(V::Null, |e| V::Str(e.into()))])
        }),
        "indexed" => match &value {
            V::Map(items) => Some(V::List(
                readers::indexed(items, name)
                    .into_iter()
                    .map(|group| V::Map(group.into_iter().map(|(k, v)| (k.into(), v.clone())).collect()))
                    .collect(),
            )),
            _ => None,
        },
        _ => return Err(PyValueError::new_err(format!("no reader {reader:?}"))),
    };
    Ok((to_py(py, &answer.unwrap_or(V::Null))?, issues.0))
}

/// json::parse, held to Python's json.loads: (value, mended), or ValueError.
#[pyfunction]
fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<(Bound<'py, PyAny>, bool)> {
    let parsed = json::parse(text).map_err(|_| PyValueError::new_err("not JSON"))?;
    Ok((to_py(py, &parsed.value)?, parsed.mended))
}

/// Value::to_json, held to json.dumps(json.loads(text), ensure_ascii=False).
#[pyfunction]
fn json_redump(text: &str) -> PyResult<String> {
    let parsed = json::parse(text).map_err(|_| PyValueError::new_err("not JSON"))?;
    Ok(parsed.value.to_json())
}

/// The protobuf fields the decoder knows, as (message, number, kind): see wire::schema.
#[pyfunction]
fn schema() -> Vec<(&'static str, u32, String)> {
    wire::schema()
}

// AssistantTurn.completion's values.
const COMPLETIONS: [&str; 4] = ["root_ended", "decision_wait", "evicted", "shutdown"];

/// The turn that these spans of one trace make, as monitor.model.AssistantTurn.
#[pyfunction]
fn build_turn<'py>(
    py: Python<'py>,
    trace_id: &[u8],
    spans: Vec<PyRef<'py, SpanFacts>>,
    completion: &str,
) -> PyResult<Bound<'py, PyAny>> {
    if !COMPLETIONS.contains(&completion) {
        return Err(PyValueError::new_err(format!(
            "unknown completion '{completion}': expected one of {}",
            COMPLETIONS.join(", ")
        )));
    }
    compose(trace_id, spans.iter().map(|s| &**s).collect(), completion).to_py(py)
}

pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = PyModule::new(parent.py(), "testing")?;
    m.add_function(wrap_pyfunction!(read, &m)?)?;
    m.add_function(wrap_pyfunction!(json_loads, &m)?)?;
    m.add_function(wrap_pyfunction!(json_redump, &m)?)?;
    m.add_function(wrap_pyfunction!(schema, &m)?)?;
    m.add_function(wrap_pyfunction!(build_turn, &m)?)?;
    parent.add_submodule(&m)
}
