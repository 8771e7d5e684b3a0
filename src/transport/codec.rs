//! tokio-util codecs over the sans-IO wire codec.
//!
//! - [`HandleCodec`]: TCP (and the body of an HTTP tunnel answer): one envelope + message per
//!   frame, several frames per stream. It reads the 20-byte envelope, refuses a
//!   `MessageLength` above `limits.max_message_length` before buffering the message, waits
//!   for the whole message and decodes it. Use with `Framed` / `FramedRead`.
//! - [`DatagramCodec`]: UDP, for `UdpFramed`. `UdpFramed` hands the decoder one datagram at a
//!   time and **does not tell it the sender**, so the codec keeps a [`Reassembler`] keyed by
//!   request id alone: each datagram goes in, a complete [`Message`] comes out (with the
//!   address of the datagram that completed it). This fits the resolver's use: one socket per
//!   exchange (or a connected socket), where every datagram comes from the one server asked;
//!   a caller that shares a socket among peers should instead read raw datagrams
//!   (`tokio_util::codec::BytesCodec`) and keep one [`Reassembler`] per peer address.
//!
//! Errors: a bad frame or datagram is a [`CodecError`]. The datagram codec always consumes
//! the datagram first, so `UdpFramed` yields the error as one stream item and goes on with
//! the next datagram; the caller logs it and keeps reading (a stray or forged datagram must
//! not end an exchange). A TCP stream cannot be re-synchronised after a bad frame, so the
//! error ends it.

use bytes::{Bytes, BytesMut};
use thiserror::Error;
use tokio_util::codec::{Decoder, Encoder};

use std::sync::Arc;

use crate::wire::session::open;
use crate::wire::{
    CryptError, DecodeError, EncodeError, Envelope, Limits, Message, Reader, Reassembler,
    ReassemblerConfig, SessionKey, ENVELOPE_LEN, MAX_DATAGRAM,
};

/// Errors of the codecs.
#[derive(Debug, Error)]
pub enum CodecError {
    /// The socket failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A frame or datagram could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A message could not be encoded.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// An encrypted frame could not be opened (no session, or not under its key).
    #[error("session: {0}")]
    Session(CryptError),
    /// A datagram to send is larger than [`MAX_DATAGRAM`]; send [`crate::wire::fragment`]'s
    /// pieces one by one instead.
    #[error("datagram of {len} bytes exceeds {max} bytes")]
    DatagramTooLarge {
        /// Size of the datagram.
        len: usize,
        /// The maximum.
        max: usize,
    },
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
        match open(self.session.as_deref(), envelope, r.rest(), &self.limits) {
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

/// UDP: one datagram in, a complete [`Message`] out once all its fragments arrived.
///
/// Time for the reassembler's expiry comes from `tokio::time::Instant::now()` (so tests can
/// pause the clock).
#[derive(Debug, Clone)]
pub struct DatagramCodec {
    reassembler: Reassembler,
}

impl Default for DatagramCodec {
    fn default() -> Self {
        Self::new(ReassemblerConfig::default())
    }
}

impl DatagramCodec {
    /// A codec whose reassembler uses `config`.
    pub fn new(config: ReassemblerConfig) -> Self {
        Self {
            reassembler: Reassembler::new(config),
        }
    }

    /// The reassembler (to `remove` an abandoned request or `expire` on a timer).
    pub fn reassembler_mut(&mut self) -> &mut Reassembler {
        &mut self.reassembler
    }
}

impl Decoder for DatagramCodec {
    type Item = Message;
    type Error = CodecError;

    /// Takes the whole buffer as one datagram (what `UdpFramed` gives) and consumes it, even
    /// when it is refused.
    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, CodecError> {
        if src.is_empty() {
            return Ok(None);
        }
        let datagram = src.split().freeze();
        let now = tokio::time::Instant::now().into_std();
        Ok(self.reassembler.push(datagram, now)?)
    }
}

impl Encoder<Message> for DatagramCodec {
    type Error = CodecError;

    /// Encodes a message that fits in one datagram; a longer one is refused with
    /// [`CodecError::DatagramTooLarge`] (fragment it and send the pieces as [`Bytes`]).
    fn encode(&mut self, item: Message, dst: &mut BytesMut) -> Result<(), CodecError> {
        let bytes = item.encode()?;
        Encoder::<Bytes>::encode(self, bytes, dst)
    }
}

impl Encoder<Bytes> for DatagramCodec {
    type Error = CodecError;

    /// Sends one pre-encoded datagram (e.g. one element of `fragment()`), at most 512 bytes.
    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), CodecError> {
        if item.len() > MAX_DATAGRAM {
            return Err(CodecError::DatagramTooLarge {
                len: item.len(),
                max: MAX_DATAGRAM,
            });
        }
        dst.extend_from_slice(&item);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::HandleValue;
    use crate::wire::{fragment, Body, ResolutionResponse, ResponseCode};
    use futures::{SinkExt, StreamExt};
    use tokio_util::codec::FramedRead;
    use tokio_util::udp::UdpFramed;

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

    #[test]
    fn datagram_encoder_refuses_what_needs_fragments() {
        let mut codec = DatagramCodec::default();
        let mut dst = BytesMut::new();
        let e = Encoder::<Message>::encode(&mut codec, big_response(3), &mut dst).unwrap_err();
        assert!(matches!(e, CodecError::DatagramTooLarge { .. }));
        Encoder::<Message>::encode(&mut codec, request(3), &mut dst).unwrap();
        assert_eq!(dst.len(), request(3).encode().unwrap().len());
    }

    #[tokio::test]
    async fn udp_framed_reassembles_and_survives_garbage() {
        let server = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let client_addr = client.local_addr().unwrap();
        let server_addr = server.local_addr().unwrap();
        let mut framed = UdpFramed::new(client, DatagramCodec::default());
        let mut sender = UdpFramed::new(server, DatagramCodec::default());

        let response = big_response(9);
        let encoded = response.encode().unwrap();
        let mut frags = fragment(&encoded);
        assert!(frags.len() > 1);
        frags.reverse();
        let dup = frags[0].clone();
        // 44 bytes of text, as in the raw_udp_garbage capture.
        let garbage = Bytes::from_static(b"this is not a handle protocol message at all");
        sender.send((garbage, client_addr)).await.unwrap();
        for f in frags.into_iter().chain([dup]) {
            sender.send((f, client_addr)).await.unwrap();
        }

        let first = framed.next().await.unwrap();
        assert!(matches!(first, Err(CodecError::Decode(_))), "{first:?}");
        let (m, from) = framed.next().await.unwrap().unwrap();
        assert_eq!(from, server_addr);
        assert_eq!(m.encode().unwrap(), encoded);
        assert_eq!(framed.codec_mut().reassembler_mut().in_progress(), 0);
    }
}
