//! `--root` and `--server` addresses: `HOST[:PORT]`, with port 2641 (the Handle System's)
//! when none is given, and errors that tell a typo from a host name that does not resolve.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// The Handle System's port, used when an address gives none.
pub const DEFAULT_PORT: u16 = 2641;

/// Why a `HOST[:PORT]` text gives no address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddrError {
    /// Not of the form `HOST`, `HOST:PORT`, `IP`, `IP:PORT`, `[IPv6]` or `[IPv6]:PORT`.
    Syntax(String),
    /// The host name could not be looked up.
    Lookup {
        /// The host name.
        host: String,
        /// What the system resolver said.
        message: String,
    },
}

impl std::fmt::Display for AddrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AddrError::Syntax(why) => write!(
                f,
                "not a HOST[:PORT] address ({why}; e.g. 127.0.0.1:2641, or a host name; the port defaults to {DEFAULT_PORT})"
            ),
            AddrError::Lookup { host, message } => {
                write!(f, "cannot look up the host name {host:?}: {message}")
            }
        }
    }
}

/// Reads `text` as an address; `lookup` turns a host name and port into addresses (the
/// system resolver in the CLI; tests pass their own, so that no name is ever looked up).
pub fn host_port(
    text: &str,
    lookup: impl FnOnce(&str, u16) -> std::io::Result<Vec<SocketAddr>>,
) -> Result<SocketAddr, AddrError> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DEFAULT_PORT));
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return inner
            .parse::<Ipv6Addr>()
            .map(|ip| SocketAddr::new(IpAddr::V6(ip), DEFAULT_PORT))
            .map_err(|_| AddrError::Syntax(format!("{inner:?} is not an IPv6 address")));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) => {
            let port = port
                .parse::<u16>()
                .map_err(|_| AddrError::Syntax(format!("port {port:?} is not a number 0-65535")))?;
            (host, port)
        }
        None => (text, DEFAULT_PORT),
    };
    if host.is_empty() {
        return Err(AddrError::Syntax("no host".into()));
    }
    if let Some(bad) = host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
    {
        return Err(AddrError::Syntax(format!(
            "{:?} cannot be in a host name",
            bad
        )));
    }
    match lookup(host, port) {
        Ok(addrs) => addrs.into_iter().next().ok_or_else(|| AddrError::Lookup {
            host: host.to_string(),
            message: "no address found".into(),
        }),
        Err(e) => Err(AddrError::Lookup {
            host: host.to_string(),
            message: e.to_string(),
        }),
    }
}

/// [`host_port`] with the system resolver.
pub fn resolve_host_port(text: &str) -> Result<SocketAddr, AddrError> {
    host_port(text, |host, port| {
        std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map(Iterator::collect)
    })
}
