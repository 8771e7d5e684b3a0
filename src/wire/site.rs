//! HS_SITE service information (RFC 3651 §3.2.2, PROTOCOL.md §7.1): one site's version,
//! serial, primary bits, hash option, attributes and server records. Also used for
//! `HS_SITE.6`, `HS_SITE.PREFIX` and `HS_NA_DELEGATE` values and the get-site-info answer.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use bytes::{BufMut, Bytes, BytesMut};

use super::envelope::ProtocolVersion;
use super::error::{DecodeError, EncodeError};
use super::hash::server_index;
use super::limits::Limits;
use super::pubkey::PublicKey;
use super::reader::Reader;
use super::writer::{put_bytes, wire_len};

// `SiteInfo::hash_option`'s type lives next to the hash it selects (`hash.rs` does not import
// from this file).
use super::hash::HashOption;

/// Smallest encoded attribute: two empty strings.
const MIN_ATTRIBUTE_LEN: usize = 4 + 4;
/// Smallest encoded server record: id, address, empty key, zero interfaces.
const MIN_SERVER_LEN: usize = 4 + 16 + 4 + 4;
/// Size of an encoded interface: type, protocol, port.
const INTERFACE_LEN: usize = 1 + 1 + 4;
/// Primary-mask bit: this site is a primary site.
const PRIMARY_BIT: u8 = 0x80;
/// Primary-mask bit: the service is multi-primary.
const MULTI_PRIMARY_BIT: u8 = 0x40;

/// What an interface serves (the reference library's values, not the RFC's bit text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterfaceType {
    /// 0: out of service.
    OutOfService,
    /// 1: administration only.
    Admin,
    /// 2: resolution only.
    Query,
    /// 3: both.
    AdminAndQuery,
    /// Any other byte.
    Other(u8),
}

impl InterfaceType {
    /// The wire byte.
    pub const fn code(self) -> u8 {
        match self {
            InterfaceType::OutOfService => 0,
            InterfaceType::Admin => 1,
            InterfaceType::Query => 2,
            InterfaceType::AdminAndQuery => 3,
            InterfaceType::Other(v) => v,
        }
    }

    /// The type for a wire byte.
    pub const fn from_code(v: u8) -> Self {
        match v {
            0 => InterfaceType::OutOfService,
            1 => InterfaceType::Admin,
            2 => InterfaceType::Query,
            3 => InterfaceType::AdminAndQuery,
            v => InterfaceType::Other(v),
        }
    }

    /// True for interfaces that answer resolution requests.
    pub const fn allows_query(self) -> bool {
        matches!(self, InterfaceType::Query | InterfaceType::AdminAndQuery)
    }

    /// True for interfaces that accept administration requests.
    pub const fn allows_admin(self) -> bool {
        matches!(self, InterfaceType::Admin | InterfaceType::AdminAndQuery)
    }
}

/// The transport of an interface (the reference library's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// 0: UDP.
    Udp,
    /// 1: TCP.
    Tcp,
    /// 2: HTTP tunnel.
    Http,
    /// 3: HTTPS tunnel.
    Https,
    /// Any other byte.
    Other(u8),
}

impl Protocol {
    /// The wire byte.
    pub const fn code(self) -> u8 {
        match self {
            Protocol::Udp => 0,
            Protocol::Tcp => 1,
            Protocol::Http => 2,
            Protocol::Https => 3,
            Protocol::Other(v) => v,
        }
    }

    /// The protocol for a wire byte.
    pub const fn from_code(v: u8) -> Self {
        match v {
            0 => Protocol::Udp,
            1 => Protocol::Tcp,
            2 => Protocol::Http,
            3 => Protocol::Https,
            v => Protocol::Other(v),
        }
    }

    /// `"UDP"`, `"TCP"`, `"HTTP"`, `"HTTPS"` or `"OTHER"`.
    pub const fn name(self) -> &'static str {
        match self {
            Protocol::Udp => "UDP",
            Protocol::Tcp => "TCP",
            Protocol::Http => "HTTP",
            Protocol::Https => "HTTPS",
            Protocol::Other(_) => "OTHER",
        }
    }
}

/// One interface of a server: `u8 type ‖ u8 protocol ‖ int4 port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Interface {
    /// What the interface serves.
    pub kind: InterfaceType,
    /// Its transport.
    pub protocol: Protocol,
    /// Its port (an `int4` on the wire).
    pub port: u32,
}

impl Interface {
    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            kind: InterfaceType::from_code(r.u8("site.interface.type")?),
            protocol: Protocol::from_code(r.u8("site.interface.protocol")?),
            port: r.u32("site.interface.port")?,
        })
    }

    fn encode(&self, out: &mut BytesMut) {
        out.put_u8(self.kind.code());
        out.put_u8(self.protocol.code());
        out.put_u32(self.port);
    }
}

/// Reads the 16-byte address field: both IPv4 forms (IPv4-compatible, as the reference library
/// writes, and IPv4-mapped, as the RFC says) become IPv4; anything else stays IPv6. `::1` stays
/// the IPv6 loopback (as IPv4 it would be the unusable `0.0.0.1`).
pub(crate) fn address_from_raw(raw: [u8; 16]) -> IpAddr {
    let v6 = Ipv6Addr::from(raw);
    if v6 == Ipv6Addr::LOCALHOST {
        return IpAddr::V6(v6);
    }
    let compatible = raw[..12].iter().all(|&b| b == 0);
    let mapped = raw[..10].iter().all(|&b| b == 0) && raw[10] == 0xFF && raw[11] == 0xFF;
    if compatible || mapped {
        IpAddr::V4(Ipv4Addr::new(raw[12], raw[13], raw[14], raw[15]))
    } else {
        IpAddr::V6(v6)
    }
}

/// The 16-byte address field for `address`, IPv4 in the reference library's form (12 zero
/// bytes, then the 4 IPv4 bytes).
pub(crate) fn address_to_raw(address: IpAddr) -> [u8; 16] {
    match address {
        IpAddr::V4(v4) => {
            let mut raw = [0u8; 16];
            raw[12..].copy_from_slice(&v4.octets());
            raw
        }
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// One server record of a site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// The server id (need not start at 1 or be contiguous).
    pub server_id: u32,
    /// The address: both IPv4 forms of the 16-byte field (IPv4-compatible, as the reference
    /// library writes, and IPv4-mapped, as the RFC says) are IPv4; anything else, `::1`
    /// included, is IPv6.
    pub address: IpAddr,
    /// The 16 address bytes as received; this is what [`SiteInfo::encode`] writes. Keep it in
    /// step with `address` through [`ServerInfo::set_address`].
    pub raw_address: [u8; 16],
    /// The raw HS_PUBKEY blob of the server's key (may be empty).
    pub public_key: Bytes,
    /// The interfaces, in record order.
    pub interfaces: Vec<Interface>,
}

impl ServerInfo {
    /// A server with no key and no interfaces.
    pub fn new(server_id: u32, address: IpAddr) -> Self {
        Self {
            server_id,
            address,
            raw_address: address_to_raw(address),
            public_key: Bytes::new(),
            interfaces: Vec::new(),
        }
    }

    /// Sets `address` and `raw_address` together.
    pub fn set_address(&mut self, address: IpAddr) {
        self.address = address;
        self.raw_address = address_to_raw(address);
    }

    /// The server's public key; `Ok(None)` when the record carries none.
    pub fn public_key(&self) -> Result<Option<PublicKey>, DecodeError> {
        if self.public_key.is_empty() {
            Ok(None)
        } else {
            PublicKey::decode_bytes(&self.public_key).map(Some)
        }
    }

    /// The first interface speaking `protocol` whose type allows queries (or administration
    /// when `admin` is true), as the reference client picks it (PROTOCOL.md §8.4).
    pub fn interface_for(&self, protocol: Protocol, admin: bool) -> Option<&Interface> {
        self.interfaces.iter().find(|i| {
            i.protocol == protocol
                && if admin {
                    i.kind.allows_admin()
                } else {
                    i.kind.allows_query()
                }
        })
    }

    /// Where to send a request over `protocol`: the address and the port of
    /// [`ServerInfo::interface_for`]. `None` when no interface fits, the port is out of
    /// range, or the address is unspecified (the site's `domain` attribute names the host
    /// then, which needs a DNS lookup this layer does not do).
    pub fn socket_addr(&self, protocol: Protocol, admin: bool) -> Option<SocketAddr> {
        if self.address.is_unspecified() {
            return None;
        }
        let port = u16::try_from(self.interface_for(protocol, admin)?.port).ok()?;
        Some(SocketAddr::new(self.address, port))
    }

    fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let server_id = r.u32("site.server.id")?;
        let mut raw_address = [0u8; 16];
        raw_address.copy_from_slice(&r.take("site.server.address", 16)?);
        let public_key = r.bytes("site.server.public_key", limits.max_array)?;
        let n = r.count(
            "site.server.interface_count",
            limits.max_array,
            INTERFACE_LEN,
        )?;
        let mut interfaces = Vec::new();
        for _ in 0..n {
            interfaces.push(Interface::decode(r)?);
        }
        Ok(Self {
            server_id,
            address: address_from_raw(raw_address),
            raw_address,
            public_key,
            interfaces,
        })
    }

    fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        out.put_u32(self.server_id);
        out.put_slice(&self.raw_address);
        put_bytes(out, "site.server.public_key", &self.public_key)?;
        out.put_u32(wire_len(
            "site.server.interface_count",
            self.interfaces.len(),
        )?);
        for i in &self.interfaces {
            i.encode(out);
        }
        Ok(())
    }
}

/// A site's service information: the data of an HS_SITE value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfo {
    /// Record format version (1 in every real record; the RFC says 0).
    pub data_format_version: u16,
    /// Protocol version the site speaks.
    pub protocol_version: ProtocolVersion,
    /// Serial number, echoed in the request header's site-info serial.
    pub serial: u16,
    /// This site is a primary site (mask bit 0x80).
    pub primary: bool,
    /// The service is multi-primary (mask bit 0x40).
    pub multi_primary: bool,
    /// The primary-mask byte as received; its other bits are written back unchanged.
    pub primary_mask: u8,
    /// How handles are hashed to servers.
    pub hash_option: HashOption,
    /// Reserved hash filter (empty in practice).
    pub hash_filter: Bytes,
    /// `(name, value)` attributes in record order (`desc`, `domain`, `alt_addr`, ...).
    pub attributes: Vec<(Bytes, Bytes)>,
    /// Server records in record order (the order the hash indexes).
    pub servers: Vec<ServerInfo>,
}

impl SiteInfo {
    /// Decodes an HS_SITE record. Strict like the reference library: trailing bytes after
    /// the last server are an error. Every count is checked against `limits` and against the
    /// bytes that remain.
    pub fn decode(data: &Bytes, limits: &Limits) -> Result<SiteInfo, DecodeError> {
        let mut r = Reader::new(data.clone());
        let data_format_version = r.u16("site.data_format_version")?;
        let major = r.u8("site.protocol_major")?;
        let minor = r.u8("site.protocol_minor")?;
        let serial = r.u16("site.serial")?;
        let primary_mask = r.u8("site.primary_mask")?;
        let hash_option = HashOption::from_code(r.u8("site.hash_option")?);
        let hash_filter = r.bytes("site.hash_filter", limits.max_array)?;
        let n = r.count("site.attribute_count", limits.max_array, MIN_ATTRIBUTE_LEN)?;
        let mut attributes = Vec::new();
        for _ in 0..n {
            let name = r.bytes("site.attribute.name", limits.max_array)?;
            let value = r.bytes("site.attribute.value", limits.max_array)?;
            attributes.push((name, value));
        }
        let n = r.count("site.server_count", limits.max_array, MIN_SERVER_LEN)?;
        let mut servers = Vec::new();
        for _ in 0..n {
            servers.push(ServerInfo::decode(&mut r, limits)?);
        }
        r.finish("site")?;
        Ok(SiteInfo {
            data_format_version,
            protocol_version: ProtocolVersion::new(major, minor),
            serial,
            primary: primary_mask & PRIMARY_BIT != 0,
            multi_primary: primary_mask & MULTI_PRIMARY_BIT != 0,
            primary_mask,
            hash_option,
            hash_filter,
            attributes,
            servers,
        })
    }

    /// Encodes the record; a decoded record comes back byte for byte.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        out.put_u16(self.data_format_version);
        out.put_u8(self.protocol_version.major);
        out.put_u8(self.protocol_version.minor);
        out.put_u16(self.serial);
        let mut mask = self.primary_mask & !(PRIMARY_BIT | MULTI_PRIMARY_BIT);
        if self.primary {
            mask |= PRIMARY_BIT;
        }
        if self.multi_primary {
            mask |= MULTI_PRIMARY_BIT;
        }
        out.put_u8(mask);
        out.put_u8(self.hash_option.code());
        put_bytes(&mut out, "site.hash_filter", &self.hash_filter)?;
        out.put_u32(wire_len("site.attribute_count", self.attributes.len())?);
        for (name, value) in &self.attributes {
            put_bytes(&mut out, "site.attribute.name", name)?;
            put_bytes(&mut out, "site.attribute.value", value)?;
        }
        out.put_u32(wire_len("site.server_count", self.servers.len())?);
        for s in &self.servers {
            s.encode(&mut out)?;
        }
        Ok(out.freeze())
    }

    /// The 0-based index of the server responsible for `handle` (PROTOCOL.md §11.2); `None`
    /// for a site without servers or with an unknown hash option.
    pub fn server_index_for(&self, handle: &[u8]) -> Option<usize> {
        server_index(handle, self.hash_option, self.servers.len())
    }

    /// The server responsible for `handle` (PROTOCOL.md §11.2).
    pub fn server_for(&self, handle: &[u8]) -> Option<&ServerInfo> {
        self.servers.get(self.server_index_for(handle)?)
    }

    /// The value of the first attribute named `name`.
    pub fn attribute(&self, name: &str) -> Option<&Bytes> {
        self.attributes
            .iter()
            .find(|(n, _)| n.as_ref() == name.as_bytes())
            .map(|(_, v)| v)
    }

    fn attribute_text(&self, name: &str) -> Option<String> {
        self.attribute(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    /// The `desc` attribute.
    pub fn description(&self) -> Option<String> {
        self.attribute_text("desc")
    }

    /// The DNS name of the server at `server_index` (`domain.<index>`, else `domain`), used
    /// when its address is all zeros and as the HTTP host.
    pub fn domain(&self, server_index: usize) -> Option<String> {
        self.attribute_text(&format!("domain.{server_index}"))
            .or_else(|| self.attribute_text("domain"))
    }

    /// The alternate address of the server with id `server_id` (`alt_addr.<id>`, or
    /// `alt_addr` for a single-server site), when it parses as an IP address.
    pub fn alt_addr(&self, server_id: u32) -> Option<IpAddr> {
        // Asked for every request: names are compared in place, nothing is allocated.
        let value = self
            .attributes
            .iter()
            .find(|(n, _)| {
                n.strip_prefix(b"alt_addr.")
                    .is_some_and(|digits| is_decimal_of(digits, server_id))
            })
            .map(|(_, v)| v)
            .or_else(|| {
                (self.servers.len() == 1)
                    .then(|| self.attribute("alt_addr"))
                    .flatten()
            })?;
        std::str::from_utf8(value).ok()?.trim().parse().ok()
    }
}

/// True when `digits` is exactly the decimal form of `id`: digits only, no sign, no leading
/// zero.
fn is_decimal_of(digits: &[u8], id: u32) -> bool {
    let canonical = digits.len() == 1 || digits.first() != Some(&b'0');
    canonical
        && digits.iter().all(u8::is_ascii_digit)
        && std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u32>().ok())
            == Some(id)
}

#[cfg(test)]
#[path = "site_tests.rs"]
mod tests;
