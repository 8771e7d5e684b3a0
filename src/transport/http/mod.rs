//! HTTP (feature `http`): the native protocol tunnelled over HTTP(S) (PROTOCOL.md §8.3) and
//! plain HTTP GETs for the REST API of handle proxies and RFC 2169 URN resolvers.
//!
//! - `native`: one `POST /<handle>` per request on its own connection, the body the
//!   envelope and message exactly as over TCP; the answer read from the body the same way;
//! - `get`: a pooled client for [`HttpGet`](super::HttpGet) (redirects are answers, never
//!   followed; the body capped);
//! - `tls`: the TLS settings: web PKI roots for names a user typed, and the pin to the key of
//!   a server's HS_SITE record for the native HTTPS interface.

mod get;
mod native;
mod tls;

pub(crate) use get::Getter;
pub(crate) use native::exchange;

/// The answer in the body of a native HTTP(S) response, as an exchange reads it: the content
/// type (its media type, when given) must be [`HDL_MIME_TYPE`], the body's first envelope +
/// message must decode under `options.limits` and be a response. The HTTP status is only
/// named in errors.
///
/// Not a stable API: public so that the fuzz targets (`fuzz/`) reach the decoder without a
/// socket.
#[doc(hidden)]
pub fn decode_native_answer(
    status: u16,
    content_type: Option<&str>,
    body: bytes::Bytes,
    options: &super::ExchangeOptions,
) -> Result<crate::wire::Message, super::TransportError> {
    native::decode_answer(status, content_type, body, options)
}

/// The MIME type of native messages over HTTP.
pub const HDL_MIME_TYPE: &str = "application/x-hdl-message";

/// Where a native request goes over HTTP(S): the server's address and HTTP(S) port, and what
/// its site record says about it (PROTOCOL.md §7.1, §8.3).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpTarget {
    /// Address and HTTP(S) port to connect to.
    pub addr: std::net::SocketAddr,
    /// HTTPS (interface protocol 3) rather than HTTP (2).
    pub tls: bool,
    /// The `Host` (and TLS server name): the site's `domain` attribute; `None` = the address.
    pub host: Option<String>,
    /// URL path prefix from the site's `path` attribute ("" when absent), without a trailing
    /// `/`.
    pub path: String,
    /// HTTPS: the server's public key from its HS_SITE record (HS_PUBKEY bytes). The
    /// certificate must carry exactly this key; `None` = the certificate is checked against
    /// the web PKI roots and the host name instead.
    pub pinned_key: Option<bytes::Bytes>,
}

impl HttpTarget {
    /// Plain HTTP to `addr`, `Host` the address, no path prefix.
    pub fn http(addr: std::net::SocketAddr) -> Self {
        Self {
            addr,
            tls: false,
            host: None,
            path: String::new(),
            pinned_key: None,
        }
    }

    /// HTTPS to `addr`, the certificate checked against the web PKI for `host` (or the
    /// address).
    pub fn https(addr: std::net::SocketAddr) -> Self {
        Self {
            tls: true,
            ..Self::http(addr)
        }
    }

    /// Sets the `Host` header and TLS server name.
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Sets the URL path prefix (a trailing `/` is dropped).
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        let mut path = path.into();
        while path.ends_with('/') {
            path.pop();
        }
        self.path = path;
        self
    }

    /// Pins the TLS certificate to this HS_PUBKEY.
    pub fn with_pinned_key(mut self, key: bytes::Bytes) -> Self {
        self.pinned_key = Some(key);
        self
    }

    /// The `Host` header: the host name or address, with the port unless it is the
    /// scheme's default.
    pub(crate) fn host_header(&self) -> String {
        let default_port = if self.tls { 443 } else { 80 };
        let host = match &self.host {
            Some(h) => h.clone(),
            None => match self.addr.ip() {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            },
        };
        if self.addr.port() == default_port {
            host
        } else {
            format!("{host}:{}", self.addr.port())
        }
    }
}
