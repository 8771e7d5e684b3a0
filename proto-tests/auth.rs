//! Authentication and administration against the captures-auth reference set
//! (`fixtures/reference/captures-auth/`): every message decodes and re-encodes exactly, and
//! every captured challenge is answered as the reference library answered it.

mod answers;
mod captures;
mod compare;
#[cfg(feature = "testing")]
mod loopback;
