//! [`HttpReply`]: what the test server's HTTP side answers, built by pure functions (the REST
//! API, the RFC 2169 resolver) so that they can be tested without a socket.

use bytes::Bytes;

/// One HTTP answer of the test server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpReply {
    /// Status code.
    pub status: u16,
    /// `Content-Type` (none for bodiless answers such as a redirect).
    pub content_type: Option<&'static str>,
    /// Further headers (`Location`, `Retry-After`, ...).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Bytes,
}

impl HttpReply {
    /// An answer with `status`, a content type and a body.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Bytes>) -> Self {
        Self {
            status,
            content_type: Some(content_type),
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// A bodiless answer with `status`.
    pub fn empty(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }
}
