//! HS_PUBKEY private keys: read from the reference library's private-key file or from
//! PKCS#8 (PEM, possibly passphrase-encrypted, or DER), and used to sign `nonce ‖ request
//! digest`. Writing them, generating them and the other formats are [`super::keyfile`]'s.
//!
//! The reference library's file (`*_privkey.bin` in captures-auth `keys/`): `int4 scheme`
//! (1 = not encrypted; 0, 2, 3, 4 = passphrase-encrypted with DES, DES-CBC, PBKDF2+DESede,
//! PBKDF2+AES; scheme 4 is read with a passphrase) then, unencrypted, the key encoding:
//! - `UTF8 "RSA_PRIVCRT_KEY" ‖ n ‖ e ‖ d ‖ p ‖ q ‖ dP ‖ dQ ‖ qInv` (each `int4 len ‖ big-endian
//!   magnitude`, Java's `BigInteger.toByteArray`, so maybe a leading zero byte);
//! - `UTF8 "DSA_PRIV_KEY" ‖ x ‖ p ‖ q ‖ g`.
//!
//! (`RSA_PRIV_KEY ‖ n ‖ d`, with no public exponent, cannot be signed with by the `rsa`
//! crate and is refused as unsupported.)
//!
//! A DSA key, from either format, needs a q of 160, 224 or 256 bits and 0 < x < q; any other
//! is [`KeyFileError::InvalidKey`] (a q under 8 bits would make signing loop forever).
//!
//! Signatures, as the reference client's `PublicKeyAuthenticationInfo`: RSA PKCS#1 v1.5
//! (deterministic) with SHA-256 from 2.7 on, SHA-1 before; DSA with SHA-256 from 2.11 on and
//! SHA-1 before (the reference library keeps SHA1withDSA below 2.11 even where RSA uses
//! SHA-256), the DER `SEQUENCE { r, s }` with the hash cut to the bit length of q. DSA `k` is
//! derived as RFC 6979 describes, so a signature is reproducible; any valid `k` verifies.

use std::fmt;

use bytes::Bytes;
use md5::Md5;
use pkcs8::DecodePrivateKey;
use rsa::traits::PublicKeyParts;
use sha1::Sha1;
use sha2::Sha256;
use zeroize::Zeroizing;

use super::error::KeyFileError;
use super::secret::{pbkdf2_derive, MAX_PBKDF2_ITERATIONS};
use crate::wire::pubkey::DsaKey;
use crate::wire::signature::HashAlgorithm;
use crate::wire::{ProtocolVersion, PublicKey, Reader};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};

/// Key-file scheme: not encrypted (reference `Common.ENCRYPT_NONE`).
pub const KEY_FILE_NOT_ENCRYPTED: u32 = 1;
/// Key-file scheme: PBKDF2-HMAC-SHA1 + AES-128-CBC (reference
/// `Common.ENCRYPT_PBKDF2_AES_CBC_PKCS5`), what the reference library writes for a passphrase.
pub const KEY_FILE_PBKDF2_AES: u32 = 4;
/// Largest ciphertext accepted in a key file.
pub(super) const MAX_KEY_FILE: usize = 64 * 1024;
/// Largest key component accepted from a key file: 16384 bits.
pub(super) const MAX_COMPONENT: usize = 2048 + 1;

/// A private key that answers HS_PUBKEY challenges. Zeroized on drop (by the `rsa` and
/// `dsa` crates); its `Debug` names the algorithm and size only.
#[derive(Clone)]
#[non_exhaustive]
pub enum PrivateKey {
    /// An RSA key.
    Rsa(rsa::RsaPrivateKey),
    /// A DSA key.
    Dsa(dsa::SigningKey),
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rsa(k) => write!(f, "PrivateKey(RSA-{})", k.n().bits()),
            Self::Dsa(k) => write!(
                f,
                "PrivateKey(DSA-{}/{})",
                k.verifying_key().components().p().bits(),
                k.verifying_key().components().q().bits()
            ),
        }
    }
}

fn component(r: &mut Reader, field: &'static str) -> Result<rsa::BigUint, KeyFileError> {
    let b = Zeroizing::new(r.bytes(field, MAX_COMPONENT)?.to_vec());
    Ok(rsa::BigUint::from_bytes_be(&b))
}

impl PrivateKey {
    /// Reads the reference library's private-key file: `int4 scheme ‖ …`. Only scheme 1
    /// (not encrypted) is read without a passphrase; an encrypted file is a
    /// [`KeyFileError::NeedsPassphrase`].
    ///
    /// ```
    /// use handle_resolver::auth::PrivateKey;
    /// use handle_resolver::auth::KeyFileError;
    ///
    /// // int4 4 (PBKDF2 + AES, passphrase-encrypted) and nothing else.
    /// let e = PrivateKey::from_reference_file(&[0, 0, 0, 4]).unwrap_err();
    /// assert_eq!(e, KeyFileError::NeedsPassphrase(4));
    /// ```
    pub fn from_reference_file(bytes: &[u8]) -> Result<Self, KeyFileError> {
        Self::read_reference_file(bytes, None)
    }

    /// Reads the reference library's private-key file, decrypting it with `passphrase`
    /// (its UTF-8 bytes) when it is encrypted with scheme 4, what the reference library
    /// writes today: `int4 4 ‖ bytes salt ‖ int4 iterations ‖ int4 key bits ‖ bytes IV ‖
    /// bytes ciphertext`, AES-128-CBC/PKCS#5 under PBKDF2-HMAC-SHA1 of the passphrase (after
    /// the same byte-to-char step as HS_SECKEY answers, [`super::pbkdf2_password`]). The
    /// older DES and DESede schemes (0, 2, 3) are [`KeyFileError::EncryptedScheme`]. An
    /// unencrypted file ignores the passphrase.
    pub fn from_reference_file_with_passphrase(
        bytes: &[u8],
        passphrase: &[u8],
    ) -> Result<Self, KeyFileError> {
        Self::read_reference_file(bytes, Some(passphrase))
    }

    fn read_reference_file(bytes: &[u8], passphrase: Option<&[u8]>) -> Result<Self, KeyFileError> {
        let mut r = Reader::new(Bytes::copy_from_slice(bytes));
        let scheme = r.u32("key_file.scheme")?;
        match (scheme, passphrase) {
            (KEY_FILE_NOT_ENCRYPTED, _) => {
                let key = Zeroizing::new(r.rest().to_vec());
                Self::from_reference_encoding(&key)
            }
            (KEY_FILE_PBKDF2_AES, Some(passphrase)) => {
                let salt = r.bytes("key_file.salt", 1024)?;
                let iterations = r.u32("key_file.iterations")?;
                let key_bits = r.u32("key_file.key_bits")?;
                let iv = r.bytes("key_file.iv", 16)?;
                let ciphertext = r.bytes("key_file.ciphertext", MAX_KEY_FILE)?;
                r.finish("key_file")?;
                if iterations == 0
                    || iterations > MAX_PBKDF2_ITERATIONS
                    || !(128..=512).contains(&key_bits)
                {
                    return Err(KeyFileError::InvalidKey("key file encryption parameters"));
                }
                let derived = pbkdf2_derive(passphrase, &salt, iterations, key_bits);
                // The reference cuts a longer derived key to AES-128's 16 bytes.
                let aes_key = derived.get(..16).ok_or(KeyFileError::WrongPassphrase)?;
                let plain = cbc::Decryptor::<aes::Aes128>::new_from_slices(aes_key, &iv)
                    .map_err(|_| KeyFileError::InvalidKey("key file IV"))?
                    .decrypt_padded_vec_mut::<Pkcs7>(&ciphertext)
                    .map(Zeroizing::new)
                    .map_err(|_| KeyFileError::WrongPassphrase)?;
                // Under a wrong passphrase the padding can still look right by chance; then
                // the decrypted bytes are no key encoding.
                Self::from_reference_encoding(&plain).map_err(|e| match e {
                    KeyFileError::Decode(_) | KeyFileError::UnsupportedKeyType(_) => {
                        KeyFileError::WrongPassphrase
                    }
                    other => other,
                })
            }
            (0 | 2..=4, None) => Err(KeyFileError::NeedsPassphrase(scheme)),
            (0 | 2 | 3, Some(_)) => Err(KeyFileError::EncryptedScheme(scheme)),
            (other, _) => Err(KeyFileError::UnknownScheme(other)),
        }
    }

    /// Reads the reference library's key encoding (`RSA_PRIVCRT_KEY …` or `DSA_PRIV_KEY …`,
    /// without the file's scheme word); every byte must be used.
    pub fn from_reference_encoding(bytes: &[u8]) -> Result<Self, KeyFileError> {
        let mut r = Reader::new(Bytes::copy_from_slice(bytes));
        let key_type = r.bytes("private_key.type", 64)?;
        let key = match &key_type[..] {
            b"RSA_PRIVCRT_KEY" => {
                let n = component(&mut r, "private_key.n")?;
                let e = component(&mut r, "private_key.e")?;
                let d = component(&mut r, "private_key.d")?;
                let p = component(&mut r, "private_key.p")?;
                let q = component(&mut r, "private_key.q")?;
                // dP, dQ and qInv follow; the rsa crate recomputes them from p and q.
                for f in ["private_key.dp", "private_key.dq", "private_key.qinv"] {
                    component(&mut r, f)?;
                }
                let mut k = rsa::RsaPrivateKey::from_components(n, e, d, vec![p, q])
                    .map_err(|_| KeyFileError::InvalidKey("RSA"))?;
                k.validate().map_err(|_| KeyFileError::InvalidKey("RSA"))?;
                k.precompute()
                    .map_err(|_| KeyFileError::InvalidKey("RSA"))?;
                Self::Rsa(k)
            }
            b"DSA_PRIV_KEY" => {
                let x = component(&mut r, "private_key.x")?;
                let p = component(&mut r, "private_key.p")?;
                let q = component(&mut r, "private_key.q")?;
                let g = component(&mut r, "private_key.g")?;
                Self::Dsa(dsa_from(p, q, g, x)?)
            }
            other => {
                return Err(KeyFileError::UnsupportedKeyType(
                    String::from_utf8_lossy(other).into_owned(),
                ))
            }
        };
        r.finish("private_key")?;
        Ok(key)
    }

    /// Reads a PKCS#8 DER private key (RSA or DSA). A DSA key's sizes are checked before
    /// any arithmetic on it.
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyFileError> {
        if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
            return Ok(Self::Rsa(k));
        }
        let info =
            pkcs8::PrivateKeyInfo::try_from(der).map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
        if info.algorithm.oid == dsa::OID {
            dsa_parameters_checked(info.algorithm.parameters_any().ok())?;
        }
        dsa::SigningKey::try_from(info)
            .map_err(|e| KeyFileError::Pkcs8(e.to_string()))
            .map(Self::Dsa)
    }

    /// The matching public key as an HS_PUBKEY value would hold it (the reference
    /// library's encoding).
    pub fn public_key(&self) -> PublicKey {
        match self {
            Self::Rsa(k) => PublicKey::from_rsa(&k.to_public_key()),
            Self::Dsa(k) => dsa_public_key(k.verifying_key()),
        }
    }

    /// The hash the reference client signs a challenge of message version `version` with:
    /// RSA SHA-256 from 2.7, DSA SHA-256 from 2.11, SHA-1 otherwise.
    pub fn hash_for_version(&self, version: ProtocolVersion) -> HashAlgorithm {
        let sha256 = match self {
            Self::Rsa(_) => version.at_least(2, 7),
            Self::Dsa(_) => version.at_least(2, 11),
        };
        if sha256 {
            HashAlgorithm::Sha256
        } else {
            HashAlgorithm::Sha1
        }
    }

    /// Signs `data` with `hash`: PKCS#1 v1.5 for RSA, DER `r, s` for DSA (RFC 6979 `k`; MD5
    /// is refused for DSA as the reference library has no MD5withDSA).
    pub fn sign(&self, hash: HashAlgorithm, data: &[u8]) -> Result<Vec<u8>, &'static str> {
        let digest = hash.digest(data);
        match self {
            Self::Rsa(k) => {
                let scheme = match hash {
                    HashAlgorithm::Md5 => rsa::Pkcs1v15Sign::new::<Md5>(),
                    HashAlgorithm::Sha1 => rsa::Pkcs1v15Sign::new::<Sha1>(),
                    HashAlgorithm::Sha256 => rsa::Pkcs1v15Sign::new::<Sha256>(),
                };
                k.sign(scheme, &digest).map_err(|_| "RSA signing failed")
            }
            Self::Dsa(k) => {
                let sig = match hash {
                    HashAlgorithm::Sha1 => k.sign_prehashed_rfc6979::<Sha1>(&digest),
                    HashAlgorithm::Sha256 => k.sign_prehashed_rfc6979::<Sha256>(&digest),
                    HashAlgorithm::Md5 => return Err("DSA with MD5"),
                }
                .map_err(|_| "DSA signing failed")?;
                Ok(signature::SignatureEncoding::to_vec(&sig))
            }
        }
    }
}

/// True for the sizes of q that DSA defines (FIPS 186-4: 160, 224 and 256 bits; what the
/// JDK generates). A smaller q cannot be signed with: the `dsa` crate's RFC 6979 nonce loop
/// never ends when q has fewer than 8 bits.
pub(super) fn dsa_q_size(q: &dsa::BigUint) -> bool {
    matches!(q.bits(), 160 | 224 | 256)
}

/// The DSA parameters `p, q, g` of a PKCS#8 or SPKI algorithm identifier, checked before
/// any exponentiation: q of a DSA size, p at most 16384 bits (a larger one would only cost
/// time). Missing or undecodable parameters are [`KeyFileError::InvalidKey`] too: a DSA key
/// without them cannot be used.
pub(super) fn dsa_parameters_checked(
    parameters: Option<pkcs8::der::asn1::AnyRef<'_>>,
) -> Result<(), KeyFileError> {
    let c: dsa::Components = parameters
        .and_then(|p| p.decode_as().ok())
        .ok_or(KeyFileError::InvalidKey("DSA"))?;
    if dsa_q_size(c.q()) && c.p().bits() <= MAX_COMPONENT * 8 - 8 {
        Ok(())
    } else {
        Err(KeyFileError::InvalidKey("DSA"))
    }
}

/// A DSA public key as an HS_PUBKEY value holds it (Java's magnitudes).
pub(super) fn dsa_public_key(vk: &dsa::VerifyingKey) -> PublicKey {
    let c = vk.components();
    PublicKey::Dsa(DsaKey {
        options: 0,
        q: java_magnitude(c.q()),
        p: java_magnitude(c.p()),
        g: java_magnitude(c.g()),
        y: java_magnitude(vk.y()),
    })
}

pub(super) fn dsa_from(
    p: dsa::BigUint,
    q: dsa::BigUint,
    g: dsa::BigUint,
    x: dsa::BigUint,
) -> Result<dsa::SigningKey, KeyFileError> {
    // Checked before any exponentiation: q's size, and 0 < x < q.
    if !dsa_q_size(&q) || x == dsa::BigUint::default() || x >= q {
        return Err(KeyFileError::InvalidKey("DSA"));
    }
    let components =
        dsa::Components::from_components(p, q, g).map_err(|_| KeyFileError::InvalidKey("DSA"))?;
    let y = components.g().modpow(&x, components.p());
    let vk = dsa::VerifyingKey::from_components(components, y)
        .map_err(|_| KeyFileError::InvalidKey("DSA"))?;
    dsa::SigningKey::from_components(vk, x).map_err(|_| KeyFileError::InvalidKey("DSA"))
}

/// A magnitude as Java's `BigInteger.toByteArray` writes it: a leading zero byte when the
/// top bit is set.
fn java_magnitude(n: &dsa::BigUint) -> Bytes {
    Bytes::copy_from_slice(&java_bytes(n))
}

/// [`java_magnitude`] for private numbers: every buffer they pass through is zeroized.
pub(super) fn java_bytes(n: &dsa::BigUint) -> Zeroizing<Vec<u8>> {
    let b = Zeroizing::new(n.to_bytes_be());
    let mut v = Zeroizing::new(Vec::with_capacity(b.len() + 1));
    if b.first().is_some_and(|&x| x & 0x80 != 0) {
        v.push(0);
    }
    v.extend_from_slice(&b);
    v
}
