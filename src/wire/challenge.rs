//! The `signedResponse` field of a challenge answer ([`ChallengeAnswer`]), by authentication
//! type, as the reference library 9.2 lays it out (captures-auth `auth.json`):
//!
//! - HS_SECKEY from 2.1 on: `code ‖ MAC`, where the code names the MAC
//!   ([`mac_code`]); for PBKDF2-HMAC-SHA1 (0x22, what the reference client sends from 2.7 on)
//!   the MAC is `int4 len ‖ salt ‖ int4 iterations ‖ int4 key bits ‖ int4 len ‖ HMAC`;
//! - HS_SECKEY before 2.1: the bare MD5 MAC, no code;
//! - HS_PUBKEY: `int4 len ‖ hash algorithm (“SHA-256”, “SHA1”, “MD5”) ‖ int4 len ‖ signature`.
//!
//! Only the layouts live here; computing and checking them is `crate::auth`'s work.
//!
//! [`ChallengeAnswer`]: super::body::ChallengeAnswer

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::limits::Limits;
use super::reader::Reader;
use super::writer::put_bytes;

/// The MAC codes of an HS_SECKEY answer (reference `Common.HASH_CODE_*`).
pub mod mac_code {
    /// MD5(key ‖ data ‖ key).
    pub const MD5: u8 = 1;
    /// SHA-1(key ‖ data ‖ key): what the reference client sends from 2.1 to 2.6.
    pub const SHA1: u8 = 2;
    /// SHA-256(key ‖ data ‖ key).
    pub const SHA256: u8 = 3;
    /// HMAC-SHA1(key, data).
    pub const HMAC_SHA1: u8 = 0x12;
    /// HMAC-SHA256(key, data).
    pub const HMAC_SHA256: u8 = 0x13;
    /// PBKDF2-HMAC-SHA1 then HMAC-SHA1: what the reference client sends from 2.7 on.
    pub const PBKDF2_HMAC_SHA1: u8 = 0x22;
}

/// A parsed HS_SECKEY `signedResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SecretKeyProof {
    /// Before 2.1: MD5(key ‖ nonce ‖ digest ‖ key) with no code byte.
    Legacy {
        /// The 16 MD5 bytes (kept as received).
        mac: Bytes,
    },
    /// `code ‖ MAC` for the codes without parameters (1, 2, 3, 0x12, 0x13).
    Keyed {
        /// The MAC code ([`mac_code`]).
        code: u8,
        /// The MAC bytes.
        mac: Bytes,
    },
    /// Code 0x22: PBKDF2-HMAC-SHA1 over the secret, then HMAC-SHA1 with the derived key.
    Pbkdf2 {
        /// The salt (16 random bytes from the reference client).
        salt: Bytes,
        /// PBKDF2 iterations (10,000).
        iterations: u32,
        /// Derived key length in bits (160).
        key_bits: u32,
        /// The HMAC-SHA1 bytes.
        mac: Bytes,
    },
}

impl SecretKeyProof {
    /// Parses `signed_response`. `legacy` (the challenge's lower version is below 2.1) takes
    /// the whole field as the bare MAC. An unknown code, or bytes left after the PBKDF2
    /// fields, is an error.
    pub fn decode(
        signed_response: &Bytes,
        legacy: bool,
        limits: &Limits,
    ) -> Result<Self, DecodeError> {
        if legacy {
            return Ok(Self::Legacy {
                mac: signed_response.clone(),
            });
        }
        let mut r = Reader::new(signed_response.clone());
        let code = r.u8("seckey_answer.code")?;
        match code {
            mac_code::MD5
            | mac_code::SHA1
            | mac_code::SHA256
            | mac_code::HMAC_SHA1
            | mac_code::HMAC_SHA256 => Ok(Self::Keyed {
                code,
                mac: r.rest(),
            }),
            mac_code::PBKDF2_HMAC_SHA1 => {
                let salt = r.bytes("seckey_answer.salt", limits.max_array)?;
                let iterations = r.u32("seckey_answer.iterations")?;
                let key_bits = r.u32("seckey_answer.key_bits")?;
                let mac = r.bytes("seckey_answer.mac", limits.max_array)?;
                r.finish("seckey_answer")?;
                Ok(Self::Pbkdf2 {
                    salt,
                    iterations,
                    key_bits,
                    mac,
                })
            }
            other => Err(DecodeError::new(
                "seckey_answer.code",
                0,
                DecodeErrorKind::Invalid {
                    value: other.into(),
                },
            )),
        }
    }

    /// The `signedResponse` bytes.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        match self {
            Self::Legacy { mac } => out.put_slice(mac),
            Self::Keyed { code, mac } => {
                out.put_u8(*code);
                out.put_slice(mac);
            }
            Self::Pbkdf2 {
                salt,
                iterations,
                key_bits,
                mac,
            } => {
                out.put_u8(mac_code::PBKDF2_HMAC_SHA1);
                put_bytes(&mut out, "seckey_answer.salt", salt)?;
                out.put_u32(*iterations);
                out.put_u32(*key_bits);
                put_bytes(&mut out, "seckey_answer.mac", mac)?;
            }
        }
        Ok(out.freeze())
    }

    /// The MAC code (`None` for the legacy form).
    pub fn code(&self) -> Option<u8> {
        match self {
            Self::Legacy { .. } => None,
            Self::Keyed { code, .. } => Some(*code),
            Self::Pbkdf2 { .. } => Some(mac_code::PBKDF2_HMAC_SHA1),
        }
    }

    /// The MAC bytes.
    pub fn mac(&self) -> &Bytes {
        match self {
            Self::Legacy { mac } | Self::Keyed { mac, .. } | Self::Pbkdf2 { mac, .. } => mac,
        }
    }
}

/// A parsed HS_PUBKEY `signedResponse`: the hash algorithm and the signature over
/// `nonce ‖ request digest`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PublicKeyProof {
    /// `SHA-256`, `SHA1` or `MD5` as the reference library names them.
    pub hash_algorithm: Bytes,
    /// PKCS#1 v1.5 (RSA) or DER `SEQUENCE { r, s }` (DSA).
    pub signature: Bytes,
}

impl PublicKeyProof {
    /// Parses `signed_response`, which must hold exactly the two fields.
    pub fn decode(signed_response: &Bytes, limits: &Limits) -> Result<Self, DecodeError> {
        let mut r = Reader::new(signed_response.clone());
        let hash_algorithm = r.bytes("pubkey_answer.hash_algorithm", limits.max_array)?;
        let signature = r.bytes("pubkey_answer.signature", limits.max_array)?;
        r.finish("pubkey_answer")?;
        Ok(Self {
            hash_algorithm,
            signature,
        })
    }

    /// The `signedResponse` bytes.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        put_bytes(
            &mut out,
            "pubkey_answer.hash_algorithm",
            &self.hash_algorithm,
        )?;
        put_bytes(&mut out, "pubkey_answer.signature", &self.signature)?;
        Ok(out.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// captures-auth `tcp_resolve_seckey` answer: 0x22 ‖ int4 16 ‖ salt ‖ int4 10000 ‖
    /// int4 160 ‖ int4 20 ‖ HMAC.
    const SECKEY_ANSWER: &str = "2200000010552030303b8744b242860a331cc9b2bd00002710000000a00000001442adb6142196e27b7dc4823e7ada9f85ab070cb1";

    #[test]
    fn pbkdf2_answer_parses_and_re_encodes() {
        let raw = Bytes::from(hex::decode(SECKEY_ANSWER).unwrap());
        let p = SecretKeyProof::decode(&raw, false, &Limits::default()).unwrap();
        let SecretKeyProof::Pbkdf2 {
            salt,
            iterations,
            key_bits,
            mac,
        } = &p
        else {
            panic!("{p:?}");
        };
        assert_eq!(hex::encode(salt), "552030303b8744b242860a331cc9b2bd");
        assert_eq!((*iterations, *key_bits), (10_000, 160));
        assert_eq!(hex::encode(mac), "42adb6142196e27b7dc4823e7ada9f85ab070cb1");
        assert_eq!(p.encode().unwrap(), raw);
        // One byte more or less is an error, not a different reading.
        let mut long = raw.to_vec();
        long.push(0);
        assert!(SecretKeyProof::decode(&Bytes::from(long), false, &Limits::default()).is_err());
        let short = raw.slice(..raw.len() - 1);
        assert!(SecretKeyProof::decode(&short, false, &Limits::default()).is_err());
    }

    #[test]
    fn unknown_codes_are_refused_and_legacy_is_the_whole_field() {
        let e = SecretKeyProof::decode(&Bytes::from_static(&[0x99, 1]), false, &Limits::default())
            .unwrap_err();
        assert_eq!(e.field, "seckey_answer.code");
        let raw = Bytes::from_static(&[0x99, 1]);
        let legacy = SecretKeyProof::decode(&raw, true, &Limits::default()).unwrap();
        assert_eq!(legacy.code(), None);
        assert_eq!(legacy.encode().unwrap(), raw);
    }

    #[test]
    fn pubkey_answer_round_trips() {
        let p = PublicKeyProof {
            hash_algorithm: Bytes::from_static(b"SHA-256"),
            signature: Bytes::from_static(&[1, 2, 3]),
        };
        let b = p.encode().unwrap();
        assert_eq!(&b[..11], b"\0\0\0\x07SHA-256");
        assert_eq!(PublicKeyProof::decode(&b, &Limits::default()).unwrap(), p);
    }
}
