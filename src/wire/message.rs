//! A whole message: envelope, header, optional request digest, body and credential
//! (RFC 3652 §2, PROTOCOL.md §2).
//!
//! Decoding checks, in order: the envelope's `MessageLength` against [`Limits`] (before
//! anything else is read), CP/EC (unsupported), the bytes present against `MessageLength`,
//! the header, `BodyLength` against the bytes present, the body (§4-§5), then the credential
//! if at least 4 bytes follow the body (the reference library tolerates its absence). Every
//! error offset counts from the first envelope byte.

use bytes::{BufMut, Bytes, BytesMut};

use super::body::{Body, ResolutionRequest};
use super::codes::{OpCode, OpFlags, ResponseCode};
use super::credential::Credential;
use super::digest::{DigestAlgorithm, RequestDigest};
use super::envelope::{Envelope, ProtocolVersion, ENVELOPE_LEN};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::header::{Header, HEADER_LEN};
use super::limits::Limits;
use super::reader::Reader;
use super::writer::{patch_u32, wire_len};

/// Offset of the envelope's `MessageLength` in an encoded message.
const MESSAGE_LENGTH_AT: usize = 16;
/// Offset of the header's `BodyLength` (the header's last field) in an encoded message.
const BODY_LENGTH_AT: usize = ENVELOPE_LEN + HEADER_LEN - 4;

/// One protocol message.
///
/// ```
/// use handle_resolver::wire::{Body, Limits, Message};
///
/// // PROTOCOL.md §12: resolve every value of 0.NA/10.1045.
/// let request = Message::resolution_request("0.NA/10.1045", vec![], vec![], 0x1234_5678, 1_700_000_000);
/// let bytes = request.encode()?;
/// assert_eq!(bytes.len(), 20 + 52); // envelope + header, body and credential length
///
/// let back = Message::decode(bytes, &Limits::default())?;
/// assert_eq!(back.request_id(), 0x1234_5678);
/// assert!(matches!(back.body, Body::ResolutionRequest(ref r) if &r.handle[..] == b"0.NA/10.1045"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The envelope (for a reassembled UDP message: fragment 0's).
    pub envelope: Envelope,
    /// The header. `body_length` is recomputed by [`Message::encode`].
    pub header: Header,
    /// The request digest of a response with RD set.
    pub request_digest: Option<RequestDigest>,
    /// The body.
    pub body: Body,
    /// The credential; `None` when absent or `CredentialLength == 0`. Boxed: most messages
    /// have none, and a `Message` is moved through every layer of a resolution, so the
    /// 176 bytes of an inline credential would be copied at each move.
    pub credential: Option<Box<Credential>>,
    /// header + body exactly as received (what signatures cover); empty for built messages
    pub signed_bytes: Bytes,
}

impl Message {
    /// Decode one complete envelope + message (a TCP frame, or a reassembled UDP message).
    pub fn decode(buf: Bytes, limits: &Limits) -> Result<Message, DecodeError> {
        if buf.len() > limits.max_message_length.saturating_add(ENVELOPE_LEN) {
            return Err(DecodeError::new(
                "message",
                0,
                DecodeErrorKind::TooLarge {
                    value: buf.len() as u64,
                    limit: limits.max_message_length.saturating_add(ENVELOPE_LEN) as u64,
                },
            ));
        }
        let mut r = Reader::new(buf);
        let envelope = Envelope::decode(&mut r)?;
        Self::decode_parts(envelope, r.rest(), limits)
    }

    /// Decode the message part (after the envelope) given an already-read envelope.
    pub fn decode_parts(
        envelope: Envelope,
        message: Bytes,
        limits: &Limits,
    ) -> Result<Message, DecodeError> {
        check_envelope(&envelope, limits)?;
        let declared = envelope.message_length as usize;
        if message.len() < declared {
            return Err(DecodeError::new(
                "message",
                ENVELOPE_LEN,
                DecodeErrorKind::Truncated {
                    needed: declared,
                    available: message.len(),
                },
            ));
        }
        if message.len() > declared {
            return Err(DecodeError::new(
                "message",
                ENVELOPE_LEN.saturating_add(declared),
                DecodeErrorKind::TrailingBytes {
                    count: message.len() - declared,
                },
            ));
        }
        let mut r = Reader::with_base(message.clone(), ENVELOPE_LEN);
        let header = Header::decode(&mut r)?;
        let body_at = r.offset();
        let body_len = header.body_length as usize;
        if body_len > r.remaining() {
            return Err(DecodeError::new(
                "header.body_length",
                ENVELOPE_LEN + 20,
                DecodeErrorKind::Truncated {
                    needed: body_len,
                    available: r.remaining(),
                },
            ));
        }
        let body_bytes = r.take("body", body_len)?;
        let signed_bytes = message.slice(..HEADER_LEN + body_len);
        let (request_digest, body) =
            Body::decode(&header, envelope.version, body_bytes, body_at, limits)?;
        let credential = if r.remaining() >= 4 {
            let len = r.length("credential.length", limits.max_array)?;
            let mut cr = r.sub_exact("credential", len)?;
            if len == 0 {
                None
            } else {
                Some(Box::new(Credential::decode(&mut cr, limits)?))
            }
        } else {
            None
        };
        r.finish("message")?;
        Ok(Message {
            envelope,
            header,
            request_digest,
            body,
            credential,
            signed_bytes,
        })
    }

    /// Encodes the message with `request_id` in its envelope instead of its own (what a
    /// transport that picks the ids does), in the same single pass as [`Message::encode`].
    /// The credential is written as it is, not re-signed.
    ///
    /// ```
    /// use handle_resolver::wire::Message;
    ///
    /// let m = Message::resolution_request("0.NA/10.1045", vec![], vec![], 1, 0);
    /// let bytes = m.encode_with_request_id(0x0102_0304)?;
    /// assert_eq!(&bytes[8..12], &[1, 2, 3, 4]);
    /// assert_eq!(bytes[12..], m.encode()?[12..]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encode_with_request_id(&self, request_id: u32) -> Result<Bytes, EncodeError> {
        Ok(self.encode_with_body_len(Some(request_id))?.0)
    }

    /// Encode envelope + header + body + credential; fills in body_length and message_length.
    ///
    /// The credential length is always written (0 when there is no credential), as the
    /// reference library does.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        Ok(self.encode_with_body_len(None)?.0)
    }

    /// The 24 header bytes and the body, as a digest or signature covers them: the bytes as
    /// received for a decoded message, freshly encoded for a built one.
    pub fn header_and_body(&self) -> Result<Bytes, EncodeError> {
        if !self.signed_bytes.is_empty() {
            return Ok(self.signed_bytes.clone());
        }
        let (all, body_len) = self.encode_with_body_len(None)?;
        Ok(all.slice(ENVELOPE_LEN..ENVELOPE_LEN + HEADER_LEN + body_len))
    }

    /// Encodes the whole message into one buffer sized up front (no intermediate body
    /// buffer): envelope and header go first with zero lengths, then the digest,
    /// body and credential, then both lengths are patched in. Also returns the body length.
    fn encode_with_body_len(&self, request_id: Option<u32>) -> Result<(Bytes, usize), EncodeError> {
        let hint = ENVELOPE_LEN + HEADER_LEN + self.body_size_hint() + 4;
        let mut out = BytesMut::with_capacity(hint);
        let mut envelope = self.envelope;
        if let Some(id) = request_id {
            envelope.request_id = id;
        }
        envelope.message_length = 0;
        let mut header = self.header;
        header.body_length = 0;
        // The fixed 44 bytes go through a stack array: one copy into `out` instead of a
        // capacity check and copy per field.
        let mut head = [0u8; ENVELOPE_LEN + HEADER_LEN];
        let mut w = &mut head[..];
        envelope.encode(&mut w);
        header.encode(&mut w);
        out.put_slice(&head);
        let body_start = out.len();
        if let Some(d) = &self.request_digest {
            d.encode(&mut out)?;
        }
        self.body.encode(&mut out)?;
        let body_len = out.len() - body_start;
        match &self.credential {
            Some(c) => {
                let credential = c.to_bytes()?;
                out.put_u32(wire_len("credential", credential.len())?);
                out.put_slice(&credential);
            }
            None => out.put_u32(0),
        }
        let message_length = wire_len("message", out.len() - ENVELOPE_LEN)?;
        patch_u32(&mut out, BODY_LENGTH_AT, wire_len("body", body_len)?);
        patch_u32(&mut out, MESSAGE_LENGTH_AT, message_length);
        Ok((out.freeze(), body_len))
    }

    /// Bytes the digest and body will take, exact for resolution requests and responses
    /// (the common case), a small guess otherwise (the buffer grows as needed).
    fn body_size_hint(&self) -> usize {
        let digest = self.request_digest.as_ref().map_or(0, |d| d.encoded_len());
        let body = match &self.body {
            Body::ResolutionRequest(b) => {
                4 + b.handle.len()
                    + 4
                    + 4 * b.indexes.len()
                    + 4
                    + b.types.iter().map(|t| 4 + t.len()).sum::<usize>()
            }
            Body::ResolutionResponse(b) => {
                4 + b.handle.len() + 4 + b.values.iter().map(|v| v.encoded_len()).sum::<usize>()
            }
            _ => 64,
        };
        digest + body
    }

    /// A request with the reference client's defaults, to be adjusted through the pub fields:
    /// version 2.11 suggesting 2.11, flags REC|CA|PO, site serial 0xFFFF, recursion 0,
    /// session 0, the given request id and expiration (seconds since epoch; caller computes now+12h).
    pub fn request(body: Body, op_code: OpCode, request_id: u32, expiration: u32) -> Message {
        Message {
            envelope: Envelope::new(ProtocolVersion::V2_11, ProtocolVersion::V2_11, request_id),
            header: Header {
                op_code,
                response_code: ResponseCode::Reserved,
                flags: OpFlags::RESOLUTION_DEFAULT,
                site_info_serial: 0xFFFF,
                recursion_count: 0,
                reserved: 0,
                expiration,
                body_length: 0,
            },
            request_digest: None,
            body,
            credential: None,
            signed_bytes: Bytes::new(),
        }
    }

    /// Shorthand: resolution request for `handle` with index and type filters.
    pub fn resolution_request(
        handle: impl Into<Bytes>,
        indexes: Vec<u32>,
        types: Vec<Bytes>,
        request_id: u32,
        expiration: u32,
    ) -> Message {
        let body = Body::ResolutionRequest(ResolutionRequest {
            handle: handle.into(),
            indexes,
            types,
        });
        Self::request(body, OpCode::Resolution, request_id, expiration)
    }

    /// A response to `request` (same op code, request id, versions, expiration, flags copied as
    /// the reference server does) with the given response code and body. Used by the test server.
    ///
    /// As the reference server (PROTOCOL.md §14): message version = the request's, suggested
    /// 2.11, same session and request id, same site serial, recursion count and expiration;
    /// flags = the request's minus CN/KC, plus AT. When the request has RD, the response
    /// carries the digest of the request's header+body with the algorithm for its version.
    pub fn response_to(request: &Message, code: ResponseCode, body: Body) -> Message {
        let mut envelope = Envelope::new(
            request.envelope.version,
            ProtocolVersion::V2_11,
            request.envelope.request_id,
        );
        envelope.session_id = request.envelope.session_id;
        let flags = request
            .header
            .flags
            .without(OpFlags::CN)
            .without(OpFlags::KC)
            .with(OpFlags::AT);
        let request_digest = if request.header.flags.contains(OpFlags::RD) {
            let alg = DigestAlgorithm::for_version(request.envelope.version);
            request
                .header_and_body()
                .ok()
                .and_then(|hb| RequestDigest::compute(alg, &hb))
        } else {
            None
        };
        Message {
            envelope,
            header: Header {
                op_code: request.header.op_code,
                response_code: code,
                flags,
                site_info_serial: request.header.site_info_serial,
                recursion_count: request.header.recursion_count,
                reserved: 0,
                expiration: request.header.expiration,
                body_length: 0,
            },
            request_digest,
            body,
            credential: None,
            signed_bytes: Bytes::new(),
        }
    }

    /// The envelope's request id.
    pub fn request_id(&self) -> u32 {
        self.envelope.request_id
    }

    /// The response code as the reference library reads it (PROTOCOL.md §3.1, §6): a 303 in a
    /// message below version 2.5 is SERVER_BACKUP (7), with an error body; any other code is
    /// the header's.
    pub fn response_code(&self) -> ResponseCode {
        match self.header.response_code {
            ResponseCode::PrefixReferral if !self.envelope.version.at_least(2, 5) => {
                ResponseCode::ServerBackup
            }
            code => code,
        }
    }

    /// True for a response (response code other than 0).
    pub fn is_response(&self) -> bool {
        self.header.response_code != ResponseCode::Reserved
    }
}

/// Checks the envelope fields that must be refused before reading further.
fn check_envelope(envelope: &Envelope, limits: &Limits) -> Result<(), DecodeError> {
    limits.check_message_length(envelope.message_length)?;
    if envelope.compressed || envelope.encrypted {
        return Err(DecodeError::new(
            "envelope.flags",
            2,
            DecodeErrorKind::Unsupported,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::body::ErrorBody;
    use crate::wire::value::HandleValue;
    use bytes::BytesMut;

    /// PROTOCOL.md §12, byte for byte.
    #[test]
    fn builds_the_worked_example() {
        let mut m =
            Message::resolution_request("0.NA/10.1045", vec![], vec![], 0x1234_5678, 1_700_000_000);
        m.envelope.version = ProtocolVersion::V2_10;
        let bytes = m.encode().unwrap();
        let expected = hex::decode(concat!(
            "020a020b",
            "00000000",
            "12345678",
            "00000000",
            "00000034",
            "00000001",
            "00000000",
            "19000000",
            "ffff",
            "00",
            "00",
            "6553f100",
            "00000018",
            "0000000c",
            "302e4e412f31302e31303435",
            "00000000",
            "00000000",
            "00000000"
        ))
        .unwrap();
        assert_eq!(&bytes[..], &expected[..]);
        let back = Message::decode(bytes, &Limits::default()).unwrap();
        assert_eq!(back.body, m.body);
        assert!(!back.is_response());
    }

    #[test]
    fn response_round_trips_with_digest() {
        let req =
            Message::resolution_request("0.NA/1", vec![1], vec![Bytes::from_static(b"URL")], 7, 9);
        let mut req = req;
        req.header.flags.set(OpFlags::RD, true);
        let mut resp = Message::response_to(
            &req,
            ResponseCode::Success,
            Body::ResolutionResponse(crate::wire::body::ResolutionResponse {
                handle: Bytes::from_static(b"0.NA/1"),
                values: vec![HandleValue::new(1, "URL", "http://x/")],
            }),
        );
        assert!(resp
            .request_digest
            .as_ref()
            .unwrap()
            .matches(&req.header_and_body().unwrap()));
        let bytes = resp.encode().unwrap();
        let back = Message::decode(bytes.clone(), &Limits::default()).unwrap();
        assert_eq!(back.request_digest, resp.request_digest);
        assert_eq!(back.body, resp.body);
        assert_eq!(back.encode().unwrap(), bytes);
        resp.body = Body::Error(ErrorBody::new("x"));
        resp.header.response_code = ResponseCode::HandleNotFound;
        let back = Message::decode(resp.encode().unwrap(), &Limits::default()).unwrap();
        assert_eq!(back.body, Body::Error(ErrorBody::new("x")));
    }

    fn response(body: Body, rd: bool) -> Message {
        let mut req = Message::resolution_request("0.NA/1", vec![], vec![], 3, 9);
        req.header.flags.set(OpFlags::RD, rd);
        Message::response_to(&req, ResponseCode::Success, body)
    }

    #[test]
    fn unknown_digest_algorithm_keeps_the_whole_body() {
        let mut m = response(Body::Success, true);
        m.request_digest = None;
        // Digest algorithm byte 9 (unknown), then 3 bytes nobody can interpret.
        m.body = Body::Unknown(Bytes::from_static(&[9, 1, 2, 3]));
        m.header.op_code = OpCode::DeleteHandle;
        let bytes = m.encode().unwrap();
        let back = Message::decode(bytes.clone(), &Limits::default()).unwrap();
        assert_eq!(back.request_digest, None);
        assert_eq!(back.body, Body::Unknown(Bytes::from_static(&[9, 1, 2, 3])));
        assert_eq!(back.encode().unwrap(), bytes);
    }

    #[test]
    fn trailing_bytes_after_a_known_layout_keep_the_body_raw() {
        let mut body = BytesMut::new();
        Body::ResolutionResponse(crate::wire::body::ResolutionResponse {
            handle: Bytes::from_static(b"0.NA/1"),
            values: vec![],
        })
        .encode(&mut body)
        .unwrap();
        body.put_slice(&[0, 0]); // two stray bytes counted by BodyLength
        let raw = body.freeze();
        let m = response(Body::Unknown(raw.clone()), false);
        let bytes = m.encode().unwrap();
        let back = Message::decode(bytes.clone(), &Limits::default()).unwrap();
        assert_eq!(back.body, Body::Unknown(raw));
        assert_eq!(back.encode().unwrap(), bytes);
    }

    #[test]
    fn encrypted_and_compressed_messages_are_unsupported() {
        for flag in [0x40u8, 0x80] {
            let mut bytes = BytesMut::from(&response(Body::Success, false).encode().unwrap()[..]);
            bytes[2] |= flag;
            let e = Message::decode(bytes.freeze(), &Limits::default()).unwrap_err();
            assert_eq!(e.kind, DecodeErrorKind::Unsupported);
            assert_eq!((e.field, e.offset), ("envelope.flags", 2));
        }
    }

    #[test]
    fn body_length_beyond_the_message_and_stray_bytes_are_errors() {
        let mut ok = response(Body::Success, false);
        ok.header.op_code = OpCode::DeleteHandle; // generic success: empty body
        let good = ok.encode().unwrap();
        let mut b = BytesMut::from(&good[..]);
        b[43] = 200; // BodyLength 200 in a 28-byte message
        let e = Message::decode(b.freeze(), &Limits::default()).unwrap_err();
        assert_eq!(e.field, "header.body_length");
        // Two bytes after the credential length.
        let mut b = BytesMut::from(&good[..]);
        b.put_slice(&[0, 0]);
        b[19] += 2;
        let e = Message::decode(b.freeze(), &Limits::default()).unwrap_err();
        assert_eq!(e.field, "message");
        assert_eq!(e.kind, DecodeErrorKind::TrailingBytes { count: 2 });
        // No credential length at all (an RFC-style peer): accepted, re-encoded with one.
        let short = good.slice(..good.len() - 4);
        let mut b = BytesMut::from(&short[..]);
        b[19] -= 4;
        let m = Message::decode(b.freeze(), &Limits::default()).unwrap();
        assert_eq!(m.credential, None);
        assert_eq!(m.encode().unwrap(), good);
    }
}
