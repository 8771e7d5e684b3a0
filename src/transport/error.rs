//! Errors of the transport layer.

use thiserror::Error;

use crate::wire::json::JsonError;
use crate::wire::{DecodeError, EncodeError};

/// Why one exchange with one server failed. Cheap to clone, so a resolver can keep it per
/// attempt and match on variants (never on message text).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TransportError {
    /// UDP: every retransmission was waited out without an answer. TCP: the connect or read
    /// timeout elapsed.
    #[error("timed out")]
    Timeout,
    /// UDP, with [`ExchangeOptions::udp_loss_detection`](super::ExchangeOptions::udp_loss_detection):
    /// no answer within the server's loss timeout (a few of its round trips), so the
    /// request was most likely dropped. The exchange ends (an answer to it that comes later
    /// is dropped, and widens the server's timeout) and the caller may send again.
    #[error("presumed lost (no answer within the server's loss timeout)")]
    PresumedLost,
    /// A socket error (kind and text, so that the error stays `Clone`). Displayed as the
    /// text without its `(os error N)` tail, e.g. `connection refused`. Kind
    /// `ConnectionRefused` over UDP: the destination port is closed (ICMP port unreachable;
    /// learned on Linux only, where it ends the request at once instead of a timeout).
    #[error("{}", io_text(*.0, .1))]
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
    /// This transport cannot do what was asked (e.g. HTTP in a build without the `http`
    /// feature, or a test double that only speaks UDP and TCP).
    #[error("not supported by this transport: {0}")]
    Unsupported(&'static str),
    /// HTTP: the answer was not what the exchange expects (status, content type, body), or
    /// the HTTP client failed; [`HttpError`] says which.
    #[error("http: {0}")]
    Http(HttpError),
    /// TCP: more continued (CN) messages followed an answer than a client takes.
    #[error("more than {limit} continued messages")]
    TooManyMessages {
        /// The most taken.
        limit: usize,
    },
    /// HTTP: the body is longer than the cap of this exchange.
    #[error("http body longer than {limit} bytes")]
    BodyTooLarge {
        /// The cap.
        limit: usize,
    },
    /// A session could not seal the request or open the answer (an encrypted answer outside
    /// a session, or one that does not decrypt under the session key).
    #[error("session: {0}")]
    Session(crate::wire::CryptError),
    /// TLS: the handshake failed or the server's certificate does not carry the key its
    /// HS_SITE record names.
    #[error("tls: {0}")]
    Tls(String),
}

impl TransportError {
    /// True when the exchange ran out of time (every retransmission waited out, or presumed
    /// lost).
    ///
    /// ```
    /// use handle_resolver::transport::TransportError;
    ///
    /// assert!(TransportError::Timeout.is_timeout());
    /// assert!(!TransportError::Closed.is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, TransportError::Timeout | TransportError::PresumedLost)
    }

    /// The HTTP status of the answer, for an HTTP failure that had one.
    ///
    /// ```
    /// use handle_resolver::transport::{HttpError, TransportError};
    ///
    /// let e = TransportError::Http(HttpError::ContentType {
    ///     status: 502,
    ///     got: Some("text/html".into()),
    ///     expected: "application/json",
    /// });
    /// assert_eq!(e.http_status(), Some(502));
    /// assert_eq!(TransportError::Timeout.http_status(), None);
    /// ```
    pub fn http_status(&self) -> Option<u16> {
        match self {
            TransportError::Http(e) => e.status(),
            _ => None,
        }
    }
}

/// Why an HTTP exchange (the native protocol over HTTP, a handle proxy's REST API) failed
/// above the connection: what the answer held instead of what was asked, each field typed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The HTTP client failed (a malformed response, a protocol error): its own text.
    #[error("{0}")]
    Client(String),
    /// The URL cannot be asked: not an `http://` or `https://` URI.
    #[error("url {url:?}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The answer has another content type than the one the exchange reads (a status page).
    #[error("status {status}, content-type {}, not {expected}", got.as_deref().map_or("absent".to_string(), |t| format!("{t:?}")))]
    ContentType {
        /// The HTTP status.
        status: u16,
        /// The media type sent, if any.
        got: Option<String>,
        /// The media type expected.
        expected: &'static str,
    },
    /// The body is empty where an answer was expected.
    #[error("status {status}, empty body")]
    EmptyBody {
        /// The HTTP status.
        status: u16,
    },
    /// The body holds a native request where an answer was expected.
    #[error("status {status}, the body holds a request, not an answer")]
    NotAnAnswer {
        /// The HTTP status.
        status: u16,
    },
    /// The body is not the documented JSON (a handle proxy's REST API).
    #[error("status {status}, body: {error}")]
    Json {
        /// The HTTP status.
        status: u16,
        /// Where in the document and why.
        error: JsonError,
    },
    /// The server stayed busy (HTTP 429 or 503) through the retries its `Retry-After`
    /// allowed, or asked for a longer wait than a retry waits.
    #[error("status {status} (busy; {retries} retries, Retry-After {})", retry_after.as_deref().unwrap_or("absent"))]
    Busy {
        /// The last HTTP status (429 or 503).
        status: u16,
        /// The retries made.
        retries: u32,
        /// The last `Retry-After` header, as sent.
        retry_after: Option<String>,
    },
}

impl HttpError {
    /// The HTTP status of the answer, when one came.
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::ContentType { status, .. }
            | HttpError::EmptyBody { status }
            | HttpError::NotAnAnswer { status }
            | HttpError::Json { status, .. }
            | HttpError::Busy { status, .. } => Some(*status),
            HttpError::Client(_) | HttpError::Url { .. } => None,
        }
    }
}

impl From<HttpError> for TransportError {
    fn from(e: HttpError) -> Self {
        TransportError::Http(e)
    }
}

/// The readable text of an I/O error: the OS text without `(os error N)`, starting in lower
/// case (`Connection refused (os error 111)` → `connection refused`), or the kind's own text
/// when there is none.
fn io_text(kind: std::io::ErrorKind, text: &str) -> String {
    let text = text.trim();
    let text = match text.rsplit_once(" (os error ") {
        Some((head, tail)) if tail.ends_with(')') => head.trim_end(),
        _ => text,
    };
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (None, _) => kind.to_string(),
        // Lower-case a capital only when a lower-case letter follows ("IPv6" stays).
        (Some(first), Some(second)) if first.is_uppercase() && second.is_lowercase() => {
            first.to_lowercase().chain(text.chars().skip(1)).collect()
        }
        _ => text.to_string(),
    }
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
