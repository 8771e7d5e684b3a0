//! Protocol conformance and integration tests (one binary, one module per area).

#[cfg(feature = "testing")]
mod transport;
