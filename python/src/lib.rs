//! `handle_resolver._native`: the extension module of the `handle_resolver` Python package
//! (pysrc/handle_resolver/ wraps it). The Rust library does the work; this crate turns its
//! calls into Python's: blocking ones without the GIL and interruptible by Ctrl-C, asyncio
//! ones on a runtime per process, results as lazily converted Python objects, failures as
//! the exception classes of `handle_resolver._errors`.
//!
//! Files: `core.rs` what the blocking and the asyncio classes share (the configuration, each
//! call as a future, the methods); `resolver.rs` the blocking `Resolver`, its `resolve_many`
//! iterator and `Admin`; `aio.rs` the asyncio ones; `batch.rs` `Admin.run_batch` (both
//! kinds) and its `BatchResult`; `many.rs` the lazy, bounded input both `resolve_many`s share;
//! `record.rs` `HandleRecord` and `HandleValue`; `errors.rs` failures to exceptions;
//! `config.rs` the constructor's arguments to a `ResolverBuilder`; `ident.rs` `parse`;
//! `testing.rs` `TestNetwork`; `runtime.rs` the runtimes and fork safety; `convert.rs` JSON
//! to Python and back; `bench.rs` the library's own figures for the benchmark script;
//! `certificate.rs` the identity a client certificate names (pyhandle's credentials);
//! `rest_admin.rs` `RestAdmin`, writes through a server's REST API (the pyhandle drop-in's).
#![forbid(unsafe_code)]

mod aio;
mod batch;
mod bench;
mod certificate;
mod config;
mod convert;
mod core;
mod errors;
mod ident;
mod many;
mod record;
mod resolver;
mod rest_admin;
mod runtime;
mod testing;

use pyo3::prelude::*;

#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<resolver::Resolver>()?;
    m.add_class::<resolver::ResolveMany>()?;
    m.add_class::<resolver::Admin>()?;
    m.add_class::<aio::AsyncResolver>()?;
    m.add_class::<aio::AsyncResolveMany>()?;
    m.add_class::<aio::AsyncAdmin>()?;
    m.add_class::<batch::BatchResult>()?;
    m.add_class::<batch::BatchReport>()?;
    m.add_class::<record::HandleRecord>()?;
    m.add_class::<record::HandleValue>()?;
    m.add_class::<ident::Identifier>()?;
    m.add_class::<testing::TestNetwork>()?;
    m.add_class::<rest_admin::RestAdmin>()?;
    m.add_function(wrap_pyfunction!(ident::parse, m)?)?;
    m.add_function(wrap_pyfunction!(certificate::certificate_identity, m)?)?;
    m.add_function(wrap_pyfunction!(record::_record_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_bench_rust_resolve_many, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_bench_rust_resolve, m)?)?;
    m.add_class::<bench::_RustBaseline>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
