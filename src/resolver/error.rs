//! Typed outcomes of a resolution that did not produce values ([`ResolveError`]).
//!
//! Retry decisions match on variants, never on message text. Every variant that comes from a
//! server names the handle and, where one was involved, the server.

use std::net::SocketAddr;
use std::time::Duration;

use thiserror::Error;

use crate::ident::IdentError;
use crate::transport::{TransportError, TransportKind};
use crate::wire::{DecodeError, ResponseCode, SignatureError};

use super::bootstrap::BootstrapError;

/// Why a response was not acceptable as an answer (it is treated as a failure of that server).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
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
pub enum SignatureFailure {
    /// A signature was asked for (CT) and the response is unsigned.
    #[error("response is not signed")]
    Unsigned,
    /// The credential type is not one a resolver can check (`HS_SIGNED`, `HS_DSAPUBKEY`).
    #[error("credential type {0:?} cannot be verified")]
    UnsupportedCredential(String),
    /// The service information of the server asked carries no public key.
    #[error("server {0} has no public key in its site information")]
    NoServerKey(SocketAddr),
    /// The server's public key could not be decoded.
    #[error("server key undecodable: {0}")]
    BadKey(String),
    /// The signature does not verify.
    #[error("{0}")]
    Invalid(SignatureError),
}

/// A resolution that produced no values, and why.
#[derive(Debug, Clone, Error)]
pub enum ResolveError {
    /// Response code 100: the handle does not exist.
    #[error("{handle}: handle not found (100)")]
    NotFound {
        /// The handle asked for.
        handle: String,
    },
    /// Response code 200: the handle exists, but no value matches the type/index filter.
    #[error("{handle}: no values match the filter (200)")]
    NoMatchingValues {
        /// The handle asked for.
        handle: String,
    },
    /// Every site of the responsible service answered 301 (server not responsible).
    #[error("{handle}: prefix not served by any site of its service (301)")]
    PrefixNotServed {
        /// The handle asked for.
        handle: String,
    },
    /// Response code 402: the values asked for need authentication.
    #[error("{handle}: authentication needed (402)")]
    AuthenticationNeeded {
        /// The handle asked for.
        handle: String,
    },
    /// The overall deadline passed.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// A server answered something that is not an acceptable response.
    #[error("protocol error from {server}: {violation}")]
    Protocol {
        /// The server that answered.
        server: SocketAddr,
        /// What was wrong.
        violation: ProtocolViolation,
    },
    /// A certified answer failed verification.
    #[error("signature check failed for the answer from {server}: {failure}")]
    Signature {
        /// The server that answered.
        server: SocketAddr,
        /// What failed.
        failure: SignatureFailure,
    },
    /// The same referral was met twice, or a service handle chain came back to itself.
    #[error("referral loop while resolving {handle} (at {at})")]
    ReferralLoop {
        /// The handle being resolved.
        handle: String,
        /// The referral or service handle met again.
        at: String,
    },
    /// An HS_ALIAS chain came back to a handle already visited.
    #[error("alias loop: {}", chain.join(" -> "))]
    AliasLoop {
        /// The handles of the chain, in order, ending with the repeated one.
        chain: Vec<String>,
    },
    /// An HS_ALIAS chain is longer than the limit.
    #[error("alias chain longer than {limit}: {}", chain.join(" -> "))]
    TooManyAliases {
        /// The limit.
        limit: usize,
        /// The chain followed so far.
        chain: Vec<String>,
    },
    /// More referrals (302/303 and HS_SERV hops) than the limit, or an HS_SERV chain deeper
    /// than its limit.
    #[error("{handle}: more than {limit} referrals or service hops")]
    TooManyReferrals {
        /// The handle being resolved.
        handle: String,
        /// The limit that was hit.
        limit: u32,
    },
    /// The identifier could not be parsed (or is a URN); nothing was sent.
    #[error("invalid identifier: {0}")]
    InvalidIdentifier(#[from] IdentError),
    /// Strict CORDRA mode and the identifier is not a CORDRA id; nothing was sent.
    #[error("{input:?} is not a CORDRA identifier (strict mode)")]
    NotCordra {
        /// The input as given.
        input: String,
    },
    /// Every server tried failed at the transport level (the last failure is reported).
    #[error("{kind:?} exchange with {server} failed: {error}")]
    Transport {
        /// The server.
        server: SocketAddr,
        /// UDP or TCP.
        kind: TransportKind,
        /// What failed.
        error: TransportError,
    },
    /// No service information was found for the handle's prefix.
    #[error("no service information for {prefix_handle}")]
    ServiceNotFound {
        /// The prefix handle looked up (`0.NA/<prefix>`).
        prefix_handle: String,
    },
    /// Any other response code (a server error, out-of-date site info after a refresh, ...).
    #[error("{server}: {code}{}", if message.is_empty() { String::new() } else { format!(": {message}") })]
    Server {
        /// The server that answered.
        server: SocketAddr,
        /// The response code.
        code: ResponseCode,
        /// The server's error text (lossy UTF-8).
        message: String,
    },
    /// The bootstrap (root) information given could not be read.
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] BootstrapError),
}

impl ResolveError {
    /// True for the outcomes that mean "the identifier has no (matching) values": 100, 200.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            ResolveError::NotFound { .. } | ResolveError::NoMatchingValues { .. }
        )
    }

    /// True for errors detected before anything was sent (bad input or configuration).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            ResolveError::InvalidIdentifier(_)
                | ResolveError::NotCordra { .. }
                | ResolveError::Bootstrap(_)
        )
    }

    /// The response code this outcome stands for, when it stands for one.
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
