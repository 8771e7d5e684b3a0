//! TCP: one connection per request (the servers close after each answer), framed with the
//! wire codec; connect timeout, then one deadline for writing the request and reading the
//! whole answer (PROTOCOL.md §8.2).

use std::net::SocketAddr;
use std::time::Instant;

use bytes::{Buf, Bytes, BytesMut};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_util::codec::{Decoder, Encoder, Framed};
use tracing::debug;

use super::error::TransportError;
use super::exchange::{encode_with_request_id, random_request_id, ExchangeOptions};
use crate::wire::{
    DecodeError, DecodeErrorKind, EncodeError, Envelope, Limits, Message, Reader, ENVELOPE_LEN,
};

/// One TCP exchange: connect, write the request, read one answer, close.
pub(crate) async fn exchange(
    server: SocketAddr,
    request: &Message,
    options: &ExchangeOptions,
) -> Result<Message, TransportError> {
    let id = random_request_id();
    let encoded = encode_with_request_id(request, id)?;
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
    let connected = Instant::now();
    let mut framed = Framed::new(stream, HandleCodec::new(options.limits));
    let answer = tokio::time::timeout(options.tcp_read_timeout, async {
        framed.send(encoded).await.map_err(codec_error)?;
        match framed.next().await {
            None => Err(TransportError::Closed),
            Some(Err(e)) => Err(codec_error(e)),
            Some(Ok(m)) => Ok(m),
        }
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
    if answer.request_id() != id {
        debug!(%server, transport = "tcp", expected = id, got = answer.request_id(), "request id mismatch");
        return Err(TransportError::RequestIdMismatch {
            expected: id,
            got: answer.request_id(),
        });
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
    Ok(answer)
}

fn codec_error(e: CodecError) -> TransportError {
    match e {
        CodecError::Io(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            TransportError::Closed
        }
        CodecError::Io(e) => e.into(),
        CodecError::Decode(e) => TransportError::Decode(e),
        CodecError::Encode(e) => TransportError::Encode(e),
    }
}

// TODO(transport): switch to the wire helper's `HandleCodec` once it lands.
/// Frames answers: 20-byte envelope, then exactly `MessageLength` bytes, capped by the limits
/// before anything is buffered.
#[derive(Debug)]
struct HandleCodec {
    limits: Limits,
}

impl HandleCodec {
    fn new(limits: Limits) -> Self {
        Self { limits }
    }
}

/// Errors of the framing.
#[derive(Debug)]
enum CodecError {
    Io(std::io::Error),
    Decode(DecodeError),
    #[allow(dead_code)]
    Encode(EncodeError),
}

impl From<std::io::Error> for CodecError {
    fn from(e: std::io::Error) -> Self {
        CodecError::Io(e)
    }
}

impl Decoder for HandleCodec {
    type Item = Message;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, CodecError> {
        let Some(head) = src.get(..ENVELOPE_LEN) else {
            src.reserve(ENVELOPE_LEN);
            return Ok(None);
        };
        let envelope = Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(head)))
            .map_err(CodecError::Decode)?;
        let len = envelope.message_length as usize;
        if len > self.limits.max_message_length {
            return Err(CodecError::Decode(DecodeError::new(
                "envelope.message_length",
                16,
                DecodeErrorKind::TooLarge {
                    value: len as u64,
                    limit: self.limits.max_message_length as u64,
                },
            )));
        }
        let total = ENVELOPE_LEN + len;
        if src.len() < total {
            src.reserve(total - src.len());
            return Ok(None);
        }
        let frame = src.split_to(total).freeze();
        Message::decode(frame, &self.limits)
            .map(Some)
            .map_err(CodecError::Decode)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Message>, CodecError> {
        match self.decode(src)? {
            Some(m) => Ok(Some(m)),
            None if src.is_empty() => Ok(None),
            None => {
                let n = src.remaining();
                src.clear();
                Err(CodecError::Io(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("connection closed with {n} bytes of an incomplete message"),
                )))
            }
        }
    }
}

impl Encoder<Bytes> for HandleCodec {
    type Error = CodecError;

    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.extend_from_slice(&item);
        Ok(())
    }
}
