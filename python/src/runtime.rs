//! Runtimes, one set per process: the tokio runtime the asyncio side shares (created lazily,
//! and again in a child after `fork`, whose copy of the parent's has no threads), and
//! [`PerProcess`], the wrapper that ties a value with sockets and tasks to the process that
//! made it.

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3_async_runtimes::generic::{ContextExt, Runtime as GenericRuntime};
use pyo3_async_runtimes::TaskLocals;
use tokio::runtime::Runtime;

/// How long a blocking call waits between two looks at the signals (Ctrl-C).
pub(crate) const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// A value made in one process (a runtime, a resolver with its sockets and tasks). In a
/// child after `fork` it is not there ([`PerProcess::get`] is `None`) and is never dropped:
/// dropping it would join threads and close tasks that only exist in the parent.
pub(crate) struct PerProcess<T> {
    pid: u32,
    value: Option<T>,
}

impl<T> PerProcess<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            pid: std::process::id(),
            value: Some(value),
        }
    }

    /// The value, in the process that made it.
    pub(crate) fn get(&self) -> Option<&T> {
        match self.pid == std::process::id() {
            true => self.value.as_ref(),
            false => None,
        }
    }
}

impl<T> Drop for PerProcess<T> {
    fn drop(&mut self) {
        if self.pid != std::process::id() {
            // The parent's: its threads and tasks are not in this process. Leak it.
            std::mem::forget(self.value.take());
        }
    }
}

static SHARED: Mutex<Option<PerProcess<Arc<Runtime>>>> = Mutex::new(None);

/// The process's shared multi-threaded runtime (asyncio calls, the test network), started on
/// first use in each process.
pub(crate) fn shared() -> PyResult<Arc<Runtime>> {
    let mut slot = SHARED
        .lock()
        .map_err(|_| PyRuntimeError::new_err("the runtime lock is poisoned"))?;
    if let Some(rt) = slot.as_ref().and_then(PerProcess::get) {
        return Ok(rt.clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("handle-resolver")
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the tokio runtime: {e}")))?;
    let rt = Arc::new(rt);
    // Replacing a parent's runtime leaks it (PerProcess::drop).
    *slot = Some(PerProcess::new(rt.clone()));
    Ok(rt)
}

/// The shared runtime for pyo3-async-runtimes, which cannot take an error where it spawns.
/// Every caller made sure it exists first ([`shared`] in the constructors), so only a
/// failure to start threads at all ends here.
fn shared_handle() -> tokio::runtime::Handle {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle,
        Err(_) => match shared() {
            Ok(rt) => rt.handle().clone(),
            Err(e) => panic!("handle_resolver: {e}"),
        },
    }
}

/// pyo3-async-runtimes on [`shared`]: a per-process runtime (its own tokio runtime is one
/// per address space, which a forked child cannot use).
pub(crate) struct SharedRuntime;

tokio::task_local! {
    static TASK_LOCALS: OnceCell<TaskLocals>;
}

impl GenericRuntime for SharedRuntime {
    type JoinError = tokio::task::JoinError;
    type JoinHandle = tokio::task::JoinHandle<()>;

    fn spawn<F>(fut: F) -> Self::JoinHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        shared_handle().spawn(fut)
    }

    fn spawn_blocking<F>(f: F) -> Self::JoinHandle
    where
        F: FnOnce() + Send + 'static,
    {
        shared_handle().spawn_blocking(f)
    }
}

impl ContextExt for SharedRuntime {
    fn scope<F, R>(locals: TaskLocals, fut: F) -> Pin<Box<dyn Future<Output = R> + Send>>
    where
        F: Future<Output = R> + Send + 'static,
    {
        let cell = OnceCell::new();
        let _ = cell.set(locals);
        Box::pin(TASK_LOCALS.scope(cell, fut))
    }

    fn get_task_locals() -> Option<TaskLocals> {
        TASK_LOCALS
            .try_with(|c| c.get().cloned())
            .unwrap_or_default()
    }
}

/// Runs `fut` to completion on `rt` (the [`shared`] runtime) without the GIL, looking at the
/// signals every [`SIGNAL_SLICE`]: Ctrl-C raises `KeyboardInterrupt` at once and drops
/// `fut`, which cancels what it had in flight.
pub(crate) fn block_on<F>(py: Python<'_>, rt: &Runtime, fut: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let mut fut = std::pin::pin!(fut);
    loop {
        // The timer is made inside the runtime (it needs the runtime's clock).
        let slice = py.detach(|| {
            rt.block_on(async { tokio::time::timeout(SIGNAL_SLICE, fut.as_mut()).await })
        });
        match slice {
            Ok(out) => return Ok(out),
            Err(_) => py.check_signals()?,
        }
    }
}
