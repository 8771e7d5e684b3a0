//! Bodies shared by many operations: error (§5.2), referral (§5.3), challenge (§5.4) and the
//! get-site-info pair (§3, §5.4).

use bytes::{BufMut, Bytes, BytesMut};

use super::lists::{read_handle, read_u32_list};
use crate::wire::envelope::ProtocolVersion;
use crate::wire::error::{DecodeError, EncodeError};
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;
use crate::wire::value::{decode_values, encode_values, HandleValue};
use crate::wire::writer::{put_bytes, put_u32_list};

/// Error body: a message (often empty) and, rarely, the indexes of the offending values.
///
/// A 2.0-era peer may leave the message field out entirely (PROTOCOL.md §5.2): such a body
/// decodes with an empty message and remembers the field was absent
/// ([`ErrorBody::message_absent`]), so that it encodes back to the same (empty) bytes.
#[derive(Debug, Clone, Default)]
pub struct ErrorBody {
    /// The error text (UTF-8 in practice, kept raw).
    pub message: Bytes,
    /// The RFC's optional index list; present only when bytes follow the message.
    pub indexes: Option<Vec<u32>>,
    /// The message field was absent on the wire (2.0 form).
    absent: bool,
}

impl ErrorBody {
    /// An error body with a message and no index list (the ≥ 2.1 form: the message field is
    /// written, with its length, even when empty).
    pub fn new(message: impl Into<Bytes>) -> Self {
        Self {
            message: message.into(),
            indexes: None,
            absent: false,
        }
    }

    /// An error body without a message field at all, as 2.0-era peers send it (0 bytes).
    pub fn without_message() -> Self {
        Self {
            absent: true,
            ..Self::default()
        }
    }

    /// True when the body has no message field (the 2.0 form): it encodes as 0 bytes as long
    /// as the message stays empty and there is no index list.
    pub fn message_absent(&self) -> bool {
        self.absent && self.message.is_empty() && self.indexes.is_none()
    }

    /// Decodes the body. Lenient like the reference library: fewer than 4 bytes means no
    /// message (2.0-era peers: 0 bytes, which encode back as 0 bytes; 1 to 3 stray bytes are
    /// skipped); an index list is read only when bytes remain.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        if r.remaining() < 4 {
            r.rest();
            return Ok(Self::without_message());
        }
        let message = r.bytes("error.message", limits.max_array)?;
        let indexes = if r.is_empty() {
            None
        } else {
            Some(read_u32_list(r, "error.indexes", limits)?)
        };
        Ok(Self {
            message,
            indexes,
            absent: false,
        })
    }

    /// Appends the body: nothing for a body without a message field
    /// ([`ErrorBody::message_absent`]), else the message with its 4-byte length (as every
    /// version ≥ 2.1 writes it) and the index list when there is one.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if self.message_absent() {
            return Ok(());
        }
        put_bytes(out, "error.message", &self.message)?;
        if let Some(ix) = &self.indexes {
            put_u32_list(out, "error.indexes", ix)?;
        }
        Ok(())
    }

    /// The message as text (lossy).
    pub fn message_str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.message)
    }
}

/// Bodies are equal when they encode alike: the absent-field mark counts only while it
/// applies ([`ErrorBody::message_absent`]).
impl PartialEq for ErrorBody {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
            && self.indexes == other.indexes
            && self.message_absent() == other.message_absent()
    }
}

impl Eq for ErrorBody {}

impl std::hash::Hash for ErrorBody {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.message.hash(state);
        self.indexes.hash(state);
        self.message_absent().hash(state);
    }
}

/// Referral body of RC 302 (service referral) and RC 303 (prefix referral).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ReferralBody {
    /// Handle to resolve for the referred service; may be empty.
    pub referral_handle: Bytes,
    /// Site values (`HS_SITE`, `HS_SITE.PREFIX`, `HS_NA_DELEGATE`, `HS_SERV(.PREFIX)`);
    /// present only when bytes follow the handle.
    pub values: Option<Vec<HandleValue>>,
}

impl ReferralBody {
    /// Decodes `handle ‖ [value count ‖ values]`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let referral_handle = read_handle(r, "referral.handle", limits)?;
        let values = if r.is_empty() {
            None
        } else {
            Some(decode_values(r, "referral.values", limits)?)
        };
        Ok(Self {
            referral_handle,
            values,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "referral.handle", &self.referral_handle)?;
        if let Some(v) = &self.values {
            encode_values(out, "referral.values", v)?;
        }
        Ok(())
    }
}

/// Body of RC 402 AUTHENTICATION_NEEDED: the server's nonce.
///
/// From 2.1 on the request digest comes before the body (RD is set) and the body is
/// `int4 16 ‖ nonce`; a 2.0 (or 5.0) challenge is `UTF8 nonce ‖ UTF8 MD5 request digest`, the
/// digest then in [`ChallengeBody::legacy_digest`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ChallengeBody {
    /// The nonce (16 bytes from the reference server).
    pub nonce: Bytes,
    /// The MD5 request digest after the nonce of a 2.0 challenge; `None` from 2.1 on.
    pub legacy_digest: Option<Bytes>,
}

impl ChallengeBody {
    /// A challenge body in the ≥ 2.1 form.
    pub fn new(nonce: impl Into<Bytes>) -> Self {
        Self {
            nonce: nonce.into(),
            legacy_digest: None,
        }
    }

    /// Decodes `UTF8 nonce`, and for a message of version 2.0 (or its alias 5.0) the
    /// length-prefixed digest after it.
    pub fn decode(
        r: &mut Reader,
        version: ProtocolVersion,
        limits: &Limits,
    ) -> Result<Self, DecodeError> {
        let nonce = r.bytes("challenge.nonce", limits.max_array)?;
        let legacy_digest = if version.at_least(2, 1) {
            None
        } else {
            Some(r.bytes("challenge.legacy_digest", limits.max_array)?)
        };
        Ok(Self {
            nonce,
            legacy_digest,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "challenge.nonce", &self.nonce)?;
        if let Some(d) = &self.legacy_digest {
            put_bytes(out, "challenge.legacy_digest", d)?;
        }
        Ok(())
    }
}

/// Body of an OC_GET_SITE_INFO request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GetSiteInfoRequest {
    /// The reference client sends `"/"`.
    pub handle: Bytes,
}

impl GetSiteInfoRequest {
    /// Decodes `UTF8 handle`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        Ok(Self {
            handle: read_handle(r, "get_site_info.handle", limits)?,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "get_site_info.handle", &self.handle)
    }
}

/// Body of a successful OC_GET_SITE_INFO response: the raw HS_SITE record (no length
/// prefix; decode it with the typed `SiteInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SiteInfoResponse {
    /// The HS_SITE record bytes (rest of the body).
    pub record: Bytes,
}

impl SiteInfoResponse {
    /// Takes the rest of the body.
    pub fn decode(r: &mut Reader) -> Self {
        Self { record: r.rest() }
    }

    /// Appends the record.
    pub fn encode(&self, out: &mut BytesMut) {
        out.put_slice(&self.record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_error_bodies_are_empty_messages() {
        for raw in [&[][..], &[0][..], &[0, 0, 0][..]] {
            let mut r = Reader::new(Bytes::copy_from_slice(raw));
            let e = ErrorBody::decode(&mut r, &Limits::default()).unwrap();
            assert!(e.message.is_empty() && e.indexes.is_none());
            assert!(e.message_absent());
            assert_eq!(e, ErrorBody::without_message());
            assert!(r.is_empty());
        }
    }

    #[test]
    fn an_absent_message_encodes_as_nothing_and_an_empty_one_with_its_length() {
        let mut out = BytesMut::new();
        ErrorBody::without_message().encode(&mut out).unwrap();
        assert!(out.is_empty());
        ErrorBody::default().encode(&mut out).unwrap();
        assert_eq!(&out[..], &[0, 0, 0, 0]);
        // Once given a message, the body is written in full.
        let mut e = ErrorBody::without_message();
        e.message = Bytes::from_static(b"x");
        let mut out = BytesMut::new();
        e.encode(&mut out).unwrap();
        assert_eq!(&out[..], &[0, 0, 0, 1, b'x']);
        assert!(!e.message_absent());
    }

    #[test]
    fn error_index_list_is_read_when_bytes_remain() {
        let b = Bytes::from_static(&[0, 0, 0, 1, b'x', 0, 0, 0, 1, 0, 0, 0, 7]);
        let e = ErrorBody::decode(&mut Reader::new(b), &Limits::default()).unwrap();
        assert_eq!(e.message_str(), "x");
        assert_eq!(e.indexes, Some(vec![7]));
    }
}
