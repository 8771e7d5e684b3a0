//! `Resolver`: the blocking resolver (the library's `blocking::Resolver`, one current-thread
//! runtime per resolver and process), its `resolve_many` iterator and its `Admin`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use handle_resolver::blocking::Resolver as Blocking;
use handle_resolver::{BuildError, CreateOptions};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::batch::{self, BatchResult};
use crate::config::{identifier_text, identity_spec, query, types_arg, Config, IdentitySpec};
use crate::errors::{raise_admin, raise_resolve, urn_error};
use crate::many::{Feed, Outcome, Pending};
use crate::record::{values_from_py, HandleRecord};
use crate::runtime::{block_on, PerProcess};

pub(crate) fn build_error(e: BuildError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err("a lock was poisoned by a panic"))
}

/// The resolver of `config` for this process, built on first use in each process.
pub(crate) struct ProcessResolver {
    config: Config,
    slot: Mutex<PerProcess<Blocking>>,
}

impl ProcessResolver {
    pub(crate) fn new(config: Config) -> PyResult<Self> {
        let first = Blocking::from_builder(config.builder()?).map_err(build_error)?;
        Ok(ProcessResolver {
            config,
            slot: Mutex::new(PerProcess::new(first)),
        })
    }

    pub(crate) fn get(&self) -> PyResult<Blocking> {
        let mut slot = lock(&self.slot)?;
        if let Some(r) = slot.get() {
            return Ok(r.clone());
        }
        let fresh = Blocking::from_builder(self.config.builder()?).map_err(build_error)?;
        *slot = PerProcess::new(fresh.clone());
        Ok(fresh)
    }
}

/// A blocking Handle System resolver. Its calls release the GIL while they wait, and
/// Ctrl-C interrupts them at once (`KeyboardInterrupt`; the requests in flight are
/// cancelled). Safe to share between threads, and usable in a child after `fork`.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct Resolver {
    inner: ProcessResolver,
}

#[pymethods]
impl Resolver {
    #[new]
    #[pyo3(signature = (root=None, server=None, proxy=None, urn_resolver=None, transport="udp",
        timeout=10.0, certify=false, authoritative=false, follow_aliases=false, cache=true,
        concurrency=16, *, public_only=None, identity=None, secret=None, secret_file=None,
        key_file=None, key_passphrase=None))]
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
        secret_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        key_passphrase: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut config = Config::new(
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
        if let Some(identity) = identity {
            config = config.with_identity(identity_spec(
                identity,
                secret,
                secret_file,
                key_file,
                key_passphrase,
            )?);
        }
        Ok(Resolver {
            inner: ProcessResolver::new(config)?,
        })
    }

    /// Resolves one identifier (any form: `PREFIX/SUFFIX`, `hdl:`, `doi:`, resolver URLs,
    /// CORDRA ids) to its values; `types` and `indexes` select values (any type OR any
    /// index). Raises a `ResolveError` subclass when there are none.
    #[pyo3(signature = (identifier, types=None, indexes=None))]
    fn resolve(
        &self,
        py: Python<'_>,
        identifier: &Bound<'_, PyAny>,
        types: Option<&Bound<'_, PyAny>>,
        indexes: Option<Vec<u32>>,
    ) -> PyResult<HandleRecord> {
        let text = identifier_text(identifier)?;
        let q = query(types_arg(types)?, indexes);
        let rt = self.inner.get()?;
        let r = rt.as_async();
        let (result, attempts) = block_on(py, &rt, r.resolve_traced(text.as_str(), &q))?;
        match result {
            Ok(record) => Ok(HandleRecord::from_library(record)),
            Err(e) => Err(raise_resolve(py, &e, &text, &attempts)),
        }
    }

    /// Resolves every identifier of `identifiers` (any iterable, read lazily: at most
    /// `concurrency` ahead of what has been read back), yielding `(input, HandleRecord |
    /// ResolveError)` in completion order. Closing the iterator (or dropping it) cancels the
    /// resolutions in flight.
    #[pyo3(signature = (identifiers, concurrency=None, *, types=None, indexes=None))]
    fn resolve_many(
        &self,
        identifiers: &Bound<'_, PyAny>,
        concurrency: Option<usize>,
        types: Option<&Bound<'_, PyAny>>,
        indexes: Option<Vec<u32>>,
    ) -> PyResult<ResolveMany> {
        let concurrency = concurrency.unwrap_or(self.inner.config.concurrency);
        if concurrency == 0 {
            return Err(PyValueError::new_err("concurrency: at least 1"));
        }
        let rt = self.inner.get()?;
        let feed = Feed::new(
            identifiers.try_iter()?,
            concurrency,
            query(types_arg(types)?, indexes),
            rt.as_async().clone(),
        );
        Ok(ResolveMany {
            rt,
            state: Mutex::new(ManyState {
                feed,
                running: FuturesUnordered::new(),
                done: VecDeque::new(),
            }),
        })
    }

    /// Resolves a URN (`urn:fdc:`, `urn-3:`) over RFC 2169 to its URLs, in the resolver's
    /// order of preference.
    fn resolve_urn(&self, py: Python<'_>, urn: &str) -> PyResult<Vec<String>> {
        let rt = self.inner.get()?;
        match block_on(py, &rt, rt.as_async().resolve_urn(urn))? {
            Ok(answer) => Ok(answer.urls),
            Err(e) => Err(PyErr::from_value(urn_error(py, &e, urn)?)),
        }
    }

    /// Administration as `identity` (`"INDEX:HANDLE"`, e.g. `"300:0.NA/20.500.1"`), whose
    /// key is `secret` (HS_SECKEY), `secret_file` or `key_file` (HS_PUBKEY: the reference
    /// key file or PKCS#8 PEM; `key_passphrase` for an encrypted one). Without arguments,
    /// the resolver's own identity.
    #[pyo3(signature = (identity=None, secret=None, secret_file=None, key_file=None, key_passphrase=None))]
    fn admin(
        &self,
        identity: Option<String>,
        secret: Option<&Bound<'_, PyAny>>,
        secret_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        key_passphrase: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Admin> {
        let spec = admin_identity(
            &self.inner.config,
            identity,
            secret,
            secret_file,
            key_file,
            key_passphrase,
        )?;
        Ok(Admin {
            inner: ProcessResolver::new(self.inner.config.with_identity(spec))?,
        })
    }

    /// Forgets every cached answer and service.
    fn clear_cache(&self) -> PyResult<()> {
        self.inner.get()?.clear_cache();
        Ok(())
    }

    /// The default number of resolutions `resolve_many` runs at once.
    #[getter]
    fn concurrency(&self) -> usize {
        self.inner.config.concurrency
    }

    fn __repr__(&self) -> String {
        repr("Resolver", &self.inner.config)
    }
}

pub(crate) fn repr(name: &str, c: &Config) -> String {
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

/// The identity of `admin(...)`: the arguments, or the resolver's own.
pub(crate) fn admin_identity(
    config: &Config,
    identity: Option<String>,
    secret: Option<&Bound<'_, PyAny>>,
    secret_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    key_passphrase: Option<&Bound<'_, PyAny>>,
) -> PyResult<IdentitySpec> {
    match (identity, &config.identity) {
        (Some(identity), _) => {
            identity_spec(identity, secret, secret_file, key_file, key_passphrase)
        }
        (None, Some(own)) => Ok(own.clone()),
        (None, None) => Err(PyValueError::new_err(
            "admin() needs an identity (\"INDEX:HANDLE\") and its key",
        )),
    }
}

struct ManyState {
    feed: Feed,
    running: FuturesUnordered<Pending>,
    done: VecDeque<(u64, Outcome)>,
}

/// The results of `Resolver.resolve_many`, in completion order; the resolutions progress
/// while it is read.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct ResolveMany {
    rt: Blocking,
    state: Mutex<ManyState>,
}

impl ResolveMany {
    fn state(&self) -> PyResult<MutexGuard<'_, ManyState>> {
        self.state.try_lock().map_err(|e| match e {
            std::sync::TryLockError::WouldBlock => PyRuntimeError::new_err(
                "this resolve_many iterator is being read by another thread",
            ),
            std::sync::TryLockError::Poisoned(_) => {
                PyRuntimeError::new_err("a lock was poisoned by a panic")
            }
        })
    }
}

#[pymethods]
impl ResolveMany {
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = slf.py();
        let this = slf.get();
        let mut guard = this.state()?;
        let st = &mut *guard;
        let running = &mut st.running;
        st.feed.fill(py, |p| running.push(p))?;
        if st.done.is_empty() {
            if st.running.is_empty() {
                return Ok(None);
            }
            let (running, done) = (&mut st.running, &mut st.done);
            block_on(py, &this.rt, async {
                if let Some(first) = running.next().await {
                    done.push_back(first);
                    // Whatever else finished meanwhile, without waiting again.
                    while let Some(Some(more)) = running.next().now_or_never() {
                        done.push_back(more);
                    }
                }
            })?;
        }
        match st.done.pop_front() {
            Some((id, outcome)) => st.feed.hand_back(py, id, outcome).map(Some),
            None => Ok(None),
        }
    }

    /// Stops: no more input is read, and the resolutions in flight are cancelled.
    fn close(&self) -> PyResult<()> {
        let mut st = self.state()?;
        st.feed.close();
        st.running = FuturesUnordered::new();
        st.done.clear();
        Ok(())
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }
}

/// Administration of handles: each request goes to a primary site of the handle's prefix
/// over TCP (or HTTP), answering the server's challenge as the identity. Values are
/// `HandleValue`s or REST-shaped dicts (`{"index": 1, "type": "URL", "data": {"format":
/// "string", "value": "..."}}`).
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct Admin {
    inner: ProcessResolver,
}

impl Admin {
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        handle: &str,
        work: impl FnOnce(
            handle_resolver::Admin,
        )
            -> futures::future::BoxFuture<'static, Result<T, handle_resolver::AdminError>>,
    ) -> PyResult<T> {
        let rt = self.inner.get()?;
        let fut = work(rt.as_async().admin());
        block_on(py, &rt, fut)?.map_err(|e| raise_admin(py, &e, handle))
    }
}

#[pymethods]
impl Admin {
    /// Creates `handle` with `values` (give an HS_ADMIN value, or nobody may change it
    /// afterwards); returns the handle as created. With `overwrite`, an existing handle's
    /// values are replaced by `values` (the request's OW flag) instead of failing.
    #[pyo3(signature = (handle, values, overwrite = false))]
    fn create_handle(
        &self,
        py: Python<'_>,
        handle: String,
        values: &Bound<'_, PyAny>,
        overwrite: bool,
    ) -> PyResult<String> {
        let values = values_from_py(values)?;
        let h = handle.clone();
        let options = CreateOptions::new().overwrite(overwrite);
        self.run(py, &handle, move |a| {
            async move { a.create_handle_with(&h, values, options).await }.boxed()
        })
    }

    /// Adds `values` to `handle` (their indexes must be free).
    fn add_values(
        &self,
        py: Python<'_>,
        handle: String,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let values = values_from_py(values)?;
        let h = handle.clone();
        self.run(py, &handle, move |a| {
            async move { a.add_values(&h, values).await }.boxed()
        })
    }

    /// Replaces the values of `handle` at the indexes of `values`.
    fn modify_values(
        &self,
        py: Python<'_>,
        handle: String,
        values: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let values = values_from_py(values)?;
        let h = handle.clone();
        self.run(py, &handle, move |a| {
            async move { a.modify_values(&h, values).await }.boxed()
        })
    }

    /// Removes the values of `handle` at `indexes`.
    fn remove_values(&self, py: Python<'_>, handle: String, indexes: Vec<u32>) -> PyResult<()> {
        let h = handle.clone();
        self.run(py, &handle, move |a| {
            async move { a.remove_values(&h, indexes).await }.boxed()
        })
    }

    /// Deletes `handle`.
    fn delete_handle(&self, py: Python<'_>, handle: String) -> PyResult<()> {
        let h = handle.clone();
        self.run(py, &handle, move |a| {
            async move { a.delete_handle(&h).await }.boxed()
        })
    }

    /// Every handle under `prefix`.
    fn list_handles(&self, py: Python<'_>, prefix: String) -> PyResult<Vec<String>> {
        let p = prefix.clone();
        self.run(py, &prefix, move |a| {
            async move { a.list_handles(&p).await }.boxed()
        })
    }

    /// Runs a batch file of the reference's `hdl-genericbatch` (`file`, or its `text`):
    /// independent commands at once (at most `concurrency`), one handle's commands in file
    /// order, AUTHENTICATE / SESSIONSETUP / HOME / UNHOME and `0.NA/` handles as barriers;
    /// the identities are the file's AUTHENTICATE lines' (as with `hdl-genericbatch`, a
    /// change before the first fails), with this admin's settings (servers, root,
    /// transports, deadline). FILE values are read relative to `base_dir` (default: the
    /// batch file's folder). Returns the
    /// `BatchResult`; a failed command is in it, not raised. Ctrl-C stops the run at once
    /// (`KeyboardInterrupt`; commands in flight are cancelled).
    #[pyo3(signature = (file=None, *, text=None, concurrency=16, base_dir=None))]
    fn run_batch(
        &self,
        py: Python<'_>,
        file: Option<PathBuf>,
        text: Option<String>,
        concurrency: usize,
        base_dir: Option<PathBuf>,
    ) -> PyResult<BatchResult> {
        let job = batch::prepare(&self.inner.config, file, text, concurrency, base_dir)?;
        let rt = self.inner.get()?;
        block_on(py, &rt, batch::run(job))
    }

    fn __repr__(&self) -> String {
        repr("Admin", &self.inner.config)
    }
}
