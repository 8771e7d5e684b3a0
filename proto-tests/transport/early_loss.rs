//! Early loss detection over real loopback sockets: a relay in front of the test server
//! drops the first request for one handle and forwards everything else. Once the server has
//! answered (its loss timeout learned), the dropped request ends with `PresumedLost` after a
//! few milliseconds, under a retransmission schedule of a minute it never waits out
//! (guarded, so that a regression fails instead of hanging); without detection, or before
//! the server has ever answered, the schedule is waited out as before.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use handle_resolver::transport::{
    Exchange, ExchangeOptions, Exchanged, NetTransport, TransportError, TransportKind,
};
use handle_resolver::wire::ResponseCode;
use tokio::net::UdpSocket;

use super::{options, request, server};

/// A UDP relay on 127.0.0.1 to `upstream` that drops the first request whose bytes contain
/// `needle` and forwards everything else both ways. Serves until the runtime ends.
pub async fn dropping_relay(upstream: SocketAddr, needle: &[u8]) -> SocketAddr {
    relay(upstream, needle, None).await
}

/// As [`dropping_relay`], but with `late`, the first request for `needle` is forwarded that
/// much later instead of dropped (a server that stalls on it).
async fn relay(upstream: SocketAddr, needle: &[u8], late: Option<Duration>) -> SocketAddr {
    let front = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = front.local_addr().unwrap();
    let needle = needle.to_vec();
    tokio::spawn(async move {
        let back = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
        back.connect(upstream).await.unwrap();
        let (mut up, mut down) = (vec![0u8; 4096], vec![0u8; 4096]);
        let mut dropped = false;
        let mut client = None;
        loop {
            tokio::select! {
                got = front.recv_from(&mut up) => {
                    let (n, from) = got.unwrap();
                    client = Some(from);
                    if !dropped && up[..n].windows(needle.len()).any(|w| w == needle) {
                        dropped = true;
                        if let Some(late) = late {
                            let (back, held) = (back.clone(), up[..n].to_vec());
                            tokio::spawn(async move {
                                tokio::time::sleep(late).await;
                                back.send(&held).await.unwrap();
                            });
                        }
                        continue;
                    }
                    back.send(&up[..n]).await.unwrap();
                }
                got = back.recv(&mut down) => {
                    let n = got.unwrap();
                    front.send_to(&down[..n], client.unwrap()).await.unwrap();
                }
            }
        }
    });
    addr
}

fn detecting(waits_ms: &[u64]) -> ExchangeOptions {
    options(waits_ms).with_udp_loss_detection(true)
}

/// `warm_up` requests for `20.500.1/none` (answered: not found) to `to`, then one for
/// `20.500.1/small` (which the relay drops) under `options`; its outcome.
async fn dropped_after(
    to: SocketAddr,
    warm_up: usize,
    options: ExchangeOptions,
) -> Result<Exchanged, TransportError> {
    dropped_after_on(&NetTransport::new(), to, warm_up, options).await
}

/// [`dropped_after`] on transport `t`.
async fn dropped_after_on(
    t: &NetTransport,
    to: SocketAddr,
    warm_up: usize,
    options: ExchangeOptions,
) -> Result<Exchanged, TransportError> {
    let (mut answered, mut sent) = (0, 0);
    while answered < warm_up {
        sent += 1;
        let got = t
            .exchange(
                to,
                TransportKind::Udp,
                &request("20.500.1/none"),
                &detecting(&[60_000]),
            )
            .await;
        match got {
            Ok(answer) => {
                assert_eq!(answer.message.response_code(), ResponseCode::HandleNotFound);
                answered += 1;
            }
            // On a busy machine a warm-up answer can come after the loss timeout learned
            // from the ones before: the resolver sends such a request again, so does this.
            Err(TransportError::PresumedLost) if sent < 100 => {}
            Err(e) => panic!("warm-up exchange {sent} failed: {e}"),
        }
    }
    let got = tokio::time::timeout(
        Duration::from_secs(30),
        t.exchange(to, TransportKind::Udp, &request("20.500.1/small"), &options),
    )
    .await
    .expect("the dropped request waited out its schedule: the loss was not detected");
    assert_eq!(t.pending_count(), 0);
    got
}

#[tokio::test]
async fn a_request_unanswered_past_the_servers_loss_timeout_is_presumed_lost() {
    let server = server(1).await;
    let relay = dropping_relay(server.addr(), b"20.500.1/small").await;
    let got = dropped_after(relay, 5, detecting(&[60_000])).await;
    assert_eq!(got.unwrap_err(), TransportError::PresumedLost);
}

#[tokio::test]
async fn without_detection_the_schedule_is_waited_out() {
    let server = server(1).await;
    let relay = dropping_relay(server.addr(), b"20.500.1/small").await;
    let started = tokio::time::Instant::now();
    let got = dropped_after(relay, 5, options(&[400])).await;
    assert_eq!(got.unwrap_err(), TransportError::Timeout);
    assert!(started.elapsed() >= Duration::from_millis(400));
}

#[tokio::test]
async fn a_server_that_never_answered_has_no_loss_timeout() {
    let server = server(1).await;
    let relay = dropping_relay(server.addr(), b"20.500.1/small").await;
    let started = tokio::time::Instant::now();
    let got = dropped_after(relay, 0, detecting(&[400])).await;
    assert_eq!(got.unwrap_err(), TransportError::Timeout);
    assert!(started.elapsed() >= Duration::from_millis(400));
}

#[tokio::test]
async fn an_answer_after_the_loss_timeout_widens_it() {
    let server = server(1).await;
    // Far above any loss timeout learned from five loopback answers, even on a busy machine.
    let late = Duration::from_secs(2);
    let relay = relay(server.addr(), b"20.500.1/small", Some(late)).await;
    let t = NetTransport::new();
    assert_eq!(t.udp_loss_timeout(relay), None);
    let got = dropped_after_on(&t, relay, 5, detecting(&[60_000])).await;
    assert_eq!(got.unwrap_err(), TransportError::PresumedLost);
    let before = t.udp_loss_timeout(relay).unwrap();
    assert!(before < late, "{before:?}");
    // The answer to the request presumed lost comes in after all: the presumption was
    // wrong, and the timeout at least doubles (its RTT is a sample too).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while t.udp_loss_timeout(relay) == Some(before) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let after = t.udp_loss_timeout(relay).unwrap();
    assert!(after >= before * 2, "{before:?} → {after:?}");
}
