//! Protocol conformance and integration tests (one binary, one module per area).

mod conformance;
mod support;
mod values;
mod zero_copy;
