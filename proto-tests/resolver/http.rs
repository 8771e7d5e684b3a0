//! The native protocol over HTTP, on loopback: the test network's servers also serve HTTP and
//! say so in their site records; with UDP dropped and TCP reset everywhere, the whole chain
//! (root → prefix handle → HS_SERV → site → hashed server) answers over HTTP within the one
//! deadline.

use std::sync::Arc;
use std::time::{Duration, Instant};

use handle_resolver::testing::{Faults, TestNetwork};
use handle_resolver::transport::{NetTransport, TransportKind};
use handle_resolver::wire::{HandleValue, Limits, Protocol, SiteInfo};
use handle_resolver::{Resolver, TransportPreference};

fn urls(handle: &str) -> Vec<HandleValue> {
    (1..=3)
        .map(|i| HandleValue::new(i, "URL", format!("https://example.org/{handle}/{i}")))
        .collect()
}

async fn network() -> TestNetwork {
    TestNetwork::builder().http(true).build().await.unwrap()
}

#[tokio::test]
async fn with_udp_and_tcp_blocked_the_chain_answers_over_http() {
    let net = network().await;
    net.set_faults(Faults {
        block_udp: true,
        block_tcp: true,
        ..Faults::default()
    });
    let r = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(NetTransport::new()))
        .retransmit(vec![Duration::from_millis(100)])
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let h = "20.500.1/over-http";
    net.insert(h, urls(h));
    let started = Instant::now();
    let (rec, attempts) = r.resolve_traced(h, &handle_resolver::Query::new()).await;
    let rec = rec.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(rec.values, urls(h));
    assert_eq!(rec.source.transport, TransportKind::Http);
    // The answer came from the server the hash picks in one of the sites, over HTTP.
    let server = net
        .sites
        .iter()
        .filter_map(|s| s.server_for(h.as_bytes()))
        .find(|s| s.http_addr() == rec.source.server)
        .expect("a hashed server's HTTP interface answered");
    assert!(server.http_requests() > 0);
    // Every server was tried over UDP, then TCP, then HTTP, in that order.
    let kinds: Vec<TransportKind> = attempts.iter().map(|a| a.transport).collect();
    let first_http = kinds
        .iter()
        .position(|k| *k == TransportKind::Http)
        .unwrap();
    assert_eq!(
        &kinds[..first_http],
        [TransportKind::Udp, TransportKind::Tcp]
    );
    assert!(net.http_requests() > 0);
}

#[tokio::test]
async fn http_only_skips_udp_and_tcp() {
    let net = network().await;
    let transport = NetTransport::new();
    let r = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(transport.clone()))
        .transport(TransportPreference::Http)
        .build()
        .unwrap();
    let h = "20.500.1/http-only";
    net.insert(h, urls(h));
    let (rec, attempts) = r.resolve_traced(h, &handle_resolver::Query::new()).await;
    assert_eq!(rec.unwrap().values, urls(h));
    assert!(attempts.iter().all(|a| a.transport == TransportKind::Http));
    assert_eq!(net.udp_requests() + net.tcp_requests(), 0);
    assert_eq!(net.root.udp_requests() + net.root.tcp_requests(), 0);
}

#[tokio::test]
async fn a_server_without_an_http_interface_is_not_asked_over_http() {
    let net = TestNetwork::builder().build().await.unwrap();
    // A root without an HTTP interface: refused when built, before any request.
    let e = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(NetTransport::new()))
        .transport(TransportPreference::Http)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            handle_resolver::BuildError::NoTransport { server: false, .. }
        ),
        "{e}"
    );
    // A root with one, in front of a site without: that site is not asked over HTTP.
    let net = network().await;
    let mut site_values = net.site_values();
    for v in &mut site_values {
        let mut info = SiteInfo::decode(&v.data, &Limits::default()).unwrap();
        for server in &mut info.servers {
            server.interfaces.retain(|i| i.protocol != Protocol::Http);
        }
        v.data = info.encode().unwrap();
    }
    net.root_store().insert("0.NA/20.500.1", site_values);
    let r = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(NetTransport::new()))
        .transport(TransportPreference::Http)
        .build()
        .unwrap();
    let h = "20.500.1/no-http";
    net.insert(h, urls(h));
    let e = r.resolve(h).await.unwrap_err();
    assert!(e.to_string().contains("no usable server"), "{e}");
    assert_eq!(net.udp_requests() + net.tcp_requests(), 0);
}

#[tokio::test]
async fn server_http_asks_one_http_interface_directly() {
    let net = network().await;
    let h = "20.500.1/direct";
    net.insert(h, urls(h));
    let server = net.sites[0].server_for(h.as_bytes()).unwrap();
    let r = Resolver::builder()
        .server_http(server.http_addr().unwrap(), None, false)
        .exchange(Arc::new(NetTransport::new()))
        .build()
        .unwrap();
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(rec.values, urls(h));
    assert_eq!(rec.source.transport, TransportKind::Http);
    assert_eq!(rec.source.server, Some(server.http_addr().unwrap()));
    assert_eq!(server.udp_requests() + server.tcp_requests(), 0);
}

/// A server with only an HTTPS side (and a 2048-bit key: TLS refuses smaller ones), whose
/// certificate carries the key its HS_SITE names.
async fn https_server() -> handle_resolver::testing::TestServer {
    use handle_resolver::testing::{Store, TestKey, TestServer, TestServerConfig};
    let store = Arc::new(Store::new());
    store.insert("20.500.1/tls", urls("20.500.1/tls"));
    let mut config = TestServerConfig::new(store);
    config.key = TestKey::embedded_2048();
    config.https = true;
    let server = TestServer::start(config).await.unwrap();
    // Its own root and the prefix's service: 0.NA/20.500.1 holds its own HS_SITE.
    server
        .store()
        .insert("0.NA/20.500.1", vec![server.site_value(1)]);
    server
}

#[tokio::test]
async fn https_is_pinned_to_the_key_of_the_site_record() {
    let server = https_server().await;
    let r = Resolver::builder()
        .root_sites([server.site_info()])
        .exchange(Arc::new(NetTransport::new()))
        .transport_order([TransportKind::Https])
        .build()
        .unwrap();
    // Root → prefix handle → the server, every hop over HTTPS.
    let (rec, attempts) = r
        .resolve_traced("20.500.1/tls", &handle_resolver::Query::new())
        .await;
    assert!(
        attempts.iter().all(|a| a.transport == TransportKind::Https),
        "{attempts:?}"
    );
    let rec = rec.unwrap();
    assert_eq!(rec.values, urls("20.500.1/tls"));
    assert_eq!(rec.source.server, Some(server.https_addr().unwrap()));
    assert_eq!(attempts.len(), 2);
}

#[tokio::test]
async fn https_refuses_a_certificate_without_the_key_of_the_site_record() {
    use handle_resolver::testing::TestKey;
    let server = https_server().await;
    // The site record names another key than the one the certificate carries.
    let mut site = server.site_info();
    site.servers[0].public_key = TestKey::embedded().hs_pubkey();
    let r = Resolver::builder()
        .root_sites([site])
        .exchange(Arc::new(NetTransport::new()))
        .transport_order([TransportKind::Https])
        .build()
        .unwrap();
    let e = r.resolve("20.500.1/tls").await.unwrap_err();
    assert!(e.to_string().contains("tls"), "{e}");
    assert!(
        server.http_requests() == 0,
        "nothing reached the HTTP layer"
    );
}
