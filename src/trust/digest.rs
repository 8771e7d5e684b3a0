//! Value digests as the reference library computes them (`HandleValueDigester`, and the
//! deprecated `HandleSignature`): the hash of the value's wire encoding from offset 8, that
//! is without its index and timestamp (`ttl type ‖ ttl ‖ permissions ‖ type ‖ data ‖
//! references`), so that a value keeps its digest when it moves to another index or is
//! rewritten unchanged.

use bytes::BytesMut;
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

use crate::wire::{EncodeError, HandleValue};

/// Bytes of the encoding that the digest leaves out: `int4 index ‖ int4 timestamp`.
pub const DIGEST_OFFSET: usize = 8;

/// A digest algorithm, by its Java `MessageDigest` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DigestAlgorithm {
    /// MD5: only beside a SHA digest in the legacy signature; never enough alone.
    Md5,
    /// SHA-1.
    Sha1,
    /// SHA-256 (what the reference library signs with).
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl DigestAlgorithm {
    /// The algorithm of a Java `MessageDigest` name (`SHA-256`, `SHA256`, `SHA-1`, `SHA1`,
    /// `SHA`, `SHA-384`, `SHA-512`, `MD5`; ASCII case ignored).
    pub fn from_name(name: &str) -> Option<Self> {
        let n = name.to_ascii_uppercase();
        match n.as_str() {
            "MD5" => Some(Self::Md5),
            "SHA" | "SHA1" | "SHA-1" => Some(Self::Sha1),
            "SHA256" | "SHA-256" => Some(Self::Sha256),
            "SHA384" | "SHA-384" => Some(Self::Sha384),
            "SHA512" | "SHA-512" => Some(Self::Sha512),
            _ => None,
        }
    }

    /// The Java name (`SHA-256`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Md5 => "MD5",
            Self::Sha1 => "SHA-1",
            Self::Sha256 => "SHA-256",
            Self::Sha384 => "SHA-384",
            Self::Sha512 => "SHA-512",
        }
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Md5 => Md5::digest(data).to_vec(),
            Self::Sha1 => Sha1::digest(data).to_vec(),
            Self::Sha256 => Sha256::digest(data).to_vec(),
            Self::Sha384 => Sha384::digest(data).to_vec(),
            Self::Sha512 => Sha512::digest(data).to_vec(),
        }
    }
}

/// The bytes of `value` that its digest covers: its wire encoding after index and timestamp.
pub fn digested_bytes(value: &HandleValue) -> Result<Vec<u8>, EncodeError> {
    let mut out = BytesMut::with_capacity(value.encoded_len());
    value.encode(&mut out)?;
    Ok(out.get(DIGEST_OFFSET..).unwrap_or_default().to_vec())
}

/// The digest of `value` with `alg`.
///
/// ```
/// use handle_resolver::trust::{value_digest, DigestAlgorithm};
/// use handle_resolver::wire::HandleValue;
/// // The same EMAIL value at index 2 of 0.0/0.0 and index 4 of 0.NA/0.NA in the 2019 root
/// // file: one digest, whatever the index and timestamp.
/// let a = HandleValue::new(2, "EMAIL", "contact@dona.net");
/// let mut b = HandleValue::new(4, "EMAIL", "contact@dona.net");
/// b.timestamp = 1_562_324_410;
/// let d = value_digest(&a, DigestAlgorithm::Sha256)?;
/// assert_eq!(d, value_digest(&b, DigestAlgorithm::Sha256)?);
/// assert_eq!(hex::encode(&d[..4]), "1e4649ff");
/// # Ok::<(), handle_resolver::wire::EncodeError>(())
/// ```
pub fn value_digest(value: &HandleValue, alg: DigestAlgorithm) -> Result<Vec<u8>, EncodeError> {
    Ok(alg.digest(&digested_bytes(value)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digested_bytes_leave_out_index_and_timestamp() {
        let mut v = HandleValue::new(7, "URL", "u");
        v.timestamp = 0x0102_0304;
        // ttl type 0, ttl 86400, permissions 0x0E, "URL", "u", no references.
        let want: &[u8] = &[
            0, 0, 1, 0x51, 0x80, 0x0E, 0, 0, 0, 3, b'U', b'R', b'L', 0, 0, 0, 1, b'u', 0, 0, 0, 0,
        ];
        assert_eq!(digested_bytes(&v).unwrap(), want);
        assert_eq!(
            DigestAlgorithm::from_name("sha-256"),
            Some(DigestAlgorithm::Sha256)
        );
        assert_eq!(
            DigestAlgorithm::from_name("SHA"),
            Some(DigestAlgorithm::Sha1)
        );
        assert_eq!(DigestAlgorithm::from_name("SHA3-256"), None);
        for alg in [
            DigestAlgorithm::Md5,
            DigestAlgorithm::Sha1,
            DigestAlgorithm::Sha256,
            DigestAlgorithm::Sha384,
            DigestAlgorithm::Sha512,
        ] {
            assert_eq!(DigestAlgorithm::from_name(alg.name()), Some(alg));
        }
        assert_eq!(DigestAlgorithm::Sha512.digest(b"").len(), 64);
    }
}
