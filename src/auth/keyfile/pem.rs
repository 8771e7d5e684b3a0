//! PEM: PKCS#8 private keys (`PRIVATE KEY`; `ENCRYPTED PRIVATE KEY`, PBES2 of RFC 8018) and
//! SubjectPublicKeyInfo public keys (`PUBLIC KEY`), as OpenSSL and the JDK write them.
//!
//! Encrypted PKCS#8 is written with PBKDF2-HMAC-SHA-256 ([`PKCS8_PBKDF2_ITERATIONS`]
//! rounds, a random 16-byte salt) and AES-256-CBC (a random IV), what `openssl pkcs8
//! -topk8 -v2 aes-256-cbc` writes; it is read with PBKDF2 (HMAC-SHA-1 or SHA-2) or scrypt
//! and any AES-CBC, within bounds on the work asked (PBKDF2 rounds at most
//! [`MAX_PKCS8_PBKDF2_ITERATIONS`], scrypt memory at most 128 MiB, what the RustCrypto `pkcs8` crate's default asks; OpenSSL's asks 16 MiB).

use pkcs8::der::pem::{LineEnding, PemLabel};
use pkcs8::pkcs5::pbes2;
use pkcs8::spki::SubjectPublicKeyInfoRef;
use pkcs8::{
    Document, EncodePrivateKey, EncodePublicKey, EncryptedPrivateKeyInfo, PrivateKeyInfo,
    SecretDocument,
};
use rand::RngCore;
use zeroize::Zeroizing;

use super::super::error::KeyFileError;
use super::super::keys::{dsa_parameters_checked, dsa_public_key, PrivateKey};
use super::usable;
use crate::wire::PublicKey;

/// PBKDF2-HMAC-SHA-256 rounds of the encrypted PKCS#8 files written (OWASP's figure for
/// that function, 2023).
pub const PKCS8_PBKDF2_ITERATIONS: u32 = 600_000;
/// The most PBKDF2 rounds an encrypted PKCS#8 file may ask for.
pub const MAX_PKCS8_PBKDF2_ITERATIONS: u32 = 10_000_000;
/// The most memory (bytes) an scrypt-encrypted PKCS#8 file may ask for: 128 · r · N.
const MAX_SCRYPT_MEMORY: u64 = 128 << 20;
/// The most scrypt parallelism (each lane costs the whole memory's time again).
const MAX_SCRYPT_LANES: u16 = 16;

/// The first `… PRIVATE KEY` block of a PEM file that may hold other blocks too (a
/// certificate beside its key, as pyhandle's `certificate_and_key` file).
pub(super) fn private_key_block(pem: &[u8]) -> Option<&[u8]> {
    block_where(pem, |label| label.ends_with(b"PRIVATE KEY"))
}

/// The first block labelled `label` (`"CERTIFICATE"`, `"PRIVATE KEY"`, ...) of a PEM file
/// that may hold other blocks too, from its `BEGIN` line to the end of its `END` line;
/// `None` when there is no such whole block.
///
/// ```
/// use handle_resolver::auth::pem_block;
///
/// let file = b"-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n\
///              -----BEGIN CERTIFICATE-----\nAQ==\n-----END CERTIFICATE-----\n";
/// let cert = pem_block(file, "CERTIFICATE").unwrap();
/// assert_eq!(cert, b"-----BEGIN CERTIFICATE-----\nAQ==\n-----END CERTIFICATE-----");
/// assert_eq!(pem_block(file, "PUBLIC KEY"), None);
/// ```
pub fn pem_block<'a>(pem: &'a [u8], label: &str) -> Option<&'a [u8]> {
    block_where(pem, |l| l == label.as_bytes())
}

fn block_where(pem: &[u8], wanted: impl Fn(&[u8]) -> bool) -> Option<&[u8]> {
    const BEGIN: &[u8] = b"-----BEGIN ";
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let mut at = 0;
    while let Some(begin) = find(pem.get(at..)?, BEGIN).map(|b| b + at) {
        let label_at = begin + BEGIN.len();
        let label_len = find(pem.get(label_at..)?, b"-----")?;
        let label = pem.get(label_at..label_at + label_len)?;
        if wanted(label) {
            let end_line = [b"-----END ".as_slice(), label, b"-----"].concat();
            let end = find(pem.get(label_at..)?, &end_line)? + label_at + end_line.len();
            return pem.get(begin..end);
        }
        at = label_at + label_len;
    }
    None
}

/// The label of a PEM document (`-----BEGIN <label>-----` on its first line), if `bytes`
/// start with one.
pub(super) fn label(bytes: &[u8]) -> Option<&str> {
    let rest = bytes.strip_prefix(b"-----BEGIN ")?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    let line = rest.get(..end)?;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    std::str::from_utf8(line.strip_suffix(b"-----")?).ok()
}

/// PEM bytes as text, leading white space skipped; `error` names the format if they are
/// not text.
pub(super) fn text(bytes: &[u8], error: fn(String) -> KeyFileError) -> Result<&str, KeyFileError> {
    std::str::from_utf8(bytes.trim_ascii_start()).map_err(|_| error("PEM is not text".into()))
}

impl PrivateKey {
    /// Reads a PKCS#8 PEM private key (RSA or DSA); an encrypted one
    /// (`ENCRYPTED PRIVATE KEY`) is [`KeyFileError::Pkcs8NeedsPassphrase`].
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyFileError> {
        pkcs8_pem(pem, None)
    }

    /// Reads a PKCS#8 PEM private key, decrypting an `ENCRYPTED PRIVATE KEY` (PBES2:
    /// PBKDF2 with HMAC-SHA-1 or SHA-2, or scrypt; AES-CBC) with `passphrase`; an
    /// unencrypted one ignores the passphrase.
    pub fn from_pkcs8_pem_with_passphrase(
        pem: &str,
        passphrase: &[u8],
    ) -> Result<Self, KeyFileError> {
        pkcs8_pem(pem, Some(passphrase))
    }
}

/// Reads a PKCS#8 PEM, encrypted or not.
pub(super) fn pkcs8_pem(pem: &str, passphrase: Option<&[u8]>) -> Result<PrivateKey, KeyFileError> {
    let pem = pem.trim_start();
    match label(pem.as_bytes()) {
        Some("PRIVATE KEY") => {
            let (_, doc) =
                SecretDocument::from_pem(pem).map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
            PrivateKey::from_pkcs8_der(doc.as_bytes())
        }
        Some("ENCRYPTED PRIVATE KEY") => {
            let passphrase = passphrase.ok_or(KeyFileError::Pkcs8NeedsPassphrase)?;
            let (_, doc) =
                Document::from_pem(pem).map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
            let info = EncryptedPrivateKeyInfo::try_from(doc.as_bytes())
                .map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
            decrypt(&info, passphrase)
        }
        Some(other) => Err(KeyFileError::Pkcs8(format!(
            "PEM label {other:?}; PKCS#8 is \"PRIVATE KEY\" or \"ENCRYPTED PRIVATE KEY\""
        ))),
        None => Err(KeyFileError::Pkcs8("no PEM header".into())),
    }
}

/// Checks the work an encrypted PKCS#8 asks for, then decrypts it.
fn decrypt(
    info: &EncryptedPrivateKeyInfo<'_>,
    passphrase: &[u8],
) -> Result<PrivateKey, KeyFileError> {
    let params = info
        .encryption_algorithm
        .pbes2()
        .ok_or(KeyFileError::EncryptionParameters(
            "PBES1 (DES, RC2) schemes",
        ))?;
    if let Some(p) = params.kdf.pbkdf2() {
        if p.iteration_count > MAX_PKCS8_PBKDF2_ITERATIONS {
            return Err(KeyFileError::EncryptionParameters("PBKDF2 iteration count"));
        }
    } else if let Some(s) = params.kdf.scrypt() {
        let memory = 128u64
            .saturating_mul(u64::from(s.block_size))
            .saturating_mul(s.cost_parameter);
        if memory > MAX_SCRYPT_MEMORY || s.parallelization > MAX_SCRYPT_LANES {
            return Err(KeyFileError::EncryptionParameters("scrypt cost"));
        }
    }
    let doc = info.decrypt(passphrase).map_err(|e| match e {
        // pkcs5 0.7 reports bad padding as `EncryptFailed`.
        pkcs8::Error::EncryptedPrivateKey(
            pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed,
        ) => KeyFileError::WrongPassphrase,
        pkcs8::Error::EncryptedPrivateKey(_) => {
            KeyFileError::EncryptionParameters("an encryption scheme of PBES2 not supported")
        }
        // The padding came out right by chance, the rest is no DER.
        _ => KeyFileError::WrongPassphrase,
    })?;
    // Under a wrong passphrase the padding can look right by chance; then the decrypted bytes
    // are no PKCS#8.
    PrivateKey::from_pkcs8_der(doc.as_bytes()).map_err(|e| match e {
        KeyFileError::Pkcs8(_) => KeyFileError::WrongPassphrase,
        other => other,
    })
}

impl PrivateKey {
    /// The key as PKCS#8 DER (`PrivateKeyInfo`).
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        let doc = match self {
            PrivateKey::Rsa(k) => k.to_pkcs8_der(),
            PrivateKey::Dsa(k) => k.to_pkcs8_der(),
        }
        .map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
        Ok(Zeroizing::new(doc.as_bytes().to_vec()))
    }

    /// The key as PKCS#8 PEM: `PRIVATE KEY`, or with a passphrase `ENCRYPTED PRIVATE KEY`
    /// (PBES2: PBKDF2-HMAC-SHA-256 of the passphrase's bytes, [`PKCS8_PBKDF2_ITERATIONS`]
    /// rounds, AES-256-CBC), which OpenSSL, Python's `cryptography` and the JDK read.
    pub fn to_pkcs8_pem(
        &self,
        passphrase: Option<&[u8]>,
    ) -> Result<Zeroizing<String>, KeyFileError> {
        let der = self.to_pkcs8_der()?;
        let pkcs8 = |e: pkcs8::Error| KeyFileError::Pkcs8(e.to_string());
        match passphrase {
            None => {
                let doc = SecretDocument::try_from(der.as_slice()).map_err(|e| pkcs8(e.into()))?;
                doc.to_pem(PrivateKeyInfo::PEM_LABEL, LineEnding::LF)
                    .map_err(|e| pkcs8(e.into()))
            }
            Some(passphrase) => {
                let mut salt = [0u8; 16];
                let mut iv = [0u8; 16];
                rand::rngs::OsRng.fill_bytes(&mut salt);
                rand::rngs::OsRng.fill_bytes(&mut iv);
                let params =
                    pbes2::Parameters::pbkdf2_sha256_aes256cbc(PKCS8_PBKDF2_ITERATIONS, &salt, &iv)
                        .map_err(|e| pkcs8(e.into()))?;
                let info = PrivateKeyInfo::try_from(der.as_slice()).map_err(pkcs8)?;
                let doc = info
                    .encrypt_with_params(params, passphrase)
                    .map_err(pkcs8)?;
                doc.to_pem(EncryptedPrivateKeyInfo::PEM_LABEL, LineEnding::LF)
                    .map_err(|e| pkcs8(e.into()))
            }
        }
    }
}

/// Reads a SubjectPublicKeyInfo PEM (`PUBLIC KEY`) of an RSA or DSA key.
pub(super) fn spki_from_pem(pem: &str) -> Result<PublicKey, KeyFileError> {
    let spki_err = |e: &dyn std::fmt::Display| KeyFileError::Spki(e.to_string());
    match label(pem.as_bytes()) {
        Some("PUBLIC KEY") => {}
        Some(other) => {
            return Err(KeyFileError::Spki(format!(
                "PEM label {other:?}; SubjectPublicKeyInfo is \"PUBLIC KEY\""
            )))
        }
        None => return Err(KeyFileError::Spki("no PEM header".into())),
    }
    let (_, doc) = Document::from_pem(pem).map_err(|e| spki_err(&e))?;
    let spki = SubjectPublicKeyInfoRef::try_from(doc.as_bytes()).map_err(|e| spki_err(&e))?;
    let key = if spki.algorithm.oid == rsa::pkcs1::ALGORITHM_OID {
        PublicKey::from_rsa(&rsa::RsaPublicKey::try_from(spki).map_err(|e| spki_err(&e))?)
    } else if spki.algorithm.oid == dsa::OID {
        dsa_parameters_checked(spki.algorithm.parameters_any().ok())?;
        dsa_public_key(&dsa::VerifyingKey::try_from(spki).map_err(|e| spki_err(&e))?)
    } else {
        return Err(KeyFileError::Spki(format!(
            "algorithm {}: neither RSA nor DSA",
            spki.algorithm.oid
        )));
    };
    usable(key)
}

/// An RSA or DSA public key as SubjectPublicKeyInfo PEM.
pub(super) fn spki_to_pem(key: &PublicKey) -> Result<String, KeyFileError> {
    let key = usable(key.clone())?;
    let pem = match &key {
        PublicKey::Dsa(_) => key
            .to_dsa()
            .map_err(|_| KeyFileError::InvalidKey("DSA"))?
            .to_public_key_pem(LineEnding::LF),
        _ => key
            .to_rsa()
            .map_err(|_| KeyFileError::InvalidKey("RSA"))?
            .to_public_key_pem(LineEnding::LF),
    };
    pem.map_err(|e| KeyFileError::Spki(e.to_string()))
}
