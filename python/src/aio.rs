//! `AsyncResolver`: the resolver for asyncio, its `resolve_many` async iterator and its
//! `AsyncAdmin`. Their calls are the [`Core`]'s, as awaitables run on the process's shared
//! tokio runtime ([`Asyncio`]); cancelling one cancels the requests it has in flight.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::stream::{FuturesUnordered, StreamExt};
use pyo3::exceptions::PyStopAsyncIteration;
use pyo3::prelude::*;
use pyo3_async_runtimes::generic::future_into_py;
use tokio::sync::Notify;

use crate::core::{admin_methods, lock, resolver_methods, Call, Core, Mode};
use crate::many::{Feed, Outcome, Pending};
use crate::runtime::SharedRuntime;

/// The asyncio [`Mode`]: a call is an awaitable run on the shared runtime; cancelling it
/// drops the call, which cancels the requests in flight.
pub(crate) struct Asyncio;

impl Mode for Asyncio {
    fn finish(py: Python<'_>, call: impl Call) -> PyResult<Bound<'_, PyAny>> {
        future_into_py::<SharedRuntime, _, _>(py, async move { Ok(call.await) })
    }
}

/// The asyncio Handle System resolver: the same arguments as `Resolver`; `resolve`,
/// `resolve_urn` and the `Admin` calls are awaitables, `resolve_many` an async iterator.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct AsyncResolver {
    core: Core,
}

resolver_methods!(AsyncResolver, Asyncio, AsyncResolveMany, AsyncAdmin);

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

impl From<Feed> for AsyncResolveMany {
    fn from(feed: Feed) -> Self {
        AsyncResolveMany {
            feed: Arc::new(Mutex::new(feed)),
            queued: Arc::new(Mutex::new(Vec::new())),
            running: Arc::new(tokio::sync::Mutex::new(FuturesUnordered::new())),
            closed: Arc::new(AtomicBool::new(false)),
            closing: Arc::new(Notify::new()),
        }
    }
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
    core: Core,
}

admin_methods!(AsyncAdmin, Asyncio);
