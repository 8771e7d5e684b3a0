//! HS_SITE in JSON (data format `site`): the site record in the reference library's shape,
//! both ways.

use std::net::{IpAddr, Ipv6Addr};

use bytes::Bytes;
use serde_json::{Map, Value as Json};

use super::key::{key_blob_to_json, key_data_at};
use super::{
    array, boolean, get, int4, need, object, text, text_bytes, unsigned, At, JsonError,
    JsonErrorKind,
};
use crate::wire::envelope::ProtocolVersion;
use crate::wire::hash::HashOption;
use crate::wire::limits::Limits;
use crate::wire::site::{
    address_from_raw, address_to_raw, Interface, InterfaceType, Protocol, ServerInfo, SiteInfo,
};

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

pub(super) fn site_at(v: &Json, at: &At, limits: &Limits) -> Result<SiteInfo, JsonError> {
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
        Some(k) => key_data_at(k, &at.key("publicKey"), limits)?,
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
