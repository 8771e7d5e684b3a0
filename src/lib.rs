//! # handle-resolver
//!
//! A client for the Handle System's native binary protocol (RFC 3650/3651/3652), the protocol
//! behind handle.net, DOI and CORDRA identifiers.
//!
//! A resolution, here against the bundled test network (a root server and a service of two
//! sites, on loopback; feature `testing`). Against the real Handle System the resolver is
//! `Resolver::builder().build()?`: the global root.
//!
//! ```
//! # #[cfg(feature = "testing")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use handle_resolver::testing::TestNetwork;
//! use handle_resolver::wire::HandleValue;
//! use handle_resolver::Resolver;
//!
//! let network = TestNetwork::builder().build().await?;
//! network.insert("20.500.1/demo", vec![HandleValue::new(1, "URL", "https://example.org/demo")]);
//!
//! let resolver = Resolver::builder().root_server(network.root.addr()).build()?;
//! let record = resolver.resolve("hdl:20.500.1/demo").await?;
//! assert_eq!(record.url().as_deref(), Some("https://example.org/demo"));
//! println!("{} from {}", record.handle, record.source.peer());
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "testing"))]
//! # fn main() {}
//! ```
//!
//! [`Resolver::resolve_with`] takes a [`Query`] (types, indexes, authentication),
//! [`Resolver::resolve_many`] resolves in bulk, and a [`ResolveError`] is asked what went
//! wrong ([`ResolveError::kind`], [`ResolveError::is_not_found`], ...). The repository's
//! `docs/library.md` goes further; the command-line tools, the Python package and the HTTP
//! gateway are built on this API.
//!
//! ## Layout
//! The layers, each using only those before it:
//! - [`ident`]: identifiers (handles, CORDRA ids, `hdl:` URIs, URNs); no I/O.
//! - [`wire`]: the sans-IO codec: envelope, header, bodies, credentials, typed values, and
//!   [`wire::json`], the JSON shape of values (REST API answers, `bootstrap_handles`).
//! - [`root`]: the root files (`root_info`, `bootstrap_handles`, the built-in root); sans-IO.
//! - [`auth`]: answering authentication challenges (HS_SECKEY, HS_PUBKEY); sans-IO.
//! - [`trust`]: the trust chain of signed records (HS_SIGNATURE, HS_CERT), verified
//!   offline against the trust root; sans-IO.
//! - [`transport`]: tokio UDP and TCP, and HTTP(S).
//! - the resolver ([`Resolver`], [`ResolverBuilder`], [`Query`], [`HandleRecord`],
//!   [`ResolveError`], ...): the resolution procedure: root, service lookup, referrals,
//!   cache; beside it administration ([`Admin`]) and URN resolution
//!   ([`Resolver::resolve_urn`]), which reach servers through it.
//! - [`blocking`]: the resolver for callers without an async runtime.
//! - [`document`]: a resolved record as the REST API's JSON document (`resolve --json`).
//! - `cli` (feature `cli`): the command-line options the tools share.
//! - `testing` (feature `testing`): a loopback test server and test network.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(unreachable_pub)]

pub mod admin;
pub mod auth;
pub mod blocking;
#[cfg(feature = "cli")]
pub mod cli;
pub mod document;
pub mod ident;
mod resolver;
pub mod root;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transport;
pub mod trust;
mod urn;
pub mod wire;

pub use admin::client::{Admin, AdminError, CreateOptions};
pub use admin::rest::{RestAdmin, RestAdminError, RestReply};
pub use ident::handle::Handle;
pub use ident::identifier::Identifier;
pub use resolver::{
    server_record, Attempt, AttemptOutcome, BuildError, Clock, FixedClock, HandleRecord,
    ProtocolViolation, Query, Rejection, Resolvable, ResolveError, ResolveErrorKind, ResolveMany,
    Resolver, ResolverBuilder, SignatureFailure, Site, SiteAnswer, Source, SystemClock, Target,
    TransportPreference, UnknownTransport,
};
pub use urn::{AsUrn, UrnAnswer, UrnError, UrnService};

/// The README's Rust examples, compiled as doc tests so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// `docs/library.md`'s Rust examples, compiled as doc tests as the README's are (the other
/// files of `docs/` hold no Rust; a test in `proto-tests` checks that each file with a
/// ```` ```rust ```` block is listed here).
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDocDoctests;
