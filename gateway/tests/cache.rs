//! The gateway's cache (issue 40) against the library's loopback test server, whose counters
//! say how many queries reached it: single flight (1,000 concurrent requests, one query),
//! lifetimes from the values' TTLs with `Expires` counting down, "not found" kept for the
//! negative TTL, stale-if-error with its `X-Cache`, and the trusted bypass with its rate
//! limit. Time moves with tokio's clock (paused, advanced, resumed between requests, so that
//! the network itself runs in real time).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::Parser;
use handle_gateway::config::{Args, Settings};
use handle_gateway::redirect::Answer;
use handle_gateway::server::{handler, Incoming};
use handle_gateway::upstream::Resolution;
use handle_resolver::testing::{Faults, Store, TestServer, TestServerConfig};
use handle_resolver::wire::{HandleValue, Ttl};

struct Setup {
    server: TestServer,
    store: Arc<Store>,
    resolution: Arc<Resolution>,
}

impl Setup {
    /// A test server and a gateway resolving at it with these extra options.
    async fn new(options: &[&str]) -> Setup {
        let store = Arc::new(Store::new());
        let server = TestServer::start(TestServerConfig::new(store.clone()))
            .await
            .expect("the test server starts");
        let addr = server.addr().to_string();
        let mut args = vec!["handle-gateway", "--server", &addr, "--timeout-ms", "400"];
        args.extend_from_slice(options);
        let settings = Settings::from_args(&Args::parse_from(args)).expect("settings");
        let resolution = Arc::new(Resolution::start(&settings).await.expect("resolver"));
        Setup {
            server,
            store,
            resolution,
        }
    }

    /// Queries that reached the test server so far (UDP datagrams and TCP requests).
    fn queries(&self) -> u64 {
        self.server.udp_requests() + self.server.tcp_requests()
    }

    async fn get(&self, path: &str) -> Answer {
        ask(&self.resolution, path, "127.0.0.1", &[]).await
    }

    /// The answer to `GET path`, and whether a query reached the test server meanwhile (a
    /// count, not an equality: once the resolver has measured the server's round trip, its
    /// UDP transport may send a slow query again, so one query may be two datagrams).
    async fn get_asked(&self, path: &str) -> (Answer, bool) {
        let before = self.queries();
        let a = self.get(path).await;
        (a, self.queries() > before)
    }
}

/// The answer to `GET path` from `client`, with these headers (and a `Host`).
async fn ask(
    resolution: &Resolution,
    path: &str,
    client: &str,
    headers: &[(&str, &str)],
) -> Answer {
    let client: IpAddr = client.parse().expect("an address");
    let local: SocketAddr = "127.0.0.1:8080".parse().expect("an address");
    let (path, query) = match path.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path, None),
    };
    let mut req = Incoming::new("GET", path, query, client, local);
    req.headers.push(("Host".into(), "gw.example".into()));
    for (k, v) in headers {
        req.headers.push(((*k).into(), (*v).into()));
    }
    handler::answer(resolution, &req).await
}

fn url(data: &str, ttl: i32) -> HandleValue {
    let mut v = HandleValue::new(1, "URL", data.to_owned());
    v.ttl = Ttl::Relative(ttl);
    v
}

/// `(status, Location, X-Cache)` of an answer.
fn seen(a: &Answer) -> (u16, Option<&str>, Option<&str>) {
    (
        a.status,
        a.header_value("Location"),
        a.header_value("X-Cache"),
    )
}

/// Seconds from now (the wall clock) to the answer's `Expires`.
fn expires_in(a: &Answer) -> i64 {
    let at = httpdate::parse_http_date(a.header_value("Expires").expect("Expires"))
        .expect("an HTTP date");
    match at.duration_since(SystemTime::now()) {
        Ok(d) => d.as_secs_f64().round() as i64,
        Err(e) => -(e.duration().as_secs_f64().round() as i64),
    }
}

/// Moves tokio's clock `d` ahead at once (the cache's clock; the wall clock stays).
async fn jump(d: Duration) {
    tokio::time::pause();
    tokio::time::advance(d).await;
    tokio::time::resume();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_misses_send_one_query() {
    let s = Setup::new(&[]).await;
    s.store
        .insert("20.500.1/hot", vec![url("https://a.example/hot", 86_400)]);
    // The answer takes 30 ms: every request arrives while it is on its way. (No request
    // before: the resolver has measured no round trip to the server, so it takes 30 ms for
    // a slow answer, not a lost one, and sends nothing again within its first wait, 500 ms;
    // with one server there is no other to hedge to. So the datagrams are the queries.)
    s.server.set_faults(Faults {
        delay: Duration::from_millis(30),
        ..Faults::default()
    });
    let barrier = Arc::new(tokio::sync::Barrier::new(1000));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..1000 {
        let resolution = s.resolution.clone();
        let barrier = barrier.clone();
        tasks.spawn(async move {
            barrier.wait().await;
            ask(&resolution, "/20.500.1/hot", "127.0.0.1", &[]).await
        });
    }
    let (mut misses, mut hits) = (0, 0);
    while let Some(answer) = tasks.join_next().await {
        let a = answer.expect("a task");
        assert_eq!(
            (a.status, a.header_value("Location")),
            (302, Some("https://a.example/hot"))
        );
        match a.header_value("X-Cache") {
            Some("miss") => misses += 1,
            Some("hit") => hits += 1,
            other => panic!("X-Cache {other:?}"),
        }
    }
    assert_eq!(
        s.queries(),
        1,
        "1,000 concurrent requests, one upstream query"
    );
    assert_eq!((misses, hits), (1, 999));

    // What the count would be without the cache: a query per request.
    let off = Setup::new(&["--cache-size-mb", "0"]).await;
    off.store
        .insert("20.500.1/hot", vec![url("https://a.example/hot", 86_400)]);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let resolution = off.resolution.clone();
        tasks.spawn(async move { ask(&resolution, "/20.500.1/hot", "127.0.0.1", &[]).await });
    }
    while let Some(answer) = tasks.join_next().await {
        let a = answer.expect("a task");
        assert_eq!((a.status, a.header_value("X-Cache")), (302, Some("miss")));
    }
    assert!(off.queries() >= 20, "{} queries", off.queries());
}

#[tokio::test]
async fn records_live_until_their_smallest_ttl_and_expires_counts_down() {
    let s = Setup::new(&[]).await;
    let mut email = HandleValue::new(2, "EMAIL", "x@a.example");
    email.ttl = Ttl::Relative(600);
    s.store.insert(
        "20.500.1/ttl",
        vec![url("https://a.example/ttl", 60), email],
    );
    s.store
        .insert("20.500.1/zero", vec![url("https://a.example/zero", 0)]);

    let (a, asked) = s.get_asked("/20.500.1/ttl").await;
    assert_eq!(seen(&a), (302, Some("https://a.example/ttl"), Some("miss")));
    assert!(asked);
    assert!((59..=60).contains(&expires_in(&a)), "{}", expires_in(&a));
    let kept = s.queries();
    let a = s.get("/20.500.1/ttl").await;
    assert_eq!(seen(&a), (302, Some("https://a.example/ttl"), Some("hit")));

    // 30 s later: still the cache's, and Expires says what remains of the 60 s.
    jump(Duration::from_secs(30)).await;
    let a = s.get("/20.500.1/ttl").await;
    assert_eq!(a.header_value("X-Cache"), Some("hit"));
    assert!((29..=31).contains(&expires_in(&a)), "{}", expires_in(&a));
    // The values page and the REST API show the TTLs as the server sent them.
    let page = s.get("/20.500.1/ttl?noredirect").await;
    assert_eq!(page.header_value("X-Cache"), Some("hit"));
    let api = s.get("/api/handles/20.500.1/ttl").await;
    let body = String::from_utf8(api.body).expect("UTF-8");
    assert!(
        body.contains("\"ttl\":60") && body.contains("\"ttl\":600"),
        "{body}"
    );
    assert_eq!(s.queries(), kept, "no query while the record lives");

    // Past the smallest TTL (60 s, not 600): resolved again.
    jump(Duration::from_secs(31)).await;
    let (a, asked) = s.get_asked("/20.500.1/ttl").await;
    assert_eq!(a.header_value("X-Cache"), Some("miss"));
    assert!(asked);
    assert!((59..=60).contains(&expires_in(&a)), "{}", expires_in(&a));

    // TTL 0: never kept.
    for _ in 0..3 {
        let (a, asked) = s.get_asked("/20.500.1/zero").await;
        assert_eq!(
            seen(&a),
            (302, Some("https://a.example/zero"), Some("miss"))
        );
        assert!(asked);
    }

    // An answer that resolves nothing says nothing of the cache.
    let a = s.get("/robots.txt").await;
    assert_eq!((a.status, a.header_value("X-Cache")), (200, None));
}

#[tokio::test]
async fn not_found_is_kept_for_the_negative_ttl() {
    let s = Setup::new(&["--negative-ttl-secs", "5"]).await;
    let (a, asked) = s.get_asked("/20.500.1/new").await;
    assert_eq!((a.status, a.header_value("X-Cache")), (404, Some("miss")));
    assert!(asked);
    let kept = s.queries();
    // A registration now is not seen until the negative TTL has passed...
    s.store
        .insert("20.500.1/new", vec![url("https://a.example/new", 86_400)]);
    let a = s.get("/20.500.1/new").await;
    assert_eq!((a.status, a.header_value("X-Cache")), (404, Some("hit")));
    let api = s.get("/api/handles/20.500.1/new").await;
    assert_eq!(
        (api.status, api.header_value("X-Cache")),
        (404, Some("hit"))
    );
    jump(Duration::from_secs(4)).await;
    assert_eq!(s.get("/20.500.1/new").await.status, 404);
    assert_eq!(s.queries(), kept, "no query while \"not found\" is kept");
    // ...and then is.
    jump(Duration::from_secs(2)).await;
    let (a, asked) = s.get_asked("/20.500.1/new").await;
    assert_eq!(seen(&a), (302, Some("https://a.example/new"), Some("miss")));
    assert!(asked);

    // No matching values: kept the same way.
    let (a, asked) = s.get_asked("/20.500.1/new?type=EMAIL&noredirect").await;
    assert_eq!((a.header_value("X-Cache"), asked), (Some("miss"), true));
    let (a, asked) = s.get_asked("/20.500.1/new?type=EMAIL&noredirect").await;
    assert_eq!((a.header_value("X-Cache"), asked), (Some("hit"), false));
}

#[tokio::test]
async fn while_the_upstream_fails_the_last_record_answers_stale() {
    let s = Setup::new(&["--stale-if-error-secs", "100"]).await;
    s.store
        .insert("20.500.1/s", vec![url("https://a.example/s", 10)]);
    let a = s.get("/20.500.1/s").await;
    assert_eq!(seen(&a), (302, Some("https://a.example/s"), Some("miss")));

    // The server stops answering; the record expires.
    s.server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    jump(Duration::from_secs(11)).await;
    let before = s.queries();
    let a = s.get("/20.500.1/s").await;
    assert_eq!(seen(&a), (302, Some("https://a.example/s"), Some("stale")));
    assert!(expires_in(&a) <= 0, "a stale answer expires in the past");
    assert!(s.queries() > before, "the upstream was asked");
    // Within a second of the failure, requests are answered stale without asking again.
    let asked = s.queries();
    for _ in 0..5 {
        let a = s.get("/20.500.1/s").await;
        assert_eq!(a.header_value("X-Cache"), Some("stale"));
    }
    assert_eq!(s.queries(), asked);
    // A handle the cache never had: the failure itself.
    let a = s.get("/20.500.1/never").await;
    assert_eq!((a.status, a.header_value("X-Cache")), (500, Some("miss")));

    // Past the stale window (expired 100 s ago): the failure.
    jump(Duration::from_secs(101)).await;
    let a = s.get("/20.500.1/s").await;
    assert_eq!((a.status, a.header_value("X-Cache")), (500, Some("miss")));

    // The server is back: resolved again (once the resolver's breaker, open for a silent
    // server, lets a probe through: at most a minute).
    s.server.set_faults(Faults::default());
    jump(Duration::from_secs(61)).await;
    let a = s.get("/20.500.1/s").await;
    assert_eq!(seen(&a), (302, Some("https://a.example/s"), Some("miss")));
}

#[tokio::test]
async fn trusted_clients_bypass_the_cache_within_the_limit() {
    let s = Setup::new(&[
        "--bypass-from",
        "127.0.0.0/8",
        "--bypass-token",
        "s3cret",
        "--bypass-per-second",
        "1",
    ])
    .await;
    let no_cache = [("Cache-Control", "no-cache")];
    s.store
        .insert("20.500.1/b", vec![url("https://a.example/old", 86_400)]);
    assert_eq!(s.get("/20.500.1/b").await.status, 302);
    s.store
        .insert("20.500.1/b", vec![url("https://a.example/new", 86_400)]);
    s.server.reset_counters();

    // An untrusted client asking for it: the cache's answer.
    let a = ask(&s.resolution, "/20.500.1/b", "192.0.2.1", &no_cache).await;
    assert_eq!(seen(&a), (302, Some("https://a.example/old"), Some("hit")));
    // A trusted one not asking: the cache's answer.
    let a = s.get("/20.500.1/b").await;
    assert_eq!(a.header_value("Location"), Some("https://a.example/old"));
    // A trusted one asking: the upstream's, kept for everyone.
    assert_eq!(s.queries(), 0);
    let a = ask(&s.resolution, "/20.500.1/b", "127.0.0.1", &no_cache).await;
    assert_eq!(
        seen(&a),
        (302, Some("https://a.example/new"), Some("bypass"))
    );
    let kept = s.queries();
    assert!(kept > 0);
    let a = ask(&s.resolution, "/20.500.1/b", "192.0.2.1", &[]).await;
    assert_eq!(seen(&a), (302, Some("https://a.example/new"), Some("hit")));

    // Over the limit (1 a second): from the cache, the upstream not asked.
    s.store
        .insert("20.500.1/b", vec![url("https://a.example/newer", 86_400)]);
    for _ in 0..20 {
        let a = ask(&s.resolution, "/20.500.1/b", "127.0.0.1", &no_cache).await;
        assert_eq!(seen(&a), (302, Some("https://a.example/new"), Some("hit")));
    }
    assert_eq!(s.queries(), kept);

    // A second later, the token lets any client bypass.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let token = [("Pragma", "no-cache"), ("X-Bypass-Token", "s3cret")];
    let a = ask(&s.resolution, "/20.500.1/b", "192.0.2.1", &token).await;
    assert_eq!(
        seen(&a),
        (302, Some("https://a.example/newer"), Some("bypass"))
    );
    assert!(s.queries() > kept);
    let kept = s.queries();
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let wrong = [("Pragma", "no-cache"), ("X-Bypass-Token", "s3crep")];
    let a = ask(&s.resolution, "/20.500.1/b", "192.0.2.1", &wrong).await;
    assert_eq!(a.header_value("X-Cache"), Some("hit"));
    assert_eq!(s.queries(), kept);
}
