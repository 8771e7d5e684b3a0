//! Identifiers: handles, CORDRA identifiers, `hdl:` URIs and URNs. No I/O.
//!
//! - [`Handle`]: `PREFIX/SUFFIX` (RFC 3650/3651), prefix case folding, derived prefixes.
//! - [`CordraId`]: digit prefix, 32-hex-digit suffix, optional query and fragment; minting.
//! - [`HandleUri`]: `hdl:`, `hdl://`, `doi:` and HTTP(S) resolver URLs, percent-encoded.
//! - [`Urn`]: `urn:fdc:` (RFC 4198) and `urn-3`, with RFC 2169 resolution URLs.
//! - [`Identifier`]: one entry point for all of them.
//! - [`IdentError`]: what is wrong, at which byte, with which text.
//!
//! ```
//! use handle_resolver::ident::IdentifierKind;
//! use handle_resolver::Identifier;
//!
//! for text in ["10.1045/april2006-paskin", "http://hdl.handle.net/10.1045/april2006-paskin"] {
//!     let id = Identifier::parse(text)?;
//!     assert_eq!(id.kind(), IdentifierKind::Handle);
//!     assert_eq!(id.to_handle()?.prefix_handle().as_str(), "0.NA/10.1045");
//! }
//! # Ok::<(), handle_resolver::ident::IdentError>(())
//! ```
#![warn(unreachable_pub)]

pub(crate) mod chars;
mod cordra;
mod error;
pub(crate) mod handle;
pub(crate) mod identifier;
mod options;
mod uri;
mod urn;

#[cfg(test)]
mod tests;

pub use cordra::CordraId;
pub use error::{ErrorKind, IdentError};
pub use handle::MAX_HANDLE_LENGTH;
// `Handle` and `Identifier` are at the crate root (one path each); the crate names them here.
pub(crate) use handle::Handle;
pub(crate) use identifier::Identifier;
pub use identifier::{Description, IdentifierKind};
pub use options::ParseOptions;
pub use uri::{resolver_urls, HandleUri, UriForm, DOI_PROXY, HANDLE_PROXY, PROXY_HOSTS};
pub use urn::{DateId, FdcUrn, Urn, Urn3, DEFAULT_URN3_RESOLVER};
