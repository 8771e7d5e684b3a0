//! Protocol conformance and integration tests (one binary, one module per area).

mod conformance;
mod inspect;
mod support;
mod values;
