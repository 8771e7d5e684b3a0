//! Typed values, the server hash and signatures against the reference captures
//! (`fixtures/reference/...`) and `hash-vectors.json`.

mod json;
mod props;
mod signatures;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use handle_resolver::wire::{
    handle_hash, server_index, signed_data, verify_message, verify_signature, Envelope,
    HandleValue, HashOption, Header, Limits, Message, Protocol, ProtocolVersion, PublicKey, Reader,
    ServerInfo, SignatureError, SiteInfo, TypedValue, ValueFormat, ENVELOPE_LEN, HEADER_LEN,
};
use serde_json::Value as Json;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference")
}

fn read_json(p: impl AsRef<Path>) -> Json {
    let p = fixtures().join(p);
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap_or_else(|e| panic!("{p:?}: {e}"))
}

/// Every `decoded.json` of both capture sets: (set/scenario, messages).
fn decoded_files() -> Vec<(String, Vec<Json>)> {
    let mut out = Vec::new();
    for set in ["captures", "captures-dsa"] {
        let mut dirs: Vec<_> = std::fs::read_dir(fixtures().join(set))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("decoded.json").exists())
            .collect();
        dirs.sort();
        for d in dirs {
            let name = format!("{set}/{}", d.file_name().unwrap().to_string_lossy());
            let Json::Array(msgs) = read_json(d.join("decoded.json")) else {
                panic!("{name}")
            };
            out.push((name, msgs));
        }
    }
    assert!(
        out.len() > 70,
        "expected both capture sets, got {}",
        out.len()
    );
    out
}

/// A number that decoded.json writes either as a number or as a string.
fn num(v: &Json) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn value_from_json(v: &Json) -> HandleValue {
    let data = match v["dataHex"].as_str() {
        Some(h) => hex::decode(h).unwrap(),
        None => v["data"].as_str().unwrap().as_bytes().to_vec(),
    };
    assert_eq!(data.len() as u64, num(&v["dataLen"]));
    let mut hv = HandleValue::new(
        num(&v["index"]) as u32,
        v["type"].as_str().unwrap().to_owned(),
        data,
    );
    hv.timestamp = num(&v["timestamp"]) as u32;
    hv
}

/// Every value of every captured message and of the DSA set's stored handles: (where, value).
fn captured_values() -> Vec<(String, HandleValue)> {
    let mut out = Vec::new();
    for (name, msgs) in decoded_files() {
        for m in msgs {
            let handle = m["handle"].as_str().unwrap_or("").to_uppercase();
            for v in m["values"].as_array().into_iter().flatten() {
                out.push((format!("{name} {handle}"), value_from_json(v)));
            }
        }
    }
    let stored = read_json("captures-dsa/handles.json");
    for (h, entry) in stored["handles"].as_object().unwrap() {
        for v in entry["values"].as_array().unwrap() {
            out.push((format!("stored {h}"), value_from_json(v)));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Server hash

#[test]
fn hash_vectors_all_27_handles() {
    let doc = read_json("hash-vectors.json");
    let handles = doc["handles"].as_array().unwrap();
    assert_eq!(handles.len(), 27);
    let mut checked = 0;
    for h in handles {
        let handle = h["handle"].as_str().unwrap().as_bytes();
        for (i, option) in [
            HashOption::ByPrefix,
            HashOption::BySuffix,
            HashOption::ByHandle,
        ]
        .into_iter()
        .enumerate()
        {
            let want = &h[format!("hash_option_{i}")];
            let what = format!("{:?} option {i}", h["handle"]);
            assert_eq!(
                handle_hash(handle, option).map(u64::from),
                want["hash"].as_u64(),
                "{what}"
            );
            let indexes = want["server_index_for_1_to_5_servers"].as_array().unwrap();
            assert_eq!(indexes.len(), 5);
            for (n, idx) in (1..=5).zip(indexes) {
                let want = idx.as_u64().map(|x| x as usize);
                assert_eq!(server_index(handle, option, n), want, "{what} n={n}");
                assert_eq!(site_of(n, option).server_index_for(handle), want, "{what}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 27 * 3 * 5);
}

/// A site of `n` servers (ids 100.., addresses 10.0.0.x) hashing with `option`.
fn site_of(n: usize, option: HashOption) -> SiteInfo {
    SiteInfo {
        data_format_version: 1,
        protocol_version: ProtocolVersion::V2_11,
        serial: 1,
        primary: true,
        multi_primary: false,
        primary_mask: 0x80,
        hash_option: option,
        hash_filter: Bytes::new(),
        attributes: Vec::new(),
        servers: (0..n)
            .map(|i| ServerInfo::new(100 + i as u32, IpAddr::from([10, 0, 0, i as u8])))
            .collect(),
    }
}

/// The first HS_SITE value of `handle` seen in any capture.
fn site_from_values(handle: &str) -> SiteInfo {
    captured_values()
        .into_iter()
        .filter(|(w, v)| w.ends_with(&format!(" {handle}")) && v.is_type("HS_SITE"))
        .find_map(|(_, v)| match v.typed() {
            TypedValue::Site(s) => Some(s),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no HS_SITE for {handle}"))
}

#[test]
fn dsa_site_sends_each_stored_handle_to_the_server_that_stores_it() {
    let stored = read_json("captures-dsa/handles.json");
    let site = site_from_values("0.SERV/20.500.4242");
    assert_eq!(site.hash_option, HashOption::BySuffix);
    assert_eq!(site.servers.len(), 2);
    let mut checked = 0;
    for (handle, entry) in stored["handles"].as_object().unwrap() {
        let on = entry["storedOn"].as_str().unwrap();
        let Some(rest) = on.strip_prefix("site S server index ") else {
            continue;
        };
        let idx: usize = rest[..1].parse().unwrap();
        assert_eq!(
            site.server_index_for(handle.as_bytes()),
            Some(idx),
            "{handle}"
        );
        let srv = site.server_for(handle.as_bytes()).unwrap();
        let addr = srv.socket_addr(Protocol::Udp, false).unwrap();
        assert!(on.contains(&addr.to_string()), "{handle}: {on} vs {addr}");
        checked += 1;
    }
    assert_eq!(checked, 5);
}

// ---------------------------------------------------------------------------------------
// Typed values

#[test]
fn every_captured_value_types_and_encodes_back() {
    let mut formats = HashMap::new();
    for (what, v) in captured_values() {
        let tv = v.typed();
        assert_eq!(tv.encode().unwrap(), v.data, "{what} {}", v.type_str());
        let known = [
            "HS_SITE",
            "HS_SITE.PREFIX",
            "HS_ADMIN",
            "HS_VLIST",
            "HS_PUBKEY",
            "10320/loc",
        ];
        if known.iter().any(|t| v.is_type(t)) {
            assert!(
                v.try_typed().is_ok(),
                "{what} {}: {:?}",
                v.type_str(),
                v.try_typed()
            );
        }
        *formats.entry(tv.format()).or_insert(0) += 1;
    }
    for f in [
        ValueFormat::String,
        ValueFormat::Admin,
        ValueFormat::VList,
        ValueFormat::Site,
        ValueFormat::Key,
        ValueFormat::Locations,
    ] {
        assert!(
            formats.contains_key(&f),
            "no captured {f:?} value: {formats:?}"
        );
    }
}

#[test]
fn json_views_match_the_rest_api_shape_of_handles_json() {
    let mut seen: HashMap<(String, u64), HandleValue> = HashMap::new();
    for (what, v) in captured_values() {
        if let Some(h) = what
            .strip_prefix("captures/")
            .and_then(|w| w.split(' ').nth(1))
        {
            seen.insert((h.to_owned(), u64::from(v.index)), v);
        }
    }
    let expected = read_json("captures/handles.json");
    let mut compared = 0;
    for (handle, entry) in expected.as_object().unwrap() {
        for want in entry["values"].as_array().unwrap() {
            let key = (handle.to_uppercase(), want["index"].as_u64().unwrap());
            let Some(v) = seen.get(&key) else { continue };
            assert_eq!(v.type_str(), want["type"].as_str().unwrap());
            let got = v.typed().to_json();
            if v.is_type("10320/loc") {
                // The REST API shows a location list as its text; ours also parses it.
                assert_eq!(got["format"], "locations");
                assert_eq!(got["value"]["xml"], want["data"]["value"], "{key:?}");
            } else {
                assert_eq!(got, want["data"], "{key:?}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} values compared");
}

#[test]
fn captured_site_of_the_rsa_set() {
    let site = site_from_values("0.NA/0.NA");
    assert_eq!(site.serial, 1);
    assert!(site.primary && !site.multi_primary);
    assert_eq!(site.description().as_deref(), Some("hslab local test site"));
    let srv = &site.servers[0];
    let lo = IpAddr::from([127, 0, 0, 1]);
    assert_eq!(srv.address, lo);
    assert_eq!(srv.raw_address[..12], [0; 12], "IPv4-compatible form");
    assert_eq!(
        srv.socket_addr(Protocol::Udp, false),
        Some(SocketAddr::new(lo, 2641))
    );
    assert_eq!(
        srv.socket_addr(Protocol::Udp, true),
        None,
        "UDP is query-only"
    );
    assert_eq!(
        srv.socket_addr(Protocol::Tcp, true),
        Some(SocketAddr::new(lo, 2641))
    );
    assert_eq!(site.server_for(b"20.500.12345/1").unwrap(), srv);
    let key = srv.public_key().unwrap().unwrap();
    assert!(matches!(key, PublicKey::Rsa(_)));
    // RSA round trip through RustCrypto: same blob back.
    let rsa = key.to_rsa().unwrap();
    assert_eq!(PublicKey::from_rsa(&rsa).encode().unwrap(), srv.public_key);
    assert!(key.to_dsa().is_err());
}

#[test]
fn get_site_info_answer_carries_the_same_site() {
    let raw =
        std::fs::read(fixtures().join("captures/udp_get_site_info/02_s2c_udp_cport45523.bin"))
            .unwrap();
    let (_, header, body, _) = split_message(&Bytes::from(raw));
    assert!(!header.flags.contains(handle_resolver::wire::OpFlags::RD));
    let site = SiteInfo::decode(&body, &Limits::default()).unwrap();
    assert_eq!(site, site_from_values("0.NA/0.NA"));
    assert_eq!(site.encode().unwrap(), body);
}

#[test]
fn dsa_key_files_decode_and_round_trip() {
    for name in ["root-127.0.0.9", "s0-127.0.0.10", "s1-127.0.0.11"] {
        let blob = key_file(name);
        let key = PublicKey::decode(&blob).unwrap();
        let PublicKey::Dsa(k) = &key else {
            panic!("{name}: {key:?}")
        };
        assert_eq!(k.q.len(), 21, "{name}: 160-bit q with Java's sign byte");
        assert_eq!(key.encode().unwrap().as_ref(), &blob[..]);
        assert!(key.to_dsa().is_ok());
        assert_eq!(handle_resolver::wire::json::key_to_json(&key)["kty"], "DSA");
    }
}

fn key_file(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join(format!("captures-dsa/keys/{name}.pubkey.bin"))).unwrap()
}

/// Splits one envelope + message: (envelope, header, body, credential bytes).
fn split_message(buf: &Bytes) -> (Envelope, Header, Bytes, Bytes) {
    let mut r = Reader::new(buf.clone());
    let env = Envelope::decode(&mut r).unwrap();
    let msg = r.take("message", env.message_length as usize).unwrap();
    let mut r = Reader::new(msg);
    let header = Header::decode(&mut r).unwrap();
    let body = r.take("body", header.body_length as usize).unwrap();
    let cred = if r.remaining() >= 4 {
        r.bytes("credential", usize::MAX).unwrap()
    } else {
        Bytes::new()
    };
    (env, header, body, cred)
}
