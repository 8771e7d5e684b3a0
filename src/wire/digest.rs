//! The request-digest prefix of responses with the RD flag (RFC 3652 §2.2.3, PROTOCOL.md §5.1)
//! and the digest check against the request that was sent.

use bytes::{BufMut, Bytes, BytesMut};
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::envelope::ProtocolVersion;
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::limits::Limits;
use super::reader::Reader;
use super::writer::put_bytes;

/// The digest algorithm byte of a request digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DigestAlgorithm {
    /// 1: MD5, 16 bytes.
    Md5,
    /// 2: SHA-1, 20 bytes.
    Sha1,
    /// 3: SHA-256, 32 bytes (reference library addition).
    Sha256,
    /// 0: the 2.0-era "old format": `int4 len ‖ MD5 digest` with no algorithm byte. The
    /// reference library reads the length's high byte (0) as this code, then steps back and
    /// reads the byte array from there.
    LegacyMd5,
    /// Any other byte. The digest length is unknown, so such a body cannot be decoded.
    Other(u8),
}

impl DigestAlgorithm {
    /// The algorithm for a wire byte.
    pub const fn from_code(code: u8) -> Self {
        match code {
            0 => Self::LegacyMd5,
            1 => Self::Md5,
            2 => Self::Sha1,
            3 => Self::Sha256,
            other => Self::Other(other),
        }
    }

    /// The wire byte.
    pub const fn code(self) -> u8 {
        match self {
            Self::LegacyMd5 => 0,
            Self::Md5 => 1,
            Self::Sha1 => 2,
            Self::Sha256 => 3,
            Self::Other(c) => c,
        }
    }

    /// Fixed digest length of the algorithm; `None` for the length-prefixed legacy form and
    /// for unknown algorithms.
    pub const fn fixed_len(self) -> Option<usize> {
        match self {
            Self::Md5 => Some(16),
            Self::Sha1 => Some(20),
            Self::Sha256 => Some(32),
            Self::LegacyMd5 | Self::Other(_) => None,
        }
    }

    /// The algorithm the reference server picks for a response of message version `v`:
    /// legacy MD5 below 2.1, SHA-1 for 2.1 to 2.6, SHA-256 from 2.7 on.
    pub const fn for_version(v: ProtocolVersion) -> Self {
        if v.at_least(2, 7) {
            Self::Sha256
        } else if v.at_least(2, 1) {
            Self::Sha1
        } else {
            Self::LegacyMd5
        }
    }
}

/// Digest of a request's header+body for the RD check (PROTOCOL.md §5.1). `None` for an
/// unknown algorithm.
pub fn request_digest(algorithm: DigestAlgorithm, header_and_body: &[u8]) -> Option<Bytes> {
    let out: Vec<u8> = match algorithm {
        DigestAlgorithm::Md5 | DigestAlgorithm::LegacyMd5 => Md5::digest(header_and_body).to_vec(),
        DigestAlgorithm::Sha1 => Sha1::digest(header_and_body).to_vec(),
        DigestAlgorithm::Sha256 => Sha256::digest(header_and_body).to_vec(),
        DigestAlgorithm::Other(_) => return None,
    };
    Some(Bytes::from(out))
}

/// The request digest at the start of a response body with RD set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RequestDigest {
    /// The algorithm.
    pub algorithm: DigestAlgorithm,
    /// The digest bytes.
    pub digest: Bytes,
}

impl RequestDigest {
    /// The digest of `request_header_and_body` with `algorithm`; `None` for an unknown
    /// algorithm.
    pub fn compute(algorithm: DigestAlgorithm, request_header_and_body: &[u8]) -> Option<Self> {
        request_digest(algorithm, request_header_and_body).map(|digest| Self { algorithm, digest })
    }

    /// True when this digest is the digest of `request_header_and_body` (the 24 header bytes
    /// and the body of the request exactly as sent). Unknown algorithms never match.
    pub fn matches(&self, request_header_and_body: &[u8]) -> bool {
        request_digest(self.algorithm, request_header_and_body).is_some_and(|d| d == self.digest)
    }

    /// Decodes the digest prefix. An unknown algorithm byte is an error (its length is
    /// unknown). Code 0 is the old format: the byte array starts at the code byte itself.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let at = r.offset();
        let algorithm = DigestAlgorithm::from_code(r.clone().u8("digest.algorithm")?);
        let digest = match algorithm {
            DigestAlgorithm::LegacyMd5 => r.bytes("digest.digest", limits.max_array)?,
            DigestAlgorithm::Other(c) => {
                return Err(DecodeError::new(
                    "digest.algorithm",
                    at,
                    DecodeErrorKind::Invalid { value: c.into() },
                ))
            }
            fixed => {
                r.u8("digest.algorithm")?;
                let n = fixed.fixed_len().unwrap_or(0);
                r.take("digest.digest", n)?
            }
        };
        Ok(Self { algorithm, digest })
    }

    /// Appends the digest prefix. A fixed-length digest of the wrong length is refused.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        if let DigestAlgorithm::Other(_) = self.algorithm {
            // Nobody could read it back: the length of an unknown digest is unknown.
            return Err(EncodeError::TooLong {
                field: "digest.algorithm",
                len: self.digest.len(),
            });
        }
        match self.algorithm.fixed_len() {
            Some(n) if n == self.digest.len() => {
                out.put_u8(self.algorithm.code());
                out.put_slice(&self.digest);
                Ok(())
            }
            Some(_) => Err(EncodeError::TooLong {
                field: "digest.digest",
                len: self.digest.len(),
            }),
            // The length's high byte is read as the algorithm code, so it must be 0.
            None if self.digest.len() > 0x00FF_FFFF => Err(EncodeError::TooLong {
                field: "digest.digest",
                len: self.digest.len(),
            }),
            None => put_bytes(out, "digest.digest", &self.digest),
        }
    }

    /// Length of the encoded prefix.
    pub fn encoded_len(&self) -> usize {
        match self.algorithm.fixed_len() {
            Some(n) => 1 + n,
            None => 4 + self.digest.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_lengths_follow_the_algorithm() {
        let d = RequestDigest::compute(DigestAlgorithm::Sha256, b"abc").unwrap();
        assert_eq!(d.digest.len(), 32);
        assert!(d.matches(b"abc"));
        assert!(!d.matches(b"abd"));
        let mut out = BytesMut::new();
        d.encode(&mut out).unwrap();
        assert_eq!(out.len(), d.encoded_len());
        let back =
            RequestDigest::decode(&mut Reader::new(out.freeze()), &Limits::default()).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn legacy_md5_digest_has_no_algorithm_byte() {
        // The reference library reads byte 0 as "old format", steps back one byte and reads
        // an `int4 len ‖ len bytes` array there: the 0 is the length's high byte.
        let md5 = Md5::digest(b"request");
        let mut raw = vec![0, 0, 0, 16]; // int4 length 16 (its first byte reads as code 0)
        raw.extend_from_slice(&md5); // the 16 MD5 bytes
        raw.extend_from_slice(b"body"); // what follows the digest
        let mut r = Reader::new(Bytes::from(raw.clone()));
        let d = RequestDigest::decode(&mut r, &Limits::default()).unwrap();
        assert_eq!(d.algorithm, DigestAlgorithm::LegacyMd5);
        assert!(d.matches(b"request"));
        assert_eq!(r.remaining(), 4);
        let mut out = BytesMut::new();
        d.encode(&mut out).unwrap();
        assert_eq!(&out[..], &raw[..20]);
        assert_eq!(d.encoded_len(), 20);
    }

    #[test]
    fn unknown_algorithm_is_a_typed_error() {
        let e = RequestDigest::decode(
            &mut Reader::new(Bytes::from_static(&[9, 1, 2])),
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(e.field, "digest.algorithm");
        assert!(RequestDigest::compute(DigestAlgorithm::Other(9), b"x").is_none());
    }

    #[test]
    fn version_picks_the_reference_servers_algorithm() {
        assert_eq!(
            DigestAlgorithm::for_version(ProtocolVersion::V2_11),
            DigestAlgorithm::Sha256
        );
        assert_eq!(
            DigestAlgorithm::for_version(ProtocolVersion::V2_3),
            DigestAlgorithm::Sha1
        );
        assert_eq!(
            DigestAlgorithm::for_version(ProtocolVersion::new(5, 0)),
            DigestAlgorithm::LegacyMd5
        );
    }
}
