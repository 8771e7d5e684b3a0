//! The arguments of `Resolver(...)` / `AsyncResolver(...)` and `resolver.admin(...)`, read
//! into the library's `ResolverBuilder` as the `resolve` CLI reads its options.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handle_resolver::auth::{
    Authenticator, Credentials, Identity, KeyFileError, KeySource, PrivateKey, SecretKey,
};
use handle_resolver::transport::addr::{Endpoint, EndpointError, RootEndpoint};
use handle_resolver::{Query, Resolver, ResolverBuilder, TransportPreference, UnknownTransport};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::ident::Identifier;

/// Who the resolver is, for challenges: the identity and where its key comes from.
#[derive(Clone, Debug)]
pub(crate) struct IdentitySpec {
    pub(crate) identity: String,
    pub(crate) secret: Option<Vec<u8>>,
    pub(crate) secret_file: Option<PathBuf>,
    pub(crate) key_file: Option<PathBuf>,
    pub(crate) key_passphrase: Option<Vec<u8>>,
}

impl IdentitySpec {
    /// The identity with its key, read (a key file is read here).
    pub(crate) fn authenticator(&self) -> PyResult<Authenticator> {
        let identity: Identity = self
            .identity
            .parse()
            .map_err(|e| PyValueError::new_err(format!("identity {:?}: {e}", self.identity)))?;
        let credentials = match (&self.secret, &self.secret_file, &self.key_file) {
            (Some(secret), None, None) => Credentials::SecretKey(SecretKey::new(secret)),
            (None, Some(file), None) => KeySource::SecretFile(file.clone())
                .load()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            (None, None, Some(file)) => {
                let key = private_key(file, self.key_passphrase.as_deref()).map_err(|e| {
                    let file = file.display();
                    PyValueError::new_err(match e {
                        KeyFileError::Io(_) => format!("key_file {file}: {e}"),
                        e if e.needs_passphrase() => {
                            format!("key_file {file}: {e}: give the passphrase as key_passphrase=")
                        }
                        e => format!("key_file {file}: not a usable private key: {e}"),
                    })
                })?;
                Credentials::PrivateKey(Box::new(key))
            }
            _ => {
                return Err(PyValueError::new_err(
                    "give exactly one of secret, secret_file and key_file",
                ))
            }
        };
        Ok(Authenticator::new(identity, credentials))
    }
}

/// The private key of `file`: any key file [`PrivateKey::from_key_file`] reads (a private
/// JWK, PEM, also `ENCRYPTED PRIVATE KEY` with `passphrase` and the key block beside a
/// certificate in pyhandle's `certificate_and_key` file, DER, the reference's).
fn private_key(file: &Path, passphrase: Option<&[u8]>) -> Result<PrivateKey, KeyFileError> {
    let bytes = zeroize::Zeroizing::new(std::fs::read(file).map_err(|e| KeyFileError::io(&e))?);
    PrivateKey::from_key_file(&bytes, passphrase)
}

/// The fixed server and the root of a [`Config`], read.
#[derive(Clone, Debug)]
pub(crate) struct Endpoints {
    server: Option<Endpoint>,
    root: Option<RootEndpoint>,
}

/// Everything a resolver is built from (kept, so that a forked child builds its own).
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) root: Option<String>,
    pub(crate) server: Option<String>,
    pub(crate) proxy: Option<String>,
    pub(crate) urn_resolver: Option<String>,
    pub(crate) transport: TransportPreference,
    pub(crate) timeout: Duration,
    pub(crate) certify: bool,
    pub(crate) authoritative: bool,
    pub(crate) follow_aliases: bool,
    pub(crate) cache: bool,
    pub(crate) public_only: Option<bool>,
    pub(crate) concurrency: usize,
    pub(crate) identity: Option<IdentitySpec>,
}

impl Config {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        root: Option<String>,
        server: Option<String>,
        proxy: Option<String>,
        urn_resolver: Option<String>,
        transport: &str,
        timeout: f64,
        certify: bool,
        authoritative: bool,
        follow_aliases: bool,
        cache: bool,
        concurrency: usize,
        public_only: Option<bool>,
    ) -> PyResult<Config> {
        let transport: TransportPreference = transport
            .parse()
            .map_err(|e: UnknownTransport| PyValueError::new_err(e.to_string()))?;
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
            return Err(PyValueError::new_err(
                "timeout: a number of seconds above 0, at most 86400",
            ));
        }
        if concurrency == 0 {
            return Err(PyValueError::new_err("concurrency: at least 1"));
        }
        if root.is_some() && server.is_some() {
            return Err(PyValueError::new_err("give root or server, not both"));
        }
        if proxy.is_some() && (root.is_some() || server.is_some()) {
            return Err(PyValueError::new_err(
                "proxy resolves through the proxy: leave out root and server",
            ));
        }
        if certify && server.is_some() {
            return Err(PyValueError::new_err(
                "certify needs the service lookup that server skips (use root)",
            ));
        }
        Ok(Config {
            root,
            server,
            proxy,
            urn_resolver,
            transport,
            timeout: Duration::from_secs_f64(timeout),
            certify,
            authoritative,
            follow_aliases,
            cache,
            public_only,
            concurrency,
            identity: None,
        })
    }

    /// The library's builder for these settings.
    pub(crate) fn builder(&self) -> PyResult<ResolverBuilder> {
        let identity = self
            .identity
            .as_ref()
            .map(IdentitySpec::authenticator)
            .transpose()?;
        Ok(self.builder_for(&self.endpoints()?, identity))
    }

    /// Where requests go: the fixed server and the root read (addresses resolved, the
    /// root file found), once, so that resolvers are then made without a failure.
    pub(crate) fn endpoints(&self) -> PyResult<Endpoints> {
        let invalid = |option: &str, text: &str, e: EndpointError| {
            PyValueError::new_err(format!("{option} {text:?}: {e}"))
        };
        let server = match &self.server {
            None => None,
            Some(text) => Some(Endpoint::parse(text).map_err(|e| invalid("server", text, e))?),
        };
        let root = match &self.root {
            None => None,
            Some(text) => Some(RootEndpoint::parse(text).map_err(|e| invalid("root", text, e))?),
        };
        Ok(Endpoints { server, root })
    }

    /// The builder for these settings, `endpoints` (from [`Config::endpoints`]) and the
    /// identity `identity` (whatever the settings' own), without a failure.
    pub(crate) fn builder_for(
        &self,
        endpoints: &Endpoints,
        identity: Option<Authenticator>,
    ) -> ResolverBuilder {
        let mut b = Resolver::builder()
            .transport(self.transport)
            .certify(self.certify)
            .authoritative(self.authoritative)
            .follow_aliases(self.follow_aliases)
            .timeout(self.timeout);
        if !self.cache {
            b = b.cache_size(0);
        }
        let public_only = self.public_only.unwrap_or(identity.is_none());
        if let Some(identity) = identity {
            b = b.authenticator(identity);
        }
        b = b.public_only(public_only);
        if let Some(server) = &endpoints.server {
            b = b.server_at(server);
        }
        if let Some(proxy) = &self.proxy {
            b = b.proxy(proxy.as_str());
        }
        if let Some(url) = &self.urn_resolver {
            b = b.urn_resolver(url.as_str());
        }
        if let Some(root) = &endpoints.root {
            b = b.root_at(root);
        }
        b
    }

    /// The same settings with an identity.
    pub(crate) fn with_identity(&self, identity: IdentitySpec) -> Config {
        Config {
            identity: Some(identity),
            ..self.clone()
        }
    }
}

/// The identity arguments of `admin(...)` (and of the resolvers).
pub(crate) fn identity_spec(
    identity: String,
    secret: Option<&Bound<'_, PyAny>>,
    secret_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    key_passphrase: Option<&Bound<'_, PyAny>>,
) -> PyResult<IdentitySpec> {
    Ok(IdentitySpec {
        identity,
        secret: secret.map(bytes_of).transpose()?,
        secret_file,
        key_file,
        key_passphrase: key_passphrase.map(bytes_of).transpose()?,
    })
}

/// `str` (UTF-8) or `bytes`.
fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    obj.extract::<Vec<u8>>()
        .map_err(|_| PyTypeError::new_err("a secret or passphrase is str or bytes"))
}

/// The identifier text of a `resolve` argument: a `str` or an `Identifier` from `parse`.
pub(crate) fn identifier_text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if let Ok(id) = obj.cast::<Identifier>() {
        return Ok(id.get().input_text().to_owned());
    }
    Err(PyTypeError::new_err(format!(
        "an identifier is a str (or an Identifier from parse()), not {}",
        obj.get_type().name()?
    )))
}

/// The query of `resolve(identifier, types, indexes)`.
pub(crate) fn query(types: Option<Vec<String>>, indexes: Option<Vec<u32>>) -> Query {
    Query::new()
        .types(types.unwrap_or_default())
        .indexes(indexes.unwrap_or_default())
}

/// `types` as a list: a single `str` is one type, not its letters.
pub(crate) fn types_arg(types: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<String>>> {
    match types {
        None => Ok(None),
        Some(t) if t.is_none() => Ok(None),
        Some(t) => {
            if let Ok(s) = t.cast::<PyString>() {
                return Ok(Some(vec![s.to_cow()?.into_owned()]));
            }
            if t.cast::<PyTuple>().is_ok() || t.try_iter().is_ok() {
                return t.extract::<Vec<String>>().map(Some);
            }
            Err(PyTypeError::new_err("types: a str or a list of str"))
        }
    }
}
