//! Cancellation safety and load: the pending table ends empty whatever happens.

use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use handle_resolver::testing::Faults;
use handle_resolver::transport::{Exchange, NetTransport, TransportKind};
use handle_resolver::wire::ResponseCode;

use super::{options, request, server};

#[tokio::test]
async fn dropping_1000_in_flight_exchanges_empties_the_pending_table() {
    let server = server(1).await;
    server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    let opts = options(&[10_000]);
    let mut inflight: FuturesUnordered<_> = (0..1000)
        .map(|_| t.exchange(server.addr(), TransportKind::Udp, &req, &opts))
        .collect();
    // Drive them until every one has registered and sent (none can finish: the server is
    // silent and the wait is 10 s).
    let polled = tokio::time::timeout(Duration::from_millis(300), inflight.next()).await;
    assert!(polled.is_err(), "an exchange finished early");
    assert_eq!(t.pending_count(), 1000);
    drop(inflight);
    assert_eq!(t.pending_count(), 0);
}

#[tokio::test]
async fn dropping_exchanges_mid_reassembly_releases_the_reassembly_budget() {
    let server = server(1).await;
    // Nine answer fragments in ten are lost: answers stay incomplete, partially collected.
    server.set_faults(Faults {
        drop_answer_ratio: 0.9,
        ..Faults::default()
    });
    let t = NetTransport::new();
    let req = request("20.500.1/large");
    let opts = options(&[10_000]);
    let mut inflight: FuturesUnordered<_> = (0..50)
        .map(|_| t.exchange(server.addr(), TransportKind::Udp, &req, &opts))
        .collect();
    let _ = tokio::time::timeout(Duration::from_millis(300), inflight.next()).await;
    assert!(t.pending_count() > 0);
    assert!(t.reassembly_bytes() > 0, "no partial answer was collected");
    drop(inflight);
    assert_eq!(t.pending_count(), 0);
    assert_eq!(t.reassembly_bytes(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_exchanges_complete_and_leave_nothing_pending() {
    let server = server(2).await;
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    // Generous schedule: a burst of 10 000 datagrams may overflow a socket buffer once.
    let opts = options(&[1000, 1000, 2000, 2000, 4000]);
    let results: Vec<_> = (0..10_000)
        .map(|_| t.exchange(server.addr(), TransportKind::Udp, &req, &opts))
        .collect::<FuturesUnordered<_>>()
        .collect()
        .await;
    let ok = results
        .iter()
        .filter(|r| matches!(r, Ok(m) if m.header.response_code == ResponseCode::Success))
        .count();
    assert_eq!(
        ok,
        10_000,
        "errors: {:?}",
        results.iter().find(|r| r.is_err())
    );
    assert_eq!(t.pending_count(), 0);
    assert_eq!(t.reassembly_bytes(), 0);
}
