//! Errors of the transport layer.

use thiserror::Error;

use crate::wire::{DecodeError, EncodeError};

/// Why one exchange with one server failed. Cheap to clone, so a resolver can keep it per
/// attempt and match on variants (never on message text).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TransportError {
    /// UDP: every retransmission was waited out without an answer. TCP: the connect or read
    /// timeout elapsed.
    #[error("timed out")]
    Timeout,
    /// A socket error (kind and text, so that the error stays `Clone`).
    #[error("i/o error ({0:?}): {1}")]
    Io(std::io::ErrorKind, String),
    /// The answer could not be decoded (TCP; on UDP bad datagrams are dropped instead).
    #[error("cannot decode the answer: {0}")]
    Decode(DecodeError),
    /// The request could not be encoded.
    #[error("cannot encode the request: {0}")]
    Encode(EncodeError),
    /// The request does not fit the UDP rules of this transport (see
    /// [`MAX_UDP_REQUEST_FRAGMENTS`](super::MAX_UDP_REQUEST_FRAGMENTS)); the caller should use TCP.
    #[error("request too large for UDP")]
    TooLargeForUdp,
    /// TCP: the peer closed the connection before a whole answer arrived.
    #[error("connection closed before a complete answer")]
    Closed,
    /// TCP: the answer carries another request id than the request.
    #[error("answer has request id {got:#010x}, expected {expected:#010x}")]
    RequestIdMismatch {
        /// The id sent.
        expected: u32,
        /// The id received.
        got: u32,
    },
    /// Too many requests in flight on this transport (the UDP demultiplexer table is full).
    #[error("too many requests in flight")]
    Busy,
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Io(e.kind(), e.to_string())
    }
}

impl From<DecodeError> for TransportError {
    fn from(e: DecodeError) -> Self {
        TransportError::Decode(e)
    }
}

impl From<EncodeError> for TransportError {
    fn from(e: EncodeError) -> Self {
        TransportError::Encode(e)
    }
}
