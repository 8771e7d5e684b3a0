//! Protocol conformance and integration tests (one binary, one module per area).

mod auth;
mod conformance;
mod docs;
mod ident;
mod inspect;
mod keys;
mod resolve_parts;
#[cfg(feature = "testing")]
mod resolver;
mod support;
#[cfg(feature = "testing")]
mod transport;
mod trust;
mod values;
mod zero_copy;
