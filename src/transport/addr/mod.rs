//! Addresses as people write them, each checked in one place: a server's `HOST[:PORT]`
//! ([`host_port`]), with the Handle System's port 2641 when none is given and errors that
//! tell a typo from a host name that does not resolve; the `http(s)://` base URL of an
//! HTTP service ([`BaseUrl`]); and a server or root as a front end's option names it
//! ([`Endpoint`], [`RootEndpoint`]: `HOST[:PORT]`, `hdl://`, `http(s)://`, a root file).
//!
//! ```
//! use std::net::SocketAddr;
//! use handle_resolver::transport::addr::{host_port, AddrError, DEFAULT_PORT};
//!
//! // An IP address needs no lookup: the closure is only called for host names.
//! let no_lookup = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> { Ok(Vec::new()) };
//! assert_eq!(host_port("127.0.0.1", no_lookup)?, SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)));
//! assert_eq!(host_port("[::1]:8000", no_lookup)?.port(), 8000);
//! assert!(matches!(host_port("host:port", no_lookup), Err(AddrError::Syntax(_))));
//! # Ok::<(), AddrError>(())
//! ```

mod base_url;
mod endpoint;

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use thiserror::Error;

pub use base_url::{BaseUrl, BaseUrlError};
pub use endpoint::{Endpoint, EndpointError, RootEndpoint};

/// The Handle System's port, used when an address gives none.
pub const DEFAULT_PORT: u16 = 2641;

/// Why a `HOST[:PORT]` text gives no address.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AddrError {
    /// Not of the form `HOST`, `HOST:PORT`, `IP`, `IP:PORT`, `[IPv6]` or `[IPv6]:PORT`.
    #[error(
        "not a HOST[:PORT] address ({0}; e.g. 127.0.0.1:2641, or a host name; the port \
         defaults to {port})",
        port = DEFAULT_PORT
    )]
    Syntax(String),
    /// The host name could not be looked up.
    #[error("cannot look up the host name {host:?}: {message}")]
    Lookup {
        /// The host name.
        host: String,
        /// What the system resolver said.
        message: String,
    },
}

/// Reads `text` as an address; `lookup` turns a host name and port into addresses (the
/// system resolver in [`resolve_host_port`]; tests pass their own, so that no name is ever
/// looked up). IP addresses are taken as they are; a syntax error is found before any
/// lookup.
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
            "{bad:?} cannot be in a host name"
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

/// [`host_port`] with the system resolver (a host name is looked up, blocking).
pub fn resolve_host_port(text: &str) -> Result<SocketAddr, AddrError> {
    host_port(text, |host, port| {
        std::net::ToSocketAddrs::to_socket_addrs(&(host, port)).map(Iterator::collect)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_default_to_port_2641_and_tell_a_typo_from_a_failed_lookup() {
        let no_lookup = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> {
            panic!("no name is looked up for an IP address")
        };
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(
            host_port("127.0.0.1", no_lookup),
            Ok(addr("127.0.0.1:2641"))
        );
        assert_eq!(
            host_port("127.0.0.1:26451", no_lookup),
            Ok(addr("127.0.0.1:26451"))
        );
        assert_eq!(host_port("::1", no_lookup), Ok(addr("[::1]:2641")));
        assert_eq!(host_port("[::1]", no_lookup), Ok(addr("[::1]:2641")));
        assert_eq!(host_port("[::1]:9", no_lookup), Ok(addr("[::1]:9")));
        // A host name is looked up with the default port, or the one given.
        let seen = std::cell::RefCell::new(Vec::new());
        let lookup = |host: &str, port: u16| {
            seen.borrow_mut().push((host.to_string(), port));
            Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
        };
        assert_eq!(host_port("hdl.example", lookup), Ok(addr("127.0.0.1:2641")));
        assert_eq!(
            host_port("hdl.example:8000", lookup),
            Ok(addr("127.0.0.1:8000"))
        );
        assert_eq!(
            *seen.borrow(),
            vec![
                ("hdl.example".to_string(), 2641),
                ("hdl.example".to_string(), 8000)
            ]
        );
        // Typos are syntax errors, found without any lookup.
        for bad in [
            "",
            "host:port",
            "host:70000",
            "[::1",
            "[nope]",
            "a b",
            "http://x/",
        ] {
            match host_port(bad, no_lookup) {
                Err(AddrError::Syntax(_)) => {}
                other => panic!("{bad:?}: {other:?}"),
            }
        }
        let e = host_port("host:port", no_lookup).unwrap_err().to_string();
        assert!(e.contains("port \"port\" is not a number 0-65535"), "{e}");
        assert!(e.contains("the port defaults to 2641"), "{e}");
        // A name that does not resolve says so, with the resolver's reason.
        let failing = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> {
            Err(std::io::Error::other("Name or service not known"))
        };
        let e = host_port("no-such-host.example", failing).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot look up the host name \"no-such-host.example\": Name or service not known"
        );
        let empty = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> { Ok(Vec::new()) };
        assert!(matches!(
            host_port("h.example", empty),
            Err(AddrError::Lookup { .. })
        ));
    }
}
