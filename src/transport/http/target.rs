//! [`HttpTarget`]: where a native request goes over HTTP(S), and the MIME type of native
//! messages over HTTP.

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
    #[cfg(feature = "http")]
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
