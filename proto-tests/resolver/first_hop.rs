//! A first hop no chosen transport reaches (`resolve --root 127.0.0.1:2641 --transport
//! http`): refused before anything is sent, with the form of `--root` that works, never a
//! failure at a placeholder address such as `127.0.0.1:0`.

use std::sync::Arc;

use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::TransportKind;
use handle_resolver::wire::HandleValue;
use handle_resolver::{BuildError, Resolver, TransportPreference};

use super::cli::{args, run};
use crate::support::examples::example;

/// A server that also serves the native protocol over HTTP, holding 20.500.1/x (its own
/// root: `0.NA/20.500.1` names its site).
async fn server() -> TestServer {
    let store = Arc::new(Store::new());
    let mut config = TestServerConfig::new(store.clone());
    config.http = true;
    let server = TestServer::start(config).await.unwrap();
    store.insert("0.NA/20.500.1", vec![server.site_value(1)]);
    store.insert(
        "20.500.1/x",
        vec![HandleValue::new(1, "URL", "https://example.org/x")],
    );
    server
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_native_root_with_transport_http_is_refused_up_front() {
    let bin = example("resolve");
    let server = server().await;
    let native = server.addr().to_string();
    let http = format!("http://{}", server.http_addr().unwrap());

    for option in ["--root", "--server"] {
        let out = run(
            &bin,
            args(&[option, &native, "--transport", "http", "20.500.1/x"]),
        )
        .await;
        let err = stderr(&out);
        // Bad input (2), not a network failure (3) at an address nobody gave.
        assert_eq!(out.status.code(), Some(2), "{option}: {err}");
        assert!(!err.contains(":0"), "{option}: {err}");
        assert!(
            err.starts_with(&format!("error: {option} {native}: ")),
            "{option}: {err}"
        );
        assert!(err.contains(&format!("{option} http://HOST:PORT")), "{err}");
    }
    // An http:// root with --transport tcp: the other way round.
    let out = run(
        &bin,
        args(&["--root", &http, "--transport", "tcp", "20.500.1/x"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--root HOST:PORT"),
        "{}",
        stderr(&out)
    );
    // Nothing was sent by any of them.
    assert_eq!(server.udp_requests(), 0);
    assert_eq!(server.tcp_requests(), 0);
    assert_eq!(server.http_requests(), 0);

    // The forms that work: the HTTP interface as the root, the native address over UDP.
    let out = run(
        &bin,
        args(&["--root", &http, "--transport", "http", "20.500.1/x"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("https://example.org/x"));
    assert!(server.http_requests() > 0);
    let out = run(&bin, args(&["--root", &native, "20.500.1/x"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn the_builder_refuses_a_first_hop_no_transport_reaches() {
    let addr = "127.0.0.1:2641".parse().unwrap();
    let e = Resolver::builder()
        .root_server(addr)
        .transport(TransportPreference::Http)
        .build()
        .unwrap_err();
    assert_eq!(
        e,
        BuildError::NoTransport {
            server: false,
            transports: vec![TransportKind::Http, TransportKind::Https],
        }
    );
    assert_eq!(
        e.to_string(),
        "the root offers none of the chosen transports (http, https)"
    );
    let e = Resolver::builder()
        .server_http(addr, None, false)
        .transport(TransportPreference::Tcp)
        .build()
        .unwrap_err();
    assert!(matches!(e, BuildError::NoTransport { server: true, .. }));
    // What a transport reaches builds; so does a proxy, which never asks the root.
    assert!(Resolver::builder()
        .root_server(addr)
        .transport(TransportPreference::Tcp)
        .build()
        .is_ok());
    assert!(Resolver::builder()
        .root_server_http(addr, None, false)
        .transport(TransportPreference::Http)
        .build()
        .is_ok());
    assert!(Resolver::builder()
        .root_server(addr)
        .transport(TransportPreference::Http)
        .proxy("http://127.0.0.1:8000/")
        .build()
        .is_ok());
}
