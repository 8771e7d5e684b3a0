//! Where an identity's key is read from: a secret key file, an environment variable, or a
//! private key file (possibly passphrase-encrypted). What a command line's `--auth` options
//! name, read into [`Credentials`].
//!
//! Secrets come only from files or the environment, never from a value given on a command
//! line, so none ends up in a shell history or a process list. The bytes read are zeroized.

use std::path::{Path, PathBuf};

use thiserror::Error;
use zeroize::Zeroizing;

use super::answer::Credentials;
use super::error::{io_reason, KeyFileError};
use super::keys::PrivateKey;
use super::secret::SecretKey;

/// Where the key of an identity is read from.
///
/// ```
/// use handle_resolver::auth::{Authenticator, Credentials, KeySource, KeySourceError};
///
/// let path = std::env::temp_dir().join(format!("key-source-doc-{}", std::process::id()));
/// std::fs::write(&path, "s3cret\n")?;
/// let credentials = KeySource::SecretFile(path.clone()).load()?;
/// assert!(matches!(&credentials, Credentials::SecretKey(k) if k.expose() == b"s3cret"));
/// let me = Authenticator::new("300:20.500.12345/USER".parse()?, credentials);
/// assert_eq!(me.auth_type(), b"HS_SECKEY");
/// std::fs::remove_file(&path)?;
///
/// let missing = KeySource::SecretEnv("KEY_SOURCE_DOC_UNSET".into()).load();
/// assert!(matches!(missing, Err(KeySourceError::NoSecret { .. })));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeySource {
    /// A file holding the secret key (HS_SECKEY); one trailing newline (`\n` or `\r\n`) is
    /// stripped, and an empty key is refused.
    SecretFile(PathBuf),
    /// The environment variable of this name holds the secret key (one trailing newline
    /// stripped); unset or empty, there is no key.
    SecretEnv(String),
    /// A file holding the private key (HS_PUBKEY): the reference library's key file,
    /// PKCS#8 (see [`PrivateKey::from_file`]; an encrypted one too) or a private JWK.
    PrivateKeyFile {
        /// The key file.
        path: PathBuf,
        /// The environment variable holding the passphrase of an encrypted key file.
        passphrase_env: Option<String>,
    },
}

/// Why a [`KeySource`] gives no key. The messages name the file or the variable first, so
/// that a command line can put its option in front (`--secret-file my.secret: ...`); none
/// carries secret material.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum KeySourceError {
    /// The secret or private key file could not be read.
    #[error("{}: cannot read it: {reason}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error in words (`no such file`, `permission denied`, ...).
        reason: String,
    },
    /// The secret key file holds no key.
    #[error("{}: the file is empty", .path.display())]
    EmptyFile {
        /// The file.
        path: PathBuf,
    },
    /// The secret key variable is not set, or empty.
    #[error("{variable}: the variable is not set or empty")]
    NoSecret {
        /// The variable's name.
        variable: String,
    },
    /// The passphrase variable of an encrypted key file is not set.
    #[error("{variable}: the variable is not set")]
    NoPassphrase {
        /// The variable's name.
        variable: String,
    },
    /// The private key file could not be decrypted or understood (one that cannot be read
    /// is [`KeySourceError::Unreadable`]).
    #[error("{}: not a usable private key: {source}", .path.display())]
    PrivateKey {
        /// The file.
        path: PathBuf,
        /// Why.
        source: KeyFileError,
    },
}

impl KeySource {
    /// Reads the key.
    pub fn load(&self) -> Result<Credentials, KeySourceError> {
        match self {
            KeySource::SecretFile(path) => secret_from_file(path).map(Credentials::SecretKey),
            KeySource::SecretEnv(variable) => secret_from_env(variable).map(Credentials::SecretKey),
            KeySource::PrivateKeyFile {
                path,
                passphrase_env,
            } => private_key(path, passphrase_env.as_deref())
                .map(|key| Credentials::PrivateKey(Box::new(key))),
        }
    }
}

/// The secret key in `path`, one trailing newline stripped.
fn secret_from_file(path: &Path) -> Result<SecretKey, KeySourceError> {
    let bytes = Zeroizing::new(std::fs::read(path).map_err(|e| KeySourceError::Unreadable {
        path: path.to_path_buf(),
        reason: io_reason(&e),
    })?);
    let secret = strip_newline(&bytes);
    if secret.is_empty() {
        return Err(KeySourceError::EmptyFile {
            path: path.to_path_buf(),
        });
    }
    Ok(SecretKey::new(secret))
}

/// The secret key in the variable `variable`, one trailing newline stripped.
fn secret_from_env(variable: &str) -> Result<SecretKey, KeySourceError> {
    match std::env::var_os(variable) {
        Some(value) if !value.is_empty() => {
            let value = Zeroizing::new(value.into_encoded_bytes());
            Ok(SecretKey::new(strip_newline(&value)))
        }
        _ => Err(KeySourceError::NoSecret {
            variable: variable.to_string(),
        }),
    }
}

/// `bytes` without one trailing `\n` or `\r\n`.
fn strip_newline(bytes: &[u8]) -> &[u8] {
    let b = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if b.len() < bytes.len() {
        b.strip_suffix(b"\r").unwrap_or(b)
    } else {
        b
    }
}

/// The private key in `path` (the reference's file, PKCS#8 PEM or DER, or a JWK),
/// decrypted with the passphrase in `$passphrase_env` if given.
fn private_key(path: &Path, passphrase_env: Option<&str>) -> Result<PrivateKey, KeySourceError> {
    let failed = |source| KeySourceError::PrivateKey {
        path: path.to_path_buf(),
        source,
    };
    let passphrase = match passphrase_env {
        Some(variable) => Some(Zeroizing::new(
            std::env::var_os(variable)
                .ok_or_else(|| KeySourceError::NoPassphrase {
                    variable: variable.to_string(),
                })?
                .into_encoded_bytes(),
        )),
        None => None,
    };
    let bytes = Zeroizing::new(std::fs::read(path).map_err(|e| KeySourceError::Unreadable {
        path: path.to_path_buf(),
        reason: io_reason(&e),
    })?);
    let key = PrivateKey::from_key_file(&bytes, passphrase.as_deref().map(|p| &p[..]));
    key.map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::strip_newline;

    #[test]
    fn one_trailing_newline_is_stripped() {
        assert_eq!(strip_newline(b"s3cret\n"), b"s3cret");
        assert_eq!(strip_newline(b"s3cret\r\n"), b"s3cret");
        assert_eq!(strip_newline(b"s3cret\n\n"), b"s3cret\n");
        assert_eq!(strip_newline(b"s3cret\r"), b"s3cret\r");
        assert_eq!(strip_newline(b"s3cret"), b"s3cret");
    }
}
