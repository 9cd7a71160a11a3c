//! Values between Python and the rules: `value::Value` as Python objects and back.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

use crate::{conventions, value};

/// A value as Python: lists, dicts (keys in order), ints of any size, floats.
pub fn to_py<'py>(py: Python<'py>, value: &value::Value) -> PyResult<Bound<'py, PyAny>> {
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
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<value::Value<'static>> {
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

pub fn attrs_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Vec<(Cow<'static, str>, value::Value<'static>)>> {
    match from_py(obj)? {
        value::Value::Map(items) => Ok(items),
        _ => Ok(Vec::new()),
    }
}

pub fn events_from_py(events: &Bound<'_, PyAny>) -> PyResult<Vec<conventions::Event<'static>>> {
    let mut out = Vec::new();
    for event in events.try_iter()? {
        let (name, attrs): (Bound<'_, PyAny>, Bound<'_, PyAny>) = event?.extract()?;
        out.push((name.str()?.to_string_lossy().into_owned(), attrs_from_py(&attrs)?));
    }
    Ok(out)
}
