//! A loopback Handle System server for tests, examples and benchmarks (feature `testing`).
//!
//! Layout:
//! - [`store`]: handles in memory and the resolution rules (filters, PO, homed prefixes,
//!   referrals), values pre-encoded;
//! - `admin`: challenges, their answers checked against the identities in the store, and the
//!   admin operations (create, delete, add, modify, remove, list) with HS_ADMIN permissions;
//! - [`server`]: [`TestServer`], UDP + TCP on one 127.0.0.1 port, counters, faults at run time;
//! - [`faults`]: [`Faults`], what a server does wrong on purpose;
//! - [`key`]: the RSA test key and answer signing;
//! - [`network`]: [`TestNetwork`], a root plus several multi-server sites;
//! - [`json`]: the JSON handle file of `examples/testserver.rs`;
//! - [`mod@reference`]: a handles JSON in the reference's own shape (`testserver --reference-store`);
//! - [`uri_res`]: the RFC 2169 URN resolver of the server's HTTP side ([`Urns`]), pure;
//! - `rest`: the handle.net REST API (`GET /api/handles/...`) as a pure function of the
//!   store, for the server's HTTP side; `rest_write` its writes (`PUT`, `DELETE`, with
//!   `Authorization: Basic`), as the reference server does them.
//!
//! ```
//! use std::sync::Arc;
//! use handle_resolver::testing::{Store, TestServer, TestServerConfig};
//! use handle_resolver::wire::HandleValue;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let store = Arc::new(Store::new());
//! store.insert("20.500.1/x", vec![HandleValue::new(1, "URL", "https://example.org/")]);
//! let server = TestServer::start(TestServerConfig::new(store)).await?;
//! assert!(server.addr().ip().is_loopback());
//! # Ok(()) }
//! ```
#![warn(unreachable_pub)]

mod admin;
pub mod faults;
mod http;
pub mod http_reply;
pub mod json;
pub mod key;
pub mod network;
mod patch;
pub mod reference;
mod respond;
mod rest;
mod rest_write;
pub mod server;
mod session;
pub mod store;
pub mod uri_res;

pub use faults::Faults;
pub use http_reply::HttpReply;
pub use json::{StoreFile, StoreFileError};
pub use key::{TestKey, TEST_KEY_2048_DER, TEST_KEY_DER};
pub use network::{TestNetwork, TestNetworkBuilder, TestSite};
pub use reference::ReferenceStore;
pub use server::{TestServer, TestServerConfig};
pub use store::{Lookup, Referral, Store, StoredHandle};
pub use uri_res::Urns;
