//! A server whose record leaves its HTTP interface out of the query interfaces (or out
//! altogether) refuses native requests over HTTP as the reference's `NativeServlet` refuses
//! them, while its REST API answers; `RestAdmin` writes through that REST API with Basic
//! credentials, as pyhandle does.

use std::sync::Arc;

use handle_resolver::auth::{Authenticator, SecretKey};
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::wire::{AdminRecord, HandleValue, InterfaceType, Permissions};
use handle_resolver::{Resolver, RestAdmin, RestAdminError};

use super::loopback::urls;

const PREFIX: &str = "20.500.78";
const ME: &str = "300:0.NA/20.500.78";
const SECRET: &str = "rest-admin-secret";

/// A server with an HTTP side listed as `kind` (or not at all), whose store lets `ME`
/// (HS_SECKEY) do everything under `PREFIX` and holds `PREFIX/read`.
async fn server(kind: Option<InterfaceType>) -> TestServer {
    let store = Arc::new(Store::new());
    let prefix_handle = format!("0.NA/{PREFIX}");
    let mut key = HandleValue::new(300, "HS_SECKEY", SECRET);
    key.permissions = Permissions(0x0C);
    store.insert(&prefix_handle, vec![owner(), key]);
    store.insert(
        format!("{PREFIX}/read"),
        vec![HandleValue::new(1, "URL", "https://example.org/read")],
    );
    let mut config = TestServerConfig::new(store);
    config.http = true;
    config.http_kind = kind;
    TestServer::start(config).await.unwrap()
}

fn owner() -> HandleValue {
    let rec = AdminRecord::new(0x0FFF, format!("0.NA/{PREFIX}").into_bytes(), 300);
    HandleValue::new(100, "HS_ADMIN", rec.encode().unwrap())
}

fn over_http(server: &TestServer) -> Resolver {
    let me = Authenticator::secret_key(ME.parse().unwrap(), SecretKey::new(SECRET));
    Resolver::builder()
        .server_http(server.http_addr().unwrap(), None, false)
        .authenticator(me)
        .cache_size(0)
        .build()
        .unwrap()
}

fn rest(server: &TestServer, secret: &str) -> RestAdmin {
    let url = format!("http://{}", server.http_addr().unwrap());
    RestAdmin::new(&url, ME, secret).unwrap()
}

#[tokio::test]
async fn an_http_interface_listed_for_admin_only_refuses_queries_as_the_reference() {
    let server = server(Some(InterfaceType::Admin)).await;
    let r = over_http(&server);
    let e = r.resolve(&format!("{PREFIX}/read")).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("Received query request on non-query interface"),
        "{e}"
    );
    // Administration over HTTP is still taken.
    let h = format!("{PREFIX}/admin-only");
    r.admin().create_handle(&h, vec![owner()]).await.unwrap();
    assert!(server.store().get(&h).is_some());
}

#[tokio::test]
async fn an_http_interface_left_out_of_the_record_refuses_admin_too() {
    let server = server(None).await;
    let r = over_http(&server);
    let e = r.resolve(&format!("{PREFIX}/read")).await.unwrap_err();
    assert!(e.to_string().contains("non-query interface"), "{e}");
    let e = r
        .admin()
        .create_handle(&format!("{PREFIX}/x"), vec![owner()])
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("Received admin request on non-admin interface"),
        "{e}"
    );
    // The same server listed for both takes both.
    let both = self::server(Some(InterfaceType::AdminAndQuery)).await;
    assert_eq!(
        urls(&over_http(&both), &format!("{PREFIX}/read")).await,
        ["https://example.org/read"]
    );
}

#[tokio::test]
async fn rest_admin_writes_as_pyhandle_and_reads_the_answers() {
    let server = server(None).await;
    let admin = rest(&server, SECRET);
    let h = format!("{PREFIX}/rest");
    let url = |i: u32, u: &str| HandleValue::new(i, "URL", u.to_string());
    let reply = admin
        .put_handle(&h, &[owner(), url(1, "https://example.org/1")], false)
        .await
        .unwrap();
    assert!(reply.is_success(), "{reply:?}");
    assert_eq!(
        (reply.status, reply.handle.as_deref()),
        (201, Some(h.as_str()))
    );
    // Again without overwrite: 409, HANDLE_ALREADY_EXISTS.
    let again = admin.put_handle(&h, &[owner()], false).await.unwrap();
    assert_eq!((again.status, again.response_code), (409, Some(101)));
    // Values at their indexes: added, then replaced with overwrite.
    let added = admin
        .put_values(&h, &[url(2, "https://example.org/2")], false)
        .await
        .unwrap();
    assert!(added.is_success(), "{added:?}");
    let replaced = admin
        .put_values(&h, &[url(1, "https://example.org/1b")], true)
        .await
        .unwrap();
    assert!(replaced.is_success(), "{replaced:?}");
    let stored = |i: u32| {
        server
            .store()
            .get(&h)
            .and_then(|rec| rec.values.iter().find(|v| v.index == i).cloned())
            .map(|v| String::from_utf8_lossy(&v.data).into_owned())
    };
    assert_eq!(stored(1).as_deref(), Some("https://example.org/1b"));
    assert_eq!(stored(2).as_deref(), Some("https://example.org/2"));
    let removed = admin.delete_values(&h, &[2]).await.unwrap();
    assert!(removed.is_success(), "{removed:?}");
    assert_eq!(stored(2), None);
    assert!(matches!(
        admin.delete_values(&h, &[]).await,
        Err(RestAdminError::NoIndexes { .. })
    ));
    // A wrong secret: 401, no body.
    let wrong = rest(&server, "wrong").delete_handle(&h).await.unwrap();
    assert_eq!((wrong.status, wrong.response_code), (401, None));
    let deleted = admin.delete_handle(&h).await.unwrap();
    assert!(deleted.is_success(), "{deleted:?}");
    let gone = admin.delete_handle(&h).await.unwrap();
    assert_eq!((gone.status, gone.response_code), (404, Some(100)));
    // Nothing went native.
    assert_eq!((server.udp_requests(), server.tcp_requests()), (0, 0));
}

#[tokio::test]
async fn rest_admin_failures_name_the_handle_and_url() {
    // Nobody listens on the port of a dropped server.
    let url = {
        let s = server(None).await;
        format!("http://{}", s.http_addr().unwrap())
    };
    let admin = RestAdmin::new(&url, ME, SECRET).unwrap();
    let e = admin
        .delete_handle(&format!("{PREFIX}/x"))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains(&format!("{PREFIX}/x")) && text.contains(&url),
        "{text}"
    );
}

#[tokio::test]
async fn rest_admin_reads_and_over_https_checks_the_certificate_unless_told_not_to() {
    let store = Arc::new(Store::new());
    let mut key = HandleValue::new(300, "HS_SECKEY", SECRET);
    key.permissions = Permissions(0x0C);
    store.insert(format!("0.NA/{PREFIX}"), vec![owner(), key]);
    store.insert(
        format!("{PREFIX}/read"),
        vec![HandleValue::new(1, "URL", "https://example.org/read")],
    );
    let mut config = TestServerConfig::new(store);
    config.key = handle_resolver::testing::TestKey::embedded_2048();
    config.https = true;
    config.http_kind = None;
    let server = TestServer::start(config).await.unwrap();
    let url = format!("https://127.0.0.1:{}", server.https_addr().unwrap().port());
    // The server's certificate is self-signed, as handle servers' are: refused by default.
    let checked = RestAdmin::anonymous(&url).unwrap();
    let e = checked
        .get_handle(&format!("{PREFIX}/read"), &[], &[], false)
        .await
        .unwrap_err();
    assert!(matches!(e, RestAdminError::Transport { .. }), "{e}");
    // pyhandle's HTTPS_verify=False.
    let admin = RestAdmin::new(&url, ME, SECRET).unwrap().verify_tls(false);
    let read = admin
        .get_handle(&format!("{PREFIX}/read"), &[1], &["URL"], true)
        .await
        .unwrap();
    assert!(read.is_success(), "{read:?}");
    assert!(
        read.url.ends_with("/read?index=1&type=URL&auth=true"),
        "{}",
        read.url
    );
    let doc = read.document.unwrap();
    assert_eq!(
        doc["values"][0]["data"]["value"],
        "https://example.org/read"
    );
    let missing = admin
        .get_handle(&format!("{PREFIX}/missing"), &[], &[], false)
        .await
        .unwrap();
    assert_eq!((missing.status, missing.response_code), (404, Some(100)));
    // Writes with credentials over HTTPS.
    let h = format!("{PREFIX}/over-https");
    let made = admin.put_handle(&h, &[owner()], false).await.unwrap();
    assert!(made.is_success(), "{made:?}");
    assert!(server.store().get(&h).is_some());
}
