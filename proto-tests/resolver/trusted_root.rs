//! The verified root refresh end to end on loopback: the test server holds root records it
//! signed itself (`0.0/0.0` self-signed, `0.NA/0.NA` certified by it), the resolver trusts
//! that root key; a refresh takes the signed root, refuses a tampered one (keeping the old),
//! and writes the verified records to a file the builder reads back.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use handle_resolver::testing::{
    Store, TestServer, TestServerConfig, TEST_KEY_2048_DER, TEST_KEY_DER,
};
use handle_resolver::trust::{
    issue_certificate, sign_values, Permission, SigningKey, TrustRoot, Validity, ValueId,
};
use handle_resolver::wire::{HandleValue, SiteInfo};
use handle_resolver::{ResolveError, Resolver};
use rsa::pkcs1::DecodeRsaPrivateKey;

fn key(der: &[u8]) -> SigningKey {
    SigningKey::Rsa(Box::new(rsa::RsaPrivateKey::from_pkcs1_der(der).unwrap()))
}

fn valid() -> Validity {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    Validity {
        from: now - 3600,
        until: now + 3600,
    }
}

/// `0.0/0.0` and `0.NA/0.NA` as a root of one's own signs them; `site` is what 0.NA/0.NA
/// names.
fn signed_root(
    site: &HandleValue,
    root: &SigningKey,
    service: &SigningKey,
) -> Vec<(String, Vec<HandleValue>)> {
    let root_id = ValueId::new("0.0/0.0", 301);
    let root_cert = issue_certificate(
        &root_id,
        &root.public_key(),
        vec![Permission::everything()],
        &root_id,
        root,
        valid(),
    )
    .unwrap();
    let mut trust = vec![
        HandleValue::new(301, "HS_PUBKEY", root.public_key().encode().unwrap()),
        HandleValue::new(400, "HS_CERT", root_cert),
    ];
    let jws = sign_values("0.0/0.0", &trust, &root_id, root, valid()).unwrap();
    trust.push(HandleValue::new(401, "HS_SIGNATURE", jws));

    let service_id = ValueId::new("0.NA/0.NA", 300);
    let service_cert = issue_certificate(
        &service_id,
        &service.public_key(),
        vec![Permission::everything()],
        &root_id,
        root,
        valid(),
    )
    .unwrap();
    let mut na = vec![
        site.clone(),
        HandleValue::new(300, "HS_PUBKEY", service.public_key().encode().unwrap()),
        HandleValue::new(400, "HS_CERT", service_cert),
    ];
    let jws = sign_values("0.NA/0.NA", &na, &service_id, service, valid()).unwrap();
    na.push(HandleValue::new(401, "HS_SIGNATURE", jws));
    vec![("0.0/0.0".into(), trust), ("0.NA/0.NA".into(), na)]
}

struct Fixture {
    server: TestServer,
    root_key: SigningKey,
    /// The site as the resolver starts with it: the server's, under another description.
    stale: SiteInfo,
}

async fn fixture() -> Fixture {
    let store = Arc::new(Store::new());
    let server = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    let (root_key, service_key) = (key(TEST_KEY_2048_DER), key(TEST_KEY_DER));
    for (h, values) in signed_root(&server.site_value(1), &root_key, &service_key) {
        store.insert(h, values);
    }
    let mut stale = server.site_info();
    stale.attributes = vec![(Bytes::from_static(b"desc"), Bytes::from_static(b"stale"))];
    Fixture {
        server,
        root_key,
        stale,
    }
}

fn description(r: &Resolver) -> Option<String> {
    r.root_sites().first().and_then(|s| s.description())
}

#[tokio::test]
async fn a_signed_root_is_taken_and_persisted() {
    let f = fixture().await;
    let file =
        std::env::temp_dir().join(format!("handle-resolver-root-{}.json", std::process::id()));
    let r = Resolver::builder()
        .root_sites([f.stale.clone()])
        .trust_root(TrustRoot::new([f.root_key.public_key()]))
        .persist_root(&file)
        .build()
        .unwrap();
    assert_eq!(description(&r).as_deref(), Some("stale"));
    r.refresh_root(false).await.unwrap();
    assert_eq!(
        description(&r),
        f.server
            .site_info()
            .attributes
            .iter()
            .find(|(k, _)| &k[..] == b"desc")
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    );
    // The file reads back as a bootstrap_handles file with the same root, and its 0.0/0.0
    // becomes the trust root of a resolver built from it.
    let again = Resolver::builder()
        .bootstrap_handles_file(&file)
        .build()
        .unwrap();
    assert_eq!(again.root_sites(), r.root_sites());
    again.refresh_root(false).await.unwrap();
    std::fs::remove_file(&file).ok();
}

#[tokio::test]
async fn a_tampered_root_is_refused_and_the_old_one_kept() {
    let f = fixture().await;
    // One byte of the signed HS_SITE changes (its description).
    let store = f.server.store();
    let mut na = store.get("0.NA/0.NA").unwrap().values.clone();
    let site = na.iter_mut().find(|v| v.is_type("HS_SITE")).unwrap();
    let mut info = SiteInfo::decode(&site.data, &Default::default()).unwrap();
    info.attributes = vec![(Bytes::from_static(b"desc"), Bytes::from_static(b"evil"))];
    site.data = info.encode().unwrap();
    store.insert("0.NA/0.NA", na);
    let r = Resolver::builder()
        .root_sites([f.stale.clone()])
        .trust_root(TrustRoot::new([f.root_key.public_key()]))
        .build()
        .unwrap();
    let e = r.refresh_root(false).await.unwrap_err();
    assert!(matches!(e, ResolveError::UntrustedRoot { .. }), "{e}");
    assert!(
        e.to_string().contains("HS_SITE") || e.to_string().contains("digest"),
        "{e}"
    );
    assert_eq!(description(&r).as_deref(), Some("stale"));
}

#[tokio::test]
async fn another_trust_root_refuses_the_signed_root() {
    let f = fixture().await;
    let r = Resolver::builder()
        .root_sites([f.stale.clone()])
        .trust_root(TrustRoot::global())
        .build()
        .unwrap();
    let e = r.refresh_root(false).await.unwrap_err();
    assert!(matches!(e, ResolveError::UntrustedRoot { .. }), "{e}");
    assert_eq!(description(&r).as_deref(), Some("stale"));
}

/// With a trust root, a root never read from the network (the built-in data, a file) is
/// refreshed in the background after the first request, once; a root read less than
/// `ROOT_MAX_AGE` ago is not.
#[tokio::test(start_paused = true)]
async fn an_old_root_is_refreshed_in_the_background_once() {
    use super::world::{urls, World};
    use handle_resolver::wire::Body;
    let w = World::new(None);
    w.store.insert("20.500.1/a", urls("20.500.1/a", 1));
    let r = w.builder().trust_root(TrustRoot::global()).build().unwrap();
    let asked_trust_root = || {
        w.net
            .log()
            .iter()
            .filter(|s| matches!(&s.request.body, Body::ResolutionRequest(q) if &q.handle[..] == b"0.0/0.0"))
            .count()
    };
    r.resolve("20.500.1/a").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(asked_trust_root(), 1, "one background refresh read 0.0/0.0");
    // The scripted root has no 0.0/0.0 record: the refresh fails and the root is kept.
    assert_eq!(r.root_sites().len(), 1);
    r.resolve("20.500.1/a").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(
        asked_trust_root(),
        1,
        "not again within the refresh interval"
    );
}
