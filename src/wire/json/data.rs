//! The `data` member of a value: which format the REST API picks, and each format both ways
//! (`string`, `base64`, `hex`, `admin`, `vlist`, `site`, `key`).

use std::net::{IpAddr, Ipv6Addr};

use base64ct::{Base64, Base64Unpadded, Base64UrlUnpadded, Encoding};
use bytes::Bytes;
use serde_json::{Map, Value as Json};

use super::{
    array, boolean, check_len, get, int4, need, object, reference_to_json, references_at, text,
    text_bytes, unsigned, At, JsonError, JsonErrorKind,
};
use crate::wire::admin::{decode_vlist, encode_vlist, AdminPermissions, AdminRecord};
use crate::wire::envelope::ProtocolVersion;
use crate::wire::error::EncodeError;
use crate::wire::hash::HashOption;
use crate::wire::limits::Limits;
use crate::wire::pubkey::{DsaKey, PublicKey, RsaKey, RSA_TRAILER};
use crate::wire::site::{
    address_from_raw, address_to_raw, Interface, InterfaceType, Protocol, ServerInfo, SiteInfo,
};
use crate::wire::value::{HandleValue, ValueReference};

/// The `data.format` of a value's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataFormat {
    /// UTF-8 text.
    String,
    /// Any bytes, base64 (standard alphabet, padded).
    Base64,
    /// Any bytes, hex (read, never written: the REST API writes base64).
    Hex,
    /// HS_ADMIN.
    Admin,
    /// HS_VLIST.
    VList,
    /// HS_SITE, HS_SITE.PREFIX, HS_SITE.6, HS_NA_DELEGATE.
    Site,
    /// HS_PUBKEY (RSA or DSA).
    Key,
}

impl DataFormat {
    /// `string`, `base64`, `hex`, `admin`, `vlist`, `site` or `key`.
    pub const fn name(self) -> &'static str {
        match self {
            DataFormat::String => "string",
            DataFormat::Base64 => "base64",
            DataFormat::Hex => "hex",
            DataFormat::Admin => "admin",
            DataFormat::VList => "vlist",
            DataFormat::Site => "site",
            DataFormat::Key => "key",
        }
    }

    /// The format of a name, ignoring ASCII case (as the reference library does).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            DataFormat::String,
            DataFormat::Base64,
            DataFormat::Hex,
            DataFormat::Admin,
            DataFormat::VList,
            DataFormat::Site,
            DataFormat::Key,
        ]
        .into_iter()
        .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

fn tagged(format: DataFormat, value: Json) -> Json {
    let mut o = Map::new();
    o.insert("format".into(), Json::from(format.name()));
    o.insert("value".into(), value);
    Json::Object(o)
}

/// The reference library's type test: the name itself or one of its sub-types
/// (`HS_SITE.PREFIX` is an `HS_SITE`), ignoring ASCII case.
fn has_type(v: &HandleValue, name: &str) -> bool {
    let t = v.type_name.as_ref();
    let n = name.as_bytes();
    t.eq_ignore_ascii_case(n)
        || (t.len() > n.len()
            && t.get(n.len()) == Some(&b'.')
            && t.get(..n.len()).is_some_and(|h| h.eq_ignore_ascii_case(n)))
}

/// The reference library's rule for showing data as text: valid UTF-8 without control
/// characters other than 0x09..=0x13.
fn is_text(d: &[u8]) -> bool {
    std::str::from_utf8(d).is_ok()
        && !d
            .iter()
            .any(|&b| (b < 0x20 && !(0x09..=0x13).contains(&b)) || b == 0x7F)
}

/// The structured view the REST API gives the value's type, when its data parses and the
/// view carries every byte of it.
fn structured(v: &HandleValue) -> Option<(DataFormat, Json)> {
    let limits = Limits::default();
    let d = &v.data;
    let (format, value) = if has_type(v, "HS_ADMIN") {
        (
            DataFormat::Admin,
            admin_to_json(&AdminRecord::decode(d, &limits).ok()?),
        )
    } else if has_type(v, "HS_VLIST") {
        (
            DataFormat::VList,
            vlist_to_json(&decode_vlist(d, &limits).ok()?),
        )
    } else if has_type(v, "HS_SITE") || has_type(v, "HS_NA_DELEGATE") {
        (
            DataFormat::Site,
            site_to_json(&SiteInfo::decode(d, &limits).ok()?),
        )
    } else if has_type(v, "HS_PUBKEY") {
        (
            DataFormat::Key,
            key_to_json(&PublicKey::decode_bytes(d).ok()?),
        )
    } else {
        return None;
    };
    let back = decode_format(format, &value, &At::ROOT, &limits).ok()?;
    (back == *d).then_some((format, value))
}

/// Text when [`is_text`], else base64.
fn plain(d: &[u8]) -> (DataFormat, Json) {
    match std::str::from_utf8(d) {
        Ok(s) if is_text(d) => (DataFormat::String, Json::from(s)),
        _ => (DataFormat::Base64, Json::from(Base64::encode_string(d))),
    }
}

/// The format [`data_to_json`] writes for `v`.
pub fn data_format(v: &HandleValue) -> DataFormat {
    structured(v).map_or_else(|| plain(&v.data).0, |(f, _)| f)
}

/// `{"format": ..., "value": ...}` for the value's data, in the format the REST API picks:
/// `admin`, `vlist`, `site` or `key` for HS_ADMIN, HS_VLIST, HS_SITE (and its sub-types,
/// HS_NA_DELEGATE) and HS_PUBKEY when the data parses as such, else `string` for text and
/// `base64` for other bytes. A structured view that would not give back the exact bytes is
/// replaced by `base64`.
pub fn data_to_json(v: &HandleValue) -> Json {
    let (format, value) = structured(v).unwrap_or_else(|| plain(&v.data));
    tagged(format, value)
}

/// The data bytes of a `data` member: `{"format", "value"}` or a bare string.
pub fn data_from_json(v: &Json, limits: &Limits) -> Result<Bytes, JsonError> {
    data_at(v, &At::ROOT, limits)
}

pub(super) fn data_at(v: &Json, at: &At, limits: &Limits) -> Result<Bytes, JsonError> {
    let bytes = match v {
        Json::String(s) => {
            check_len(s.len(), at, limits.max_array)?;
            Bytes::copy_from_slice(s.as_bytes())
        }
        Json::Object(o) => {
            let format_at = at.key("format");
            let name = text(need(o, "format", at)?, &format_at)?;
            let format = DataFormat::from_name(name)
                .ok_or_else(|| format_at.err(JsonErrorKind::UnknownFormat(name.to_owned())))?;
            decode_format(format, need(o, "value", at)?, &at.key("value"), limits)?
        }
        _ => {
            return Err(at.err(JsonErrorKind::WrongType(
                "a string or an object with format and value",
            )))
        }
    };
    check_len(bytes.len(), at, limits.max_array)?;
    Ok(bytes)
}

fn encoded(r: Result<Bytes, EncodeError>, at: &At) -> Result<Bytes, JsonError> {
    r.map_err(|e| at.err(JsonErrorKind::Encode(e)))
}

fn decode_format(
    format: DataFormat,
    v: &Json,
    at: &At,
    limits: &Limits,
) -> Result<Bytes, JsonError> {
    match format {
        DataFormat::String => text_bytes(v, at, limits.max_array),
        DataFormat::Base64 => base64_at(v, at, limits),
        DataFormat::Hex => {
            let s = text(v, at)?;
            check_len(s.len() / 2, at, limits.max_array)?;
            hex::decode(s)
                .map(Bytes::from)
                .map_err(|_| at.err(JsonErrorKind::Invalid("hex digits")))
        }
        DataFormat::Admin => encoded(admin_at(v, at, limits)?.encode(), at),
        DataFormat::VList => encoded(encode_vlist(&references_at(v, at, limits)?), at),
        DataFormat::Site => encoded(site_at(v, at, limits)?.encode(), at),
        DataFormat::Key => encoded(key_at(v, at, limits)?.encode(), at),
    }
}

/// Base64 as the reference library reads it: standard or URL-safe alphabet, padded or not,
/// line breaks and spaces ignored.
fn base64_bytes(s: &str) -> Option<Vec<u8>> {
    let spaced;
    let s = if s.bytes().any(|b| b.is_ascii_whitespace()) {
        spaced = s
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect::<String>();
        spaced.as_str()
    } else {
        s
    };
    let s = s.trim_end_matches('=');
    if s.contains(['-', '_']) {
        Base64UrlUnpadded::decode_vec(s).ok()
    } else {
        Base64Unpadded::decode_vec(s).ok()
    }
}

fn base64_at(v: &Json, at: &At, limits: &Limits) -> Result<Bytes, JsonError> {
    let s = text(v, at)?;
    check_len(s.len() / 4 * 3, at, limits.max_array)?;
    base64_bytes(s)
        .map(Bytes::from)
        .ok_or_else(|| at.err(JsonErrorKind::Invalid("base64")))
}

// ---------------------------------------------------------------------------------------
// HS_ADMIN and HS_VLIST

/// `{"handle", "index", "permissions"}`, the permissions as `0`/`1` from `LIST_HANDLES`
/// (0x0800) down to `ADD_HANDLE` (0x0001), longer than 12 characters only when higher bits
/// are set; `"legacyByteLength": true` for the legacy form.
pub fn admin_to_json(a: &AdminRecord) -> Json {
    let p = a.permissions.0;
    let width = (16 - p.leading_zeros() as usize).max(12);
    let bits: String = (0..width)
        .rev()
        .map(|bit| if p & (1 << bit) != 0 { '1' } else { '0' })
        .collect();
    let mut o = Map::new();
    o.insert(
        "handle".into(),
        Json::from(String::from_utf8_lossy(&a.admin.handle)),
    );
    o.insert("index".into(), Json::from(a.admin.index));
    o.insert("permissions".into(), Json::from(bits));
    if a.legacy_trailer.is_some() {
        o.insert("legacyByteLength".into(), Json::from(true));
    }
    Json::Object(o)
}

/// Reads an HS_ADMIN object. `permissions` may also be `"*"` or `true` (the 12 known
/// permissions), `false`, or a number (the bit mask).
pub fn admin_from_json(v: &Json, limits: &Limits) -> Result<AdminRecord, JsonError> {
    admin_at(v, &At::ROOT, limits)
}

fn admin_at(v: &Json, at: &At, limits: &Limits) -> Result<AdminRecord, JsonError> {
    let o = object(v, at)?;
    let handle = text_bytes(
        need(o, "handle", at)?,
        &at.key("handle"),
        limits.max_handle_length,
    )?;
    let index = int4(need(o, "index", at)?, &at.key("index"))?;
    let permissions = match get(o, "permissions") {
        Some(p) => admin_permissions_at(p, &at.key("permissions"))?,
        None => 0,
    };
    let legacy = match get(o, "legacyByteLength") {
        Some(b) => boolean(b, &at.key("legacyByteLength"))?,
        None => false,
    };
    Ok(AdminRecord {
        permissions: AdminPermissions(permissions),
        admin: ValueReference { handle, index },
        legacy_trailer: legacy.then_some(0),
    })
}

fn admin_permissions_at(v: &Json, at: &At) -> Result<u16, JsonError> {
    const ALL: u16 = 0x0FFF;
    match v {
        Json::String(s) if s == "*" => Ok(ALL),
        Json::String(s) => {
            if s.len() > 16 || !s.bytes().all(|c| c == b'0' || c == b'1') {
                return Err(at.err(JsonErrorKind::Invalid(
                    "up to 16 characters 0 or 1 (or \"*\")",
                )));
            }
            Ok(s.bytes()
                .rev()
                .enumerate()
                .filter(|(_, c)| *c == b'1')
                .fold(0, |p, (bit, _)| p | (1 << bit)))
        }
        Json::Bool(all) => Ok(if *all { ALL } else { 0 }),
        Json::Number(_) => unsigned(v, at, u64::from(u16::MAX), "a 16-bit mask").map(|p| p as u16),
        _ => Err(at.err(JsonErrorKind::WrongType("a string of 0 and 1"))),
    }
}

/// `[{"handle", "index"}, ...]`.
pub fn vlist_to_json(refs: &[ValueReference]) -> Json {
    Json::Array(refs.iter().map(reference_to_json).collect())
}

/// Reads an HS_VLIST array.
pub fn vlist_from_json(v: &Json, limits: &Limits) -> Result<Vec<ValueReference>, JsonError> {
    references_at(v, &At::ROOT, limits)
}

// ---------------------------------------------------------------------------------------
// HS_SITE

/// The record in the reference library's shape: `version`, `protocolVersion` (`"2.10"`),
/// `serialNumber`, `primarySite`, `multiPrimary`, `hashOption` (only when not 2, by whole
/// handle), `hashFilter` (only when not empty), `attributes` `[{name, value}]`, `servers`.
pub fn site_to_json(s: &SiteInfo) -> Json {
    let mut o = Map::new();
    o.insert("version".into(), Json::from(s.data_format_version));
    o.insert(
        "protocolVersion".into(),
        Json::from(s.protocol_version.to_string()),
    );
    o.insert("serialNumber".into(), Json::from(s.serial));
    o.insert("primarySite".into(), Json::from(s.primary));
    o.insert("multiPrimary".into(), Json::from(s.multi_primary));
    if s.hash_option != HashOption::ByHandle {
        o.insert("hashOption".into(), Json::from(s.hash_option.code()));
    }
    if !s.hash_filter.is_empty() {
        o.insert(
            "hashFilter".into(),
            Json::from(String::from_utf8_lossy(&s.hash_filter)),
        );
    }
    let attributes = s
        .attributes
        .iter()
        .map(|(n, v)| {
            let mut a = Map::new();
            a.insert("name".into(), Json::from(String::from_utf8_lossy(n)));
            a.insert("value".into(), Json::from(String::from_utf8_lossy(v)));
            Json::Object(a)
        })
        .collect();
    o.insert("attributes".into(), Json::Array(attributes));
    o.insert(
        "servers".into(),
        Json::Array(s.servers.iter().map(server_to_json).collect()),
    );
    Json::Object(o)
}

/// One server record: `serverId`, `address`, `publicKey` (`key`, or `base64` when the blob is
/// not an RSA or DSA key it can carry exactly), `interfaces` `[{query, admin, protocol,
/// port}]` (protocol `UDP`, `TCP`, `HTTP`, `HTTPS` or the number).
pub fn server_to_json(s: &ServerInfo) -> Json {
    let mut o = Map::new();
    o.insert("serverId".into(), Json::from(s.server_id));
    o.insert("address".into(), Json::from(address_text(&s.raw_address)));
    o.insert("publicKey".into(), key_blob_to_json(&s.public_key));
    let interfaces = s
        .interfaces
        .iter()
        .map(|i| {
            let code = i.kind.code();
            let mut j = Map::new();
            j.insert("query".into(), Json::from(code & 2 != 0));
            j.insert("admin".into(), Json::from(code & 1 != 0));
            let protocol = match i.protocol {
                Protocol::Other(n) => Json::from(n),
                p => Json::from(p.name()),
            };
            j.insert("protocol".into(), protocol);
            j.insert("port".into(), Json::from(i.port));
            Json::Object(j)
        })
        .collect();
    o.insert("interfaces".into(), Json::Array(interfaces));
    Json::Object(o)
}

/// The address field as text: IPv4 for the IPv4-compatible form (as the reference library
/// writes IPv4), `::ffff:a.b.c.d` for the IPv4-mapped form (so that it reads back the same),
/// else IPv6.
fn address_text(raw: &[u8; 16]) -> String {
    let mapped = raw[..10].iter().all(|&b| b == 0) && raw[10] == 0xFF && raw[11] == 0xFF;
    if mapped {
        Ipv6Addr::from(*raw).to_string()
    } else {
        address_from_raw(*raw).to_string()
    }
}

/// Reads an HS_SITE object. Absent fields take the reference library's defaults (version 1,
/// protocol 2.10, serial 0, not primary, hash by whole handle, no attributes); `servers` is
/// required. `attributes` may also be an object `{name: value or [values]}` (names then in
/// sorted order).
pub fn site_from_json(v: &Json, limits: &Limits) -> Result<SiteInfo, JsonError> {
    site_at(v, &At::ROOT, limits)
}

fn site_at(v: &Json, at: &At, limits: &Limits) -> Result<SiteInfo, JsonError> {
    let o = object(v, at)?;
    let u16_field = |key: &str, default: u16| -> Result<u16, JsonError> {
        get(o, key).map_or(Ok(default), |x| {
            unsigned(x, &at.key(key), u64::from(u16::MAX), "0..=65535").map(|n| n as u16)
        })
    };
    let bool_field = |key: &str| -> Result<bool, JsonError> {
        get(o, key).map_or(Ok(false), |x| boolean(x, &at.key(key)))
    };
    let data_format_version = u16_field("version", 1)?;
    let protocol_version = match get(o, "protocolVersion") {
        Some(p) => {
            let at = at.key("protocolVersion");
            text(p, &at)?
                .split_once('.')
                .and_then(|(a, b)| Some(ProtocolVersion::new(a.parse().ok()?, b.parse().ok()?)))
                .ok_or_else(|| at.err(JsonErrorKind::Invalid("\"major.minor\"")))?
        }
        None => ProtocolVersion::V2_10,
    };
    let serial = u16_field("serialNumber", 0)?;
    let primary = bool_field("primarySite")?;
    let multi_primary = bool_field("multiPrimary")?;
    let hash_option = match get(o, "hashOption") {
        Some(h) => HashOption::from_code(unsigned(h, &at.key("hashOption"), 255, "0..=255")? as u8),
        None => HashOption::ByHandle,
    };
    let hash_filter = match get(o, "hashFilter") {
        Some(f) => text_bytes(f, &at.key("hashFilter"), limits.max_array)?,
        None => Bytes::new(),
    };
    let attributes = match get(o, "attributes") {
        Some(a) => attributes_at(a, &at.key("attributes"), limits)?,
        None => Vec::new(),
    };
    let servers_at = at.key("servers");
    let mut servers = Vec::new();
    for (i, s) in array(need(o, "servers", at)?, &servers_at, limits.max_array)?
        .iter()
        .enumerate()
    {
        servers.push(server_at(s, &servers_at.index(i), limits)?);
    }
    Ok(SiteInfo {
        data_format_version,
        protocol_version,
        serial,
        primary,
        multi_primary,
        primary_mask: (if primary { 0x80 } else { 0 }) | (if multi_primary { 0x40 } else { 0 }),
        hash_option,
        hash_filter,
        attributes,
        servers,
    })
}

fn attributes_at(v: &Json, at: &At, limits: &Limits) -> Result<Vec<(Bytes, Bytes)>, JsonError> {
    let field = |v: &Json, at: &At| text_bytes(v, at, limits.max_array);
    let mut out = Vec::new();
    match v {
        Json::Array(_) => {
            let items = array(v, at, limits.max_array)?;
            for (i, a) in items.iter().enumerate() {
                let at = at.index(i);
                let o = object(a, &at)?;
                out.push((
                    field(need(o, "name", &at)?, &at.key("name"))?,
                    field(need(o, "value", &at)?, &at.key("value"))?,
                ));
            }
        }
        Json::Object(o) => {
            for (name, value) in o {
                let at = at.key(name);
                let values: &[Json] = match value {
                    Json::Array(a) => a,
                    one => std::slice::from_ref(one),
                };
                for (i, one) in values.iter().enumerate() {
                    if out.len() >= limits.max_array {
                        return Err(at.err(JsonErrorKind::TooMany {
                            count: out.len() + 1,
                            limit: limits.max_array,
                        }));
                    }
                    let at_value = if matches!(value, Json::Array(_)) {
                        at.index(i)
                    } else {
                        at
                    };
                    out.push((
                        Bytes::copy_from_slice(name.as_bytes()),
                        field(one, &at_value)?,
                    ));
                }
            }
        }
        _ => return Err(at.err(JsonErrorKind::WrongType("an array or an object"))),
    }
    Ok(out)
}

fn server_at(v: &Json, at: &At, limits: &Limits) -> Result<ServerInfo, JsonError> {
    let o = object(v, at)?;
    let server_id = int4(need(o, "serverId", at)?, &at.key("serverId"))?;
    let address_at = at.key("address");
    let ip: IpAddr = text(need(o, "address", at)?, &address_at)?
        .parse()
        .map_err(|_| address_at.err(JsonErrorKind::Invalid("an IP address")))?;
    let raw_address = address_to_raw(ip);
    let public_key = match get(o, "publicKey") {
        Some(k) => data_at(k, &at.key("publicKey"), limits)?,
        None => Bytes::new(),
    };
    let interfaces_at = at.key("interfaces");
    let mut interfaces = Vec::new();
    for (i, x) in array(need(o, "interfaces", at)?, &interfaces_at, limits.max_array)?
        .iter()
        .enumerate()
    {
        interfaces.push(interface_at(x, &interfaces_at.index(i))?);
    }
    Ok(ServerInfo {
        server_id,
        address: address_from_raw(raw_address),
        raw_address,
        public_key,
        interfaces,
    })
}

fn interface_at(v: &Json, at: &At) -> Result<Interface, JsonError> {
    let o = object(v, at)?;
    let query = boolean(need(o, "query", at)?, &at.key("query"))?;
    let admin = boolean(need(o, "admin", at)?, &at.key("admin"))?;
    let protocol_at = at.key("protocol");
    let protocol = match need(o, "protocol", at)? {
        Json::String(name) => ["UDP", "TCP", "HTTP", "HTTPS"]
            .iter()
            .position(|p| p.eq_ignore_ascii_case(name))
            .and_then(|i| u8::try_from(i).ok())
            .or_else(|| name.parse::<u8>().ok())
            .map(Protocol::from_code)
            .ok_or_else(|| {
                protocol_at.err(JsonErrorKind::Invalid("UDP, TCP, HTTP, HTTPS or a number"))
            })?,
        p => Protocol::from_code(unsigned(p, &protocol_at, 255, "0..=255")? as u8),
    };
    Ok(Interface {
        kind: match (query, admin) {
            (true, true) => InterfaceType::AdminAndQuery,
            (true, false) => InterfaceType::Query,
            (false, true) => InterfaceType::Admin,
            (false, false) => InterfaceType::OutOfService,
        },
        protocol,
        port: int4(need(o, "port", at)?, &at.key("port"))?,
    })
}

// ---------------------------------------------------------------------------------------
// HS_PUBKEY

/// A number as the JSON key shows it: base64url without padding, leading zero bytes dropped
/// (one kept for zero).
fn b64_number(b: &[u8]) -> Json {
    let start = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    let m = b.get(start..).filter(|m| !m.is_empty()).unwrap_or(&[0]);
    Json::from(Base64UrlUnpadded::encode_string(m))
}

/// A number as the reference library writes it (`BigInteger.toByteArray`): the magnitude
/// without leading zeros, one zero byte in front when its top bit is set, `[0]` for zero.
fn java_integer(magnitude: &[u8]) -> Bytes {
    let start = magnitude
        .iter()
        .position(|&x| x != 0)
        .unwrap_or(magnitude.len());
    let m = magnitude.get(start..).unwrap_or_default();
    match m.first() {
        None => Bytes::from_static(&[0]),
        Some(b) if b & 0x80 != 0 => {
            let mut v = Vec::with_capacity(m.len() + 1);
            v.push(0);
            v.extend_from_slice(m);
            Bytes::from(v)
        }
        Some(_) => Bytes::copy_from_slice(m),
    }
}

/// The JWK-like object of a key: RSA `{"kty": "RSA", "n", "e"}` and DSA `{"kty": "DSA", "y",
/// "p", "q", "g"}` as the REST API writes them (numbers in base64url without padding, leading
/// zero bytes dropped), which [`key_from_json`] reads back. Other key types get a view the
/// REST API does not have and [`key_from_json`] does not read (`{"kty": "DH", "y", "p",
/// "g"}`, `{"kty": <type>, "hex": <the bytes after the options>}`); [`data_to_json`] writes
/// those keys as `base64`.
pub fn key_to_json(k: &PublicKey) -> Json {
    let mut o = Map::new();
    match k {
        PublicKey::Rsa(r) => {
            o.insert("kty".into(), Json::from("RSA"));
            o.insert("n".into(), b64_number(&r.modulus));
            o.insert("e".into(), b64_number(&r.exponent));
        }
        PublicKey::Dsa(d) => {
            o.insert("kty".into(), Json::from("DSA"));
            o.insert("y".into(), b64_number(&d.y));
            o.insert("p".into(), b64_number(&d.p));
            o.insert("q".into(), b64_number(&d.q));
            o.insert("g".into(), b64_number(&d.g));
        }
        PublicKey::Dh { y, p, g, .. } => {
            o.insert("kty".into(), Json::from("DH"));
            o.insert("y".into(), b64_number(y));
            o.insert("p".into(), b64_number(p));
            o.insert("g".into(), b64_number(g));
        }
        PublicKey::Other { key_type, data, .. } => {
            o.insert("kty".into(), Json::from(String::from_utf8_lossy(key_type)));
            o.insert("hex".into(), Json::from(hex::encode(data)));
        }
    }
    Json::Object(o)
}

/// `{"format": "key", ...}` for a key blob the JSON key carries exactly, else
/// `{"format": "base64", ...}` (an empty blob included, as the reference library writes it).
pub(crate) fn key_blob_to_json(blob: &Bytes) -> Json {
    let limits = Limits::default();
    let exact = PublicKey::decode_bytes(blob)
        .ok()
        .map(|k| key_to_json(&k))
        .filter(|j| {
            key_at(j, &At::ROOT, &limits)
                .ok()
                .and_then(|k| k.encode().ok())
                .is_some_and(|back| back == *blob)
        });
    match exact {
        Some(j) => tagged(DataFormat::Key, j),
        None => tagged(DataFormat::Base64, Json::from(Base64::encode_string(blob))),
    }
}

/// Reads a JWK-like RSA or DSA key into the blob the reference library would write for it
/// (options 0, numbers as `BigInteger.toByteArray`, RSA followed by an empty byte array).
pub fn key_from_json(v: &Json, limits: &Limits) -> Result<PublicKey, JsonError> {
    key_at(v, &At::ROOT, limits)
}

fn key_at(v: &Json, at: &At, limits: &Limits) -> Result<PublicKey, JsonError> {
    let o = object(v, at)?;
    let number = |name: &str| -> Result<Bytes, JsonError> {
        let raw = base64_at(need(o, name, at)?, &at.key(name), limits)?;
        Ok(java_integer(&raw))
    };
    let kty_at = at.key("kty");
    let kty = text(need(o, "kty", at)?, &kty_at)?;
    if kty.eq_ignore_ascii_case("RSA") {
        Ok(PublicKey::Rsa(RsaKey {
            options: 0,
            exponent: number("e")?,
            modulus: number("n")?,
            trailer: Bytes::from_static(RSA_TRAILER),
        }))
    } else if kty.eq_ignore_ascii_case("DSA") {
        Ok(PublicKey::Dsa(DsaKey {
            options: 0,
            q: number("q")?,
            p: number("p")?,
            g: number("g")?,
            y: number("y")?,
        }))
    } else {
        Err(kty_at.err(JsonErrorKind::Invalid("RSA or DSA")))
    }
}
