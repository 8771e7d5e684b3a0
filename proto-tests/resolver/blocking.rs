//! `handle_resolver::blocking::Resolver` from plain threads (no runtime of the caller's),
//! against the test network: root → HS_SERV → a site's hashed server.

use handle_resolver::blocking;
use handle_resolver::testing::TestNetwork;
use handle_resolver::wire::HandleValue;
use handle_resolver::{Query, ResolveError, Resolver};

#[test]
fn blocking_resolver_resolves_without_a_runtime_of_the_caller() {
    // The servers run on a runtime of their own threads; the test thread has none.
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let net = servers.block_on(TestNetwork::builder().build()).unwrap();
    net.insert(
        "20.500.1/b",
        vec![
            HandleValue::new(1, "EMAIL", "b@example.org"),
            HandleValue::new(2, "URL", "https://example.org/first"),
            HandleValue::new(3, "URL", "https://example.org/second"),
        ],
    );
    net.insert(
        "20.500.1/none",
        vec![HandleValue::new(1, "EMAIL", "x@example.org")],
    );
    let resolver =
        blocking::Resolver::from_builder(Resolver::builder().root_server(net.root.addr())).unwrap();

    let record = resolver.resolve("hdl:20.500.1/b").unwrap();
    assert_eq!(record.url().as_deref(), Some("https://example.org/first"));
    assert_eq!(
        record.urls(),
        vec!["https://example.org/first", "https://example.org/second"]
    );
    let emails: Vec<u32> = record.values_of_type("email").map(|v| v.index).collect();
    assert_eq!(emails, vec![1], "types compare ASCII case-insensitively");
    assert!(record.attempts.len() >= 3, "{:?}", record.attempts);
    assert_eq!(resolver.resolve("20.500.1/none").unwrap().url(), None);

    let filtered = resolver
        .resolve_with("20.500.1/b", &Query::new().types(["EMAIL"]))
        .unwrap();
    assert_eq!(filtered.values.len(), 1);
    assert!(matches!(
        resolver.resolve("20.500.1/missing"),
        Err(ResolveError::NotFound { .. })
    ));

    // Clones share the runtime and can be used from other threads.
    let other = resolver.clone();
    let url = std::thread::spawn(move || other.resolve("20.500.1/b").map(|r| r.url()))
        .join()
        .unwrap()
        .unwrap();
    assert_eq!(url.as_deref(), Some("https://example.org/first"));

    // Bulk, as an iterator.
    let mut outcomes: Vec<(String, bool)> = resolver
        .resolve_many(
            ["20.500.1/b", "20.500.1/missing", "20.500.1/none"].map(String::from),
            2,
        )
        .map(|(id, r)| (id, r.is_ok()))
        .collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        vec![
            ("20.500.1/b".to_string(), true),
            ("20.500.1/missing".to_string(), false),
            ("20.500.1/none".to_string(), true),
        ]
    );
    drop(net);
}
