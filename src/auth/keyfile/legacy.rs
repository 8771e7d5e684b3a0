//! `PBEWithSHA1AndDESede`: the encrypted PKCS#8 (`ENCRYPTED PRIVATE KEY`) that the
//! reference's `hdl-convert-key -crypt` writes (`KeyConverter.toPkcs8EncryptedPem`, through
//! the JDK) and the only encrypted form it reads on a JDK without PBES2 (JDK 17).
//!
//! The scheme is PKCS#12's password-based encryption `pbeWithSHAAnd3-KeyTripleDES-CBC`
//! (RFC 7292 Appendix C, OID 1.2.840.113549.1.12.1.3), parameters `pkcs-12PbeParams ::=
//! SEQUENCE { salt OCTET STRING, iterations INTEGER }`: a 24-byte three-key 3DES key (ID 1)
//! and an 8-byte IV (ID 2), each derived by the RFC 7292 Appendix B.2 function with SHA-1
//! from the passphrase as a BMPString (B.1: big-endian UTF-16 with two zero bytes after it),
//! the salt and the iterations; then 3DES-CBC with PKCS#5 padding of the `PrivateKeyInfo`.
//! The derivation is the `pkcs12` crate's (RustCrypto), the cipher the `des` crate's.
//!
//! Legacy cryptography (SHA-1, 3DES): written only when asked for
//! ([`Pkcs8Encryption::LegacyPkcs12TripleDes`](super::Pkcs8Encryption)), for the reference's
//! tools; PBES2 with AES-256 is the default.

use ::pkcs12::kdf::{derive_key, Pkcs12KeyType};
use ::pkcs12::pbe_params::{EncryptedPrivateKeyInfo, Pkcs12PbeParams};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use des::TdesEde3;
use pkcs8::der::asn1::OctetString;
use pkcs8::der::{Any, Decode, Encode};
use pkcs8::spki::AlgorithmIdentifierOwned;
use pkcs8::ObjectIdentifier;
use rand::RngCore;
use sha1::Sha1;
use zeroize::Zeroizing;

use super::super::error::KeyFileError;
use super::super::keys::PrivateKey;
use super::MAX_PKCS8_PBKDF2_ITERATIONS;

/// `pbeWithSHAAnd3-KeyTripleDES-CBC` (RFC 7292 Appendix C): the JDK's `PBEWithSHA1AndDESede`.
pub(super) const OID: ObjectIdentifier = ::pkcs12::PKCS_12_PBE_WITH_SHAAND3_KEY_TRIPLE_DES_CBC;
/// The arc of PKCS#12's PBE schemes (1.2.840.113549.1.12.1): RC4, RC2 and two-key 3DES
/// besides [`OID`], none of which is read.
const PKCS12_PBE_ARC: &str = "1.2.840.113549.1.12.1.";

/// The iterations of the key derivation in the files written: 600,000 (KeyConverter writes
/// 10,000). Each derived byte string costs that many SHA-1 compressions per 20 bytes: three
/// times the count in all (the key's 24 bytes, the IV's 8), about what the PBKDF2-HMAC-SHA-256
/// of the default PBES2 files costs; the reference reads any count.
pub const PKCS12_PBE_ITERATIONS: u32 = 600_000;
/// The salt of the files written: 16 random bytes, as KeyConverter's.
const SALT_LEN: usize = 16;
/// Three-key 3DES: 24 bytes of key, a block (and IV) of 8.
const KEY_LEN: usize = 24;
const BLOCK_LEN: usize = 8;

/// An `EncryptedPrivateKeyInfo` under `PBEWithSHA1AndDESede`, read but not decrypted.
pub(super) struct Legacy {
    salt: Vec<u8>,
    iterations: u32,
    ciphertext: Vec<u8>,
}

/// Reads `der` (an `EncryptedPrivateKeyInfo`) if it is encrypted with a PKCS#12 PBE scheme:
/// `None` for any other scheme (PBES1, PBES2: `pkcs8`'s to read), an error for a PKCS#12
/// scheme other than `PBEWithSHA1AndDESede` or parameters out of bounds.
pub(super) fn read(der: &[u8]) -> Result<Option<Legacy>, KeyFileError> {
    let Ok(info) = EncryptedPrivateKeyInfo::from_der(der) else {
        return Ok(None);
    };
    let oid = info.encryption_algorithm.oid;
    if oid != OID {
        return if oid.to_string().starts_with(PKCS12_PBE_ARC) {
            Err(KeyFileError::EncryptionParameters(
                "a PKCS#12 scheme other than PBEWithSHA1AndDESede (RC2, RC4, two-key 3DES)",
            ))
        } else {
            Ok(None)
        };
    }
    let params = info
        .encryption_algorithm
        .parameters
        .as_ref()
        .ok_or_else(|| KeyFileError::Pkcs8("PBEWithSHA1AndDESede without parameters".into()))?
        .decode_as::<Pkcs12PbeParams>()
        .map_err(|e| KeyFileError::Pkcs8(format!("PBEWithSHA1AndDESede parameters: {e}")))?;
    let iterations = u32::try_from(params.iterations)
        .ok()
        .filter(|n| (1..=MAX_PKCS8_PBKDF2_ITERATIONS).contains(n))
        .ok_or(KeyFileError::EncryptionParameters(
            "PBEWithSHA1AndDESede iteration count",
        ))?;
    let ciphertext = info.encrypted_data.into_bytes();
    if ciphertext.is_empty() || ciphertext.len() % BLOCK_LEN != 0 {
        return Err(KeyFileError::Pkcs8(
            "PBEWithSHA1AndDESede data: not a whole number of 3DES blocks".into(),
        ));
    }
    Ok(Some(Legacy {
        salt: params.salt.into_bytes(),
        iterations,
        ciphertext,
    }))
}

impl Legacy {
    /// Decrypts the key with `passphrase`.
    pub(super) fn decrypt(&self, passphrase: &[u8]) -> Result<PrivateKey, KeyFileError> {
        let (key, iv) = key_and_iv(passphrase, &self.salt, self.iterations);
        let plain = cbc::Decryptor::<TdesEde3>::new_from_slices(&key, &iv)
            .map_err(|_| KeyFileError::InvalidKey("3DES key"))?
            .decrypt_padded_vec_mut::<Pkcs7>(&self.ciphertext)
            .map(Zeroizing::new)
            .map_err(|_| KeyFileError::WrongPassphrase)?;
        // Under a wrong passphrase the padding can look right by chance; then the decrypted
        // bytes are no PKCS#8.
        PrivateKey::from_pkcs8_der(&plain).map_err(|e| match e {
            KeyFileError::Pkcs8(_) => KeyFileError::WrongPassphrase,
            other => other,
        })
    }
}

/// `PrivateKeyInfo` DER encrypted under `passphrase` as `PBEWithSHA1AndDESede`
/// ([`PKCS12_PBE_ITERATIONS`], a random 16-byte salt): the `EncryptedPrivateKeyInfo` DER.
/// The passphrase must be ASCII, the only passphrases the JDK's `PBEWithSHA1AndDESede`
/// (and so the reference) takes.
pub(super) fn encrypt(pkcs8_der: &[u8], passphrase: &[u8]) -> Result<Vec<u8>, KeyFileError> {
    if !passphrase.is_ascii() {
        return Err(KeyFileError::Unsupported(
            "PBEWithSHA1AndDESede with a passphrase that is not ASCII: the JDK, and so the \
             reference, takes ASCII passphrases only",
        ));
    }
    let mut salt = [0u8; SALT_LEN];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    encrypt_with(pkcs8_der, passphrase, &salt, PKCS12_PBE_ITERATIONS)
}

/// [`encrypt`] with the salt and iterations given.
pub(super) fn encrypt_with(
    pkcs8_der: &[u8],
    passphrase: &[u8],
    salt: &[u8],
    iterations: u32,
) -> Result<Vec<u8>, KeyFileError> {
    let der_err = |e: pkcs8::der::Error| KeyFileError::Pkcs8(e.to_string());
    let (key, iv) = key_and_iv(passphrase, salt, iterations);
    let ciphertext = cbc::Encryptor::<TdesEde3>::new_from_slices(&key, &iv)
        .map_err(|_| KeyFileError::InvalidKey("3DES key"))?
        .encrypt_padded_vec_mut::<Pkcs7>(pkcs8_der);
    let params = Pkcs12PbeParams {
        salt: OctetString::new(salt).map_err(der_err)?,
        iterations: i32::try_from(iterations)
            .map_err(|_| KeyFileError::EncryptionParameters("iteration count"))?,
    };
    let info = EncryptedPrivateKeyInfo {
        encryption_algorithm: AlgorithmIdentifierOwned {
            oid: OID,
            parameters: Some(Any::encode_from(&params).map_err(der_err)?),
        },
        encrypted_data: OctetString::new(ciphertext).map_err(der_err)?,
    };
    info.to_der().map_err(der_err)
}

/// The 3DES key and IV of `passphrase`, `salt` and `iterations` (RFC 7292 B.2 with SHA-1,
/// IDs 1 and 2).
fn key_and_iv(
    passphrase: &[u8],
    salt: &[u8],
    iterations: u32,
) -> (Zeroizing<Vec<u8>>, Zeroizing<Vec<u8>>) {
    let password = bmp_password(passphrase);
    // Bounded by MAX_PKCS8_PBKDF2_ITERATIONS when read, by the caller's constant when written.
    let rounds = i32::try_from(iterations).unwrap_or(i32::MAX);
    let derive = |id, len| Zeroizing::new(derive_key::<Sha1>(&password, salt, id, rounds, len));
    (
        derive(Pkcs12KeyType::EncryptionKey, KEY_LEN),
        derive(Pkcs12KeyType::Iv, BLOCK_LEN),
    )
}

/// The passphrase as PKCS#12 takes it (RFC 7292 B.1): a BMPString, big-endian UTF-16 of the
/// passphrase's text, then two zero bytes. The JDK turns each char of its `char[]` into two
/// bytes this way (UTF-16, so a character beyond the BMP is its surrogate pair), and so does
/// OpenSSL with UTF-8 text; bytes that are not UTF-8 are taken one byte a character
/// (Latin-1), as OpenSSL does with them.
pub(super) fn bmp_password(passphrase: &[u8]) -> Zeroizing<Vec<u8>> {
    // Each UTF-8 byte gives at most two bytes of UTF-16: sized once, no copy left behind.
    let mut out = Zeroizing::new(Vec::with_capacity(2 * passphrase.len() + 2));
    match std::str::from_utf8(passphrase) {
        Ok(text) => {
            for unit in text.encode_utf16() {
                out.extend_from_slice(&unit.to_be_bytes());
            }
        }
        Err(_) => {
            for &b in passphrase {
                out.extend_from_slice(&[0, b]);
            }
        }
    }
    out.extend_from_slice(&[0, 0]);
    out
}
