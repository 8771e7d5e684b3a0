//! The REST API's writes as pure functions of a store: statuses, bodies and records as the
//! reference server's servlet gives them.

use base64ct::{Base64, Encoding};
use serde_json::{json, Value as Json};

use super::*;
use crate::wire::{AdminRecord, Permissions};

const ME: &str = "21.T1/USER";
const SECRET: &str = "rest-secret";

/// `0.NA/21.T1` lets `300:21.T1/USER` do everything; the user's handle holds its key;
/// `300:21.T1/OTHER` exists but administers nothing.
fn store() -> Store {
    let store = Store::new();
    let admin = |who: &str| {
        let rec = AdminRecord::new(0x0FFF, who.as_bytes().to_vec(), 300);
        HandleValue::new(100, "HS_ADMIN", rec.encode().unwrap())
    };
    let key = |secret: &str| {
        let mut k = HandleValue::new(300, "HS_SECKEY", secret.to_string());
        k.permissions = Permissions(0x0C);
        k
    };
    store.insert("0.NA/21.T1", vec![admin(ME)]);
    store.insert(ME, vec![admin(ME), key(SECRET)]);
    store.insert(
        "21.T1/OTHER",
        vec![admin("21.T1/OTHER"), key("other-secret")],
    );
    store.home_prefix("21.T1");
    store
}

fn basic(user: &str, secret: &str) -> Vec<u8> {
    let user = user.replace(':', "%3A");
    format!(
        "Basic {}",
        Base64::encode_string(format!("{user}:{secret}").as_bytes())
    )
    .into_bytes()
}

fn me() -> Vec<u8> {
    basic(&format!("300:{ME}"), SECRET)
}

fn send(
    store: &Store,
    method: &str,
    target: &str,
    auth: Option<&[u8]>,
    body: Option<Json>,
) -> HttpReply {
    let body = body
        .map(|b| serde_json::to_vec(&b).unwrap())
        .unwrap_or_default();
    respond(
        store,
        &Limits::default(),
        &RestWrite {
            method,
            target,
            content_type: Some("application/json"),
            authorization: auth,
            body: &body,
            credentials_allowed: true,
        },
    )
}

fn doc(reply: &HttpReply) -> Json {
    serde_json::from_slice(&reply.body).unwrap()
}

fn urls(store: &Store, handle: &str) -> Vec<(u32, String)> {
    let mut out: Vec<_> = store
        .get(handle)
        .map(|h| {
            h.values
                .iter()
                .filter(|v| !v.is_type("HS_ADMIN"))
                .map(|v| (v.index, String::from_utf8_lossy(&v.data).into_owned()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn values(entries: &[(u32, &str)]) -> Json {
    let mut all: Vec<Json> = entries
        .iter()
        .map(|(i, v)| json!({"index": i, "type": "URL", "data": v}))
        .collect();
    all.push(
        json!({"index": 100, "type": "HS_ADMIN", "data": {"format": "admin",
        "value": {"handle": ME, "index": 300, "permissions": "011111110011"}}}),
    );
    json!({ "values": all })
}

#[test]
fn put_creates_with_overwrite_by_default_and_201_without() {
    let s = store();
    let h = "21.T1/a";
    let r = send(
        &s,
        "PUT",
        "/api/handles/21.T1/a",
        Some(&me()),
        Some(values(&[(1, "u1")])),
    );
    assert_eq!(r.status, 200, "{:?}", doc(&r));
    assert_eq!(doc(&r), json!({"responseCode": 1, "handle": h}));
    assert_eq!(urls(&s, h), [(1, "u1".to_string())]);
    // Overwrite (the default) replaces the record; without it, 409.
    let r = send(
        &s,
        "PUT",
        "/api/handles/21.T1/a",
        Some(&me()),
        Some(values(&[(2, "u2")])),
    );
    assert_eq!(r.status, 200);
    assert_eq!(urls(&s, h), [(2, "u2".to_string())]);
    let target = "/api/handles/21.T1/a?overwrite=false";
    let r = send(&s, "PUT", target, Some(&me()), Some(values(&[(3, "u3")])));
    assert_eq!(r.status, 409);
    assert_eq!(doc(&r)["responseCode"], 101);
    let target = "/api/handles/21.T1/b?overwrite=false";
    let r = send(&s, "PUT", target, Some(&me()), Some(values(&[(1, "b")])));
    assert_eq!(
        (r.status, doc(&r)["handle"].clone()),
        (201, json!("21.T1/b"))
    );
    // One value alone, and a bare array, are bodies too.
    let one = json!({"index": 1, "type": "URL", "data": {"format": "string", "value": "c"}});
    let r = send(&s, "PUT", "/api/handles/21.T1/c", Some(&me()), Some(one));
    assert_eq!(r.status, 200);
    assert_eq!(urls(&s, "21.T1/c"), [(1, "c".to_string())]);
}

#[test]
fn mint_new_suffix_answers_the_minted_handle() {
    let s = store();
    let target = "/api/handles/21.T1/item-?mintNewSuffix=true&overwrite=false";
    let r = send(&s, "PUT", target, Some(&me()), Some(values(&[(1, "m")])));
    assert_eq!(r.status, 201);
    let minted = doc(&r)["handle"].as_str().unwrap().to_string();
    assert!(
        minted.starts_with("21.T1/item-") && minted.len() == 11 + 36,
        "{minted}"
    );
    assert_eq!(urls(&s, &minted), [(1, "m".to_string())]);
}

#[test]
fn put_with_index_adds_values_and_overwrites_only_when_asked() {
    let s = store();
    send(
        &s,
        "PUT",
        "/api/handles/21.T1/v",
        Some(&me()),
        Some(values(&[(1, "one")])),
    );
    let two = json!([{"index": 2, "type": "URL", "data": "two"}]);
    let target = "/api/handles/21.T1/v?index=2&overwrite=false";
    let r = send(&s, "PUT", target, Some(&me()), Some(two));
    assert_eq!((r.status, doc(&r)["responseCode"].clone()), (201, json!(1)));
    let again = json!([{"index": 1, "type": "URL", "data": "uno"}]);
    let target = "/api/handles/21.T1/v?index=1&overwrite=false";
    let r = send(&s, "PUT", target, Some(&me()), Some(again.clone()));
    assert_eq!(
        (r.status, doc(&r)["responseCode"].clone()),
        (409, json!(201))
    );
    let r = send(
        &s,
        "PUT",
        "/api/handles/21.T1/v?index=1",
        Some(&me()),
        Some(again),
    );
    assert_eq!(r.status, 200);
    let various = json!([{"index": 3, "type": "URL", "data": "three"}]);
    let target = "/api/handles/21.T1/v?index=various";
    assert_eq!(
        send(&s, "PUT", target, Some(&me()), Some(various)).status,
        200
    );
    assert_eq!(
        urls(&s, "21.T1/v"),
        [(1, "uno".into()), (2, "two".into()), (3, "three".into())]
    );
    // The indexes named must be the values'.
    let r = send(
        &s,
        "PUT",
        "/api/handles/21.T1/v?index=4",
        Some(&me()),
        Some(json!([{"index": 5, "type": "URL", "data": "x"}])),
    );
    assert_eq!((r.status, doc(&r)["responseCode"].clone()), (400, json!(4)));
    assert!(doc(&r).get("handle").is_none());
}

#[test]
fn delete_removes_a_handle_or_values() {
    let s = store();
    send(
        &s,
        "PUT",
        "/api/handles/21.T1/d",
        Some(&me()),
        Some(values(&[(1, "a"), (2, "b")])),
    );
    let r = send(
        &s,
        "DELETE",
        "/api/handles/21.T1/d?index=2",
        Some(&me()),
        None,
    );
    assert_eq!(
        (r.status, doc(&r)),
        (200, json!({"responseCode": 1, "handle": "21.T1/d"}))
    );
    assert_eq!(urls(&s, "21.T1/d"), [(1, "a".to_string())]);
    let r = send(
        &s,
        "DELETE",
        "/api/handles/21.T1/d?index=9",
        Some(&me()),
        None,
    );
    assert_eq!(
        (r.status, doc(&r)["responseCode"].clone()),
        (400, json!(200))
    );
    let r = send(&s, "DELETE", "/api/handles/21.T1/d", Some(&me()), None);
    assert_eq!(r.status, 200);
    assert!(s.get("21.T1/d").is_none());
    let r = send(&s, "DELETE", "/api/handles/21.T1/d", Some(&me()), None);
    assert_eq!(r.status, 404);
    assert_eq!(doc(&r), json!({"responseCode": 100, "handle": "21.T1/d"}));
}

#[test]
fn credentials_are_checked_as_the_reference_checks_them() {
    let s = store();
    let body = || Some(values(&[(1, "x")]));
    // A wrong secret: 401, no body, the Basic challenge.
    let wrong = basic(&format!("300:{ME}"), "wrong");
    let r = send(&s, "PUT", "/api/handles/21.T1/x", Some(&wrong), body());
    assert_eq!((r.status, r.body.len()), (401, 0));
    assert!(r
        .headers
        .contains(&("WWW-Authenticate", "Basic realm=\"handle\"".into())));
    // Another scheme (a Handle session the test server does not keep): 401 as well.
    let r = send(
        &s,
        "PUT",
        "/api/handles/21.T1/x",
        Some(b"Handle sessionId=\"1\""),
        body(),
    );
    assert_eq!(r.status, 401);
    // No credentials: the change is challenged (402 -> 401).
    let r = send(&s, "PUT", "/api/handles/21.T1/x", None, body());
    assert_eq!(
        (r.status, doc(&r)["responseCode"].clone()),
        (401, json!(402))
    );
    // An identity without an index is checked against every HS_SECKEY of its handle.
    let r = send(
        &s,
        "PUT",
        "/api/handles/21.T1/x",
        Some(&basic(ME, SECRET)),
        body(),
    );
    assert_eq!(r.status, 200);
    // A valid identity the prefix does not name: 400 INVALID_ADMIN -> 403.
    let other = basic("300:21.T1/OTHER", "other-secret");
    let r = send(&s, "PUT", "/api/handles/21.T1/y", Some(&other), body());
    assert_eq!(
        (r.status, doc(&r)["responseCode"].clone()),
        (403, json!(400))
    );
    assert!(s.get("21.T1/y").is_none());
    // Over plain HTTP from elsewhere the reference takes no credentials: 403.
    let bytes = serde_json::to_vec(&values(&[(1, "z")])).unwrap();
    let r = respond(
        &s,
        &Limits::default(),
        &RestWrite {
            method: "PUT",
            target: "/api/handles/21.T1/z",
            content_type: Some("application/json"),
            authorization: Some(&me()),
            body: &bytes,
            credentials_allowed: false,
        },
    );
    assert_eq!(
        (r.status, doc(&r)["responseCode"].clone()),
        (403, json!(402))
    );
    assert!(s.get("21.T1/z").is_none());
}

#[test]
fn unreadable_requests_are_400() {
    let s = store();
    let bytes = br#"{"values": []}"#;
    let mut w = RestWrite {
        method: "PUT",
        target: "/api/handles/21.T1/t",
        content_type: Some("text/plain"),
        authorization: None,
        body: bytes,
        credentials_allowed: true,
    };
    let r = respond(&s, &Limits::default(), &w);
    assert_eq!((r.status, doc(&r)["responseCode"].clone()), (400, json!(4)));
    w.content_type = Some("application/json; charset=UTF-8");
    w.body = b"{not json";
    assert_eq!(respond(&s, &Limits::default(), &w).status, 400);
    w.body = br#"{"handle": "21.T1/other", "values": []}"#;
    let r = respond(&s, &Limits::default(), &w);
    assert_eq!(doc(&r)["message"], "Mismatched handle in PUT request");
    w.body = br#"{"something": 1}"#;
    assert_eq!(doc(&respond(&s, &Limits::default(), &w))["responseCode"], 4);
    let r = send(
        &s,
        "DELETE",
        "/api/handles/21.T1/t?index=x",
        Some(&me()),
        None,
    );
    assert_eq!(r.status, 400);
    // A prefix the server does not serve: 301 -> 400, before any credentials are asked.
    let r = send(
        &s,
        "PUT",
        "/api/handles/99.9/t",
        None,
        Some(values(&[(1, "x")])),
    );
    assert_eq!(
        (r.status, doc(&r)["responseCode"].clone()),
        (400, json!(301))
    );
}
