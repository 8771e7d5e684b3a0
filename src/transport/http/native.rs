//! The native protocol over HTTP(S) (PROTOCOL.md §8.3): `POST /<percent-encoded handle>` on a
//! connection of its own, the body the envelope and message exactly as over TCP, the answer
//! the envelope and message read from the response body (and, as over TCP, the messages that
//! follow it in the body while they are marked continued: a handle list). The HTTP status is
//! not trusted over the message: a body that holds a message is the answer, whatever the
//! status says.

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
use super::super::continued::Continued;
use super::super::error::{HttpError, TransportError};
use super::super::exchange::{media_type, ExchangeOptions, Exchanged};
use super::super::request_id::{encode_with_request_id, random_request_id};
use super::target::{HttpTarget, HDL_MIME_TYPE};
use super::tls;
use crate::ident::chars::HANDLE_PATH;
use crate::wire::{Body, Message};

/// The `User-Agent` sent with native requests.
const AGENT: &str = concat!("handle-resolver/", env!("CARGO_PKG_VERSION"));

/// The request's URL path: the site's path prefix, then `/` and the handle the request is
/// about, percent-encoded, as the reference client names it: the handle resolved, created,
/// changed, deleted or listed (the prefix handle), `/` for requests about no handle (a
/// challenge's answer, a session setup, site information).
pub(crate) fn request_path(target: &HttpTarget, request: &Message) -> String {
    let handle: &[u8] = match &request.body {
        Body::ResolutionRequest(r) => &r.handle,
        Body::CreateHandleRequest { handle, .. }
        | Body::DeleteHandleRequest { handle }
        | Body::AddValueRequest { handle, .. }
        | Body::ModifyValueRequest { handle, .. }
        | Body::RemoveValueRequest { handle, .. }
        | Body::ListHandlesRequest { handle }
        | Body::HomePrefixRequest { handle } => handle,
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
/// request, read the answer and the messages continuing it (within the TCP read timeout),
/// close. Always one transmission.
pub(crate) async fn exchange(
    target: &HttpTarget,
    request: &Message,
    options: &ExchangeOptions,
) -> Result<Exchanged, TransportError> {
    let id = random_request_id();
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
    // Encoded (in a session: sealed, taking its next counter) once connected, as over TCP
    // (`tcp.rs`): a session's counters reach the server in the order they were taken.
    let seal = || encode_with_request_id(request, id, options.session.as_deref());
    let answer = tokio::time::timeout(options.tcp_read_timeout, async {
        if target.tls {
            let stream = tls::connect(target, stream).await?;
            post(target, &path, seal()?, options, stream).await
        } else {
            post(target, &path, seal()?, options, stream).await
        }
    })
    .await
    .map_err(|_| TransportError::Timeout)??;
    let (answer, continued) = answer;
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
        continued = continued.len(),
        "answer"
    );
    Ok(Exchanged::new(answer, 1).with_continued(continued))
}

/// Sends the POST over an open connection and decodes the answer.
async fn post<S>(
    target: &HttpTarget,
    path: &str,
    encoded: Bytes,
    options: &ExchangeOptions,
    stream: S,
) -> Result<(Message, Vec<Message>), TransportError>
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
        .map_err(|e| HttpError::Client(format!("request: {e}")))?;
    let result = async {
        let response = sender.send_request(request).await.map_err(http_error)?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        check_content_type(status, content_type.as_deref())?;
        // Decoded as the bytes arrive: each message is held to the limits as soon as its
        // envelope is in, and the body is read no further than the answer's last message.
        let mut answers = BodyAnswers::new(status, options);
        let mut body = response.into_body();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(http_error)?;
            if let Ok(data) = frame.into_data() {
                if answers.push(&data)? {
                    break;
                }
            }
        }
        answers.finish()
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
        Err(e) => Err(HttpError::Client(format!("body: {e}")).into()),
    }
}

/// A content type other than [`HDL_MIME_TYPE`] (a status page) is an error naming it; none
/// at all is taken as the native type.
fn check_content_type(status: u16, content_type: Option<&str>) -> Result<(), TransportError> {
    let mime = content_type.map(|c| media_type(c).to_ascii_lowercase());
    match mime {
        Some(mime) if mime != HDL_MIME_TYPE => Err(HttpError::ContentType {
            status,
            got: Some(mime),
            expected: HDL_MIME_TYPE,
        }
        .into()),
        _ => Ok(()),
    }
}

/// The messages of an HTTP answer body, decoded as its bytes come: the answer, then (as over
/// TCP) the messages that follow it while the one before is marked continued (CN), each for
/// the same request, at most [`MAX_CONTINUED`](super::super::MAX_CONTINUED) of them
/// ([`Continued`]).
struct BodyAnswers {
    codec: HandleCodec,
    buf: BytesMut,
    status: u16,
    received: bool,
    answer: Continued,
}

impl BodyAnswers {
    fn new(status: u16, options: &ExchangeOptions) -> Self {
        Self {
            codec: HandleCodec::new(options.limits).with_session(options.session.clone()),
            buf: BytesMut::new(),
            status,
            received: false,
            answer: Continued::default(),
        }
    }

    /// Takes the next bytes of the body; true once the answer is whole (its last message
    /// is not marked continued), when the rest of the body is not needed.
    fn push(&mut self, data: &[u8]) -> Result<bool, TransportError> {
        self.received |= !data.is_empty();
        self.buf.extend_from_slice(data);
        while !self.answer.is_whole() {
            match self.codec.decode(&mut self.buf) {
                Ok(Some(message)) => self.take(message)?,
                Ok(None) => return Ok(false),
                Err(CodecError::Decode(e)) => return Err(TransportError::Decode(e)),
                Err(CodecError::Session(e)) => return Err(TransportError::Session(e)),
                Err(CodecError::Io(e)) => return Err(e.into()),
                Err(CodecError::Encode(e)) => return Err(TransportError::Encode(e)),
            }
        }
        Ok(true)
    }

    fn take(&mut self, message: Message) -> Result<(), TransportError> {
        if !message.is_response() {
            return Err(HttpError::NotAnAnswer {
                status: self.status,
            }
            .into());
        }
        self.answer.push(message).map(drop)
    }

    /// The answer and the messages continuing it, once the body has ended (or is not needed
    /// further).
    fn finish(self) -> Result<(Message, Vec<Message>), TransportError> {
        if !self.received {
            return Err(HttpError::EmptyBody {
                status: self.status,
            }
            .into());
        }
        // None: the body ended in the middle of a message, or before the last of a list.
        self.answer.into_whole().ok_or(TransportError::Closed)
    }
}

/// The answer in an HTTP response body (and the messages continuing it). A body that is not
/// a native message (another content type, a status page) is an error naming what came.
pub(crate) fn decode_answer(
    status: u16,
    content_type: Option<&str>,
    body: Bytes,
    options: &ExchangeOptions,
) -> Result<(Message, Vec<Message>), TransportError> {
    check_content_type(status, content_type)?;
    let mut answers = BodyAnswers::new(status, options);
    answers.push(&body)?;
    answers.finish()
}

pub(crate) fn http_error(e: hyper::Error) -> TransportError {
    if e.is_incomplete_message() || e.is_closed() {
        TransportError::Closed
    } else {
        HttpError::Client(e.to_string()).into()
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
    decode_answer(status, content_type, body, options).map(|(answer, _)| answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{OpFlags, ResponseCode};

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
        let (m, rest) = decode_answer(500, Some(HDL_MIME_TYPE), answer(), &options()).unwrap();
        assert_eq!(m.response_code(), ResponseCode::HandleNotFound);
        assert!(rest.is_empty());
        let (m, _) = decode_answer(200, None, answer(), &options()).unwrap();
        assert_eq!(m.request_id(), 7);
        // What follows a whole answer is not read.
        let mut trailing = answer().to_vec();
        trailing.extend_from_slice(b"<html>");
        let (m, rest) = decode_answer(200, None, Bytes::from(trailing), &options()).unwrap();
        assert_eq!((m.request_id(), rest.len()), (7, 0));
    }

    /// A list of handles: three messages of one answer in one body, CN on all but the last.
    fn list(flags_of_last: OpFlags, third_id: u32) -> Bytes {
        let request = Message::request(
            Body::ListHandlesRequest {
                handle: Bytes::from_static(b"0.NA/20.500.1"),
            },
            crate::wire::OpCode::ListHandles,
            9,
            0,
        );
        let mut body = Vec::new();
        for (i, name) in ["20.500.1/a", "20.500.1/b", "20.500.1/c"]
            .iter()
            .enumerate()
        {
            let mut m = Message::response_to(
                &request,
                ResponseCode::Success,
                Body::ListHandlesResponse {
                    handles: vec![Bytes::from(name.as_bytes().to_vec())],
                },
            );
            m.header.flags = if i < 2 {
                m.header.flags | OpFlags::CN
            } else {
                m.header.flags | flags_of_last
            };
            if i == 2 {
                m.envelope.request_id = third_id;
            }
            body.extend_from_slice(&m.encode().unwrap());
        }
        Bytes::from(body)
    }

    #[test]
    fn continued_messages_in_the_body_are_the_rest_of_the_answer() {
        let (first, rest) = decode_answer(200, None, list(OpFlags(0), 9), &options()).unwrap();
        assert_eq!(first.request_id(), 9);
        assert_eq!(rest.len(), 2);
        let names: Vec<_> = std::iter::once(&first)
            .chain(&rest)
            .map(|m| match &m.body {
                Body::ListHandlesResponse { handles } => handles[0].clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(names, ["20.500.1/a", "20.500.1/b", "20.500.1/c"]);
        // The last one still marked continued: the body ended before the list did.
        let e = decode_answer(200, None, list(OpFlags::CN, 9), &options());
        assert_eq!(e.map(|_| ()), Err(TransportError::Closed));
        // A message for another request in the middle of the list.
        let e = decode_answer(200, None, list(OpFlags(0), 10), &options());
        assert!(
            matches!(
                e,
                Err(TransportError::RequestIdMismatch {
                    expected: 9,
                    got: 10
                })
            ),
            "{e:?}"
        );
    }

    #[test]
    fn admin_requests_name_their_handle_in_the_path() {
        let target = HttpTarget::http("127.0.0.1:8000".parse().unwrap());
        let create = Message::request(
            Body::CreateHandleRequest {
                handle: Bytes::from_static(b"20.500.1/new one"),
                values: vec![],
            },
            crate::wire::OpCode::CreateHandle,
            1,
            0,
        );
        assert_eq!(request_path(&target, &create), "/20.500.1/new%20one");
        let setup = Message::request(Body::Success, crate::wire::OpCode::SessionSetup, 1, 0);
        assert_eq!(request_path(&target, &setup), "/");
    }

    #[test]
    fn bad_bodies_are_typed_errors() {
        let e = decode_answer(200, Some("text/html; charset=utf-8"), answer(), &options())
            .map(|(m, _)| m);
        assert!(
            matches!(e, Err(TransportError::Http(HttpError::ContentType { got: Some(ref t), .. })) if t == "text/html"),
            "{e:?}"
        );
        let e = decode_answer(404, Some(HDL_MIME_TYPE), Bytes::new(), &options()).map(|(m, _)| m);
        assert!(
            matches!(e, Err(TransportError::Http(HttpError::EmptyBody { .. }))),
            "{e:?}"
        );
        let whole = answer();
        let e =
            decode_answer(200, None, whole.slice(..whole.len() - 3), &options()).map(|(m, _)| m);
        assert_eq!(e, Err(TransportError::Closed));
        let request = Message::resolution_request("0.NA/1", vec![], vec![], 7, 0)
            .encode()
            .unwrap();
        let e = decode_answer(200, None, request, &options()).map(|(m, _)| m);
        assert!(
            matches!(
                e,
                Err(TransportError::Http(HttpError::NotAnAnswer { status: 200 }))
            ),
            "{e:?}"
        );
        // A message length beyond the limits.
        let mut huge = answer().to_vec();
        huge[16..20].copy_from_slice(&0x7FFF_FFFFu32.to_be_bytes());
        let e = decode_answer(200, None, Bytes::from(huge), &options()).map(|(m, _)| m);
        assert!(matches!(e, Err(TransportError::Decode(_))), "{e:?}");
    }
}
