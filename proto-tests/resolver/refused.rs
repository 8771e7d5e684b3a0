//! The whole stack on loopback against a test server whose UDP port is closed (ICMP port
//! unreachable) and whose TCP answers: on Linux the UDP attempt is refused at once and the
//! resolution goes on over TCP, with a retransmission schedule of a minute that it never
//! waits out (guarded, so that a regression fails instead of hanging).
//!
//! The kernel may not send a refusal: "port unreachable" is rate-limited for the whole host
//! (`net.ipv4.icmp_msgs_per_sec`, 1000 a second in bursts of `icmp_msgs_burst`, 50; loopback
//! is exempt only from the per-peer limit), and a parallel test run sends many datagrams to
//! closed ports at once. So the schedule sends once more after 2 s, which is refused in its
//! turn; a client that ignored refusals would still wait out the minute (and fail the 30 s
//! guard). This test failed once, under heavy load, with a single transmission.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::{NetTransport, TransportKind};
use handle_resolver::wire::HandleValue;
use handle_resolver::Query;
use handle_resolver::{AttemptOutcome, Resolver};

#[tokio::test]
async fn a_closed_udp_port_fails_over_to_tcp_at_once() {
    let store = Arc::new(Store::new());
    for i in 0..3 {
        store.insert(
            format!("20.500.1/closed-{i}"),
            vec![HandleValue::new(
                1,
                "URL",
                format!("https://example.org/{i}"),
            )],
        );
    }
    let mut config = TestServerConfig::new(store);
    config.udp_closed = true;
    let server = TestServer::start(config).await.unwrap();
    let r = Resolver::builder()
        .server(server.addr())
        .exchange(Arc::new(NetTransport::new()))
        .retransmit(vec![Duration::from_secs(2), Duration::from_secs(60)])
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let guard = Duration::from_secs(30);
    let (rec, attempts) =
        tokio::time::timeout(guard, r.resolve_traced("20.500.1/closed-0", &Query::new()))
            .await
            .expect("the refusal was not learned: UDP waited out its schedule");
    let rec = rec.unwrap();
    assert_eq!(rec.urls(), ["https://example.org/0"]);
    assert_eq!(rec.source.transport, TransportKind::Tcp);
    // The trace: UDP refused, then TCP answered, both to the one server.
    let steps: Vec<(TransportKind, &AttemptOutcome)> =
        attempts.iter().map(|a| (a.transport, &a.outcome)).collect();
    assert_eq!(steps.len(), 2, "{attempts:?}");
    assert_eq!(steps[0].0, TransportKind::Udp);
    assert!(
        matches!(
            steps[0].1,
            AttemptOutcome::Failed(handle_resolver::transport::TransportError::Io(
                std::io::ErrorKind::ConnectionRefused,
                _
            ))
        ),
        "{:?}",
        steps[0].1
    );
    assert_eq!(steps[1].0, TransportKind::Tcp);
    assert!(matches!(steps[1].1, AttemptOutcome::Response(_)));
    assert!(attempts.iter().all(|a| a.server == Some(server.addr())));
    // Learned: the next resolutions go to TCP alone.
    for i in 1..3 {
        let (rec, attempts) = tokio::time::timeout(
            guard,
            r.resolve_traced(format!("20.500.1/closed-{i}").as_str(), &Query::new()),
        )
        .await
        .unwrap();
        assert_eq!(rec.unwrap().source.transport, TransportKind::Tcp);
        assert!(attempts.iter().all(|a| a.transport == TransportKind::Tcp));
    }
    assert_eq!(server.udp_requests(), 0);
    assert_eq!(server.tcp_requests(), 3);
}
