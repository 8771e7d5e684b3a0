//! `AsyncResolver`: the resolver for asyncio. Its calls are awaitables run on the process's
//! shared tokio runtime (pyo3-async-runtimes); cancelling one cancels the requests it has in
//! flight.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use handle_resolver::{
    AdminError, Attempt, CreateOptions, HandleRecord as LibRecord, ResolveError, Resolver as Lib,
};
use pyo3::exceptions::{PyRuntimeError, PyStopAsyncIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use pyo3_async_runtimes::generic::future_into_py;
use tokio::sync::Notify;

use crate::config::{identifier_text, query, types_arg, Config};
use crate::errors::{raise_admin, raise_resolve, urn_error};
use crate::many::{Feed, Outcome, Pending};
use crate::record::{values_from_py, HandleRecord};
use crate::resolver::{admin_identity, build_error, repr};
use crate::runtime::{shared, PerProcess, SharedRuntime};

fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.lock()
        .map_err(|_| PyRuntimeError::new_err("a lock was poisoned by a panic"))
}

/// The async resolver of `config` for this process, built on the shared runtime.
struct ProcessAsync {
    config: Config,
    slot: Mutex<PerProcess<Lib>>,
}

impl ProcessAsync {
    fn build(config: &Config) -> PyResult<Lib> {
        let rt = shared()?;
        let _entered = rt.enter();
        config.builder()?.build().map_err(build_error)
    }

    fn new(config: Config) -> PyResult<Self> {
        let first = Self::build(&config)?;
        Ok(ProcessAsync {
            config,
            slot: Mutex::new(PerProcess::new(first)),
        })
    }

    fn get(&self) -> PyResult<Lib> {
        let mut slot = lock(&self.slot)?;
        if let Some(r) = slot.get() {
            return Ok(r.clone());
        }
        let fresh = Self::build(&self.config)?;
        *slot = PerProcess::new(fresh.clone());
        Ok(fresh)
    }
}

/// A resolution's outcome on its way to Python: the record, or the exception to raise.
struct RecordOrError {
    asked: String,
    result: Result<LibRecord, ResolveError>,
    attempts: Vec<Attempt>,
}

impl<'py> IntoPyObject<'py> for RecordOrError {
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

/// The asyncio Handle System resolver: the same arguments as `Resolver`; `resolve`,
/// `resolve_urn` and the `Admin` calls are awaitables, `resolve_many` an async iterator.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct AsyncResolver {
    inner: ProcessAsync,
}

#[pymethods]
impl AsyncResolver {
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
            config = config.with_identity(crate::config::identity_spec(
                identity,
                secret,
                secret_file,
                key_file,
                key_passphrase,
            )?);
        }
        Ok(AsyncResolver {
            inner: ProcessAsync::new(config)?,
        })
    }

    /// Awaitable: `Resolver.resolve`.
    #[pyo3(signature = (identifier, types=None, indexes=None))]
    fn resolve<'py>(
        &self,
        py: Python<'py>,
        identifier: &Bound<'py, PyAny>,
        types: Option<&Bound<'py, PyAny>>,
        indexes: Option<Vec<u32>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let asked = identifier_text(identifier)?;
        let q = query(types_arg(types)?, indexes);
        let r = self.inner.get()?;
        future_into_py::<SharedRuntime, _, _>(py, async move {
            let (result, attempts) = r.resolve_traced(asked.as_str(), &q).await;
            Ok(RecordOrError {
                asked,
                result,
                attempts,
            })
        })
    }

    /// `async for input, outcome in resolver.resolve_many(ids)`: `Resolver.resolve_many`
    /// as an async iterator (`aclose()` cancels what is in flight).
    #[pyo3(signature = (identifiers, concurrency=None, *, types=None, indexes=None))]
    fn resolve_many(
        &self,
        identifiers: &Bound<'_, PyAny>,
        concurrency: Option<usize>,
        types: Option<&Bound<'_, PyAny>>,
        indexes: Option<Vec<u32>>,
    ) -> PyResult<AsyncResolveMany> {
        let concurrency = concurrency.unwrap_or(self.inner.config.concurrency);
        if concurrency == 0 {
            return Err(PyValueError::new_err("concurrency: at least 1"));
        }
        let feed = Feed::new(
            identifiers.try_iter()?,
            concurrency,
            query(types_arg(types)?, indexes),
            self.inner.get()?,
        );
        Ok(AsyncResolveMany {
            feed: Arc::new(Mutex::new(feed)),
            queued: Arc::new(Mutex::new(Vec::new())),
            running: Arc::new(tokio::sync::Mutex::new(FuturesUnordered::new())),
            closed: Arc::new(AtomicBool::new(false)),
            closing: Arc::new(Notify::new()),
        })
    }

    /// Awaitable: `Resolver.resolve_urn`.
    fn resolve_urn<'py>(&self, py: Python<'py>, urn: String) -> PyResult<Bound<'py, PyAny>> {
        let r = self.inner.get()?;
        future_into_py::<SharedRuntime, _, _>(py, async move {
            let result = r.resolve_urn(urn.as_str()).await;
            Ok(UrnOutcome { urn, result })
        })
    }

    /// `Resolver.admin`, with awaitable calls.
    #[pyo3(signature = (identity=None, secret=None, secret_file=None, key_file=None, key_passphrase=None))]
    fn admin(
        &self,
        identity: Option<String>,
        secret: Option<&Bound<'_, PyAny>>,
        secret_file: Option<PathBuf>,
        key_file: Option<PathBuf>,
        key_passphrase: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<AsyncAdmin> {
        let spec = admin_identity(
            &self.inner.config,
            identity,
            secret,
            secret_file,
            key_file,
            key_passphrase,
        )?;
        Ok(AsyncAdmin {
            inner: ProcessAsync::new(self.inner.config.with_identity(spec))?,
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
        repr("AsyncResolver", &self.inner.config)
    }
}

struct UrnOutcome {
    urn: String,
    result: Result<handle_resolver::UrnAnswer, handle_resolver::UrnError>,
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

/// The next result of an `AsyncResolveMany`, or its end.
enum Next {
    Item(Box<ItemGuard>),
    Stop,
}

/// A finished resolution not yet handed to Python; dropped unread (its awaitable was
/// cancelled), it still leaves the window.
struct ItemGuard {
    feed: Arc<Mutex<Feed>>,
    id: u64,
    outcome: Option<Outcome>,
}

impl Drop for ItemGuard {
    fn drop(&mut self) {
        if self.outcome.take().is_some() {
            if let Ok(mut feed) = self.feed.lock() {
                feed.forget(self.id);
            }
        }
    }
}

impl<'py> IntoPyObject<'py> for Next {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        match self {
            Next::Stop => Err(PyStopAsyncIteration::new_err(())),
            Next::Item(mut item) => match item.outcome.take() {
                Some(outcome) => lock(&item.feed)?.hand_back(py, item.id, outcome),
                None => Err(PyStopAsyncIteration::new_err(())),
            },
        }
    }
}

/// The results of `AsyncResolver.resolve_many`, in completion order (`async for`).
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct AsyncResolveMany {
    feed: Arc<Mutex<Feed>>,
    /// Resolutions started since the last `__anext__` took them into `running`.
    queued: Arc<Mutex<Vec<Pending>>>,
    running: Arc<tokio::sync::Mutex<FuturesUnordered<Pending>>>,
    closed: Arc<AtomicBool>,
    closing: Arc<Notify>,
}

#[pymethods]
impl AsyncResolveMany {
    fn __aiter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __anext__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        if this.closed.load(Ordering::Acquire) {
            return Err(PyStopAsyncIteration::new_err(()));
        }
        {
            let mut feed = lock(&this.feed)?;
            let mut queued = lock(&this.queued)?;
            feed.fill(py, |p| queued.push(p))?;
            if feed.finished() {
                return Err(PyStopAsyncIteration::new_err(()));
            }
        }
        let feed = this.feed.clone();
        let queued = this.queued.clone();
        let running = this.running.clone();
        let closed = this.closed.clone();
        let closing = this.closing.clone();
        future_into_py::<SharedRuntime, _, _>(py, async move {
            let mut running = running.lock().await;
            {
                let mut queued = lock(&queued)?;
                running.extend(queued.drain(..));
            }
            if closed.load(Ordering::Acquire) {
                return Ok(Next::Stop);
            }
            let next = tokio::select! {
                next = running.next() => next,
                _ = closing.notified() => None,
            };
            Ok(match next {
                Some((id, outcome)) => Next::Item(Box::new(ItemGuard {
                    feed,
                    id,
                    outcome: Some(outcome),
                })),
                None => Next::Stop,
            })
        })
    }

    /// Awaitable: stops reading the input and cancels the resolutions in flight.
    fn aclose<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.close()?;
        let running = self.running.clone();
        future_into_py::<SharedRuntime, _, _>(py, async move {
            *running.lock().await = FuturesUnordered::new();
            Ok(())
        })
    }

    /// Stops reading the input and cancels the resolutions in flight (at once when no
    /// `__anext__` is waiting, else as soon as it wakes).
    fn close(&self) -> PyResult<()> {
        self.closed.store(true, Ordering::Release);
        self.closing.notify_waiters();
        lock(&self.feed)?.close();
        lock(&self.queued)?.clear();
        if let Ok(mut running) = self.running.try_lock() {
            *running = FuturesUnordered::new();
        }
        Ok(())
    }
}

/// `Admin` with awaitable calls.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct AsyncAdmin {
    inner: ProcessAsync,
}

/// An administration request's outcome on its way to Python.
struct AdminOutcome<T> {
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

impl AsyncAdmin {
    fn run<'py, T>(
        &self,
        py: Python<'py>,
        handle: String,
        work: impl FnOnce(handle_resolver::Admin, String) -> BoxFuture<'static, Result<T, AdminError>>,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        T: for<'a> IntoPyObject<'a> + Send + 'static,
    {
        let admin = self.inner.get()?.admin();
        let fut = work(admin, handle.clone());
        future_into_py::<SharedRuntime, _, _>(py, async move {
            let result = fut.await;
            Ok(AdminOutcome { handle, result })
        })
    }
}

#[pymethods]
impl AsyncAdmin {
    /// Awaitable: `Admin.create_handle`.
    #[pyo3(signature = (handle, values, overwrite = false))]
    fn create_handle<'py>(
        &self,
        py: Python<'py>,
        handle: String,
        values: &Bound<'py, PyAny>,
        overwrite: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = values_from_py(values)?;
        let options = CreateOptions::new().overwrite(overwrite);
        self.run(py, handle, move |a, h| {
            async move { a.create_handle_with(&h, values, options).await }.boxed()
        })
    }

    /// Awaitable: `Admin.add_values`.
    fn add_values<'py>(
        &self,
        py: Python<'py>,
        handle: String,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = values_from_py(values)?;
        self.run(py, handle, move |a, h| {
            async move { a.add_values(&h, values).await }.boxed()
        })
    }

    /// Awaitable: `Admin.modify_values`.
    fn modify_values<'py>(
        &self,
        py: Python<'py>,
        handle: String,
        values: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = values_from_py(values)?;
        self.run(py, handle, move |a, h| {
            async move { a.modify_values(&h, values).await }.boxed()
        })
    }

    /// Awaitable: `Admin.remove_values`.
    fn remove_values<'py>(
        &self,
        py: Python<'py>,
        handle: String,
        indexes: Vec<u32>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.run(py, handle, move |a, h| {
            async move { a.remove_values(&h, indexes).await }.boxed()
        })
    }

    /// Awaitable: `Admin.run_batch` (on the shared runtime; cancelling the awaitable
    /// cancels the commands in flight).
    #[pyo3(signature = (file=None, *, text=None, concurrency=16, base_dir=None))]
    fn run_batch<'py>(
        &self,
        py: Python<'py>,
        file: Option<PathBuf>,
        text: Option<String>,
        concurrency: usize,
        base_dir: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let job = crate::batch::prepare(&self.inner.config, file, text, concurrency, base_dir)?;
        future_into_py::<SharedRuntime, _, _>(py, async move { Ok(crate::batch::run(job).await) })
    }

    /// Awaitable: `Admin.delete_handle`.
    fn delete_handle<'py>(&self, py: Python<'py>, handle: String) -> PyResult<Bound<'py, PyAny>> {
        self.run(py, handle, move |a, h| {
            async move { a.delete_handle(&h).await }.boxed()
        })
    }

    /// Awaitable: `Admin.list_handles`.
    fn list_handles<'py>(&self, py: Python<'py>, prefix: String) -> PyResult<Bound<'py, PyAny>> {
        self.run(py, prefix, move |a, p| {
            async move { a.list_handles(&p).await }.boxed()
        })
    }

    fn __repr__(&self) -> String {
        repr("AsyncAdmin", &self.inner.config)
    }
}
