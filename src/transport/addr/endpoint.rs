//! [`Endpoint`]: a server as people write it on a command line or in a configuration, read in
//! one place for every front end (`resolve --server`, `admin --root`, Python's `server=`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::{host_port, AddrError, BaseUrl, BaseUrlError};

/// Where a server takes requests: the native protocol at an address (UDP, TCP), or the
/// native protocol over a server's HTTP(S) interface.
///
/// Written as `HOST[:PORT]` or `hdl://HOST[:PORT]` (port 2641 unless given), or
/// `http://HOST[:PORT]` / `https://HOST[:PORT]` (the scheme's port unless given). A host
/// name is looked up once, when the text is read; over HTTP(S) it is also the `Host` header
/// and the TLS name.
///
/// ```
/// use std::net::SocketAddr;
/// use handle_resolver::transport::addr::Endpoint;
///
/// let no_lookup = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> { Ok(Vec::new()) };
/// let addr: SocketAddr = "127.0.0.1:2641".parse().unwrap();
/// assert_eq!(Endpoint::parse_with("127.0.0.1", no_lookup)?, Endpoint::Native(addr));
/// assert_eq!(Endpoint::parse_with("hdl://127.0.0.1", no_lookup)?, Endpoint::Native(addr));
/// assert_eq!(
///     Endpoint::parse_with("https://127.0.0.1:8443/", no_lookup)?,
///     Endpoint::Http { addr: "127.0.0.1:8443".parse().unwrap(), host: None, tls: true }
/// );
/// assert!(Endpoint::parse_with("http://127.0.0.1/api", no_lookup).is_err());
/// # Ok::<(), handle_resolver::transport::addr::EndpointError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// The native protocol, UDP and TCP, at this address.
    Native(SocketAddr),
    /// The native protocol over HTTP (HTTPS when `tls`) at this address.
    Http {
        /// The address the HTTP interface listens on.
        addr: SocketAddr,
        /// The host name written (the `Host` header and TLS name); `None` for an IP
        /// literal.
        host: Option<String>,
        /// HTTPS.
        tls: bool,
    },
}

/// Why a text names no server, or no root.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EndpointError {
    /// A `HOST[:PORT]` (or `hdl://HOST[:PORT]`) that is not one, or a host name that does
    /// not resolve.
    #[error("{0}")]
    Address(AddrError),
    /// An `http(s)://` text that is not a usable URL.
    #[error("{0}")]
    Url(BaseUrlError),
    /// An `http(s)://` URL with a path: a server's HTTP interface is named by its host and
    /// port alone.
    #[error("{url:?}: give the HTTP interface as http://HOST:PORT (no path)")]
    UrlPath {
        /// The URL given.
        url: String,
    },
    /// A root that is neither a readable file nor an address.
    #[error("neither a readable file nor a HOST[:PORT] address: {0}")]
    NotFileNorAddress(AddrError),
}

impl EndpointError {
    /// True when the text itself is wrong (a typo), false when a host name could not be
    /// looked up.
    pub fn is_syntax(&self) -> bool {
        match self {
            EndpointError::Address(e) | EndpointError::NotFileNorAddress(e) => {
                matches!(e, AddrError::Syntax(_))
            }
            EndpointError::Url(_) | EndpointError::UrlPath { .. } => true,
        }
    }
}

impl Endpoint {
    /// Reads `text` (see [`Endpoint`]), looking a host name up with the system resolver
    /// (blocking).
    pub fn parse(text: &str) -> Result<Endpoint, EndpointError> {
        Self::parse_with(text, system_lookup)
    }

    /// [`Endpoint::parse`] with `lookup` turning a host name and port into addresses (tests
    /// pass their own, so that no name is ever looked up).
    pub fn parse_with(
        text: &str,
        lookup: impl FnOnce(&str, u16) -> std::io::Result<Vec<SocketAddr>>,
    ) -> Result<Endpoint, EndpointError> {
        let text = text.trim();
        if has_http_scheme(text) {
            let url = BaseUrl::parse(text).map_err(EndpointError::Url)?;
            if !url.path().is_empty() {
                return Err(EndpointError::UrlPath {
                    url: text.to_string(),
                });
            }
            let (addr, host) = match url.literal_addr() {
                Some(addr) => (addr, None),
                None => {
                    let named = format!("{}:{}", url.host(), url.port());
                    let addr = host_port(&named, lookup).map_err(EndpointError::Address)?;
                    (addr, Some(url.host().to_string()))
                }
            };
            return Ok(Endpoint::Http {
                addr,
                host,
                tls: url.is_tls(),
            });
        }
        let bare = strip_hdl_scheme(text);
        host_port(bare.trim_end_matches('/'), lookup)
            .map(Endpoint::Native)
            .map_err(EndpointError::Address)
    }

    /// The address requests go to.
    pub fn addr(&self) -> SocketAddr {
        match self {
            Endpoint::Native(addr) | Endpoint::Http { addr, .. } => *addr,
        }
    }

    /// True for an HTTP(S) interface.
    pub fn is_http(&self) -> bool {
        matches!(self, Endpoint::Http { .. })
    }
}

/// Where the root service information comes from: a reference-client root file, or a root
/// server.
///
/// ```
/// use std::net::SocketAddr;
/// use handle_resolver::transport::addr::{Endpoint, RootEndpoint};
///
/// let no_lookup = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> { Ok(Vec::new()) };
/// let root = RootEndpoint::parse_with("127.0.0.1:2641", no_lookup)?;
/// assert_eq!(root, RootEndpoint::Server(Endpoint::Native("127.0.0.1:2641".parse().unwrap())));
/// let e = RootEndpoint::parse_with("no/such/file", no_lookup).unwrap_err();
/// assert!(e.to_string().starts_with("neither a readable file nor a HOST[:PORT] address"));
/// # Ok::<(), handle_resolver::transport::addr::EndpointError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RootEndpoint {
    /// A root file of either kind (`root_info` or `bootstrap_handles`), read when the
    /// resolver is built.
    File(PathBuf),
    /// A root server.
    Server(Endpoint),
}

impl RootEndpoint {
    /// Reads `text`: the path of a file that exists, else an [`Endpoint`] (a host name
    /// looked up with the system resolver).
    pub fn parse(text: &str) -> Result<RootEndpoint, EndpointError> {
        Self::parse_with(text, system_lookup)
    }

    /// [`RootEndpoint::parse`] with `lookup` for host names.
    pub fn parse_with(
        text: &str,
        lookup: impl FnOnce(&str, u16) -> std::io::Result<Vec<SocketAddr>>,
    ) -> Result<RootEndpoint, EndpointError> {
        if Path::new(text).is_file() {
            return Ok(RootEndpoint::File(PathBuf::from(text)));
        }
        Endpoint::parse_with(text, lookup)
            .map(RootEndpoint::Server)
            .map_err(|e| match e {
                // Neither: say both, as the text could have been either.
                EndpointError::Address(a @ AddrError::Syntax(_)) => {
                    EndpointError::NotFileNorAddress(a)
                }
                other => other,
            })
    }
}

/// True when `text` starts with `http://` or `https://` (any case).
fn has_http_scheme(text: &str) -> bool {
    let scheme = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    scheme.starts_with("http://") || scheme.starts_with("https://")
}

/// `text` without a leading `hdl://` (any case).
fn strip_hdl_scheme(text: &str) -> &str {
    match text.get(..6) {
        Some(scheme) if scheme.eq_ignore_ascii_case("hdl://") => text.get(6..).unwrap_or_default(),
        _ => text,
    }
}

/// The system resolver, for [`host_port`].
fn system_lookup(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map(Iterator::collect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_lookup(_: &str, _: u16) -> std::io::Result<Vec<SocketAddr>> {
        panic!("no name is looked up here")
    }

    fn looked_up(_: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::from(([127, 0, 0, 9], port))])
    }

    #[test]
    fn every_form_of_a_server() {
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        let native = |s: &str| Endpoint::parse_with(s, no_lookup).unwrap();
        assert_eq!(native("127.0.0.1"), Endpoint::Native(at("127.0.0.1:2641")));
        assert_eq!(native(" 127.0.0.1:9 "), Endpoint::Native(at("127.0.0.1:9")));
        assert_eq!(native("HDL://[::1]:7/"), Endpoint::Native(at("[::1]:7")));
        assert_eq!(
            native("http://127.0.0.1"),
            Endpoint::Http {
                addr: at("127.0.0.1:80"),
                host: None,
                tls: false
            }
        );
        assert_eq!(
            Endpoint::parse_with("HTTPS://hdl.example:8443/", looked_up).unwrap(),
            Endpoint::Http {
                addr: at("127.0.0.9:8443"),
                host: Some("hdl.example".into()),
                tls: true
            }
        );
        assert_eq!(
            Endpoint::parse_with("hdl.example", looked_up).unwrap(),
            Endpoint::Native(at("127.0.0.9:2641"))
        );
    }

    #[test]
    fn typos_are_refused_before_any_lookup() {
        for bad in ["", "host:port", "hdl://", "http://", "ftp://x", "a b"] {
            let e = Endpoint::parse_with(bad, no_lookup).unwrap_err();
            assert!(e.is_syntax(), "{bad:?}: {e}");
        }
        let e = Endpoint::parse_with("http://127.0.0.1/api/handles", no_lookup).unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"http://127.0.0.1/api/handles\": give the HTTP interface as http://HOST:PORT (no path)"
        );
        let failing = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> {
            Err(std::io::Error::other("Name or service not known"))
        };
        let e = Endpoint::parse_with("no-such.example", failing).unwrap_err();
        assert!(!e.is_syntax());
        assert_eq!(
            e.to_string(),
            "cannot look up the host name \"no-such.example\": Name or service not known"
        );
    }

    #[test]
    fn a_root_is_a_file_first() {
        let dir = std::env::temp_dir().join(format!("hr-endpoint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("root_info");
        std::fs::write(&file, b"x").unwrap();
        let text = file.to_str().unwrap();
        assert_eq!(
            RootEndpoint::parse_with(text, no_lookup).unwrap(),
            RootEndpoint::File(file.clone())
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let e = RootEndpoint::parse_with(text, no_lookup).unwrap_err();
        assert!(matches!(e, EndpointError::NotFileNorAddress(_)), "{e:?}");
    }
}
