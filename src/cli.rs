//! What the command-line tools share (feature `cli`): the identity options of `resolve` and
//! `admin` ([`AuthArgs`]), declared once for both.
//!
//! `--auth INDEX:HANDLE` with `--secret-file`, `--key-file` or `HANDLE_RESOLVER_SECRET`: the
//! identity the resolver answers a server's challenge as. Secrets come only from files or the
//! environment: no option takes a secret as its value, so none ends up in the shell history
//! or the process list. Reading the key is [`KeySource`]'s.

use std::path::PathBuf;

use thiserror::Error;

use crate::auth::{
    Authenticator, Identity, IdentityError, KeyFileError, KeySource, KeySourceError,
};

/// The environment variable read for the secret key when `--auth` comes without a file.
pub const SECRET_ENV: &str = "HANDLE_RESOLVER_SECRET";

/// The identity options (flatten them into a clap command).
#[derive(Debug, Clone, Default, clap::Args)]
#[non_exhaustive]
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
    /// file or PKCS#8 PEM (either possibly passphrase-encrypted), or a private JWK.
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

/// Why the identity options give no authenticator; the text names the option at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AuthArgsError {
    /// `--auth` is not `INDEX:HANDLE`.
    #[error("--auth {text}: not INDEX:HANDLE: {error}")]
    Identity {
        /// What was given.
        text: String,
        /// Why it is no identity.
        error: IdentityError,
    },
    /// `--auth` without a key file and without the secret in the environment.
    #[error(
        "--auth needs a key: --secret-file FILE, --key-file FILE, or the secret key in \
         ${SECRET_ENV}"
    )]
    NoKey,
    /// The `--key-file` is encrypted and no `--key-passphrase-env` names its passphrase.
    #[error(
        "--key-file {}: {error}: name the environment variable that holds it with \
         --key-passphrase-env VAR",
        .path.display()
    )]
    KeyNeedsPassphrase {
        /// The key file.
        path: PathBuf,
        /// What reading it said ([`KeyFileError::needs_passphrase`] holds).
        error: KeyFileError,
    },
    /// The key could not be had from the option named.
    #[error("{option} {error}")]
    Key {
        /// `--key-file`, `--secret-file`, `--key-passphrase-env` or `--auth`.
        option: &'static str,
        /// Why.
        error: KeySourceError,
    },
}

impl AuthArgs {
    /// Whether an identity was asked for.
    pub fn enabled(&self) -> bool {
        self.auth.is_some()
    }

    /// The authenticator the options describe (`None` without `--auth`), or why it cannot be
    /// had (a bad identity, an unreadable or unparsable file, a missing variable).
    pub fn authenticator(&self) -> Result<Option<Authenticator>, AuthArgsError> {
        let Some(auth) = &self.auth else {
            return Ok(None);
        };
        let identity: Identity = auth.parse().map_err(|error| AuthArgsError::Identity {
            text: auth.clone(),
            error,
        })?;
        let (option, source) = match (&self.key_file, &self.secret_file) {
            (Some(path), _) => (
                "--key-file",
                KeySource::PrivateKeyFile {
                    path: path.clone(),
                    passphrase_env: self.key_passphrase_env.clone(),
                },
            ),
            (None, Some(path)) => ("--secret-file", KeySource::SecretFile(path.clone())),
            (None, None) => ("--auth", KeySource::SecretEnv(SECRET_ENV.to_string())),
        };
        let credentials = source.load().map_err(|error| match error {
            KeySourceError::NoSecret { .. } => AuthArgsError::NoKey,
            KeySourceError::PrivateKey { path, source } if source.needs_passphrase() => {
                AuthArgsError::KeyNeedsPassphrase {
                    path,
                    error: source,
                }
            }
            KeySourceError::NoPassphrase { .. } => AuthArgsError::Key {
                option: "--key-passphrase-env",
                error,
            },
            error => AuthArgsError::Key { option, error },
        })?;
        Ok(Some(Authenticator::new(identity, credentials)))
    }
}
