//! `Resolver`: the blocking resolver, its `resolve_many` iterator and its `Admin`. Their
//! calls are the [`Core`]'s, waited for on the shared runtime ([`Blocking`]).

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::core::{admin_methods, resolver_methods, Call, Core, Mode};
use crate::many::{Feed, Outcome, Pending};
use crate::runtime::{block_on, shared};

/// The blocking [`Mode`]: a call is run to completion on the shared runtime without the
/// GIL, and Ctrl-C interrupts it at once (`KeyboardInterrupt`; the requests in flight are
/// cancelled).
pub(crate) struct Blocking;

impl Mode for Blocking {
    fn finish(py: Python<'_>, call: impl Call) -> PyResult<Bound<'_, PyAny>> {
        let rt = shared()?;
        block_on(py, &rt, call)?.into_bound_py_any(py)
    }
}

/// A blocking Handle System resolver. Its calls release the GIL while they wait, and
/// Ctrl-C interrupts them at once (`KeyboardInterrupt`; the requests in flight are
/// cancelled). Safe to share between threads, and usable in a child after `fork`.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct Resolver {
    core: Core,
}

resolver_methods!(Resolver, Blocking, ResolveMany, Admin);

struct ManyState {
    feed: Feed,
    running: FuturesUnordered<Pending>,
    done: VecDeque<(u64, Outcome)>,
}

/// The results of `Resolver.resolve_many`, in completion order; the resolutions progress
/// while it is read.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct ResolveMany {
    state: Mutex<ManyState>,
}

impl From<Feed> for ResolveMany {
    fn from(feed: Feed) -> Self {
        ResolveMany {
            state: Mutex::new(ManyState {
                feed,
                running: FuturesUnordered::new(),
                done: VecDeque::new(),
            }),
        }
    }
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
            let rt = shared()?;
            block_on(py, &rt, async {
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
    core: Core,
}

admin_methods!(Admin, Blocking);
