//! The reference client's `bootstrap_handles` JSON file (PROTOCOL.md §11.4), read
//! tolerantly into handle → values; see [`read_bootstrap_handles`] for the shapes accepted.

use std::collections::BTreeMap;
use std::net::IpAddr;

use base64ct::{Base64, Base64UrlUnpadded, Encoding};
use bytes::Bytes;
use serde_json::Value as Json;

use crate::wire::pubkey::{DsaKey, RsaKey, RSA_TRAILER};
use crate::wire::{
    HandleValue, HashOption, Interface, InterfaceType, Permissions, Protocol, ProtocolVersion,
    PublicKey, ServerInfo, SiteInfo, Ttl,
};

use super::bootstrap::BootstrapError;
use super::sites::server_record;

/// Reads a `bootstrap_handles` JSON file into handle → values.
///
/// Assumed shape (the reference library's format could not be checked here, so the reader is
/// tolerant): handle records in the handle.net REST API shape, each `{"handle": "...",
/// "values": [...]}`, given as a JSON array of records, as an object mapping handle → record
/// or handle → values array, or as an object with a `"handles"` array. A value is `{"index":
/// n, "type": "T", "data": D, "ttl"?: n, "timestamp"?: n}` where D is a string (UTF-8 data) or
/// `{"format": F, "value": V}` with F = `string`/`text` (V text), `base64`, `hex`, or `site`
/// (V a site object: `protocolVersion` "2.10", `serialNumber`, `primaryMask`
/// {`primary`,`multiPrimary`} or a number (or top-level `primarySite`/`multiPrimary`),
/// `hashOption` number or name (default by handle), `attributes` [{`name`,`value`}], `servers`
/// [{`serverId`, `address`, `publicKey` {`format` base64|hex, `value`} or the REST API's
/// {`format` key, `value` {`kty` RSA|DSA, base64url numbers}}, `interfaces` [{`query`,
/// `admin`, `protocol` "UDP"/"TCP"/... or number, `port`}]}]) — the shape the values layer's
/// `SiteInfo::to_json` writes. Values in an unknown format are skipped.
pub fn read_bootstrap_handles(
    json: &str,
) -> Result<BTreeMap<String, Vec<HandleValue>>, BootstrapError> {
    let doc: Json = serde_json::from_str(json).map_err(|e| BootstrapError::Json(e.to_string()))?;
    let mut out = BTreeMap::new();
    match &doc {
        Json::Array(records) => {
            for r in records {
                add_record(&mut out, None, r)?;
            }
        }
        Json::Object(map) => {
            if let Some(Json::Array(records)) = map.get("handles") {
                for r in records {
                    add_record(&mut out, None, r)?;
                }
            } else if map.contains_key("values") {
                add_record(&mut out, None, &doc)?;
            } else {
                for (handle, r) in map {
                    add_record(&mut out, Some(handle), r)?;
                }
            }
        }
        _ => {
            return Err(BootstrapError::Json(
                "expected an object or an array".into(),
            ))
        }
    }
    Ok(out)
}

fn add_record(
    out: &mut BTreeMap<String, Vec<HandleValue>>,
    key: Option<&String>,
    record: &Json,
) -> Result<(), BootstrapError> {
    let (handle, values) = match record {
        Json::Array(values) => (key.cloned(), values),
        Json::Object(map) => {
            let handle = map
                .get("handle")
                .and_then(Json::as_str)
                .map(str::to_string)
                .or_else(|| key.cloned());
            match map.get("values") {
                Some(Json::Array(values)) => (handle, values),
                _ => return Err(BootstrapError::Json("record without a values array".into())),
            }
        }
        _ => {
            return Err(BootstrapError::Json(
                "record is neither object nor array".into(),
            ))
        }
    };
    let handle = handle.ok_or_else(|| BootstrapError::Json("record without a handle".into()))?;
    let mut parsed = Vec::new();
    for v in values {
        if let Some(v) = json_value(v)? {
            parsed.push(v);
        }
    }
    out.entry(handle).or_default().extend(parsed);
    Ok(())
}

fn json_u32(v: Option<&Json>) -> Option<u32> {
    v.and_then(Json::as_u64).and_then(|n| u32::try_from(n).ok())
}

fn json_str(v: Option<&Json>) -> Option<&str> {
    v.and_then(Json::as_str)
}

fn json_value(v: &Json) -> Result<Option<HandleValue>, BootstrapError> {
    let bad = |what: &str| BootstrapError::Json(format!("value: {what}"));
    let index = json_u32(v.get("index")).ok_or_else(|| bad("missing index"))?;
    let type_name = json_str(v.get("type")).ok_or_else(|| bad("missing type"))?;
    let data = match v.get("data") {
        Some(Json::String(s)) => Some(Bytes::from(s.clone())),
        Some(Json::Object(d)) => {
            let format = d.get("format").and_then(Json::as_str).unwrap_or("string");
            data_bytes(format, d.get("value"))?
        }
        None => Some(Bytes::new()),
        Some(_) => return Err(bad("data is neither a string nor an object")),
    };
    let Some(data) = data else {
        return Ok(None);
    };
    let mut value = HandleValue::new(index, Bytes::from(type_name.to_string()), data);
    if let Some(ttl) = json_u32(v.get("ttl")) {
        value.ttl = Ttl::Relative(ttl);
    }
    if let Some(ts) = json_u32(v.get("timestamp")) {
        value.timestamp = ts;
    }
    if let Some(p) = json_u32(v.get("permissions")).and_then(|p| u8::try_from(p).ok()) {
        value.permissions = Permissions(p);
    }
    Ok(Some(value))
}

fn decode_binary(format: &str, value: Option<&Json>) -> Result<Bytes, BootstrapError> {
    let text = json_str(value)
        .ok_or_else(|| BootstrapError::Json(format!("{format} data without a string value")))?;
    let raw = if format.eq_ignore_ascii_case("hex") {
        hex::decode(text).map_err(|e| BootstrapError::Json(format!("hex: {e}")))?
    } else {
        Base64::decode_vec(text.trim()).map_err(|e| BootstrapError::Json(format!("base64: {e}")))?
    };
    Ok(Bytes::from(raw))
}

fn data_bytes(format: &str, value: Option<&Json>) -> Result<Option<Bytes>, BootstrapError> {
    Ok(Some(match format.to_ascii_lowercase().as_str() {
        "string" | "text" => Bytes::from(json_str(value).unwrap_or_default().to_string()),
        "base64" | "hex" => decode_binary(format, value)?,
        "site" => match value {
            Some(site) => json_site(site)?.encode()?,
            None => return Err(BootstrapError::Json("site data without a value".into())),
        },
        _ => return Ok(None),
    }))
}

fn json_site(v: &Json) -> Result<SiteInfo, BootstrapError> {
    let bad = |what: &str| BootstrapError::Json(format!("site: {what}"));
    let protocol_version = match v.get("protocolVersion") {
        Some(Json::String(s)) => {
            let (a, b) = s.split_once('.').ok_or_else(|| bad("protocolVersion"))?;
            ProtocolVersion::new(
                a.parse().map_err(|_| bad("protocolVersion"))?,
                b.parse().map_err(|_| bad("protocolVersion"))?,
            )
        }
        Some(o @ Json::Object(_)) => ProtocolVersion::new(
            json_u32(o.get("major"))
                .and_then(|n| u8::try_from(n).ok())
                .unwrap_or(2),
            json_u32(o.get("minor"))
                .and_then(|n| u8::try_from(n).ok())
                .unwrap_or(10),
        ),
        _ => ProtocolVersion::V2_10,
    };
    let (primary, multi_primary) = match v.get("primaryMask") {
        Some(Json::Number(n)) => {
            let m = n.as_u64().unwrap_or(0);
            (m & 0x80 != 0, m & 0x40 != 0)
        }
        Some(o @ Json::Object(_)) => (
            o.get("primary").and_then(Json::as_bool).unwrap_or(false),
            o.get("multiPrimary")
                .and_then(Json::as_bool)
                .unwrap_or(false),
        ),
        _ => (
            v.get("primarySite")
                .or_else(|| v.get("primary"))
                .and_then(Json::as_bool)
                .unwrap_or(false),
            v.get("multiPrimary")
                .and_then(Json::as_bool)
                .unwrap_or(false),
        ),
    };
    let hash_option = match v.get("hashOption") {
        Some(Json::Number(n)) => match n.as_u64() {
            Some(0) => HashOption::ByPrefix,
            Some(1) => HashOption::BySuffix,
            Some(2) => HashOption::ByHandle,
            Some(x) => HashOption::Other(u8::try_from(x).unwrap_or(u8::MAX)),
            None => return Err(bad("hashOption")),
        },
        Some(Json::String(s)) => {
            let s = s.to_ascii_uppercase();
            if s.contains("PREFIX") || s.ends_with("_NA") {
                HashOption::ByPrefix
            } else if s.contains("SUFFIX") || s.contains("LOCAL") {
                HashOption::BySuffix
            } else {
                HashOption::ByHandle
            }
        }
        _ => HashOption::ByHandle,
    };
    let attributes = v
        .get("attributes")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|kv| {
                    Some((
                        Bytes::from(json_str(kv.get("name"))?.to_string()),
                        Bytes::from(json_str(kv.get("value")).unwrap_or_default().to_string()),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut servers = Vec::new();
    for s in v
        .get("servers")
        .and_then(Json::as_array)
        .ok_or_else(|| bad("servers"))?
    {
        servers.push(json_server(s)?);
    }
    Ok(SiteInfo {
        data_format_version: 1,
        protocol_version,
        serial: json_u32(v.get("serialNumber"))
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(1),
        primary,
        multi_primary,
        primary_mask: (if primary { 0x80 } else { 0 }) | (if multi_primary { 0x40 } else { 0 }),
        hash_option,
        hash_filter: Bytes::from(
            json_str(v.get("hashFilter"))
                .unwrap_or_default()
                .to_string(),
        ),
        attributes,
        servers,
    })
}

/// An HS_PUBKEY blob from the REST API's JWK-like key object (`kty` RSA with `n`, `e`, or DSA
/// with `p`, `q`, `g`, `y`; base64url without padding). Other key types give no key.
fn jwk_key(v: &Json) -> Result<Bytes, BootstrapError> {
    let part = |name: &str| -> Result<Bytes, BootstrapError> {
        let text = json_str(v.get(name))
            .ok_or_else(|| BootstrapError::Json(format!("key: missing {name}")))?;
        Base64UrlUnpadded::decode_vec(text.trim_end_matches('='))
            .map(Bytes::from)
            .map_err(|e| BootstrapError::Json(format!("key {name}: {e}")))
    };
    let key = match json_str(v.get("kty")) {
        Some("RSA") => PublicKey::Rsa(RsaKey {
            options: 0,
            exponent: part("e")?,
            modulus: part("n")?,
            trailer: Bytes::from_static(RSA_TRAILER),
        }),
        Some("DSA") => PublicKey::Dsa(DsaKey {
            options: 0,
            q: part("q")?,
            p: part("p")?,
            g: part("g")?,
            y: part("y")?,
        }),
        _ => return Ok(Bytes::new()),
    };
    Ok(key.encode()?)
}

fn json_server(s: &Json) -> Result<ServerInfo, BootstrapError> {
    let bad = |what: &str| BootstrapError::Json(format!("server: {what}"));
    let address: IpAddr = json_str(s.get("address"))
        .ok_or_else(|| bad("address"))?
        .parse()
        .map_err(|_| bad("address is not an IP address"))?;
    let public_key = match s.get("publicKey") {
        Some(Json::Object(k)) => {
            let format = k.get("format").and_then(Json::as_str).unwrap_or("");
            if format.eq_ignore_ascii_case("base64") || format.eq_ignore_ascii_case("hex") {
                decode_binary(format, k.get("value"))?
            } else if format.eq_ignore_ascii_case("key") {
                k.get("value").map(jwk_key).transpose()?.unwrap_or_default()
            } else {
                Bytes::new()
            }
        }
        _ => Bytes::new(),
    };
    let mut server = server_record(
        json_u32(s.get("serverId")).unwrap_or(1),
        address,
        public_key,
        0,
        0,
    );
    server.interfaces.clear();
    for i in s
        .get("interfaces")
        .and_then(Json::as_array)
        .ok_or_else(|| bad("interfaces"))?
    {
        let protocol = match i.get("protocol") {
            Some(Json::String(p)) => match p.to_ascii_uppercase().as_str() {
                "UDP" => Protocol::Udp,
                "TCP" => Protocol::Tcp,
                "HTTP" => Protocol::Http,
                "HTTPS" => Protocol::Https,
                _ => return Err(bad("unknown interface protocol")),
            },
            Some(Json::Number(n)) => match n.as_u64() {
                Some(0) => Protocol::Udp,
                Some(1) => Protocol::Tcp,
                Some(2) => Protocol::Http,
                Some(3) => Protocol::Https,
                _ => return Err(bad("unknown interface protocol")),
            },
            _ => return Err(bad("interface protocol")),
        };
        let query = i.get("query").and_then(Json::as_bool).unwrap_or(true);
        let admin = i.get("admin").and_then(Json::as_bool).unwrap_or(false);
        let kind = match (admin, query) {
            (true, true) => InterfaceType::AdminAndQuery,
            (true, false) => InterfaceType::Admin,
            (false, true) => InterfaceType::Query,
            (false, false) => InterfaceType::OutOfService,
        };
        let port = json_u32(i.get("port")).ok_or_else(|| bad("interface port"))?;
        server.interfaces.push(Interface {
            kind,
            protocol,
            port,
        });
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolver::bootstrap::root_sites_from_handles;
    use crate::resolver::sites::Site;
    use crate::wire::Limits;

    #[test]
    fn reads_bootstrap_json_in_every_accepted_shape() {
        let record = r#"{"handle": "0.NA/0.NA", "values": [
            {"index": 1, "type": "HS_SERV", "data": {"format": "string", "value": "0.GHR/20"}},
            {"index": 2, "type": "DESC", "data": "root"},
            {"index": 3, "type": "BIN", "data": {"format": "base64", "value": "AAEC"}, "ttl": 60},
            {"index": 4, "type": "HEX", "data": {"format": "hex", "value": "0a0b"}},
            {"index": 5, "type": "ODD", "data": {"format": "martian", "value": 1}}
        ]}"#;
        let shapes = [
            format!("[{record}]"),
            format!(r#"{{"handles": [{record}]}}"#),
            record.to_string(),
            format!(r#"{{"0.NA/0.NA": {record}}}"#),
        ];
        for doc in shapes {
            let map = read_bootstrap_handles(&doc).unwrap();
            let values = &map["0.NA/0.NA"];
            assert_eq!(values.len(), 4, "{doc}");
            assert_eq!(&values[0].data[..], b"0.GHR/20");
            assert_eq!(&values[1].data[..], b"root");
            assert_eq!(&values[2].data[..], &[0, 1, 2]);
            assert_eq!(values[2].ttl, Ttl::Relative(60));
            assert_eq!(&values[3].data[..], &[10, 11]);
        }
        let map =
            read_bootstrap_handles(r#"{"0.GHR/1": [{"index": 7, "type": "URL", "data": "u"}]}"#)
                .unwrap();
        assert_eq!(map["0.GHR/1"][0].index, 7);
    }

    /// An RSA HS_PUBKEY blob with Java's leading zero on the modulus: the JWK view drops it,
    /// so the comparison is on the decoded numbers.
    fn rsa_blob() -> Bytes {
        PublicKey::Rsa(RsaKey {
            options: 0,
            exponent: Bytes::from_static(&[1, 0, 1]),
            modulus: Bytes::from_static(&[0xC5, 0x11, 0x7F]),
            trailer: Bytes::from_static(RSA_TRAILER),
        })
        .encode()
        .unwrap()
    }

    #[test]
    fn reads_sites_in_the_rest_api_json_shape() {
        let mut server = server_record(7, "127.0.0.1".parse().unwrap(), rsa_blob(), 2641, 2642);
        server.interfaces.push(Interface {
            kind: InterfaceType::AdminAndQuery,
            protocol: Protocol::Http,
            port: 8000,
        });
        let site = SiteInfo {
            data_format_version: 1,
            protocol_version: ProtocolVersion::V2_10,
            serial: 15,
            primary: true,
            multi_primary: true,
            primary_mask: 0xC0,
            hash_option: HashOption::ByHandle,
            hash_filter: Bytes::new(),
            attributes: vec![(Bytes::from_static(b"desc"), Bytes::from_static(b"root"))],
            servers: vec![server],
        };
        let other = Site::single("127.0.0.2:9".parse().unwrap())
            .info
            .encode()
            .unwrap();
        // The values layer's REST view of the site, inside a bootstrap file.
        let doc = serde_json::json!([{
            "handle": "0.NA/0.NA",
            "values": [
                {"index": 1, "type": "HS_SITE", "data": {"format": "site", "value": site.to_json()}},
                {"index": 2, "type": "HS_SERV", "data": {"format": "string", "value": "0.GHR/1"}},
            ],
        }, {
            "handle": "0.GHR/1",
            "values": [{"index": 1, "type": "HS_SITE",
                "data": {"format": "base64", "value": Base64::encode_string(&other)}}],
        }]);
        let map = read_bootstrap_handles(&doc.to_string()).unwrap();
        let sites = root_sites_from_handles(&map, &Limits::default());
        assert_eq!(sites.len(), 2);
        let back = &sites[0].info;
        assert_eq!(back.servers[0].interfaces, site.servers[0].interfaces);
        assert_eq!(back.servers[0].address, site.servers[0].address);
        assert_eq!(back.servers[0].server_id, 7);
        assert_eq!(
            back.servers[0]
                .public_key()
                .unwrap()
                .unwrap()
                .to_rsa()
                .unwrap(),
            site.servers[0]
                .public_key()
                .unwrap()
                .unwrap()
                .to_rsa()
                .unwrap()
        );
        assert_eq!(back.serial, 15);
        assert!(back.primary && back.multi_primary);
        assert_eq!(back.protocol_version, ProtocolVersion::V2_10);
        assert_eq!(back.description().as_deref(), Some("root"));
        assert_eq!(sites[1].info.servers[0].address.to_string(), "127.0.0.2");
    }

    #[test]
    fn rejects_bootstrap_json_it_cannot_read() {
        for bad in [
            "",
            "42",
            "[1]",
            r#"[{"handle": "x"}]"#,
            r#"[{"values": []}]"#,
            r#"[{"handle": "x", "values": [{"type": "URL"}]}]"#,
            r#"[{"handle": "x", "values": [{"index": 1, "type": "B", "data": {"format": "base64", "value": "!!"}}]}]"#,
        ] {
            assert!(read_bootstrap_handles(bad).is_err(), "{bad}");
        }
    }
}
