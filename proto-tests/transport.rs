//! Transport and test-server tests, over loopback only: UDP demultiplexing, reassembly,
//! retransmission, faults, TCP framing errors, cancellation, load.

mod cancel;
pub mod early_loss;
mod http;
// Only Linux reports a refused datagram on an unconnected socket (the error queue).
#[cfg(any(target_os = "linux", target_os = "android"))]
mod refused;
mod tcp;
mod testserver;
mod udp;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::ExchangeOptions;
use handle_resolver::wire::{Body, HandleValue, Message};

/// Seconds since the epoch plus 12 h, as the reference client sets request expirations.
pub fn expiration() -> u32 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (now + 43_200) as u32
}

/// A resolution request for `handle`, all values (request id 1: the transport replaces it).
pub fn request(handle: &str) -> Message {
    Message::resolution_request(handle.to_string(), vec![], vec![], 1, expiration())
}

/// `n` URL values of about `size` bytes each.
pub fn values(n: u32, size: usize) -> Vec<HandleValue> {
    (1..=n)
        .map(|i| {
            let data = format!("https://example.org/{i}/{}", "x".repeat(size));
            HandleValue::new(i, "URL", data)
        })
        .collect()
}

/// A store with `20.500.1/small` (2 values, one datagram) and `20.500.1/large` (40 values of
/// ~200 bytes, about 17 datagrams).
pub fn store() -> Arc<Store> {
    let store = Arc::new(Store::new());
    store.insert(
        "20.500.1/small",
        vec![
            HandleValue::new(1, "URL", "https://example.org/"),
            HandleValue::new(2, "EMAIL", "a@example.org"),
        ],
    );
    store.insert("20.500.1/large", values(40, 200));
    store
}

/// A healthy server over [`store`] with `workers` UDP workers.
pub async fn server(workers: usize) -> TestServer {
    let mut c = TestServerConfig::new(store());
    c.udp_workers = workers;
    TestServer::start(c).await.unwrap()
}

/// The values of a successful resolution answer (panics on anything else).
pub fn answer_values(m: &Message) -> &[HandleValue] {
    match &m.body {
        Body::ResolutionResponse(r) => &r.values,
        other => panic!(
            "not a resolution response: {:?} {other:?}",
            m.header.response_code
        ),
    }
}

/// Options with a short, fixed UDP schedule.
pub fn options(waits_ms: &[u64]) -> ExchangeOptions {
    ExchangeOptions::default()
        .with_udp_retransmit(
            waits_ms
                .iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>(),
        )
        .with_tcp_connect_timeout(Duration::from_secs(2))
        .with_tcp_read_timeout(Duration::from_secs(2))
}

/// `Bytes` from a string.
pub fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}
