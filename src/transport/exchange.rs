//! The [`Exchange`] trait (what the resolver talks to) and what goes in and out of it:
//! [`ExchangeOptions`], [`TransportKind`] and [`Exchanged`]. The real transport is
//! [`NetTransport`](super::NetTransport).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::error::TransportError;
use super::http::HttpTarget;
use crate::wire::{Limits, Message, SessionKey};

/// Which transport an attempt used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// UDP datagrams of at most 512 bytes (PROTOCOL.md §8.1).
    Udp,
    /// One TCP connection per request (PROTOCOL.md §8.2).
    Tcp,
    /// The native protocol over HTTP, one connection per request (PROTOCOL.md §8.3).
    Http,
    /// The native protocol over HTTPS.
    Https,
    /// The REST API of a handle proxy (`GET /api/handles/...`, JSON), through
    /// [`Exchange::fetch`]; never a value for [`Exchange::exchange`].
    Rest,
}

impl TransportKind {
    /// `"udp"` or `"tcp"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TransportKind::Udp => "udp",
            TransportKind::Tcp => "tcp",
            TransportKind::Http => "http",
            TransportKind::Https => "https",
            TransportKind::Rest => "rest",
        }
    }
}

impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Knobs for one exchange: [`ExchangeOptions::default`], then the `with_*` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExchangeOptions {
    /// UDP: how long to wait after each (re)transmission of every fragment of the request.
    /// The number of entries is the number of transmissions (an empty schedule sends nothing
    /// and gives [`TransportError::Timeout`] at once). Default 500, 1000, 1500 ms (the
    /// reference client's schedule).
    pub udp_retransmit: Vec<Duration>,
    /// UDP: early loss detection. A request to a server that has answered before waits at
    /// most the server's loss timeout (learned from its round-trip times as TCP learns its
    /// timeouts: the larger of `srtt + 4 × rttvar` and `2 × srtt`, at least 2 ms, longer for
    /// a server seen to answer after it) instead of the schedule's first wait, and then ends with
    /// [`TransportError::PresumedLost`], so that the caller can send it again (under
    /// whatever limit it keeps). Only when that timeout is shorter than the first wait.
    /// Default off: an exchange then answers or times out, as the schedule says. The
    /// resolver turns it on.
    pub udp_loss_detection: bool,
    /// UDP, with `udp_loss_detection`: how many times this request was presumed lost
    /// before; its loss timeout doubles for each (up to 64 times), so that a request the
    /// server is merely slow with is not sent again and again. Default 0.
    pub udp_loss_backoff: u32,
    /// TCP: connect timeout. Default 5 s.
    pub tcp_connect_timeout: Duration,
    /// TCP: how long the whole answer may take once connected (written request to last
    /// answer byte). Default 10 s.
    pub tcp_read_timeout: Duration,
    /// Decode limits applied to the answer.
    pub limits: Limits,
    /// The session the request goes in ([`SessionKey::seal`]: session id, MAC, encryption of
    /// non-public values) and its answer is opened with (decrypted when encrypted). `None`:
    /// outside any session, and an encrypted answer is refused.
    pub session: Option<Arc<SessionKey>>,
}

impl Default for ExchangeOptions {
    fn default() -> Self {
        Self {
            udp_retransmit: vec![
                Duration::from_millis(500),
                Duration::from_millis(1000),
                Duration::from_millis(1500),
            ],
            udp_loss_detection: false,
            udp_loss_backoff: 0,
            tcp_connect_timeout: Duration::from_secs(5),
            tcp_read_timeout: Duration::from_secs(10),
            limits: Limits::default(),
            session: None,
        }
    }
}

impl ExchangeOptions {
    /// Sets [`udp_retransmit`](Self::udp_retransmit).
    pub fn with_udp_retransmit(mut self, waits: impl Into<Vec<Duration>>) -> Self {
        self.udp_retransmit = waits.into();
        self
    }

    /// Sets [`udp_loss_detection`](Self::udp_loss_detection).
    pub fn with_udp_loss_detection(mut self, on: bool) -> Self {
        self.udp_loss_detection = on;
        self
    }

    /// Sets [`udp_loss_backoff`](Self::udp_loss_backoff).
    pub fn with_udp_loss_backoff(mut self, times_presumed_lost: u32) -> Self {
        self.udp_loss_backoff = times_presumed_lost;
        self
    }

    /// Sets [`tcp_connect_timeout`](Self::tcp_connect_timeout).
    pub fn with_tcp_connect_timeout(mut self, timeout: Duration) -> Self {
        self.tcp_connect_timeout = timeout;
        self
    }

    /// Sets [`tcp_read_timeout`](Self::tcp_read_timeout).
    pub fn with_tcp_read_timeout(mut self, timeout: Duration) -> Self {
        self.tcp_read_timeout = timeout;
        self
    }

    /// Sets [`limits`](Self::limits).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets [`session`](Self::session).
    pub fn with_session(mut self, session: Option<Arc<SessionKey>>) -> Self {
        self.session = session;
        self
    }
}

/// An answer, and how many transmissions of the request it took (what
/// [`Exchange::exchange`] returns).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Exchanged {
    /// The answer.
    pub message: Message,
    /// Transmissions of the request sent (UDP: 1 + retransmissions; TCP: 1). Answers carry no
    /// transmission number, so above 1 the answer may belong to any of them and a round-trip
    /// time measured for it is ambiguous (Karn's rule: do not use it as an RTT sample).
    pub transmissions: u32,
    /// TCP: the messages that followed an answer with CN set (continued: a handle list comes
    /// in several), up to the first without CN; empty otherwise.
    pub continued: Vec<Message>,
    /// UDP: the server's smoothed round-trip time (RFC 6298) as the transport estimates it
    /// for its loss timeouts, from the round trips its receive task measures, with this
    /// answer's folded in; `None` when this answer was not such a sample (a request sent
    /// more than once or without early loss detection, TCP, HTTP). The resolver takes it as
    /// the server's RTT rather than estimating it a second time.
    pub srtt: Option<Duration>,
}

impl Exchanged {
    /// An answer alone, after `transmissions` transmissions.
    pub fn new(message: Message, transmissions: u32) -> Self {
        Self {
            message,
            transmissions,
            continued: Vec::new(),
            srtt: None,
        }
    }

    /// Sets [`srtt`](Self::srtt), the transport's estimate of the server's round trip.
    pub fn with_srtt(mut self, srtt: Option<Duration>) -> Self {
        self.srtt = srtt;
        self
    }

    /// Sets [`continued`](Self::continued), the messages that followed the answer.
    pub fn with_continued(mut self, continued: Vec<Message>) -> Self {
        self.continued = continued;
        self
    }
}

/// One request/response exchange with one server. Object-safe so the resolver can hold
/// `Arc<dyn Exchange>` and tests can script it.
pub trait Exchange: Send + Sync + 'static {
    /// Sends `request` to `server` over `kind` and returns the answer, with the number of
    /// transmissions it took (1 for a transport that never retransmits).
    ///
    /// The transport chooses the request id: the id in `request` is ignored, and the request
    /// goes out with a fresh random one (never 0 or 0xFFFFFFFF) by which the answer is
    /// matched, so the answer carries the transport's id, not the caller's.
    ///
    /// Cancellation-safe: dropping the future removes any pending entry.
    fn exchange<'a>(
        &'a self,
        server: SocketAddr,
        kind: TransportKind,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>>;

    /// Sends `request` to a server's HTTP(S) interface (PROTOCOL.md §8.3): the `Host`, path
    /// prefix and (HTTPS) pinned key come from the server's site record. Request ids as in
    /// [`exchange`](Self::exchange); always one transmission. The default answers
    /// [`TransportError::Unsupported`], as does [`NetTransport`](super::NetTransport) built
    /// without the `http` feature.
    fn exchange_http<'a>(
        &'a self,
        target: &'a HttpTarget,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        let _ = (target, request, options);
        Box::pin(async { Err(TransportError::Unsupported("http")) })
    }

    /// Sends one HTTP GET and returns the answer as it came (any status; redirects not
    /// followed). The default answers [`TransportError::Unsupported`], as does
    /// [`NetTransport`](super::NetTransport) built without the `http` feature.
    ///
    /// Cancellation-safe: dropping the future closes the connection.
    fn fetch<'a>(&'a self, get: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        let _ = get;
        Box::pin(async { Err(TransportError::Unsupported("http get")) })
    }

    /// Sends one request of a server's REST API ([`HttpSend`]: `PUT`, `DELETE`, a `GET`
    /// with credentials or TLS settings of its own) and returns the answer as it came (any status; redirects not followed), as
    /// [`fetch`](Self::fetch) does. The default answers [`TransportError::Unsupported`], as
    /// does [`NetTransport`](super::NetTransport) built without the `http` feature.
    fn send<'a>(&'a self, send: &'a HttpSend) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        let _ = send;
        Box::pin(async { Err(TransportError::Unsupported("http put/delete")) })
    }
}

/// The method of an [`HttpSend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMethod {
    /// `GET`.
    Get,
    /// `PUT`.
    Put,
    /// `DELETE`.
    Delete,
}

impl HttpMethod {
    /// The method's name (`PUT`, `DELETE`).
    pub const fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Put => "PUT",
            HttpMethod::Delete => "DELETE",
        }
    }
}

/// An HTTP request of the REST API of a server, with credentials (`PUT`, `DELETE`, and a
/// `GET` as the same client sends it): what [`Exchange::send`] sends. Redirects are never
/// followed: a 30x is an answer.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpSend {
    /// The method.
    pub method: HttpMethod,
    /// Absolute `http://` or `https://` URL, already percent-encoded.
    pub url: String,
    /// The `Accept` header.
    pub accept: &'static str,
    /// The `Content-Type` header, when the request has a body.
    pub content_type: Option<&'static str>,
    /// The `Authorization` header (kept out of `Debug`).
    pub authorization: Option<String>,
    /// The body (empty for none).
    pub body: bytes::Bytes,
    /// Most answer body bytes read; a longer body is [`TransportError::BodyTooLarge`].
    pub max_body: usize,
    /// Whether an `https://` server's certificate is checked against the web PKI (default);
    /// `false` accepts any (pyhandle's `HTTPS_verify=False`, only where a user asks).
    pub verify_tls: bool,
}

impl std::fmt::Debug for HttpSend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSend")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("content_type", &self.content_type)
            .field("authorization", &self.authorization.as_ref().map(|_| "…"))
            .field("body_len", &self.body.len())
            .field("verify_tls", &self.verify_tls)
            .finish()
    }
}

impl HttpSend {
    /// A `method` request of `url` (absolute, already percent-encoded) with no body and no
    /// credentials, `Accept: accept`, reading at most `max_body` answer bytes.
    pub fn new(
        method: HttpMethod,
        url: impl Into<String>,
        accept: &'static str,
        max_body: usize,
    ) -> Self {
        Self {
            method,
            url: url.into(),
            accept,
            content_type: None,
            authorization: None,
            body: bytes::Bytes::new(),
            max_body,
            verify_tls: true,
        }
    }

    /// Sets [`verify_tls`](Self::verify_tls).
    pub fn with_verify_tls(mut self, verify: bool) -> Self {
        self.verify_tls = verify;
        self
    }

    /// Sets the body and its `Content-Type`.
    pub fn with_body(mut self, content_type: &'static str, body: impl Into<bytes::Bytes>) -> Self {
        self.content_type = Some(content_type);
        self.body = body.into();
        self
    }

    /// Sets the `Authorization` header.
    pub fn with_authorization(mut self, value: impl Into<String>) -> Self {
        self.authorization = Some(value.into());
        self
    }
}

/// An HTTP GET (the REST API of a proxy, RFC 2169 URN resolution): what
/// [`Exchange::fetch`] sends. Redirects are never followed: a 30x is an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpGet {
    /// Absolute `http://` or `https://` URL, already percent-encoded.
    pub url: String,
    /// The `Accept` header.
    pub accept: &'static str,
    /// Most body bytes read; a longer body is [`TransportError::BodyTooLarge`].
    pub max_body: usize,
}

impl HttpGet {
    /// A GET of `url` (absolute, already percent-encoded) with `Accept: accept`, reading at
    /// most `max_body` body bytes.
    pub fn new(url: impl Into<String>, accept: &'static str, max_body: usize) -> Self {
        Self {
            url: url.into(),
            accept,
            max_body,
        }
    }
}

/// The answer to an [`HttpGet`]: status, the headers a client of the REST API or of an
/// RFC 2169 resolver acts on, and the body (at most [`HttpGet::max_body`] bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Fetched {
    /// HTTP status code.
    pub status: u16,
    /// `Content-Type`, when present and ASCII.
    pub content_type: Option<String>,
    /// `Location`, when present and ASCII.
    pub location: Option<String>,
    /// `Retry-After`, when present and ASCII (seconds or an HTTP date, as sent).
    pub retry_after: Option<String>,
    /// The body.
    pub body: bytes::Bytes,
}

/// The media type of a `Content-Type` value: the part before any parameter, trimmed
/// (`application/json; charset=utf-8` → `application/json`).
pub fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or_default().trim()
}

impl Fetched {
    /// True when `Content-Type` is present and its media type is `want` (ASCII
    /// case-insensitively).
    pub fn has_media_type(&self, want: &str) -> bool {
        self.content_type
            .as_deref()
            .is_some_and(|c| media_type(c).eq_ignore_ascii_case(want))
    }

    /// An answer with `status` and `body` and no headers (for test doubles).
    pub fn new(status: u16, body: impl Into<bytes::Bytes>) -> Self {
        Self {
            status,
            body: body.into(),
            ..Self::default()
        }
    }

    /// Sets `Content-Type`.
    pub fn with_content_type(mut self, value: impl Into<String>) -> Self {
        self.content_type = Some(value.into());
        self
    }

    /// Sets `Location`.
    pub fn with_location(mut self, value: impl Into<String>) -> Self {
        self.location = Some(value.into());
        self
    }

    /// Sets `Retry-After`.
    pub fn with_retry_after(mut self, value: impl Into<String>) -> Self {
        self.retry_after = Some(value.into());
        self
    }
}

impl<T: Exchange + ?Sized> Exchange for Arc<T> {
    fn fetch<'a>(&'a self, get: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        (**self).fetch(get)
    }

    fn send<'a>(&'a self, send: &'a HttpSend) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        (**self).send(send)
    }

    fn exchange_http<'a>(
        &'a self,
        target: &'a HttpTarget,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        (**self).exchange_http(target, request, options)
    }

    fn exchange<'a>(
        &'a self,
        server: SocketAddr,
        kind: TransportKind,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        (**self).exchange(server, kind, request, options)
    }
}
