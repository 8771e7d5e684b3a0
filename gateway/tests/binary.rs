//! The `handle-gateway` binary as a user starts it: `--demo` (the bundled test network),
//! `--config FILE` (a TOML file naming the server), and its stop on SIGTERM.

// The conformance test's raw client (its keep-alive side is not used here).
#[allow(dead_code)]
#[path = "conformance/http.rs"]
mod http;

#[path = "support/process.rs"]
mod process;

use process::{slow_server, start};
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;

use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::wire::HandleValue;

fn get(addr: SocketAddr, target: &str, extra: &str) -> http::Received {
    process::get(addr, target, extra).expect("an answer")
}

#[cfg(feature = "demo")]
#[test]
fn demo_redirects_and_stops_on_sigterm() {
    let mut gw = start(&["--listen", "127.0.0.1:0", "--demo"]);
    let a = get(gw.addr, "/20.500.1/demo", "");
    assert_eq!(
        (a.status, a.first("location")),
        (302, Some("https://example.org/demo"))
    );
    assert!(a.first("expires").is_some());
    let a = get(gw.addr, "/hdl:20.500.1/alias?x=1", "");
    assert_eq!(
        (a.status, a.first("location")),
        (301, Some("http://gw.example/20.500.1/demo?x=1"))
    );
    let a = get(gw.addr, "/20.500.1/loc", "Accept: application/json\r\n");
    assert_eq!(a.first("location"), Some("https://example.org/data.json"));
    assert_eq!(a.first("vary"), Some("Accept"));
    let a = get(gw.addr, "/20.500.1/nothing", "");
    assert_eq!(a.status, 404);

    #[cfg(unix)]
    {
        use std::time::{Duration, Instant};
        let pid = gw.child.id().to_string();
        let status = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(exit) = gw.child.try_wait().expect("wait") {
                assert!(exit.success(), "exit after SIGTERM: {exit}");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "still running 10 s after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn config_file_names_the_server() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = Arc::new(Store::new());
    store.insert(
        "20.500.7/x",
        vec![HandleValue::new(1, "URL", "https://example.org/x")],
    );
    let server = runtime
        .block_on(TestServer::start(TestServerConfig::new(store.clone())))
        .expect("the test server starts");
    let dir = std::env::temp_dir().join(format!("handle-gateway-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("gateway.toml");
    std::fs::write(
        &file,
        format!(
            "listen = \"127.0.0.1:0\"\nserver = \"{}\"\ntimeout_ms = 5000\n\
             cache_size_mb = 16\nnegative_ttl_secs = 1\nbypass_from = [\"127.0.0.0/8\"]\n\
             bypass_per_second = 5\n",
            server.addr()
        ),
    )
    .expect("the config file");
    let gw = start(&["--config", file.to_str().expect("a UTF-8 path")]);
    let a = get(gw.addr, "/20.500.7/x?urlappend=%2Fmore", "");
    assert_eq!(
        (a.status, a.first("location")),
        (302, Some("https://example.org/x/more"))
    );
    // The cache's keys: the second answer from the cache; a registration changed since,
    // seen at once by a client of `bypass_from` that asks for it.
    assert_eq!(
        get(gw.addr, "/20.500.7/x", "").first("x-cache"),
        Some("hit")
    );
    store.insert(
        "20.500.7/x",
        vec![HandleValue::new(1, "URL", "https://example.org/y")],
    );
    assert_eq!(
        get(gw.addr, "/20.500.7/x", "").first("location"),
        Some("https://example.org/x")
    );
    let a = get(gw.addr, "/20.500.7/x", "Cache-Control: no-cache\r\n");
    assert_eq!(
        (a.first("location"), a.first("x-cache")),
        (Some("https://example.org/y"), Some("bypass"))
    );
    drop(gw);
    let _ = std::fs::remove_dir_all(&dir);

    // A bad file is named and refused.
    let bad = std::env::temp_dir().join(format!("handle-gateway-bad-{}.toml", std::process::id()));
    std::fs::write(&bad, "listen = 5\n").expect("the bad file");
    let out = Command::new(env!("CARGO_BIN_EXE_handle-gateway"))
        .args(["--config", bad.to_str().expect("UTF-8")])
        .output()
        .expect("runs");
    let _ = std::fs::remove_file(&bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--config") && err.contains("listen"), "{err}");
}

/// SIGTERM while a request is in flight: the request is answered, then the gateway exits.
#[cfg(unix)]
#[test]
fn sigterm_lets_the_request_in_flight_finish() {
    use std::time::{Duration, Instant};

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = slow_server(&runtime, Duration::from_millis(1500));
    let mut gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--server",
        &server.addr().to_string(),
        "--timeout-ms",
        "10000",
    ]);
    let addr = gw.addr;
    let request = std::thread::spawn(move || get(addr, "/20.500.7/slow", ""));
    std::thread::sleep(Duration::from_millis(400));
    let pid = gw.child.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let answer = request.join().expect("the request thread");
    assert_eq!(
        (answer.status, answer.first("location")),
        (302, Some("https://example.org/slow"))
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(exit) = gw.child.try_wait().expect("wait") {
            assert!(exit.success(), "exit after SIGTERM: {exit}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still running 10 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
