//! The tests of `resolver.rs` (one deadline per public call), with the test network.

use super::super::support::deadline::made;
use super::*;
use crate::testing::TestNetwork;
use crate::transport::NetTransport;

/// Every public call makes one deadline, however many stages, requests and shared
/// lookups it goes through: here a cold resolution (root, service handle, site), a traced
/// one, the mirror check and a stream of three.
#[tokio::test]
async fn one_deadline_per_call() {
    let net = TestNetwork::builder().build().await.unwrap();
    for i in 0..4 {
        let values = vec![HandleValue::new(
            1,
            "URL",
            format!("http://example.org/{i}"),
        )];
        net.insert(format!("20.500.1/d{i}"), values);
    }
    let r = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(NetTransport::new()))
        .build()
        .unwrap();
    let count = |before: usize| made() - before;
    let before = made();
    r.resolve("20.500.1/d0").await.unwrap();
    assert_eq!(count(before), 1, "a cold resolution");
    let before = made();
    let (out, attempts) = r.resolve_traced("20.500.1/d1", &Query::new()).await;
    out.unwrap();
    assert!(!attempts.is_empty());
    assert_eq!(count(before), 1, "a traced resolution");
    let before = made();
    r.resolve_all_sites("20.500.1/d2", &Query::new())
        .await
        .unwrap();
    assert_eq!(count(before), 1, "the mirror check");
    let before = made();
    let mut many = r.resolve_many(["20.500.1/d1", "20.500.1/d2", "20.500.1/d3"], 2);
    while let Some((_, out)) = many.next().await {
        out.unwrap();
    }
    assert_eq!(count(before), 3, "one per identifier");
}
