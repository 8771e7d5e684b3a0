//! A handle whose suffix merely looks like a CORDRA GUID goes out as written: a case-sensitive
//! server (the test server's default `Store`) finds it. Its CORDRA form (upper case) is sent
//! only under the CORDRA profile (`strict_cordra`).

use std::sync::Arc;

use handle_resolver::ident::CordraId;
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::wire::HandleValue;
use handle_resolver::{Handle, Identifier};
use handle_resolver::{ResolveError, Resolver};

const LOWER: &str = "20.500.1/f58fb49eb1f848f0a606e84cef294be5";
const UPPER: &str = "20.500.1/F58FB49EB1F848F0A606E84CEF294BE5";

async fn server() -> TestServer {
    let store = Arc::new(Store::new());
    store.insert(
        LOWER,
        vec![HandleValue::new(1, "URL", "https://example.org/lower")],
    );
    TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap()
}

fn resolver(server: &TestServer, strict_cordra: bool) -> Resolver {
    Resolver::builder()
        .server(server.addr())
        .strict_cordra(strict_cordra)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_lower_case_guid_like_suffix_is_found_on_a_case_sensitive_server() {
    let server = server().await;
    let r = resolver(&server, false);
    let id = Identifier::parse(LOWER).unwrap();
    let cordra = CordraId::parse(LOWER).unwrap();
    let handle = Handle::parse(LOWER).unwrap();
    let records = [
        r.resolve(LOWER).await,
        r.resolve(&format!("hdl:{LOWER}")).await,
        r.resolve(&format!("https://hdl.handle.net/{LOWER}")).await,
        r.resolve(&id).await,
        r.resolve(&cordra).await,
        r.resolve(&handle).await,
    ];
    for rec in records {
        let rec = rec.unwrap();
        assert_eq!(rec.handle, LOWER);
        assert_eq!(rec.urls(), ["https://example.org/lower"]);
    }
    // The upper-case handle is another one on this server.
    assert!(matches!(
        r.resolve(UPPER).await,
        Err(ResolveError::NotFound { .. })
    ));
}

#[tokio::test]
async fn the_cordra_profile_sends_the_cordra_form() {
    let server = server().await;
    let strict = resolver(&server, true);
    // The lower-case handle goes out upper-cased: this server does not know that one...
    match strict.resolve(LOWER).await {
        Err(ResolveError::NotFound { handle }) => assert_eq!(handle.as_str(), UPPER),
        other => panic!("{other:?}"),
    }
    // ... until it does.
    server.store().insert(
        UPPER,
        vec![HandleValue::new(1, "URL", "https://example.org/upper")],
    );
    strict.clear_cache(); // the "not found" above is cached
    let rec = strict.resolve(LOWER).await.unwrap();
    assert_eq!(rec.handle, UPPER);
    assert_eq!(rec.urls(), ["https://example.org/upper"]);
    // Not a CORDRA id: refused before anything is sent.
    let before = server.udp_requests();
    assert!(matches!(
        strict.resolve("20.500.1/x").await,
        Err(ResolveError::NotCordra { .. })
    ));
    assert_eq!(server.udp_requests(), before);
}
