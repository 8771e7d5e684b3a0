//! Authentication and administration against the captures-auth reference set
//! (`fixtures/reference/captures-auth/`): every message decodes and re-encodes exactly, and
//! every captured challenge is answered as the reference library answered it.

mod answers;
#[cfg(feature = "testing")]
mod batch;
mod captures;
#[cfg(feature = "testing")]
mod cli;
mod compare;
#[cfg(feature = "testing")]
mod http_admin;
#[cfg(feature = "testing")]
mod loopback;
#[cfg(feature = "testing")]
mod manage;
#[cfg(feature = "testing")]
mod readme_admin;
#[cfg(feature = "testing")]
mod rest_admin;
mod sessions;
#[cfg(feature = "testing")]
mod window;
