//! Unit tests of the JSON codec: hand-built values both ways, the format choice, errors with
//! their paths, and property tests (any value round-trips; no input panics). The captured
//! values and the reference client's files are checked in proto-tests and in the resolver.

use super::*;
use crate::wire::admin::encode_vlist;
use crate::wire::pubkey::{DsaKey, PublicKey, RsaKey, RSA_TRAILER};
use crate::wire::{
    AdminRecord, HashOption, Interface, InterfaceType, Protocol, ProtocolVersion, ServerInfo,
    SiteInfo,
};
use proptest::prelude::*;
use serde_json::json;

fn limits() -> Limits {
    Limits::default()
}

fn round_trip(v: &HandleValue) -> HandleValue {
    let j = value_to_json(v);
    value_from_json(&j, &limits()).unwrap_or_else(|e| panic!("{e} in {j}"))
}

fn value(t: &str, data: impl Into<Bytes>) -> HandleValue {
    HandleValue::new(1, t.to_owned(), data.into())
}

/// A one-server site: server 3 at 192.0.2.1 (IPv4-compatible form), the given key blob, TCP
/// 2641 admin + query, UDP 2641 query, HTTP 8000 admin + query; attribute desc = "test".
fn site(key: Bytes) -> SiteInfo {
    let mut server = ServerInfo::new(3, "192.0.2.1".parse().unwrap());
    server.public_key = key;
    server.interfaces = vec![
        Interface {
            kind: InterfaceType::AdminAndQuery,
            protocol: Protocol::Tcp,
            port: 2641,
        },
        Interface {
            kind: InterfaceType::Query,
            protocol: Protocol::Udp,
            port: 2641,
        },
        Interface {
            kind: InterfaceType::AdminAndQuery,
            protocol: Protocol::Http,
            port: 8000,
        },
    ];
    SiteInfo {
        data_format_version: 1,
        protocol_version: ProtocolVersion::V2_10,
        serial: 15,
        primary: true,
        multi_primary: true,
        primary_mask: 0xC0,
        hash_option: HashOption::ByHandle,
        hash_filter: Bytes::new(),
        attributes: vec![(Bytes::from_static(b"desc"), Bytes::from_static(b"test"))],
        servers: vec![server],
    }
}

/// RSA with e = 65537 and n = 0x00C5117F (Java's sign byte in front of the 0xC5), options
/// 0 and the reference library's empty trailing array.
fn rsa_blob() -> Bytes {
    PublicKey::Rsa(RsaKey {
        options: 0,
        exponent: Bytes::from_static(&[1, 0, 1]),
        modulus: Bytes::from_static(&[0x00, 0xC5, 0x11, 0x7F]),
        trailer: Bytes::from_static(RSA_TRAILER),
    })
    .encode()
    .unwrap()
}

#[test]
fn a_plain_value_has_the_rest_shape() {
    let mut v = value("URL", "http://example.org/");
    v.index = 8;
    v.timestamp = 1_767_225_600;
    v.ttl = Ttl::Absolute(1_893_456_000);
    v.references.push(ValueReference {
        handle: Bytes::from_static(b"20.500.12345/1"),
        index: 1,
    });
    // The value of 20.500.12345/ALLTYPES index 8 in fixtures/reference/captures/handles.json.
    let want = json!({"index": 8, "type": "URL",
        "data": {"format": "string", "value": "http://example.org/"},
        "ttl": "2030-01-01T00:00:00Z", "timestamp": "2026-01-01T00:00:00Z",
        "references": [{"handle": "20.500.12345/1", "index": 1}]});
    assert_eq!(value_to_json(&v), want);
    assert_eq!(round_trip(&v), v);
}

#[test]
fn unusual_permissions_are_printed_and_read_from_the_end() {
    let mut v = value("HS_SECKEY", "not-public-secret");
    v.permissions = Permissions(0x0C);
    let j = value_to_json(&v);
    assert_eq!(j["permissions"], "1100");
    assert_eq!(round_trip(&v), v);
    // Bits above the four the REST API knows take eight characters.
    v.permissions = Permissions(0x2E);
    assert_eq!(value_to_json(&v)["permissions"], "00101110");
    assert_eq!(round_trip(&v), v);
    let read = |p: &str| {
        value_from_json(
            &json!({"index": 1, "type": "T", "data": "x", "permissions": p}),
            &limits(),
        )
        .map(|v| v.permissions)
    };
    assert_eq!(read("*"), Ok(Permissions(0x0F)));
    assert_eq!(read("01"), Ok(Permissions(0x0D)), "admin bits keep 1110");
    assert_eq!(read(""), Ok(Permissions::DEFAULT));
    let e = read("11x0").unwrap_err();
    assert_eq!(e.path, "permissions");
    assert!(matches!(e.kind, JsonErrorKind::Invalid(_)));
}

#[test]
fn ttl_forms() {
    let read = |ttl: Json, kind: Option<u8>| {
        let mut j = json!({"index": 1, "type": "T", "data": "x", "ttl": ttl});
        if let Some(k) = kind {
            j["ttlType"] = json!(k);
        }
        value_from_json(&j, &limits()).map(|v| v.ttl)
    };
    assert_eq!(read(json!(3600), None), Ok(Ttl::Relative(3600)));
    assert_eq!(
        read(json!("2030-01-01T00:00:00Z"), None),
        Ok(Ttl::Absolute(1_893_456_000))
    );
    assert_eq!(
        read(json!(7), Some(9)),
        Ok(Ttl::Other { kind: 9, value: 7 })
    );
    assert_eq!(read(json!(-1), None), Ok(Ttl::Relative(-1)));
    assert_eq!(read(json!(4_294_967_295u32), None), Ok(Ttl::Relative(-1)));
    assert_eq!(read(json!("soon"), None).unwrap_err().path, "ttl");
    assert_eq!(
        value_from_json(&json!({"index": 1, "type": "T", "data": "x"}), &limits())
            .unwrap()
            .ttl,
        Ttl::Relative(86_400)
    );
    let mut v = value("T", "x");
    v.ttl = Ttl::Other { kind: 9, value: 7 };
    assert_eq!(value_to_json(&v)["ttlType"], 9);
    assert_eq!(round_trip(&v), v);
}

#[test]
fn timestamps_are_rfc3339_or_seconds() {
    assert_eq!(
        timestamp_to_json(1_564_121_740),
        json!("2019-07-26T06:15:40Z")
    );
    assert_eq!(timestamp_to_json(u32::MAX), json!("2106-02-07T06:28:15Z"));
    for (text, secs) in [
        ("2019-07-26T06:15:40Z", 1_564_121_740),
        ("2019-07-26T08:15:40+02:00", 1_564_121_740),
        ("2019-07-26T06:15:40.999Z", 1_564_121_740),
    ] {
        assert_eq!(timestamp_from_json(&json!(text)), Ok(secs), "{text}");
    }
    assert_eq!(timestamp_from_json(&json!(42)), Ok(42));
    for bad in [json!("1969-12-31T23:59:59Z"), json!(-1), json!(1u64 << 32)] {
        let e = timestamp_from_json(&bad).unwrap_err();
        assert!(matches!(e.kind, JsonErrorKind::OutOfRange(_)), "{bad}");
    }
    assert!(matches!(
        timestamp_from_json(&json!("26 July 2019"))
            .unwrap_err()
            .kind,
        JsonErrorKind::Invalid(_)
    ));
    // A zero timestamp is left out and read back as zero.
    assert!(value_to_json(&value("T", "x")).get("timestamp").is_none());
}

#[test]
fn text_and_bytes_formats() {
    assert_eq!(data_format(&value("URL", "http://x/")), DataFormat::String);
    // Tab, line feed and carriage return are text; other control bytes are not.
    assert_eq!(data_format(&value("DESC", "a\tb\r\n")), DataFormat::String);
    for bytes in [&b"a\x01"[..], b"\x00", b"\x7F", b"\xC3"] {
        let v = value("DESC", Bytes::copy_from_slice(bytes));
        assert_eq!(data_format(&v), DataFormat::Base64, "{bytes:?}");
        assert_eq!(round_trip(&v), v);
    }
    assert_eq!(
        data_to_json(&value("X", &b"\x00\xFF"[..])),
        json!({"format": "base64", "value": "AP8="})
    );
    // Read: hex, unpadded and URL-safe base64, a bare string; the format name in any case.
    for (data, want) in [
        (json!({"format": "HEX", "value": "00ff"}), &b"\x00\xFF"[..]),
        (json!({"format": "base64", "value": "AP8"}), b"\x00\xFF"),
        (
            json!({"format": "base64", "value": "AP_-"}),
            b"\x00\xFF\xFE",
        ),
        (json!({"format": "base64", "value": "AP8=\n"}), b"\x00\xFF"),
        (json!("plain"), b"plain"),
    ] {
        assert_eq!(data_from_json(&data, &limits()).unwrap(), want, "{data}");
    }
}

#[test]
fn admin_and_vlist() {
    // perms 0x0FF3 (int2), handle "0.NA/0.NA" (int4 9 + 9 bytes), index 200 (int4).
    let admin = AdminRecord::new(0x0FF3, "0.NA/0.NA", 200);
    let v = value("HS_ADMIN", admin.encode().unwrap());
    assert_eq!(
        data_to_json(&v),
        json!({"format": "admin", "value": {"handle": "0.NA/0.NA", "index": 200, "permissions": "111111110011"}})
    );
    assert_eq!(round_trip(&v), v);
    // The reference file's root admin: "011111110011" = 0x07F3.
    let read = |p: Json| {
        admin_from_json(
            &json!({"handle": "h", "index": 1, "permissions": p}),
            &limits(),
        )
        .map(|a| a.permissions.0)
    };
    assert_eq!(read(json!("011111110011")), Ok(0x07F3));
    assert_eq!(read(json!("*")), Ok(0x0FFF));
    assert_eq!(read(json!(true)), Ok(0x0FFF));
    assert_eq!(read(json!(5)), Ok(5));
    assert_eq!(read(json!("1000000000000")), Ok(0x1000));
    assert!(read(json!("2")).is_err());
    // Bit 0x1000 (DO-IRP list derived prefixes) widens the string; the legacy form is marked.
    let mut wide = AdminRecord::new(0x1001, "0.NA/0.NA", 200);
    wide.legacy_trailer = Some(0);
    let v = value("HS_ADMIN", wide.encode().unwrap());
    let j = data_to_json(&v);
    assert_eq!(j["value"]["permissions"], "1000000000001");
    assert_eq!(j["value"]["legacyByteLength"], true);
    assert_eq!(round_trip(&v), v);
    // A legacy trailer other than 0 has no JSON form: bytes.
    wide.legacy_trailer = Some(7);
    let v = value("HS_ADMIN", wide.encode().unwrap());
    assert_eq!(data_format(&v), DataFormat::Base64);
    assert_eq!(round_trip(&v), v);

    let refs = vec![ValueReference {
        handle: Bytes::from_static(b"20.500.12345/ADMINGROUP"),
        index: 300,
    }];
    let v = value("HS_VLIST", encode_vlist(&refs).unwrap());
    assert_eq!(
        data_to_json(&v),
        json!({"format": "vlist", "value": [{"handle": "20.500.12345/ADMINGROUP", "index": 300}]})
    );
    assert_eq!(round_trip(&v), v);
}

#[test]
fn sites_in_the_bootstrap_shape() {
    let s = site(rsa_blob());
    let v = value("HS_SITE", s.encode().unwrap());
    let j = data_to_json(&v);
    assert_eq!(
        j,
        json!({"format": "site", "value": {
            "version": 1, "protocolVersion": "2.10", "serialNumber": 15,
            "primarySite": true, "multiPrimary": true,
            "attributes": [{"name": "desc", "value": "test"}],
            "servers": [{"serverId": 3, "address": "192.0.2.1",
                "publicKey": {"format": "key", "value": {"kty": "RSA", "n": "xRF_", "e": "AQAB"}},
                "interfaces": [
                    {"query": true, "admin": true, "protocol": "TCP", "port": 2641},
                    {"query": true, "admin": false, "protocol": "UDP", "port": 2641},
                    {"query": true, "admin": true, "protocol": "HTTP", "port": 8000}]}]}})
    );
    assert_eq!(round_trip(&v), v);
    // Sub-types and the legacy name are sites too; a disabled `#HS_SITE` is not.
    for t in ["HS_SITE.PREFIX", "hs_site.6", "HS_NA_DELEGATE"] {
        assert_eq!(
            data_format(&value(t, v.data.clone())),
            DataFormat::Site,
            "{t}"
        );
    }
    assert_eq!(
        data_format(&value("#HS_SITE", v.data.clone())),
        DataFormat::Base64
    );
    assert_eq!(
        data_format(&value("HS_SITEX", v.data.clone())),
        DataFormat::Base64
    );
    // A server's key is read as key data (`key`, or plain bytes: base64, hex, string); the
    // structured formats of other types are no key.
    let with_key = |key: Json| {
        let mut j = j.clone();
        j["value"]["servers"][0]["publicKey"] = key;
        data_from_json(&j, &limits())
    };
    let blob = rsa_blob();
    for key in [
        json!({"format": "base64", "value": <base64ct::Base64 as base64ct::Encoding>::encode_string(&blob)}),
        json!({"format": "hex", "value": hex::encode(&blob)}),
    ] {
        assert_eq!(with_key(key).unwrap(), v.data);
    }
    let e = with_key(json!({"format": "admin", "value": {}})).unwrap_err();
    assert_eq!(e.path, "value.servers[0].publicKey.format");
}

#[test]
fn sites_keep_their_bytes_or_fall_back_to_base64() {
    // A hash option other than 2 and a hash filter are written; the mapped IPv4 form and
    // ::1 read back as the same bytes; an empty key is an empty base64 string.
    let mut s = site(Bytes::new());
    s.hash_option = HashOption::BySuffix;
    s.hash_filter = Bytes::from_static(b"f");
    let mut mapped = s.servers[0].clone();
    mapped.raw_address = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 192, 0, 2, 9];
    mapped.address = crate::wire::site::address_from_raw(mapped.raw_address);
    let mut loopback = s.servers[0].clone();
    loopback.set_address("::1".parse().unwrap());
    s.servers.push(mapped);
    s.servers.push(loopback);
    let v = value("HS_SITE", s.encode().unwrap());
    let j = data_to_json(&v);
    assert_eq!(j["format"], "site");
    assert_eq!(j["value"]["hashOption"], 1);
    assert_eq!(j["value"]["hashFilter"], "f");
    assert_eq!(j["value"]["servers"][1]["address"], "::ffff:192.0.2.9");
    assert_eq!(j["value"]["servers"][2]["address"], "::1");
    assert_eq!(
        j["value"]["servers"][0]["publicKey"],
        json!({"format": "base64", "value": ""})
    );
    assert_eq!(round_trip(&v), v);

    // What the JSON shape cannot carry: reserved primary-mask bits, an interface type
    // above 3, a non-UTF-8 attribute.
    let mut odd_mask = site(Bytes::new());
    odd_mask.primary_mask = 0xC1;
    let mut odd_interface = site(Bytes::new());
    odd_interface.servers[0].interfaces[0].kind = InterfaceType::Other(9);
    let mut odd_attribute = site(Bytes::new());
    odd_attribute.attributes[0].1 = Bytes::from_static(b"\xFF");
    for s in [odd_mask, odd_interface, odd_attribute] {
        let v = value("HS_SITE", s.encode().unwrap());
        assert_eq!(data_format(&v), DataFormat::Base64, "{s:?}");
        assert_eq!(round_trip(&v), v);
    }
    // A key the JSON key cannot carry stays bytes inside a site that is otherwise written.
    let dh = PublicKey::Dh {
        options: 0,
        y: Bytes::from_static(&[1]),
        p: Bytes::from_static(&[2]),
        g: Bytes::from_static(&[3]),
    };
    let v = value("HS_SITE", site(dh.encode().unwrap()).encode().unwrap());
    let j = data_to_json(&v);
    assert_eq!(j["format"], "site");
    assert_eq!(j["value"]["servers"][0]["publicKey"]["format"], "base64");
    assert_eq!(round_trip(&v), v);
}

#[test]
fn keys_read_as_the_reference_library_writes_them() {
    // n = 0xC5117F has its top bit set: Java's toByteArray puts a zero in front; e does not.
    let k = key_from_json(&json!({"kty": "RSA", "n": "xRF_", "e": "AQAB"}), &limits()).unwrap();
    assert_eq!(k.encode().unwrap(), rsa_blob());
    // Leading zeros in the JSON numbers are dropped first; padding is accepted.
    let k = key_from_json(
        &json!({"kty": "rsa", "n": "AADFEX8=", "e": "AQAB"}),
        &limits(),
    )
    .unwrap();
    assert_eq!(k.encode().unwrap(), rsa_blob());
    // DSA: q, p, g, y each as toByteArray: 0x80 → [0, 0x80], 0 → [0].
    let k = key_from_json(
        &json!({"kty": "DSA", "y": "AQ", "p": "gA", "q": "Aw", "g": "AA"}),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        k,
        PublicKey::Dsa(DsaKey {
            options: 0,
            q: Bytes::from_static(&[3]),
            p: Bytes::from_static(&[0, 0x80]),
            g: Bytes::from_static(&[0]),
            y: Bytes::from_static(&[1]),
        })
    );
    let v = value("HS_PUBKEY", k.encode().unwrap());
    assert_eq!(data_format(&v), DataFormat::Key);
    assert_eq!(round_trip(&v), v);
    // Options other than 0, magnitudes without Java's sign byte, other key types: bytes.
    let mut odd = PublicKey::decode_bytes(&rsa_blob()).unwrap();
    if let PublicKey::Rsa(r) = &mut odd {
        r.options = 1;
    }
    let unsigned = PublicKey::Rsa(RsaKey {
        options: 0,
        exponent: Bytes::from_static(&[1, 0, 1]),
        modulus: Bytes::from_static(&[0xC5, 0x11, 0x7F]),
        trailer: Bytes::from_static(RSA_TRAILER),
    });
    for k in [odd, unsigned] {
        let v = value("HS_PUBKEY", k.encode().unwrap());
        assert_eq!(data_format(&v), DataFormat::Base64, "{k:?}");
        assert_eq!(round_trip(&v), v);
    }
    let e = key_from_json(&json!({"kty": "EC", "x": "AQ"}), &limits()).unwrap_err();
    assert_eq!(e.path, "kty");
    let e = key_from_json(&json!({"kty": "RSA", "n": "!!", "e": "AQAB"}), &limits()).unwrap_err();
    assert_eq!(e.path, "n");
}

#[test]
fn errors_name_the_field() {
    let answer =
        |v: Json| RestAnswer::from_json(&json!({"responseCode": 1, "values": v}), &limits());
    let good_site = site_to_json(&site(Bytes::new()));
    let mut bad_site = good_site.clone();
    bad_site["servers"][0]["address"] = json!("example.org");
    let cases = [
        (
            json!([{"index": 1, "type": "URL", "data": "u"}, {"index": 2, "type": "HS_SITE",
                "data": {"format": "site", "value": bad_site}}]),
            "values[1].data.value.servers[0].address",
        ),
        (json!([{"type": "URL", "data": "u"}]), "values[0].index"),
        (
            json!([{"index": 1, "type": 5, "data": "u"}]),
            "values[0].type",
        ),
        (json!([{"index": 1, "type": "U"}]), "values[0].data"),
        (
            json!([{"index": 1, "type": "U", "data": {"format": "martian", "value": 1}}]),
            "values[0].data.format",
        ),
        (
            json!([{"index": 1, "type": "U", "data": {"format": "string"}}]),
            "values[0].data.value",
        ),
        (
            json!([{"index": 1, "type": "U", "data": "u", "references": [{"handle": "h"}]}]),
            "values[0].references[0].index",
        ),
        (
            json!([{"index": 1, "type": "U", "data": "u", "timestamp": true}]),
            "values[0].timestamp",
        ),
        (
            json!([{"index": 4294967296u64, "type": "U", "data": "u"}]),
            "values[0].index",
        ),
        (json!({"index": 1}), "values"),
    ];
    for (values, path) in cases {
        let e = answer(values.clone()).unwrap_err();
        assert_eq!(e.path, path, "{values}: {e}");
        assert!(e.to_string().starts_with(path), "{e}");
    }
    let e = RestAnswer::from_json(&json!({"handle": "x"}), &limits()).unwrap_err();
    assert_eq!(e.to_string(), "responseCode: missing");
    // Keys that are not plain names are quoted.
    let at = At::ROOT;
    let handles = at.key("handles");
    let record = handles.key("0.NA/0.NA");
    assert_eq!(record.index(3).path(), "handles[\"0.NA/0.NA\"][3]");
}

#[test]
fn rest_answers() {
    let body = br#"{"responseCode":200,"handle":"20.500.1/x","values":[]}"#;
    let a = RestAnswer::from_slice(body, &limits()).unwrap();
    assert_eq!(a.response_code, 200);
    assert_eq!(a.handle.as_deref(), Some("20.500.1/x"));
    assert!(a.values.is_empty());
    assert_eq!(a.http_status(), 200);
    assert_eq!(
        serde_json::from_slice::<Json>(&a.to_vec(false)).unwrap(),
        serde_json::from_slice::<Json>(body).unwrap()
    );

    let mut a = RestAnswer::new(100, "20.500.1/gone");
    a.message = Some("Handle not found".into());
    assert_eq!(
        a.to_json(),
        json!({"responseCode": 100, "handle": "20.500.1/gone", "message": "Handle not found"})
    );
    assert_eq!(a.http_status(), 404);
    let pretty = a.to_vec(true);
    assert!(pretty.contains(&b'\n'));
    assert_eq!(RestAnswer::from_slice(&pretty, &limits()).unwrap(), a);

    let mut a = RestAnswer::new(302, "20.500.1/x");
    a.referral_handle = Some("0.SERV/1".into());
    assert_eq!(a.to_json()["referralHandle"], "0.SERV/1");
    assert!(a.to_json().get("values").is_none());
    assert_eq!(RestAnswer::from_json(&a.to_json(), &limits()).unwrap(), a);

    for (code, status) in [
        (1, 200),
        (2, 500),
        (100, 404),
        (200, 200),
        (301, 400),
        (302, 300),
        (402, 401),
        (3, 503),
        (102, 400),
    ] {
        assert_eq!(rest_http_status(code), status, "{code}");
    }
}

#[test]
fn rest_answers_are_bounded() {
    let small = Limits {
        max_message_length: 4,
        max_values: 1,
        ..Limits::default()
    };
    let body = vec![b' '; max_json_len(&small) + 1];
    assert!(matches!(
        RestAnswer::from_slice(&body, &small).unwrap_err().kind,
        JsonErrorKind::TooLarge { .. }
    ));
    let two = br#"{"responseCode":1,"values":[{"index":1,"type":"A","data":"a"},{"index":2,"type":"B","data":"b"}]}"#;
    let e = RestAnswer::from_slice(
        two,
        &Limits {
            max_values: 1,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.path, "values");
    assert_eq!(e.kind, JsonErrorKind::TooMany { count: 2, limit: 1 });
    let e = RestAnswer::from_slice(b"{\"responseCode\":", &limits()).unwrap_err();
    assert!(matches!(e.kind, JsonErrorKind::Syntax(_)));
    assert_eq!(e.path, "");
    // Data longer than the limit for any field.
    let tight = Limits {
        max_array: 2,
        ..Limits::default()
    };
    let e = value_from_json(
        &json!({"index": 1, "type": "T", "data": {"format": "hex", "value": "000102"}}),
        &tight,
    )
    .unwrap_err();
    assert_eq!(e.path, "data.value");
    assert!(matches!(
        e.kind,
        JsonErrorKind::TooLong { len: 3, limit: 2 }
    ));
    let e = value_from_json(&json!({"index": 1, "type": "T", "data": "abc"}), &tight).unwrap_err();
    assert_eq!(e.path, "data");
}

/// Found by the `json` fuzz target (`fuzz/`, mode 2: a wire value written as JSON and read
/// back): a type name that is not UTF-8 came back with U+FFFD in place of its bytes. The
/// value as it was read from the wire:
const NON_UTF8_TYPE: &[u8] = &[
    0x00, 0x00, 0x00, 0xC8, // index 200
    0x69, 0x55, 0xB9, 0x00, // timestamp 2026-01-01T00:00:00Z
    0x00, // TTL type 0 (relative)
    0x00, 0x01, 0x51, 0x80, // TTL 86400
    0x0E, // permissions: admin read + write, public read
    0x00, 0x00, 0x00, 0x08, 0xFF, 0xFF, 0xFF, 0x04, b'L', b'I', b'S', b'T', // type, 8 bytes
    0x00, 0x00, 0x00, 0x3C, // data, 60 bytes: an HS_VLIST of two references
    0x00, 0x00, 0x00, 0x02, // two references
    0x00, 0x00, 0x00, 0x11, b'0', b'.', b'N', b'A', b'/', b'2', b'0', b'.', b'5', b'0', b'0', b'.',
    b'1', b'2', b'3', b'4', b'5', // "0.NA/20.500.12345"
    0x00, 0x00, 0x01, 0x2C, // index 300
    0x00, 0x00, 0x00, 0x17, b'2', b'0', b'.', b'5', b'0', b'0', b'.', b'1', b'2', b'3', b'4', b'5',
    b'/', b'A', b'D', b'M', b'I', b'N', b'G', b'R', b'O', b'U', b'P',
    // "20.500.12345/ADMINGROUP"
    0x00, 0x00, 0x01, 0x2C, // index 300
    0x00, 0x00, 0x00, 0x00, // no references
];

#[test]
fn type_names_and_reference_handles_that_are_not_utf8_keep_their_bytes() {
    let mut r = crate::wire::Reader::new(Bytes::from_static(NON_UTF8_TYPE));
    let v = HandleValue::decode(&mut r, &limits()).unwrap();
    assert_eq!(r.remaining(), 0);
    let j = value_to_json(&v);
    assert_eq!(j["type"], "\u{FFFD}\u{FFFD}\u{FFFD}\u{4}LIST");
    assert_eq!(j["typeHex"], "ffffff044c495354");
    assert_eq!(round_trip(&v), v);
    // A reference whose handle is not UTF-8, on the value and inside HS_VLIST data.
    let refs = vec![ValueReference {
        handle: Bytes::from_static(b"0.NA/\xC3"),
        index: 7,
    }];
    let mut v = value("HS_VLIST", encode_vlist(&refs).unwrap());
    v.references = refs;
    let j = value_to_json(&v);
    assert_eq!(j["references"][0]["handle"], "0.NA/\u{FFFD}");
    assert_eq!(j["references"][0]["handleHex"], "302e4e412fc3");
    assert_eq!(j["data"]["value"][0]["handleHex"], "302e4e412fc3");
    assert_eq!(round_trip(&v), v);
    // UTF-8 names and handles are written as before, without the hex members.
    let v = value("URL", "x");
    let j = value_to_json(&v);
    assert!(j.get("typeHex").is_none());
    // The hex members are checked like the text they stand for.
    let e =
        value_from_json(&json!({"index": 1, "typeHex": "4", "data": "a"}), &limits()).unwrap_err();
    assert_eq!(e.path, "typeHex");
    assert_eq!(e.kind, JsonErrorKind::Invalid("hex digits"));
    let tight = Limits {
        max_array: 2,
        ..Limits::default()
    };
    let e = value_from_json(
        &json!({"index": 1, "typeHex": "414243", "data": "a"}),
        &tight,
    )
    .unwrap_err();
    assert_eq!(e.path, "typeHex");
    assert_eq!(e.kind, JsonErrorKind::TooLong { len: 3, limit: 2 });
}

// ---------------------------------------------------------------------------------------
// Properties

fn arb_number(max_len: usize) -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..max_len).prop_map(Bytes::from)
}

fn arb_key() -> impl Strategy<Value = PublicKey> {
    let options = prop_oneof![3 => Just(0u16), 1 => any::<u16>()];
    prop_oneof![
        (options.clone(), arb_number(6), arb_number(6)).prop_map(|(options, e, n)| {
            PublicKey::Rsa(RsaKey {
                options,
                exponent: e,
                modulus: n,
                trailer: Bytes::from_static(RSA_TRAILER),
            })
        }),
        (
            options,
            arb_number(5),
            arb_number(5),
            arb_number(5),
            arb_number(5)
        )
            .prop_map(|(options, q, p, g, y)| PublicKey::Dsa(DsaKey {
                options,
                q,
                p,
                g,
                y
            })),
    ]
}

/// Key blobs as Java writes them most of the time (so that the `key` form is exercised).
fn java_key() -> impl Strategy<Value = Bytes> {
    arb_key().prop_map(|k| {
        let k = key_from_json(&key_to_json(&k), &Limits::default()).unwrap_or(k);
        k.encode().unwrap()
    })
}

fn arb_text() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        "[ -~]{0,12}".prop_map(Bytes::from),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Bytes::from),
    ]
}

fn arb_site() -> impl Strategy<Value = SiteInfo> {
    let interface = (0u8..5, 0u8..6, any::<u32>()).prop_map(|(k, p, port)| Interface {
        kind: InterfaceType::from_code(k),
        protocol: Protocol::from_code(p),
        port,
    });
    let address = prop_oneof![
        any::<[u8; 4]>().prop_map(|a| {
            let mut raw = [0u8; 16];
            raw[12..].copy_from_slice(&a);
            raw
        }),
        any::<[u8; 4]>().prop_map(|a| {
            let mut raw = [0u8; 16];
            raw[10] = 0xFF;
            raw[11] = 0xFF;
            raw[12..].copy_from_slice(&a);
            raw
        }),
        any::<[u8; 16]>(),
    ];
    let key = prop_oneof![java_key(), arb_number(8)];
    let server = (
        any::<u32>(),
        address,
        key,
        prop::collection::vec(interface, 0..3),
    )
        .prop_map(|(id, raw, key, interfaces)| ServerInfo {
            server_id: id,
            address: crate::wire::site::address_from_raw(raw),
            raw_address: raw,
            public_key: key,
            interfaces,
        });
    (
        (any::<u16>(), any::<u8>(), any::<u8>(), any::<u16>()),
        prop_oneof![3 => Just(0xC0u8), 1 => any::<u8>()],
        0u8..4,
        arb_text(),
        prop::collection::vec((arb_text(), arb_text()), 0..3),
        prop::collection::vec(server, 0..3),
    )
        .prop_map(
            |((version, major, minor, serial), mask, hash, filter, attributes, servers)| SiteInfo {
                data_format_version: version,
                protocol_version: ProtocolVersion::new(major, minor),
                serial,
                primary: mask & 0x80 != 0,
                multi_primary: mask & 0x40 != 0,
                primary_mask: mask,
                hash_option: HashOption::from_code(hash),
                hash_filter: filter,
                attributes,
                servers,
            },
        )
}

/// Values of every format: structured ones built valid, and arbitrary bytes under every type.
fn arb_value() -> impl Strategy<Value = HandleValue> {
    let typed = prop_oneof![
        arb_site().prop_map(|s| ("HS_SITE", s.encode().unwrap())),
        java_key().prop_map(|k| ("HS_PUBKEY", k)),
        arb_key().prop_map(|k| ("HS_PUBKEY", k.encode().unwrap())),
        (
            any::<u16>(),
            arb_text(),
            any::<u32>(),
            prop::option::of(0u16..2)
        )
            .prop_map(|(p, h, i, legacy)| {
                let mut a = AdminRecord::new(p, h, i);
                a.legacy_trailer = legacy;
                ("HS_ADMIN", a.encode().unwrap())
            }),
        prop::collection::vec((arb_text(), any::<u32>()), 0..3).prop_map(|refs| {
            let refs: Vec<ValueReference> = refs
                .into_iter()
                .map(|(handle, index)| ValueReference { handle, index })
                .collect();
            ("HS_VLIST", encode_vlist(&refs).unwrap())
        }),
        (
            prop::sample::select(vec![
                "URL",
                "HS_SITE",
                "HS_ADMIN",
                "HS_PUBKEY",
                "HS_VLIST",
                "X"
            ]),
            prop::collection::vec(any::<u8>(), 0..24).prop_map(Bytes::from)
        ),
        "[ -~\t\n]{0,20}".prop_map(|s| ("DESC", Bytes::from(s))),
    ];
    let ttl = prop_oneof![
        any::<i32>().prop_map(Ttl::Relative),
        any::<u32>().prop_map(Ttl::Absolute),
        (2u8.., any::<u32>()).prop_map(|(kind, value)| Ttl::Other { kind, value }),
    ];
    (
        typed,
        any::<u32>(),
        any::<u32>(),
        ttl,
        prop_oneof![3 => Just(0x0Eu8), 1 => any::<u8>()],
        prop::collection::vec((arb_text(), any::<u32>()), 0..2),
        prop::option::weighted(0.1, arb_text()),
    )
        .prop_map(
            |((t, data), index, timestamp, ttl, perms, refs, odd_type)| HandleValue {
                index,
                timestamp,
                ttl,
                permissions: Permissions(perms),
                type_name: odd_type.unwrap_or_else(|| Bytes::from_static(t.as_bytes())),
                data,
                references: refs
                    .into_iter()
                    .map(|(handle, index)| ValueReference { handle, index })
                    .collect(),
            },
        )
}

/// JSON built from the codec's own member names, so that decoding goes deep.
fn arb_json() -> impl Strategy<Value = Json> {
    const WORDS: &[&str] = &[
        "index",
        "type",
        "data",
        "format",
        "value",
        "ttl",
        "ttlType",
        "timestamp",
        "permissions",
        "references",
        "handle",
        "string",
        "base64",
        "hex",
        "admin",
        "vlist",
        "site",
        "key",
        "servers",
        "serverId",
        "address",
        "publicKey",
        "interfaces",
        "query",
        "protocol",
        "port",
        "attributes",
        "name",
        "kty",
        "RSA",
        "DSA",
        "n",
        "e",
        "p",
        "q",
        "g",
        "y",
        "responseCode",
        "values",
        "message",
        "version",
        "protocolVersion",
        "2.10",
        "hashOption",
        "127.0.0.1",
        "::1",
        "UDP",
        "2026-01-01T00:00:00Z",
        "1110",
        "*",
        "AQAB",
        "legacyByteLength",
        "serialNumber",
        "primarySite",
    ];
    let word = prop::sample::select(WORDS.to_vec());
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::from),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>().prop_map(Json::from),
        word.clone().prop_map(Json::from),
        ".{0,8}".prop_map(Json::from),
    ];
    leaf.prop_recursive(5, 96, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
            prop::collection::vec((word.clone(), inner), 0..8).prop_map(|kv| Json::Object(
                kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_value_round_trips(v in arb_value()) {
        let j = value_to_json(&v);
        let back = value_from_json(&j, &Limits::default());
        prop_assert_eq!(back.as_ref(), Ok(&v), "{}", j);
        // And through text, as it travels.
        let text = serde_json::to_vec(&j).unwrap();
        let doc: Json = serde_json::from_slice(&text).unwrap();
        prop_assert_eq!(value_from_json(&doc, &Limits::default()), Ok(v));
    }

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = RestAnswer::from_slice(&body, &Limits::default());
    }

    #[test]
    fn arbitrary_json_never_panics(j in arb_json()) {
        let l = Limits::default();
        let _ = value_from_json(&j, &l);
        let _ = values_from_json(&j, &l);
        let _ = data_from_json(&j, &l);
        let _ = site_from_json(&j, &l);
        let _ = key_from_json(&j, &l);
        let _ = admin_from_json(&j, &l);
        let _ = vlist_from_json(&j, &l);
        let _ = timestamp_from_json(&j);
        let _ = RestAnswer::from_json(&j, &l);
        // The same JSON where each format expects its value, and as the text of an answer.
        for format in ["string", "base64", "hex", "admin", "vlist", "site", "key"] {
            let v = json!({"index": 1, "type": "T", "data": {"format": format, "value": j.clone()}});
            let _ = RestAnswer::from_json(&json!({"responseCode": 1, "values": [v]}), &l);
        }
        let _ = RestAnswer::from_slice(j.to_string().as_bytes(), &l);
    }
}
