//! Unit tests of the typed value views (captured values are checked in proto-tests).

use super::*;

fn v(t: &str, data: &[u8]) -> HandleValue {
    HandleValue::new(1, t.to_owned(), Bytes::copy_from_slice(data))
}

#[test]
fn text_types_and_their_json() {
    let cases = [
        ("URL", TypedValue::Url("u".into())),
        ("email", TypedValue::Email("u".into())),
        ("DESC", TypedValue::Desc("u".into())),
        ("HS_SERV", TypedValue::Serv("u".into())),
        ("HS_SERV.PREFIX", TypedValue::Serv("u".into())),
        ("HS_ALIAS", TypedValue::Alias("u".into())),
        ("HS_NAMESPACE", TypedValue::Namespace("u".into())),
        ("JSON", TypedValue::Text("u".into())),
    ];
    for (t, want) in cases {
        let tv = v(t, b"u").typed();
        assert_eq!(tv, want, "{t}");
        assert_eq!(tv.encode().unwrap().as_ref(), b"u");
        assert_eq!(tv.to_json(), json!({"format": "string", "value": "u"}));
    }
}

#[test]
fn malformed_data_falls_back_and_still_encodes_the_same() {
    let junk = [0xFFu8, 0x00, 0x01];
    for t in [
        "URL",
        "HS_ADMIN",
        "HS_SITE",
        "HS_SITE.PREFIX",
        "HS_VLIST",
        "HS_PUBKEY",
        "HS_ALIAS",
        "10320/loc",
        "X",
    ] {
        let val = v(t, &junk);
        let tv = val.typed();
        assert_eq!(tv, TypedValue::Binary(val.data.clone()), "{t}");
        assert_eq!(tv.encode().unwrap(), val.data);
        assert_eq!(tv.to_json(), json!({"format": "hex", "value": "ff0001"}));
    }
    assert!(matches!(
        v("HS_SITE", &junk).try_typed(),
        Err(TypedError::Decode(_))
    ));
    assert_eq!(v("URL", &junk).try_typed(), Err(TypedError::NotUtf8));
    // A UTF-8 10320/loc that is no location list stays text.
    let loc = v("10320/loc", b"not xml");
    assert!(matches!(loc.try_typed(), Err(TypedError::Locations(_))));
    assert_eq!(loc.typed(), TypedValue::Text("not xml".into()));
}

#[test]
fn admin_vlist_seckey_and_locations() {
    let admin = hex::decode("0fff00000009302e4e412f302e4e410000012c").unwrap();
    let tv = v("HS_ADMIN", &admin).typed();
    assert_eq!(
        tv.to_json(),
        json!({"format": "admin", "value": {"handle": "0.NA/0.NA", "index": 300, "permissions": "111111111111"}})
    );
    assert_eq!(tv.encode().unwrap().as_ref(), &admin[..]);

    // count 1 (int4), handle "a/b" (int4 3 + 3 bytes), index 7 (int4)
    let vlist = [0, 0, 0, 1, 0, 0, 0, 3, b'a', b'/', b'b', 0, 0, 0, 7];
    let tv = v("HS_VLIST", &vlist).typed();
    assert_eq!(tv.format(), ValueFormat::VList);
    assert_eq!(
        tv.to_json(),
        json!({"format": "vlist", "value": [{"handle": "a/b", "index": 7}]})
    );
    assert_eq!(tv.encode().unwrap().as_ref(), &vlist[..]);

    let sk = v("HS_SECKEY", b"secret").typed();
    assert_eq!(sk.to_json(), json!({"format": "string", "value": "secret"}));
    let sk = v("HS_SECKEY", &[0xFF]).typed();
    assert_eq!(sk.to_json(), json!({"format": "hex", "value": "ff"}));

    let text =
        "<locations chooseby=\"weighted\"><location href=\"h\" weight=\"2\" id=\"0\"/></locations>";
    let tv = v("10320/loc", text.as_bytes()).typed();
    assert_eq!(tv.format().name(), "locations");
    assert_eq!(
        tv.to_json()["value"]["locations"][0],
        json!({"href": "h", "weight": 2.0, "id": "0"})
    );
    assert_eq!(tv.encode().unwrap().as_ref(), text.as_bytes());
}

#[test]
fn non_utf8_unknown_type_is_binary() {
    let tv = v("BIN", &[0xC3]).typed();
    assert_eq!(tv, TypedValue::Binary(Bytes::from_static(&[0xC3])));
    assert_eq!(tv.format(), ValueFormat::Hex);
    assert_eq!(v("BIN", &[0xC3]).try_typed(), Ok(tv));
}
