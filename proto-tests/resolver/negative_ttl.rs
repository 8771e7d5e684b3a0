//! A value with a negative relative TTL (−1, −86400: a signed int4 to the reference, whose
//! REST API writes it as is) through UDP, TCP, the native protocol over HTTP and a proxy's
//! REST API: the library reads it signed and never caches it, and `resolve --json` and
//! `inspect` print it signed.

use std::sync::Arc;

use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::wire::{Body, HandleValue, Message, ResolutionResponse, ResponseCode, Ttl};
use handle_resolver::{Resolver, ResolverBuilder, TransportPreference};
use serde_json::Value;

use super::cli::{args, run};
use crate::support::examples::example;

const HANDLE: &str = "20.500.1/negative-ttl";

/// URL with TTL −1, EMAIL with TTL −86400 (relative, type byte 0).
fn values() -> Vec<HandleValue> {
    let mut url = HandleValue::new(1, "URL", "https://example.org/expired");
    url.ttl = Ttl::Relative(-1);
    let mut email = HandleValue::new(2, "EMAIL", "x@example.org");
    email.ttl = Ttl::Relative(-86_400);
    vec![url, email]
}

/// A server of its own prefix with UDP, TCP and HTTP (the native protocol and the REST API).
async fn server() -> TestServer {
    let store = Arc::new(Store::new());
    let mut config = TestServerConfig::new(store.clone());
    config.http = true;
    let server = TestServer::start(config).await.unwrap();
    store.insert("0.NA/20.500.1", vec![server.site_value(1)]);
    store.insert(HANDLE, values());
    server
}

/// Requests the server received, over any transport.
fn requests(server: &TestServer) -> u64 {
    server.udp_requests() + server.tcp_requests() + server.http_requests()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negative_ttls_are_signed_and_never_cached_over_every_transport() {
    let server = server().await;
    let http = server.http_addr().unwrap();
    let ways: [(&str, ResolverBuilder); 4] = [
        (
            "udp",
            Resolver::builder()
                .server(server.addr())
                .transport(TransportPreference::Udp),
        ),
        (
            "tcp",
            Resolver::builder()
                .server(server.addr())
                .transport(TransportPreference::Tcp),
        ),
        (
            "http",
            Resolver::builder()
                .server_http(http, None, false)
                .transport(TransportPreference::Http),
        ),
        ("rest", Resolver::builder().proxy(format!("http://{http}"))),
    ];
    for (way, builder) in ways {
        let r = builder.build().unwrap();
        let first = r.resolve(HANDLE).await.unwrap();
        assert_eq!(first.source.transport.as_str(), way);
        let ttls: Vec<Ttl> = first.values.iter().map(|v| v.ttl).collect();
        assert_eq!(ttls, [Ttl::Relative(-1), Ttl::Relative(-86_400)], "{way}");
        // Asked again: not from the cache, a request of its own.
        let before = requests(&server);
        let again = r.resolve(HANDLE).await.unwrap();
        assert!(!again.from_cache, "{way}");
        assert!(requests(&server) > before, "{way}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_json_prints_negative_ttls_signed_over_every_transport() {
    let bin = example("resolve");
    let server = server().await;
    let native = server.addr().to_string();
    let http = format!("http://{}", server.http_addr().unwrap());
    let ways: [(&str, Vec<&str>); 4] = [
        ("udp", vec!["--server", &native]),
        ("tcp", vec!["--server", &native, "--transport", "tcp"]),
        ("http", vec!["--server", &http, "--transport", "http"]),
        ("rest", vec!["--proxy", &http]),
    ];
    for (way, how) in ways {
        let mut a = how.clone();
        a.extend(["--json", "--trace", HANDLE]);
        let out = run(&bin, args(&a)).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{way}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["trace"][0]["transport"], way, "{doc}");
        assert_eq!(doc["values"][0]["ttl"], -1, "{way}: {doc}");
        assert_eq!(doc["values"][1]["ttl"], -86_400, "{way}: {doc}");
    }
}

#[test]
fn inspect_prints_negative_ttls_signed() {
    let request = Message::resolution_request(HANDLE, vec![], vec![], 7, 0);
    let answer = Message::response_to(
        &request,
        ResponseCode::Success,
        Body::ResolutionResponse(ResolutionResponse {
            handle: HANDLE.into(),
            values: values(),
        }),
    );
    let dir = std::env::temp_dir().join(format!(
        "handle-resolver-negative-ttl-{}-{:x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("answer.bin");
    std::fs::write(&file, answer.encode().unwrap()).unwrap();

    let text = std::process::Command::new(example("inspect"))
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("1\tURL\t-1\thttps://example.org/expired"),
        "{text}"
    );
    assert!(text.contains("2\tEMAIL\t-86400\tx@example.org"), "{text}");

    let json = std::process::Command::new(example("inspect"))
        .arg("--json")
        .arg(&file)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&json.stdout).unwrap();
    let text = doc.to_string();
    assert!(text.contains(r#""ttl":-1,"#), "{text}");
    assert!(text.contains(r#""ttl":-86400,"#), "{text}");
    assert!(!text.contains("4294967295"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
