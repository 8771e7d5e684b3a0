//! Authentication: answering a server's challenge (RC 402 AUTHENTICATION_NEEDED) as an
//! identity, byte for byte as the reference library 9.2 does (PROTOCOL.md §10, captures-auth).
//!
//! Sans-IO like [`crate::wire`]: a challenge message and the request it challenges go in, the
//! answer message (op code 200) comes out. Nothing here opens a socket; sending the answer
//! (over TCP on a new connection, over UDP from a new socket, as the reference client does)
//! and limiting the rounds is the caller's.
//!
//! - [`Identity`]: `INDEX:HANDLE` of the value holding the identity's key;
//! - [`SecretKey`] (HS_SECKEY, with the "hashed" form) and [`PrivateKey`] (HS_PUBKEY: RSA or
//!   DSA, read from the reference library's key file or from PKCS#8): the [`Credentials`];
//! - key files made and converted ([`PrivateKey::generate`], [`KeyMaterial`] in the
//!   [`KeyFormat`]s: the reference's files, PKCS#8 and SPKI PEM, JWK), what `hdl-keygen`
//!   and `hdl-convert-key` do;
//! - [`Challenge::verify`]: the challenge's request digest is checked against our own request
//!   before anything is signed;
//! - [`Authenticator`]: signs the checked challenge with the algorithm the protocol version
//!   calls for and builds the answer;
//! - [`verify_answer`]: the server's side, an answer checked against the stored key value.
//!
//! Secrets are zeroized when dropped and never appear in `Debug` output or errors.
//!
//! ```
//! use handle_resolver::auth::{Authenticator, PrivateKey, SecretKey};
//!
//! let by_secret = Authenticator::secret_key("300:20.500.12345/USER-SECKEY".parse()?, SecretKey::new("s3cret"));
//! assert_eq!(by_secret.auth_type(), b"HS_SECKEY");
//! assert!(!format!("{by_secret:?}").contains("s3cret"));
//!
//! // An unencrypted key file of the reference library that holds no key.
//! assert!(PrivateKey::from_bytes(&[0, 0, 0, 1]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod answer;
mod error;
mod key_source;
mod keyfile;
mod keys;
mod secret;
mod session;
mod verify;

pub use answer::{answer_message, Authenticator, Challenge, Credentials, Identity, NONCE_LEN};
pub use error::{AuthError, IdentityError, KeyFileError};
pub use key_source::{KeySource, KeySourceError};
pub use keyfile::{
    pem_block, KeyFormat, KeyMaterial, KeySpec, Pkcs8Encryption, ReadKey, UnknownKeyFormat,
    MAX_PKCS8_PBKDF2_ITERATIONS, PKCS12_PBE_ITERATIONS, PKCS8_PBKDF2_ITERATIONS,
};
pub use keys::{PrivateKey, KEY_FILE_NOT_ENCRYPTED, KEY_FILE_PBKDF2_AES};
pub use secret::{
    pbkdf2_derive, pbkdf2_password, verify_secret_key_proof, SecretKey, SecretKeyMac,
    MAX_PBKDF2_ITERATIONS, PBKDF2_ITERATIONS, PBKDF2_KEY_BITS, PBKDF2_SALT_LEN,
};
pub use session::{
    answer_setup, DhKeyPair, SessionError, CIPHER_AES, DH_GENERATOR, DH_GROUP2_PRIME,
    DH_SECRET_LEN, SESSION_TIMEOUT_SECS,
};
pub use verify::{verify_answer, VerifyError};

#[cfg(test)]
mod tests;
