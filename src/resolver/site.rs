//! [`Site`]: one site of a service (a decoded HS_SITE value) as the resolver uses it, plus
//! the helpers that build sites from values and from a bare `HOST:PORT`, and that read a
//! server's interfaces. Every stage uses it; it uses none of them.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use tracing::debug;

use crate::root::{extend_unique_by, site_identity};
use crate::transport::TransportKind;
use crate::wire::{
    HandleValue, HashOption, Interface, InterfaceType, Limits, Protocol, ProtocolVersion,
    ServerInfo, SiteInfo,
};

/// Site serial sent when the real one is unknown (the reference client's `-1`).
pub(crate) const UNKNOWN_SERIAL: u16 = 0xFFFF;

/// One site of a service.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Site {
    /// The decoded HS_SITE record.
    pub info: Arc<SiteInfo>,
    /// Serial number to put in requests (the record's, or `0xFFFF`, "unknown", for built-in
    /// or synthesized sites).
    pub request_serial: u16,
}

impl Site {
    /// A site from a decoded record.
    pub fn new(info: SiteInfo) -> Self {
        let request_serial = info.serial;
        Self {
            info: Arc::new(info),
            request_serial,
        }
    }

    /// A single-server site at `addr` offering UDP and TCP queries on its port (used for
    /// `--server` and `--root HOST:PORT`). Protocol version 2.11; serial unknown.
    pub fn single(addr: SocketAddr) -> Self {
        let port = u32::from(addr.port());
        let info = SiteInfo {
            data_format_version: 1,
            protocol_version: ProtocolVersion::V2_11,
            serial: 1,
            primary: true,
            multi_primary: false,
            primary_mask: 0x80,
            hash_option: HashOption::ByHandle,
            hash_filter: Bytes::new(),
            attributes: vec![(
                Bytes::from_static(b"desc"),
                Bytes::from(format!("server {addr}")),
            )],
            servers: vec![server_record(1, addr.ip(), Bytes::new(), port, port)],
        };
        Self {
            info: Arc::new(info),
            request_serial: UNKNOWN_SERIAL,
        }
    }

    /// A single-server site at `addr` offering the native protocol over HTTP (HTTPS when
    /// `tls`) on its port, for queries and administration, with `host` as its `domain`
    /// attribute (used for `--server http://HOST:PORT`).
    pub fn single_http(addr: SocketAddr, host: Option<&str>, tls: bool) -> Self {
        let mut site = Self::single(addr);
        let info = Arc::make_mut(&mut site.info);
        if let Some(server) = info.servers.first_mut() {
            server.interfaces = vec![Interface {
                kind: InterfaceType::AdminAndQuery,
                protocol: if tls { Protocol::Https } else { Protocol::Http },
                port: u32::from(addr.port()),
            }];
        }
        if let Some(host) = host {
            info.attributes
                .push((Bytes::from_static(b"domain"), Bytes::from(host.to_owned())));
        }
        site
    }

    /// Decodes a value of any HS_SITE-format type (HS_SITE, HS_SITE.6, HS_SITE.PREFIX,
    /// HS_NA_DELEGATE); `None` (with a debug event) when it does not decode.
    pub fn from_value(value: &HandleValue, limits: &Limits) -> Option<Self> {
        match SiteInfo::decode(&value.data, limits) {
            Ok(info) => Some(Self::new(info)),
            Err(e) => {
                debug!(index = value.index, error = %e, "ignoring undecodable site value");
                None
            }
        }
    }

    /// True when the site is a primary site.
    pub fn is_primary(&self) -> bool {
        self.info.primary
    }

    /// The message version to use with this site: min(site version, 2.11).
    pub fn request_version(&self) -> ProtocolVersion {
        self.info.protocol_version.min(ProtocolVersion::V2_11)
    }

    /// The site's `desc` attribute.
    pub fn description(&self) -> Option<String> {
        self.info
            .attributes
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(b"desc"))
            .map(|(_, v)| text_of(v))
    }

    /// The server responsible for `handle` inside the site (by the site's hash rule).
    pub fn server_for(&self, handle: &[u8]) -> Option<&ServerInfo> {
        self.info.server_for(handle)
    }

    /// A short label: description, else the first server's address.
    pub fn label(&self) -> String {
        self.description().unwrap_or_else(|| {
            self.info
                .servers
                .first()
                .map(|s| s.address.to_string())
                .unwrap_or_else(|| "empty site".into())
        })
    }

    /// Identity used to deduplicate sites and detect referral loops: each server's address
    /// and interface ports, in record order (not the serial, keys or attributes).
    pub(crate) fn identity(&self) -> Vec<(IpAddr, Vec<u32>)> {
        site_identity(&self.info)
    }
}

/// Bytes from a server as text: UTF-8 as is, anything else with U+FFFD for the invalid
/// sequences.
pub(crate) fn text_of(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Which family of site values to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum SiteKind {
    /// HS_SITE, HS_SITE.6 and HS_SERV (service information of a handle's prefix).
    Service,
    /// HS_SITE.PREFIX, HS_NA_DELEGATE and HS_SERV.PREFIX (derived-prefix referral).
    Prefix,
}

impl SiteKind {
    /// The types whose values are sites (HS_SITE format).
    pub(crate) fn site_types(self) -> &'static [&'static str] {
        match self {
            SiteKind::Service => &["HS_SITE", "HS_SITE.6"],
            SiteKind::Prefix => &["HS_SITE.PREFIX", "HS_NA_DELEGATE"],
        }
    }

    /// The type whose values name service handles.
    pub(crate) fn serv_type(self) -> &'static str {
        match self {
            SiteKind::Service => "HS_SERV",
            SiteKind::Prefix => "HS_SERV.PREFIX",
        }
    }

    /// Types asked for when resolving a service handle of this kind.
    pub(crate) fn lookup_types(self) -> Vec<Bytes> {
        self.site_types()
            .iter()
            .chain(std::iter::once(&self.serv_type()))
            .map(|s| Bytes::from_static(s.as_bytes()))
            .collect()
    }
}

/// The query address of `server` for `kind`, if it offers one.
pub(crate) fn query_addr(server: &ServerInfo, kind: TransportKind) -> Option<SocketAddr> {
    interface_addr(server, kind, false)
}

/// The address of `server`'s interface for `kind` that takes queries, or administration
/// when `admin`.
pub(crate) fn interface_addr(
    server: &ServerInfo,
    kind: TransportKind,
    admin: bool,
) -> Option<SocketAddr> {
    server.socket_addr(protocol_of(kind)?, admin)
}

/// The interface protocol of a transport (none for a proxy's REST API).
fn protocol_of(kind: TransportKind) -> Option<Protocol> {
    match kind {
        TransportKind::Udp => Some(Protocol::Udp),
        TransportKind::Tcp => Some(Protocol::Tcp),
        TransportKind::Http => Some(Protocol::Http),
        TransportKind::Https => Some(Protocol::Https),
        TransportKind::Rest => None,
    }
}

/// Where a native request to `server` of `site` goes over HTTP(S) (`kind` is `Http` or
/// `Https`), if the server offers that interface: its address and port, the `Host` from
/// the site's `domain.<n>` or `domain` attribute (n = the server's place in the record), the
/// path prefix from `path.<n>` or `path`, and for HTTPS the server's key to pin.
pub(crate) fn http_target(
    site: &SiteInfo,
    server: &ServerInfo,
    kind: TransportKind,
    admin: bool,
) -> Option<crate::transport::HttpTarget> {
    use crate::transport::HttpTarget;
    let addr = interface_addr(server, kind, admin)?;
    let place = site
        .servers
        .iter()
        .position(|s| std::ptr::eq(s, server) || s == server);
    let attribute = |name: &str| {
        place
            .and_then(|n| site.attribute(&format!("{name}.{n}")))
            .or_else(|| site.attribute(name))
            .map(|v| text_of(v))
            .filter(|v| !v.is_empty())
    };
    let mut target = match kind {
        TransportKind::Https => HttpTarget::https(addr),
        _ => HttpTarget::http(addr),
    };
    if let Some(host) = attribute("domain") {
        target = target.with_host(host);
    }
    if let Some(path) = attribute("path") {
        target = target.with_path(if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        });
    }
    if kind == TransportKind::Https && !server.public_key.is_empty() {
        target = target.with_pinned_key(server.public_key.clone());
    }
    Some(target)
}

/// A server record with a TCP (admin + query) and a UDP (query) interface.
pub fn server_record(
    server_id: u32,
    address: IpAddr,
    public_key: Bytes,
    tcp_port: u32,
    udp_port: u32,
) -> ServerInfo {
    let raw_address = match address {
        IpAddr::V4(a) => {
            let mut raw = [0u8; 16];
            raw[12..].copy_from_slice(&a.octets());
            raw
        }
        IpAddr::V6(a) => a.octets(),
    };
    ServerInfo {
        server_id,
        address,
        raw_address,
        public_key,
        interfaces: vec![
            Interface {
                kind: InterfaceType::AdminAndQuery,
                protocol: Protocol::Tcp,
                port: tcp_port,
            },
            Interface {
                kind: InterfaceType::Query,
                protocol: Protocol::Udp,
                port: udp_port,
            },
        ],
    }
}

/// Appends `more` to `sites`, skipping sites already present (and repeats within `more`).
pub(crate) fn extend_unique(sites: &mut Vec<Site>, more: impl IntoIterator<Item = Site>) {
    extend_unique_by(sites, more, Site::identity);
}

/// True when some server of `sites` has an interface (for queries or administration) for
/// one of `kinds`.
pub(crate) fn any_reachable(sites: &[Site], kinds: &[TransportKind]) -> bool {
    sites.iter().any(|site| {
        site.info.servers.iter().any(|server| {
            kinds.iter().any(|&kind| {
                interface_addr(server, kind, false).is_some()
                    || interface_addr(server, kind, true).is_some()
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_site_offers_udp_and_tcp_on_the_same_port() {
        let addr: SocketAddr = "127.0.0.1:2641".parse().unwrap();
        let site = Site::single(addr);
        let server = site.server_for(b"20.500.12345/1").unwrap();
        assert_eq!(query_addr(server, TransportKind::Udp), Some(addr));
        assert_eq!(query_addr(server, TransportKind::Tcp), Some(addr));
        assert_eq!(site.request_serial, UNKNOWN_SERIAL);
        assert_eq!(site.request_version(), ProtocolVersion::V2_11);
    }

    #[test]
    fn lookup_types_per_kind() {
        assert_eq!(
            SiteKind::Service.lookup_types(),
            vec!["HS_SITE", "HS_SITE.6", "HS_SERV"]
        );
        assert_eq!(
            SiteKind::Prefix.lookup_types(),
            vec!["HS_SITE.PREFIX", "HS_NA_DELEGATE", "HS_SERV.PREFIX"]
        );
    }

    #[test]
    fn duplicates_are_dropped() {
        let a = Site::single("127.0.0.1:1".parse().unwrap());
        let b = Site::single("127.0.0.1:2".parse().unwrap());
        let mut v = vec![a.clone()];
        extend_unique(&mut v, [a, b.clone(), b]);
        assert_eq!(v.len(), 2);
    }
}
