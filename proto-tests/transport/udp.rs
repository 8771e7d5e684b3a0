//! UDP: demultiplexing, reassembly, retransmission, junk datagrams, limits.

use std::time::Duration;

use tokio::time::Instant;

use handle_resolver::testing::Faults;
use handle_resolver::transport::{
    Exchange, NetTransport, TransportError, TransportKind, MAX_UDP_REQUEST_FRAGMENTS,
};
use handle_resolver::wire::{Message, ResponseCode, MAX_FRAGMENT_PAYLOAD};

use super::{answer_values, b, expiration, options, request, server};

#[tokio::test]
async fn udp_exchange_returns_the_answer_to_our_request() {
    let server = server(1).await;
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    let answer = t
        .exchange(server.addr(), TransportKind::Udp, &req, &options(&[2000]))
        .await
        .unwrap()
        .message;
    assert_eq!(answer.header.response_code, ResponseCode::Success);
    let v = answer_values(&answer);
    assert_eq!(v.len(), 2);
    assert_eq!(&v[0].data[..], b"https://example.org/");
    // The transport chose its own id, never the reserved values, and nothing is left pending.
    assert_ne!(answer.request_id(), 0);
    assert_ne!(answer.request_id(), u32::MAX);
    assert_eq!(t.pending_count(), 0);
    assert_eq!(server.udp_requests(), 1);
}

#[tokio::test]
async fn udp_multi_datagram_answer_is_reassembled() {
    let server = server(1).await;
    let t = NetTransport::new();
    let answer = t
        .exchange(
            server.addr(),
            TransportKind::Udp,
            &request("20.500.1/large"),
            &options(&[2000]),
        )
        .await
        .unwrap()
        .message;
    let v = answer_values(&answer);
    assert_eq!(v.len(), 40);
    for (i, value) in v.iter().enumerate() {
        assert_eq!(value.index, i as u32 + 1);
        assert!(value
            .data
            .starts_with(format!("https://example.org/{}/", i + 1).as_bytes()));
    }
    assert_eq!(t.pending_count(), 0);
    assert_eq!(t.reassembly_bytes(), 0);
}

// Paused clock: the short waits elapse only when every task is idle, so a loaded machine
// cannot turn them into spurious timeouts.
#[tokio::test(start_paused = true)]
async fn udp_retransmission_survives_30_percent_request_loss() {
    let server = server(1).await;
    server.set_faults(Faults {
        drop_ratio: 0.3,
        ..Faults::default()
    });
    let t = NetTransport::new();
    // 10 transmissions per request: a request fails only if all 10 are lost (0.3^10).
    let opts = options(&[40; 10]);
    for i in 0..60 {
        let handle = if i % 2 == 0 {
            "20.500.1/small"
        } else {
            "20.500.1/large"
        };
        let answer = t
            .exchange(server.addr(), TransportKind::Udp, &request(handle), &opts)
            .await
            .unwrap()
            .message;
        assert_eq!(answer.header.response_code, ResponseCode::Success);
    }
    // Loss really happened and was made up for by retransmissions.
    assert!(server.udp_dropped() > 0);
    assert_eq!(server.udp_requests(), 60 + server.udp_dropped());
    assert_eq!(t.pending_count(), 0);
}

// Paused clock: the short waits elapse only when every task is idle, so a loaded machine
// cannot turn them into spurious timeouts.
#[tokio::test(start_paused = true)]
async fn udp_fragments_of_several_transmissions_complete_one_answer() {
    let server = server(1).await;
    // Each answer datagram (about 17 per answer) is lost with probability 0.3: one
    // transmission almost never brings them all, several together do.
    server.set_faults(Faults {
        drop_answer_ratio: 0.3,
        ..Faults::default()
    });
    let t = NetTransport::new();
    for _ in 0..5 {
        let answer = t
            .exchange(
                server.addr(),
                TransportKind::Udp,
                &request("20.500.1/large"),
                &options(&[60; 12]),
            )
            .await
            .unwrap()
            .message;
        assert_eq!(answer_values(&answer).len(), 40);
    }
    assert!(server.udp_requests() > 5);
    assert_eq!(t.reassembly_bytes(), 0);
}

#[tokio::test]
async fn udp_junk_before_the_answer_is_ignored() {
    let server = server(1).await;
    // Before the real answer the server sends: random bytes, the answer with another request
    // id, the answer from another port, the answer cut in half, and the answer with
    // MessageLength 0x7FFFFFFF. Only the real answer may be taken.
    server.set_faults(Faults {
        garbage: true,
        wrong_request_id: true,
        spoof_source: true,
        truncated_length: true,
        oversized_length: true,
        ..Faults::default()
    });
    let t = NetTransport::new();
    for handle in ["20.500.1/small", "20.500.1/large"] {
        let answer = t
            .exchange(
                server.addr(),
                TransportKind::Udp,
                &request(handle),
                &options(&[3000]),
            )
            .await
            .unwrap()
            .message;
        assert_eq!(answer.header.response_code, ResponseCode::Success);
        assert!(!answer_values(&answer).is_empty());
    }
    // One transmission each: the junk did not cost a retransmission.
    assert_eq!(server.udp_requests(), 2);
    assert_eq!(t.pending_count(), 0);
    assert_eq!(t.reassembly_bytes(), 0);
}

// Paused clock: the short waits elapse only when every task is idle, so a loaded machine
// cannot turn them into spurious timeouts.
#[tokio::test(start_paused = true)]
async fn udp_spoofed_answer_alone_is_not_accepted() {
    let server = server(1).await;
    let t = NetTransport::new();
    // Warm up the socket, then let the real answers be lost while the spoofed copies arrive.
    server.set_faults(Faults {
        spoof_source: true,
        drop_answer_ratio: 1.0,
        ..Faults::default()
    });
    let err = t
        .exchange(
            server.addr(),
            TransportKind::Udp,
            &request("20.500.1/small"),
            &options(&[50, 50]),
        )
        .await
        .unwrap_err();
    assert_eq!(err, TransportError::Timeout);
    assert_eq!(server.udp_requests(), 2);
    assert_eq!(t.pending_count(), 0);
}

// Paused clock: the short waits elapse only when every task is idle, so a loaded machine
// cannot turn them into spurious timeouts.
#[tokio::test(start_paused = true)]
async fn udp_silent_server_times_out_after_every_transmission() {
    let server = server(1).await;
    server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let t = NetTransport::new();
    let started = Instant::now();
    let err = t
        .exchange(
            server.addr(),
            TransportKind::Udp,
            &request("20.500.1/small"),
            &options(&[30, 30, 30]),
        )
        .await
        .unwrap_err();
    assert_eq!(err, TransportError::Timeout);
    // Three transmissions, three waits.
    assert!(started.elapsed() >= Duration::from_millis(90));
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(server.udp_requests(), 3);
    assert_eq!(t.pending_count(), 0);
}

// Paused clock: the short waits elapse only when every task is idle, so a loaded machine
// cannot turn them into spurious timeouts.
#[tokio::test(start_paused = true)]
async fn udp_late_answer_to_an_earlier_transmission_is_accepted() {
    let server = server(1).await;
    server.set_faults(Faults {
        delay: Duration::from_millis(150),
        ..Faults::default()
    });
    let t = NetTransport::new();
    let answer = t
        .exchange(
            server.addr(),
            TransportKind::Udp,
            &request("20.500.1/small"),
            &options(&[50, 2000]),
        )
        .await
        .unwrap()
        .message;
    assert_eq!(answer.header.response_code, ResponseCode::Success);
}

#[tokio::test]
async fn udp_fragmented_request_reaches_the_server() {
    let server = server(1).await;
    let t = NetTransport::new();
    // A 1500-byte handle makes a request of more than one datagram (PROTOCOL.md §8.1).
    let handle = format!("20.500.1/{}", "h".repeat(1500));
    let req = request(&handle);
    assert!(req.encode().unwrap().len() > 20 + MAX_FRAGMENT_PAYLOAD);
    let answer = t
        .exchange(server.addr(), TransportKind::Udp, &req, &options(&[2000]))
        .await
        .unwrap()
        .message;
    assert_eq!(answer.header.response_code, ResponseCode::HandleNotFound);
    assert_eq!(server.udp_requests(), 4);
}

#[tokio::test]
async fn udp_request_beyond_the_fragment_cap_is_too_large() {
    let t = NetTransport::new();
    let types = (0..800)
        .map(|i| b(&format!("TYPE.{i}.{}", "t".repeat(40))))
        .collect();
    let req = Message::resolution_request("20.500.1/x", vec![], types, 1, expiration());
    assert!(req.encode().unwrap().len() > MAX_UDP_REQUEST_FRAGMENTS * MAX_FRAGMENT_PAYLOAD);
    let err = t
        .exchange(
            "127.0.0.1:9".parse().unwrap(),
            TransportKind::Udp,
            &req,
            &options(&[10]),
        )
        .await
        .unwrap_err();
    assert_eq!(err, TransportError::TooLargeForUdp);
    assert_eq!(t.pending_count(), 0);
}

// Paused clock: the third caller's 50 ms pause surely ends before the first two callers'
// 300 ms waits, however loaded the machine is.
#[tokio::test(start_paused = true)]
async fn udp_in_flight_cap_gives_busy() {
    let server = server(1).await;
    server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let t = NetTransport::builder().max_in_flight(2).build();
    let req = request("20.500.1/small");
    let opts = options(&[300]);
    let a = t.exchange(server.addr(), TransportKind::Udp, &req, &opts);
    let b = t.exchange(server.addr(), TransportKind::Udp, &req, &opts);
    let c = async {
        // Let the first two register before the third asks.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(t.pending_count(), 2);
        t.exchange(server.addr(), TransportKind::Udp, &req, &opts)
            .await
    };
    let (ra, rb, rc) = tokio::join!(a, b, c);
    assert_eq!(ra.unwrap_err(), TransportError::Timeout);
    assert_eq!(rb.unwrap_err(), TransportError::Timeout);
    assert_eq!(rc.unwrap_err(), TransportError::Busy);
    assert_eq!(t.pending_count(), 0);
}

#[tokio::test]
async fn ipv6_loopback_uses_its_own_socket() {
    let mut c = handle_resolver::testing::TestServerConfig::new(super::store());
    c.ip = "::1".parse().unwrap();
    // A host without IPv6 loopback cannot run this test: it fails rather than pass untested.
    let server = handle_resolver::testing::TestServer::start(c)
        .await
        .unwrap_or_else(|e| panic!("cannot bind the test server to [::1] (IPv6 loopback): {e}"));
    assert!(server.addr().is_ipv6());
    let t = NetTransport::new();
    for kind in [TransportKind::Udp, TransportKind::Tcp] {
        let answer = t
            .exchange(
                server.addr(),
                kind,
                &request("20.500.1/large"),
                &options(&[2000]),
            )
            .await
            .unwrap()
            .message;
        assert_eq!(answer_values(&answer).len(), 40);
    }
    assert!(t.udp_local_addr(server.addr()).unwrap().is_ipv6());
    assert!(t.udp_local_addr("127.0.0.1:1".parse().unwrap()).is_none());
    assert_eq!(t.pending_count(), 0);
}

#[tokio::test]
async fn every_transmission_resends_every_fragment_with_the_same_id() {
    use handle_resolver::wire::{Body, Envelope, ErrorBody, Reader};
    // A hand-run server: it records every datagram and answers only after the twelfth, i.e.
    // after the third transmission of a four-fragment request.
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = sock.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut seen = Vec::new();
        let mut buf = [0u8; 2048];
        loop {
            let (n, peer) = sock.recv_from(&mut buf).await.unwrap();
            let d = bytes::Bytes::copy_from_slice(&buf[..n]);
            let env = Envelope::decode(&mut Reader::new(d)).unwrap();
            // Every fragment of the request carries TC, as the reference client's do.
            assert!(env.truncated, "fragment {} without TC", env.sequence_number);
            seen.push((env.request_id, env.sequence_number));
            if seen.len() == 12 {
                let request = Message::resolution_request(b(""), vec![], vec![], env.request_id, 0);
                let answer = Message::response_to(
                    &request,
                    ResponseCode::HandleNotFound,
                    Body::Error(ErrorBody::default()),
                );
                sock.send_to(&answer.encode().unwrap(), peer).await.unwrap();
                return seen;
            }
        }
    });
    let t = NetTransport::new();
    let handle = format!("20.500.1/{}", "h".repeat(1500));
    let answer = t
        .exchange(
            addr,
            TransportKind::Udp,
            &request(&handle),
            &options(&[50, 50, 3000]),
        )
        .await
        .unwrap()
        .message;
    assert_eq!(answer.header.response_code, ResponseCode::HandleNotFound);
    let seen = server.await.unwrap();
    // The 1549-byte message is 4 fragments (PROTOCOL.md §8.1), sent 3 times, in order, all
    // with the same request id.
    let id = seen[0].0;
    assert!(seen.iter().all(|(i, _)| *i == id), "{seen:?}");
    for (k, (_, seq)) in seen.iter().enumerate() {
        assert_eq!(*seq, (k % 4) as u32, "{seen:?}");
    }
    assert_eq!(answer.request_id(), id);
    assert_eq!(t.pending_count(), 0);
}

/// A hand-run server: waits for one request datagram, then sends what `answer` builds from
/// the request's id, datagram by datagram, and stops.
async fn answer_once<F>(answer: F) -> std::net::SocketAddr
where
    F: FnOnce(u32) -> Vec<bytes::Bytes> + Send + 'static,
{
    use handle_resolver::wire::{Envelope, Reader};
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = sock.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        let (n, peer) = sock.recv_from(&mut buf).await.unwrap();
        let env =
            Envelope::decode(&mut Reader::new(bytes::Bytes::copy_from_slice(&buf[..n]))).unwrap();
        for d in answer(env.request_id) {
            sock.send_to(&d, peer).await.unwrap();
        }
    });
    addr
}

/// A successful answer to request `id` with 10 URL values of 100 letters `letter` (about
/// 1.4 kB: 3 datagrams).
fn lettered_answer(id: u32, letter: char) -> Vec<bytes::Bytes> {
    use handle_resolver::wire::{fragment, Body, HandleValue, ResolutionResponse};
    let request = Message::resolution_request(b("20.500.1/mixed"), vec![], vec![], id, 0);
    let values = (1..=10)
        .map(|i| HandleValue::new(i, "URL", letter.to_string().repeat(100)))
        .collect();
    let body = Body::ResolutionResponse(ResolutionResponse {
        handle: b("20.500.1/mixed"),
        values,
    });
    let encoded = Message::response_to(&request, ResponseCode::Success, body)
        .encode()
        .unwrap();
    let datagrams = fragment(&encoded);
    assert_eq!(datagrams.len(), 3);
    datagrams
}

#[tokio::test]
async fn udp_a_second_answer_of_the_same_length_replaces_the_one_being_collected() {
    // Answer A loses its last fragment; answer B (same length, other bytes) follows whole.
    // The conflicting fragment 0 of B starts over, so B is what the caller gets: never a
    // mix of A's first fragments with B's last one.
    let addr = answer_once(|id| {
        let a = lettered_answer(id, 'a');
        let bb = lettered_answer(id, 'b');
        vec![
            a[0].clone(),
            a[1].clone(),
            bb[0].clone(),
            bb[1].clone(),
            bb[2].clone(),
        ]
    })
    .await;
    let t = NetTransport::new();
    let answer = t
        .exchange(
            addr,
            TransportKind::Udp,
            &request("20.500.1/mixed"),
            &options(&[5000]),
        )
        .await
        .unwrap()
        .message;
    let v = answer_values(&answer);
    assert_eq!(v.len(), 10);
    assert!(v.iter().all(|v| v.data == "b".repeat(100)), "{v:?}");
    assert_eq!(t.reassembly_bytes(), 0);
}

#[tokio::test]
async fn udp_an_invalid_fragment_does_not_discard_the_answer_being_collected() {
    // Between fragments 1 and 2 of the answer comes a copy of fragment 0 whose MessageLength
    // is 0x7FFFFFFF (envelope bytes 16..20): above every limit, so it is dropped and the
    // answer completes with its last fragment.
    let addr = answer_once(|id| {
        let a = lettered_answer(id, 'a');
        let mut oversized = a[0].to_vec();
        oversized[16..20].copy_from_slice(&0x7FFF_FFFFu32.to_be_bytes());
        vec![a[0].clone(), a[1].clone(), oversized.into(), a[2].clone()]
    })
    .await;
    let t = NetTransport::new();
    let answer = t
        .exchange(
            addr,
            TransportKind::Udp,
            &request("20.500.1/mixed"),
            &options(&[5000]),
        )
        .await
        .unwrap()
        .message;
    let v = answer_values(&answer);
    assert_eq!(v.len(), 10);
    assert!(v.iter().all(|v| v.data == "a".repeat(100)), "{v:?}");
    assert_eq!(t.reassembly_bytes(), 0);
}

#[tokio::test]
async fn udp_answer_source_is_compared_by_ip_and_port_only() {
    use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};
    let t = NetTransport::new();
    let req = request("20.500.1/small");
    // An IPv4 server asked through its IPv4-mapped IPv6 address goes through the IPv4
    // socket, and its answer is taken.
    let v4 = server(1).await;
    let SocketAddr::V4(a) = v4.addr() else {
        panic!("the test server binds 127.0.0.1");
    };
    let mapped = SocketAddr::from((a.ip().to_ipv6_mapped(), a.port()));
    let answer = t
        .exchange(mapped, TransportKind::Udp, &req, &options(&[5000]))
        .await
        .unwrap()
        .message;
    assert_eq!(answer.header.response_code, ResponseCode::Success);
    assert!(t.udp_local_addr(mapped).unwrap().is_ipv4());

    // An IPv6 server asked with a flow label in its address: the answer arrives from the
    // same IP and port with no flow label, and is taken.
    let mut c = handle_resolver::testing::TestServerConfig::new(super::store());
    c.ip = "::1".parse().unwrap();
    let v6 = handle_resolver::testing::TestServer::start(c)
        .await
        .unwrap_or_else(|e| panic!("cannot bind the test server to [::1] (IPv6 loopback): {e}"));
    let labelled = SocketAddr::V6(SocketAddrV6::new(
        Ipv6Addr::LOCALHOST,
        v6.addr().port(),
        7,
        0,
    ));
    let answer = t
        .exchange(labelled, TransportKind::Udp, &req, &options(&[5000]))
        .await
        .unwrap()
        .message;
    assert_eq!(answer.header.response_code, ResponseCode::Success);
    assert_eq!(t.pending_count(), 0);
}
