//! JSON values to Python objects and back (dicts, lists, str, int, float, bool, None).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value as Json};

/// How deep a Python structure may nest to become JSON.
const MAX_DEPTH: usize = 64;

/// A JSON value as a Python object.
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Json) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Json::Null => py.None().into_bound(py),
        Json::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Json::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.into_pyobject(py)?.into_any(),
            (_, Some(i), _) => i.into_pyobject(py)?.into_any(),
            (_, _, Some(f)) => PyFloat::new(py, f).into_any(),
            _ => py.None().into_bound(py),
        },
        Json::String(s) => PyString::new(py, s).into_any(),
        Json::Array(a) => {
            let list = PyList::empty(py);
            for item in a {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Json::Object(o) => {
            let dict = PyDict::new(py);
            for (k, item) in o {
                dict.set_item(k, to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python structure of dicts (string keys), lists, tuples, str, int, float, bool and None
/// as JSON.
pub(crate) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Json> {
    from_py_at(obj, 0)
}

fn from_py_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Json> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("nested too deeply to be JSON"));
    }
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(u) = i.extract::<u64>() {
            return Ok(Json::from(u));
        }
        return Ok(Json::from(i.extract::<i64>()?));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        let f = f.value();
        return Number::from_f64(f)
            .map(Json::Number)
            .ok_or_else(|| PyValueError::new_err(format!("{f} is not a JSON number")));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Json::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("JSON object keys must be str"))?;
            map.insert(key.to_cow()?.into_owned(), from_py_at(&v, depth + 1)?);
        }
        return Ok(Json::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(from_py_at(&item?, depth + 1)?);
        }
        return Ok(Json::Array(items));
    }
    Err(PyTypeError::new_err(format!(
        "cannot be JSON: an object of type {}",
        obj.get_type().name()?
    )))
}
