//! The reference library's key files, written as its `Util` writes them:
//!
//! - private (`Util.getBytesFromPrivateKey`, then `Util.encrypt`): `int4 scheme ‖ …`; scheme
//!   1 (`ENCRYPT_NONE`) is followed by the key encoding, scheme 4
//!   (`ENCRYPT_PBKDF2_AES_CBC_PKCS5`, what `hdl-keygen` writes under a passphrase) by
//!   `bytes salt (16 random) ‖ int4 10000 ‖ int4 128 ‖ bytes IV (16) ‖ bytes ciphertext`, the
//!   key encoding under AES-128-CBC/PKCS#5 with the key PBKDF2-HMAC-SHA1(passphrase, salt,
//!   10000, 128 bits) (after the byte-to-char step of `Util.doPBKDF2`). `bytes` is `int4
//!   length ‖ bytes`. The encoding: `RSA_PRIVCRT_KEY ‖ n ‖ e ‖ d ‖ p ‖ q ‖ dP ‖ dQ ‖ qInv` or
//!   `DSA_PRIV_KEY ‖ x ‖ p ‖ q ‖ g`, each number as `BigInteger.toByteArray` (a leading zero
//!   byte when the top bit is set);
//! - public (`Util.getBytesFromPublicKey`): the HS_PUBKEY value data, [`PublicKey::encode`].

use aes::Aes128;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockEncryptMut, KeyIvInit};
use rand::RngCore;
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use zeroize::Zeroizing;

use super::super::error::KeyFileError;
use super::super::keys::{java_bytes, PrivateKey, KEY_FILE_NOT_ENCRYPTED, KEY_FILE_PBKDF2_AES};
use super::super::secret::pbkdf2_derive;
use super::{usable, KeyMaterial};
use crate::wire::PublicKey;

/// Scheme 4 as `Util.encrypt` writes it: a salt of 16 random bytes, 10000 PBKDF2 rounds,
/// 128 key bits (AES-128).
const SALT_LEN: usize = 16;
const ITERATIONS: u32 = 10_000;
const AES_KEY_BITS: u32 = 128;
/// The AES block, and so the IV, size.
const IV_LEN: usize = 16;

/// Appends `int4 len ‖ b`, as the reference's `Encoder.writeByteArray`.
fn put(out: &mut Vec<u8>, b: &[u8]) {
    // Key components and ciphertexts are far below 4 GiB.
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

impl PrivateKey {
    /// The reference library's key encoding (`RSA_PRIVCRT_KEY …` or `DSA_PRIV_KEY …`, no
    /// scheme word): what [`PrivateKey::from_reference_encoding`] reads.
    pub fn to_reference_encoding(&self) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        let (key_type, parts): (&[u8], Vec<Zeroizing<Vec<u8>>>) = match self {
            PrivateKey::Rsa(k) => {
                let [p, q] = k.primes() else {
                    return Err(KeyFileError::Unsupported(
                        "an RSA key of more than two primes",
                    ));
                };
                let one = rsa::BigUint::from(1u8);
                let dp = Zeroizing::new(k.d() % (p - &one));
                let dq = Zeroizing::new(k.d() % (q - &one));
                let qinv =
                    Zeroizing::new(k.crt_coefficient().ok_or(KeyFileError::InvalidKey("RSA"))?);
                (
                    b"RSA_PRIVCRT_KEY",
                    vec![
                        java_bytes(k.n()),
                        java_bytes(k.e()),
                        java_bytes(k.d()),
                        java_bytes(p),
                        java_bytes(q),
                        java_bytes(&dp),
                        java_bytes(&dq),
                        java_bytes(&qinv),
                    ],
                )
            }
            PrivateKey::Dsa(k) => {
                let c = k.verifying_key().components();
                (
                    b"DSA_PRIV_KEY",
                    vec![
                        java_bytes(k.x()),
                        java_bytes(c.p()),
                        java_bytes(c.q()),
                        java_bytes(c.g()),
                    ],
                )
            }
        };
        let len = 4 + key_type.len() + parts.iter().map(|p| 4 + p.len()).sum::<usize>();
        // Sized once, so that no copy of the key is left behind by a reallocation.
        let mut out = Zeroizing::new(Vec::with_capacity(len));
        put(&mut out, key_type);
        for part in &parts {
            put(&mut out, part);
        }
        Ok(out)
    }

    /// The reference library's private-key file: unencrypted (`int4 1 ‖ encoding`) without a
    /// passphrase, scheme 4 (PBKDF2-HMAC-SHA1, 10000 rounds, AES-128-CBC, a random salt and
    /// IV) with one, which [`PrivateKey::from_reference_file_with_passphrase`] reads (and
    /// the reference library too).
    pub fn to_reference_file(
        &self,
        passphrase: Option<&[u8]>,
    ) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        let encoding = self.to_reference_encoding()?;
        Ok(match passphrase {
            None => {
                let mut out = Zeroizing::new(Vec::with_capacity(4 + encoding.len()));
                out.extend_from_slice(&KEY_FILE_NOT_ENCRYPTED.to_be_bytes());
                out.extend_from_slice(&encoding);
                out
            }
            Some(passphrase) => {
                let mut salt = [0u8; SALT_LEN];
                let mut iv = [0u8; IV_LEN];
                rand::rngs::OsRng.fill_bytes(&mut salt);
                rand::rngs::OsRng.fill_bytes(&mut iv);
                Zeroizing::new(encrypt(&encoding, passphrase, &salt, &iv))
            }
        })
    }
}

/// Scheme 4 of `plain` (a key encoding) under `passphrase`, with the given salt and IV.
pub(super) fn encrypt(plain: &[u8], passphrase: &[u8], salt: &[u8], iv: &[u8; IV_LEN]) -> Vec<u8> {
    let key = pbkdf2_derive(passphrase, salt, ITERATIONS, AES_KEY_BITS);
    let mut aes_key = [0u8; 16];
    aes_key.copy_from_slice(&key[..16]);
    let ciphertext = cbc::Encryptor::<Aes128>::new(&aes_key.into(), iv.into())
        .encrypt_padded_vec_mut::<Pkcs7>(plain);
    zeroize::Zeroize::zeroize(&mut aes_key);
    let mut out = Vec::with_capacity(4 * 6 + salt.len() + iv.len() + ciphertext.len());
    out.extend_from_slice(&KEY_FILE_PBKDF2_AES.to_be_bytes());
    put(&mut out, salt);
    out.extend_from_slice(&ITERATIONS.to_be_bytes());
    out.extend_from_slice(&AES_KEY_BITS.to_be_bytes());
    put(&mut out, iv);
    put(&mut out, &ciphertext);
    out
}

/// The public-key file of `key`: its HS_PUBKEY value data.
pub(super) fn public_file(key: &PublicKey) -> Result<Vec<u8>, KeyFileError> {
    let key = usable(key.clone())?;
    key.encode()
        .map(|b| b.to_vec())
        .map_err(|_| KeyFileError::Unsupported("the public key does not encode"))
}

/// Whether `bytes` start as the reference's private-key file: the `int4` of a scheme it
/// defines (0 to 4).
pub(super) fn private_scheme(bytes: &[u8]) -> bool {
    matches!(bytes.get(..4), Some([0, 0, 0, 0..=4]))
}

/// Whether `bytes` start as the reference's public-key file: `int4 11`, the length of
/// `RSA_PUB_KEY` and `DSA_PUB_KEY` (no scheme has that number).
pub(super) fn public_scheme(bytes: &[u8]) -> bool {
    bytes.get(..4) == Some(&[0, 0, 0, 11])
}

/// Reads a reference key file: a public one (`int4 11 ‖ "RSA_PUB_KEY"` or `"DSA_PUB_KEY"`)
/// or else a private one by its scheme word (0 to 4). Also says whether it was encrypted.
pub(super) fn read(
    bytes: &[u8],
    passphrase: Option<&[u8]>,
) -> Result<(KeyMaterial, bool), KeyFileError> {
    if public_scheme(bytes) {
        let key = usable(PublicKey::decode(bytes)?)?;
        return Ok((KeyMaterial::Public(key), false));
    }
    let encrypted = bytes.get(..4).is_some_and(|s| s != [0, 0, 0, 1]);
    let key = match passphrase {
        Some(p) => PrivateKey::from_reference_file_with_passphrase(bytes, p)?,
        None => PrivateKey::from_reference_file(bytes)?,
    };
    Ok((KeyMaterial::Private(key), encrypted))
}
