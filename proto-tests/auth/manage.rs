//! `Admin` beyond single changes: create with OW (overwrite) and MINT (a suffix the server
//! chooses), and HOME / UNHOME of a prefix at every server of a site, against the loopback
//! test server started from the captures' records (`fixtures/reference/captures-auth/`).

use handle_resolver::auth::{Authenticator, Identity, PrivateKey, SecretKey};
use handle_resolver::testing::TestServer;
use handle_resolver::wire::{AdminRecord, HandleValue};
use handle_resolver::{AdminError, CreateOptions, Resolver};

use super::captures::auth_dir;
use super::loopback::{server, urls};

fn admin_value(index: u32, who: &str, who_index: u32) -> HandleValue {
    let rec = AdminRecord::new(0x0FFF, who.as_bytes().to_vec(), who_index);
    HandleValue::new(index, "HS_ADMIN", rec.encode().unwrap())
}

fn resolver(server: &TestServer, me: Option<Authenticator>) -> Resolver {
    let mut b = Resolver::builder()
        .loss_detection(false)
        .server(server.addr())
        .cache_size(0);
    if let Some(me) = me {
        b = b.authenticator(me);
    }
    b.build().unwrap()
}

fn seckey() -> Authenticator {
    Authenticator::secret_key(
        "300:20.500.12345/USER-SECKEY".parse().unwrap(),
        SecretKey::new("public-test-secret-1"),
    )
}

fn prefix_admin() -> Authenticator {
    Authenticator::private_key(
        "300:0.NA/20.500.12345".parse::<Identity>().unwrap(),
        PrivateKey::from_file(auth_dir().join("keys/prefixadmin_privkey.bin")).unwrap(),
    )
}

#[tokio::test]
async fn overwrite_replaces_an_existing_handle_and_a_plain_create_does_not() {
    let server = server().await;
    let r = resolver(&server, Some(seckey()));
    let admin = r.admin();
    let handle = "20.500.12345/OVERWRITTEN";
    let me = admin_value(100, "20.500.12345/USER-SECKEY", 300);
    let first = vec![
        me.clone(),
        HandleValue::new(1, "URL", "https://example.org/1"),
    ];
    let second = vec![me, HandleValue::new(2, "URL", "https://example.org/2")];
    admin.create_handle(handle, first).await.unwrap();
    let e = admin
        .create_handle(handle, second.clone())
        .await
        .unwrap_err();
    assert!(matches!(e, AdminError::AlreadyExists { .. }), "{e}");
    assert_eq!(urls(&r, handle).await, ["https://example.org/1"]);
    let created = admin
        .create_handle_with(handle, second, CreateOptions::new().overwrite(true))
        .await
        .unwrap();
    assert_eq!(created, handle);
    // The old values are gone, not merged.
    assert_eq!(urls(&r, handle).await, ["https://example.org/2"]);
}

#[tokio::test]
async fn mint_creates_under_a_suffix_the_server_chooses() {
    let server = server().await;
    let r = resolver(&server, Some(seckey()));
    let admin = r.admin();
    let stem = "20.500.12345/MINTED-";
    let values = || {
        vec![
            admin_value(100, "20.500.12345/USER-SECKEY", 300),
            HandleValue::new(1, "URL", "https://example.org/minted"),
        ]
    };
    let mint = CreateOptions::new().mint(true);
    let a = admin
        .create_handle_with(stem, values(), mint)
        .await
        .unwrap();
    let b = admin
        .create_handle_with(stem, values(), mint)
        .await
        .unwrap();
    assert_ne!(a, b);
    for minted in [&a, &b] {
        let suffix = minted.strip_prefix(stem).unwrap();
        // The test server mints a lower-case UUID, as the reference server does.
        assert_eq!(suffix.len(), 36, "{minted}");
        assert!(server.store().get(minted.as_bytes()).is_some(), "{minted}");
        assert_eq!(urls(&r, minted).await, ["https://example.org/minted"]);
    }
    // The stem itself was never created.
    assert!(server.store().get(stem.as_bytes()).is_none());
}

#[tokio::test]
async fn home_and_unhome_reach_the_site_and_need_a_server_admin() {
    let server = server().await;
    let store = server.store();
    store.home_prefix("0.NA");
    store.home_prefix("20.500.12345");
    store.add_server_admin(300, "0.NA/20.500.12345");
    let values = || vec![admin_value(100, "0.NA/20.500.12345", 300)];

    let boss = resolver(&server, Some(prefix_admin()));
    let admin = boss.admin();
    let site = admin.site_info(server.addr()).await.unwrap();
    assert_eq!(site, server.site_info());

    // Not homed: the server is not responsible (301), before any challenge.
    let e = admin
        .create_handle("20.500.12345.NEW/x", values())
        .await
        .unwrap_err();
    assert_eq!(
        e.response_code(),
        Some(handle_resolver::wire::ResponseCode::ServerNotResponsible),
        "{e}"
    );

    // A prefix administrator who is no server administrator: 400 INVALID_ADMIN.
    let user = resolver(&server, Some(seckey()));
    let e = user
        .admin()
        .home_prefix(&site, "0.NA/20.500.12345.NEW")
        .await
        .unwrap_err();
    assert!(matches!(e, AdminError::NotPermitted { .. }), "{e}");
    assert!(!store.serves("20.500.12345.NEW/x"));

    admin
        .home_prefix(&site, "0.na/20.500.12345.new")
        .await
        .unwrap();
    assert!(store.serves("20.500.12345.NEW/x"));
    admin
        .create_handle("20.500.12345.NEW/x", values())
        .await
        .unwrap();

    admin
        .unhome_prefix(&site, "0.NA/20.500.12345.NEW")
        .await
        .unwrap();
    assert!(!store.serves("20.500.12345.NEW/y"));
    assert!(store.serves("20.500.12345/y"));

    // Not a prefix handle: refused before anything is sent.
    let challenges = server.challenges();
    let e = admin
        .home_prefix(&site, "20.500.12345/x")
        .await
        .unwrap_err();
    assert!(
        matches!(e, AdminError::NotAPrefixHandle { .. }) && e.is_input_error(),
        "{e}"
    );
    assert_eq!(server.challenges(), challenges);
}
