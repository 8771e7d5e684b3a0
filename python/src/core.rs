//! The one core of the resolver classes. `Resolver` and `AsyncResolver` (and `Admin` and
//! `AsyncAdmin`) are the same configuration and the same calls: [`Core`] holds the first
//! and makes each of the second a future of the library's call whose output, converted to
//! Python, is the method's result or raises its exception. The classes differ only in their
//! [`Mode`], how a call's future reaches Python: `resolver.rs` blocks on it, `aio.rs` hands
//! it to asyncio as an awaitable. The methods of both are written once, by
//! [`resolver_methods!`] and [`admin_methods!`].

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use handle_resolver::wire::LocationRequest;
use handle_resolver::{
    Admin as LibAdmin, AdminError, Attempt, BuildError, CreateOptions, HandleRecord as LibRecord,
    ResolveError, Resolver as Lib, UrnAnswer, UrnError,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::batch;
use crate::config::{identifier_text, identity_spec, query, types_arg, Config, IdentitySpec};
use crate::errors::{raise_admin, raise_resolve, urn_error};
use crate::many::Feed;
use crate::record::{values_from_py, HandleRecord};
use crate::runtime::{shared, PerProcess};

/// A library resolver that could not be built, as `ValueError`.
pub(crate) fn build_error(e: BuildError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// `m` locked, or `RuntimeError` when a panic poisoned it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err("a lock was poisoned by a panic"))
}

/// A call: a future, run on the shared runtime, whose output converted to Python is the
/// method's result (or raises its exception).
pub(crate) trait Call:
    Future<Output: for<'a> IntoPyObject<'a> + Send + 'static> + Send + 'static
{
}

impl<F> Call for F where
    F: Future<Output: for<'a> IntoPyObject<'a> + Send + 'static> + Send + 'static
{
}

/// How a class hands a call to Python: its result, waited for (`Resolver`, `Admin`), or an
/// awaitable of it (`AsyncResolver`, `AsyncAdmin`).
pub(crate) trait Mode {
    /// The method's result for `call`.
    fn finish(py: Python<'_>, call: impl Call) -> PyResult<Bound<'_, PyAny>>;
}

/// A resolver's (or an admin's) configuration and its library resolver in this process:
/// built on the shared runtime, and again in a child after `fork`.
pub(crate) struct Core {
    config: Config,
    slot: Mutex<PerProcess<Lib>>,
}

impl Core {
    /// The core of `config`, with `identity` (the constructor's identity arguments, read by
    /// [`identity_spec`]) when one is given.
    pub(crate) fn new(config: Config, identity: Option<IdentitySpec>) -> PyResult<Self> {
        let config = match identity {
            Some(identity) => config.with_identity(identity),
            None => config,
        };
        let first = Self::build(&config)?;
        Ok(Core {
            config,
            slot: Mutex::new(PerProcess::new(first)),
        })
    }

    fn build(config: &Config) -> PyResult<Lib> {
        let rt = shared()?;
        // Built inside the runtime, so whatever the resolver sets up belongs to it.
        let _entered = rt.enter();
        config.builder()?.build().map_err(build_error)
    }

    /// The library resolver of this process.
    fn get(&self) -> PyResult<Lib> {
        let mut slot = lock(&self.slot)?;
        if let Some(r) = slot.get() {
            return Ok(r.clone());
        }
        let fresh = Self::build(&self.config)?;
        *slot = PerProcess::new(fresh.clone());
        Ok(fresh)
    }

    /// The default number of resolutions `resolve_many` runs at once.
    pub(crate) fn concurrency(&self) -> usize {
        self.config.concurrency
    }

    /// `Name(root="...", timeout=10, concurrency=16)`.
    pub(crate) fn repr(&self, name: &str) -> String {
        let c = &self.config;
        let at = match (&c.root, &c.server, &c.proxy) {
            (Some(r), _, _) => format!("root={r:?}"),
            (_, Some(s), _) => format!("server={s:?}"),
            (_, _, Some(p)) => format!("proxy={p:?}"),
            _ => "the global root".to_string(),
        };
        format!(
            "{name}({at}, timeout={}, concurrency={})",
            c.timeout.as_secs_f64(),
            c.concurrency
        )
    }

    /// Forgets every cached answer and service.
    pub(crate) fn clear_cache(&self) -> PyResult<()> {
        self.get()?.clear_cache();
        Ok(())
    }

    /// `resolve(identifier, types, indexes)`.
    pub(crate) fn resolve(
        &self,
        identifier: &Bound<'_, PyAny>,
        types: Option<&Bound<'_, PyAny>>,
        indexes: Option<Vec<u32>>,
    ) -> PyResult<impl Call> {
        let asked = identifier_text(identifier)?;
        let q = query(types_arg(types)?, indexes);
        let r = self.get()?;
        Ok(async move {
            let (result, attempts) = r.resolve_traced(asked.as_str(), &q).await;
            Resolved {
                asked,
                result,
                attempts,
            }
        })
    }

    /// The input side of `resolve_many(identifiers, concurrency, types, indexes)`.
    pub(crate) fn feed(
        &self,
        identifiers: &Bound<'_, PyAny>,
        concurrency: Option<usize>,
        types: Option<&Bound<'_, PyAny>>,
        indexes: Option<Vec<u32>>,
    ) -> PyResult<Feed> {
        let concurrency = concurrency.unwrap_or(self.config.concurrency);
        if concurrency == 0 {
            return Err(PyValueError::new_err("concurrency: at least 1"));
        }
        Ok(Feed::new(
            identifiers.try_iter()?,
            concurrency,
            query(types_arg(types)?, indexes),
            self.get()?,
        ))
    }

    /// `resolve_urn(urn)`.
    pub(crate) fn resolve_urn(&self, urn: String) -> PyResult<impl Call> {
        let r = self.get()?;
        Ok(async move {
            let result = r.resolve_urn(urn.as_str()).await;
            UrnOutcome { urn, result }
        })
    }

    /// `locate(identifier, locatt, address, country)`.
    pub(crate) fn locate(
        &self,
        identifier: &Bound<'_, PyAny>,
        locatt: Option<&Bound<'_, PyAny>>,
        address: Option<String>,
        country: Option<String>,
    ) -> PyResult<impl Call> {
        let asked = identifier_text(identifier)?;
        let mut request = LocationRequest::new();
        for wish in types_arg(locatt)?.unwrap_or_default() {
            request = request.locatt(wish);
        }
        if let Some(address) = address {
            let ip = address.trim().parse().map_err(|_| {
                PyValueError::new_err(format!("address {address:?}: not an IP address"))
            })?;
            request = request.address(ip);
        }
        if let Some(country) = country {
            request = request.country(country);
        }
        let r = self.get()?;
        Ok(async move {
            let result = r.locate(asked.as_str(), &request).await;
            Located { asked, result }
        })
    }

    /// The core of `admin(identity, ...)`: the identity of the arguments, or this one's own.
    pub(crate) fn admin(
        &self,
        identity: Option<String>,
        secret: Option<&Bound<'_, PyAny>>,
        secret_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        key_passphrase: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Core> {
        let keyed = secret.is_some()
            || secret_file.is_some()
            || key_file.is_some()
            || key_passphrase.is_some();
        let spec =
            match (identity, &self.config.identity) {
                (None, _) if keyed => return Err(PyValueError::new_err(
                    "a secret or key file needs the identity (\"INDEX:HANDLE\") it is the key of",
                )),
                (Some(identity), _) => {
                    identity_spec(identity, secret, secret_file, key_file, key_passphrase)?
                }
                (None, Some(own)) => own.clone(),
                // No identity: a batch file authenticates with its own AUTHENTICATE lines, as
                // `admin batch` does; any other call is answered as anonymous (402 becomes
                // `AdminAuthenticationNeeded`).
                (None, None) => return Core::new(self.config.clone(), None),
            };
        Core::new(self.config.clone(), Some(spec))
    }

    /// An administration request about `handle` (or prefix): `work` on this process's
    /// admin, its failure raised with `handle` named.
    fn admin_call<F, T>(
        &self,
        handle: String,
        work: impl FnOnce(LibAdmin, String) -> F,
    ) -> PyResult<impl Call>
    where
        F: Future<Output = Result<T, AdminError>> + Send + 'static,
        T: for<'a> IntoPyObject<'a> + Send + 'static,
    {
        let fut = work(self.get()?.admin(), handle.clone());
        Ok(async move {
            let result = fut.await;
            AdminOutcome { handle, result }
        })
    }

    /// `create_handle(handle, values, overwrite)`.
    pub(crate) fn create_handle(
        &self,
        handle: String,
        values: &Bound<'_, PyAny>,
        overwrite: bool,
    ) -> PyResult<impl Call> {
        let values = values_from_py(values)?;
        let options = CreateOptions::new().overwrite(overwrite);
        self.admin_call(handle, move |a, h| async move {
            a.create_handle_with(&h, values, options).await
        })
    }

    /// `add_values(handle, values)`.
    pub(crate) fn add_values(
        &self,
        handle: String,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<impl Call> {
        let values = values_from_py(values)?;
        self.admin_call(
            handle,
            move |a, h| async move { a.add_values(&h, values).await },
        )
    }

    /// `modify_values(handle, values)`.
    pub(crate) fn modify_values(
        &self,
        handle: String,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<impl Call> {
        let values = values_from_py(values)?;
        self.admin_call(handle, move |a, h| async move {
            a.modify_values(&h, values).await
        })
    }

    /// `remove_values(handle, indexes)`.
    pub(crate) fn remove_values(&self, handle: String, indexes: Vec<u32>) -> PyResult<impl Call> {
        self.admin_call(handle, move |a, h| async move {
            a.remove_values(&h, indexes).await
        })
    }

    /// `delete_handle(handle)`.
    pub(crate) fn delete_handle(&self, handle: String) -> PyResult<impl Call> {
        self.admin_call(handle, move |a, h| async move { a.delete_handle(&h).await })
    }

    /// `list_handles(prefix)`.
    pub(crate) fn list_handles(&self, prefix: String) -> PyResult<impl Call> {
        self.admin_call(prefix, move |a, p| async move { a.list_handles(&p).await })
    }

    /// `run_batch(file, text=, concurrency=, base_dir=)`: the batch run with this admin's
    /// settings; a failed command is in its result, not raised.
    pub(crate) fn run_batch(
        &self,
        file: Option<PathBuf>,
        text: Option<String>,
        concurrency: usize,
        base_dir: Option<PathBuf>,
    ) -> PyResult<impl Call> {
        let job = batch::prepare(&self.config, file, text, concurrency, base_dir)?;
        Ok(batch::run(job))
    }
}

/// A resolution's outcome on its way to Python: the record, or the exception to raise.
pub(crate) struct Resolved {
    asked: String,
    result: Result<LibRecord, ResolveError>,
    attempts: Vec<Attempt>,
}

impl<'py> IntoPyObject<'py> for Resolved {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        match self.result {
            Ok(record) => Ok(Bound::new(py, HandleRecord::from_library(record))?.into_any()),
            Err(e) => Err(raise_resolve(py, &e, &self.asked, &self.attempts)),
        }
    }
}

/// A location's outcome on its way to Python: the URL (or `None`), or the exception to raise.
pub(crate) struct Located {
    asked: String,
    result: Result<Option<String>, ResolveError>,
}

impl<'py> IntoPyObject<'py> for Located {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        match self.result {
            Ok(url) => url.into_bound_py_any(py),
            Err(e) => Err(raise_resolve(py, &e, &self.asked, &[])),
        }
    }
}

/// A URN resolution's outcome on its way to Python: the URLs, or the exception to raise.
pub(crate) struct UrnOutcome {
    urn: String,
    result: Result<UrnAnswer, UrnError>,
}

impl<'py> IntoPyObject<'py> for UrnOutcome {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        match self.result {
            Ok(answer) => Ok(answer.urls.into_pyobject(py)?.into_any()),
            Err(e) => Err(PyErr::from_value(urn_error(py, &e, &self.urn)?)),
        }
    }
}

/// An administration request's outcome on its way to Python.
pub(crate) struct AdminOutcome<T> {
    handle: String,
    result: Result<T, AdminError>,
}

impl<'py, T: IntoPyObject<'py>> IntoPyObject<'py> for AdminOutcome<T> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        match self.result {
            Ok(v) => v.into_bound_py_any(py),
            Err(e) => Err(raise_admin(py, &e, &self.handle)),
        }
    }
}

/// The `#[pymethods]` of a resolver class `$class` (a struct with a `core: Core` field)
/// whose calls are handed to Python by the [`Mode`] `$mode`, whose `resolve_many` returns a
/// `$many` (made `From` a [`Feed`]) and whose `admin` an `$admin` (a struct with a `core`
/// field). The one copy of the constructor's and the calls' signatures and documentation.
/// Invoked where `pyo3::prelude::*` is in scope.
macro_rules! resolver_methods {
    ($class:ident, $mode:ty, $many:ty, $admin:ident) => {
        #[pyo3::pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (root=None, server=None, proxy=None, urn_resolver=None,
                        transport="udp", timeout=10.0, certify=false, authoritative=false,
                        follow_aliases=false, cache=true, concurrency=16, *, public_only=None,
                        identity=None, secret=None, secret_file=None, key_file=None,
                        key_passphrase=None))]
            #[allow(clippy::too_many_arguments)]
            fn new(
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
                identity: Option<String>,
                secret: Option<&Bound<'_, PyAny>>,
                secret_file: Option<std::path::PathBuf>,
                key_file: Option<std::path::PathBuf>,
                key_passphrase: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let config = $crate::config::Config::new(
                    root,
                    server,
                    proxy,
                    urn_resolver,
                    transport,
                    timeout,
                    certify,
                    authoritative,
                    follow_aliases,
                    cache,
                    concurrency,
                    public_only,
                )?;
                let identity = identity
                    .map(|i| {
                        $crate::config::identity_spec(
                            i,
                            secret,
                            secret_file,
                            key_file,
                            key_passphrase,
                        )
                    })
                    .transpose()?;
                Ok($class {
                    core: $crate::core::Core::new(config, identity)?,
                })
            }

            /// Resolves one identifier (any form: `PREFIX/SUFFIX`, `hdl:`, `doi:`, resolver
            /// URLs, CORDRA ids) to its values; `types` and `indexes` select values (any
            /// type OR any index). Raises a `ResolveError` subclass when there are none.
            #[pyo3(signature = (identifier, types=None, indexes=None))]
            fn resolve<'py>(
                &self,
                py: Python<'py>,
                identifier: &Bound<'py, PyAny>,
                types: Option<&Bound<'py, PyAny>>,
                indexes: Option<Vec<u32>>,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.resolve(identifier, types, indexes)?)
            }

            /// Resolves every identifier of `identifiers` (any iterable, read lazily: at
            /// most `concurrency` ahead of what has been read back), yielding `(input,
            /// HandleRecord | ResolveError)` in completion order (`async for` on
            /// `AsyncResolver`). Closing the iterator (`close()`, `aclose()`) or dropping it
            /// cancels the resolutions in flight.
            #[pyo3(signature = (identifiers, concurrency=None, *, types=None, indexes=None))]
            fn resolve_many(
                &self,
                identifiers: &Bound<'_, PyAny>,
                concurrency: Option<usize>,
                types: Option<&Bound<'_, PyAny>>,
                indexes: Option<Vec<u32>>,
            ) -> PyResult<$many> {
                let feed = self.core.feed(identifiers, concurrency, types, indexes)?;
                Ok(<$many>::from(feed))
            }

            /// Resolves a URN (`urn:fdc:`, `urn-3:`) over RFC 2169 to its URLs, in the
            /// resolver's order of preference.
            fn resolve_urn<'py>(
                &self,
                py: Python<'py>,
                urn: String,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.resolve_urn(urn)?)
            }

            /// The URL the handle.net proxy would redirect to for `identifier`: HS_ALIAS
            /// values followed first (at most 20 hops, as the proxy), then one location of
            /// the handle's `10320/loc` and `URL` values chosen as the proxy chooses, by the
            /// `locatt` wishes (`"view:json"`, a list of them in order), the client's
            /// `address` and `country`; `None` when it has none.
            #[pyo3(signature = (identifier, *, locatt=None, address=None, country=None))]
            fn locate<'py>(
                &self,
                py: Python<'py>,
                identifier: &Bound<'py, PyAny>,
                locatt: Option<&Bound<'py, PyAny>>,
                address: Option<String>,
                country: Option<String>,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.locate(identifier, locatt, address, country)?)
            }

            /// Administration as `identity` (`"INDEX:HANDLE"`, e.g.
            /// `"300:0.NA/20.500.1"`), whose key is `secret` (HS_SECKEY), `secret_file` or
            /// `key_file` (HS_PUBKEY: the reference key file or PKCS#8 PEM;
            /// `key_passphrase` for an encrypted one). Without arguments, the resolver's
            /// own identity.
            #[pyo3(signature = (identity=None, secret=None, secret_file=None, key_file=None,
                        key_passphrase=None))]
            fn admin(
                &self,
                identity: Option<String>,
                secret: Option<&Bound<'_, PyAny>>,
                secret_file: Option<std::path::PathBuf>,
                key_file: Option<std::path::PathBuf>,
                key_passphrase: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<$admin> {
                let core =
                    self.core
                        .admin(identity, secret, secret_file, key_file, key_passphrase)?;
                Ok($admin { core })
            }

            /// Forgets every cached answer and service.
            fn clear_cache(&self) -> PyResult<()> {
                self.core.clear_cache()
            }

            /// The default number of resolutions `resolve_many` runs at once.
            #[getter]
            fn concurrency(&self) -> usize {
                self.core.concurrency()
            }

            fn __repr__(&self) -> String {
                self.core.repr(stringify!($class))
            }
        }
    };
}
pub(crate) use resolver_methods;

/// The `#[pymethods]` of an admin class `$class` (a struct with a `core: Core` field)
/// whose calls are handed to Python by the [`Mode`] `$mode`. The one copy of the calls'
/// signatures and documentation. Invoked where `pyo3::prelude::*` is in scope.
macro_rules! admin_methods {
    ($class:ident, $mode:ty) => {
        #[pyo3::pymethods]
        impl $class {
            /// Creates `handle` with `values` (give an HS_ADMIN value, or nobody may change
            /// it afterwards); returns the handle as created. With `overwrite`, an existing
            /// handle's values are replaced by `values` (the request's OW flag) instead of
            /// failing.
            #[pyo3(signature = (handle, values, overwrite = false))]
            fn create_handle<'py>(
                &self,
                py: Python<'py>,
                handle: String,
                values: &Bound<'py, PyAny>,
                overwrite: bool,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.create_handle(handle, values, overwrite)?)
            }

            /// Adds `values` to `handle` (their indexes must be free).
            fn add_values<'py>(
                &self,
                py: Python<'py>,
                handle: String,
                values: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.add_values(handle, values)?)
            }

            /// Replaces the values of `handle` at the indexes of `values`.
            fn modify_values<'py>(
                &self,
                py: Python<'py>,
                handle: String,
                values: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.modify_values(handle, values)?)
            }

            /// Removes the values of `handle` at `indexes`.
            fn remove_values<'py>(
                &self,
                py: Python<'py>,
                handle: String,
                indexes: Vec<u32>,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.remove_values(handle, indexes)?)
            }

            /// Deletes `handle`.
            fn delete_handle<'py>(
                &self,
                py: Python<'py>,
                handle: String,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.delete_handle(handle)?)
            }

            /// Every handle under `prefix`.
            fn list_handles<'py>(
                &self,
                py: Python<'py>,
                prefix: String,
            ) -> PyResult<Bound<'py, PyAny>> {
                <$mode>::finish(py, self.core.list_handles(prefix)?)
            }

            /// Runs a batch file of the reference's `hdl-genericbatch` (`file`, or its
            /// `text`): independent commands at once (at most `concurrency`), one handle's
            /// commands in file order, AUTHENTICATE / SESSIONSETUP / HOME / UNHOME and
            /// `0.NA/` handles as barriers; the identities are the file's AUTHENTICATE
            /// lines' (as with `hdl-genericbatch`, a change before the first fails), with
            /// this admin's settings (servers, root, transports, deadline). FILE values are
            /// read relative to `base_dir` (default: the batch file's folder). Returns the
            /// `BatchResult`; a failed command is in it, not raised. Stopping the call
            /// (Ctrl-C, `KeyboardInterrupt`; or cancelling the awaitable) cancels the
            /// commands in flight.
            #[pyo3(signature = (file=None, *, text=None, concurrency=16, base_dir=None))]
            fn run_batch<'py>(
                &self,
                py: Python<'py>,
                file: Option<std::path::PathBuf>,
                text: Option<String>,
                concurrency: usize,
                base_dir: Option<std::path::PathBuf>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let call = self.core.run_batch(file, text, concurrency, base_dir)?;
                <$mode>::finish(py, call)
            }

            fn __repr__(&self) -> String {
                self.core.repr(stringify!($class))
            }
        }
    };
}
pub(crate) use admin_methods;
