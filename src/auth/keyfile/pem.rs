//! PEM: PKCS#8 private keys (`PRIVATE KEY`; `ENCRYPTED PRIVATE KEY`, PBES2 of RFC 8018) and
//! SubjectPublicKeyInfo public keys (`PUBLIC KEY`), as OpenSSL and the JDK write them.
//!
//! Encrypted PKCS#8 is written with PBKDF2-HMAC-SHA-256 ([`PKCS8_PBKDF2_ITERATIONS`]
//! rounds, a random 16-byte salt) and AES-256-CBC (a random IV), what `openssl pkcs8
//! -topk8 -v2 aes-256-cbc` writes; it is read with PBKDF2 (HMAC-SHA-1 or SHA-2) or scrypt
//! and any AES-CBC, within bounds on the work asked (PBKDF2 rounds at most
//! [`MAX_PKCS8_PBKDF2_ITERATIONS`], scrypt memory at most 128 MiB, what the RustCrypto `pkcs8` crate's default asks; OpenSSL's asks 16 MiB).
//! The reference's `PBEWithSHA1AndDESede` is read and, on request, written too (`legacy`).
//!
//! Reading is lax about the Base64 line width and the line ends (`decode`).

use pkcs8::der::pem::{self as pem_rfc7468, LineEnding, PemLabel};
use pkcs8::pkcs5::pbes2;
use pkcs8::spki::SubjectPublicKeyInfoRef;
use pkcs8::{
    EncodePrivateKey, EncodePublicKey, EncryptedPrivateKeyInfo, PrivateKeyInfo, SecretDocument,
};
use rand::RngCore;
use zeroize::Zeroizing;

use super::super::error::KeyFileError;
use super::super::keys::{dsa_parameters_checked, dsa_public_key, PrivateKey};
use super::MAX_PKCS8_PBKDF2_ITERATIONS;
use super::{legacy, usable, Pkcs8Encryption};
use crate::wire::PublicKey;

/// PBKDF2-HMAC-SHA-256 rounds of the encrypted PKCS#8 files written (OWASP's figure for
/// that function, 2023).
pub const PKCS8_PBKDF2_ITERATIONS: u32 = 600_000;
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
    let end = rest.iter().position(|&b| b == b'\n' || b == b'\r')?;
    std::str::from_utf8(rest.get(..end)?.strip_suffix(b"-----")?).ok()
}

/// Decodes a PEM document: its label and its bytes (zeroized when dropped, and decoded into
/// a buffer sized once, so that no copy is left behind).
///
/// Lax where RFC 7468 §2 asks parsers to be: the Base64 lines may have any one width, the
/// last line shorter (OpenSSL and the JDK write 64 characters; commons-codec's
/// `Base64.encodeBase64(data, true)`, which the reference's `hdl-convert-key` writes its PEM
/// with, 76), and end in LF, CRLF or CR. This is pem-rfc7468's decoder (the one under
/// `pkcs8`), given the width of the document's first Base64 line instead of its default 64;
/// lines of unequal widths are refused as that decoder refuses them.
pub(super) fn decode(pem: &str) -> Result<(&str, Zeroizing<Vec<u8>>), pem_rfc7468::Error> {
    let bytes = pem.as_bytes();
    let width = base64_width(bytes).unwrap_or(pem_rfc7468::BASE64_WRAP_WIDTH);
    let mut decoder = pem_rfc7468::Decoder::new_wrapped(bytes, width)?;
    let label = decoder.type_label();
    let mut out = Zeroizing::new(vec![0u8; decoder.remaining_len()]);
    decoder.decode(&mut out)?;
    if !decoder.is_finished() {
        return Err(pem_rfc7468::Error::Length);
    }
    Ok((label, out))
}

/// The length of the first line after a PEM document's `-----BEGIN …-----` line (its line
/// end, LF, CRLF or CR, left out).
fn base64_width(pem: &[u8]) -> Option<usize> {
    let eol = |b: &u8| *b == b'\n' || *b == b'\r';
    let begin = pem.windows(11).position(|w| w == b"-----BEGIN ")?;
    let rest = pem.get(begin..)?;
    let rest = rest.get(rest.iter().position(eol)?..)?;
    let rest = rest
        .strip_prefix(b"\r\n")
        .or_else(|| rest.get(1..))
        .unwrap_or_default();
    Some(rest.iter().position(eol).unwrap_or(rest.len()))
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
    /// PBKDF2 with HMAC-SHA-1 or SHA-2, or scrypt; AES-CBC; or the reference's
    /// `PBEWithSHA1AndDESede`, see [`Pkcs8Encryption::LegacyPkcs12TripleDes`]) with
    /// `passphrase`; an unencrypted one ignores the passphrase.
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
            let (_, der) = decode(pem).map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
            PrivateKey::from_pkcs8_der(&der)
        }
        Some("ENCRYPTED PRIVATE KEY") => {
            let passphrase = passphrase.ok_or(KeyFileError::Pkcs8NeedsPassphrase)?;
            let (_, der) = decode(pem).map_err(|e| KeyFileError::Pkcs8(e.to_string()))?;
            if let Some(legacy) = legacy::read(&der)? {
                return legacy.decrypt(passphrase);
            }
            let info = EncryptedPrivateKeyInfo::try_from(der.as_slice())
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
    /// rounds, AES-256-CBC), which OpenSSL and Python's `cryptography` read, and the
    /// reference's tools on JDK 17 do not (for them, [`PrivateKey::to_pkcs8_pem_with`] and
    /// [`Pkcs8Encryption::LegacyPkcs12TripleDes`]).
    pub fn to_pkcs8_pem(
        &self,
        passphrase: Option<&[u8]>,
    ) -> Result<Zeroizing<String>, KeyFileError> {
        self.to_pkcs8_pem_with(passphrase, Pkcs8Encryption::default())
    }

    /// The key as PKCS#8 PEM, encrypted under `passphrase` as `encryption` says. An
    /// encryption other than the default without a passphrase is an error
    /// ([`KeyFileError::Unsupported`]: a file asked for encrypted is never written in the
    /// clear), as is [`Pkcs8Encryption::LegacyPkcs12TripleDes`] with a passphrase that is not
    /// ASCII (the JDK's `PBEWithSHA1AndDESede` takes ASCII only).
    ///
    /// ```
    /// use handle_resolver::auth::{KeySpec, Pkcs8Encryption, PrivateKey};
    ///
    /// let key = PrivateKey::generate(KeySpec::dsa(1024, None)?)?;
    /// let legacy = Pkcs8Encryption::LegacyPkcs12TripleDes;
    /// let pem = key.to_pkcs8_pem_with(Some(b"ascii passphrase"), legacy)?;
    /// assert!(pem.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"));
    /// let back = PrivateKey::from_pkcs8_pem_with_passphrase(&pem, b"ascii passphrase")?;
    /// assert_eq!(back.public_key(), key.public_key());
    /// assert!(key.to_pkcs8_pem_with(None, legacy).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_pkcs8_pem_with(
        &self,
        passphrase: Option<&[u8]>,
        encryption: Pkcs8Encryption,
    ) -> Result<Zeroizing<String>, KeyFileError> {
        let der = self.to_pkcs8_der()?;
        let pkcs8 = |e: pkcs8::Error| KeyFileError::Pkcs8(e.to_string());
        match (passphrase, encryption) {
            (None, Pkcs8Encryption::Pbes2) => {
                let doc = SecretDocument::try_from(der.as_slice()).map_err(|e| pkcs8(e.into()))?;
                doc.to_pem(PrivateKeyInfo::PEM_LABEL, LineEnding::LF)
                    .map_err(|e| pkcs8(e.into()))
            }
            (None, _) => Err(KeyFileError::Unsupported(
                "an encrypted PKCS#8 file without a passphrase",
            )),
            (Some(passphrase), Pkcs8Encryption::LegacyPkcs12TripleDes) => {
                let der = legacy::encrypt(&der, passphrase)?;
                pkcs8::der::pem::encode_string(
                    EncryptedPrivateKeyInfo::PEM_LABEL,
                    LineEnding::LF,
                    &der,
                )
                .map(Zeroizing::new)
                .map_err(|e| pkcs8(pkcs8::der::Error::from(e).into()))
            }
            (Some(passphrase), Pkcs8Encryption::Pbes2) => {
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
    let (_, der) = decode(pem).map_err(|e| spki_err(&e))?;
    let spki = SubjectPublicKeyInfoRef::try_from(der.as_slice()).map_err(|e| spki_err(&e))?;
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
