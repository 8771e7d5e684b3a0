//! The library's typed failures as the Python exceptions of `handle_resolver._errors`, each
//! with the `response_code` `resolve --json` prints and the server and transport involved.

use handle_resolver::wire::ResponseCode;
use handle_resolver::{AdminError, Attempt, ResolveError, ResolveErrorKind, UrnError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule};
use serde_json::Value as Json;

use crate::convert::to_py;
use crate::record::{attempt_json, transport_name};

/// The exception class `name` of `handle_resolver._errors`.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || -> PyResult<Py<PyModule>> {
        Ok(py.import("handle_resolver._errors")?.unbind())
    })?;
    module.bind(py).getattr(name)
}

/// What an exception carries besides its class and message.
#[derive(Default)]
pub(crate) struct Details {
    pub(crate) response_code: Option<u32>,
    pub(crate) handle: Option<String>,
    pub(crate) server: Option<String>,
    pub(crate) transport: Option<&'static str>,
    pub(crate) attempts: Vec<Json>,
}

/// An instance of exception class `name`.
pub(crate) fn instance<'py>(
    py: Python<'py>,
    name: &str,
    message: String,
    d: Details,
) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("response_code", d.response_code)?;
    kwargs.set_item("handle", d.handle)?;
    kwargs.set_item("server", d.server)?;
    kwargs.set_item("transport", d.transport)?;
    kwargs.set_item("attempts", to_py(py, &Json::Array(d.attempts))?)?;
    class(py, name)?.call((message,), Some(&kwargs))
}

/// The exception class of a failed resolution: one per kind of failure.
fn class_of(e: &ResolveError) -> &'static str {
    match e.kind() {
        ResolveErrorKind::NotFound => "HandleNotFound",
        ResolveErrorKind::UnknownPrefix => "UnknownPrefix",
        ResolveErrorKind::NoMatchingValues => "NoMatchingValues",
        ResolveErrorKind::PrefixNotServed => "PrefixNotServed",
        ResolveErrorKind::AuthenticationNeeded => "AuthenticationNeeded",
        ResolveErrorKind::AuthenticationFailed => "AuthenticationFailed",
        ResolveErrorKind::Server => "ServerError",
        ResolveErrorKind::Timeout => "Timeout",
        ResolveErrorKind::Network => "NetworkError",
        ResolveErrorKind::Protocol => "ProtocolError",
        ResolveErrorKind::Signature => "SignatureError",
        ResolveErrorKind::Referral => "ReferralError",
        ResolveErrorKind::InvalidInput => "InvalidIdentifier",
        _ => "ResolveError",
    }
}

/// The exception instance for a failed resolution of `asked`, with the attempts made: the
/// server and transport are the failure's own, else those of the last server that answered
/// (as the CLI's `at 127.0.0.1:2641 udp`).
pub(crate) fn resolve_error<'py>(
    py: Python<'py>,
    e: &ResolveError,
    asked: &str,
    attempts: &[Attempt],
) -> PyResult<Bound<'py, PyAny>> {
    let (mut server, mut transport) = (e.server(), e.transport().map(transport_name));
    if let Some(a) = Attempt::last_answered(attempts) {
        if a.server.is_some() && (server.is_none() || server == a.server) {
            server = a.server;
            transport = transport.or(Some(transport_name(a.transport)));
        }
    }
    let handle = e.handle().map_or(asked, |h| h.as_str());
    let details = Details {
        response_code: Some(e.rest_response_code()),
        handle: Some(handle.to_string()),
        server: server.map(|s| s.to_string()),
        transport,
        attempts: attempts.iter().map(attempt_json).collect(),
    };
    instance(py, class_of(e), e.to_string(), details)
}

/// [`resolve_error`] as a `PyErr` to raise.
pub(crate) fn raise_resolve(
    py: Python<'_>,
    e: &ResolveError,
    asked: &str,
    attempts: &[Attempt],
) -> PyErr {
    match resolve_error(py, e, asked, attempts) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// The exception of a failed administration request.
pub(crate) fn raise_admin(py: Python<'_>, e: &AdminError, handle: &str) -> PyErr {
    let name = match e {
        AdminError::Failed(inner) => return raise_resolve(py, inner, handle, &[]),
        AdminError::AlreadyExists { .. } => "HandleAlreadyExists",
        AdminError::NotFound { .. } => "HandleDoesNotExist",
        AdminError::ValueExists { .. } => "ValueAlreadyExists",
        AdminError::NoSuchValues { .. } => "NoSuchValues",
        AdminError::NotPermitted { .. } => "NotPermitted",
        AdminError::AuthenticationFailed { .. } => "AdminAuthenticationFailed",
        AdminError::AuthenticationNeeded { .. } => "AdminAuthenticationNeeded",
        AdminError::Refused { .. } => "AdminRefused",
        _ => "AdminError",
    };
    // The server's code, else 2 (ERROR) as for every failure without one.
    let code = e.response_code().unwrap_or(ResponseCode::Error).code();
    let details = Details {
        response_code: Some(code),
        handle: Some(handle.to_string()),
        ..Details::default()
    };
    match instance(py, name, e.to_string(), details) {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// The exception of a failed URN resolution.
pub(crate) fn urn_error<'py>(
    py: Python<'py>,
    e: &UrnError,
    urn: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let name = if e.is_not_found() {
        "UrnNotFound"
    } else if e.is_input_error() {
        "InvalidIdentifier"
    } else {
        "UrnError"
    };
    let details = Details {
        response_code: Some(e.response_code()),
        handle: Some(urn.to_string()),
        ..Details::default()
    };
    instance(py, name, e.to_string(), details)
}
