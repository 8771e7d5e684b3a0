//! Signing values and issuing certificates as the reference library's `HandleSigner` does:
//! what a server signing its own root records needs, and what the tests build chains with.
//! The cryptography is RustCrypto's (`rsa`, `dsa`).

use bytes::Bytes;
use rsa::{Pkcs1v15Sign, RsaPrivateKey};
use sha2::{Digest, Sha256};
use signature::{SignatureEncoding, Signer};
use thiserror::Error;

use super::claims::{Claims, SignedDigests};
use super::digest::{value_digest, DigestAlgorithm};
use super::jws::{Jws, JwsAlgorithm};
use super::names::{Permission, ValueId};
use super::verify::HS_SIGNATURE;
use crate::wire::{DsaKey, EncodeError, HandleValue, PublicKey};

/// A private key that signs JWS: RSA (RS256) or DSA (DS256).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SigningKey {
    /// An RSA key.
    Rsa(Box<RsaPrivateKey>),
    /// A DSA key.
    Dsa(Box<dsa::SigningKey>),
}

/// When a signature or certificate is valid: `iat` and `nbf` are `from`, `exp` is `until`
/// (seconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Validity {
    /// Issued at and not before.
    pub from: u64,
    /// Not after.
    pub until: u64,
}

/// Signing failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SignError {
    /// The crypto library refused (a key too small for the digest, ...).
    #[error("cannot sign: {0}")]
    Crypto(String),
    /// A value could not be encoded to be digested.
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

impl SigningKey {
    /// The JWS algorithm this key signs with.
    pub fn algorithm(&self) -> JwsAlgorithm {
        match self {
            Self::Rsa(_) => JwsAlgorithm::Rs256,
            Self::Dsa(_) => JwsAlgorithm::Ds256,
        }
    }

    /// The public key, in the form an HS_PUBKEY value and a certificate carry.
    pub fn public_key(&self) -> PublicKey {
        match self {
            Self::Rsa(k) => PublicKey::from_rsa(&k.to_public_key()),
            Self::Dsa(k) => {
                let vk = k.verifying_key();
                let c = vk.components();
                PublicKey::Dsa(DsaKey {
                    options: 0,
                    q: java_integer(c.q().to_bytes_be()),
                    p: java_integer(c.p().to_bytes_be()),
                    g: java_integer(c.g().to_bytes_be()),
                    y: java_integer(vk.y().to_bytes_be()),
                })
            }
        }
    }

    /// A compact JWS of `payload`.
    pub fn sign_jws(&self, payload: &[u8]) -> Result<String, SignError> {
        let alg = self.algorithm();
        let input = Jws::signing_input(alg, payload);
        let signature = match self {
            Self::Rsa(k) => k
                .sign(
                    Pkcs1v15Sign::new::<Sha256>(),
                    &Sha256::digest(input.as_bytes()),
                )
                .map_err(|e| SignError::Crypto(e.to_string()))?,
            Self::Dsa(k) => k
                .try_sign(input.as_bytes())
                .map_err(|e| SignError::Crypto(e.to_string()))?
                .to_vec(),
        };
        Ok(Jws::compact(alg, payload, &signature))
    }
}

/// A number as Java's `BigInteger.toByteArray` writes it: no leading zeros but a sign byte.
fn java_integer(magnitude: Vec<u8>) -> Bytes {
    let m: Vec<u8> = magnitude.into_iter().skip_while(|&b| b == 0).collect();
    match m.first() {
        None => Bytes::from_static(&[0]),
        Some(b) if b & 0x80 != 0 => {
            let mut v = Vec::with_capacity(m.len() + 1);
            v.push(0);
            v.extend_from_slice(&m);
            Bytes::from(v)
        }
        Some(_) => Bytes::from(m),
    }
}

/// The data of an HS_SIGNATURE by `issuer` over `values` of `handle` (SHA-256 digests of
/// every value but the HS_SIGNATURE values).
pub fn sign_values(
    handle: &str,
    values: &[HandleValue],
    issuer: &ValueId,
    key: &SigningKey,
    validity: Validity,
) -> Result<String, SignError> {
    let mut digests = Vec::new();
    for v in values.iter().filter(|v| !v.is_type(HS_SIGNATURE)) {
        digests.push((v.index, value_digest(v, DigestAlgorithm::Sha256)?));
    }
    let claims = Claims {
        iss: Some(issuer.to_string()),
        sub: Some(handle.to_string()),
        digests: Some(SignedDigests {
            alg: DigestAlgorithm::Sha256.name().to_string(),
            digests,
        }),
        ..timed(validity)
    };
    key.sign_jws(claims.to_json().to_string().as_bytes())
}

/// The data of an HS_CERT by `issuer` saying that `subject`'s key is `subject_key` and that
/// it may sign what `perms` grant. With `subject` equal to `issuer` and `key` the subject
/// key's private half, a self-signed (root) certificate.
pub fn issue_certificate(
    subject: &ValueId,
    subject_key: &PublicKey,
    perms: Vec<Permission>,
    issuer: &ValueId,
    key: &SigningKey,
    validity: Validity,
) -> Result<String, SignError> {
    let claims = Claims {
        iss: Some(issuer.to_string()),
        sub: Some(subject.to_string()),
        perms,
        public_key: Some(subject_key.clone()),
        ..timed(validity)
    };
    key.sign_jws(claims.to_json().to_string().as_bytes())
}

fn timed(validity: Validity) -> Claims {
    Claims {
        iat: Some(validity.from),
        nbf: Some(validity.from),
        exp: Some(validity.until),
        ..Claims::default()
    }
}
