//! TCP: one connection per request (the servers close after each answer), framed with the
//! wire codec; connect timeout, then one deadline for writing the request and reading the
//! whole answer (PROTOCOL.md §8.2).

use std::net::SocketAddr;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_util::codec::{Decoder, Encoder, Framed};
use tracing::debug;

use super::codec::{CodecError, HandleCodec};
use super::continued::Continued;
use super::error::TransportError;
use super::exchange::ExchangeOptions;
use super::request_id::{encode_with_request_id, random_request_id};
use crate::wire::{DecodeError, DecodeErrorKind, Message, ENVELOPE_LEN};

/// One TCP exchange: connect, write the request, read one answer (and the messages that
/// follow it while they are marked continued), close.
pub(crate) async fn exchange(
    server: SocketAddr,
    request: &Message,
    options: &ExchangeOptions,
) -> Result<(Message, Vec<Message>), TransportError> {
    let id = random_request_id();
    let started = Instant::now();
    let stream =
        match tokio::time::timeout(options.tcp_connect_timeout, TcpStream::connect(server)).await {
            Err(_) => {
                debug!(%server, transport = "tcp", "connect timed out");
                return Err(TransportError::Timeout);
            }
            Ok(Err(e)) => {
                debug!(%server, transport = "tcp", error = %e, "connect failed");
                return Err(e.into());
            }
            Ok(Ok(s)) => s,
        };
    // The request goes out in one write; no reason to wait for more.
    stream.set_nodelay(true)?;
    // Encoded (in a session: sealed, taking the session's next counter) once connected, just
    // before it is written: the counters of a session reach the server in nearly the order
    // they were taken, as its window of recent counters needs (`resolver/peers/session.rs`).
    let encoded = encode_with_request_id(request, id, options.session.as_deref())?;
    let connected = Instant::now();
    let mut framed = Framed::new(
        stream,
        AnswerCodec(HandleCodec::new(options.limits).with_session(options.session.clone())),
    );
    let answer = tokio::time::timeout(options.tcp_read_timeout, async {
        framed.send(encoded).await.map_err(codec_error)?;
        // The answer, and for a continued one (a handle list) the rest, on the same
        // connection, until one without CN (`Continued`).
        let mut answer = Continued::default();
        loop {
            let next = match framed.next().await {
                None => return Err(TransportError::Closed),
                Some(Err(e)) => return Err(codec_error(e)),
                Some(Ok(m)) => m,
            };
            if answer.push(next)? {
                break;
            }
        }
        answer.into_whole().ok_or(TransportError::Closed)
    })
    .await;
    let answer = match answer {
        Err(_) => {
            debug!(%server, transport = "tcp", "answer timed out");
            return Err(TransportError::Timeout);
        }
        Ok(Err(e)) => {
            debug!(%server, transport = "tcp", error = %e, "exchange failed");
            return Err(e);
        }
        Ok(Ok(m)) => m,
    };
    let (answer, continued) = answer;
    if answer.request_id() != id {
        debug!(%server, transport = "tcp", expected = id, got = answer.request_id(), "request id mismatch");
        return Err(TransportError::RequestIdMismatch {
            expected: id,
            got: answer.request_id(),
        });
    }
    if !answer.is_response() {
        // Response code 0 is a request (a peer echoing what it got): on UDP such a datagram
        // is dropped; here it is the only answer there will be.
        debug!(%server, transport = "tcp", "answer is not a response");
        return Err(TransportError::Decode(DecodeError::new(
            "header.response_code",
            ENVELOPE_LEN + 4,
            DecodeErrorKind::Invalid { value: 0 },
        )));
    }
    debug!(
        %server,
        transport = "tcp",
        attempt = 0,
        rtt_us = connected.elapsed().as_micros() as u64,
        total_us = started.elapsed().as_micros() as u64,
        code = %answer.header.response_code,
        "answer"
    );
    Ok((answer, continued))
}

fn codec_error(e: AnswerError) -> TransportError {
    match e {
        AnswerError::Truncated => TransportError::Closed,
        AnswerError::Codec(CodecError::Io(e)) => e.into(),
        AnswerError::Codec(CodecError::Decode(e)) => TransportError::Decode(e),
        AnswerError::Codec(CodecError::Encode(e)) => TransportError::Encode(e),
        AnswerError::Codec(CodecError::Session(e)) => TransportError::Session(e),
    }
}

/// [`HandleCodec`] with a typed end of stream: the peer closing in the middle of a frame is
/// [`AnswerError::Truncated`] (tokio-util's default is an untyped `io::Error`).
struct AnswerCodec(HandleCodec);

enum AnswerError {
    Truncated,
    Codec(CodecError),
}

impl From<std::io::Error> for AnswerError {
    fn from(e: std::io::Error) -> Self {
        AnswerError::Codec(CodecError::Io(e))
    }
}

impl Decoder for AnswerCodec {
    type Item = Message;
    type Error = AnswerError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, AnswerError> {
        self.0.decode(src).map_err(AnswerError::Codec)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Message>, AnswerError> {
        match self.decode(src)? {
            Some(m) => Ok(Some(m)),
            None if src.is_empty() => Ok(None),
            None => {
                src.clear();
                Err(AnswerError::Truncated)
            }
        }
    }
}

impl Encoder<Bytes> for AnswerCodec {
    type Error = AnswerError;

    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), AnswerError> {
        self.0.encode(item, dst).map_err(AnswerError::Codec)
    }
}
