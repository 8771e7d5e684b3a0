//! `--auth INDEX:HANDLE` with `--secret-file`, `--key-file` or `HANDLE_RESOLVER_SECRET`:
//! the identity the resolver answers a server's challenge as. Reading the key is the
//! library's [`KeySource`]; `admin` declares the same options.
//!
//! Secrets come only from files or the environment: no option takes a secret as its value,
//! so none ends up in the shell history or the process list.

use std::path::PathBuf;

use handle_resolver::auth::{Authenticator, Identity, KeySource, KeySourceError};

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
        let credentials = source.load().map_err(|e| match e {
            KeySourceError::NoSecret { .. } => format!(
                "--auth needs a key: --secret-file FILE, --key-file FILE, or the secret key in \
                 ${SECRET_ENV}"
            ),
            KeySourceError::NoPassphrase { .. } => format!("--key-passphrase-env {e}"),
            _ => format!("{option} {e}"),
        })?;
        Ok(Some(Authenticator::new(identity, credentials)))
    }
}
