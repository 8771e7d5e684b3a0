//! `Admin` over a server's HTTP interface (`ResolverBuilder::server_http`): every
//! administration request, its challenge answer and the session setup go as native messages
//! POSTed over HTTP (PROTOCOL.md §8.3), as the reference client sends them, to the loopback
//! test server's HTTP side, and nothing goes over UDP or TCP.

use std::sync::Arc;

use handle_resolver::auth::{Authenticator, SecretKey};
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::wire::{AdminRecord, HandleValue, Permissions};
use handle_resolver::{AdminError, CreateOptions, Resolver};

use super::loopback::urls;

const PREFIX: &str = "20.500.77";
const ME: &str = "300:0.NA/20.500.77";
const SECRET: &str = "http-admin-secret";

/// A server with an HTTP side whose store lets `ME` (HS_SECKEY) do everything under
/// `PREFIX`.
async fn server() -> TestServer {
    let store = Arc::new(Store::new());
    let prefix_handle = format!("0.NA/{PREFIX}");
    let admin = AdminRecord::new(0x0FFF, prefix_handle.as_bytes().to_vec(), 300);
    let mut key = HandleValue::new(300, "HS_SECKEY", SECRET);
    key.permissions = Permissions(0x0C);
    store.insert(
        &prefix_handle,
        vec![
            HandleValue::new(100, "HS_ADMIN", admin.encode().unwrap()),
            key,
        ],
    );
    let mut config = TestServerConfig::new(store);
    config.http = true;
    TestServer::start(config).await.unwrap()
}

fn over_http(server: &TestServer, secret: &str) -> Resolver {
    let me = Authenticator::secret_key(ME.parse().unwrap(), SecretKey::new(secret));
    Resolver::builder()
        .server_http(server.http_addr().unwrap(), None, false)
        .authenticator(me)
        .cache_size(0)
        .build()
        .unwrap()
}

fn owner() -> HandleValue {
    let rec = AdminRecord::new(0x0FFF, format!("0.NA/{PREFIX}").into_bytes(), 300);
    HandleValue::new(100, "HS_ADMIN", rec.encode().unwrap())
}

#[tokio::test]
async fn every_admin_request_goes_over_http_with_its_challenge_and_session() {
    let server = server().await;
    let r = over_http(&server, SECRET);
    let admin = r.admin();
    let h = format!("{PREFIX}/over-http");
    let created = admin
        .create_handle(
            &h,
            vec![owner(), HandleValue::new(1, "URL", "https://example.org/1")],
        )
        .await
        .unwrap();
    assert_eq!(created, h);
    admin
        .add_values(
            &h,
            vec![HandleValue::new(2, "URL", "https://example.org/2")],
        )
        .await
        .unwrap();
    admin
        .modify_values(
            &h,
            vec![HandleValue::new(1, "URL", "https://example.org/1b")],
        )
        .await
        .unwrap();
    assert_eq!(
        urls(&r, &h).await,
        ["https://example.org/1b", "https://example.org/2"]
    );
    admin.remove_values(&h, vec![1]).await.unwrap();
    assert_eq!(urls(&r, &h).await, ["https://example.org/2"]);
    let e = admin.create_handle(&h, vec![owner()]).await.unwrap_err();
    assert!(matches!(e, AdminError::AlreadyExists { .. }), "{e}");
    admin
        .create_handle_with(
            &h,
            vec![owner(), HandleValue::new(3, "URL", "https://example.org/3")],
            CreateOptions::new().overwrite(true),
        )
        .await
        .unwrap();
    assert_eq!(urls(&r, &h).await, ["https://example.org/3"]);
    let minted = admin
        .create_handle_with(
            &format!("{PREFIX}/m-"),
            vec![owner()],
            CreateOptions::new().mint(true),
        )
        .await
        .unwrap();
    assert!(
        minted.starts_with(&format!("{PREFIX}/m-")) && minted.len() > PREFIX.len() + 3,
        "{minted}"
    );
    admin.delete_handle(&h).await.unwrap();
    let e = admin.delete_handle(&h).await.unwrap_err();
    assert!(matches!(e, AdminError::NotFound { .. }), "{e}");
    // Everything went over HTTP, in a session set up over HTTP, each change challenged.
    assert_eq!((server.udp_requests(), server.tcp_requests()), (0, 0));
    assert!(server.http_requests() >= 10, "{}", server.http_requests());
    assert!(server.session_setups() >= 1);
    assert!(server.challenges() >= 1);
}

#[tokio::test]
async fn a_handle_list_comes_in_several_messages_of_one_http_body() {
    let server = server().await;
    for i in 0..120 {
        server.store().insert(
            format!("{PREFIX}/item-{i:03}"),
            vec![HandleValue::new(1, "URL", "https://example.org/")],
        );
    }
    let admin = over_http(&server, SECRET).admin();
    let mut listed = admin.list_handles(PREFIX).await.unwrap();
    listed.sort();
    // 120 handles are three messages of at most 50 (the reference server's chunks).
    assert_eq!(listed.len(), 120, "{listed:?}");
    assert_eq!(listed[0], format!("{PREFIX}/item-000"));
    assert_eq!(listed[119], format!("{PREFIX}/item-119"));
    assert_eq!(server.tcp_requests(), 0);
}

#[tokio::test]
async fn a_wrong_secret_fails_over_http_as_over_tcp() {
    let server = server().await;
    let admin = over_http(&server, "not-the-secret").admin();
    let e = admin
        .create_handle(&format!("{PREFIX}/refused"), vec![owner()])
        .await
        .unwrap_err();
    assert!(
        matches!(e, AdminError::AuthenticationFailed { .. }),
        "{e:?}"
    );
    assert!(server.store().get(format!("{PREFIX}/refused")).is_none());
    assert_eq!(server.tcp_requests(), 0);
}

/// One HTTP/1.1 request on a connection of its own; the status and the body.
async fn http(server: &TestServer, head: &str, body: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.http_addr().unwrap())
        .await
        .unwrap();
    let request = format!(
        "{head}\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_string();
    (status, body)
}

#[tokio::test]
async fn rest_writes_with_basic_credentials_change_what_native_reads_see() {
    let server = server().await;
    // `300:0.NA/20.500.77`, URL-encoded, and the secret (Basic over plain HTTP: loopback).
    let basic = {
        use base64ct::Encoding;
        base64ct::Base64::encode_string(format!("300%3A0.NA/{PREFIX}:{SECRET}").as_bytes())
    };
    let body = format!(
        r#"{{"values": [{{"index": 1, "type": "URL", "data": "https://example.org/rest"}},
            {{"index": 100, "type": "HS_ADMIN", "data": {{"format": "admin",
              "value": {{"handle": "0.NA/{PREFIX}", "index": 300, "permissions": "011111110011"}}}}}}]}}"#
    );
    let put = format!(
        "PUT /api/handles/{PREFIX}/rest?overwrite=false HTTP/1.1\r\nAuthorization: Basic {basic}"
    );
    let (status, answer) = http(&server, &put, &body).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&answer).unwrap(),
        serde_json::json!({"responseCode": 1, "handle": format!("{PREFIX}/rest")})
    );
    let r = over_http(&server, SECRET);
    assert_eq!(
        urls(&r, &format!("{PREFIX}/rest")).await,
        ["https://example.org/rest"]
    );
    let (status, _) = http(&server, &put, &body).await;
    assert_eq!(status, 409);
    let delete =
        format!("DELETE /api/handles/{PREFIX}/rest HTTP/1.1\r\nAuthorization: Basic {basic}");
    assert_eq!(http(&server, &delete, "").await.0, 200);
    assert!(server.store().get(format!("{PREFIX}/rest")).is_none());
    assert_eq!(http(&server, &delete, "").await.0, 404);
    // Without credentials the change is challenged, whatever the handle: 401.
    let anonymous = format!("DELETE /api/handles/{PREFIX}/rest HTTP/1.1");
    let (status, answer) = http(&server, &anonymous, "").await;
    assert_eq!(status, 401, "{answer}");
}

#[tokio::test]
async fn over_https_with_the_site_record_admin_goes_in_one_session() {
    use handle_resolver::testing::TestKey;
    use handle_resolver::transport::TransportKind;
    let store = Arc::new(Store::new());
    let mut config = TestServerConfig::new(store);
    config.key = TestKey::embedded_2048();
    config.https = true;
    let server = TestServer::start(config).await.unwrap();
    // The server is its own root and the prefix's service, its HS_SITE (with its key) in
    // 0.NA/PREFIX, beside the identity's key and HS_ADMIN.
    let prefix_handle = format!("0.NA/{PREFIX}");
    let mut key = HandleValue::new(300, "HS_SECKEY", SECRET);
    key.permissions = Permissions(0x0C);
    let admin = AdminRecord::new(0x0FFF, prefix_handle.as_bytes().to_vec(), 300);
    server.store().insert(
        &prefix_handle,
        vec![
            server.site_value(1),
            HandleValue::new(100, "HS_ADMIN", admin.encode().unwrap()),
            key,
        ],
    );
    let me = Authenticator::secret_key(ME.parse().unwrap(), SecretKey::new(SECRET));
    let r = Resolver::builder()
        .root_sites([server.site_info()])
        .transport_order([TransportKind::Https])
        .authenticator(me)
        .cache_size(0)
        .build()
        .unwrap();
    for i in 0..3 {
        r.admin()
            .create_handle(&format!("{PREFIX}/tls-{i}"), vec![owner()])
            .await
            .unwrap();
    }
    // The certificate is pinned to the site record's key, which also checks the session
    // setup: one session, one challenge for the three creates, nothing over UDP or TCP.
    assert_eq!((server.session_setups(), server.challenges()), (1, 1));
    assert_eq!((server.udp_requests(), server.tcp_requests()), (0, 0));
    assert!(server.store().get(format!("{PREFIX}/tls-2")).is_some());
}
