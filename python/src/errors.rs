//! The library's typed failures as the Python exceptions of `handle_resolver._errors`, each
//! with the `response_code` `resolve --json` prints and the server and transport involved.

use std::net::SocketAddr;

use handle_resolver::wire::ResponseCode;
use handle_resolver::{AdminError, Attempt, AttemptOutcome, ResolveError, UrnError};
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

/// The exception class of a failed resolution.
fn class_of(e: &ResolveError) -> &'static str {
    match e {
        ResolveError::NotFound { .. } => "HandleNotFound",
        ResolveError::ServiceNotFound { .. } => "UnknownPrefix",
        ResolveError::NoMatchingValues { .. } => "NoMatchingValues",
        ResolveError::PrefixNotServed { .. } => "PrefixNotServed",
        ResolveError::AuthenticationNeeded { .. } => "AuthenticationNeeded",
        ResolveError::Authentication { .. } => "AuthenticationFailed",
        ResolveError::Server { code, .. } => match code {
            ResponseCode::AuthenticationFailed
            | ResponseCode::InvalidCredential
            | ResponseCode::InvalidAdmin
            | ResponseCode::InsufficientPermissions => "AuthenticationFailed",
            ResponseCode::HandleNotFound => "HandleNotFound",
            ResponseCode::ValuesNotFound => "NoMatchingValues",
            ResponseCode::ServerNotResponsible => "PrefixNotServed",
            ResponseCode::AuthenticationNeeded => "AuthenticationNeeded",
            _ => "ServerError",
        },
        ResolveError::Timeout { .. } => "Timeout",
        ResolveError::Transport { .. }
        | ResolveError::Proxy { .. }
        | ResolveError::ServerUnavailable { .. } => "NetworkError",
        ResolveError::Protocol { .. } => "ProtocolError",
        ResolveError::Signature { .. } | ResolveError::UntrustedRoot { .. } => "SignatureError",
        ResolveError::ReferralLoop { .. }
        | ResolveError::AliasLoop { .. }
        | ResolveError::InvalidAlias { .. }
        | ResolveError::TooManyAliases { .. }
        | ResolveError::TooManyReferrals { .. } => "ReferralError",
        ResolveError::InvalidIdentifier(_) | ResolveError::NotCordra { .. } => "InvalidIdentifier",
        _ => "ResolveError",
    }
}

/// The server a failure names, with its transport when the failure says.
fn server_of(e: &ResolveError) -> (Option<SocketAddr>, Option<&'static str>) {
    match e {
        ResolveError::Transport { server, kind, .. } => {
            (Some(*server), Some(transport_name(*kind)))
        }
        ResolveError::Signature { server, .. }
        | ResolveError::ServerUnavailable { server, .. }
        | ResolveError::Authentication { server, .. } => (Some(*server), None),
        ResolveError::Protocol { server, .. } | ResolveError::Server { server, .. } => {
            (*server, None)
        }
        _ => (None, None),
    }
}

/// The handle a failure is about, when it names one.
fn handle_of(e: &ResolveError, asked: &str) -> String {
    match e {
        ResolveError::NotFound { handle }
        | ResolveError::NoMatchingValues { handle }
        | ResolveError::PrefixNotServed { handle, .. }
        | ResolveError::AuthenticationNeeded { handle }
        | ResolveError::Timeout { handle, .. } => handle.clone(),
        _ => asked.to_string(),
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
    let (mut server, mut transport) = server_of(e);
    let answered = attempts
        .iter()
        .rev()
        .find(|a| matches!(a.outcome, AttemptOutcome::Response(_)));
    if let Some(a) = answered {
        if server.is_none() || server == Some(a.server) {
            server = Some(a.server);
            transport = transport.or(Some(transport_name(a.transport)));
        }
    }
    let details = Details {
        response_code: Some(e.rest_response_code()),
        handle: Some(handle_of(e, asked)),
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
    let (name, code) = match e {
        AdminError::Failed(inner) => return raise_resolve(py, inner, handle, &[]),
        AdminError::AlreadyExists { .. } => ("HandleAlreadyExists", 101),
        AdminError::NotFound { .. } => ("HandleDoesNotExist", 100),
        AdminError::ValueExists { .. } => ("ValueAlreadyExists", 201),
        AdminError::NoSuchValues { .. } => ("NoSuchValues", 200),
        AdminError::NotPermitted { code, .. } => ("NotPermitted", code.code()),
        AdminError::AuthenticationFailed { code, .. } => ("AdminAuthenticationFailed", code.code()),
        AdminError::AuthenticationNeeded { .. } => ("AdminAuthenticationNeeded", 402),
        AdminError::Refused { code, .. } => ("AdminRefused", code.code()),
        _ => ("AdminError", 2),
    };
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
