//! The resolver: the global resolution procedure, site choice, referrals and caching
//! (PROTOCOL.md §11.5). Its names are at the crate root (`handle_resolver::{Resolver, Query,
//! HandleRecord, ResolveError, ...}`).
//!
//! One cold resolution, top down (each part owns its state; `docs/design.md`, "The resolver"):
//!
//! 1. `resolver.rs`: [`Resolver::resolve`] makes the call's one deadline
//!    (`support/deadline.rs`), checks the identifier (`target.rs`; nothing is sent for an
//!    invalid one) and starts a resolution. (`builder.rs` sets the resolver up.)
//! 2. `resolution.rs`: one call, its work run under that deadline by its trace
//!    (`support/trace.rs`, which carries the deadline to every stage and shared flight): the
//!    HS_ALIAS chain, the answer cache, identical queries shared in flight; each handle is
//!    asked of the upstream: the native procedure, or a handle proxy's REST API
//!    (`proxy.rs`).
//! 3. `locate/mod.rs`: the [`SiteLocator`](locate::SiteLocator), the procedure for one
//!    request: the sites of the handle (the fixed server's, the root's, or its prefix's
//!    service, looked up in a loop over the prefix handle and the service handles it names,
//!    each asked through the asker, and cached: `locate/services.rs`), referrals
//!    (`locate/referral.rs`), the root and its refresh (`locate/root.rs`).
//! 4. `ask/mod.rs`: the [`Asker`](ask::Asker): the hedged race over sites in SRTT order, the
//!    server a site's hash picks, the transports of one server in turn; `ask/attempt.rs`, one
//!    attempt (session, UDP limit, early resends, challenge answers, the trace); the checks
//!    of its answer (`ask/check.rs`); what is sent and how an answer reads
//!    (`ask/request.rs`).
//! 5. `peers/mod.rs`: what is known of each server, in one table with one bound: RTT,
//!    health (breaker), UDP limit, session.
//!
//! Below them, used by every stage and using none: `site.rs` ([`Site`]), `query.rs`,
//! `record.rs`, `error.rs` (and `error_kind.rs`, what a program asks of one), `settings.rs`,
//! and `support/` (single flight, the trace of attempts, the hedged race, the caches, the
//! clock, the deadline). Administration (`crate::admin`) and URN resolution (`crate::urn`)
//! sit beside the resolver and reach servers through it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use handle_resolver::{Query, Resolver};
//! // The root's keys come with the reference client's `root_info` file.
//! let resolver = Resolver::builder()
//!     .root_info_file("/etc/handle/root_info")
//!     .certify(true)
//!     .build()?;
//! let record = resolver.resolve("10.1045/april2006-paskin").await?;
//! for url in record.urls() {
//!     println!("{url}");
//! }
//! // Still certified: a query cannot turn off what the builder set.
//! let emails = resolver
//!     .resolve_with("20.500.12345/1", &Query::new().types(["EMAIL"]))
//!     .await?;
//! assert!(emails.source.certified);
//! # Ok(()) }
//! ```

mod ask;
mod build_error;
mod builder;
mod builder_endpoints;
mod error;
mod error_kind;
mod locate;
mod peers;
mod proxy;
mod query;
mod record;
mod resolution;
#[allow(clippy::module_inception)]
mod resolver;
mod settings;
mod site;
mod support;
mod target;

pub use build_error::BuildError;
pub use builder::ResolverBuilder;
pub use error::{ProtocolViolation, ResolveError, SignatureFailure};
pub use error_kind::ResolveErrorKind;
pub use query::Query;
pub use record::{Attempt, AttemptOutcome, HandleRecord, Rejection, Source};
pub use resolver::{ResolveMany, Resolver, SiteAnswer};
pub use settings::{TransportPreference, UnknownTransport};
pub use site::{server_record, Site};
pub use support::clock::{Clock, FixedClock, SystemClock};
pub use target::{Resolvable, Target};

// For the clients beside the resolver (administration, URNs).
pub(crate) use ask::{error_text, RequestSpec};
pub(crate) use settings::UrnSettings;
pub(crate) use support::deadline::Deadline;
