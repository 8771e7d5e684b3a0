//! The native protocol over HTTP(S) (PROTOCOL.md §8.3): `POST /<percent-encoded handle>` on a
//! connection of its own, the body the envelope and message exactly as over TCP, the answer
//! the envelope and message read from the response body. The HTTP status is not trusted over
//! the message: a body that holds a message is the answer, whatever the status says.

use std::time::Instant;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST, USER_AGENT};
use hyper_util::rt::TokioIo;
use percent_encoding::utf8_percent_encode;
use tokio::net::TcpStream;
use tokio_util::codec::Decoder;
use tracing::debug;

use super::super::codec::{CodecError, HandleCodec};
use super::super::error::TransportError;
use super::super::exchange::{media_type, ExchangeOptions};
use super::super::request_id::{encode_with_request_id, random_request_id};
use super::target::{HttpTarget, HDL_MIME_TYPE};
use super::tls;
use crate::ident::chars::HANDLE_PATH;
use crate::wire::{Body, Message, ENVELOPE_LEN};

/// The `User-Agent` sent with native requests.
const AGENT: &str = concat!("handle-resolver/", env!("CARGO_PKG_VERSION"));

/// The request's URL path: the site's path prefix, then `/` and the handle the request is
/// about, percent-encoded (`/` for requests about no handle).
pub(crate) fn request_path(target: &HttpTarget, request: &Message) -> String {
    let handle: &[u8] = match &request.body {
        Body::ResolutionRequest(r) => &r.handle,
        _ => b"",
    };
    let handle = String::from_utf8_lossy(handle);
    format!(
        "{}/{}",
        target.path,
        utf8_percent_encode(&handle, HANDLE_PATH)
    )
}

/// One native exchange over HTTP(S): connect (within the TCP connect timeout), send the
/// request, read the answer (within the TCP read timeout), close.
pub(crate) async fn exchange(
    target: &HttpTarget,
    request: &Message,
    options: &ExchangeOptions,
) -> Result<Message, TransportError> {
    let id = random_request_id();
    let encoded = encode_with_request_id(request, id, options.session.as_deref())?;
    let server = target.addr;
    let started = Instant::now();
    let stream =
        match tokio::time::timeout(options.tcp_connect_timeout, TcpStream::connect(server)).await {
            Err(_) => return Err(TransportError::Timeout),
            Ok(Err(e)) => {
                debug!(%server, transport = "http", error = %e, "connect failed");
                return Err(e.into());
            }
            Ok(Ok(s)) => s,
        };
    stream.set_nodelay(true)?;
    let path = request_path(target, request);
    let answer = tokio::time::timeout(options.tcp_read_timeout, async {
        if target.tls {
            let stream = tls::connect(target, stream).await?;
            post(target, &path, encoded, options, stream).await
        } else {
            post(target, &path, encoded, options, stream).await
        }
    })
    .await
    .map_err(|_| TransportError::Timeout)??;
    if answer.request_id() != id {
        return Err(TransportError::RequestIdMismatch {
            expected: id,
            got: answer.request_id(),
        });
    }
    debug!(
        %server,
        transport = if target.tls { "https" } else { "http" },
        total_us = started.elapsed().as_micros() as u64,
        code = %answer.header.response_code,
        "answer"
    );
    Ok(answer)
}

/// Sends the POST over an open connection and decodes the answer.
async fn post<S>(
    target: &HttpTarget,
    path: &str,
    encoded: Bytes,
    options: &ExchangeOptions,
    stream: S,
) -> Result<Message, TransportError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(http_error)?;
    // The connection task ends when the answer has been read or the sender is dropped.
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let length = encoded.len();
    let request = hyper::Request::post(path)
        .header(HOST, target.host_header())
        .header(ACCEPT, HDL_MIME_TYPE)
        .header(CONTENT_TYPE, HDL_MIME_TYPE)
        .header(CONTENT_LENGTH, length)
        .header(USER_AGENT, AGENT)
        .body(Full::new(encoded))
        .map_err(|e| TransportError::Http(format!("request: {e}")))?;
    let result = async {
        let response = sender.send_request(request).await.map_err(http_error)?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        // One answer: its envelope and at most the longest message the limits allow.
        let cap = ENVELOPE_LEN.saturating_add(options.limits.max_message_length);
        let body = read_capped(response.into_body(), cap).await?;
        decode_answer(status, content_type.as_deref(), body, options)
    }
    .await;
    driver.abort();
    result
}

/// Reads a body of at most `cap` bytes.
pub(crate) async fn read_capped(
    body: hyper::body::Incoming,
    cap: usize,
) -> Result<Bytes, TransportError> {
    match Limited::new(body, cap).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(TransportError::BodyTooLarge { limit: cap })
        }
        Err(e) => Err(TransportError::Http(format!("body: {e}"))),
    }
}

/// The answer in an HTTP response: the first envelope + message of the body. A body that is
/// not a native message (another content type, a status page) is an error naming what came.
pub(crate) fn decode_answer(
    status: u16,
    content_type: Option<&str>,
    body: Bytes,
    options: &ExchangeOptions,
) -> Result<Message, TransportError> {
    let mime = content_type.map(|c| media_type(c).to_ascii_lowercase());
    if let Some(mime) = &mime {
        if mime != HDL_MIME_TYPE {
            return Err(TransportError::Http(format!(
                "status {status}, content-type {mime:?}, not {HDL_MIME_TYPE}"
            )));
        }
    }
    if body.is_empty() {
        return Err(TransportError::Http(format!("status {status}, empty body")));
    }
    let mut codec = HandleCodec::new(options.limits).with_session(options.session.clone());
    let mut buf = BytesMut::from(&body[..]);
    match codec.decode(&mut buf) {
        Ok(Some(message)) if message.is_response() => Ok(message),
        Ok(Some(_)) => Err(TransportError::Http(format!(
            "status {status}, the body holds a request, not an answer"
        ))),
        Ok(None) => Err(TransportError::Closed),
        Err(CodecError::Decode(e)) => Err(TransportError::Decode(e)),
        Err(CodecError::Session(e)) => Err(TransportError::Session(e)),
        Err(e) => Err(TransportError::Http(format!("status {status}, body: {e}"))),
    }
}

pub(crate) fn http_error(e: hyper::Error) -> TransportError {
    if e.is_incomplete_message() || e.is_closed() {
        TransportError::Closed
    } else {
        TransportError::Http(e.to_string())
    }
}

/// The answer in the body of a native HTTP(S) response, as an exchange reads it: the content
/// type (its media type, when given) must be [`HDL_MIME_TYPE`], the body's first envelope +
/// message must decode under `options.limits` and be a response. The HTTP status is only
/// named in errors.
///
/// Not a stable API: public so that the fuzz targets (`fuzz/`) reach the decoder without a
/// socket.
#[doc(hidden)]
pub fn decode_native_answer(
    status: u16,
    content_type: Option<&str>,
    body: bytes::Bytes,
    options: &ExchangeOptions,
) -> Result<crate::wire::Message, TransportError> {
    decode_answer(status, content_type, body, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ResponseCode;

    fn options() -> ExchangeOptions {
        ExchangeOptions::default()
    }

    fn answer() -> Bytes {
        let request = Message::resolution_request("0.NA/10.1045", vec![], vec![], 7, 0);
        Message::response_to(&request, ResponseCode::HandleNotFound, Body::Success)
            .encode()
            .unwrap()
    }

    #[test]
    fn the_path_is_the_prefix_and_the_percent_encoded_handle() {
        let request = Message::resolution_request("20.500.1/a b?#%é", vec![], vec![], 1, 0);
        let target = HttpTarget::http("127.0.0.1:8000".parse().unwrap()).with_path("/hs/");
        assert_eq!(
            request_path(&target, &request),
            "/hs/20.500.1/a%20b%3F%23%25%C3%A9"
        );
        let plain = HttpTarget::http("127.0.0.1:8000".parse().unwrap());
        assert_eq!(
            request_path(&plain, &request),
            "/20.500.1/a%20b%3F%23%25%C3%A9"
        );
    }

    #[test]
    fn the_host_header_names_the_domain_or_the_address() {
        let t = HttpTarget::http("127.0.0.1:8000".parse().unwrap());
        assert_eq!(t.host_header(), "127.0.0.1:8000");
        let t = HttpTarget::http("[::1]:80".parse().unwrap());
        assert_eq!(t.host_header(), "[::1]");
        let t = HttpTarget::https("10.0.0.1:443".parse().unwrap()).with_host("hdl.example.org");
        assert_eq!(t.host_header(), "hdl.example.org");
    }

    #[test]
    fn a_native_body_is_the_answer_whatever_the_status() {
        let m = decode_answer(500, Some(HDL_MIME_TYPE), answer(), &options()).unwrap();
        assert_eq!(m.response_code(), ResponseCode::HandleNotFound);
        let m = decode_answer(200, None, answer(), &options()).unwrap();
        assert_eq!(m.request_id(), 7);
    }

    #[test]
    fn bad_bodies_are_typed_errors() {
        let e = decode_answer(200, Some("text/html; charset=utf-8"), answer(), &options());
        assert!(
            matches!(e, Err(TransportError::Http(ref t)) if t.contains("text/html")),
            "{e:?}"
        );
        let e = decode_answer(404, Some(HDL_MIME_TYPE), Bytes::new(), &options());
        assert!(
            matches!(e, Err(TransportError::Http(ref t)) if t.contains("empty")),
            "{e:?}"
        );
        let whole = answer();
        let e = decode_answer(200, None, whole.slice(..whole.len() - 3), &options());
        assert_eq!(e, Err(TransportError::Closed));
        let request = Message::resolution_request("0.NA/1", vec![], vec![], 7, 0)
            .encode()
            .unwrap();
        let e = decode_answer(200, None, request, &options());
        assert!(
            matches!(e, Err(TransportError::Http(ref t)) if t.contains("request")),
            "{e:?}"
        );
        // A message length beyond the limits.
        let mut huge = answer().to_vec();
        huge[16..20].copy_from_slice(&0x7FFF_FFFFu32.to_be_bytes());
        let e = decode_answer(200, None, Bytes::from(huge), &options());
        assert!(matches!(e, Err(TransportError::Decode(_))), "{e:?}");
    }
}
