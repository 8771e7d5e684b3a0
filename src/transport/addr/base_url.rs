//! [`BaseUrl`]: the one check of an `http(s)://host[:port][/path]` URL a user gives as the
//! base of an HTTP service (a handle proxy's REST API, an RFC 2169 URN resolver, the CLI's
//! `--server http://...`): the scheme (any case), a host, no user information, no query or
//! fragment, nothing but printable ASCII. Requests are made by appending paths to it.

use std::net::{IpAddr, SocketAddr};

use thiserror::Error;

/// A checked `http(s)://host[:port][/path]` base URL, without a final `/`; its parts are
/// read once, when it is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUrl {
    text: String,
    tls: bool,
    /// The host, without the brackets of an IPv6 literal.
    host: String,
    /// The port written, else the scheme's.
    port: u16,
    /// Where the path starts in `text` (its length when there is none).
    path_start: usize,
}

/// Why a URL is not a usable base URL.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{url:?} is not an http(s)://host[:port][/path] URL: {reason}")]
#[non_exhaustive]
pub struct BaseUrlError {
    /// The URL given.
    pub url: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl BaseUrl {
    /// Checks `url` (see the module documentation); a final `/` is dropped.
    pub fn parse(url: &str) -> Result<Self, BaseUrlError> {
        let invalid = |reason| BaseUrlError {
            url: url.to_string(),
            reason,
        };
        let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
        let (tls, scheme_len) = if lower.starts_with("https://") {
            (true, 8)
        } else if lower.starts_with("http://") {
            (false, 7)
        } else {
            return Err(invalid("it must start with http:// or https://"));
        };
        if !url.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(invalid("it holds white space, a control or non-ASCII"));
        }
        if url.contains(['?', '#']) {
            return Err(invalid("it cannot have a query or fragment"));
        }
        let text = url.trim_end_matches('/').to_string();
        let rest = text.get(scheme_len..).unwrap_or_default();
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.is_empty() || authority.starts_with(':') {
            return Err(invalid("it names no host"));
        }
        if authority.contains('@') {
            return Err(invalid("it has user information, which is never sent"));
        }
        let (host, after_host) = match authority.strip_prefix('[') {
            Some(literal) => match literal.split_once(']') {
                Some(parts) => parts,
                None => return Err(invalid("its IPv6 address has no closing ]")),
            },
            None => authority.split_at(authority.find(':').unwrap_or(authority.len())),
        };
        let port = match after_host.strip_prefix(':') {
            Some(port) => port
                .parse::<u16>()
                .map_err(|_| invalid("its port is not a number from 0 to 65535"))?,
            None if after_host.is_empty() => {
                if tls {
                    443
                } else {
                    80
                }
            }
            None => return Err(invalid("it names no host")),
        };
        Ok(Self {
            host: host.to_string(),
            port,
            path_start: scheme_len + authority.len(),
            text,
            tls,
        })
    }

    /// The URL, without a final `/`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True for `https://`.
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The host as written, without the brackets of an IPv6 literal or the port.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The path after the host and port (`""` or `/...`).
    pub fn path(&self) -> &str {
        self.text.get(self.path_start..).unwrap_or_default()
    }

    /// The port: the one written, else 443 or 80.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address when the host is an IP literal (with the port written, or the scheme's).
    pub fn literal_addr(&self) -> Option<SocketAddr> {
        let ip: IpAddr = self.host.parse().ok()?;
        Some(SocketAddr::new(ip, self.port))
    }
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_once_for_every_use() {
        let u = BaseUrl::parse("http://127.0.0.1:8000/").unwrap();
        assert_eq!(u.as_str(), "http://127.0.0.1:8000");
        assert_eq!(u.literal_addr(), Some("127.0.0.1:8000".parse().unwrap()));
        let u = BaseUrl::parse("HTTPS://hdl.handle.net/sub/").unwrap();
        assert_eq!(u.as_str(), "HTTPS://hdl.handle.net/sub");
        assert!(u.is_tls());
        assert_eq!(u.host(), "hdl.handle.net");
        assert_eq!((u.literal_addr(), u.port()), (None, 443));
        let u = BaseUrl::parse("http://[::1]").unwrap();
        assert_eq!(u.literal_addr(), Some("[::1]:80".parse().unwrap()));
        assert_eq!((u.host(), u.path()), ("::1", ""));
        let u = BaseUrl::parse("https://[::1]:8443/hdl/").unwrap();
        assert_eq!((u.host(), u.port(), u.path()), ("::1", 8443, "/hdl"));
        let u = BaseUrl::parse("http://example.org:8080/x").unwrap();
        assert_eq!((u.host(), u.path()), ("example.org", "/x"));
        assert_eq!(
            BaseUrl::parse("http://example.org:8080").unwrap().port(),
            8080
        );
        for (bad, why) in [
            ("ftp://x", "must start"),
            ("hdl.handle.net", "must start"),
            ("http://", "no host"),
            ("http://:80", "no host"),
            ("http://x/?a", "query"),
            ("http://x/#a", "query"),
            ("http://u@x", "user information"),
            ("http://x y", "white space"),
            ("http://example.org:99999", "port"),
            ("http://example.org:abc", "port"),
            ("https://1.2.3.4:", "port"),
            ("http://[::1]:x", "port"),
            ("http://[::1", "closing"),
            ("http://[::1]x", "no host"),
            ("http://é.org", "non-ASCII"),
        ] {
            let e = BaseUrl::parse(bad).unwrap_err();
            assert!(e.reason.contains(why), "{bad}: {e}");
        }
    }
}
