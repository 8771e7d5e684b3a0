//! The whole stack on loopback with a relay that drops the first datagram of one query: once
//! the server has answered, the query is presumed lost after the server's loss timeout and
//! sent again at once, under a retransmission schedule of a minute that it never waits out
//! (guarded, so that a regression fails instead of hanging).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::{NetTransport, TransportKind};
use handle_resolver::wire::HandleValue;
use handle_resolver::Query;
use handle_resolver::{AttemptOutcome, Resolver};

use crate::transport::early_loss::dropping_relay;

/// A test server holding `20.500.1/<dropped>` and `20.500.1/<other>` (one URL each), and a
/// relay in front of it that drops the first request for `dropped`.
async fn behind_relay(dropped: &str, other: &str) -> (TestServer, SocketAddr) {
    let store = Arc::new(Store::new());
    for name in [dropped, other] {
        store.insert(
            format!("20.500.1/{name}"),
            vec![HandleValue::new(
                1,
                "URL",
                format!("https://example.org/{name}"),
            )],
        );
    }
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let relay = dropping_relay(server.addr(), format!("20.500.1/{dropped}").as_bytes()).await;
    (server, relay)
}

#[tokio::test]
async fn a_query_presumed_lost_is_sent_again_at_once() {
    let (_server, relay) = behind_relay("early-dropped", "early-later").await;
    let r = Resolver::builder()
        .server(relay)
        .exchange(Arc::new(NetTransport::new()))
        .retransmit(vec![Duration::from_secs(60)])
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let later = r.resolve("20.500.1/early-later").await.unwrap();
    assert_eq!(later.urls(), ["https://example.org/early-later"]);
    let (rec, attempts) = tokio::time::timeout(
        Duration::from_secs(30),
        r.resolve_traced("20.500.1/early-dropped", &Query::new()),
    )
    .await
    .expect("the dropped query waited out its schedule: the loss was not detected");
    assert_eq!(rec.unwrap().urls(), ["https://example.org/early-dropped"]);
    // One UDP attempt, answered after at least two transmissions (the first presumed lost;
    // on a loaded machine a resend may be presumed lost too).
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(attempts[0].transport, TransportKind::Udp);
    assert!(matches!(attempts[0].outcome, AttemptOutcome::Response(_)));
    assert!(attempts[0].transmissions >= 2, "{attempts:?}");
    // The resend's own round trip is what the server's SRTT learns: not the 60 s first
    // wait of the schedule, which an answer after a retransmission would imply.
    let srtt = r.server_rtt(relay).unwrap();
    assert!(srtt < Duration::from_secs(1), "{srtt:?}");
}

/// `Resolver::query` sends a request as it is, once: it has no early loss detection (a
/// `PresumedLost` would reach the caller), and a dropped datagram is retransmitted on the
/// schedule.
#[tokio::test]
async fn a_raw_query_is_never_presumed_lost() {
    let (_server, relay) = behind_relay("raw-dropped", "raw-warm").await;
    let transport = Arc::new(NetTransport::new());
    let r = Resolver::builder()
        .server(relay)
        .exchange(transport.clone())
        .retransmit(vec![Duration::from_millis(300); 2])
        .build()
        .unwrap();
    // The relay's loss timeout is learned (a few milliseconds).
    r.resolve("20.500.1/raw-warm").await.unwrap();
    assert!(transport.udp_loss_timeout(relay).is_some());
    let request = handle_resolver::wire::Message::resolution_request(
        "20.500.1/raw-dropped".to_string(),
        vec![],
        vec![],
        1,
        u32::MAX,
    );
    let answer = r.send_message(relay, &request).await.unwrap();
    assert_eq!(
        answer.response_code(),
        handle_resolver::wire::ResponseCode::Success
    );
}
