//! TCP: one framed connection per request and the typed errors of broken answers.

use std::time::Duration;

use handle_resolver::testing::Faults;
use handle_resolver::transport::{Exchange, NetTransport, TransportError, TransportKind};
use handle_resolver::wire::{DecodeErrorKind, ResponseCode};

use super::{answer_values, options, request, server};

async fn tcp_with(
    faults: Faults,
    handle: &str,
) -> Result<handle_resolver::wire::Message, TransportError> {
    let server = server(1).await;
    server.set_faults(faults);
    let t = NetTransport::new();
    let r = t
        .exchange(
            server.addr(),
            TransportKind::Tcp,
            &request(handle),
            &options(&[]),
        )
        .await
        .map(|e| {
            // TCP never retransmits.
            assert_eq!(e.transmissions, 1);
            e.message
        });
    assert_eq!(server.tcp_requests(), 1);
    assert_eq!(server.udp_requests(), 0);
    r
}

#[tokio::test]
async fn tcp_exchange_returns_small_and_large_answers() {
    let small = tcp_with(Faults::default(), "20.500.1/small").await.unwrap();
    assert_eq!(small.header.response_code, ResponseCode::Success);
    assert_eq!(answer_values(&small).len(), 2);
    let large = tcp_with(Faults::default(), "20.500.1/large").await.unwrap();
    assert_eq!(answer_values(&large).len(), 40);
}

#[tokio::test]
async fn tcp_truncated_answer_is_closed() {
    let err = tcp_with(
        Faults {
            truncated_length: true,
            ..Faults::default()
        },
        "20.500.1/large",
    )
    .await
    .unwrap_err();
    assert_eq!(err, TransportError::Closed);
}

#[tokio::test]
async fn tcp_oversized_length_is_a_decode_error() {
    let err = tcp_with(
        Faults {
            oversized_length: true,
            ..Faults::default()
        },
        "20.500.1/small",
    )
    .await
    .unwrap_err();
    match err {
        TransportError::Decode(e) => {
            assert!(
                matches!(
                    e.kind,
                    DecodeErrorKind::TooLarge {
                        value: 0x7FFF_FFFF,
                        ..
                    }
                ),
                "{e}"
            );
        }
        other => panic!("expected a decode error, got {other:?}"),
    }
}

#[tokio::test]
async fn tcp_wrong_request_id_is_a_mismatch() {
    let err = tcp_with(
        Faults {
            wrong_request_id: true,
            ..Faults::default()
        },
        "20.500.1/small",
    )
    .await
    .unwrap_err();
    match err {
        TransportError::RequestIdMismatch { expected, got } => {
            // The server flips bits of the id (0x5A5A5A5A) to make the wrong one.
            assert_eq!(expected ^ got, 0x5A5A_5A5A);
        }
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn tcp_garbage_is_an_error_not_an_answer() {
    let err = tcp_with(
        Faults {
            garbage: true,
            ..Faults::default()
        },
        "20.500.1/small",
    )
    .await
    .unwrap_err();
    // 64 random bytes: an envelope whose length is either over the limit or longer than what
    // follows, or a message that does not decode.
    assert!(
        matches!(err, TransportError::Decode(_) | TransportError::Closed),
        "{err:?}"
    );
}

#[tokio::test]
async fn tcp_silent_server_hits_the_read_timeout() {
    let server = server(1).await;
    server.set_faults(Faults {
        silent: true,
        ..Faults::default()
    });
    let t = NetTransport::new();
    let mut opts = options(&[]);
    opts.tcp_read_timeout = Duration::from_millis(100);
    let err = t
        .exchange(
            server.addr(),
            TransportKind::Tcp,
            &request("20.500.1/small"),
            &opts,
        )
        .await
        .unwrap_err();
    assert_eq!(err, TransportError::Timeout);
}

#[tokio::test]
async fn tcp_slow_answer_arrives_within_the_timeout() {
    let answer = tcp_with(
        Faults {
            slow_tcp: Some(Duration::from_millis(2)),
            ..Faults::default()
        },
        "20.500.1/small",
    )
    .await
    .unwrap();
    assert_eq!(answer_values(&answer).len(), 2);
}

#[tokio::test]
async fn tcp_refused_connection_is_an_io_error() {
    // Bind then drop a listener: its port is very likely closed now.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let t = NetTransport::new();
    let err = t
        .exchange(
            format!("127.0.0.1:{port}").parse().unwrap(),
            TransportKind::Tcp,
            &request("20.500.1/small"),
            &options(&[]),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::Io(std::io::ErrorKind::ConnectionRefused, _)
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn tcp_an_echoed_request_is_not_an_answer() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A peer that writes our own request back: same request id, response code 0.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut head = [0u8; 20];
        s.read_exact(&mut head).await.unwrap();
        // Envelope bytes 16..20: MessageLength.
        let len = u32::from_be_bytes(head[16..20].try_into().unwrap()) as usize;
        let mut rest = vec![0u8; len];
        s.read_exact(&mut rest).await.unwrap();
        s.write_all(&head).await.unwrap();
        s.write_all(&rest).await.unwrap();
    });
    let err = NetTransport::new()
        .exchange(
            addr,
            TransportKind::Tcp,
            &request("20.500.1/small"),
            &options(&[]),
        )
        .await
        .unwrap_err();
    match err {
        TransportError::Decode(e) => assert_eq!(e.field, "header.response_code"),
        other => panic!("{other:?}"),
    }
}
