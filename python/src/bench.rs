//! The Rust side of `scripts/bench-python.py`: the same resolutions through the library's
//! `blocking::Resolver` directly, in the same process, so that the Python overhead is the
//! difference of two figures measured side by side.

use std::time::Instant;

use handle_resolver::blocking::Resolver as Blocking;
use handle_resolver::Resolver;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::core::build_error;

fn resolver(server: &str) -> PyResult<Blocking> {
    let addr = server
        .parse()
        .map_err(|e| PyValueError::new_err(format!("server {server:?}: {e}")))?;
    Blocking::from_builder(Resolver::builder().server(addr).cache_size(0)).map_err(build_error)
}

/// `resolve_many` over `ids` at `concurrency` on the library alone (server mode, cache
/// off): `(seconds, resolved)`.
#[pyfunction]
pub(crate) fn _bench_rust_resolve_many(
    py: Python<'_>,
    server: &str,
    ids: Vec<String>,
    concurrency: usize,
) -> PyResult<(f64, usize)> {
    let r = resolver(server)?;
    Ok(py.detach(move || {
        let start = Instant::now();
        let ok = r
            .resolve_many(ids, concurrency)
            .filter(|(_, outcome)| outcome.is_ok())
            .count();
        (start.elapsed().as_secs_f64(), ok)
    }))
}

/// One blocking `resolve` at a time over `ids` on the library alone (server mode, cache
/// off): `(seconds, resolved)`.
#[pyfunction]
pub(crate) fn _bench_rust_resolve(
    py: Python<'_>,
    server: &str,
    ids: Vec<String>,
) -> PyResult<(f64, usize)> {
    let r = resolver(server)?;
    Ok(py.detach(move || {
        let start = Instant::now();
        let ok = ids
            .iter()
            .filter(|id| r.resolve(id.as_str()).is_ok())
            .count();
        (start.elapsed().as_secs_f64(), ok)
    }))
}

/// A persistent `blocking::Resolver` (server mode) for measurements interleaved with the
/// Python resolver's in small chunks, so that both meet the same background load.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct _RustBaseline {
    resolver: Blocking,
}

#[pymethods]
impl _RustBaseline {
    #[new]
    #[pyo3(signature = (server, cache=false))]
    fn new(server: &str, cache: bool) -> PyResult<Self> {
        let addr = server
            .parse()
            .map_err(|e| PyValueError::new_err(format!("server {server:?}: {e}")))?;
        let mut builder = Resolver::builder().server(addr);
        if !cache {
            builder = builder.cache_size(0);
        }
        Ok(_RustBaseline {
            resolver: Blocking::from_builder(builder).map_err(build_error)?,
        })
    }

    /// Resolves each of `ids` in turn: `(seconds, resolved)`.
    fn resolve_each(&self, py: Python<'_>, ids: Vec<String>) -> (f64, usize) {
        let r = &self.resolver;
        py.detach(|| {
            let start = Instant::now();
            let ok = ids
                .iter()
                .filter(|id| r.resolve(id.as_str()).is_ok())
                .count();
            (start.elapsed().as_secs_f64(), ok)
        })
    }
}
