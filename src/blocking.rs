//! A blocking resolver for callers without an async runtime, in the way of
//! `reqwest::blocking`: [`Resolver`] owns a current-thread tokio runtime and runs each call
//! of the async [`crate::Resolver`] on it to completion.
//!
//! ```no_run
//! use handle_resolver::blocking::Resolver;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let resolver = Resolver::new()?;
//!     let record = resolver.resolve("10.1045/april2006-paskin")?;
//!     println!("{}", record.url().unwrap_or_default());
//!     for (id, outcome) in resolver.resolve_many(["10.1045/a", "10.1045/b"], 16) {
//!         println!("{id}: {:?}", outcome.map(|r| r.urls()));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! Its calls must not be made from inside an async runtime (that would block the runtime's
//! thread; tokio refuses it with a panic): there, use [`crate::Resolver`] itself. The
//! sockets' background work runs only while a call is running, which is all a resolver
//! needs between calls.

use std::sync::Arc;

use tokio::runtime::Runtime;

use crate::resolver::{
    BuildError, HandleRecord, Query, Resolvable, ResolveError, ResolveMany, ResolverBuilder,
};
use crate::Attempt;

/// A blocking handle resolver: the async [`crate::Resolver`] on a runtime of its own. Cheap
/// to clone; clones share the runtime, the caches and the sockets, and can be used from
/// several threads (one call runs at a time on the runtime's thread; the others wait).
#[derive(Debug, Clone)]
pub struct Resolver {
    inner: crate::Resolver,
    runtime: Arc<Runtime>,
}

impl Resolver {
    /// A resolver with the defaults (global root, UDP then TCP, 10 s deadline, ...).
    pub fn new() -> Result<Self, BuildError> {
        Self::from_builder(crate::Resolver::builder())
    }

    /// The resolver `builder` sets up, on a runtime of its own.
    ///
    /// ```no_run
    /// # fn demo() -> Result<(), handle_resolver::BuildError> {
    /// use std::time::Duration;
    /// use handle_resolver::{blocking, Resolver};
    ///
    /// let resolver = blocking::Resolver::from_builder(
    ///     Resolver::builder()
    ///         .root_server("127.0.0.1:2641".parse().unwrap())
    ///         .timeout(Duration::from_secs(2)),
    /// )?;
    /// # let _ = resolver;
    /// # Ok(()) }
    /// ```
    pub fn from_builder(builder: ResolverBuilder) -> Result<Self, BuildError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BuildError::Runtime(e.to_string()))?;
        // Built inside the runtime, so whatever the resolver sets up belongs to it.
        let inner = {
            let _entered = runtime.enter();
            builder.build()?
        };
        Ok(Resolver {
            inner,
            runtime: Arc::new(runtime),
        })
    }

    /// [`crate::Resolver::resolve`], blocking.
    pub fn resolve<T: Resolvable + ?Sized>(&self, id: &T) -> Result<HandleRecord, ResolveError> {
        self.runtime.block_on(self.inner.resolve(id))
    }

    /// [`crate::Resolver::resolve_with`], blocking.
    pub fn resolve_with<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> Result<HandleRecord, ResolveError> {
        self.runtime.block_on(self.inner.resolve_with(id, query))
    }

    /// [`crate::Resolver::resolve_traced`], blocking.
    pub fn resolve_traced<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> (Result<HandleRecord, ResolveError>, Vec<Attempt>) {
        self.runtime.block_on(self.inner.resolve_traced(id, query))
    }

    /// [`crate::Resolver::resolve_many`] as an iterator: at most `concurrency` resolutions
    /// at once, yielding `(input, outcome)` in completion order. The resolutions progress
    /// while the iterator is being read.
    pub fn resolve_many<I, S>(&self, ids: I, concurrency: usize) -> ResolveManyIter<S>
    where
        I: IntoIterator<Item = S>,
        I::IntoIter: Send + 'static,
        S: Resolvable + Send + Sync + 'static,
    {
        ResolveManyIter {
            inner: self.inner.resolve_many(ids, concurrency),
            runtime: self.runtime.clone(),
        }
    }

    /// [`crate::Resolver::refresh_root`], blocking.
    pub fn refresh_root(&self, certify: bool) -> Result<usize, ResolveError> {
        self.runtime.block_on(self.inner.refresh_root(certify))
    }

    /// Forgets every cached answer and service.
    pub fn clear_cache(&self) {
        self.inner.clear_cache();
    }

    /// The async resolver inside (to be used only on this resolver's runtime, through
    /// [`Resolver::block_on`]).
    pub fn as_async(&self) -> &crate::Resolver {
        &self.inner
    }

    /// Runs `future` to completion on this resolver's runtime (for the async calls that
    /// have no blocking form here).
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}

/// The results of [`Resolver::resolve_many`], in completion order.
#[must_use = "the resolutions run only while the iterator is read"]
pub struct ResolveManyIter<S> {
    inner: ResolveMany<S>,
    runtime: Arc<Runtime>,
}

impl<S> Iterator for ResolveManyIter<S> {
    type Item = (S, Result<HandleRecord, ResolveError>);

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.inner.next())
    }
}

impl<S> std::fmt::Debug for ResolveManyIter<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolveManyIter").finish_non_exhaustive()
    }
}
