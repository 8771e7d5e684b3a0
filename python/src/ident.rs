//! `parse(identifier)`: an identifier read offline, as `resolve --check --json` describes it.

use handle_resolver::ident::{Description, ParseOptions};
use handle_resolver::Identifier as LibIdentifier;
use pyo3::prelude::*;
use serde_json::Value as Json;

use crate::convert::to_py;
use crate::errors::{instance, Details};

/// An identifier read offline: a handle, a CORDRA id or a URN.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct Identifier {
    description: Description,
    json: Json,
}

impl Identifier {
    pub(crate) fn input_text(&self) -> &str {
        &self.description.input
    }
}

#[pymethods]
impl Identifier {
    /// The text as given.
    #[getter]
    fn input(&self) -> &str {
        &self.description.input
    }
    /// `"handle"`, `"cordra"` or `"urn"`.
    #[getter]
    fn kind(&self) -> String {
        self.json["kind"].as_str().unwrap_or_default().to_string()
    }
    /// The handle as a resolver sends it: the prefix normalized, the suffix as written (a
    /// CORDRA id's upper-case form is `cordra_handle`); `None` for a URN.
    #[getter]
    fn handle(&self) -> Option<&str> {
        self.description.handle.as_deref()
    }
    /// A CORDRA id's upper-case CORDRA form (`None` for other identifiers).
    #[getter]
    fn cordra_handle(&self) -> Option<&str> {
        self.description.cordra_handle.as_deref()
    }
    /// The handle's prefix.
    #[getter]
    fn prefix(&self) -> Option<&str> {
        self.description.prefix.as_deref()
    }
    /// The handle's suffix.
    #[getter]
    fn suffix(&self) -> Option<&str> {
        self.description.suffix.as_deref()
    }
    /// A URI's query, without `?`.
    #[getter]
    fn query(&self) -> Option<&str> {
        self.description.query.as_deref()
    }
    /// A URI's fragment, without `#`.
    #[getter]
    fn fragment(&self) -> Option<&str> {
        self.description.fragment.as_deref()
    }
    /// The `hdl:` form (`None` for a URN).
    #[getter]
    fn hdl_uri(&self) -> Option<&str> {
        self.description.hdl_uri.as_deref()
    }
    /// The canonical URN (`None` for a handle).
    #[getter]
    fn urn(&self) -> Option<&str> {
        self.description.urn.as_deref()
    }
    /// `"fdc"` or `"urn-3"` (`None` for a handle).
    #[getter]
    fn namespace(&self) -> Option<&str> {
        self.description.namespace
    }
    /// HTTP URLs that resolve it.
    #[getter]
    fn resolver_urls(&self) -> Vec<String> {
        self.description.resolver_urls.clone()
    }
    /// Remarks (a reserved fdc DateId, ...).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.description.notes.clone()
    }
    /// What `resolve --check --json` prints for it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.json)
    }
    fn __str__(&self) -> String {
        self.description
            .handle
            .clone()
            .or_else(|| self.description.urn.clone())
            .unwrap_or_else(|| self.description.input.clone())
    }
    fn __repr__(&self) -> String {
        format!(
            "Identifier(kind={:?}, input={:?})",
            self.kind(),
            self.description.input
        )
    }
}

/// Reads an identifier offline (nothing is sent): any form `resolve` reads (`PREFIX/SUFFIX`,
/// `hdl:`, `doi:`, resolver URLs, CORDRA ids, `urn:fdc:`, `urn-3:`). `cordra=True` requires a
/// CORDRA id (and reads URIs by the CORDRA profile), `lenient=True` reads URIs leniently.
/// Raises `InvalidIdentifier` (a `ValueError`) with the reason and byte offset.
#[pyfunction]
#[pyo3(signature = (identifier, *, cordra=false, lenient=false))]
pub(crate) fn parse(
    py: Python<'_>,
    identifier: &str,
    cordra: bool,
    lenient: bool,
) -> PyResult<Identifier> {
    let options = ParseOptions::default().lenient(lenient).cordra_only(cordra);
    match LibIdentifier::parse_with(identifier.trim(), options) {
        Ok(id) => {
            let description = id.describe_with(identifier, options);
            let json = serde_json::to_value(&description).map_err(|e| {
                pyo3::exceptions::PyValueError::new_err(format!("cannot describe it: {e}"))
            })?;
            Ok(Identifier { description, json })
        }
        Err(e) => {
            let details = Details {
                response_code: Some(2),
                handle: Some(identifier.to_string()),
                ..Details::default()
            };
            let exc = instance(
                py,
                "InvalidIdentifier",
                format!("{identifier:?}: {e}"),
                details,
            )?;
            Err(PyErr::from_value(exc))
        }
    }
}
