//! Bodies shared by many operations: error (§5.2), referral (§5.3), challenge (§5.4) and the
//! get-site-info pair (§3, §5.4).

use bytes::{BufMut, Bytes, BytesMut};

use super::lists::{read_handle, read_u32_list};
use crate::wire::error::{DecodeError, EncodeError};
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;
use crate::wire::value::{decode_values, encode_values, HandleValue};
use crate::wire::writer::{put_bytes, put_u32_list};

/// Error body: a message (often empty) and, rarely, the indexes of the offending values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ErrorBody {
    /// The error text (UTF-8 in practice, kept raw).
    pub message: Bytes,
    /// The RFC's optional index list; present only when bytes follow the message.
    pub indexes: Option<Vec<u32>>,
}

impl ErrorBody {
    /// An error body with a message and no index list.
    pub fn new(message: impl Into<Bytes>) -> Self {
        Self {
            message: message.into(),
            indexes: None,
        }
    }

    /// Decodes the body. Lenient like the reference library: fewer than 4 bytes means no
    /// message (2.0-era peers; those bytes are skipped, so such a body re-encodes in the
    /// ≥ 2.1 form); an index list is read only when bytes remain.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        if r.remaining() < 4 {
            r.rest();
            return Ok(Self::default());
        }
        let message = r.bytes("error.message", limits.max_array)?;
        let indexes = if r.is_empty() {
            None
        } else {
            Some(read_u32_list(r, "error.indexes", limits)?)
        };
        Ok(Self { message, indexes })
    }

    /// Appends the body (always with the 4-byte message length, as every version ≥ 2.1).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ChallengeBody {
    /// The nonce (16 bytes from the reference server).
    pub nonce: Bytes,
}

impl ChallengeBody {
    /// Decodes `UTF8 nonce`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        Ok(Self {
            nonce: r.bytes("challenge.nonce", limits.max_array)?,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "challenge.nonce", &self.nonce)
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
            assert_eq!(e, ErrorBody::default());
            assert!(r.is_empty());
        }
    }

    #[test]
    fn error_index_list_is_read_when_bytes_remain() {
        let b = Bytes::from_static(&[0, 0, 0, 1, b'x', 0, 0, 0, 1, 0, 0, 0, 7]);
        let e = ErrorBody::decode(&mut Reader::new(b), &Limits::default()).unwrap();
        assert_eq!(e.message_str(), "x");
        assert_eq!(e.indexes, Some(vec![7]));
    }
}
