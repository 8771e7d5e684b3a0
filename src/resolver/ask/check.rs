//! The checks of an answer before it counts (op code, expiry, request digest, signature;
//! PROTOCOL.md §9.1), the one rule for moving on to the next transport, and which failure
//! is reported when every site failed.

use std::net::SocketAddr;

use crate::ident::Handle;
use crate::transport::{TransportError, TransportKind};
use crate::wire::signature::check_credential_type;
use crate::wire::{verify_message, Message, OpFlags, ResponseCode, ServerInfo};

use super::super::error::{ProtocolViolation, ResolveError, SignatureFailure};
use super::super::record::Rejection;

/// Checks an answer: op code, expiry, request digest when asked, signature when asked.
/// Returns whether the signature was verified, or why the answer is rejected.
pub(super) fn check_answer(
    request: &Message,
    response: &Message,
    server: &ServerInfo,
    addr: SocketAddr,
    now: u64,
) -> Result<bool, Rejection> {
    use Rejection::{Protocol, Signature};
    if response.header.op_code != request.header.op_code {
        return Err(Protocol(ProtocolViolation::OpCodeMismatch {
            expected: request.header.op_code.code(),
            got: response.header.op_code.code(),
        }));
    }
    let expiration = response.header.expiration;
    if expiration != 0 && u64::from(expiration) < now {
        return Err(Protocol(ProtocolViolation::Expired { expiration, now }));
    }
    if request.header.flags.contains(OpFlags::RD) {
        let digest = response
            .request_digest
            .as_ref()
            .ok_or(Protocol(ProtocolViolation::DigestMissing))?;
        let covered = request
            .header_and_body()
            .map_err(|_| Protocol(ProtocolViolation::DigestMismatch))?;
        if !digest.matches(&covered) {
            return Err(Protocol(ProtocolViolation::DigestMismatch));
        }
    }
    if !request.header.flags.contains(OpFlags::CT) {
        return Ok(false);
    }
    let credential = response
        .credential
        .as_ref()
        .ok_or(Signature(SignatureFailure::Unsigned))?;
    if check_credential_type(&credential.credential_type).is_err() {
        return Err(Signature(SignatureFailure::UnsupportedCredential(
            String::from_utf8_lossy(&credential.credential_type).into_owned(),
        )));
    }
    let key = match server.public_key() {
        Ok(Some(k)) => k,
        Ok(None) => return Err(Signature(SignatureFailure::NoServerKey(addr))),
        Err(e) => return Err(Signature(SignatureFailure::BadKey(e))),
    };
    verify_message(response, &key).map_err(|e| Signature(SignatureFailure::Invalid(e)))?;
    Ok(true)
}

/// Silence or refusal: no sign that the server is there (what a server's health counts).
pub(super) fn is_silence(error: &ResolveError) -> bool {
    matches!(
        error,
        ResolveError::Transport {
            error: TransportError::Timeout | TransportError::Io(..) | TransportError::Closed,
            ..
        }
    )
}

/// The one fallback rule (PROTOCOL.md §8.4): the next transport of the order is tried on the
/// same server when a UDP attempt got no answer in time, its request is too big for
/// datagrams, its UDP side is saturated or its UDP port is closed (ICMP port unreachable,
/// learned on Linux); or when a connection (TCP, HTTP) timed out, was
/// refused or reset, or closed early, as where a network blocks a port; or when the
/// transport cannot do it (HTTP without the feature). Anything else (an answer, a bad
/// answer, a failed TLS pin) stands.
pub(super) fn moves_on(kind: TransportKind, error: &ResolveError) -> bool {
    let ResolveError::Transport { error, .. } = error else {
        return false;
    };
    match kind {
        // A refused UDP port (ICMP port unreachable) is learned like a silence (`is_silence`).
        TransportKind::Udp => matches!(
            error,
            TransportError::Timeout
                | TransportError::TooLargeForUdp
                | TransportError::Busy
                | TransportError::Io(std::io::ErrorKind::ConnectionRefused, _)
        ),
        TransportKind::Rest => false,
        TransportKind::Tcp | TransportKind::Http | TransportKind::Https => matches!(
            error,
            TransportError::Timeout
                | TransportError::Io(..)
                | TransportError::Closed
                | TransportError::Unsupported(_)
        ),
    }
}

/// The error reported when every site failed: 301 everywhere → prefix not served; otherwise
/// the most telling failure ([`telling`]; the first of equals), noting how many sites were
/// asked.
pub(super) fn summarize(handle: &Handle, errors: Vec<ResolveError>) -> ResolveError {
    let asked = errors.len();
    let all_301 = errors.iter().all(|e| {
        matches!(
            e,
            ResolveError::Server {
                code: ResponseCode::ServerNotResponsible,
                ..
            }
        )
    });
    if all_301 && asked > 0 {
        let message = errors
            .iter()
            .find_map(|e| match e {
                ResolveError::Server { message, .. } if !message.is_empty() => {
                    Some(message.clone())
                }
                _ => None,
            })
            .unwrap_or_default();
        return ResolveError::PrefixNotServed {
            handle: handle.clone(),
            message,
        };
    }
    match errors.into_iter().min_by_key(telling) {
        Some(e) => e.with_sites_asked(asked),
        None => ResolveError::ServiceNotFound {
            prefix_handle: handle.clone(),
        },
    }
}

/// How telling one site's failure is (lower is more): the server's own answer, then an
/// answer that was not acceptable, then one the transport could not take, then silence,
/// then a transport that could not even send; a 301 ("not this site") last, as other sites
/// may serve the prefix.
pub(super) fn telling(e: &ResolveError) -> u8 {
    match e {
        ResolveError::Server {
            code: ResponseCode::ServerNotResponsible,
            ..
        } => 9,
        ResolveError::Server { .. } => 0,
        ResolveError::Signature { .. } => 1,
        ResolveError::Protocol { .. } => 2,
        ResolveError::Transport { error, .. } => match error {
            TransportError::Decode(_)
            | TransportError::Closed
            | TransportError::RequestIdMismatch { .. }
            | TransportError::Http(_)
            | TransportError::TooManyMessages { .. }
            | TransportError::BodyTooLarge { .. }
            | TransportError::Tls(_)
            | TransportError::Session(_) => 3,
            TransportError::Timeout | TransportError::PresumedLost => 4,
            TransportError::Busy | TransportError::TooLargeForUdp | TransportError::Encode(_) => 5,
            TransportError::Io(..) => 6,
            TransportError::Unsupported(_) => 7,
        },
        // Not asked: less telling than any failure of a server that was.
        ResolveError::ServerUnavailable { .. } => 8,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;
    use std::net::SocketAddr;

    fn h(text: &str) -> Handle {
        Handle::parse(text).unwrap()
    }

    fn at(n: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, n], 2641))
    }

    fn transport(n: u8, error: TransportError) -> ResolveError {
        ResolveError::Transport {
            server: at(n),
            kind: crate::transport::TransportKind::Udp,
            error,
            sites_asked: 1,
        }
    }

    fn refused(n: u8) -> ResolveError {
        transport(
            n,
            TransportError::Io(ErrorKind::ConnectionRefused, "Connection refused".into()),
        )
    }

    fn server(n: u8, code: ResponseCode) -> ResolveError {
        ResolveError::Server {
            server: Some(at(n)),
            code,
            message: String::new(),
            sites_asked: 1,
        }
    }

    #[test]
    fn a_timeout_is_more_telling_than_a_refused_connection() {
        for errors in [
            vec![
                transport(1, TransportError::Timeout),
                refused(2),
                refused(3),
            ],
            vec![
                refused(2),
                refused(3),
                transport(1, TransportError::Timeout),
            ],
        ] {
            let e = summarize(&h("1/x"), errors);
            assert!(
                matches!(
                    &e,
                    ResolveError::Transport {
                        error: TransportError::Timeout,
                        sites_asked: 3,
                        ..
                    }
                ),
                "{e:?}"
            );
            assert_eq!(
                e.to_string(),
                "udp exchange with 127.0.0.1:2641 failed: timed out (3 sites asked)"
            );
        }
    }

    #[test]
    fn a_servers_answer_is_more_telling_than_silence_or_a_301() {
        let errors = vec![
            refused(1),
            server(2, ResponseCode::ServerNotResponsible),
            transport(3, TransportError::Timeout),
            server(4, ResponseCode::ServerBusy),
        ];
        let e = summarize(&h("1/x"), errors);
        assert_eq!(
            e.to_string(),
            "127.0.0.4:2641 answered SERVER_TOO_BUSY (3) (4 sites asked)"
        );
        // A 301 beside silence: the silence is reported (another site may serve the prefix).
        let e = summarize(
            &h("1/x"),
            vec![
                server(2, ResponseCode::ServerNotResponsible),
                transport(3, TransportError::Timeout),
            ],
        );
        assert!(
            matches!(&e, ResolveError::Transport { server, .. } if *server == at(3)),
            "{e:?}"
        );
    }

    #[test]
    fn one_site_or_all_301_or_none() {
        let e = summarize(&h("1/x"), vec![refused(1)]);
        assert_eq!(
            e.to_string(),
            "udp exchange with 127.0.0.1:2641 failed: connection refused"
        );
        let e = summarize(
            &h("1/x"),
            vec![
                server(1, ResponseCode::ServerNotResponsible),
                server(2, ResponseCode::ServerNotResponsible),
            ],
        );
        assert!(matches!(e, ResolveError::PrefixNotServed { .. }), "{e:?}");
        let e = summarize(&h("1/x"), Vec::new());
        assert!(matches!(e, ResolveError::ServiceNotFound { .. }), "{e:?}");
    }
}
