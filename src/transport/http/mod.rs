//! HTTP: the native protocol tunnelled over HTTP(S) (PROTOCOL.md §8.3) and plain HTTP GETs
//! for the REST API of handle proxies and RFC 2169 URN resolvers. Only `target` (plain data,
//! part of the [`Exchange`](super::Exchange) trait) is built without the `http` feature.
//!
//! - `native`: one `POST /<handle>` per request on its own connection, the body the
//!   envelope and message exactly as over TCP; the answer read from the body the same way;
//! - `get`: a pooled client for [`HttpGet`](super::HttpGet) (redirects are answers, never
//!   followed; the body capped);
//! - `target`: [`HttpTarget`], where a native request goes, and the MIME type;
//! - `tls`: the TLS settings: web PKI roots for names a user typed, and the pin to the key of
//!   a server's HS_SITE record for the native HTTPS interface.

#[cfg(feature = "http")]
mod get;
#[cfg(feature = "http")]
mod native;
mod target;
#[cfg(feature = "http")]
mod tls;

#[cfg(feature = "http")]
pub(crate) use get::Getter;
#[cfg(feature = "http")]
pub use native::decode_native_answer;
#[cfg(feature = "http")]
pub(crate) use native::exchange;
pub use target::{HttpTarget, HDL_MIME_TYPE};
