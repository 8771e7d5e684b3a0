//! [`HandleCodec`], the tokio-util codec of a byte stream over the sans-IO wire codec: TCP
//! (and the body of an HTTP tunnel answer), one envelope + message per frame, several frames
//! per stream. It reads the 20-byte envelope, refuses a `MessageLength` above
//! `limits.max_message_length` before buffering the message, waits for the whole message and
//! decodes it. Use with `Framed` / `FramedRead`.
//!
//! Errors: a bad frame is a [`CodecError`]. A stream cannot be re-synchronised after a bad
//! frame, so the error ends it.
//!
//! UDP has no codec here: the transport collects multi-datagram answers in its table of
//! pending requests with [`Collector`](crate::wire::Collector), the one reassembly rule; a
//! receiver without such a table (a server) keeps a [`Reassembler`](crate::wire::Reassembler).

use bytes::{Bytes, BytesMut};
use thiserror::Error;
use tokio_util::codec::{Decoder, Encoder};

use std::sync::Arc;

use crate::wire::open_message;
use crate::wire::{
    CryptError, DecodeError, EncodeError, Envelope, Limits, Message, Reader, SessionKey,
    ENVELOPE_LEN,
};

/// Errors of the codec.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The socket failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A frame could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A message could not be encoded.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// An encrypted frame could not be opened (no session, or not under its key).
    #[error("session: {0}")]
    Session(CryptError),
}

/// Offset of `MessageLength` in the envelope.
const MESSAGE_LENGTH_AT: usize = 16;

/// TCP framing: envelope + message per frame, decoded into [`Message`]s.
#[derive(Debug, Clone, Default)]
pub struct HandleCodec {
    limits: Limits,
    session: Option<Arc<SessionKey>>,
}

impl HandleCodec {
    /// A codec applying `limits` (the maximum frame is `limits.max_message_length` + 20).
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            session: None,
        }
    }

    /// A codec that opens encrypted frames (envelope EC) with `session`; without one they
    /// are an error.
    pub fn with_session(mut self, session: Option<Arc<SessionKey>>) -> Self {
        self.session = session;
        self
    }

    /// The limits in use.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}

impl Decoder for HandleCodec {
    type Item = Message;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, CodecError> {
        let Some(len_bytes) = src.get(MESSAGE_LENGTH_AT..ENVELOPE_LEN) else {
            src.reserve(ENVELOPE_LEN.saturating_sub(src.len()));
            return Ok(None);
        };
        let len = <[u8; 4]>::try_from(len_bytes).map_or(u32::MAX, u32::from_be_bytes);
        let len = self.limits.check_message_length(len)?;
        let total = ENVELOPE_LEN + len;
        if src.len() < total {
            src.reserve(total - src.len());
            return Ok(None);
        }
        let mut r = Reader::new(src.split_to(total).freeze());
        let envelope = Envelope::decode(&mut r)?;
        match open_message(self.session.as_deref(), envelope, r.rest(), &self.limits) {
            Ok(m) => Ok(Some(m)),
            Err(CryptError::Decode(e)) => Err(e.into()),
            Err(e) => Err(CodecError::Session(e)),
        }
    }
}

impl Encoder<Message> for HandleCodec {
    type Error = CodecError;

    fn encode(&mut self, item: Message, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.extend_from_slice(&item.encode()?);
        Ok(())
    }
}

impl Encoder<Bytes> for HandleCodec {
    type Error = CodecError;

    /// Writes a pre-encoded envelope + message as it is.
    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.extend_from_slice(&item);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::HandleValue;
    use crate::wire::{Body, ResolutionResponse, ResponseCode};
    use futures::StreamExt;
    use tokio_util::codec::FramedRead;

    fn request(id: u32) -> Message {
        Message::resolution_request("20.500.12345/1", vec![], vec![], id, 1_795_288_990)
    }

    fn big_response(id: u32) -> Message {
        let values = (0..30)
            .map(|i| HandleValue::new(i, "URL", format!("http://example.org/{i:040}")))
            .collect();
        let body = Body::ResolutionResponse(ResolutionResponse {
            handle: Bytes::from_static(b"20.500.12345/1"),
            values,
        });
        Message::response_to(&request(id), ResponseCode::Success, body)
    }

    #[test]
    fn tcp_frames_arrive_byte_by_byte() {
        let a = request(1).encode().unwrap();
        let b = big_response(2).encode().unwrap();
        let stream: Vec<u8> = [a.as_ref(), b.as_ref()].concat();
        let mut codec = HandleCodec::default();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for byte in stream {
            buf.extend_from_slice(&[byte]);
            while let Some(m) = codec.decode(&mut buf).unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].encode().unwrap(), a);
        assert_eq!(got[1].encode().unwrap(), b);
        assert!(buf.is_empty());
    }

    #[test]
    fn tcp_refuses_an_oversized_frame_from_its_envelope() {
        let mut codec = HandleCodec::new(Limits {
            max_message_length: 100,
            ..Limits::default()
        });
        let b = big_response(2).encode().unwrap();
        // Only the envelope has arrived: the length alone is enough to refuse.
        let mut buf = BytesMut::from(&b[..ENVELOPE_LEN]);
        match codec.decode(&mut buf) {
            Err(CodecError::Decode(e)) => assert_eq!(e.field, "envelope.message_length"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn framed_read_over_a_stream() {
        let a = request(1).encode().unwrap();
        let stream: Vec<u8> = [a.as_ref(), a.as_ref(), a.as_ref()].concat();
        let mut framed = FramedRead::new(&stream[..], HandleCodec::default());
        let mut n = 0;
        while let Some(m) = framed.next().await {
            assert_eq!(m.unwrap().request_id(), 1);
            n += 1;
        }
        assert_eq!(n, 3);
    }
}
