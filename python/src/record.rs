//! `HandleRecord` and `HandleValue`: what a resolution returns, kept as the library's values
//! and turned into Python objects only when asked (a bulk run that reads `url` converts
//! nothing else).

use handle_resolver::document::record_document;
use handle_resolver::transport::TransportKind;
use handle_resolver::wire::json::{value_from_json, value_to_json};
use handle_resolver::wire::{
    HandleValue as Value, Limits, Permissions, Ttl, TypedValue, ValueReference,
};
use handle_resolver::{Attempt, Source};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
use serde_json::{json, Value as Json};

use crate::convert::{from_py, to_py};

/// A value from its REST API JSON shape (`wire::json`).
pub(crate) fn value_from_dict(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let json = from_py(obj)?;
    value_from_json(&json, &Limits::default())
        .map_err(|e| PyValueError::new_err(format!("not a handle value: {e}")))
}

/// Values given as `HandleValue`s or REST-shaped dicts.
pub(crate) fn values_from_py(values: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    let mut out = Vec::new();
    for item in values.try_iter()? {
        let item = item?;
        match item.cast::<HandleValue>() {
            Ok(v) => out.push(v.get().inner.clone()),
            Err(_) => out.push(value_from_dict(&item)?),
        }
    }
    Ok(out)
}

fn datetime_utc<'py>(py: Python<'py>, seconds: u32) -> PyResult<Bound<'py, PyAny>> {
    static UTC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    static FROM_TIMESTAMP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let utc = UTC.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("datetime")?
            .getattr("timezone")?
            .getattr("utc")?
            .unbind())
    })?;
    let from_timestamp = FROM_TIMESTAMP.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("datetime")?
            .getattr("datetime")?
            .getattr("fromtimestamp")?
            .unbind())
    })?;
    from_timestamp.bind(py).call1((seconds, utc.bind(py)))
}

/// One handle value: index, type, data bytes, TTL, timestamp, permissions, references.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct HandleValue {
    pub(crate) inner: Value,
}

impl HandleValue {
    pub(crate) fn new_py(py: Python<'_>, inner: Value) -> PyResult<Py<HandleValue>> {
        Py::new(py, HandleValue { inner })
    }
}

#[pymethods]
impl HandleValue {
    #[new]
    #[pyo3(signature = (index, r#type, data, *, ttl=86400, ttl_type="relative", permissions="1110", timestamp=0, references=None))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        index: u32,
        r#type: &str,
        data: &Bound<'_, PyAny>,
        ttl: i64,
        ttl_type: &str,
        permissions: &str,
        timestamp: u32,
        references: Option<Vec<(String, u32)>>,
    ) -> PyResult<Self> {
        let bytes: Vec<u8> = if let Ok(s) = data.cast::<PyString>() {
            s.to_cow()?.as_bytes().to_vec()
        } else if let Ok(b) = data.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            return Err(PyValueError::new_err("data must be str or bytes"));
        };
        let mut v = Value::new(index, r#type.as_bytes().to_vec(), bytes);
        v.ttl = match ttl_type {
            "relative" => Ttl::Relative(
                i32::try_from(ttl)
                    .map_err(|_| PyValueError::new_err("a relative ttl fits in 32 bits"))?,
            ),
            "absolute" => Ttl::Absolute(u32::try_from(ttl).map_err(|_| {
                PyValueError::new_err("an absolute ttl is seconds since 1970, up to 2106")
            })?),
            other => {
                return Err(PyValueError::new_err(format!(
                    "ttl_type {other:?}: \"relative\" or \"absolute\""
                )))
            }
        };
        if permissions.len() != 4 || !permissions.bytes().all(|c| c == b'0' || c == b'1') {
            return Err(PyValueError::new_err(
                "permissions: four characters 0 or 1 (admin read, admin write, public read, public write)",
            ));
        }
        v.permissions = Permissions(
            permissions
                .bytes()
                .fold(0u8, |acc, c| (acc << 1) | u8::from(c == b'1')),
        );
        v.timestamp = timestamp;
        v.references = references
            .unwrap_or_default()
            .into_iter()
            .map(|(handle, index)| ValueReference {
                handle: handle.into_bytes().into(),
                index,
            })
            .collect();
        Ok(HandleValue { inner: v })
    }

    /// A value from its REST API JSON shape (what `to_dict()` returns).
    #[classmethod]
    fn from_dict(_cls: &Bound<'_, PyType>, d: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(HandleValue {
            inner: value_from_dict(d)?,
        })
    }

    /// The value's index.
    #[getter]
    fn index(&self) -> u32 {
        self.inner.index
    }

    /// The type, as text (`URL`, `HS_ADMIN`, ...).
    #[getter]
    fn r#type(&self) -> String {
        self.inner.type_str().into_owned()
    }

    /// The data, as bytes.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.data)
    }

    /// The data as text when it is UTF-8, else `None`.
    #[getter]
    fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.inner.data).ok()
    }

    /// Seconds: relative, or since 1970 when `ttl_type` is `"absolute"`.
    #[getter]
    fn ttl(&self) -> i64 {
        match self.inner.ttl {
            Ttl::Relative(s) => i64::from(s),
            other => i64::from(other.value()),
        }
    }

    /// `"relative"`, `"absolute"`, or `"type N"` for another TTL type byte.
    #[getter]
    fn ttl_type(&self) -> String {
        match self.inner.ttl {
            Ttl::Relative(_) => "relative".into(),
            Ttl::Absolute(_) => "absolute".into(),
            other => format!("type {}", other.kind()),
        }
    }

    /// When the value was last changed (UTC), or `None` when the server gave no time.
    #[getter]
    fn timestamp<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.inner.timestamp {
            0 => Ok(None),
            t => datetime_utc(py, t).map(Some),
        }
    }

    /// Admin read, admin write, public read, public write, as `"1110"`.
    #[getter]
    fn permissions(&self) -> String {
        self.inner.permissions.as_bits()
    }

    /// The value references, as `(handle, index)` pairs.
    #[getter]
    fn references(&self) -> Vec<(String, u32)> {
        self.inner
            .references
            .iter()
            .map(|r| (String::from_utf8_lossy(&r.handle).into_owned(), r.index))
            .collect()
    }

    /// The data read by its type: `str` for text types (URL, EMAIL, HS_ALIAS, ...), a dict
    /// for HS_ADMIN, HS_SITE, HS_PUBKEY and 10320/loc, a list of `{handle, index}` for
    /// HS_VLIST, `bytes` for anything else.
    fn typed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let typed = self.inner.typed();
        if let Some(text) = typed.as_text() {
            return Ok(PyString::new(py, text).into_any());
        }
        match &typed {
            TypedValue::SecKey(b) | TypedValue::Binary(b) => Ok(PyBytes::new(py, b).into_any()),
            _ => {
                let json = typed.to_json();
                to_py(py, json.get("value").unwrap_or(&Json::Null))
            }
        }
    }

    /// The value in the REST API's JSON shape, as `resolve --json` prints it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &value_to_json(&self.inner))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let py = slf.py();
        let rebuild = py.get_type::<HandleValue>().getattr("from_dict")?;
        Ok((rebuild, (slf.get().to_dict(py)?,)))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<HandleValue>()
            .is_ok_and(|o| o.get().inner == self.inner)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.index.hash(&mut h);
        self.inner.type_name.hash(&mut h);
        self.inner.data.hash(&mut h);
        h.finish()
    }

    fn __repr__(&self) -> String {
        let data = match std::str::from_utf8(&self.inner.data) {
            Ok(s) => format!("{s:?}"),
            Err(_) => format!("<{} bytes>", self.inner.data.len()),
        };
        format!(
            "HandleValue(index={}, type={:?}, data={data})",
            self.inner.index,
            self.inner.type_str()
        )
    }
}

/// Where an answer came from: the library's, or read back from a pickle.
enum SourceData {
    Library(Box<Source>),
    Plain(Json),
}

/// The attempts of a resolution: the library's, or read back from a pickle.
enum AttemptsData {
    Library(Vec<Attempt>),
    Plain(Json),
}

pub(crate) fn transport_name(kind: TransportKind) -> &'static str {
    kind.as_str()
}

/// One attempt as a dict: what `resolve --json --trace` prints per attempt, and its URL.
pub(crate) fn attempt_json(a: &Attempt) -> Json {
    let mut j = handle_resolver::document::attempt_json(a);
    j["url"] = json!(a.url.as_ref().map(|u| u.to_string()));
    j
}

fn source_json(s: &Source, from_cache: bool) -> Json {
    json!({
        "server": s.server.map(|s| s.to_string()),
        "transport": transport_name(s.transport),
        "site": s.site_description(),
        "siteSerial": s.site_serial,
        "certified": s.certified,
        "authoritative": s.authoritative,
        "url": s.url.as_ref().map(|u| u.to_string()),
        "fromCache": from_cache,
    })
}

/// The values of one handle and where they came from.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct HandleRecord {
    handle: String,
    values: Vec<Value>,
    aliases: Vec<String>,
    from_cache: bool,
    source: SourceData,
    attempts: AttemptsData,
}

impl HandleRecord {
    pub(crate) fn from_library(record: handle_resolver::HandleRecord) -> Self {
        let handle_resolver::HandleRecord {
            handle,
            values,
            source,
            from_cache,
            aliases,
            attempts,
            ..
        } = record;
        HandleRecord {
            handle,
            values,
            aliases,
            from_cache,
            source: SourceData::Library(Box::new(source)),
            attempts: AttemptsData::Library(attempts),
        }
    }

    fn source_json(&self) -> Json {
        match &self.source {
            SourceData::Library(s) => source_json(s, self.from_cache),
            SourceData::Plain(j) => j.clone(),
        }
    }

    fn attempts_json(&self) -> Json {
        match &self.attempts {
            AttemptsData::Library(a) => Json::Array(a.iter().map(attempt_json).collect()),
            AttemptsData::Plain(j) => j.clone(),
        }
    }

    fn url_values(&self) -> impl Iterator<Item = &Value> {
        self.values.iter().filter(|v| v.is_type("URL"))
    }
}

#[pymethods]
impl HandleRecord {
    /// The handle the values belong to (the last of an alias chain), as the server spelled it.
    #[getter]
    fn handle(&self) -> &str {
        &self.handle
    }

    /// The values, in the server's order.
    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for v in &self.values {
            list.append(HandleValue::new_py(py, v.clone())?)?;
        }
        Ok(list)
    }

    /// The data of the first URL value, or `None`.
    #[getter]
    fn url(&self) -> Option<String> {
        self.url_values()
            .next()
            .map(|v| String::from_utf8_lossy(&v.data).into_owned())
    }

    /// The data of every URL value.
    #[getter]
    fn urls(&self) -> Vec<String> {
        self.url_values()
            .map(|v| String::from_utf8_lossy(&v.data).into_owned())
            .collect()
    }

    /// The values whose type is `t` (ASCII case-insensitive).
    fn values_of_type<'py>(&self, py: Python<'py>, t: &str) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for v in self.values.iter().filter(|v| v.is_type(t)) {
            list.append(HandleValue::new_py(py, v.clone())?)?;
        }
        Ok(list)
    }

    /// The HS_ALIAS chain followed, starting with the handle asked for (empty when none).
    #[getter]
    fn aliases(&self) -> Vec<String> {
        self.aliases.clone()
    }

    /// True when the answer came from the resolver's cache.
    #[getter(from_cache)]
    fn cached(&self) -> bool {
        self.from_cache
    }

    /// Where the answer came from: `server`, `transport`, `site`, `certified`,
    /// `authoritative`, `url` (a proxy's), `fromCache`.
    #[getter]
    fn source<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.source_json())
    }

    /// Every request sent, as `resolve --json --trace` shows them.
    #[getter]
    fn attempts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.attempts_json())
    }

    /// The record in the REST API's JSON shape: `resolve --json` prints the same (plus the
    /// `input`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(
            py,
            &record_document(&self.handle, &self.values, &self.aliases),
        )
    }

    fn __len__(&self) -> usize {
        self.values.len()
    }

    fn __getitem__(&self, py: Python<'_>, i: isize) -> PyResult<Py<HandleValue>> {
        let n = self.values.len() as isize;
        let at = if i < 0 { i + n } else { i };
        match usize::try_from(at).ok().and_then(|at| self.values.get(at)) {
            Some(v) => HandleValue::new_py(py, v.clone()),
            None => Err(PyIndexError::new_err("value index out of range")),
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.values(py)?.try_iter()?.into_any())
    }

    fn __repr__(&self) -> String {
        let types: Vec<String> = self
            .values
            .iter()
            .map(|v| format!("{}:{}", v.index, v.type_str()))
            .collect();
        format!(
            "HandleRecord(handle={:?}, values=[{}])",
            self.handle,
            types.join(", ")
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<HandleRecord>().is_ok_and(|o| {
            let o = o.get();
            o.handle == self.handle && o.values == self.values && o.aliases == self.aliases
        })
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let state = json!({
            "handle": self.handle,
            "values": self.values.iter().map(value_to_json).collect::<Vec<_>>(),
            "aliases": self.aliases,
            "fromCache": self.from_cache,
            "source": self.source_json(),
            "attempts": self.attempts_json(),
        });
        let rebuild = py
            .import("handle_resolver._native")?
            .getattr("_record_from_state")?;
        Ok((rebuild, (to_py(py, &state)?,)))
    }
}

/// A record from its pickled state (`HandleRecord.__reduce__`).
#[pyfunction]
pub(crate) fn _record_from_state(state: &Bound<'_, PyDict>) -> PyResult<HandleRecord> {
    let state = from_py(state.as_any())?;
    let bad = |what: &str| PyValueError::new_err(format!("not a pickled HandleRecord: {what}"));
    let handle = state["handle"]
        .as_str()
        .ok_or_else(|| bad("handle"))?
        .to_string();
    let values = state["values"]
        .as_array()
        .ok_or_else(|| bad("values"))?
        .iter()
        .map(|v| value_from_json(v, &Limits::default()).map_err(|e| bad(&e.to_string())))
        .collect::<PyResult<Vec<_>>>()?;
    let aliases = state["aliases"]
        .as_array()
        .ok_or_else(|| bad("aliases"))?
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    Ok(HandleRecord {
        handle,
        values,
        aliases,
        from_cache: state["fromCache"].as_bool().unwrap_or(false),
        source: SourceData::Plain(state["source"].clone()),
        attempts: AttemptsData::Plain(state["attempts"].clone()),
    })
}

/// `(input, outcome)` as a Python tuple.
pub(crate) fn pair<'py>(
    py: Python<'py>,
    input: Py<PyAny>,
    outcome: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, [input.into_bound(py), outcome])
}
