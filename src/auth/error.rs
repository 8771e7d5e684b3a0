//! Errors of the authentication layer. None of them carries secret material.

use thiserror::Error;

use crate::wire::{DecodeError, EncodeError};

/// Why a challenge could not (or must not) be answered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The message is not an RC 402 AUTHENTICATION_NEEDED with a challenge body.
    #[error("not a challenge: response code {0}")]
    NotAChallenge(u32),
    /// The challenge answers another kind of request (the op codes differ).
    #[error("the challenge is for {field} {theirs}, our request has {ours}")]
    OtherRequest {
        /// The field that differs.
        field: &'static str,
        /// Ours.
        ours: u32,
        /// The challenge's.
        theirs: u32,
    },
    /// The challenge carries no request digest, so nothing ties it to our request.
    #[error("the challenge carries no request digest")]
    NoRequestDigest,
    /// The request digest uses an algorithm nobody can compute.
    #[error("unknown request digest algorithm {0}")]
    UnknownDigestAlgorithm(u8),
    /// The request digest is not the digest of our request: nothing is signed ("Asked to
    /// sign unidentified request!" in the reference library).
    #[error("the challenge's request digest is not the digest of our request")]
    DigestMismatch,
    /// The nonce is not the 16 bytes the protocol uses.
    #[error("nonce of {0} bytes; 16 expected")]
    NonceLength(usize),
    /// The identity cannot answer with this kind of key (e.g. an RSA key and MD5 forced).
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The signature could not be computed.
    #[error("signing failed: {0}")]
    Sign(&'static str),
    /// The request could not be encoded to compute its digest, or the answer to encode it.
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

/// Why a key file could not be read, converted or written (private keys, and the public
/// keys of [`KeyMaterial`](super::KeyMaterial)).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// The reference library's key encoding does not decode (names the field).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The key file is passphrase-encrypted with a scheme this library does not read.
    #[error("key file encrypted with scheme {0}, which this library cannot decrypt")]
    EncryptedScheme(u32),
    /// The key file is passphrase-encrypted and no passphrase was given.
    #[error("key file is encrypted (scheme {0}) and needs a passphrase")]
    NeedsPassphrase(u32),
    /// The passphrase does not decrypt the key file.
    #[error("the passphrase does not decrypt the key file")]
    WrongPassphrase,
    /// The encryption scheme code is not one the reference library defines.
    #[error("unknown key file encryption scheme {0}")]
    UnknownScheme(u32),
    /// A key type this library does not sign with (the type string, lossy).
    #[error("unsupported private key type {0:?}")]
    UnsupportedKeyType(String),
    /// The key components are not a valid key of their type.
    #[error("invalid {0} private key")]
    InvalidKey(&'static str),
    /// A PEM or DER document that is not a PKCS#8 RSA or DSA private key.
    #[error("not a PKCS#8 RSA or DSA private key: {0}")]
    Pkcs8(String),
    /// The file could not be read (the I/O error in words, see [`KeyFileError::io`]; the
    /// path is the caller's).
    #[error("cannot read the key file: {0}")]
    Io(String),
    /// The bytes are none of the private key files read (a user's key file: `--key-file`,
    /// `key_file=`, [`PrivateKey::from_key_file`](super::PrivateKey::from_key_file)).
    #[error(
        "not a private key file: the formats read are the reference's private key file \
         (hdl-keygen's), PKCS#8 (PEM, encrypted or not, or DER) and a private JWK"
    )]
    NotAPrivateKeyFile,
    /// A passphrase-encrypted PKCS#8 file (`ENCRYPTED PRIVATE KEY`) and no passphrase given.
    #[error("the PKCS#8 key file is encrypted and needs a passphrase")]
    Pkcs8NeedsPassphrase,
    /// The encryption parameters of a key file are out of the bounds this library accepts
    /// (names what: an iteration count or a memory cost that would take too long, an
    /// algorithm it does not decrypt).
    #[error("key file encryption parameters not accepted: {0}")]
    EncryptionParameters(&'static str),
    /// A SubjectPublicKeyInfo document that is not an RSA or DSA public key.
    #[error("not a SubjectPublicKeyInfo RSA or DSA public key: {0}")]
    Spki(String),
    /// A JWK that is not an RSA or DSA key of the reference's form (names the member).
    #[error("not an RSA or DSA JWK: {0}")]
    Jwk(String),
    /// The file is larger than any key file (64 KiB); nothing of it was read.
    #[error("{0} bytes: too large for a key file")]
    TooLarge(usize),
    /// The bytes are none of the formats this library reads.
    #[error("not a key file in a known format (reference, PKCS#8 PEM, SPKI PEM, JWK)")]
    UnknownFormat,
    /// The input holds a public key only and the output needs the private key.
    #[error("the input holds a public key only; {0} needs the private key")]
    NotPrivate(&'static str),
    /// A passphrase was given for an output that is never encrypted.
    #[error("{0} is never encrypted: give no passphrase for it")]
    NotEncryptable(&'static str),
    /// A passphrase was given for a key file that is not encrypted (it is never ignored).
    #[error("the key file is not encrypted: give no passphrase for it")]
    NotEncrypted,
    /// The key cannot be written in the format asked (names what is missing).
    #[error("cannot write the key: {0}")]
    Unsupported(&'static str),
    /// A key size that cannot be generated.
    #[error("cannot generate a {alg} key of {bits} bits: {allowed}")]
    KeySize {
        /// `RSA` or `DSA`.
        alg: &'static str,
        /// The size asked for (of the modulus p for DSA).
        bits: u32,
        /// The sizes there are.
        allowed: &'static str,
    },
}

impl KeyFileError {
    /// Whether the key file is encrypted and was read without a passphrase
    /// ([`KeyFileError::NeedsPassphrase`], [`KeyFileError::Pkcs8NeedsPassphrase`]): what a
    /// caller answers by naming where a passphrase is given.
    ///
    /// ```
    /// use handle_resolver::auth::{KeyFileError, PrivateKey};
    ///
    /// // int4 4: the reference's file, encrypted.
    /// let e = PrivateKey::from_key_file(&[0, 0, 0, 4, 0], None).unwrap_err();
    /// assert!(e.needs_passphrase());
    /// assert!(!KeyFileError::WrongPassphrase.needs_passphrase());
    /// ```
    pub fn needs_passphrase(&self) -> bool {
        matches!(
            self,
            KeyFileError::NeedsPassphrase(_) | KeyFileError::Pkcs8NeedsPassphrase
        )
    }

    /// The error of a key file that could not be read, in words: `no such file`,
    /// `permission denied`, or the system's text without its `(os error N)`.
    ///
    /// ```
    /// use handle_resolver::auth::KeyFileError;
    ///
    /// let e = std::fs::read("/no/such/key/file").unwrap_err();
    /// assert_eq!(KeyFileError::io(&e).to_string(), "cannot read the key file: no such file");
    /// ```
    pub fn io(e: &std::io::Error) -> Self {
        KeyFileError::Io(io_reason(e))
    }
}

/// An I/O error in words (see [`KeyFileError::io`]).
pub(super) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let text = e.to_string();
            match text.rsplit_once(" (os error ") {
                Some((head, _)) => head.to_lowercase(),
                None => text,
            }
        }
    }
}

/// Why an `index:handle` identity does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// No `:` between index and handle.
    #[error("identity {0:?} is not INDEX:HANDLE")]
    Form(String),
    /// The index is not a number from 0 to 2^32-1... as the reference writes it (a Java int).
    #[error("identity index {0:?} is not a number")]
    Index(String),
    /// The handle part is empty.
    #[error("identity has an empty handle")]
    EmptyHandle,
}
