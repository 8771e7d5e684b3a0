//! Signed responses (RFC 3652 §2.2.4, PROTOCOL.md §9): which bytes a server signs, by message
//! version, and the check of a DSA (DER `r, s`) or RSA (PKCS#1 v1.5) signature over them with
//! SHA-1, SHA-256 or MD5.
//!
//! The low-level pieces ([`signed_data`], [`verify_signature`]) need no message type;
//! [`verify_message`] applies them to a decoded [`Message`].

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use signature::hazmat::PrehashVerifier;
use thiserror::Error;

use super::envelope::ProtocolVersion;
use super::error::EncodeError;
use super::message::Message;
use super::pubkey::{KeyError, PublicKey};

pub(crate) use super::credential::HS_SIGNED;

/// Legacy credential type, accepted like [`HS_SIGNED`].
pub(crate) const HS_DSAPUBKEY: &[u8] = b"HS_DSAPUBKEY";

/// Why a signature does not verify.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The message carries no credential.
    #[error("the message is not signed")]
    NoCredential,
    /// The credential is not a public-key signature (`HS_MAC`, ...).
    #[error("unsupported credential type {0:?}")]
    CredentialType(String),
    /// The digest algorithm is not SHA-256, SHA-1 or MD5 (or this key type cannot use it).
    #[error("unsupported digest algorithm {0:?}")]
    DigestAlgorithm(String),
    /// The key is neither DSA nor RSA, or its components are unusable.
    #[error("unusable key: {0}")]
    Key(#[from] KeyError),
    /// A DSA signature is not a DER `SEQUENCE { INTEGER r, INTEGER s }`.
    #[error("malformed DSA signature")]
    Malformed,
    /// The signature does not match the data and key.
    #[error("signature mismatch")]
    Mismatch,
    /// A built (not received) message could not be encoded to find its signed bytes.
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

/// The hash of a signature (PROTOCOL.md §9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashAlgorithm {
    /// MD5 (legacy, RSA only).
    Md5,
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
}

impl HashAlgorithm {
    /// The algorithm named by a credential's digest-algorithm field: `SHA-256`/`SHA256`,
    /// `SHA1`/`SHA-1`, `MD5` (ASCII case ignored) or the 1-byte codes 3, 2, 1.
    ///
    /// ```
    /// use handle_resolver::wire::HashAlgorithm;
    /// assert_eq!(HashAlgorithm::from_credential(b"SHA-256"), Some(HashAlgorithm::Sha256));
    /// assert_eq!(HashAlgorithm::from_credential(&[2]), Some(HashAlgorithm::Sha1));
    /// assert_eq!(HashAlgorithm::from_credential(b"HMAC-SHA256"), None);
    /// ```
    pub fn from_credential(name: &[u8]) -> Option<Self> {
        let is = |s: &str| name.eq_ignore_ascii_case(s.as_bytes());
        match name {
            [1] => Some(Self::Md5),
            [2] => Some(Self::Sha1),
            [3] => Some(Self::Sha256),
            _ if is("SHA-256") || is("SHA256") => Some(Self::Sha256),
            _ if is("SHA1") || is("SHA-1") => Some(Self::Sha1),
            _ if is("MD5") => Some(Self::Md5),
            _ => None,
        }
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Md5 => Md5::digest(data).to_vec(),
            Self::Sha1 => Sha1::digest(data).to_vec(),
            Self::Sha256 => Sha256::digest(data).to_vec(),
        }
    }
}

/// The bytes a server signs (PROTOCOL.md §9.2), from the response's envelope fields and its
/// header + body as received:
/// - version < 2.6: `header ‖ body` (the RFC);
/// - 2.6: the reference library's bug-compatible 14-byte prefix
///   `major ‖ minor ‖ session_id[0..2] ‖ session_counter ‖ 6 × 0`, then `header ‖ body`;
/// - ≥ 2.7: `major ‖ minor ‖ [suggested major ‖ suggested minor, from 2.8] ‖ session_id ‖
///   request_id ‖ session_counter ‖ header ‖ body`.
///
/// `session_counter` is the credential's signer index.
///
/// ```
/// use handle_resolver::wire::{signed_data, ProtocolVersion};
/// let d = signed_data(ProtocolVersion::V2_11, ProtocolVersion::V2_11, 0, 7, 0, b"HB");
/// assert_eq!(d, [2, 11, 2, 11, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, b'H', b'B']);
/// assert_eq!(signed_data(ProtocolVersion::V2_1, ProtocolVersion::V2_1, 0, 7, 0, b"HB"), b"HB");
/// ```
pub fn signed_data(
    version: ProtocolVersion,
    suggested: ProtocolVersion,
    session_id: u32,
    request_id: u32,
    session_counter: u32,
    header_and_body: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(header_and_body.len().saturating_add(16));
    if version.at_least(2, 7) {
        out.extend([version.major, version.minor]);
        if version.at_least(2, 8) {
            out.extend([suggested.major, suggested.minor]);
        }
        out.extend(session_id.to_be_bytes());
        out.extend(request_id.to_be_bytes());
        out.extend(session_counter.to_be_bytes());
    } else if version.at_least(2, 6) {
        let sid = session_id.to_be_bytes();
        out.extend([version.major, version.minor, sid[0], sid[1]]);
        out.extend(session_counter.to_be_bytes());
        out.extend([0u8; 6]);
    }
    out.extend_from_slice(header_and_body);
    out
}

/// Checks `signature` over `data` with `key`, hashing with the credential's
/// `digest_algorithm` (see [`HashAlgorithm::from_credential`]): DSA signatures are DER
/// `r, s` (SHA-1 or SHA-256), RSA signatures PKCS#1 v1.5 (SHA-1, SHA-256 or MD5).
pub fn verify_signature(
    key: &PublicKey,
    digest_algorithm: &[u8],
    signature: &[u8],
    data: &[u8],
) -> Result<(), SignatureError> {
    let unsupported =
        || SignatureError::DigestAlgorithm(String::from_utf8_lossy(digest_algorithm).into());
    let alg = HashAlgorithm::from_credential(digest_algorithm).ok_or_else(unsupported)?;
    match key {
        PublicKey::Dsa(_) => {
            if alg == HashAlgorithm::Md5 {
                return Err(unsupported());
            }
            let vk = key.to_dsa()?;
            let sig = dsa::Signature::try_from(signature).map_err(|_| SignatureError::Malformed)?;
            vk.verify_prehash(&alg.digest(data), &sig)
                .map_err(|_| SignatureError::Mismatch)
        }
        PublicKey::Rsa(_) => {
            let pk = key.to_rsa()?;
            let scheme = match alg {
                HashAlgorithm::Md5 => rsa::Pkcs1v15Sign::new::<Md5>(),
                HashAlgorithm::Sha1 => rsa::Pkcs1v15Sign::new::<Sha1>(),
                HashAlgorithm::Sha256 => rsa::Pkcs1v15Sign::new::<Sha256>(),
            };
            pk.verify(scheme, &alg.digest(data), signature)
                .map_err(|_| SignatureError::Mismatch)
        }
        PublicKey::Dh { .. } | PublicKey::Other { .. } => {
            Err(SignatureError::Key(KeyError::WrongType("DSA or RSA")))
        }
    }
}

/// Checks the signature of a response with the public key of the server it was sent to
/// (PROTOCOL.md §9.1: the credential's signer field is ignored, as the reference client does).
///
/// Requires a credential of type `HS_SIGNED` (or the legacy `HS_DSAPUBKEY`); the signed
/// bytes are built by [`signed_data`] from the envelope, the credential's signer index
/// (session counter) and the header and body as received ([`Message::header_and_body`]).
/// The caller still checks the expiration time and, if it asked for one, the request digest.
pub fn verify_message(msg: &Message, key: &PublicKey) -> Result<(), SignatureError> {
    let c = msg
        .credential
        .as_ref()
        .ok_or(SignatureError::NoCredential)?;
    check_credential_type(&c.credential_type)?;
    let header_and_body = msg.header_and_body()?;
    let env = &msg.envelope;
    let data = signed_data(
        env.version,
        env.suggested,
        env.session_id,
        env.request_id,
        c.signer.index,
        &header_and_body,
    );
    verify_signature(key, &c.digest_algorithm, &c.signature, &data)
}

/// Checks a credential type: `HS_SIGNED` or the legacy `HS_DSAPUBKEY`.
pub(crate) fn check_credential_type(credential_type: &[u8]) -> Result<(), SignatureError> {
    if credential_type == HS_SIGNED || credential_type == HS_DSAPUBKEY {
        Ok(())
    } else {
        Err(SignatureError::CredentialType(
            String::from_utf8_lossy(credential_type).into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_by_version() {
        let hb = [0xAAu8; 3];
        let v = |a, b| ProtocolVersion::new(a, b);
        // 2.7: no suggested version bytes.
        assert_eq!(
            signed_data(v(2, 7), v(2, 11), 0x01020304, 5, 6, &hb),
            [2, 7, 1, 2, 3, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0xAA, 0xAA, 0xAA]
        );
        // 2.8 and later: the suggested version follows the version.
        assert_eq!(
            signed_data(v(2, 10), v(2, 11), 0x01020304, 5, 6, &hb)[..6],
            [2, 10, 2, 11, 1, 2]
        );
        // 2.6: session id bytes 0-1, then the session counter, then six zeros.
        assert_eq!(
            signed_data(v(2, 6), v(2, 6), 0x01020304, 5, 0x0A0B0C0D, &hb),
            [2, 6, 1, 2, 0x0A, 0x0B, 0x0C, 0x0D, 0, 0, 0, 0, 0, 0, 0xAA, 0xAA, 0xAA]
        );
        // 2.5, 2.1 and the old "5.x" numbering: header and body only.
        for ver in [v(2, 5), v(2, 1), v(5, 0)] {
            assert_eq!(signed_data(ver, ver, 1, 2, 3, &hb), hb);
        }
    }

    #[test]
    fn digest_names() {
        for (name, alg) in [
            (&b"SHA-256"[..], HashAlgorithm::Sha256),
            (b"SHA256", HashAlgorithm::Sha256),
            (b"sha-1", HashAlgorithm::Sha1),
            (b"SHA1", HashAlgorithm::Sha1),
            (b"MD5", HashAlgorithm::Md5),
            (&[1], HashAlgorithm::Md5),
            (&[3], HashAlgorithm::Sha256),
        ] {
            assert_eq!(HashAlgorithm::from_credential(name), Some(alg));
        }
        assert_eq!(HashAlgorithm::from_credential(b""), None);
        assert_eq!(HashAlgorithm::from_credential(&[4]), None);
        assert_eq!(HashAlgorithm::Md5.digest(b"").len(), 16);
        assert_eq!(HashAlgorithm::Sha1.digest(b"").len(), 20);
    }

    #[test]
    fn credential_types() {
        assert!(check_credential_type(b"HS_SIGNED").is_ok());
        assert!(check_credential_type(b"HS_DSAPUBKEY").is_ok());
        assert!(matches!(
            check_credential_type(b"HS_MAC"),
            Err(SignatureError::CredentialType(_))
        ));
    }

    #[test]
    fn rejects_unusable_keys_and_algorithms() {
        let dh = PublicKey::Dh {
            options: 0,
            y: Default::default(),
            p: Default::default(),
            g: Default::default(),
        };
        assert!(matches!(
            verify_signature(&dh, b"SHA1", b"", b"x"),
            Err(SignatureError::Key(_))
        ));
        assert!(matches!(
            verify_signature(&dh, b"HMAC-SHA256", b"", b"x"),
            Err(SignatureError::DigestAlgorithm(_))
        ));
    }
}
