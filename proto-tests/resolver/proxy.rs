//! Resolution through a proxy's REST API, against a scripted `fetch` (paused clock): the JSON
//! into the same records and errors as native answers, `Retry-After` honoured and bounded,
//! bad answers typed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use handle_resolver::Resolver;

/// Retries after a 429 or 503 (`ResolverBuilder::proxy`: at most twice).
const MAX_RETRIES: u32 = 2;
use handle_resolver::transport::{
    Exchange, ExchangeOptions, Exchanged, Fetched, HttpGet, TransportError, TransportKind,
};
use handle_resolver::wire::{HandleValue, Message};
use handle_resolver::{BuildError, Query, ResolveError};
use parking_lot::Mutex;
use tokio::time::Instant;

/// Answers GETs from a script, in order, and keeps the URLs asked.
#[derive(Default)]
struct Script {
    answers: Mutex<VecDeque<Result<Fetched, TransportError>>>,
    asked: Mutex<Vec<String>>,
}

impl Script {
    fn new(answers: impl IntoIterator<Item = Result<Fetched, TransportError>>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers.into_iter().collect()),
            asked: Mutex::default(),
        })
    }
}

impl Exchange for Script {
    fn exchange<'a>(
        &'a self,
        _server: std::net::SocketAddr,
        _kind: TransportKind,
        _request: &'a Message,
        _options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        Box::pin(async { panic!("a proxy resolution sent a native request") })
    }

    fn fetch<'a>(&'a self, get: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        self.asked.lock().push(get.url.clone());
        let next = self.answers.lock().pop_front();
        Box::pin(async move { next.unwrap_or(Err(TransportError::Timeout)) })
    }
}

fn json(status: u16, body: &str) -> Result<Fetched, TransportError> {
    Ok(Fetched::new(status, body.to_string()).with_content_type("application/json; charset=utf-8"))
}

/// The REST API's answer for 20.500.1/x with one URL value (the documented shape).
const FOUND: &str = r#"{"responseCode":1,"handle":"20.500.1/x","values":[
  {"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/x"},
   "ttl":86400,"timestamp":"2024-01-02T03:04:05Z"}]}"#;

fn resolver(script: &Arc<Script>) -> Resolver {
    Resolver::builder()
        .proxy("http://127.0.0.1:8000/")
        .exchange(script.clone())
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_json_becomes_the_record() {
    let script = Script::new([json(200, FOUND)]);
    let r = resolver(&script);
    let q = Query::new().types(["URL"]).indexes([1]).authoritative(true);
    let rec = r.resolve_with("20.500.1/x", &q).await.unwrap();
    let mut expected = HandleValue::new(1, "URL", "https://example.org/x");
    expected.timestamp = 1_704_164_645; // 2024-01-02T03:04:05Z
    assert_eq!(rec.values, vec![expected]);
    assert_eq!(rec.source.transport, TransportKind::Rest);
    assert_eq!(rec.source.server, Some("127.0.0.1:8000".parse().unwrap()));
    let url = "http://127.0.0.1:8000/api/handles/20.500.1/x?type=URL&index=1&auth=true";
    assert_eq!(
        rec.source.url.as_ref().map(|u| u.to_string()).as_deref(),
        Some(url)
    );
    // A proxy's answer comes from no site of the Handle System.
    assert!(rec.source.site.is_none() && rec.source.site_description().is_none());
    assert_eq!(*script.asked.lock(), [url]);
    assert_eq!(rec.attempts.len(), 1);
    assert_eq!(
        rec.attempts[0]
            .url
            .as_ref()
            .map(|u| u.to_string())
            .as_deref(),
        Some(url)
    );
}

#[tokio::test(start_paused = true)]
async fn response_codes_are_the_native_errors_and_not_found_is_cached() {
    let script = Script::new([
        json(404, r#"{"responseCode":100,"handle":"20.500.1/gone"}"#),
        json(
            200,
            r#"{"responseCode":200,"handle":"20.500.1/x","values":[]}"#,
        ),
        json(500, r#"{"responseCode":2,"message":"storage failed"}"#),
    ]);
    let r = resolver(&script);
    let e = r.resolve("20.500.1/gone").await.unwrap_err();
    assert!(matches!(e, ResolveError::NotFound { .. }), "{e}");
    // Cached: no second GET.
    let e = r.resolve("20.500.1/gone").await.unwrap_err();
    assert!(matches!(e, ResolveError::NotFound { .. }), "{e}");
    let e = r
        .resolve_with("20.500.1/x", &Query::new().types(["EMAIL"]))
        .await
        .unwrap_err();
    assert!(matches!(e, ResolveError::NoMatchingValues { .. }), "{e}");
    let e = r.resolve("20.500.1/y").await.unwrap_err();
    assert!(e.to_string().contains("storage failed"), "{e}");
    assert_eq!(script.asked.lock().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured_then_bounded() {
    let busy = || {
        Ok(Fetched::new(429, "slow down")
            .with_content_type("text/plain")
            .with_retry_after("2"))
    };
    let script = Script::new([busy(), busy(), json(200, FOUND)]);
    let r = resolver(&script);
    let t0 = Instant::now();
    let rec = r.resolve("20.500.1/x").await.unwrap();
    assert_eq!(t0.elapsed(), Duration::from_secs(4));
    assert_eq!(rec.attempts.len(), 3);
    // Busy for longer than the retries allow: the error says so.
    let script = Script::new((0..=MAX_RETRIES).map(|_| busy()));
    let r = resolver(&script);
    let e = r.resolve("20.500.1/x").await.unwrap_err();
    assert!(matches!(e, ResolveError::Proxy { .. }), "{e}");
    assert!(e.to_string().contains("429"), "{e}");
    assert_eq!(script.asked.lock().len() as u32, MAX_RETRIES + 1);
    // A Retry-After longer than the longest wait is not waited out.
    let script = Script::new([Ok(Fetched::new(503, "").with_retry_after("3600"))]);
    let r = resolver(&script);
    let t0 = Instant::now();
    let e = r.resolve("20.500.1/x").await.unwrap_err();
    assert!(t0.elapsed() < Duration::from_secs(1), "{e}");
}

#[tokio::test(start_paused = true)]
async fn bad_answers_are_typed_errors() {
    let cases = [
        (
            Ok(Fetched::new(200, "<html>").with_content_type("text/html")),
            "text/html",
        ),
        (json(200, "{\"responseCode\":"), "body"),
        (json(200, "[1,2,3]"), "body"),
        (Ok(Fetched::new(502, "")), "absent"),
        (
            Err(TransportError::BodyTooLarge { limit: 10 }),
            "longer than",
        ),
        (
            Err(TransportError::Io(
                std::io::ErrorKind::ConnectionRefused,
                "connection refused".into(),
            )),
            "refused",
        ),
    ];
    for (answer, says) in cases {
        let script = Script::new([answer]);
        let e = resolver(&script).resolve("20.500.1/x").await.unwrap_err();
        assert!(matches!(e, ResolveError::Proxy { .. }), "{e}");
        assert!(e.to_string().contains(says), "{e} should say {says}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_deadline_bounds_a_silent_proxy() {
    struct Silent;
    impl Exchange for Silent {
        fn exchange<'a>(
            &'a self,
            _: std::net::SocketAddr,
            _: TransportKind,
            _: &'a Message,
            _: &'a ExchangeOptions,
        ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
            Box::pin(futures::future::pending())
        }
        fn fetch<'a>(&'a self, _: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
            Box::pin(futures::future::pending())
        }
    }
    let r = Resolver::builder()
        .proxy("https://hdl.example.org")
        .exchange(Arc::new(Silent))
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let t0 = Instant::now();
    let e = r.resolve("20.500.1/x").await.unwrap_err();
    assert!(matches!(e, ResolveError::Timeout { .. }), "{e}");
    assert_eq!(t0.elapsed(), Duration::from_secs(2));
}

#[test]
fn certify_on_the_builder_cannot_go_through_a_proxy() {
    let e = Resolver::builder()
        .proxy("https://hdl.example.org")
        .certify(true)
        .build()
        .unwrap_err();
    assert_eq!(e, BuildError::CertifyOverProxy);
    let e = Resolver::builder()
        .proxy("hdl.example.org")
        .build()
        .unwrap_err();
    assert!(matches!(e, BuildError::ProxyUrl(_)), "{e}");
}

#[tokio::test(start_paused = true)]
async fn a_certified_query_asks_the_proxy_to_check() {
    let script = Script::new([json(200, FOUND)]);
    let r = resolver(&script);
    let rec = r
        .resolve_with("20.500.1/x", &Query::new().certify(true))
        .await
        .unwrap();
    assert!(
        !rec.source.certified,
        "the resolver verified nothing itself"
    );
    assert!(script.asked.lock()[0].ends_with("?cert=true"));
}

/// Every sample handle of the test server's file reads the same through the proxy's REST API
/// as natively: the same values, byte for byte (TTLs, timestamps, permissions, references).
#[tokio::test]
async fn rest_and_native_give_the_same_records_for_every_sample_handle() {
    use handle_resolver::testing::{StoreFile, TestServer, TestServerConfig};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/testserver/handles.json"
    ))
    .unwrap();
    let file = StoreFile::parse(&text).unwrap();
    let store = Arc::new(file.new_store());
    let mut config = TestServerConfig::new(store.clone());
    config.http = true;
    let server = TestServer::start(config).await.unwrap();
    file.fill(&store, &server.site_value(1).data).unwrap();
    let native = Resolver::builder().server(server.addr()).build().unwrap();
    let proxy = Resolver::builder()
        .proxy(format!("http://{}", server.http_addr().unwrap()))
        .build()
        .unwrap();
    let mut compared = 0;
    for handle in file.handles.keys() {
        let n = native.resolve(handle.as_str()).await;
        let p = proxy.resolve(handle.as_str()).await;
        match (n, p) {
            (Ok(n), Ok(p)) => {
                assert_eq!(n.values, p.values, "{handle}");
                assert_eq!(n.handle, p.handle, "{handle}");
                assert_eq!(p.source.transport, TransportKind::Rest);
                compared += 1;
            }
            (Err(n), Err(p)) => assert_eq!(
                std::mem::discriminant(&n),
                std::mem::discriminant(&p),
                "{handle}: {n} / {p}"
            ),
            (n, p) => panic!("{handle}: native {n:?}, proxy {p:?}"),
        }
    }
    assert!(compared >= 8, "only {compared} handles compared");
}

/// The test server's REST side refuses the first request with 429 and `Retry-After: 1`: the
/// proxy resolution waits a second and gets the answer on the second GET.
#[tokio::test]
async fn a_429_from_the_test_server_is_waited_out() {
    use handle_resolver::testing::{Faults, TestServer, TestServerConfig};
    let config = TestServerConfig {
        http: true,
        ..TestServerConfig::default()
    };
    let server = TestServer::start(config).await.unwrap();
    server.store().insert(
        "20.500.1/busy",
        vec![HandleValue::new(1, "URL", "https://example.org/")],
    );
    server.set_faults(Faults {
        rest_429: Some(1),
        rest_retry_after: 1,
        ..Faults::default()
    });
    let r = Resolver::builder()
        .proxy(format!("http://{}", server.http_addr().unwrap()))
        .build()
        .unwrap();
    let t0 = std::time::Instant::now();
    let rec = r.resolve("20.500.1/busy").await.unwrap();
    assert!(t0.elapsed() >= Duration::from_secs(1));
    assert_eq!(rec.attempts.len(), 2);
    assert_eq!(rec.values.len(), 1);
    assert_eq!(server.http_requests(), 2);
}
