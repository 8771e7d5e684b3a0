//! Key files made and converted: what the reference distribution's `hdl-keygen` and
//! `hdl-convert-key` do, plus the formats other tools read (`admin keygen`, `admin
//! convert-key`). Sans-IO: bytes in, bytes out; reading and writing files is the caller's.
//!
//! - [`PrivateKey::generate`] with a [`KeySpec`]: RSA (2048, 3072, 4096 bits) or DSA
//!   (L/N 1024/160, 2048/224, 2048/256, 3072/256);
//! - [`KeyFormat::Reference`]: the reference library's private-key file (`int4 scheme ‖ key
//!   encoding`, unencrypted or scheme 4, PBKDF2-HMAC-SHA1 + AES-128-CBC under a passphrase,
//!   as its `Util.encrypt` writes it) and public-key file (the HS_PUBKEY value data, which
//!   goes into an HS_PUBKEY value as is);
//! - [`KeyFormat::Pkcs8Pem`]: `PRIVATE KEY`, or `ENCRYPTED PRIVATE KEY` under a passphrase
//!   (PBES2: PBKDF2-HMAC-SHA-256, AES-256-CBC; or, asked for with
//!   [`Pkcs8Encryption::LegacyPkcs12TripleDes`], the `PBEWithSHA1AndDESede` of the
//!   reference's `hdl-convert-key -crypt`; both read);
//! - [`KeyFormat::SpkiPem`]: `PUBLIC KEY` (SubjectPublicKeyInfo);
//! - [`KeyFormat::Jwk`]: RSA as RFC 7518 defines it, DSA in the reference library's own form
//!   (`GsonUtility`: `{"kty": "DSA", "y"|"x", "p", "q", "g"}`; a private key carries no `y`).
//!
//! PEM is read with any one Base64 line width and LF, CRLF or CR line ends (RFC 7468 §2),
//! so the reference's PEM (CRLF, 76 characters) reads as OpenSSL's (LF, 64) does; it is
//! written as OpenSSL writes it.
//!
//! [`KeyMaterial`] is a key read from any of them ([`KeyMaterial::read`], the format
//! detected when not given) and written to any ([`KeyMaterial::write`]). Reading never
//! panics, bounds what it allocates and what it computes by the bytes given and the sizes
//! of real keys, and fails with a [`KeyFileError`]. Private material is zeroized when
//! dropped.
//!
//! ```
//! use handle_resolver::auth::{KeyFormat, KeyMaterial, PrivateKey, KeySpec};
//! use handle_resolver::wire::PublicKey;
//!
//! // The captures' DSA-1024 test key, as the reference library wrote it.
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/reference/captures-auth/keys/");
//! let file = std::fs::read(format!("{dir}dsa1024_privkey.bin"))?;
//! let read = KeyMaterial::read(&file, None, None)?;
//! assert_eq!(read.format, KeyFormat::Reference);
//!
//! // To PKCS#8 PEM encrypted with a passphrase, and back.
//! let pem = read.key.write(KeyFormat::Pkcs8Pem, Some(b"correct horse"))?;
//! assert!(pem.starts_with(b"-----BEGIN ENCRYPTED PRIVATE KEY-----"));
//! let back = KeyMaterial::read(&pem, None, Some(b"correct horse"))?;
//! assert_eq!(back.key.public_key(), read.key.public_key());
//!
//! // The reference's private file written back is the file read; the public file of its
//! // public part is the HS_PUBKEY value's data.
//! assert_eq!(*read.key.write(KeyFormat::Reference, None)?, file);
//! let public = read.key.to_public().write(KeyFormat::Reference, None)?;
//! assert_eq!(std::fs::read(format!("{dir}dsa1024_pubkey.bin"))?, *public);
//! assert_eq!(PublicKey::decode(&public)?, read.key.public_key());
//!
//! // A new key: RSA-2048, the reference's default.
//! let key = KeyMaterial::Private(PrivateKey::generate(KeySpec::DEFAULT_RSA)?);
//! let jwk = key.write(KeyFormat::Jwk, None)?;
//! assert!(KeyMaterial::read(&jwk, None, None)?.key.is_private());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod generate;
mod jwk;
mod legacy;
mod pem;
mod reference;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use zeroize::Zeroizing;

use super::error::KeyFileError;
use super::keys::{dsa_q_size, PrivateKey, KEY_FILE_NOT_ENCRYPTED, MAX_COMPONENT, MAX_KEY_FILE};
use crate::wire::PublicKey;

pub use generate::KeySpec;
pub use legacy::PKCS12_PBE_ITERATIONS;
pub use pem::{pem_block, PKCS8_PBKDF2_ITERATIONS};

/// The most PBKDF2 (PBES2) or PKCS#12-KDF rounds an encrypted PKCS#8 file may ask for, read
/// in `pem.rs` and `legacy.rs` alike (here, so that neither imports the other for it).
pub const MAX_PKCS8_PBKDF2_ITERATIONS: u32 = 10_000_000;

/// How a private key written as PKCS#8 PEM under a passphrase is encrypted. Either is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Pkcs8Encryption {
    /// PBES2 (RFC 8018): PBKDF2-HMAC-SHA-256 ([`PKCS8_PBKDF2_ITERATIONS`] rounds, a random
    /// 16-byte salt) and AES-256-CBC, what `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes. The
    /// default.
    #[default]
    Pbes2,
    /// The legacy form the reference reads: `PBEWithSHA1AndDESede`, PKCS#12's
    /// `pbeWithSHAAnd3-KeyTripleDES-CBC` (RFC 7292 Appendix B key derivation with SHA-1,
    /// [`PKCS12_PBE_ITERATIONS`] iterations, a random 16-byte salt; three-key 3DES-CBC),
    /// what its `hdl-convert-key -crypt` writes and, on a JDK without PBES2 (17), the only
    /// encrypted PKCS#8 it reads; `openssl pkcs8 -v1 PBE-SHA1-3DES` writes it too. SHA-1 and
    /// 3DES: for the reference's tools only. ASCII passphrases only, as the JDK takes them.
    LegacyPkcs12TripleDes,
}

/// The key file formats read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyFormat {
    /// The reference library's binary files: `*_privkey.bin` (`int4 scheme ‖ key
    /// encoding`) and `*_pubkey.bin` (HS_PUBKEY value data).
    Reference,
    /// PKCS#8 PEM: `PRIVATE KEY` or `ENCRYPTED PRIVATE KEY` (private keys only).
    Pkcs8Pem,
    /// SubjectPublicKeyInfo PEM: `PUBLIC KEY` (the public key only).
    SpkiPem,
    /// JSON Web Key: RSA per RFC 7518, DSA in the reference library's form.
    Jwk,
}

impl KeyFormat {
    /// Every format, in the order of their names.
    pub const ALL: [KeyFormat; 4] = [
        KeyFormat::Reference,
        KeyFormat::Pkcs8Pem,
        KeyFormat::SpkiPem,
        KeyFormat::Jwk,
    ];

    /// The format's name: `reference`, `pkcs8-pem`, `spki-pem`, `jwk`.
    pub fn name(self) -> &'static str {
        match self {
            KeyFormat::Reference => "reference",
            KeyFormat::Pkcs8Pem => "pkcs8-pem",
            KeyFormat::SpkiPem => "spki-pem",
            KeyFormat::Jwk => "jwk",
        }
    }

    /// The format `bytes` look like: PEM by its label (`PRIVATE KEY` and `ENCRYPTED PRIVATE
    /// KEY` are PKCS#8, `PUBLIC KEY` is SPKI), a JSON object is a JWK, and bytes that start
    /// with the `int4` of a reference file (a private file's scheme, 0 to 4, or the length
    /// 11 of a public file's key type) are the reference's. `None` when nothing fits (a text
    /// file that is no key, DER).
    pub fn detect(bytes: &[u8]) -> Option<KeyFormat> {
        let trimmed = bytes.trim_ascii_start();
        if let Some(label) = pem::label(trimmed) {
            return match label {
                "PRIVATE KEY" | "ENCRYPTED PRIVATE KEY" => Some(KeyFormat::Pkcs8Pem),
                "PUBLIC KEY" => Some(KeyFormat::SpkiPem),
                _ => None,
            };
        }
        if trimmed.first() == Some(&b'{') {
            return Some(KeyFormat::Jwk);
        }
        (reference::private_scheme(bytes) || reference::public_scheme(bytes))
            .then_some(KeyFormat::Reference)
    }
}

impl fmt::Display for KeyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`KeyFormat`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown key format {0:?}: reference, pkcs8-pem, spki-pem or jwk")]
pub struct UnknownKeyFormat(pub String);

impl FromStr for KeyFormat {
    type Err = UnknownKeyFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KeyFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownKeyFormat(s.to_string()))
    }
}

/// A key: a private key (which has its public key), or a public key alone.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum KeyMaterial {
    /// A private key.
    Private(PrivateKey),
    /// A public key (RSA or DSA, checked usable when read).
    Public(PublicKey),
}

/// A key as read from a file: the key, the file's format, and whether it was encrypted.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReadKey {
    /// The key.
    pub key: KeyMaterial,
    /// The file's format (detected, or the one given).
    pub format: KeyFormat,
    /// Whether the file was passphrase-encrypted (a passphrase given for a file that is
    /// not was not used).
    pub encrypted: bool,
}

impl KeyMaterial {
    /// Reads a key file in `format`, or in the format [`KeyFormat::detect`] finds. A
    /// passphrase decrypts an encrypted private key (reference scheme 4, encrypted PKCS#8);
    /// an encrypted file without one is [`KeyFileError::NeedsPassphrase`] or
    /// [`KeyFileError::Pkcs8NeedsPassphrase`]. Files over 64 KiB are refused unread.
    pub fn read(
        bytes: &[u8],
        format: Option<KeyFormat>,
        passphrase: Option<&[u8]>,
    ) -> Result<ReadKey, KeyFileError> {
        if bytes.len() > MAX_KEY_FILE {
            return Err(KeyFileError::TooLarge(bytes.len()));
        }
        let format = match format {
            Some(f) => f,
            None => KeyFormat::detect(bytes).ok_or(KeyFileError::UnknownFormat)?,
        };
        let (key, encrypted) = match format {
            KeyFormat::Reference => reference::read(bytes, passphrase)?,
            KeyFormat::Pkcs8Pem => {
                let text = pem::text(bytes, KeyFileError::Pkcs8)?;
                let encrypted = pem::label(text.as_bytes()) == Some("ENCRYPTED PRIVATE KEY");
                (
                    KeyMaterial::Private(pem::pkcs8_pem(text, passphrase)?),
                    encrypted,
                )
            }
            KeyFormat::SpkiPem => (
                KeyMaterial::Public(pem::spki_from_pem(pem::text(bytes, KeyFileError::Spki)?)?),
                false,
            ),
            KeyFormat::Jwk => (jwk::read(bytes)?, false),
        };
        Ok(ReadKey {
            key,
            format,
            encrypted,
        })
    }

    /// Writes the key in `format`, encrypted with `passphrase` where the format encrypts:
    /// the reference's private file (scheme 4) and PKCS#8 PEM. A public key alone cannot be
    /// written as PKCS#8 ([`KeyFileError::NotPrivate`]); a passphrase for an output that is
    /// never encrypted (SPKI, JWK, a public reference file) is
    /// [`KeyFileError::NotEncryptable`], never silently dropped. A private key written as
    /// SPKI PEM gives its public key.
    pub fn write(
        &self,
        format: KeyFormat,
        passphrase: Option<&[u8]>,
    ) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        self.write_with(format, passphrase, Pkcs8Encryption::default())
    }

    /// [`KeyMaterial::write`], a PKCS#8 PEM private key encrypted as `encryption` says. An
    /// encryption other than the default is for a private key written as PKCS#8 PEM under a
    /// passphrase only; asked for anything else it is [`KeyFileError::Unsupported`], never
    /// dropped.
    ///
    /// ```
    /// use handle_resolver::auth::{KeyFormat, KeyMaterial, KeySpec, Pkcs8Encryption, PrivateKey};
    ///
    /// let key = KeyMaterial::Private(PrivateKey::generate(KeySpec::dsa(1024, None)?)?);
    /// let legacy = Pkcs8Encryption::LegacyPkcs12TripleDes;
    /// let pem = key.write_with(KeyFormat::Pkcs8Pem, Some(b"ascii passphrase"), legacy)?;
    /// let back = KeyMaterial::read(&pem, None, Some(b"ascii passphrase"))?;
    /// assert!(back.encrypted);
    /// assert_eq!(back.key.public_key(), key.public_key());
    /// // Not for the reference's own file, nor without a passphrase.
    /// assert!(key.write_with(KeyFormat::Reference, Some(b"x"), legacy).is_err());
    /// assert!(key.write_with(KeyFormat::Pkcs8Pem, None, legacy).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_with(
        &self,
        format: KeyFormat,
        passphrase: Option<&[u8]>,
        encryption: Pkcs8Encryption,
    ) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        if encryption != Pkcs8Encryption::default()
            && !(format == KeyFormat::Pkcs8Pem && self.is_private() && passphrase.is_some())
        {
            return Err(KeyFileError::Unsupported(
                "PBEWithSHA1AndDESede encrypts a private key written as PKCS#8 PEM under a \
                 passphrase only",
            ));
        }
        let encrypts = matches!(
            (format, self),
            (
                KeyFormat::Reference | KeyFormat::Pkcs8Pem,
                KeyMaterial::Private(_)
            )
        );
        if passphrase.is_some() && !encrypts {
            return Err(KeyFileError::NotEncryptable(match format {
                KeyFormat::Reference => "a public key file",
                other => other.name(),
            }));
        }
        match (format, self) {
            (KeyFormat::Reference, KeyMaterial::Private(k)) => k.to_reference_file(passphrase),
            (KeyFormat::Reference, KeyMaterial::Public(k)) => {
                reference::public_file(k).map(Zeroizing::new)
            }
            (KeyFormat::Pkcs8Pem, KeyMaterial::Private(k)) => k
                .to_pkcs8_pem_with(passphrase, encryption)
                .map(|pem| Zeroizing::new(pem.as_bytes().to_vec())),
            (KeyFormat::Pkcs8Pem, KeyMaterial::Public(_)) => {
                Err(KeyFileError::NotPrivate("pkcs8-pem"))
            }
            (KeyFormat::SpkiPem, key) => {
                pem::spki_to_pem(&key.public_key()).map(|t| Zeroizing::new(t.into_bytes()))
            }
            (KeyFormat::Jwk, KeyMaterial::Private(k)) => {
                Ok(Zeroizing::new(k.to_jwk()?.as_bytes().to_vec()))
            }
            (KeyFormat::Jwk, KeyMaterial::Public(k)) => {
                jwk::public_to_jwk(k).map(|t| Zeroizing::new(t.into_bytes()))
            }
        }
    }

    /// The public key (as an HS_PUBKEY value holds it).
    pub fn public_key(&self) -> PublicKey {
        match self {
            KeyMaterial::Private(k) => k.public_key(),
            KeyMaterial::Public(k) => k.clone(),
        }
    }

    /// The public key alone (a reference file of it is the public-key file).
    pub fn to_public(&self) -> KeyMaterial {
        KeyMaterial::Public(self.public_key())
    }

    /// Whether this is a private key.
    pub fn is_private(&self) -> bool {
        matches!(self, KeyMaterial::Private(_))
    }
}

/// A public key from a file, checked usable: an RSA or DSA key whose numbers the crypto
/// libraries accept (a DSA q of a DSA size, checked before any arithmetic).
fn usable(key: PublicKey) -> Result<PublicKey, KeyFileError> {
    match &key {
        PublicKey::Rsa(_) => key
            .to_rsa()
            .map(|_| ())
            .map_err(|_| KeyFileError::InvalidKey("RSA")),
        PublicKey::Dsa(d) => {
            let len = |b: &[u8]| b.iter().skip_while(|&&x| x == 0).count();
            if len(&d.q) > 32
                || len(&d.p) > MAX_COMPONENT - 1
                || !dsa_q_size(&dsa::BigUint::from_bytes_be(&d.q))
            {
                return Err(KeyFileError::InvalidKey("DSA"));
            }
            key.to_dsa()
                .map(|_| ())
                .map_err(|_| KeyFileError::InvalidKey("DSA"))
        }
        _ => Err(KeyFileError::UnsupportedKeyType(
            String::from_utf8_lossy(key.key_type()).into_owned(),
        )),
    }?;
    Ok(key)
}

impl PrivateKey {
    /// Reads a key file: PEM (`-----BEGIN PRIVATE KEY-----`, PKCS#8), DER PKCS#8, or else
    /// the reference library's binary format (unencrypted; an encrypted one is a typed error
    /// naming its scheme, an encrypted PKCS#8 PEM is [`KeyFileError::Pkcs8NeedsPassphrase`]).
    /// The file's bytes are zeroized after reading. JWK files are read by
    /// [`KeyMaterial::read`] and [`PrivateKey::from_key_file`].
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, KeyFileError> {
        Self::from_bytes(&read_file(path.as_ref())?)
    }

    /// Reads key file contents (see [`PrivateKey::from_file`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, KeyFileError> {
        Self::from_pkcs8_or_reference(bytes, None)
    }

    /// Reads a key file with a passphrase for an encrypted reference key file (see
    /// [`PrivateKey::from_reference_file_with_passphrase`]) or an encrypted PKCS#8 PEM (see
    /// [`PrivateKey::from_pkcs8_pem_with_passphrase`]); other files are read as by
    /// [`PrivateKey::from_file`].
    pub fn from_file_with_passphrase(
        path: impl AsRef<Path>,
        passphrase: &[u8],
    ) -> Result<Self, KeyFileError> {
        Self::from_bytes_with_passphrase(&read_file(path.as_ref())?, passphrase)
    }

    /// Reads key file contents with a passphrase (see
    /// [`PrivateKey::from_file_with_passphrase`]).
    pub fn from_bytes_with_passphrase(
        bytes: &[u8],
        passphrase: &[u8],
    ) -> Result<Self, KeyFileError> {
        Self::from_pkcs8_or_reference(bytes, Some(passphrase))
    }

    /// PEM (PKCS#8, decrypted with `passphrase` when encrypted), DER PKCS#8, or else the
    /// reference library's file (decrypted with `passphrase` when encrypted).
    fn from_pkcs8_or_reference(
        bytes: &[u8],
        passphrase: Option<&[u8]>,
    ) -> Result<Self, KeyFileError> {
        let trimmed = bytes.trim_ascii_start();
        if trimmed.starts_with(b"-----BEGIN") {
            let text = std::str::from_utf8(trimmed)
                .map_err(|_| KeyFileError::Pkcs8("PEM is not text".into()))?;
            pem::pkcs8_pem(text, passphrase)
        } else if trimmed.first() == Some(&0x30) {
            Self::from_pkcs8_der(bytes)
        } else {
            match passphrase {
                Some(p) => Self::from_reference_file_with_passphrase(bytes, p),
                None => Self::from_reference_file(bytes),
            }
        }
    }

    /// Reads the private key of a file a user names as theirs, whatever its kind: a private
    /// JWK, PEM (`PRIVATE KEY`, or `ENCRYPTED PRIVATE KEY` with `passphrase`; also one of
    /// several blocks, as in the file of a certificate and its key that pyhandle's
    /// `certificate_and_key` credentials name), DER PKCS#8, or the reference library's file
    /// (encrypted with `passphrase`). The one reader of `--key-file`, `KeySource` and the
    /// Python package's `key_file=`.
    ///
    /// ```
    /// use handle_resolver::auth::{KeyFormat, KeyMaterial, PrivateKey, KeySpec};
    ///
    /// let key = PrivateKey::generate(KeySpec::dsa(1024, None)?)?;
    /// let jwk = KeyMaterial::Private(key.clone()).write(KeyFormat::Jwk, None)?;
    /// let pem = KeyMaterial::Private(key.clone()).write(KeyFormat::Pkcs8Pem, None)?;
    /// let beside = [b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", &pem[..]].concat();
    /// for file in [&jwk[..], &pem[..], &beside[..]] {
    ///     assert_eq!(PrivateKey::from_key_file(file, None)?.public_key(), key.public_key());
    ///     // None of them is encrypted: a passphrase for one is an error, never ignored.
    ///     assert!(PrivateKey::from_key_file(file, Some(b"passphrase")).is_err());
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A passphrase given for a file that is not encrypted is [`KeyFileError::NotEncrypted`]
    /// rather than ignored; an encrypted file without one is an error for which
    /// [`KeyFileError::needs_passphrase`] holds; bytes of none of these formats (a text file,
    /// say) are [`KeyFileError::NotAPrivateKeyFile`], a reference public-key file
    /// [`KeyFileError::NotPrivate`].
    pub fn from_key_file(bytes: &[u8], passphrase: Option<&[u8]>) -> Result<Self, KeyFileError> {
        if KeyFormat::detect(bytes) == Some(KeyFormat::Jwk) {
            if passphrase.is_some() {
                return Err(KeyFileError::NotEncrypted);
            }
            return match KeyMaterial::read(bytes, Some(KeyFormat::Jwk), None)?.key {
                KeyMaterial::Private(key) => Ok(key),
                KeyMaterial::Public(_) => Err(KeyFileError::NotPrivate("a key file")),
            };
        }
        let bytes = pem::private_key_block(bytes).unwrap_or(bytes);
        let trimmed = bytes.trim_ascii_start();
        if pem::label(trimmed).is_none()
            && trimmed.first() != Some(&0x30)
            && !reference::private_scheme(bytes)
        {
            return Err(if reference::public_scheme(bytes) {
                KeyFileError::NotPrivate("a key file")
            } else {
                KeyFileError::NotAPrivateKeyFile
            });
        }
        let Some(passphrase) = passphrase else {
            return Self::from_pkcs8_or_reference(bytes, None);
        };
        let encrypted = match pem::label(bytes.trim_ascii_start()) {
            Some(label) => label == "ENCRYPTED PRIVATE KEY",
            // DER PKCS#8 is read unencrypted only; a reference file says so in its scheme word.
            None => {
                bytes.first() != Some(&0x30)
                    && bytes.get(..4) != Some(&KEY_FILE_NOT_ENCRYPTED.to_be_bytes()[..])
            }
        };
        if !encrypted {
            return Err(KeyFileError::NotEncrypted);
        }
        Self::from_pkcs8_or_reference(bytes, Some(passphrase))
    }
}

/// A key file's bytes, zeroized when dropped.
fn read_file(path: &Path) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    std::fs::read(path)
        .map(Zeroizing::new)
        .map_err(|e| KeyFileError::io(&e))
}
