//! The shared Redis tier (feature `redis`): two `handle-gateway` binaries on one real
//! `redis-server` (started here on a free loopback port, no persistence, killed at the end),
//! both resolving at the library's loopback test server, whose counters say which requests
//! reached it. A record fetched through one gateway is served by the other without a query;
//! killing `redis-server` mid-run fails no request; a gateway starts without it, and the
//! gateways share again once it is back.
//!
//! It needs `redis-server` (Debian's package `redis-server`; `.ci/run` installs it,
//! `HANDLE_GATEWAY_REDIS_SERVER` names another binary) and fails, never skips, without it.

// The conformance test's raw client (its keep-alive side is not used here).
#[allow(dead_code)]
#[path = "conformance/http.rs"]
mod http;

#[path = "support/process.rs"]
mod process;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::wire::HandleValue;

/// A `redis-server` on 127.0.0.1, killed when dropped.
struct Redis {
    child: Option<Child>,
    port: u16,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Redis {
    fn start_on(port: u16) -> Redis {
        let bin = std::env::var("HANDLE_GATEWAY_REDIS_SERVER").unwrap_or("redis-server".into());
        let child = Command::new(&bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{bin} cannot start ({e}): the Redis tests need Debian's redis-server \
                     package (.ci/run installs it; HANDLE_GATEWAY_REDIS_SERVER names another \
                     binary)"
                )
            });
        let redis = Redis {
            child: Some(child),
            port,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// SIGKILL, as a crash.
    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The gateway's keys in it.
    fn keys(&self) -> Vec<String> {
        let client = redis::Client::open(self.url()).expect("a client");
        let mut c = client.get_connection().expect("a connection");
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg("handle-gateway:*")
            .query(&mut c)
            .expect("KEYS");
        keys.sort();
        keys
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A `handle-gateway` binary, killed when dropped.
type Gateway = process::Running;

fn gateway(server: SocketAddr, redis_url: &str) -> Gateway {
    process::start(&[
        "--listen",
        "127.0.0.1:0",
        "--server",
        &server.to_string(),
        "--redis",
        redis_url,
    ])
}

fn get(gw: &Gateway, target: &str) -> http::Received {
    process::get(gw.addr, target, "").unwrap_or_else(|e| http::Received {
        status: 0,
        headers: vec![("x-test-error".into(), e.to_string())],
        body: Vec::new(),
    })
}

fn seen(a: &http::Received) -> (u16, Option<&str>, Option<&str>) {
    (a.status, a.first("location"), a.first("x-cache"))
}

/// The test server with handles `20.500.1/h0` .. `h{n-1}`, each to `https://a.example/N`.
fn upstream(runtime: &tokio::runtime::Runtime, n: usize) -> (TestServer, Arc<Store>) {
    let store = Arc::new(Store::new());
    for i in 0..n {
        store.insert(
            format!("20.500.1/h{i}"),
            vec![HandleValue::new(1, "URL", format!("https://a.example/{i}"))],
        );
    }
    let server = runtime
        .block_on(TestServer::start(TestServerConfig::new(store.clone())))
        .expect("the test server starts");
    (server, store)
}

fn queries(server: &TestServer) -> u64 {
    server.udp_requests() + server.tcp_requests()
}

#[test]
fn a_record_fetched_through_one_gateway_is_served_by_the_other() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let (server, _store) = upstream(&runtime, 2);
    let redis = Redis::start_on(free_port());
    let a = gateway(server.addr(), &redis.url());
    let b = gateway(server.addr(), &redis.url());
    server.reset_counters();

    let first = get(&a, "/20.500.1/h0");
    assert_eq!(
        seen(&first),
        (302, Some("https://a.example/0"), Some("miss"))
    );
    assert_eq!(queries(&server), 1);
    let second = get(&b, "/20.500.1/h0");
    assert_eq!(
        seen(&second),
        (302, Some("https://a.example/0"), Some("hit"))
    );
    assert_eq!(
        queries(&server),
        1,
        "the other gateway asked no one but Redis"
    );
    // The record kept its age: both answers expire at the same time.
    let at = |r: &http::Received| {
        httpdate::parse_http_date(r.first("expires").expect("Expires")).expect("a date")
    };
    let (e1, e2) = (at(&first), at(&second));
    let apart = e1.max(e2).duration_since(e1.min(e2)).unwrap_or_default();
    assert!(apart <= Duration::from_secs(1), "Expires {apart:?} apart");

    // "Not found", and the values page and the REST API of a record: shared the same way.
    // (Counts compared for "no query" only: once a resolver has measured the server's round
    // trip, its UDP transport may send a slow query again, one query two datagrams.)
    assert_eq!(seen(&get(&a, "/20.500.1/none")), (404, None, Some("miss")));
    let kept = queries(&server);
    assert_eq!(seen(&get(&b, "/20.500.1/none")), (404, None, Some("hit")));
    assert_eq!(queries(&server), kept);
    assert_eq!(seen(&get(&b, "/20.500.1/h1?noredirect")).2, Some("miss"));
    let kept = queries(&server);
    assert_eq!(seen(&get(&a, "/api/handles/20.500.1/h1")).2, Some("hit"));
    assert_eq!(queries(&server), kept);
    assert_eq!(
        redis.keys(),
        [
            "handle-gateway:20.500.1/h0",
            "handle-gateway:20.500.1/h1",
            "handle-gateway:20.500.1/none"
        ]
    );
}

#[test]
fn killing_redis_mid_run_fails_no_request() {
    const HANDLES: usize = 60;
    const CLIENTS: usize = 4;
    const EACH: usize = 60;
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let (server, store) = upstream(&runtime, HANDLES + 40);
    let port = free_port();
    let mut redis = Redis::start_on(port);
    let gateways = Arc::new([
        gateway(server.addr(), &redis.url()),
        gateway(server.addr(), &redis.url()),
    ]);

    let done = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let served = Arc::new(Mutex::new(
        std::collections::BTreeMap::<String, usize>::new(),
    ));
    let slowest = Arc::new(Mutex::new(Duration::ZERO));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (gateways, done) = (gateways.clone(), done.clone());
            let (failures, slowest, served) = (failures.clone(), slowest.clone(), served.clone());
            std::thread::spawn(move || {
                for i in 0..EACH {
                    // The first half of the run on the first half of the handles, the
                    // second (after the kill) on the others: new to both gateways, each
                    // looked for in Redis first.
                    let half = HANDLES / 2;
                    let n = (c * 7 + i * 3) % half + if i < EACH / 2 { 0 } else { half };
                    let started = Instant::now();
                    // A client's requests for one handle come 10 apart: to each gateway.
                    let got = get(&gateways[(c + i / 10) % 2], &format!("/20.500.1/h{n}"));
                    let took = started.elapsed();
                    let mut s = slowest.lock().expect("a lock");
                    *s = (*s).max(took);
                    drop(s);
                    *served
                        .lock()
                        .expect("a lock")
                        .entry(got.first("x-cache").unwrap_or("(none)").to_owned())
                        .or_default() += 1;
                    let want = format!("https://a.example/{n}");
                    if (got.status, got.first("location")) != (302, Some(want.as_str())) {
                        failures.lock().expect("a lock").push(format!(
                            "client {c} request {i}: {} {:?} {:?}",
                            got.status,
                            got.first("location"),
                            got.first("x-test-error")
                        ));
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        })
        .collect();
    // Half-way through: redis-server dies.
    while done.load(Ordering::Relaxed) < CLIENTS * EACH / 2 {
        std::thread::sleep(Duration::from_millis(2));
    }
    redis.kill();
    let killed_at = done.load(Ordering::Relaxed);
    for c in clients {
        c.join().expect("a client thread");
    }
    let failures = failures.lock().expect("a lock");
    assert!(
        failures.is_empty(),
        "{} of {} requests failed:\n{}",
        failures.len(),
        CLIENTS * EACH,
        failures.join("\n")
    );
    assert!(
        killed_at < CLIENTS * EACH,
        "redis-server was killed mid-run"
    );
    let slowest = *slowest.lock().expect("a lock");
    println!(
        "{} requests, redis-server killed after {killed_at}: none failed; X-Cache {:?}; \
         the slowest took {slowest:?}",
        CLIENTS * EACH,
        served.lock().expect("a lock")
    );
    assert!(
        slowest < Duration::from_secs(3),
        "a request took {slowest:?}"
    );

    // Without Redis each gateway goes on alone: a new record is resolved by each.
    let [a, b] = &*gateways;
    let before = queries(&server);
    assert_eq!(seen(&get(a, "/20.500.1/h61")).2, Some("miss"));
    assert_eq!(seen(&get(b, "/20.500.1/h61")).2, Some("miss"));
    assert!(
        queries(&server) >= before + 2,
        "each gateway asked the server"
    );
    // A gateway starts without it too.
    let c = gateway(server.addr(), &redis.url());
    assert_eq!(
        seen(&get(&c, "/20.500.1/h62")),
        (302, Some("https://a.example/62"), Some("miss"))
    );

    // redis-server back on its port: the gateways share again (once they have reconnected,
    // within a few seconds).
    let _redis = Redis::start_on(port);
    let back = Instant::now();
    let deadline = back + Duration::from_secs(30);
    let mut n = 63;
    loop {
        let path = format!("/20.500.1/h{n}");
        store.insert(
            &path[1..],
            vec![HandleValue::new(1, "URL", format!("https://a.example/{n}"))],
        );
        assert_eq!(get(a, &path).status, 302);
        if get(b, &path).first("x-cache") == Some("hit") {
            println!(
                "shared again {:?} after redis-server's return",
                back.elapsed()
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the gateways did not share again within 30 s of redis-server's return"
        );
        n += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
}
