//! HTTP on loopback against hand-made servers that misbehave: each ends in a typed error
//! within its timeout, never a panic or a wait past it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use handle_resolver::transport::HttpTarget;
use handle_resolver::transport::{
    Exchange, ExchangeOptions, HttpGet, NetTransport, TransportError,
};
use handle_resolver::wire::{Body, Message, ResponseCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server that reads the request head and answers `reply(request_id)` (or nothing when
/// `None`), for every connection.
async fn fake(reply: impl Fn(Vec<u8>) -> Option<Vec<u8>> + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let reply = std::sync::Arc::new(reply);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let reply = reply.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut got = Vec::new();
                // Head, then the body the Content-Length announces (native requests are
                // small).
                loop {
                    let Ok(n) = stream.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&got[..end]).to_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .and_then(|v| v.trim().parse().ok())
                            .unwrap_or(0);
                        if got.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                match reply(got) {
                    Some(answer) => {
                        let _ = stream.write_all(&answer).await;
                        let _ = stream.shutdown().await;
                    }
                    None => tokio::time::sleep(Duration::from_secs(60)).await,
                }
            });
        }
    });
    addr
}

/// The request id of the native request in an HTTP request (body = envelope ‖ message).
fn request_id(http: &[u8]) -> u32 {
    let end = http.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    u32::from_be_bytes(http[end + 8..end + 12].try_into().unwrap())
}

fn request() -> Message {
    Message::resolution_request("20.500.1/x", vec![], vec![], 0, 0)
}

/// A native answer to a request with `id`.
fn native_answer(id: u32) -> Vec<u8> {
    let mut req = request();
    req.envelope.request_id = id;
    Message::response_to(&req, ResponseCode::HandleNotFound, Body::Success)
        .encode()
        .unwrap()
        .to_vec()
}

fn http_response(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn options() -> ExchangeOptions {
    ExchangeOptions::default()
        .with_tcp_connect_timeout(Duration::from_secs(1))
        .with_tcp_read_timeout(Duration::from_millis(500))
}

async fn post(addr: SocketAddr) -> Result<Message, TransportError> {
    NetTransport::new()
        .exchange_http(&HttpTarget::http(addr), &request(), &options())
        .await
        .map(|e| e.message)
}

#[tokio::test]
async fn the_answer_in_the_body_is_taken_whatever_the_status() {
    let addr = fake(|req| {
        assert!(String::from_utf8_lossy(&req).starts_with("POST /20.500.1/x HTTP/1.1\r\n"));
        Some(http_response(
            "500 Oops",
            "application/x-hdl-message",
            &native_answer(request_id(&req)),
        ))
    })
    .await;
    let m = post(addr).await.unwrap();
    assert_eq!(m.response_code(), ResponseCode::HandleNotFound);
}

#[tokio::test]
async fn misbehaving_http_servers_give_typed_errors() {
    // Another content type (a captive portal's page).
    let addr = fake(|_| Some(http_response("200 OK", "text/html", b"<html>login</html>"))).await;
    let e = post(addr).await.unwrap_err();
    assert!(
        matches!(e, TransportError::Http(handle_resolver::transport::HttpError::ContentType { got: Some(ref t), .. }) if t == "text/html"),
        "{e}"
    );
    // An answer with another request id.
    let addr = fake(|req| {
        Some(http_response(
            "200 OK",
            "application/x-hdl-message",
            &native_answer(request_id(&req) ^ 1),
        ))
    })
    .await;
    let e = post(addr).await.unwrap_err();
    assert!(matches!(e, TransportError::RequestIdMismatch { .. }), "{e}");
    // A body that ends before its message does.
    let addr = fake(|req| {
        let answer = native_answer(request_id(&req));
        Some(http_response(
            "200 OK",
            "application/x-hdl-message",
            &answer[..answer.len() - 5],
        ))
    })
    .await;
    assert_eq!(post(addr).await.unwrap_err(), TransportError::Closed);
    // Not HTTP at all.
    let addr = fake(|_| Some(b"SSH-2.0-OpenSSH\r\n".to_vec())).await;
    let e = post(addr).await.unwrap_err();
    assert!(
        matches!(e, TransportError::Http(_) | TransportError::Closed),
        "{e}"
    );
    // A body longer than one message of the limits' length: decoded as it comes, it is
    // refused at its first envelope (here, one of zeros: an empty message).
    let cap = 20 + handle_resolver::wire::Limits::default().max_message_length;
    let addr = fake(move |_| {
        let big = vec![0u8; cap + 1];
        Some(http_response("200 OK", "application/x-hdl-message", &big))
    })
    .await;
    let e = post(addr).await.unwrap_err();
    assert!(matches!(e, TransportError::Decode(_)), "{e}");
    // An envelope announcing a message beyond the limits: refused before its bytes are read.
    let addr = fake(move |req| {
        let mut answer = native_answer(request_id(&req));
        answer[16..20].copy_from_slice(&u32::try_from(cap).unwrap().to_be_bytes());
        Some(http_response(
            "200 OK",
            "application/x-hdl-message",
            &answer,
        ))
    })
    .await;
    let e = post(addr).await.unwrap_err();
    assert!(
        matches!(e, TransportError::Decode(ref d) if d.to_string().contains("length")),
        "{e}"
    );
}

#[tokio::test]
async fn a_silent_http_server_times_out() {
    let addr = fake(|_| None).await;
    let t0 = Instant::now();
    assert_eq!(post(addr).await.unwrap_err(), TransportError::Timeout);
    assert!(t0.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_refused_connection_is_an_io_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let e = post(addr).await.unwrap_err();
    assert!(
        matches!(
            e,
            TransportError::Io(std::io::ErrorKind::ConnectionRefused, _)
        ),
        "{e}"
    );
}

fn get(addr: SocketAddr, path: &str, max_body: usize) -> HttpGet {
    HttpGet::new(format!("http://{addr}{path}"), "application/json", max_body)
}

#[tokio::test]
async fn fetch_returns_redirects_and_statuses_as_answers() {
    let addr = fake(|req| {
        let head = String::from_utf8_lossy(&req).to_string();
        assert!(head.starts_with("GET /uri-res/N2L?urn:x HTTP/1.1\r\n"), "{head}");
        assert!(head.to_lowercase().contains("accept: application/json"));
        Some(
            b"HTTP/1.1 302 Found\r\nLocation: http://example.org/x\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n"
                .to_vec(),
        )
    })
    .await;
    let f = NetTransport::new()
        .fetch(&get(addr, "/uri-res/N2L?urn:x", 1024))
        .await
        .unwrap();
    assert_eq!(f.status, 302);
    assert_eq!(f.location.as_deref(), Some("http://example.org/x"));
    assert_eq!(f.retry_after.as_deref(), Some("7"));
    assert_eq!(f.body, Bytes::new());
}

#[tokio::test]
async fn fetch_caps_the_body() {
    let addr = fake(|_| Some(http_response("200 OK", "text/plain", &vec![b'a'; 10_000]))).await;
    let e = NetTransport::new()
        .fetch(&get(addr, "/x", 1000))
        .await
        .unwrap_err();
    assert_eq!(e, TransportError::BodyTooLarge { limit: 1000 });
    // Without Content-Length (read to the end of the connection) the cap holds too.
    let addr = fake(|_| {
        let mut r =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n".to_vec();
        r.extend(vec![b'a'; 10_000]);
        Some(r)
    })
    .await;
    let e = NetTransport::new()
        .fetch(&get(addr, "/x", 1000))
        .await
        .unwrap_err();
    assert_eq!(e, TransportError::BodyTooLarge { limit: 1000 });
    let e = NetTransport::new()
        .fetch(&HttpGet::new("ftp://127.0.0.1/x", "*/*", 10))
        .await
        .unwrap_err();
    assert!(matches!(e, TransportError::Http(_)), "{e}");
}
