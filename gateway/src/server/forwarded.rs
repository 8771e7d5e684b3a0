//! Who the client is and which URL it used, when the gateway runs behind proxies: the
//! forwarding headers (`X-Forwarded-For`, `Forwarded`, `X-Forwarded-Proto`,
//! `X-Forwarded-Host`) are believed only from a peer in a trusted range; otherwise the
//! socket's peer is the client and `Host` names the gateway.

use std::net::IpAddr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// What the forwarding headers of a trusted peer say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Forwarded {
    /// The client: the last address of the chain not in a trusted range (the socket's peer
    /// when it is itself untrusted).
    pub client: Option<IpAddr>,
    /// The scheme the client used (`http` or `https`).
    pub proto: Option<String>,
    /// The host the client asked for.
    pub host: Option<String>,
}

fn trusted(addr: IpAddr, ranges: &[IpNet]) -> bool {
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    };
    ranges.iter().any(|r| r.contains(&addr))
}

/// One address of a forwarding header (`1.2.3.4`, `1.2.3.4:5`, `[::1]:5`, `"[::1]"`).
fn address(text: &str) -> Option<IpAddr> {
    let t = text.trim().trim_matches('"');
    if let Ok(a) = t.parse() {
        return Some(a);
    }
    if let Some(rest) = t.strip_prefix('[') {
        return rest.split(']').next().and_then(|a| a.parse().ok());
    }
    t.rsplit_once(':').and_then(|(a, _)| a.parse().ok())
}

/// The `Forwarded` (RFC 7239) header's elements, as (`for`, `proto`, `host`) in order.
fn forwarded_elements(
    headers: &HeaderMap,
) -> Vec<(Option<String>, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for value in headers.get_all("forwarded") {
        let Ok(text) = value.to_str() else { continue };
        for element in text.split(',') {
            let mut e = (None, None, None);
            for pair in element.split(';') {
                let Some((k, v)) = pair.split_once('=') else {
                    continue;
                };
                let v = v.trim().trim_matches('"').to_owned();
                match k.trim().to_ascii_lowercase().as_str() {
                    "for" => e.0 = Some(v),
                    "proto" => e.1 = Some(v),
                    "host" => e.2 = Some(v),
                    _ => {}
                }
            }
            out.push(e);
        }
    }
    out
}

fn first_of(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// What `headers` say of the client, when `peer` is in `ranges`; nothing otherwise.
///
/// ```
/// use axum::http::HeaderMap;
/// use handle_gateway::server::forwarded::read;
/// let mut h = HeaderMap::new();
/// h.insert("x-forwarded-for", "203.0.113.9, 10.0.0.2".parse().unwrap());
/// h.insert("x-forwarded-proto", "https".parse().unwrap());
/// let trusted = ["10.0.0.0/8".parse().unwrap()];
/// let f = read(&h, "10.0.0.1".parse().unwrap(), &trusted);
/// assert_eq!(f.client, Some("203.0.113.9".parse().unwrap()));
/// assert_eq!(f.proto.as_deref(), Some("https"));
/// assert_eq!(read(&h, "192.0.2.1".parse().unwrap(), &trusted).client, None);
/// ```
pub fn read(headers: &HeaderMap, peer: IpAddr, ranges: &[IpNet]) -> Forwarded {
    if !trusted(peer, ranges) {
        return Forwarded::default();
    }
    let elements = forwarded_elements(headers);
    let chain: Vec<IpAddr> = if elements.is_empty() {
        headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(address)
            .collect()
    } else {
        elements
            .iter()
            .filter_map(|e| e.0.as_deref().and_then(address))
            .collect()
    };
    // From the nearest hop back: the first one this side does not trust is the client.
    let client = chain
        .iter()
        .rev()
        .find(|a| !trusted(**a, ranges))
        .or(chain.first())
        .copied();
    let (proto, host) = match elements.first() {
        Some(e) if e.1.is_some() || e.2.is_some() => (e.1.clone(), e.2.clone()),
        _ => (
            first_of(headers, "x-forwarded-proto"),
            first_of(headers, "x-forwarded-host"),
        ),
    };
    let proto = proto
        .map(|p| p.to_ascii_lowercase())
        .filter(|p| p == "http" || p == "https");
    let host = host.filter(|h| {
        h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b))
    });
    Forwarded {
        client,
        proto,
        host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(list: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in list {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_trusted_peers_are_believed() {
        let ranges: Vec<IpNet> = vec![
            "127.0.0.0/8".parse().unwrap(),
            "10.0.0.0/8".parse().unwrap(),
        ];
        let h = headers(&[
            ("x-forwarded-for", "198.51.100.7, 203.0.113.1"),
            ("x-forwarded-for", "10.1.1.1"),
            ("x-forwarded-proto", "HTTPS"),
            ("x-forwarded-host", "hdl.example"),
        ]);
        let f = read(&h, "127.0.0.1".parse().unwrap(), &ranges);
        assert_eq!(f.client, Some("203.0.113.1".parse().unwrap()));
        assert_eq!(f.proto.as_deref(), Some("https"));
        assert_eq!(f.host.as_deref(), Some("hdl.example"));
        assert_eq!(
            read(&h, "192.0.2.1".parse().unwrap(), &ranges),
            Forwarded::default()
        );
        assert_eq!(
            read(&h, "127.0.0.1".parse().unwrap(), &[]),
            Forwarded::default()
        );
        let h = headers(&[(
            "forwarded",
            "for=\"[2001:db8::1]:4711\";proto=https;host=a.example, for=10.0.0.3",
        )]);
        let f = read(&h, "::ffff:10.0.0.1".parse().unwrap(), &ranges);
        assert_eq!(f.client, Some("2001:db8::1".parse().unwrap()));
        assert_eq!(
            (f.proto.as_deref(), f.host.as_deref()),
            (Some("https"), Some("a.example"))
        );
        let h = headers(&[("x-forwarded-for", "junk"), ("x-forwarded-proto", "gopher")]);
        assert_eq!(
            read(&h, "10.0.0.1".parse().unwrap(), &ranges),
            Forwarded::default()
        );
    }
}
