//! IPv6 and IPv4 raced on loopback (RFC 8305): one server with an address of each family (the
//! second from its site's `alt_addr` attribute), run as two test servers on 127.0.0.1 and ::1
//! with the same port and the same handles.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use handle_resolver::testing::{Faults, Store, TestServer, TestServerConfig};
use handle_resolver::transport::NetTransport;
use handle_resolver::wire::{HandleValue, SiteInfo};
use handle_resolver::Query;
use handle_resolver::{AttemptOutcome, Resolver};

const V6: IpAddr = IpAddr::V6(Ipv6Addr::LOCALHOST);

struct DualStack {
    v4: TestServer,
    v6: TestServer,
    site: SiteInfo,
}

/// The two servers, and the site record (the IPv4 address, `alt_addr` ::1) that both serve
/// for the prefix 20.500.1 (so the root lookup and the handle both meet the race).
async fn dual_stack() -> DualStack {
    let store = Arc::new(Store::new());
    let v4 = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    let mut config = TestServerConfig::new(store.clone());
    config.ip = V6;
    config.port = v4.addr().port();
    let v6 = TestServer::start(config).await.unwrap();
    let mut site = v4.site_info();
    site.attributes
        .push((Bytes::from_static(b"alt_addr"), Bytes::from_static(b"::1")));
    store.insert(
        "0.NA/20.500.1",
        vec![HandleValue::new(1, "HS_SITE", site.encode().unwrap())],
    );
    store.insert(
        "20.500.1/x",
        vec![HandleValue::new(1, "URL", "https://example.org/x")],
    );
    DualStack { v4, v6, site }
}

fn resolver(d: &DualStack) -> Resolver {
    Resolver::builder()
        .root_sites([d.site.clone()])
        .exchange(Arc::new(NetTransport::new()))
        .cache_size(0)
        .build()
        .unwrap()
}

#[tokio::test]
async fn with_both_families_answering_ipv6_goes_first() {
    let d = dual_stack().await;
    let (rec, attempts) = resolver(&d)
        .resolve_traced("20.500.1/x", &Query::new())
        .await;
    let rec = rec.unwrap();
    assert_eq!(
        rec.source.server,
        Some(SocketAddr::new(V6, d.v4.addr().port()))
    );
    assert!(
        attempts
            .iter()
            .all(|a| a.server.is_some_and(|s| s.is_ipv6())),
        "{attempts:?}"
    );
    assert_eq!(d.v4.udp_requests(), 0);
}

#[tokio::test]
async fn a_silent_ipv6_gives_way_to_ipv4_and_ipv4_is_remembered() {
    let d = dual_stack().await;
    d.v6.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let r = resolver(&d);
    let (rec, attempts) = r.resolve_traced("20.500.1/x", &Query::new()).await;
    let rec = rec.unwrap();
    assert_eq!(rec.source.server, Some(d.v4.addr()));
    // IPv6 was asked first and its attempt cancelled when IPv4 answered.
    let first = &attempts.iter().min_by_key(|a| a.number).unwrap();
    assert!(first.server.is_some_and(|s| s.is_ipv6()), "{attempts:?}");
    assert!(attempts
        .iter()
        .any(|a| a.server.is_some_and(|s| s.is_ipv6()) && a.outcome == AttemptOutcome::Cancelled));
    // The next request goes to IPv4 first (no wait for the silent family).
    let (rec, attempts) = r.resolve_traced("20.500.1/x", &Query::new()).await;
    assert_eq!(rec.unwrap().source.server, Some(d.v4.addr()));
    assert!(
        attempts
            .iter()
            .all(|a| a.server.is_some_and(|s| s.is_ipv4())),
        "{attempts:?}"
    );
}

#[tokio::test]
async fn a_silent_ipv4_is_never_waited_for() {
    let d = dual_stack().await;
    d.v4.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let (rec, _) = resolver(&d)
        .resolve_traced("20.500.1/x", &Query::new())
        .await;
    assert!(rec.unwrap().source.server.is_some_and(|s| s.is_ipv6()));
}

#[tokio::test]
async fn an_ipv6_only_server_as_root_and_as_server() {
    let store = Arc::new(Store::new());
    store.insert(
        "20.500.1/x",
        vec![HandleValue::new(1, "URL", "https://example.org/x")],
    );
    let mut config = TestServerConfig::new(store.clone());
    config.ip = V6;
    let v6 = TestServer::start(config).await.unwrap();
    store.insert("0.NA/20.500.1", vec![v6.site_value(1)]);
    let addr = v6.addr();
    assert!(addr.is_ipv6());
    for builder in [
        Resolver::builder().server(addr),
        Resolver::builder().root_server(addr),
    ] {
        let rec = builder
            .build()
            .unwrap()
            .resolve("20.500.1/x")
            .await
            .unwrap();
        assert_eq!(rec.source.server, Some(addr));
    }
}
