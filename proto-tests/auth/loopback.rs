//! The whole flow on loopback: the test server holds the captures-auth records and
//! identities (`handles.json`), challenges, checks the answers `auth::Authenticator` builds,
//! and applies the admin operations with the codes the reference server answered in the
//! captures (SUMMARY.md): resolution of a non-public value with every kind of key, the
//! failures (403, 400), and create, add, modify, remove, overwrite, list, mint, delete.
//!
//! The resolvers here run without early loss detection: the tests count what the server
//! saw (setups, challenges, encrypted messages), and a query presumed lost on a loaded machine
//! and sent again would be counted twice.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use handle_resolver::auth::{Authenticator, Identity, PrivateKey, SecretKey};
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::{Exchange, NetTransport, TransportKind};
use handle_resolver::wire::json::values_from_json;
use handle_resolver::wire::{
    AdminRecord, Body, HandleValue, Limits, Message, OpCode, OpFlags, Permissions, ResponseCode,
};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::captures::auth_dir;
use crate::transport::{expiration, options};

const PROTECTED: &str = "20.500.12345/PROTECTED";

/// A server whose store is the captures' `handles.json` (case-insensitive, as configured).
pub(super) async fn server() -> TestServer {
    let store = Arc::new(Store::case_insensitive());
    let text = std::fs::read_to_string(auth_dir().join("handles.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    for (handle, record) in doc.as_object().unwrap() {
        let values = values_from_json(&record["values"], &Limits::default()).unwrap();
        store.insert(handle, values);
    }
    TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap()
}

fn identity(name: &str) -> Authenticator {
    let keys = auth_dir().join("keys");
    let seckey =
        |id: &str, s: &str| Authenticator::secret_key(id.parse().unwrap(), SecretKey::new(s));
    let key = |id: &str, file: &str| {
        Authenticator::private_key(
            id.parse::<Identity>().unwrap(),
            PrivateKey::from_file(keys.join(file)).unwrap(),
        )
    };
    match name {
        "seckey" => seckey("300:20.500.12345/USER-SECKEY", "public-test-secret-1"),
        "seckey_hashed" => Authenticator::secret_key(
            "301:20.500.12345/USER-SECKEY".parse().unwrap(),
            SecretKey::hashed("public-hashed-password-2"),
        ),
        "seckey_nonascii" => seckey("302:20.500.12345/USER-SECKEY", "grüße-päss-ß-3"),
        "seckey_wrong" => seckey("300:20.500.12345/USER-SECKEY", "public-WRONG-secret"),
        "norights" => seckey("300:20.500.12345/USER-NORIGHTS", "public-norights-secret-4"),
        "ghost" => seckey("300:20.500.12345/USER-GHOST", "public-ghost-secret-5"),
        "unknown" => seckey("300:20.500.12345/NO-SUCH-USER", "public-unknown-secret-6"),
        "rsa" => key("300:20.500.12345/USER-RSA", "rsa_privkey.bin"),
        "rsa_pem" => key("300:20.500.12345/USER-RSA", "rsa_priv.pem"),
        "rsa_wrongkey" => key("300:20.500.12345/USER-RSA", "rsa_wrongkey_privkey.bin"),
        "dsa" => key("300:20.500.12345/USER-DSA", "dsa_priv.pem"),
        "dsa1024" => key("300:20.500.12345/USER-DSA1024", "dsa1024_privkey.bin"),
        other => panic!("{other}"),
    }
}

/// Every message the server writes on one TCP connection for `request` (it closes after).
async fn tcp(addr: SocketAddr, request: &Message) -> Vec<Message> {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(&request.encode().unwrap()).await.unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).await.unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at + 20 <= all.len() {
        let len =
            u32::from_be_bytes([all[at + 16], all[at + 17], all[at + 18], all[at + 19]]) as usize;
        let frame = Bytes::copy_from_slice(&all[at..at + 20 + len]);
        out.push(Message::decode(frame, &Limits::default()).unwrap());
        at += 20 + len;
    }
    assert_eq!(at, all.len(), "stray bytes after the last message");
    out
}

async fn udp(addr: SocketAddr, request: &Message) -> Vec<Message> {
    let answer = NetTransport::new()
        .exchange(addr, TransportKind::Udp, request, &options(&[2000]))
        .await
        .unwrap();
    vec![answer.message]
}

async fn send(addr: SocketAddr, kind: TransportKind, request: &Message) -> Vec<Message> {
    match kind {
        TransportKind::Tcp => tcp(addr, request).await,
        _ => udp(addr, request).await,
    }
}

/// Sends `request`; answers a 402 once as `auth` (a new connection, a new request id) and
/// returns the final messages with the challenge, if there was one.
async fn authenticated(
    addr: SocketAddr,
    kind: TransportKind,
    auth: &Authenticator,
    request: &Message,
) -> (Option<Message>, Vec<Message>) {
    let first = send(addr, kind, request).await;
    if first[0].header.response_code != ResponseCode::AuthenticationNeeded {
        return (None, first);
    }
    let challenge = first.into_iter().next().unwrap();
    let answer = auth
        .answer(
            &challenge,
            request,
            rand::random(),
            request.header.expiration,
        )
        .unwrap();
    (Some(challenge), send(addr, kind, &answer).await)
}

fn resolution(handle: &str) -> Message {
    let mut m = Message::resolution_request(
        handle.to_string(),
        vec![],
        vec![],
        rand::random(),
        expiration(),
    );
    m.header.flags.set(OpFlags::PO, false);
    m
}

fn admin(op: OpCode, body: Body) -> Message {
    Message::request(body, op, rand::random(), expiration())
}

fn b(s: &str) -> Bytes {
    Bytes::from(s.to_string())
}

#[tokio::test]
async fn non_public_values_are_read_with_every_kind_of_key_and_refused_otherwise() {
    let server = server().await;
    let addr = server.addr();
    // Without authentication: the 402, with the digest of our request and a session id.
    let req = resolution(PROTECTED);
    let first = udp(addr, &req).await;
    let c = &first[0];
    assert_eq!(c.header.response_code, ResponseCode::AuthenticationNeeded);
    assert!(c.header.flags.contains(OpFlags::RD));
    assert!(c
        .request_digest
        .as_ref()
        .unwrap()
        .matches(&req.header_and_body().unwrap()));
    assert_ne!(c.envelope.session_id, 0);

    for (name, kind) in [
        ("seckey", TransportKind::Udp),
        ("seckey", TransportKind::Tcp),
        ("seckey_hashed", TransportKind::Udp),
        ("seckey_nonascii", TransportKind::Tcp),
        ("rsa", TransportKind::Udp),
        ("rsa_pem", TransportKind::Tcp),
        ("dsa", TransportKind::Udp),
        ("dsa1024", TransportKind::Tcp),
    ] {
        let req = resolution(PROTECTED);
        let (challenge, answers) = authenticated(addr, kind, &identity(name), &req).await;
        assert!(challenge.is_some(), "{name}");
        let m = &answers[0];
        assert_eq!(
            m.header.response_code,
            ResponseCode::Success,
            "{name} {kind:?}"
        );
        let Body::ResolutionResponse(r) = &m.body else {
            panic!("{name}")
        };
        // Index 2 (EMAIL) is admin-read only: there now.
        let email = r.values.iter().find(|v| v.index == 2).unwrap();
        assert!(!email.permissions.public_read());
        assert_eq!(&email.data[..], b"restricted-public@example.org");
    }
    for (name, code) in [
        ("seckey_wrong", ResponseCode::AuthenticationFailed),
        ("rsa_wrongkey", ResponseCode::AuthenticationFailed),
        ("ghost", ResponseCode::AuthenticationFailed),
        ("norights", ResponseCode::InvalidAdmin),
        ("unknown", ResponseCode::InvalidAdmin),
    ] {
        let (_, answers) = authenticated(
            addr,
            TransportKind::Udp,
            &identity(name),
            &resolution(PROTECTED),
        )
        .await;
        assert_eq!(answers[0].header.response_code, code, "{name}");
    }
}

#[tokio::test]
async fn an_answer_counts_once_and_only_for_its_session() {
    let server = server().await;
    let addr = server.addr();
    let req = resolution(PROTECTED);
    let challenge = udp(addr, &req).await.remove(0);
    let answer = identity("seckey")
        .answer(&challenge, &req, rand::random(), req.header.expiration)
        .unwrap();
    assert_eq!(
        udp(addr, &answer).await[0].header.response_code,
        ResponseCode::Success
    );
    // Replayed: the challenge is spent.
    assert_eq!(
        udp(addr, &answer).await[0].header.response_code,
        ResponseCode::AuthenTimeout
    );
}

fn admin_value(index: u32, who: &str, who_index: u32) -> HandleValue {
    let rec = AdminRecord::new(0x0FFF, b(who), who_index);
    HandleValue::new(index, "HS_ADMIN", rec.encode().unwrap())
}

async fn admin_flow(name: &str, user: &str) {
    let server = server().await;
    let addr = server.addr();
    let auth = identity(name);
    let tcp_auth = |m: Message| {
        let auth = auth.clone();
        async move { authenticated(addr, TransportKind::Tcp, &auth, &m).await }
    };
    let handle = format!("20.500.12345/ADMIN-TEST-{}", name.to_uppercase());
    let mut email = HandleValue::new(2, "EMAIL", "admin@example.org");
    email.permissions = Permissions(0x0C);
    let create = admin(
        OpCode::CreateHandle,
        Body::CreateHandleRequest {
            handle: b(&handle),
            values: vec![
                HandleValue::new(1, "URL", "https://example.org/v1"),
                email,
                admin_value(100, user, 300),
            ],
        },
    );
    let (c, r) = tcp_auth(create.clone()).await;
    assert!(c.is_some());
    assert_eq!(r[0].header.response_code, ResponseCode::Success);
    assert_eq!(r[0].body, Body::CreateHandleResponse { handle: b(&handle) });
    // Create again: 101 at once, no challenge.
    let (c, r) = tcp_auth(create.clone()).await;
    assert!(c.is_none());
    assert_eq!(r[0].header.response_code, ResponseCode::HandleAlreadyExists);
    // Add 3 and 4; 3 again: 201 "Index conflict for 3".
    let add = |values| {
        admin(
            OpCode::AddValue,
            Body::AddValueRequest {
                handle: b(&handle),
                values,
            },
        )
    };
    let (_, r) = tcp_auth(add(vec![
        HandleValue::new(3, "DESC", "added"),
        HandleValue::new(4, "URL", "https://example.org/v4"),
    ]))
    .await;
    assert_eq!(r[0].header.response_code, ResponseCode::Success);
    let (_, r) = tcp_auth(add(vec![HandleValue::new(3, "DESC", "again")])).await;
    assert_eq!(r[0].header.response_code, ResponseCode::ValueAlreadyExists);
    assert_eq!(
        r[0].body,
        Body::Error(handle_resolver::wire::ErrorBody::new(
            &b"Index conflict for 3"[..]
        ))
    );
    // Modify 1; remove 4; remove 99: 200.
    let (_, r) = tcp_auth(admin(
        OpCode::ModifyValue,
        Body::ModifyValueRequest {
            handle: b(&handle),
            values: vec![HandleValue::new(
                1,
                "URL",
                "https://example.org/v1-modified",
            )],
        },
    ))
    .await;
    assert_eq!(r[0].header.response_code, ResponseCode::Success);
    let remove = |i| {
        admin(
            OpCode::RemoveValue,
            Body::RemoveValueRequest {
                handle: b(&handle),
                indexes: vec![i],
            },
        )
    };
    assert_eq!(
        tcp_auth(remove(4)).await.1[0].header.response_code,
        ResponseCode::Success
    );
    assert_eq!(
        tcp_auth(remove(99)).await.1[0].header.response_code,
        ResponseCode::ValuesNotFound
    );
    // The record now, non-public value included.
    let (_, r) = tcp_auth(resolution(&handle)).await;
    let Body::ResolutionResponse(rec) = &r[0].body else {
        panic!("{:?}", r[0])
    };
    let indexes: Vec<u32> = rec.values.iter().map(|v| v.index).collect();
    assert_eq!(indexes, [1, 2, 100, 3]);
    assert_eq!(&rec.values[0].data[..], b"https://example.org/v1-modified");
    // Overwrite: replaced, OVRW echoed.
    let mut over = create.clone();
    over.header.flags.set(OpFlags::OW, true);
    if let Body::CreateHandleRequest { values, .. } = &mut over.body {
        values.retain(|v| v.index != 2);
    }
    let (c, r) = tcp_auth(over).await;
    assert!(c.is_some_and(|c| !c.header.flags.contains(OpFlags::OW)));
    assert_eq!(r[0].header.response_code, ResponseCode::Success);
    assert!(r[0].header.flags.contains(OpFlags::OW));
    assert_eq!(server.store().get(&handle).unwrap().values.len(), 2);
    // List: more than one message of at most 50, CN on all but the last.
    let (_, r) = tcp_auth(admin(
        OpCode::ListHandles,
        Body::ListHandlesRequest {
            handle: b("0.NA/20.500.12345"),
        },
    ))
    .await;
    assert!(r.len() >= 2);
    let mut listed = Vec::new();
    for (i, m) in r.iter().enumerate() {
        assert_eq!(m.header.flags.contains(OpFlags::CN), i + 1 < r.len());
        let Body::ListHandlesResponse { handles } = &m.body else {
            panic!()
        };
        assert!(handles.len() <= 50);
        listed.extend(handles.iter().cloned());
    }
    assert_eq!(listed, server.store().handles_under("20.500.12345"));
    assert!(listed.iter().any(|h| h.as_ref() == handle.as_bytes()));
    // Mint: the initial part and a lower-case UUID; MINT echoed.
    let mut mint = create.clone();
    mint.header.flags.set(OpFlags::MINT, true);
    if let Body::CreateHandleRequest { handle: h, .. } = &mut mint.body {
        *h = b("20.500.12345/MINTED-");
    }
    let (_, r) = tcp_auth(mint).await;
    assert!(r[0].header.flags.contains(OpFlags::MINT));
    let Body::CreateHandleResponse { handle: minted } = &r[0].body else {
        panic!()
    };
    let suffix = std::str::from_utf8(&minted[b"20.500.12345/MINTED-".len()..]).unwrap();
    assert_eq!(
        uuid::Uuid::parse_str(suffix)
            .unwrap()
            .hyphenated()
            .to_string(),
        suffix
    );
    // Delete; delete again: 100.
    let delete = admin(
        OpCode::DeleteHandle,
        Body::DeleteHandleRequest { handle: b(&handle) },
    );
    assert_eq!(
        tcp_auth(delete.clone()).await.1[0].header.response_code,
        ResponseCode::Success
    );
    assert_eq!(
        tcp_auth(delete).await.1[0].header.response_code,
        ResponseCode::HandleNotFound
    );
    assert!(server.store().get(&handle).is_none());
}

#[tokio::test]
async fn a_prefix_admin_with_a_secret_key_administers_handles() {
    admin_flow("seckey", "20.500.12345/USER-SECKEY").await;
}

#[tokio::test]
async fn a_prefix_admin_with_an_rsa_key_administers_handles() {
    admin_flow("rsa", "20.500.12345/USER-RSA").await;
}

#[tokio::test]
async fn admin_requests_need_rights() {
    let server = server().await;
    let addr = server.addr();
    let create = admin(
        OpCode::CreateHandle,
        Body::CreateHandleRequest {
            handle: b("20.500.12345/NOT-MINE"),
            values: vec![HandleValue::new(1, "URL", "https://example.org/")],
        },
    );
    // dsa administers 20.500.12345/PROTECTED only, not the prefix: 400.
    let (_, r) = authenticated(addr, TransportKind::Tcp, &identity("dsa"), &create).await;
    assert_eq!(r[0].header.response_code, ResponseCode::InvalidAdmin);
    // A wrong secret for a prefix admin: 403, nothing created.
    let (_, r) = authenticated(addr, TransportKind::Tcp, &identity("seckey_wrong"), &create).await;
    assert_eq!(
        r[0].header.response_code,
        ResponseCode::AuthenticationFailed
    );
    assert!(server.store().get("20.500.12345/NOT-MINE").is_none());
    // An identity whose HS_ADMIN value lacks the permission: 400, as the reference answers
    // it (its `authenticateUser` gives INVALID_ADMIN for a missing permission too).
    let limited = "20.500.12345/LIMITED";
    let rec = AdminRecord::new(0x0400, b("20.500.12345/USER-NORIGHTS"), 300);
    server.store().insert(
        limited,
        vec![
            HandleValue::new(1, "URL", "https://example.org/"),
            HandleValue::new(100, "HS_ADMIN", rec.encode().unwrap()),
        ],
    );
    let delete = admin(
        OpCode::DeleteHandle,
        Body::DeleteHandleRequest { handle: b(limited) },
    );
    let (_, r) = authenticated(addr, TransportKind::Tcp, &identity("norights"), &delete).await;
    assert_eq!(r[0].header.response_code, ResponseCode::InvalidAdmin);
    assert!(server.store().get(limited).is_some());
    // A prefix administrator creates a handle without an HS_ADMIN of its own, then may not
    // change it: the prefix's HS_ADMIN values decide creates and lists only (the reference's
    // `getNAAdminValues`), every other change the handle's own: 400, nothing deleted.
    let orphan = "20.500.12345/ORPHAN";
    let create = admin(
        OpCode::CreateHandle,
        Body::CreateHandleRequest {
            handle: b(orphan),
            values: vec![HandleValue::new(1, "URL", "https://example.org/")],
        },
    );
    let (_, r) = authenticated(addr, TransportKind::Tcp, &identity("seckey"), &create).await;
    assert_eq!(r[0].header.response_code, ResponseCode::Success);
    let delete = admin(
        OpCode::DeleteHandle,
        Body::DeleteHandleRequest { handle: b(orphan) },
    );
    let (_, r) = authenticated(addr, TransportKind::Tcp, &identity("seckey"), &delete).await;
    assert_eq!(r[0].header.response_code, ResponseCode::InvalidAdmin);
    assert!(server.store().get(orphan).is_some());
}

#[tokio::test]
async fn a_certified_list_comes_in_messages_each_signed() {
    let server = server().await;
    let mut list = admin(
        OpCode::ListHandles,
        Body::ListHandlesRequest {
            handle: b("0.NA/20.500.12345"),
        },
    );
    list.header.flags.set(OpFlags::CT, true);
    let (_, r) = authenticated(
        server.addr(),
        TransportKind::Tcp,
        &identity("seckey"),
        &list,
    )
    .await;
    assert!(r.len() >= 2);
    let key = handle_resolver::wire::PublicKey::decode(&server.key().hs_pubkey()).unwrap();
    for m in &r {
        assert_eq!(
            handle_resolver::wire::verify_message(m, &key).map_err(|e| e.to_string()),
            Ok(())
        );
    }
}

/// The resolver answers challenges itself: with an identity on the builder, a query that
/// clears public-only gets the non-public values over UDP and TCP; without one, or with a
/// wrong secret, it gets the typed failure.
#[tokio::test]
async fn the_resolver_answers_challenges_as_its_identity() {
    use handle_resolver::{Query, ResolveError, Resolver, TransportPreference};
    let server = server().await;
    let all = Query::new().public_only(false);
    for (name, transport) in [
        ("seckey", TransportPreference::Udp),
        ("rsa", TransportPreference::Tcp),
        ("dsa", TransportPreference::Udp),
    ] {
        let r = Resolver::builder()
            .loss_detection(false)
            .server(server.addr())
            .transport(transport)
            .authenticator(identity(name))
            .build()
            .unwrap();
        let rec = r.resolve_with(PROTECTED, &all).await.unwrap();
        let email = rec.values.iter().find(|v| v.index == 2).unwrap();
        assert!(!email.permissions.public_read(), "{name}");
        assert_eq!(&email.data[..], b"restricted-public@example.org");
    }
    let anonymous = Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .build()
        .unwrap();
    let e = anonymous.resolve_with(PROTECTED, &all).await.unwrap_err();
    assert!(
        matches!(e, ResolveError::AuthenticationNeeded { .. }),
        "{e}"
    );
    let wrong = Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .authenticator(identity("seckey_wrong"))
        .build()
        .unwrap();
    let e = wrong.resolve_with(PROTECTED, &all).await.unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Server {
                code: ResponseCode::AuthenticationFailed,
                ..
            }
        ),
        "{e}"
    );
}

/// The same administration through the resolver's `Admin`: the request goes to the prefix's
/// primary site over TCP, the challenge is answered as the resolver's identity, and every
/// outcome is typed.
#[tokio::test]
async fn the_resolver_administers_handles_as_its_identity() {
    use handle_resolver::{AdminError, Query, Resolver};
    let server = server().await;
    let r = Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .authenticator(identity("seckey"))
        .build()
        .unwrap();
    let admin = r.admin();
    let handle = "20.500.12345/VIA-RESOLVER";
    let values = vec![
        HandleValue::new(1, "URL", "https://example.org/v1"),
        admin_value(100, "20.500.12345/USER-SECKEY", 300),
    ];
    assert_eq!(
        admin.create_handle(handle, values.clone()).await.unwrap(),
        handle
    );
    let e = admin.create_handle(handle, values).await.unwrap_err();
    assert!(matches!(e, AdminError::AlreadyExists { .. }), "{e}");
    admin
        .add_values(handle, vec![HandleValue::new(3, "DESC", "added")])
        .await
        .unwrap();
    let e = admin
        .add_values(handle, vec![HandleValue::new(3, "DESC", "again")])
        .await
        .unwrap_err();
    assert!(matches!(e, AdminError::ValueExists { .. }), "{e}");
    admin
        .modify_values(
            handle,
            vec![HandleValue::new(1, "URL", "https://example.org/v2")],
        )
        .await
        .unwrap();
    let e = admin.remove_values(handle, vec![99]).await.unwrap_err();
    assert!(matches!(e, AdminError::NoSuchValues { .. }), "{e}");
    admin.remove_values(handle, vec![3]).await.unwrap();
    let rec = r
        .resolve_with(handle, &Query::new().public_only(false))
        .await
        .unwrap();
    let indexes: Vec<u32> = rec.values.iter().map(|v| v.index).collect();
    assert_eq!(indexes, [1, 100]);
    assert_eq!(&rec.values[0].data[..], b"https://example.org/v2");
    // The list comes in several messages; all of them are read.
    let listed = admin.list_handles("20.500.12345").await.unwrap();
    let expected: Vec<String> = server
        .store()
        .handles_under("20.500.12345")
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    assert!(expected.len() > 50, "{}", expected.len());
    assert_eq!(listed, expected);
    admin.delete_handle(handle).await.unwrap();
    let e = admin.delete_handle(handle).await.unwrap_err();
    assert!(matches!(e, AdminError::NotFound { .. }), "{e}");
    // No identity: the challenge cannot be answered; a DSA identity without rights: 400.
    let anonymous = Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .build()
        .unwrap();
    let e = anonymous
        .admin()
        .delete_handle("20.500.12345/PROTECTED")
        .await
        .unwrap_err();
    assert!(matches!(e, AdminError::AuthenticationNeeded { .. }), "{e}");
    let dsa = Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .authenticator(identity("dsa"))
        .build()
        .unwrap();
    let e = dsa
        .admin()
        .create_handle("20.500.12345/NOT-MINE", vec![])
        .await
        .unwrap_err();
    assert!(matches!(e, AdminError::NotPermitted { .. }), "{e}");
    // Over UDP went only the one resolution above: administration never does.
    assert_eq!(server.udp_requests(), 1);
}

/// A resolver that finds the captures' prefix at this test server: the prefix handle's
/// HS_SITE names the server (with its key), and the server is the root.
fn resolver_at(server: &TestServer, name: &str, sessions: bool) -> handle_resolver::Resolver {
    builder_at(server, name, sessions).build().unwrap()
}

/// The builder of [`resolver_at`].
pub(super) fn builder_at(
    server: &TestServer,
    name: &str,
    sessions: bool,
) -> handle_resolver::ResolverBuilder {
    let mut values = server
        .store()
        .get(b"0.NA/20.500.12345")
        .unwrap()
        .values
        .clone();
    for v in values.iter_mut().filter(|v| v.is_type("HS_SITE")) {
        v.data = server.site_value(v.index).data;
    }
    server.store().insert("0.NA/20.500.12345", values);
    handle_resolver::Resolver::builder()
        .loss_detection(false)
        .root_sites([server.site_info()])
        .authenticator(identity(name))
        .sessions(sessions)
        // Every call sends its own request (with the cache on, identical calls made at the
        // same time would share one).
        .cache_size(0)
}

/// Sessions, as the reference client's default: one setup per server, the first request
/// challenged, the next ones not; a non-public value comes back encrypted and is read; a
/// server that forgot the session (500) gets a new one; with sessions off every request is
/// challenged.
#[tokio::test]
async fn requests_in_a_session_are_challenged_once() {
    use handle_resolver::Query;
    for name in ["seckey", "rsa"] {
        let server = server().await;
        let r = resolver_at(&server, name, true);
        let admin = r.admin();
        let handle = format!("20.500.12345/SESSION-LOOP-{name}");
        let values = vec![
            HandleValue::new(1, "URL", "https://example.org/s"),
            {
                let mut v = HandleValue::new(2, "DESC", "not for the public");
                v.permissions = Permissions(Permissions::ADMIN_READ | Permissions::ADMIN_WRITE);
                v
            },
            admin_value(
                100,
                &format!("20.500.12345/USER-{}", name.to_uppercase()),
                300,
            ),
        ];
        admin.create_handle(&handle, values).await.unwrap();
        // The create carried a non-public value: it went encrypted.
        assert_eq!(server.encrypted_requests(), 1, "{name}");
        assert_eq!(
            (server.session_setups(), server.challenges()),
            (1, 1),
            "{name}"
        );
        admin
            .add_values(&handle, vec![HandleValue::new(3, "DESC", "more")])
            .await
            .unwrap();
        // The non-public value, over the same server's UDP side, in the session: no
        // challenge, and the answer travelled encrypted.
        let rec = r
            .resolve_with(&handle, &Query::new().public_only(false))
            .await
            .unwrap();
        let secret = rec.values.iter().find(|v| v.index == 2).unwrap();
        assert_eq!(&secret.data[..], b"not for the public");
        assert_eq!(
            (server.session_setups(), server.challenges()),
            (1, 1),
            "{name}"
        );
        assert_eq!(server.encrypted_answers(), 1, "{name}");
        // The server restarts its sessions: a new one, challenged once more.
        server.forget_sessions();
        admin.delete_handle(&handle).await.unwrap();
        assert_eq!(
            (server.session_setups(), server.challenges()),
            (2, 2),
            "{name}"
        );
        assert!(server.store().get(handle.as_bytes()).is_none());
    }
    // Sessions off: each request is challenged on its own.
    let server = server().await;
    let r = resolver_at(&server, "seckey", false);
    let handle = "20.500.12345/NO-SESSION";
    r.admin()
        .create_handle(
            handle,
            vec![admin_value(100, "20.500.12345/USER-SECKEY", 300)],
        )
        .await
        .unwrap();
    r.admin().delete_handle(handle).await.unwrap();
    assert_eq!((server.session_setups(), server.challenges()), (0, 2));
}

/// A setup answer signed by another key than the one the site record names is not trusted:
/// no session, requests challenged one by one, and they succeed.
#[tokio::test]
async fn no_session_when_the_setup_answer_is_not_signed_by_the_sites_key() {
    let server = server().await;
    let mut site = server.site_info();
    let other = std::fs::read(auth_dir().join("keys/server_pubkey.bin")).unwrap();
    for s in site.servers.iter_mut() {
        s.public_key = other.clone().into();
    }
    let encoded = site.encode().unwrap();
    let mut values = server
        .store()
        .get(b"0.NA/20.500.12345")
        .unwrap()
        .values
        .clone();
    for v in values.iter_mut().filter(|v| v.is_type("HS_SITE")) {
        v.data = encoded.clone();
    }
    server.store().insert("0.NA/20.500.12345", values);
    let r = handle_resolver::Resolver::builder()
        .loss_detection(false)
        .root_sites([server.site_info()])
        .authenticator(identity("seckey"))
        .build()
        .unwrap();
    let handle = "20.500.12345/WRONG-KEY";
    r.admin()
        .create_handle(
            handle,
            vec![admin_value(100, "20.500.12345/USER-SECKEY", 300)],
        )
        .await
        .unwrap();
    r.admin().delete_handle(handle).await.unwrap();
    assert_eq!((server.session_setups(), server.challenges()), (1, 2));
    assert_eq!(server.encrypted_requests(), 0);
}

/// Without the server's key (a `--server` without a site record) the setup answer cannot be
/// verified, so no session is used: requests are challenged one by one and still succeed.
#[tokio::test]
async fn no_session_without_the_servers_key() {
    let server = server().await;
    let r = handle_resolver::Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .authenticator(identity("seckey"))
        .build()
        .unwrap();
    let handle = "20.500.12345/UNVERIFIED";
    r.admin()
        .create_handle(
            handle,
            vec![admin_value(100, "20.500.12345/USER-SECKEY", 300)],
        )
        .await
        .unwrap();
    r.admin().delete_handle(handle).await.unwrap();
    // One setup was answered (and not trusted); then none again for a while.
    assert_eq!((server.session_setups(), server.challenges()), (1, 2));
}

/// Many resolutions of a non-public value at once, as the reference client does them: each
/// is challenged outside a session (left unanswered), then sent again in the one session,
/// set up once, whose first request is challenged and authenticates it; the others wait for
/// that and are not challenged. Once it is authenticated, later resolutions go in it from
/// the start. A record with nothing restricted is never challenged and opens no session.
#[tokio::test]
async fn concurrent_requests_share_one_session() {
    use handle_resolver::Query;
    let all = Query::new().public_only(false);
    let server = server().await;
    let r = resolver_at(&server, "seckey", true);
    r.resolve_with("20.500.12345/USER-RSA", &all).await.unwrap();
    assert_eq!((server.session_setups(), server.challenges()), (0, 0));
    let reads = (0..8).map(|_| r.resolve_with(PROTECTED, &all));
    for rec in futures::future::join_all(reads).await {
        assert_eq!(rec.unwrap().values.len(), 10);
    }
    assert_eq!((server.session_setups(), server.challenges()), (1, 8 + 1));
    let reads = (0..8).map(|_| r.resolve_with(PROTECTED, &all));
    for rec in futures::future::join_all(reads).await {
        assert_eq!(rec.unwrap().values.len(), 10);
    }
    assert_eq!((server.session_setups(), server.challenges()), (1, 9));
    // Every answer with the non-public value travelled encrypted.
    assert_eq!(server.encrypted_answers(), 16);
    // The trace names the session.
    let (rec, attempts) = r.resolve_traced(PROTECTED, &all).await;
    rec.unwrap();
    let last = attempts.last().unwrap();
    assert!(last.session.is_some_and(|id| id > 0), "{last}");
    assert!(last.to_string().contains(" in session "), "{last}");
}

/// The URL values of `handle` as `r` resolves them (not public-only: what an administrator
/// sees).
pub(super) async fn urls(r: &handle_resolver::Resolver, handle: &str) -> Vec<String> {
    let rec = r
        .resolve_with(handle, &handle_resolver::Query::new().public_only(false))
        .await
        .unwrap();
    rec.values
        .iter()
        .filter(|v| v.is_type("URL"))
        .map(|v| String::from_utf8_lossy(&v.data).into_owned())
        .collect()
}
