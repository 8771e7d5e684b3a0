//! What a program asks of a [`ResolveError`]: its kind ([`ResolveErrorKind`], one lookup
//! to an exception class, an exit status or an HTTP status), the handle, server, transport
//! and URL it names, its response code, and the `is_*` questions; the error itself and how
//! it reads are in `error.rs`.

use std::net::SocketAddr;
use std::time::Duration;

use super::error::ResolveError;
use crate::ident::{Handle, IdentError};
use crate::transport::{TransportError, TransportKind};
use crate::wire::ResponseCode;

impl ResolveError {
    /// What kind of failure this is, for a program that maps failures to its own answers
    /// (an exception class, an exit status, an HTTP status): one lookup instead of a `match`
    /// over the variants. A server's answer counts by its code (a 401 is an authentication
    /// failure whichever variant carries it).
    ///
    /// ```
    /// use handle_resolver::Handle;
    /// use handle_resolver::{ResolveError, ResolveErrorKind};
    ///
    /// let e = ResolveError::NotFound { handle: Handle::parse("20.500.1/x")? };
    /// assert_eq!(e.kind(), ResolveErrorKind::NotFound);
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn kind(&self) -> ResolveErrorKind {
        use ResolveErrorKind as K;
        match self {
            ResolveError::NotFound { .. } => K::NotFound,
            ResolveError::NoMatchingValues { .. } => K::NoMatchingValues,
            ResolveError::ServiceNotFound { .. } => K::UnknownPrefix,
            ResolveError::PrefixNotServed { .. } => K::PrefixNotServed,
            ResolveError::AuthenticationNeeded { .. } => K::AuthenticationNeeded,
            ResolveError::Authentication { .. } => K::AuthenticationFailed,
            ResolveError::Server { code, .. } => match code {
                ResponseCode::AuthenticationFailed
                | ResponseCode::InvalidCredential
                | ResponseCode::InvalidAdmin
                | ResponseCode::InsufficientPermissions => K::AuthenticationFailed,
                ResponseCode::HandleNotFound => K::NotFound,
                ResponseCode::ValuesNotFound => K::NoMatchingValues,
                ResponseCode::ServerNotResponsible => K::PrefixNotServed,
                ResponseCode::AuthenticationNeeded => K::AuthenticationNeeded,
                _ => K::Server,
            },
            ResolveError::Timeout { .. } => K::Timeout,
            ResolveError::Transport { .. }
            | ResolveError::Proxy { .. }
            | ResolveError::ServerUnavailable { .. } => K::Network,
            ResolveError::Protocol { .. } | ResolveError::InvalidServiceHandle { .. } => {
                K::Protocol
            }
            ResolveError::Signature { .. } | ResolveError::UntrustedRoot { .. } => K::Signature,
            ResolveError::ReferralLoop { .. }
            | ResolveError::AliasLoop { .. }
            | ResolveError::InvalidAlias { .. }
            | ResolveError::TooManyAliases { .. }
            | ResolveError::TooManyReferrals { .. } => K::Referral,
            ResolveError::InvalidIdentifier(_) | ResolveError::NotCordra { .. } => K::InvalidInput,
        }
    }

    /// True for the outcomes that mean "the identifier has no (matching) values": 100, 200.
    ///
    /// ```
    /// use handle_resolver::Handle;
    /// use handle_resolver::ResolveError;
    ///
    /// let handle = Handle::parse("20.500.1/x")?;
    /// assert!(ResolveError::NoMatchingValues { handle: handle.clone() }.is_not_found());
    /// assert!(!ResolveError::AuthenticationNeeded { handle }.is_not_found());
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            ResolveError::NotFound { .. } | ResolveError::NoMatchingValues { .. }
        )
    }

    /// True for errors detected before anything was sent (bad input).
    ///
    /// ```
    /// use handle_resolver::Identifier;
    /// use handle_resolver::ResolveError;
    ///
    /// let bad = Identifier::parse("hdl:").unwrap_err();
    /// assert!(ResolveError::InvalidIdentifier(bad).is_input_error());
    /// ```
    pub fn is_input_error(&self) -> bool {
        self.kind() == ResolveErrorKind::InvalidInput
    }

    /// True when the call's deadline passed ([`ResolveError::Timeout`]). A server that was
    /// silent while others answered is not a timeout of the call: see [`Self::is_network`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use handle_resolver::Handle;
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::Timeout {
    ///     handle: Some(Handle::parse("20.500.1/x")?),
    ///     server: None,
    ///     after: Duration::from_secs(8),
    /// };
    /// assert!(e.is_timeout());
    /// assert_eq!(e.deadline(), Some(Duration::from_secs(8)));
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn is_timeout(&self) -> bool {
        self.kind() == ResolveErrorKind::Timeout
    }

    /// True when no usable answer came back from the network: every server tried failed at
    /// the transport (silence, a refused or broken connection, an unreadable answer), a
    /// handle proxy could not be asked, or the server was not asked as it has been silent
    /// lately. The transport's own error is [`Self::transport_error`].
    ///
    /// ```
    /// use handle_resolver::transport::{TransportError, TransportKind};
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::Transport {
    ///     server: "127.0.0.1:2641".parse().unwrap(),
    ///     kind: TransportKind::Tcp,
    ///     error: TransportError::Closed,
    ///     sites_asked: 1,
    /// };
    /// assert!(e.is_network());
    /// assert_eq!(e.transport(), Some(TransportKind::Tcp));
    /// assert_eq!(e.transport_error(), Some(&TransportError::Closed));
    /// ```
    pub fn is_network(&self) -> bool {
        self.kind() == ResolveErrorKind::Network
    }

    /// The handle the failure is about, when it names one: the handle asked for (of the
    /// step of an alias chain that failed), the prefix handle whose service was not found,
    /// the handle whose HS_ALIAS value is bad, the first handle of an alias chain.
    ///
    /// ```
    /// use handle_resolver::Handle;
    /// use handle_resolver::ResolveError;
    ///
    /// let handle = Handle::parse("20.500.1/x")?;
    /// let e = ResolveError::NotFound { handle: handle.clone() };
    /// assert_eq!(e.handle(), Some(&handle));
    /// let e = ResolveError::ServiceNotFound { prefix_handle: handle.prefix_handle() };
    /// assert_eq!(e.handle().map(Handle::as_str), Some("0.NA/20.500.1"));
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn handle(&self) -> Option<&Handle> {
        match self {
            ResolveError::NotFound { handle }
            | ResolveError::NoMatchingValues { handle }
            | ResolveError::PrefixNotServed { handle, .. }
            | ResolveError::AuthenticationNeeded { handle }
            | ResolveError::ReferralLoop { handle, .. }
            | ResolveError::InvalidAlias { handle, .. }
            | ResolveError::TooManyReferrals { handle, .. }
            | ResolveError::ServiceNotFound {
                prefix_handle: handle,
            } => Some(handle),
            ResolveError::Timeout { handle, .. } => handle.as_ref(),
            ResolveError::AliasLoop { chain } | ResolveError::TooManyAliases { chain, .. } => {
                chain.first()
            }
            _ => None,
        }
    }

    /// The server the failure names: the one whose answer or silence it reports, the one
    /// that challenged, the one not asked as it has been silent, or the one
    /// [`crate::Resolver::send_message`] asked. `None` when the failure names no server, or
    /// a handle proxy named by a host name (see [`Self::url`]).
    ///
    /// ```
    /// use handle_resolver::wire::ResponseCode;
    /// use handle_resolver::ResolveError;
    ///
    /// let server = "127.0.0.1:2641".parse().unwrap();
    /// let e = ResolveError::Server {
    ///     server: Some(server),
    ///     code: ResponseCode::ServerBusy,
    ///     message: String::new(),
    ///     sites_asked: 1,
    /// };
    /// assert_eq!(e.server(), Some(server));
    /// assert_eq!(e.response_code(), Some(ResponseCode::ServerBusy));
    /// ```
    pub fn server(&self) -> Option<SocketAddr> {
        match self {
            ResolveError::Transport { server, .. }
            | ResolveError::Signature { server, .. }
            | ResolveError::ServerUnavailable { server, .. }
            | ResolveError::Authentication { server, .. } => Some(*server),
            ResolveError::Protocol { server, .. }
            | ResolveError::Server { server, .. }
            | ResolveError::Timeout { server, .. } => *server,
            _ => None,
        }
    }

    /// The transport of the exchange that failed, when the failure is of one exchange
    /// ([`TransportKind::Rest`] for a handle proxy's REST API).
    ///
    /// ```
    /// use handle_resolver::transport::{HttpError, TransportError, TransportKind};
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::Proxy {
    ///     url: Box::new("http://127.0.0.1:8000/api/handles/20.500.1/x".parse().unwrap()),
    ///     error: TransportError::Http(HttpError::EmptyBody { status: 200 }),
    /// };
    /// assert_eq!(e.transport(), Some(TransportKind::Rest));
    /// assert_eq!(e.server(), None);
    /// ```
    pub fn transport(&self) -> Option<TransportKind> {
        match self {
            ResolveError::Transport { kind, .. } => Some(*kind),
            ResolveError::Proxy { .. } => Some(TransportKind::Rest),
            _ => None,
        }
    }

    /// The transport's own error, for a failure at the transport (an exchange with a server
    /// or a handle proxy).
    ///
    /// ```
    /// use handle_resolver::transport::{TransportError, TransportKind};
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::Transport {
    ///     server: "127.0.0.1:2641".parse().unwrap(),
    ///     kind: TransportKind::Udp,
    ///     error: TransportError::Timeout,
    ///     sites_asked: 1,
    /// };
    /// assert!(e.transport_error().is_some_and(|t| t.is_timeout()));
    /// // The server was silent, but the call's deadline did not pass.
    /// assert!(!e.is_timeout() && e.is_network());
    /// ```
    pub fn transport_error(&self) -> Option<&TransportError> {
        match self {
            ResolveError::Transport { error, .. } | ResolveError::Proxy { error, .. } => {
                Some(error)
            }
            _ => None,
        }
    }

    /// The URL asked, for a failure of a handle proxy's REST API.
    ///
    /// ```
    /// use handle_resolver::transport::{HttpError, TransportError};
    /// use handle_resolver::ResolveError;
    ///
    /// let url: http::Uri = "http://127.0.0.1:8000/api/handles/20.500.1/x".parse().unwrap();
    /// let e = ResolveError::Proxy {
    ///     url: Box::new(url.clone()),
    ///     error: TransportError::Http(HttpError::EmptyBody { status: 200 }),
    /// };
    /// assert_eq!(e.url(), Some(&url));
    /// assert_eq!(e.transport_error().and_then(|t| t.http_status()), Some(200));
    /// ```
    pub fn url(&self) -> Option<&http::Uri> {
        match self {
            ResolveError::Proxy { url, .. } => Some(&**url),
            _ => None,
        }
    }

    /// The message without the handle in front, for a caller that names the identifier
    /// itself (`20.500.1/x: handle not found (100)` is `handle not found (100)`); the
    /// message itself for the failures that do not start with their handle.
    ///
    /// ```
    /// use handle_resolver::Handle;
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::NotFound { handle: Handle::parse("20.500.1/x")? };
    /// assert_eq!(e.to_string(), "20.500.1/x: handle not found (100)");
    /// assert_eq!(e.reason(), "handle not found (100)");
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn reason(&self) -> String {
        let text = self.to_string();
        let without = self.handle().and_then(|h| {
            text.strip_prefix(h.as_str())
                .and_then(|rest| rest.strip_prefix(": "))
        });
        match without {
            Some(rest) => rest.to_string(),
            None => text,
        }
    }

    /// Why the identifier is not valid, for [`ResolveError::InvalidIdentifier`] (the input
    /// and the byte offset at fault are in it).
    ///
    /// ```
    /// use handle_resolver::ident::ErrorKind;
    /// use handle_resolver::Identifier;
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::from(Identifier::parse("10..1/x").unwrap_err());
    /// assert_eq!(e.ident_error().map(|i| i.kind()), Some(ErrorKind::EmptyPrefixSegment));
    /// assert!(e.is_input_error());
    /// ```
    pub fn ident_error(&self) -> Option<&IdentError> {
        match self {
            ResolveError::InvalidIdentifier(e) => Some(e),
            _ => None,
        }
    }

    /// The deadline that passed, for a [`ResolveError::Timeout`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use handle_resolver::ResolveError;
    ///
    /// // `Resolver::send_message` of a message that names no handle: the server it asked.
    /// let e = ResolveError::Timeout {
    ///     handle: None,
    ///     server: Some("127.0.0.1:2641".parse().unwrap()),
    ///     after: Duration::from_millis(1500),
    /// };
    /// assert_eq!(e.deadline(), Some(Duration::from_millis(1500)));
    /// assert_eq!(e.to_string(), "request to 127.0.0.1:2641: no answer within 1.5 s");
    /// ```
    pub fn deadline(&self) -> Option<Duration> {
        match self {
            ResolveError::Timeout { after, .. } => Some(*after),
            _ => None,
        }
    }

    /// The `responseCode` a handle proxy's REST API gives for this outcome, as `resolve
    /// --json` and the REST JSON document write it: 100 for a handle not found or a prefix
    /// without service information, 200 for no matching values, 301, 402, the server's own
    /// code for any other answer, and 2 (ERROR) for every failure without one (invalid input,
    /// silence, a bad answer, a loop).
    ///
    /// ```
    /// use handle_resolver::Handle;
    /// use handle_resolver::ResolveError;
    ///
    /// let e = ResolveError::ServiceNotFound { prefix_handle: Handle::parse("0.NA/20.500.1")? };
    /// assert_eq!(e.rest_response_code(), 100);
    /// assert_eq!(e.response_code(), None);
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn rest_response_code(&self) -> u32 {
        match (self.response_code(), self) {
            (Some(code), _) => code.code(),
            (None, ResolveError::ServiceNotFound { .. }) => ResponseCode::HandleNotFound.code(),
            (None, _) => ResponseCode::Error.code(),
        }
    }

    /// The response code a server answered that this outcome stands for, when it stands
    /// for one (100, 200, 301, 402, or any other code of [`ResolveError::Server`]).
    pub fn response_code(&self) -> Option<ResponseCode> {
        Some(match self {
            ResolveError::NotFound { .. } => ResponseCode::HandleNotFound,
            ResolveError::NoMatchingValues { .. } => ResponseCode::ValuesNotFound,
            ResolveError::PrefixNotServed { .. } => ResponseCode::ServerNotResponsible,
            ResolveError::AuthenticationNeeded { .. } => ResponseCode::AuthenticationNeeded,
            ResolveError::Server { code, .. } => *code,
            _ => return None,
        })
    }
}

/// What kind of failure a [`ResolveError`] is ([`ResolveError::kind`]): the classes a
/// program answers differently (an exception class, an exit status, an HTTP status). New
/// kinds may come, so a `match` needs a catch-all arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResolveErrorKind {
    /// The handle does not exist (100).
    NotFound,
    /// The handle exists, but no value matches the filter, or none is public (200).
    NoMatchingValues,
    /// No service information for the handle's prefix (its prefix handle not found, or
    /// without HS_SITE/HS_SERV values).
    UnknownPrefix,
    /// Every site of the service answered that it does not serve the prefix (301).
    PrefixNotServed,
    /// The values asked for need authentication (402).
    AuthenticationNeeded,
    /// The server refused our answer to its challenge (400, 401, 403, 404), or it could not
    /// be answered.
    AuthenticationFailed,
    /// The identifier is not valid (or not a CORDRA id in strict mode): nothing was sent.
    InvalidInput,
    /// The call's deadline passed.
    Timeout,
    /// No usable answer from the network (see [`ResolveError::is_network`]).
    Network,
    /// A server answered something that is not an acceptable response.
    Protocol,
    /// A certified answer, or the root information, failed verification.
    Signature,
    /// A referral or alias loop, or a chain longer than its limit.
    Referral,
    /// A server answered another error code (2 ERROR, 3 SERVER_TOO_BUSY, ...).
    Server,
}
