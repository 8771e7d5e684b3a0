//! `--auth INDEX:HANDLE` with `--secret-file`, `--key-file` or `HANDLE_RESOLVER_SECRET`:
//! the identity the resolver answers a server's challenge as (shared by `resolve` and
//! `admin`).
//!
//! Secrets come only from files or the environment: no option takes a secret as its value,
//! so none ends up in the shell history or the process list.

use std::path::{Path, PathBuf};

use handle_resolver::auth::{Authenticator, Identity, PrivateKey, SecretKey};
use zeroize::Zeroizing;

/// The environment variable read for the secret key when `--auth` comes without a file.
pub const SECRET_ENV: &str = "HANDLE_RESOLVER_SECRET";

/// The authentication options.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AuthArgs {
    /// Authenticate as this identity (INDEX:HANDLE, e.g. 300:0.NA/20.500.12345), with the
    /// secret key of --secret-file or $HANDLE_RESOLVER_SECRET, or the private key of
    /// --key-file.
    #[arg(long, value_name = "INDEX:HANDLE", help_heading = "Authentication")]
    pub auth: Option<String>,
    /// A file holding the identity's secret key (HS_SECKEY; one trailing newline is
    /// stripped).
    #[arg(
        long,
        value_name = "FILE",
        requires = "auth",
        conflicts_with = "key_file",
        help_heading = "Authentication"
    )]
    pub secret_file: Option<PathBuf>,
    /// A file holding the identity's private key (HS_PUBKEY): the reference's private key
    /// file (possibly passphrase-encrypted) or PKCS#8 PEM.
    #[arg(
        long,
        value_name = "FILE",
        requires = "auth",
        help_heading = "Authentication"
    )]
    pub key_file: Option<PathBuf>,
    /// The environment variable holding the passphrase of an encrypted --key-file.
    #[arg(
        long,
        value_name = "VAR",
        requires = "key_file",
        help_heading = "Authentication"
    )]
    pub key_passphrase_env: Option<String>,
    /// Challenge every request on its own instead of opening a session with each server
    /// (by default, as the reference client, the first request to a server sets up an
    /// encrypted session that the challenge authenticates; later ones are not challenged).
    #[arg(long, requires = "auth", help_heading = "Authentication")]
    pub no_session: bool,
}

impl AuthArgs {
    /// Whether an identity was asked for.
    pub fn enabled(&self) -> bool {
        self.auth.is_some()
    }

    /// The authenticator the options describe (`None` without `--auth`), or why it cannot
    /// be had (a bad identity, an unreadable or unparsable file, a missing variable).
    pub fn authenticator(&self) -> Result<Option<Authenticator>, String> {
        let Some(auth) = &self.auth else {
            return Ok(None);
        };
        let identity: Identity = auth
            .parse()
            .map_err(|e| format!("--auth {auth}: not INDEX:HANDLE: {e}"))?;
        if let Some(path) = &self.key_file {
            return private_key(path, self.key_passphrase_env.as_deref())
                .map(|key| Some(Authenticator::private_key(identity, key)));
        }
        let secret = match &self.secret_file {
            Some(path) => secret_from_file(path)?,
            None => secret_from_env()?,
        };
        Ok(Some(Authenticator::secret_key(identity, secret)))
    }
}

/// The secret key in `path`, one trailing newline (`\n` or `\r\n`) stripped.
fn secret_from_file(path: &Path) -> Result<SecretKey, String> {
    let shown = path.display();
    let bytes = Zeroizing::new(
        std::fs::read(path).map_err(|e| format!("--secret-file {shown}: cannot read it: {e}"))?,
    );
    let secret = strip_newline(&bytes);
    if secret.is_empty() {
        return Err(format!("--secret-file {shown}: the file is empty"));
    }
    Ok(SecretKey::new(secret))
}

/// The secret key in [`SECRET_ENV`].
fn secret_from_env() -> Result<SecretKey, String> {
    match std::env::var_os(SECRET_ENV) {
        Some(value) if !value.is_empty() => {
            let value = Zeroizing::new(value.into_encoded_bytes());
            Ok(SecretKey::new(strip_newline(&value)))
        }
        _ => Err(format!(
            "--auth needs a key: --secret-file FILE, --key-file FILE, or the secret key in \
             ${SECRET_ENV}"
        )),
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

/// The private key in `path`, decrypted with the passphrase in `$passphrase_env` if given.
fn private_key(path: &Path, passphrase_env: Option<&str>) -> Result<PrivateKey, String> {
    let shown = path.display();
    let key = match passphrase_env {
        Some(var) => {
            let passphrase = Zeroizing::new(
                std::env::var_os(var)
                    .ok_or_else(|| format!("--key-passphrase-env {var}: the variable is not set"))?
                    .into_encoded_bytes(),
            );
            PrivateKey::from_file_with_passphrase(path, &passphrase)
        }
        None => PrivateKey::from_file(path),
    };
    key.map_err(|e| format!("--key-file {shown}: not a usable private key: {e}"))
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
