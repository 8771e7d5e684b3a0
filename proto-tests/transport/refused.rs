//! UDP to a closed port (ICMP port unreachable): on Linux the shared socket's error queue
//! ends the requests pending to that port at once, and only those. Each test runs under a
//! 60 s retransmission schedule and a 30 s guard, so a regression fails instead of hanging.

use std::future::Future;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Duration;

use handle_resolver::testing::{Faults, TestServer, TestServerConfig};
use handle_resolver::transport::{Exchange, NetTransport, TransportError, TransportKind};
use handle_resolver::wire::ResponseCode;

use super::{answer_values, options, request, server, store};

/// Far longer than any test may take: an exchange that ends was ended by the refusal.
const SCHEDULE_MS: u64 = 60_000;

/// Fails the test instead of waiting out the schedule.
async fn guarded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("no outcome within 30 s: the refusal was not learned")
}

/// An address on `ip` that was bound for UDP and then closed.
fn closed_port(ip: &str) -> Option<SocketAddr> {
    let socket = std::net::UdpSocket::bind((ip, 0)).ok()?;
    socket.local_addr().ok()
}

fn assert_refused(result: Result<handle_resolver::transport::Exchanged, TransportError>) {
    match result {
        Err(TransportError::Io(ErrorKind::ConnectionRefused, text)) => {
            assert!(text.contains("refused"), "{text}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn udp_to_a_closed_port_is_refused_at_once() {
    let closed = closed_port("127.0.0.1").unwrap();
    let t = NetTransport::new();
    let got = guarded(t.exchange(
        closed,
        TransportKind::Udp,
        &request("20.500.1/small"),
        &options(&[SCHEDULE_MS]),
    ))
    .await;
    assert_refused(got);
    assert_eq!(t.pending_count(), 0);
}

#[tokio::test]
async fn udp_to_a_closed_ipv6_port_is_refused_at_once() {
    // A machine without IPv6 loopback has nothing to test here.
    let Some(closed) = closed_port("::1") else {
        return;
    };
    let t = NetTransport::new();
    let got = guarded(t.exchange(
        closed,
        TransportKind::Udp,
        &request("20.500.1/small"),
        &options(&[SCHEDULE_MS]),
    ))
    .await;
    assert_refused(got);
    assert_eq!(t.pending_count(), 0);
}

/// The test server with its UDP port closed refuses; its TCP side answers.
#[tokio::test]
async fn a_test_server_with_its_udp_port_closed_refuses_udp_and_answers_tcp() {
    let mut config = TestServerConfig::new(store());
    config.udp_closed = true;
    let server = TestServer::start(config).await.unwrap();
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    let opts = options(&[SCHEDULE_MS]);
    assert_refused(guarded(t.exchange(server.addr(), TransportKind::Udp, &req, &opts)).await);
    let answer = guarded(t.exchange(server.addr(), TransportKind::Tcp, &req, &opts))
        .await
        .unwrap()
        .message;
    assert_eq!(answer_values(&answer).len(), 2);
    assert_eq!(server.udp_requests(), 0);
}

/// Requests to other servers on the same shared socket are not disturbed: those pending
/// when the refusal comes, and those sent right after it (on the one thread of this runtime,
/// the second and third exchange send before the receive task reads the error queue, so
/// their sends meet the refusal the kernel reports once more from the next socket call).
#[tokio::test]
async fn a_refusal_ends_only_the_requests_to_the_refusing_port() {
    let healthy = server(1).await;
    let slow = server(1).await;
    slow.set_faults(Faults {
        delay: Duration::from_millis(200),
        ..Faults::default()
    });
    let closed = closed_port("127.0.0.1").unwrap();
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    let opts = options(&[SCHEDULE_MS]);
    let ask = |to: SocketAddr| t.exchange(to, TransportKind::Udp, &req, &opts);
    let (pending, refused_a, after, refused_b) = guarded(async {
        tokio::join!(
            ask(slow.addr()),
            ask(closed),
            ask(healthy.addr()),
            ask(closed)
        )
    })
    .await;
    assert_refused(refused_a);
    assert_refused(refused_b);
    for (name, got) in [("pending", pending), ("sent after", after)] {
        let got = got.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(got.message.header.response_code, ResponseCode::Success);
        // One transmission each: nothing was lost to the refusal.
        assert_eq!(got.transmissions, 1, "{name}");
    }
    assert_eq!(t.pending_count(), 0);
    // And the socket goes on serving.
    let again = guarded(ask(healthy.addr())).await.unwrap();
    assert_eq!(again.transmissions, 1);
}
