//! Protocol conformance and integration tests (one binary, one module per area).

mod conformance;
mod ident;
mod support;
mod values;
