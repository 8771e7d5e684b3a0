//! `RestAdmin`: the library's [`handle_resolver::RestAdmin`] (a handle's record read and its
//! values written through a server's REST API with Basic credentials, as pyhandle does),
//! blocking, for the pyhandle drop-in on servers whose HTTP interface takes no native
//! requests.

use std::time::Duration;

use handle_resolver::{RestAdmin as Lib, RestAdminError, RestReply};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::to_py;
use crate::errors::{instance, Details};
use crate::record::values_from_py;
use crate::runtime::{block_on, shared};

/// Reads and writes a handle's values through a handle server's REST API (`GET`/`PUT`/`DELETE
/// {url}/api/handles/...`) with Basic credentials (`identity` `INDEX:HANDLE`, `secret` its
/// HS_SECKEY; neither: no credentials), as pyhandle does; `verify=False` accepts any
/// certificate of an `https://` server (pyhandle's `HTTPS_verify=False`). Each method
/// returns the server's answer as a dict `{"status", "responseCode", "handle", "message",
/// "url", "document"}` (a failure's too: its HTTP status and response code, as pyhandle
/// reads them; `document` the JSON as sent); no answer in the REST API's JSON raises
/// `NetworkError` (`Timeout`) or `ProtocolError`, naming the handle and the URL.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct RestAdmin {
    inner: Lib,
}

/// The dict of a reply.
fn reply_dict<'py>(py: Python<'py>, r: &RestReply) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("status", r.status)?;
    d.set_item("responseCode", r.response_code)?;
    d.set_item("handle", r.handle.as_deref())?;
    d.set_item("message", r.message.as_deref())?;
    d.set_item("url", &r.url)?;
    match &r.document {
        Some(doc) => d.set_item("document", to_py(py, doc)?)?,
        None => d.set_item("document", py.None())?,
    }
    Ok(d)
}

/// The exception of a write that got no answer.
fn raise(py: Python<'_>, e: &RestAdminError, handle: &str) -> PyErr {
    let name = match e {
        RestAdminError::Transport { error, .. } if error.is_timeout() => "Timeout",
        RestAdminError::Transport { .. } => "NetworkError",
        _ => "ProtocolError",
    };
    let details = Details {
        handle: Some(handle.to_string()),
        transport: Some("rest"),
        ..Details::default()
    };
    match instance(py, name, e.to_string(), details) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

impl RestAdmin {
    fn run<'py, F>(&self, py: Python<'py>, handle: &str, fut: F) -> PyResult<Bound<'py, PyDict>>
    where
        F: std::future::Future<Output = Result<RestReply, RestAdminError>> + Send,
    {
        let rt = shared()?;
        match block_on(py, &rt, fut)? {
            Ok(reply) => reply_dict(py, &reply),
            Err(e) => Err(raise(py, &e, handle)),
        }
    }
}

#[pymethods]
impl RestAdmin {
    #[new]
    #[pyo3(signature = (url, *, identity=None, secret=None, timeout=30.0, verify=true))]
    fn new(
        url: &str,
        identity: Option<&str>,
        secret: Option<&str>,
        timeout: f64,
        verify: bool,
    ) -> PyResult<Self> {
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 3600.0) {
            return Err(PyValueError::new_err(
                "timeout: seconds, above 0, at most 3600",
            ));
        }
        let rt = shared()?;
        let _entered = rt.enter();
        let made = match (identity, secret) {
            (Some(identity), Some(secret)) => Lib::new(url, identity, secret),
            (None, None) => Lib::anonymous(url),
            _ => {
                return Err(PyValueError::new_err(
                    "give identity and secret, or neither",
                ))
            }
        };
        let inner = made
            .map_err(|e| PyValueError::new_err(e.to_string()))?
            .timeout(Duration::from_secs_f64(timeout))
            .verify_tls(verify);
        Ok(RestAdmin { inner })
    }

    /// `GET` of `handle` (`index=`, `type=` each, `auth=true`); the record is the answer's
    /// `document`.
    #[pyo3(signature = (handle, *, indexes=None, types=None, auth=false))]
    fn get_handle<'py>(
        &self,
        py: Python<'py>,
        handle: &str,
        indexes: Option<Vec<u32>>,
        types: Option<Vec<String>>,
        auth: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let indexes = indexes.unwrap_or_default();
        let types = types.unwrap_or_default();
        let types: Vec<&str> = types.iter().map(String::as_str).collect();
        self.run(
            py,
            handle,
            self.inner.get_handle(handle, &indexes, &types, auth),
        )
    }

    /// The base URL, without a final `/`.
    #[getter]
    fn url(&self) -> &str {
        self.inner.base()
    }

    /// `PUT` of the whole record: creates `handle` with `values` (`HandleValue`s or
    /// REST-shaped dicts), replacing an existing one with `overwrite`.
    #[pyo3(signature = (handle, values, *, overwrite=false))]
    fn put_handle<'py>(
        &self,
        py: Python<'py>,
        handle: &str,
        values: &Bound<'py, PyAny>,
        overwrite: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let values = values_from_py(values)?;
        self.run(
            py,
            handle,
            self.inner.put_handle(handle, &values, overwrite),
        )
    }

    /// `PUT` of `values` at their indexes (`index=` each): added, and with `overwrite`
    /// replacing those at the same indexes.
    #[pyo3(signature = (handle, values, *, overwrite=false))]
    fn put_values<'py>(
        &self,
        py: Python<'py>,
        handle: &str,
        values: &Bound<'py, PyAny>,
        overwrite: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let values = values_from_py(values)?;
        self.run(
            py,
            handle,
            self.inner.put_values(handle, &values, overwrite),
        )
    }

    /// `DELETE` of `handle`.
    fn delete_handle<'py>(&self, py: Python<'py>, handle: &str) -> PyResult<Bound<'py, PyDict>> {
        self.run(py, handle, self.inner.delete_handle(handle))
    }

    /// `DELETE` of the values at `indexes` of `handle` (none is refused: that would delete
    /// the handle).
    fn delete_values<'py>(
        &self,
        py: Python<'py>,
        handle: &str,
        indexes: Vec<u32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        if indexes.is_empty() {
            return Err(PyValueError::new_err(
                "indexes: at least one (none would delete the handle)",
            ));
        }
        self.run(py, handle, self.inner.delete_values(handle, &indexes))
    }

    fn __repr__(&self) -> String {
        format!("RestAdmin(url={:?})", self.inner.base())
    }
}
