//! Typed outcomes of a resolution that did not produce values ([`ResolveError`]).
//!
//! Retry decisions match on variants, never on message text. Every variant that comes from a
//! server names the handle and, where one was involved, the server.

use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;

use crate::auth::AuthError;
use crate::ident::{Handle, IdentError};
use crate::transport::{TransportError, TransportKind};
use crate::trust::TrustError;
use crate::wire::{DecodeError, ResponseCode, SignatureError};

/// Why a response was not acceptable as an answer (it is treated as a failure of that server).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// The response's ExpirationTime lies in the past.
    #[error("response expired at {expiration} (now {now})")]
    Expired {
        /// The response's ExpirationTime (seconds since the epoch).
        expiration: u32,
        /// The clock's time when it arrived.
        now: u64,
    },
    /// A request digest was asked for (RD) and the response carries none.
    #[error("request digest asked for but missing")]
    DigestMissing,
    /// The response's request digest does not match the request sent.
    #[error("request digest does not match the request")]
    DigestMismatch,
    /// The response's op code differs from the request's.
    #[error("response op code {got} to a request with op code {expected}")]
    OpCodeMismatch {
        /// The request's op code.
        expected: u32,
        /// The response's.
        got: u32,
    },
    /// The body does not fit the response code (e.g. a 302 without a referral body).
    #[error("response code {code} with an unexpected body")]
    UnexpectedBody {
        /// The response code.
        code: ResponseCode,
    },
    /// A prefix referral (303) answered a request that was not for a prefix handle.
    #[error("prefix referral to a request for a non-prefix handle")]
    UnexpectedPrefixReferral,
    /// A service handle's or referral's service information could not be decoded.
    #[error("undecodable service information: {0}")]
    BadServiceInfo(DecodeError),
    /// The site information holds no server that can take the request.
    #[error("site has no usable server for the request")]
    NoUsableServer,
}

/// Why a certified answer could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SignatureFailure {
    /// A signature was asked for (CT) and the response is unsigned.
    #[error("response is not signed")]
    Unsigned,
    /// The credential type is not one a resolver can check (`HS_SIGNED`, `HS_DSAPUBKEY`).
    #[error("credential type \"{}\" cannot be verified", .0.escape_debug())]
    UnsupportedCredential(String),
    /// The service information of the server asked carries no public key.
    #[error("server {0} has no public key in its site information")]
    NoServerKey(SocketAddr),
    /// The server's public key could not be decoded.
    #[error("server key undecodable: {0}")]
    BadKey(DecodeError),
    /// The signature does not verify.
    #[error("{0}")]
    Invalid(SignatureError),
}

/// A resolution that produced no values, and why. Decide on the variant, never on the text;
/// new variants may come, so a `match` needs a catch-all arm.
///
/// ```no_run
/// # async fn demo(resolver: handle_resolver::Resolver) {
/// use handle_resolver::ResolveError;
///
/// match resolver.resolve("20.500.12345/missing").await {
///     Ok(record) => println!("{} values", record.values.len()),
///     Err(e) if e.is_not_found() => println!("no such handle (or no matching values)"),
///     Err(ResolveError::Timeout { after, .. }) => println!("no answer within {after:?}"),
///     Err(e) if e.is_input_error() => println!("bad identifier, nothing sent: {e}"),
///     Err(e) => println!("failed: {e}"),
/// }
/// # }
/// ```
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Response code 100: the handle does not exist.
    #[error("{handle}: handle not found (100)")]
    NotFound {
        /// The handle asked for.
        handle: Handle,
    },
    /// Response code 200: the handle exists, but no value matches the type/index filter.
    #[error("{handle}: no values match the filter (200)")]
    NoMatchingValues {
        /// The handle asked for.
        handle: Handle,
    },
    /// Every site of the responsible service answered 301 (server not responsible).
    #[error("{handle}: prefix not served by any site of its service (301)")]
    PrefixNotServed {
        /// The handle asked for.
        handle: Handle,
        /// The server's error message (the first non-empty one of the sites' answers; the
        /// reference server says `That prefix doesn't live here`), or empty.
        message: String,
    },
    /// Response code 402: the values asked for need authentication.
    #[error("{handle}: authentication needed (402)")]
    AuthenticationNeeded {
        /// The handle asked for.
        handle: Handle,
    },
    /// The overall deadline passed (the attempts made are in the trace,
    /// [`crate::Resolver::resolve_traced`]).
    #[error("{}no answer within {} s", timeout_subject(handle.as_ref(), server.as_ref()), after.as_secs_f64())]
    Timeout {
        /// The handle being resolved (or asked for, in [`crate::Resolver::send_message`]);
        /// `None` for a message that asks for no handle.
        handle: Option<Handle>,
        /// The one server asked, when the call named one ([`crate::Resolver::send_message`]);
        /// the servers a resolution asked are in its trace.
        server: Option<SocketAddr>,
        /// The deadline.
        after: Duration,
    },
    /// A server answered something that is not an acceptable response.
    #[error("protocol error{}: {violation}{}", from_server(server), asked(*sites_asked))]
    Protocol {
        /// The server that answered; `None` when no server could be asked (a site with no
        /// usable server).
        server: Option<SocketAddr>,
        /// What was wrong.
        violation: ProtocolViolation,
        /// How many sites were asked in all when this failure is the one reported for
        /// several (the most telling; every attempt is in the trace); 1 otherwise.
        sites_asked: usize,
    },
    /// A certified answer failed verification.
    #[error("signature check failed for the answer from {server}: {failure}{}", asked(*sites_asked))]
    Signature {
        /// The server that answered.
        server: SocketAddr,
        /// What failed.
        failure: SignatureFailure,
        /// How many sites were asked in all when this failure is the one reported for
        /// several (the most telling; every attempt is in the trace); 1 otherwise.
        sites_asked: usize,
    },
    /// The same referral was met twice, or a service handle chain came back to itself.
    #[error("referral loop while resolving {handle} (at {})", at.as_ref().map_or("the referral's sites".to_string(), Handle::to_string))]
    ReferralLoop {
        /// The handle being resolved.
        handle: Handle,
        /// The referral or service handle met again; `None` when the referral named its
        /// sites, not a handle.
        at: Option<Handle>,
    },
    /// An HS_ALIAS chain came back to a handle already visited.
    #[error("alias loop: {}", chain_text(chain))]
    AliasLoop {
        /// The handles of the chain, in order, ending with the repeated one.
        chain: Vec<Handle>,
    },
    /// An HS_ALIAS value does not name a handle.
    #[error("{handle}: HS_ALIAS value is not a handle: {error}")]
    InvalidAlias {
        /// The handle whose HS_ALIAS value it is.
        handle: Handle,
        /// Why the value is not a handle.
        error: IdentError,
    },
    /// An HS_ALIAS chain is longer than the limit.
    #[error("alias chain longer than {limit}: {}", chain_text(chain))]
    TooManyAliases {
        /// The limit.
        limit: usize,
        /// The chain followed so far.
        chain: Vec<Handle>,
    },
    /// More referrals (302/303 and HS_SERV hops) than the limit, or an HS_SERV chain deeper
    /// than its limit.
    #[error("{handle}: more than {limit} referrals or service hops")]
    TooManyReferrals {
        /// The handle being resolved.
        handle: Handle,
        /// The limit that was hit.
        limit: u32,
    },
    /// The identifier could not be parsed (or is a URN); nothing was sent.
    #[error("invalid identifier: {0}")]
    InvalidIdentifier(#[from] IdentError),
    /// Strict CORDRA mode and the identifier is not a CORDRA id; nothing was sent.
    #[error("\"{}\" is not a CORDRA identifier (strict mode)", input.escape_debug())]
    NotCordra {
        /// The input as given.
        input: String,
    },
    /// Every server tried failed at the transport level (the most telling failure is
    /// reported: a timeout before a refused connection).
    #[error("{} exchange with {server} failed: {error}{}", kind.as_str(), asked(*sites_asked))]
    Transport {
        /// The server.
        server: SocketAddr,
        /// UDP or TCP.
        kind: TransportKind,
        /// What failed.
        error: TransportError,
        /// How many sites were asked in all when this failure is the one reported for
        /// several (the most telling; every attempt is in the trace); 1 otherwise.
        sites_asked: usize,
    },
    /// A handle proxy's REST API could not be asked, or did not answer with its JSON (the
    /// connection failed, another content type or status, a body that is not the documented
    /// JSON, still busy after the retries `Retry-After` allowed).
    #[error("proxy {url}: {error}")]
    Proxy {
        /// The URL asked (boxed: a URI is large, and every result of a resolution carries
        /// room for its error).
        url: Box<http::Uri>,
        /// What failed.
        error: TransportError,
    },
    /// The server has not answered anything lately (silence or refused connections on every
    /// transport, again and again), so it was not asked: its breaker is open and lets one
    /// request through as a probe after `retry_in`.
    #[error("{server} is not answering (not asked; probed again in {:.1} s){}", retry_in.as_secs_f64(), asked(*sites_asked))]
    ServerUnavailable {
        /// The server (its query address).
        server: SocketAddr,
        /// Until the breaker lets a probe through.
        retry_in: std::time::Duration,
        /// How many sites were asked in all when this failure is the one reported for
        /// several; 1 otherwise.
        sites_asked: usize,
    },
    /// A server's challenge could not be answered (its request digest is not of our
    /// request, the key cannot sign, ...): nothing was signed for it.
    #[error("cannot answer the challenge of {server}: {error}")]
    Authentication {
        /// The server that challenged.
        server: SocketAddr,
        /// Why.
        error: AuthError,
    },
    /// A root refresh read root records that do not verify against the trust root: the old
    /// root information stays in use.
    #[error("the refreshed root information does not verify: {error}")]
    UntrustedRoot {
        /// Which record, which value and why.
        error: TrustError,
    },
    /// No service information was found for the handle's prefix.
    #[error("no service information for {prefix_handle}")]
    ServiceNotFound {
        /// The prefix handle looked up (`0.NA/<prefix>`), or the service handle (an HS_SERV
        /// value, a referral's handle) that gave no sites.
        prefix_handle: Handle,
    },
    /// An HS_SERV value or a referral's handle, which names the service of a prefix, is
    /// not a handle: the service cannot be found.
    #[error("service handle {} is not a handle: {error}", value.escape_debug())]
    InvalidServiceHandle {
        /// The value as the server sent it (lossy UTF-8).
        value: String,
        /// Why it is not a handle.
        error: IdentError,
    },
    /// Any other response code (a server error, out-of-date site info after a refresh, ...).
    #[error("{} answered {}{}{}", server.map_or("the proxy".to_string(), |s| s.to_string()), code_text(*code), if message.is_empty() { String::new() } else { format!(": {message}") }, asked(*sites_asked))]
    Server {
        /// The server that answered; `None` for a handle proxy's REST API named by a host
        /// name (its address is the HTTP client's business).
        server: Option<SocketAddr>,
        /// The response code.
        code: ResponseCode,
        /// The server's error text (lossy UTF-8).
        message: String,
        /// How many sites were asked in all when this failure is the one reported for
        /// several (the most telling; every attempt is in the trace); 1 otherwise.
        sites_asked: usize,
    },
}

/// `handle: `, `request to <server>: ` or nothing: what a timeout names.
fn timeout_subject(handle: Option<&Handle>, server: Option<&SocketAddr>) -> String {
    match (handle, server) {
        (Some(h), _) => format!("{h}: "),
        (None, Some(s)) => format!("request to {s}: "),
        (None, None) => String::new(),
    }
}

/// `a -> b -> c`.
fn chain_text(chain: &[Handle]) -> String {
    let texts: Vec<&str> = chain.iter().map(Handle::as_str).collect();
    texts.join(" -> ")
}

/// ` from <server>`, or nothing when no server is known.
fn from_server(server: &Option<SocketAddr>) -> String {
    match server {
        Some(server) => format!(" from {server}"),
        None => String::new(),
    }
}

/// ` (3 sites asked)` when several were, else nothing.
fn asked(sites: usize) -> String {
    if sites > 1 {
        format!(" ({sites} sites asked)")
    } else {
        String::new()
    }
}

/// A response code as `NAME (n)`, or `response code n` for a code without a name.
fn code_text(code: ResponseCode) -> String {
    match code {
        ResponseCode::Other(v) => format!("response code {v}"),
        known => known.to_string(),
    }
}

impl ResolveError {
    /// The typed error of a final answer with response `code` that is not a success (from
    /// the native protocol or a proxy's REST API), with the server's error `message`, about
    /// `handle`: 100 not found, 200 no matching values, 402 authentication needed, 301 prefix
    /// not served, any other code as it is.
    pub(crate) fn from_response(
        code: ResponseCode,
        message: String,
        server: Option<SocketAddr>,
        handle: &Handle,
    ) -> Self {
        let handle = handle.clone();
        match code {
            ResponseCode::HandleNotFound => ResolveError::NotFound { handle },
            ResponseCode::ValuesNotFound => ResolveError::NoMatchingValues { handle },
            ResponseCode::AuthenticationNeeded => ResolveError::AuthenticationNeeded { handle },
            ResponseCode::ServerNotResponsible => ResolveError::PrefixNotServed { handle, message },
            code => ResolveError::Server {
                sites_asked: 1,
                server,
                code,
                message,
            },
        }
    }

    /// The same error, naming `step` instead of `origin` as the handle being resolved (for
    /// the variants that name it from the resolution's bookkeeping): what a step of an alias
    /// chain reports, also to the callers sharing it, is about the handle of that step.
    pub(crate) fn for_step(mut self, origin: &Handle, step: &Handle) -> Self {
        if origin != step {
            if let ResolveError::TooManyReferrals { handle, .. }
            | ResolveError::ReferralLoop { handle, .. } = &mut self
            {
                if handle == origin {
                    *handle = step.clone();
                }
            }
        }
        self
    }

    /// A timeout of the resolution of `handle` after `after`.
    pub(crate) fn timeout(handle: &Handle, after: Duration) -> Self {
        ResolveError::Timeout {
            handle: Some(handle.clone()),
            server: None,
            after,
        }
    }

    /// The same error, noting that it is the one reported for `sites` sites asked (for the
    /// variants that carry the count).
    pub(crate) fn with_sites_asked(mut self, sites: usize) -> Self {
        match &mut self {
            ResolveError::Protocol { sites_asked, .. }
            | ResolveError::Signature { sites_asked, .. }
            | ResolveError::Transport { sites_asked, .. }
            | ResolveError::ServerUnavailable { sites_asked, .. }
            | ResolveError::Server { sites_asked, .. } => *sites_asked = sites,
            _ => {}
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{DecodeErrorKind, EncodeError};
    use std::io::ErrorKind;

    fn hd(text: &str) -> Handle {
        Handle::parse(text).unwrap()
    }

    fn addr() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 2641))
    }

    #[test]
    fn rest_response_codes() {
        let h = || hd("20.500.1/x");
        let server = |code| ResolveError::Server {
            server: None,
            code,
            message: String::new(),
            sites_asked: 1,
        };
        let cases = [
            (ResolveError::NotFound { handle: h() }, 100),
            (
                ResolveError::ServiceNotFound {
                    prefix_handle: hd("0.NA/20.500.1"),
                },
                100,
            ),
            (ResolveError::NoMatchingValues { handle: h() }, 200),
            (
                ResolveError::PrefixNotServed {
                    handle: h(),
                    message: String::new(),
                },
                301,
            ),
            (ResolveError::AuthenticationNeeded { handle: h() }, 402),
            (server(ResponseCode::InsufficientPermissions), 401),
            (server(ResponseCode::ServerBusy), 3),
            (
                ResolveError::Timeout {
                    handle: Some(h()),
                    server: None,
                    after: Duration::from_secs(1),
                },
                2,
            ),
            (ResolveError::NotCordra { input: "x".into() }, 2),
        ];
        for (e, code) in cases {
            assert_eq!(e.rest_response_code(), code, "{e}");
        }
    }

    /// Every message names what failed, the handle or the server, with no Debug formatting.
    #[test]
    fn every_message_is_readable() {
        let h = || hd("20.500.1/x");
        let decode = DecodeError {
            field: "values",
            offset: 24,
            kind: DecodeErrorKind::InvalidUtf8,
        };
        let transport = |error| ResolveError::Transport {
            server: addr(),
            kind: TransportKind::Tcp,
            error,
            sites_asked: 1,
        };
        let protocol = |violation| ResolveError::Protocol {
            server: Some(addr()),
            violation,
            sites_asked: 1,
        };
        let signature = |failure| ResolveError::Signature {
            server: addr(),
            failure,
            sites_asked: 1,
        };
        let ident = crate::ident::Identifier::parse("hdl:").unwrap_err();
        let ident_text = ident.to_string();
        let cases: Vec<(ResolveError, String)> = vec![
            (
                ResolveError::NotFound { handle: h() },
                "20.500.1/x: handle not found (100)".into(),
            ),
            (
                ResolveError::NoMatchingValues { handle: h() },
                "20.500.1/x: no values match the filter (200)".into(),
            ),
            (
                ResolveError::PrefixNotServed {
                    handle: h(),
                    message: String::new(),
                },
                "20.500.1/x: prefix not served by any site of its service (301)".into(),
            ),
            (
                ResolveError::AuthenticationNeeded { handle: h() },
                "20.500.1/x: authentication needed (402)".into(),
            ),
            (
                ResolveError::Timeout {
                    handle: Some(h()),
                    server: None,
                    after: Duration::from_secs(8),
                },
                "20.500.1/x: no answer within 8 s".into(),
            ),
            (
                ResolveError::Timeout {
                    handle: Some(h()),
                    server: None,
                    after: Duration::from_millis(2500),
                },
                "20.500.1/x: no answer within 2.5 s".into(),
            ),
            (
                protocol(ProtocolViolation::Expired {
                    expiration: 10,
                    now: 20,
                }),
                "protocol error from 127.0.0.1:2641: response expired at 10 (now 20)".into(),
            ),
            (
                protocol(ProtocolViolation::DigestMissing),
                "protocol error from 127.0.0.1:2641: request digest asked for but missing".into(),
            ),
            (
                protocol(ProtocolViolation::DigestMismatch),
                "protocol error from 127.0.0.1:2641: request digest does not match the request"
                    .into(),
            ),
            (
                protocol(ProtocolViolation::OpCodeMismatch {
                    expected: 1,
                    got: 2,
                }),
                "protocol error from 127.0.0.1:2641: response op code 2 to a request with op code 1"
                    .into(),
            ),
            (
                protocol(ProtocolViolation::UnexpectedBody {
                    code: ResponseCode::ServiceReferral,
                }),
                "protocol error from 127.0.0.1:2641: response code SERVICE_REFERRAL (302) with an \
                 unexpected body"
                    .into(),
            ),
            (
                protocol(ProtocolViolation::UnexpectedPrefixReferral),
                "protocol error from 127.0.0.1:2641: prefix referral to a request for a \
                 non-prefix handle"
                    .into(),
            ),
            (
                protocol(ProtocolViolation::BadServiceInfo(decode)),
                format!("protocol error from 127.0.0.1:2641: undecodable service information: {decode}"),
            ),
            (
                ResolveError::Protocol {
                    server: None,
                    violation: ProtocolViolation::NoUsableServer,
                    sites_asked: 1,
                },
                "protocol error: site has no usable server for the request".into(),
            ),
            (
                signature(SignatureFailure::Unsigned),
                "signature check failed for the answer from 127.0.0.1:2641: response is not signed"
                    .into(),
            ),
            (
                signature(SignatureFailure::UnsupportedCredential("HS_SIGNED".into())),
                "signature check failed for the answer from 127.0.0.1:2641: credential type \
                 \"HS_SIGNED\" cannot be verified"
                    .into(),
            ),
            (
                signature(SignatureFailure::NoServerKey(addr())),
                "signature check failed for the answer from 127.0.0.1:2641: server \
                 127.0.0.1:2641 has no public key in its site information"
                    .into(),
            ),
            (
                signature(SignatureFailure::BadKey(decode)),
                format!(
                    "signature check failed for the answer from 127.0.0.1:2641: server key \
                     undecodable: {decode}"
                ),
            ),
            (
                signature(SignatureFailure::Invalid(SignatureError::Mismatch)),
                "signature check failed for the answer from 127.0.0.1:2641: signature mismatch"
                    .into(),
            ),
            (
                ResolveError::ReferralLoop {
                    handle: h(),
                    at: Some(hd("0.SERV/1")),
                },
                "referral loop while resolving 20.500.1/x (at 0.SERV/1)".into(),
            ),
            (
                ResolveError::AliasLoop {
                    chain: vec![hd("1/a"), hd("1/b"), hd("1/a")],
                },
                "alias loop: 1/a -> 1/b -> 1/a".into(),
            ),
            (
                ResolveError::TooManyAliases {
                    limit: 1,
                    chain: vec![hd("1/a"), hd("1/b"), hd("1/c")],
                },
                "alias chain longer than 1: 1/a -> 1/b -> 1/c".into(),
            ),
            (
                ResolveError::TooManyReferrals {
                    handle: h(),
                    limit: 40,
                },
                "20.500.1/x: more than 40 referrals or service hops".into(),
            ),
            (
                ResolveError::InvalidIdentifier(ident),
                format!("invalid identifier: {ident_text}"),
            ),
            (
                ResolveError::NotCordra {
                    input: "20.500.1/\"x\"".into(),
                },
                "\"20.500.1/\\\"x\\\"\" is not a CORDRA identifier (strict mode)".into(),
            ),
            (
                transport(TransportError::Timeout),
                "tcp exchange with 127.0.0.1:2641 failed: timed out".into(),
            ),
            (
                ResolveError::Transport {
                    server: addr(),
                    kind: TransportKind::Udp,
                    error: TransportError::Busy,
                    sites_asked: 1,
                },
                "udp exchange with 127.0.0.1:2641 failed: too many requests in flight".into(),
            ),
            (
                transport(TransportError::Io(
                    ErrorKind::ConnectionRefused,
                    "Connection refused (os error 111)".into(),
                )),
                "tcp exchange with 127.0.0.1:2641 failed: connection refused".into(),
            ),
            (
                transport(TransportError::Io(
                    ErrorKind::AddrNotAvailable,
                    "IPv6 address not available".into(),
                )),
                "tcp exchange with 127.0.0.1:2641 failed: IPv6 address not available".into(),
            ),
            (
                transport(TransportError::Io(ErrorKind::ConnectionReset, String::new())),
                "tcp exchange with 127.0.0.1:2641 failed: connection reset".into(),
            ),
            (
                transport(TransportError::Decode(decode)),
                format!("tcp exchange with 127.0.0.1:2641 failed: cannot decode the answer: {decode}"),
            ),
            (
                transport(TransportError::Encode(EncodeError::TooLong {
                    field: "handle",
                    len: 70_000,
                })),
                "tcp exchange with 127.0.0.1:2641 failed: cannot encode the request: handle is \
                 too long to encode: 70000 bytes"
                    .into(),
            ),
            (
                transport(TransportError::TooLargeForUdp),
                "tcp exchange with 127.0.0.1:2641 failed: request too large for UDP".into(),
            ),
            (
                transport(TransportError::Closed),
                "tcp exchange with 127.0.0.1:2641 failed: connection closed before a complete \
                 answer"
                    .into(),
            ),
            (
                transport(TransportError::RequestIdMismatch {
                    expected: 1,
                    got: 2,
                }),
                "tcp exchange with 127.0.0.1:2641 failed: answer has request id 0x00000002, \
                 expected 0x00000001"
                    .into(),
            ),
            (
                ResolveError::ServiceNotFound {
                    prefix_handle: hd("0.NA/20.500.1"),
                },
                "no service information for 0.NA/20.500.1".into(),
            ),
            (
                ResolveError::Server {
                    server: Some(addr()),
                    code: ResponseCode::Error,
                    message: "disk full".into(),
                    sites_asked: 3,
                },
                "127.0.0.1:2641 answered ERROR (2): disk full (3 sites asked)".into(),
            ),
            (
                ResolveError::Server {
                    server: Some(addr()),
                    code: ResponseCode::Other(999),
                    message: String::new(),
                    sites_asked: 1,
                },
                "127.0.0.1:2641 answered response code 999".into(),
            ),
        ];
        for (error, expected) in &cases {
            assert_eq!(error.to_string(), *expected, "{error:?}");
        }
    }

    #[test]
    fn io_errors_read_once() {
        let mut errors = vec![std::io::Error::from(ErrorKind::ConnectionRefused)];
        if cfg!(target_os = "linux") {
            // ECONNREFUSED: "Connection refused (os error 111)".
            errors.push(std::io::Error::from_raw_os_error(111));
        }
        for e in errors {
            let kind = e.kind();
            let text = TransportError::from(e).to_string();
            assert_eq!(kind, ErrorKind::ConnectionRefused);
            assert_eq!(text, "connection refused");
        }
    }
}
