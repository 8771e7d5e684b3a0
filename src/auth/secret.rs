//! HS_SECKEY: the secret, its "hashed" form, and the MACs over `nonce ‖ request digest`
//! that answer a challenge, exactly as the reference library 9.2 computes them.
//!
//! The MAC the reference client picks follows the challenge's lower protocol version (the
//! smaller of its message and suggested versions):
//! - below 2.1: MD5(key ‖ data ‖ key), sent without a code byte;
//! - 2.1 to 2.6: code 2, SHA-1(key ‖ data ‖ key);
//! - from 2.7: code 0x22, PBKDF2-HMAC-SHA1(password, 16-byte random salt, 10,000 iterations,
//!   160 bits), then HMAC-SHA1(derived key, data); sent with its parameters.
//!
//! The PBKDF2 password is the key after the reference library's byte-to-char step: each byte
//! `b` becomes the char `b & 0xff` and the JDK encodes those chars as UTF-8, so every byte
//! ≥ 0x80 becomes two bytes ([`pbkdf2_password`]; captures-auth `seckey_nonascii`).

use std::fmt;

use hmac::{Hmac, Mac};
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::wire::challenge::{mac_code, SecretKeyProof};

/// Salt length of a PBKDF2 answer (reference client: 16 random bytes).
pub const PBKDF2_SALT_LEN: usize = 16;
/// PBKDF2 iterations of the reference client.
pub const PBKDF2_ITERATIONS: u32 = 10_000;
/// Derived key length, in bits, of the reference client.
pub const PBKDF2_KEY_BITS: u32 = 160;
/// Largest PBKDF2 iteration count accepted when checking an answer (a peer's number: each
/// iteration costs time).
pub const MAX_PBKDF2_ITERATIONS: u32 = 1_000_000;

/// An HS_SECKEY secret: the bytes stored in the identity's HS_SECKEY value. Zeroized on
/// drop; its `Debug` shows only the length.
///
/// ```
/// use handle_resolver::auth::SecretKey;
///
/// let plain = SecretKey::new("public-test-secret-1");
/// assert_eq!(plain.len(), 20);
/// assert_eq!(format!("{plain:?}"), "SecretKey(20 bytes)");
/// // The "hashed" form: the lower-case hex SHA-1 of the secret is the key.
/// let hashed = SecretKey::hashed("public-hashed-password-2");
/// assert_eq!(hashed.expose(), b"e364736501d566a59b5ba29abebea20a7546be96");
/// ```
#[derive(Clone)]
pub struct SecretKey(Zeroizing<Vec<u8>>);

impl SecretKey {
    /// The secret as given (for text, its UTF-8 bytes).
    pub fn new(secret: impl AsRef<[u8]>) -> Self {
        Self(Zeroizing::new(secret.as_ref().to_vec()))
    }

    /// The reference library's "hashed" form (`SecretKeyAuthenticationInfo(…, true)`): the
    /// key is the lower-case hex of SHA-1 over the secret's bytes.
    pub fn hashed(secret: impl AsRef<[u8]>) -> Self {
        let digest = Zeroizing::new(Sha1::digest(secret.as_ref()).to_vec());
        Self(Zeroizing::new(hex::encode(&digest[..]).into_bytes()))
    }

    /// The key bytes. Meant for the MAC computations and for tests; do not log them.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// Length of the key in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for an empty key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({} bytes)", self.0.len())
    }
}

/// Which MAC an HS_SECKEY answer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SecretKeyMac {
    /// What the reference client sends for the challenge's version (module docs).
    #[default]
    ForVersion,
    /// MD5(key ‖ data ‖ key) with no code byte (below 2.1).
    LegacyMd5,
    /// Code 1: MD5(key ‖ data ‖ key).
    Md5,
    /// Code 2: SHA-1(key ‖ data ‖ key).
    Sha1,
    /// Code 3: SHA-256(key ‖ data ‖ key).
    Sha256,
    /// Code 0x12: HMAC-SHA1(key, data).
    HmacSha1,
    /// Code 0x13: HMAC-SHA256(key, data).
    HmacSha256,
    /// Code 0x22: PBKDF2-HMAC-SHA1, then HMAC-SHA1.
    Pbkdf2HmacSha1,
}

impl SecretKeyMac {
    /// The MAC the reference client uses when the challenge's lower version is
    /// `major.minor`.
    pub fn for_version(version: crate::wire::ProtocolVersion) -> Self {
        if !version.at_least(2, 1) {
            Self::LegacyMd5
        } else if version.at_least(2, 7) {
            Self::Pbkdf2HmacSha1
        } else {
            Self::Sha1
        }
    }
}

/// The PBKDF2 password bytes for a key: each byte as a Latin-1 char, encoded as UTF-8
/// (bytes below 0x80 unchanged, the others as `0xC2`/`0xC3` + one byte).
///
/// ```
/// use handle_resolver::auth::pbkdf2_password;
/// // "ü" is c3 bc in UTF-8; each of those bytes becomes two: c3 83, c2 bc.
/// assert_eq!(&pbkdf2_password("gü".as_bytes())[..], &[0x67, 0xc3, 0x83, 0xc2, 0xbc]);
/// assert_eq!(&pbkdf2_password(b"ascii")[..], b"ascii");
/// ```
pub fn pbkdf2_password(key: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(Vec::with_capacity(key.len() * 2));
    for &b in key {
        if b < 0x80 {
            out.push(b);
        } else {
            out.push(0xC0 | (b >> 6));
            out.push(0x80 | (b & 0x3F));
        }
    }
    out
}

/// PBKDF2-HMAC-SHA1 of `key` (after [`pbkdf2_password`]) with the given parameters;
/// `key_bits` rounded up to whole bytes.
pub fn pbkdf2_derive(
    key: &[u8],
    salt: &[u8],
    iterations: u32,
    key_bits: u32,
) -> Zeroizing<Vec<u8>> {
    let password = pbkdf2_password(key);
    let mut derived = Zeroizing::new(vec![0u8; (key_bits as usize).div_ceil(8)]);
    pbkdf2::pbkdf2_hmac::<Sha1>(&password, salt, iterations, &mut derived);
    derived
}

fn keyed<D: Digest>(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut h = D::new();
    h.update(key);
    h.update(data);
    h.update(key);
    h.finalize().to_vec()
}

fn hmac_sha1(key: &[u8], data: &[u8]) -> Vec<u8> {
    // HMAC takes keys of any length: new_from_slice cannot fail.
    let mut m = <Hmac<Sha1> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// Computes the answer of `mac` (not [`SecretKeyMac::ForVersion`], which is resolved by the
/// caller) over `data` (`nonce ‖ request digest`) with `key`; `salt` is used by PBKDF2 only.
pub(crate) fn compute(
    mac: SecretKeyMac,
    key: &SecretKey,
    data: &[u8],
    salt: [u8; PBKDF2_SALT_LEN],
) -> SecretKeyProof {
    let k = key.expose();
    let coded = |code, mac: Vec<u8>| SecretKeyProof::Keyed {
        code,
        mac: mac.into(),
    };
    match mac {
        SecretKeyMac::LegacyMd5 => SecretKeyProof::Legacy {
            mac: keyed::<Md5>(k, data).into(),
        },
        SecretKeyMac::Md5 => coded(mac_code::MD5, keyed::<Md5>(k, data)),
        SecretKeyMac::Sha1 => coded(mac_code::SHA1, keyed::<Sha1>(k, data)),
        SecretKeyMac::Sha256 => coded(mac_code::SHA256, keyed::<Sha256>(k, data)),
        SecretKeyMac::HmacSha1 => coded(mac_code::HMAC_SHA1, hmac_sha1(k, data)),
        SecretKeyMac::HmacSha256 => coded(mac_code::HMAC_SHA256, hmac_sha256(k, data)),
        SecretKeyMac::Pbkdf2HmacSha1 | SecretKeyMac::ForVersion => {
            let derived = pbkdf2_derive(k, &salt, PBKDF2_ITERATIONS, PBKDF2_KEY_BITS);
            SecretKeyProof::Pbkdf2 {
                salt: salt.to_vec().into(),
                iterations: PBKDF2_ITERATIONS,
                key_bits: PBKDF2_KEY_BITS,
                mac: hmac_sha1(&derived, data).into(),
            }
        }
    }
}

/// Checks an HS_SECKEY answer against the stored key, as a server does: recomputes the MAC
/// of the proof's kind (PBKDF2 with the proof's own salt and parameters) and compares in
/// constant time. PBKDF2 parameters beyond [`MAX_PBKDF2_ITERATIONS`] or a key longer than
/// 512 bits are refused (false) before any work.
///
/// ```
/// use handle_resolver::auth::{verify_secret_key_proof, SecretKey};
/// use handle_resolver::wire::SecretKeyProof;
/// use bytes::Bytes;
///
/// // captures-auth tcp_resolve_seckey: the answer of 300:20.500.12345/USER-SECKEY.
/// let data = hex::decode("ec65e80fba5a342d38db5e6ec20d347d1830e86085975cc8da052cb3d0e6e60c4d92c8f1467b84a711980148770aa6af")?;
/// let proof = SecretKeyProof::Pbkdf2 {
///     salt: Bytes::from(hex::decode("552030303b8744b242860a331cc9b2bd")?),
///     iterations: 10_000,
///     key_bits: 160,
///     mac: Bytes::from(hex::decode("42adb6142196e27b7dc4823e7ada9f85ab070cb1")?),
/// };
/// assert!(verify_secret_key_proof(&proof, &SecretKey::new("public-test-secret-1"), &data));
/// assert!(!verify_secret_key_proof(&proof, &SecretKey::new("public-WRONG-secret"), &data));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn verify_secret_key_proof(proof: &SecretKeyProof, key: &SecretKey, data: &[u8]) -> bool {
    let k = key.expose();
    let expected: Vec<u8> = match proof {
        SecretKeyProof::Legacy { .. } => keyed::<Md5>(k, data),
        SecretKeyProof::Keyed { code, .. } => match *code {
            mac_code::MD5 => keyed::<Md5>(k, data),
            mac_code::SHA1 => keyed::<Sha1>(k, data),
            mac_code::SHA256 => keyed::<Sha256>(k, data),
            mac_code::HMAC_SHA1 => hmac_sha1(k, data),
            mac_code::HMAC_SHA256 => hmac_sha256(k, data),
            _ => return false,
        },
        SecretKeyProof::Pbkdf2 {
            salt,
            iterations,
            key_bits,
            ..
        } => {
            if *iterations == 0
                || *iterations > MAX_PBKDF2_ITERATIONS
                || *key_bits == 0
                || *key_bits > 512
            {
                return false;
            }
            let derived = pbkdf2_derive(k, salt, *iterations, *key_bits);
            hmac_sha1(&derived, data)
        }
    };
    constant_time_eq(&expected, proof.mac())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ProtocolVersion;

    #[test]
    fn version_picks_the_reference_clients_mac() {
        assert_eq!(
            SecretKeyMac::for_version(ProtocolVersion::V2_11),
            SecretKeyMac::Pbkdf2HmacSha1
        );
        assert_eq!(
            SecretKeyMac::for_version(ProtocolVersion::new(2, 7)),
            SecretKeyMac::Pbkdf2HmacSha1
        );
        assert_eq!(
            SecretKeyMac::for_version(ProtocolVersion::new(2, 6)),
            SecretKeyMac::Sha1
        );
        assert_eq!(
            SecretKeyMac::for_version(ProtocolVersion::V2_1),
            SecretKeyMac::Sha1
        );
        assert_eq!(
            SecretKeyMac::for_version(ProtocolVersion::new(2, 0)),
            SecretKeyMac::LegacyMd5
        );
        assert_eq!(
            SecretKeyMac::for_version(ProtocolVersion::new(5, 0)),
            SecretKeyMac::LegacyMd5
        );
    }

    /// RFC 2202 test case 2 (HMAC-SHA1, key "Jefe") and RFC 4231 test case 2 (HMAC-SHA256).
    #[test]
    fn hmac_forms_follow_the_rfcs() {
        let data = b"what do ya want for nothing?";
        let key = SecretKey::new("Jefe");
        let p = compute(SecretKeyMac::HmacSha1, &key, data, [0; 16]);
        assert_eq!(p.code(), Some(0x12));
        assert_eq!(
            hex::encode(p.mac()),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
        let p = compute(SecretKeyMac::HmacSha256, &key, data, [0; 16]);
        assert_eq!(
            hex::encode(p.mac()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(verify_secret_key_proof(&p, &key, data));
        assert!(!verify_secret_key_proof(&p, &key, b"other data"));
    }

    #[test]
    fn keyed_hash_forms_wrap_the_data_in_the_key() {
        let key = SecretKey::new("k");
        // SHA-1("k" ‖ "data" ‖ "k") = SHA-1("kdatak").
        let p = compute(SecretKeyMac::Sha1, &key, b"data", [0; 16]);
        assert_eq!(p.code(), Some(2));
        assert_eq!(p.mac().as_ref(), Sha1::digest(b"kdatak").as_slice());
        let p = compute(SecretKeyMac::LegacyMd5, &key, b"data", [0; 16]);
        assert_eq!(p.code(), None);
        assert_eq!(p.mac().as_ref(), Md5::digest(b"kdatak").as_slice());
        assert!(verify_secret_key_proof(&p, &key, b"data"));
        let p = compute(SecretKeyMac::Sha256, &key, b"data", [0; 16]);
        assert_eq!(p.mac().as_ref(), Sha256::digest(b"kdatak").as_slice());
    }

    #[test]
    fn absurd_pbkdf2_parameters_are_refused_before_any_work() {
        let proof = SecretKeyProof::Pbkdf2 {
            salt: vec![0; 16].into(),
            iterations: u32::MAX,
            key_bits: 160,
            mac: vec![0; 20].into(),
        };
        assert!(!verify_secret_key_proof(&proof, &SecretKey::new("x"), b"d"));
    }
}
