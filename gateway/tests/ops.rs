//! The operator's side of the `handle-gateway` binary: `--check-config`, the trusted-proxy
//! rule (forwarding headers believed only from a trusted peer), the per-client rate limit
//! (`429` with `Retry-After`), the public base URL, `/healthz`, `/metrics`, the access log,
//! HTTPS with a certificate made here and the request timeout (`504`).

// The conformance test's raw client (its keep-alive side is not used here).
#[allow(dead_code)]
#[path = "conformance/http.rs"]
mod http;

#[path = "support/process.rs"]
mod process;

#[cfg(feature = "geoip")]
#[path = "support/mmdb.rs"]
mod mmdb;

use process::{server_holding, slow_server, start, start_lines};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;

fn get(addr: SocketAddr, target: &str, extra: &str) -> http::Received {
    process::get(addr, target, extra).expect("an answer")
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("handle-gateway-ops-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("a temp file");
    path
}

#[test]
fn check_config_names_the_file_and_the_line() {
    let run = |path: &PathBuf| {
        Command::new(env!("CARGO_BIN_EXE_handle-gateway"))
            .arg("--check-config")
            .arg(path)
            .output()
            .expect("runs")
    };
    let good = temp_file(
        "good.toml",
        "listen = \"127.0.0.1:0\"\nserver = \"127.0.0.1:2641\"\ntrusted_proxies = [\"10.0.0.0/8\"]\n\
         rate_per_second = 5\nburst = 10\nrequest_timeout_ms = 2000\n\
         public_base_url = \"https://hdl.example.org\"\n",
    );
    let out = run(&good);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok"));
    // A value of the wrong type (line 3), an unknown key (line 2), a bad range (line 4).
    for (name, text, line) in [
        ("type.toml", "listen = \"127.0.0.1:0\"\n\nrate_per_second = \"many\"\n", 3),
        ("unknown.toml", "listen = \"127.0.0.1:0\"\nrate_limit = 5\n", 2),
        (
            "range.toml",
            "listen = \"127.0.0.1:0\"\nserver = \"127.0.0.1:2641\"\n# trusted\ntrusted_proxies = [\"10.0.0.0/40\"]\n",
            4,
        ),
    ] {
        let bad = temp_file(name, text);
        let out = run(&bad);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let _ = std::fs::remove_file(&bad);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(name), "{name}: the file is named: {err}");
        assert!(err.contains(&format!("line {line}")), "{name}: line {line}: {err}");
    }
    let _ = std::fs::remove_file(&good);
}

#[cfg(feature = "demo")]
#[test]
fn forwarding_headers_only_from_trusted_peers() {
    let headers = "X-Forwarded-Proto: https\r\nX-Forwarded-Host: hdl.example\r\n";
    // 127.0.0.1 (the test) trusted: the alias redirect names the client's scheme and host.
    let gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--demo",
        "--trusted-proxy",
        "127.0.0.0/8",
    ]);
    let a = get(gw.addr, "/20.500.1/alias", headers);
    assert_eq!(
        (a.status, a.first("location")),
        (301, Some("https://hdl.example/20.500.1/demo"))
    );
    drop(gw);
    // Not trusted: the headers are ignored.
    let gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--demo",
        "--trusted-proxy",
        "10.0.0.0/8",
    ]);
    let a = get(gw.addr, "/20.500.1/alias", headers);
    assert_eq!(a.first("location"), Some("http://gw.example/20.500.1/demo"));
    drop(gw);
    // The public base URL wins over both.
    let gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--demo",
        "--trusted-proxy",
        "127.0.0.0/8",
        "--public-base-url",
        "https://pub.example:8443/",
    ]);
    let a = get(gw.addr, "/20.500.1/alias", headers);
    assert_eq!(
        a.first("location"),
        Some("https://pub.example:8443/20.500.1/demo")
    );
    let a = get(gw.addr, "/healthz", "");
    assert_eq!((a.status, a.body.as_slice()), (200, b"ok\n".as_slice()));
}

#[cfg(feature = "demo")]
#[test]
fn rate_limit_per_client_answers_429_with_retry_after() {
    let limited = |trust: &str| {
        start(&[
            "--listen",
            "127.0.0.1:0",
            "--demo",
            "--trusted-proxy",
            trust,
            "--rate-per-second",
            "1",
            "--burst",
            "2",
        ])
    };
    let xff = |a: &str| format!("X-Forwarded-For: {a}\r\n");
    // Trusted peer: each forwarded client has its own allowance.
    let gw = limited("127.0.0.0/8");
    // (One request first that fills the cache, so that the next ones take no time.)
    assert_eq!(
        get(gw.addr, "/20.500.1/demo", &xff("192.0.2.9")).status,
        302
    );
    for _ in 0..2 {
        assert_eq!(
            get(gw.addr, "/20.500.1/demo", &xff("192.0.2.1")).status,
            302
        );
    }
    let a = get(gw.addr, "/20.500.1/demo", &xff("192.0.2.1"));
    assert_eq!((a.status, a.first("retry-after")), (429, Some("1")));
    assert_eq!(
        get(gw.addr, "/20.500.1/demo", &xff("192.0.2.2")).status,
        302
    );
    drop(gw);
    // Untrusted peer: `X-Forwarded-For` is ignored, the peer (127.0.0.1) is the client.
    let gw = limited("10.0.0.0/8");
    assert_eq!(
        get(gw.addr, "/20.500.1/demo", &xff("192.0.2.1")).status,
        302
    );
    assert_eq!(
        get(gw.addr, "/20.500.1/demo", &xff("192.0.2.2")).status,
        302
    );
    let a = get(gw.addr, "/20.500.1/demo", &xff("192.0.2.3"));
    assert_eq!(a.status, 429);
    let secs: u64 = a
        .first("retry-after")
        .and_then(|s| s.parse().ok())
        .expect("Retry-After");
    assert!((1..=2).contains(&secs), "{secs}");
}

#[cfg(feature = "demo")]
#[test]
fn metrics_and_the_access_log() {
    let log = std::env::temp_dir().join(format!(
        "handle-gateway-ops-{}-access.log",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&log);
    let gw = start_lines(
        &[
            "--listen",
            "127.0.0.1:0",
            "--demo",
            "--metrics-listen",
            "127.0.0.1:0",
            "--access-log",
            log.to_str().expect("UTF-8"),
        ],
        2,
    );
    let metrics = gw.metrics.expect("the metrics address");
    assert_eq!(
        get(gw.addr, "/20.500.1/demo", "").first("x-cache"),
        Some("miss")
    );
    assert_eq!(
        get(gw.addr, "/20.500.1/demo", "").first("x-cache"),
        Some("hit")
    );
    assert_eq!(
        get(
            gw.addr,
            "/20.500.1/nothing",
            "Referer: http://r.example/\r\nUser-Agent: t \"1\"\r\n"
        )
        .status,
        404
    );
    // /metrics is on its own address only: on the proxy's it is a handle (0.NA/metrics).
    assert_ne!(get(gw.addr, "/metrics", "").status, 200);
    let m = get(metrics, "/metrics", "");
    assert_eq!(m.status, 200);
    assert!(m
        .first("content-type")
        .is_some_and(|t| t.starts_with("text/plain; version=0.0.4")));
    let text = String::from_utf8_lossy(&m.body).into_owned();
    for line in [
        "handle_gateway_requests_total{status=\"302\"} 2",
        "handle_gateway_requests_total{status=\"404\"} 2",
        "handle_gateway_cache_total{result=\"hit\"} 1",
        "handle_gateway_cache_total{result=\"miss\"} 3",
        "handle_gateway_request_duration_seconds_count 4",
        "handle_gateway_request_duration_seconds_bucket{le=\"+Inf\"} 4",
        "handle_gateway_in_flight 0",
        "handle_gateway_upstream_errors_total 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    assert_eq!(get(metrics, "/healthz", "").status, 200);
    // The log is buffered and written out every second: its four lines within five.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::fs::read_to_string(&log).map_or(0, |t| t.lines().count()) < 4
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(gw);
    let lines = std::fs::read_to_string(&log).expect("the access log");
    let _ = std::fs::remove_file(&log);
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    let (head, rest) = lines[0].split_once(" [").expect("a date");
    assert_eq!(head, "127.0.0.1 - -");
    let (date, rest) = rest.split_once("] ").expect("the date's end");
    assert!(
        date.len() == 26 && date.ends_with(" +0000") && date.as_bytes()[2] == b'/',
        "{date}"
    );
    let bytes = rest
        .strip_prefix("\"GET /20.500.1/demo HTTP/1.1\" 302 ")
        .and_then(|r| r.strip_suffix(" \"-\" \"-\""))
        .unwrap_or_else(|| panic!("{}", lines[0]));
    assert!(bytes == "-" || bytes.parse::<u64>().is_ok(), "{bytes}");
    assert!(
        lines[2].contains("\"GET /20.500.1/nothing HTTP/1.1\" 404 "),
        "{}",
        lines[2]
    );
    assert!(
        lines[2].ends_with(" \"http://r.example/\" \"t \\\"1\\\"\""),
        "{}",
        lines[2]
    );
}

/// HTTPS with a certificate made here: a rustls client that trusts it gets the answer, and
/// an alias's redirect names `https://`.
#[cfg(feature = "demo")]
#[tokio::test]
async fn https_with_a_test_certificate() {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls;

    let made =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).expect("a certificate");
    let cert = temp_file("cert.pem", &made.cert.pem());
    let key = temp_file("key.pem", &made.key_pair.serialize_pem());
    let gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--demo",
        "--tls-cert",
        cert.to_str().expect("UTF-8"),
        "--tls-key",
        key.to_str().expect("UTF-8"),
    ]);
    let mut roots = rustls::RootCertStore::empty();
    roots.add(made.cert.der().clone()).expect("the root");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(gw.addr)
        .await
        .expect("connects");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("a name");
    let mut tls = connector.connect(name, tcp).await.expect("the handshake");
    tls.write_all(b"GET /20.500.1/alias HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("the request");
    let mut raw = Vec::new();
    // (A close without close_notify ends the read with an error after the answer.)
    let _ = tls.read_to_end(&mut raw).await;
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 301"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.eq_ignore_ascii_case("location: https://localhost/20.500.1/demo")),
        "{text}"
    );
    // Plain HTTP on the HTTPS port gets no answer.
    let mut plain = tokio::net::TcpStream::connect(gw.addr)
        .await
        .expect("connects");
    let _ = plain.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
    let mut back = Vec::new();
    let _ = plain.read_to_end(&mut back).await;
    assert!(!String::from_utf8_lossy(&back).starts_with("HTTP/1.1 200"));
    drop(gw);
    let _ = std::fs::remove_file(&cert);
    let _ = std::fs::remove_file(&key);
}

/// A request over `--request-timeout-ms` is answered `504`, counted in the metrics.
#[test]
fn a_slow_resolution_times_out_with_504() {
    use std::time::{Duration, Instant};

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = slow_server(&runtime, Duration::from_millis(1500));
    let gw = start_lines(
        &[
            "--listen",
            "127.0.0.1:0",
            "--server",
            &server.addr().to_string(),
            "--timeout-ms",
            "10000",
            "--request-timeout-ms",
            "300",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
        2,
    );
    let started = Instant::now();
    let a = get(gw.addr, "/20.500.7/slow", "");
    assert_eq!(a.status, 504);
    assert!(
        started.elapsed() < Duration::from_millis(1400),
        "{:?}",
        started.elapsed()
    );
    let m = get(gw.metrics.expect("the metrics address"), "/metrics", "");
    let text = String::from_utf8_lossy(&m.body).into_owned();
    assert!(
        text.lines().any(|l| l == "handle_gateway_timeouts_total 1"),
        "{text}"
    );
}

#[test]
fn client_address_chooses_among_locations_only_when_asked() {
    // Two locations: the one for clients in 10.0.0.0/8 weighs nothing, so only the address
    // rule can choose it.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = server_holding(
        &runtime,
        "20.500.7/near",
        "10320/loc",
        "<locations><location href=\"https://near.example/\" addresses=\"10.0.0.0/8\" \
         weight=\"0\"/><location href=\"https://far.example/\" weight=\"1\"/></locations>",
        Default::default(),
    );
    let upstream = server.addr().to_string();
    let from_10 = "X-Forwarded-For: 10.1.2.3\r\n";
    let base = [
        "--listen",
        "127.0.0.1:0",
        "--server",
        &upstream,
        "--trusted-proxy",
        "127.0.0.0/8",
    ];
    // Off by default: the client in 10.0.0.0/8 gets the weighted choice, an answer for
    // anyone (no `Cache-Control`, as the reference).
    let gw = start(&base);
    for _ in 0..5 {
        let a = get(gw.addr, "/20.500.7/near", from_10);
        assert_eq!(a.first("location"), Some("https://far.example/"));
        assert_eq!(a.first("cache-control"), None);
    }
    drop(gw);
    // On: the trusted proxy's client address chooses the location for 10.0.0.0/8; a client
    // outside every range (the test itself, 127.0.0.1) still gets the weighted choice.
    let mut on = base.to_vec();
    on.push("--match-client-address");
    let gw = start(&on);
    // Either answer depends on the client: private, for no shared cache to pass on.
    for _ in 0..5 {
        let a = get(gw.addr, "/20.500.7/near", from_10);
        assert_eq!(a.first("location"), Some("https://near.example/"));
        assert_eq!(a.first("cache-control"), Some("private"));
        let a = get(gw.addr, "/20.500.7/near", "");
        assert_eq!(a.first("location"), Some("https://far.example/"));
        assert_eq!(a.first("cache-control"), Some("private"));
    }
}

#[cfg(feature = "geoip")]
#[test]
fn geoip_country_chooses_among_locations_unless_the_request_names_one() {
    // A location for the Netherlands that weighs nothing: only the country rule chooses it.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = server_holding(
        &runtime,
        "20.500.7/geo",
        "10320/loc",
        "<locations><location href=\"https://nl.example/\" country=\"nl\" weight=\"0\"/>\
         <location href=\"https://any.example/\" weight=\"1\"/></locations>",
        Default::default(),
    );
    let db = temp_file("countries.mmdb", "");
    std::fs::write(&db, mmdb::countries(&[(10, "NL"), (11, "US")])).expect("the database");
    let upstream = server.addr().to_string();
    let db_arg = db.to_string_lossy().into_owned();
    let gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--server",
        &upstream,
        "--trusted-proxy",
        "127.0.0.0/8",
        "--geoip-db",
        &db_arg,
    ]);
    for _ in 0..5 {
        // A client in 10.0.0.0/8 (the database's NL), named by the trusted proxy.
        let a = get(gw.addr, "/20.500.7/geo", "X-Forwarded-For: 10.1.2.3\r\n");
        assert_eq!(a.first("location"), Some("https://nl.example/"));
        assert_eq!(a.first("cache-control"), Some("private"));
        // In 11.0.0.0/8 (US: no location of its own) and at 127.0.0.1 (not in the
        // database): the weighted choice.
        let a = get(gw.addr, "/20.500.7/geo", "X-Forwarded-For: 11.1.2.3\r\n");
        assert_eq!(a.first("location"), Some("https://any.example/"));
        let a = get(gw.addr, "/20.500.7/geo", "");
        assert_eq!(a.first("location"), Some("https://any.example/"));
        assert_eq!(
            a.first("cache-control"),
            None,
            "no country known: for anyone"
        );
        // `?country=` wins over the database, as the reference reads only it.
        let a = get(
            gw.addr,
            "/20.500.7/geo?country=us",
            "X-Forwarded-For: 10.1.2.3\r\n",
        );
        assert_eq!(a.first("location"), Some("https://any.example/"));
        let a = get(gw.addr, "/20.500.7/geo?country=NL", "");
        assert_eq!(a.first("location"), Some("https://nl.example/"));
        assert_eq!(a.first("cache-control"), None, "the URL names the country");
    }
    drop(gw);
    // A file that is no database: refused by --check-config and at start.
    let bad = temp_file("bad.mmdb", "not a database");
    let config = temp_file(
        "geoip.toml",
        &format!(
            "server = \"{upstream}\"\ngeoip_db = \"{}\"\n",
            bad.display()
        ),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_handle-gateway"))
        .arg("--check-config")
        .arg(&config)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("geoip_db") && err.contains("bad.mmdb"),
        "{err}"
    );
    let config = temp_file(
        "geoip-good.toml",
        &format!("server = \"{upstream}\"\ngeoip_db = \"{}\"\n", db.display()),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_handle-gateway"))
        .arg("--check-config")
        .arg(&config)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn max_in_flight_per_server_reaches_the_resolver() {
    use std::time::{Duration, Instant};
    // A server that answers after 150 ms, six different handles asked at once through a
    // gateway that lets one request at a time reach it: they take six answer times one
    // after the other (without the bound, the six answers come together, in about one).
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let server = slow_server(&runtime, Duration::from_millis(150));
    let gw = start(&[
        "--listen",
        "127.0.0.1:0",
        "--server",
        &server.addr().to_string(),
        "--max-in-flight-per-server",
        "1",
    ]);
    let started = Instant::now();
    let askers: Vec<_> = (0..6)
        .map(|i| {
            let addr = gw.addr;
            std::thread::spawn(move || get(addr, &format!("/20.500.7/n{i}"), "").status)
        })
        .collect();
    for a in askers {
        assert_eq!(a.join().expect("an answer"), 404);
    }
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(6 * 150), "{took:?}");
}
