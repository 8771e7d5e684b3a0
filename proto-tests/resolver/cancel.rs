//! Cancellation safety at the resolver level, on loopback: 1,000 resolutions dropped while
//! their requests are out and their multi-datagram answers half reassembled leave nothing in
//! the transport, and the resolver keeps working.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use handle_resolver::testing::{Faults, TestNetwork};
use handle_resolver::transport::NetTransport;
use handle_resolver::wire::HandleValue;
use handle_resolver::Resolver;

/// 40 URL values of ~60 bytes: a ~3.5 kB answer, 8 datagrams over UDP.
fn many_values(handle: &str) -> Vec<HandleValue> {
    (1..=40)
        .map(|i| {
            HandleValue::new(
                i,
                "URL",
                format!("https://example.org/{handle}/value/{i:04}/padding-padding"),
            )
        })
        .collect()
}

#[tokio::test]
async fn dropping_1000_resolutions_mid_flight_leaves_nothing_pending() {
    let net = TestNetwork::builder().build().await.unwrap();
    let transport = NetTransport::new();
    let r = Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(transport.clone()))
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    // The service is known (cached) before the faults start.
    let warm = "20.500.1/warm";
    net.insert(warm, many_values(warm));
    r.resolve(warm).await.unwrap();
    let handles: Vec<String> = (0..1000).map(|i| format!("20.500.1/drop{i}")).collect();
    for h in &handles {
        net.insert(h, many_values(h));
    }
    // Half of the answer datagrams are lost: answers stay half reassembled until the
    // retransmission (500 ms later).
    for s in &net.sites {
        s.set_faults(Faults {
            drop_answer_ratio: 0.5,
            ..Faults::default()
        });
    }
    let r2 = r.clone();
    let work = tokio::spawn(async move {
        join_all(handles.iter().map(|h| r2.resolve(h.as_str()))).await;
    });
    // Wait (on the condition, not a fixed time) until requests are out (as many as the
    // per-server limits let go; the others wait in the resolver) and answers are being
    // reassembled.
    let mut seen = (0, 0);
    for _ in 0..1000 {
        seen = (transport.pending_count(), transport.reassembly_bytes());
        if seen.0 >= 16 && seen.1 > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(
        seen.0 >= 16 && seen.1 > 0,
        "never caught mid-flight: {seen:?}"
    );
    work.abort();
    assert!(work.await.unwrap_err().is_cancelled());
    assert_eq!(transport.pending_count(), 0);
    assert_eq!(transport.reassembly_bytes(), 0);
    // The resolver still works, on the same transport.
    for s in &net.sites {
        s.set_faults(Faults::default());
    }
    let rec = r.resolve("20.500.1/drop7").await.unwrap();
    assert_eq!(rec.values, many_values("20.500.1/drop7"));
    let rec = r.resolve("20.500.1/after").await;
    assert!(rec.unwrap_err().is_not_found());
    assert_eq!(transport.pending_count(), 0);
    assert_eq!(transport.reassembly_bytes(), 0);
    eprintln!(
        "caught mid-flight: {} pending, {} bytes in reassembly",
        seen.0, seen.1
    );
}
