//! The `handle-gateway` binary as the tests start it, and the slow upstream some of them
//! need. Included by each test file that runs the binary (`#[path = "support/process.rs"]`),
//! beside the HTTP client of `conformance/http.rs` (as `mod http`).

#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use handle_resolver::testing::{Faults, Store, TestServer, TestServerConfig};
use handle_resolver::wire::HandleValue;

/// A running gateway, killed when dropped.
pub struct Running {
    pub child: Child,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The `metrics_listen` address, when it was asked for (see [`start_lines`]).
    pub metrics: Option<SocketAddr>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway started with `args`, once it has printed where it listens.
pub fn start(args: &[&str]) -> Running {
    start_lines(args, 1)
}

/// The gateway started with `args`, its first `lines` lines of stdout read (the banner,
/// then the metrics address).
pub fn start_lines(args: &[&str], lines: usize) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_handle-gateway"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the handle-gateway binary starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut read = || {
        let mut line = String::new();
        out.read_line(&mut line).expect("a line of stdout");
        line
    };
    let addr = addr_in(&read());
    let metrics = (lines > 1).then(|| addr_in(&read()));
    Running {
        child,
        addr,
        metrics,
    }
}

/// The address after `://` in `line`.
fn addr_in(line: &str) -> SocketAddr {
    line.split("://")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ', '\n', '/']).next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
}

/// `GET target` with `Host: gw.example` and the `extra` header lines (each ending in `\r\n`).
pub fn get(addr: SocketAddr, target: &str, extra: &str) -> std::io::Result<super::http::Received> {
    let raw =
        format!("GET {target} HTTP/1.1\r\nHost: gw.example\r\nConnection: close\r\n{extra}\r\n");
    super::http::exchange(addr, raw.as_bytes())
}

/// A test server holding `handle` with one value of `kind` and `data`, answering under
/// `faults`, started on `runtime`.
pub fn server_holding(
    runtime: &tokio::runtime::Runtime,
    handle: &str,
    kind: &str,
    data: &str,
    faults: Faults,
) -> TestServer {
    let store = Arc::new(Store::new());
    store.insert(
        handle,
        vec![HandleValue::new(1, kind.to_owned(), data.to_owned())],
    );
    let mut config = TestServerConfig::new(store);
    config.faults = faults;
    runtime
        .block_on(TestServer::start(config))
        .expect("the test server starts")
}

/// A test server holding `20.500.7/slow` (one URL value) that answers every request after
/// `delay`, started on `runtime`.
pub fn slow_server(runtime: &tokio::runtime::Runtime, delay: Duration) -> TestServer {
    let faults = Faults {
        delay,
        ..Faults::default()
    };
    server_holding(
        runtime,
        "20.500.7/slow",
        "URL",
        "https://example.org/slow",
        faults,
    )
}
