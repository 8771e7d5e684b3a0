//! The resolver: the global resolution procedure, site choice, referrals and caching
//! (PROTOCOL.md §11.5). The names users type are also at the crate root
//! (`handle_resolver::{Resolver, Query, HandleRecord, ResolveError, ...}`).
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
//!
//! One resolution, top down (each part owns its state, in its own file):
//! - `resolver`: [`Resolver`], the front: [`ResolverBuilder`] (and [`BuildError`]) set it
//!   up; its calls check the identifier and start a resolution; [`ResolveMany`] for bulk runs.
//! - `resolution`: `Resolution`, one call: target handle, [`Query`] with the resolver's
//!   settings filled in, deadline, HS_ALIAS chain, answer cache, identical queries shared.
//! - `locator`: `SiteLocator`: the root sites, service lookup (prefix handles, HS_SERV
//!   chains, service cache), 302/303 referrals, root refresh; runs the procedure for one
//!   request.
//! - `attempter`: `Attempter`: asks sites: server by hash, the hedged race, UDP → TCP,
//!   SRTT, the checks of an answer, challenges answered; with `session` (sessions with
//!   servers), `health` (learned failures, the breaker) and `limiter` (UDP requests in
//!   flight per server) beside it.
//!
//! Below them: `request` (what is sent, what comes back), `trace` (the attempts of a
//! resolution), `flight` (single flight), `cache`, `srtt`, `hedging`, `sites`, `settings`,
//! `query`, `record`, `error`, `target`, `clock`; `bootstrap` and `bootstrap_json` read
//! root files; `loc` selects `10320/loc` locations.
//!
//! Apart from them, [`urn`]: RFC 2169 resolution of `urn:fdc` and `urn-3` URNs over HTTP
//! ([`Resolver::resolve_urn`]).

mod admin;
mod attempter;
mod bootstrap;
mod bootstrap_json;
mod cache;
mod clock;
mod error;
mod flight;
mod health;
mod hedging;
mod limiter;
mod loc;
mod locator;
#[cfg(feature = "http")]
mod proxy;
mod query;
mod record;
mod request;
mod resolution;
#[allow(clippy::module_inception)]
mod resolver;
mod root_refresh;
mod session;
mod settings;
mod sites;
mod srtt;
mod target;
mod trace;
pub mod urn;

pub use admin::{Admin, AdminError};
pub use attempter::{HAPPY_EYEBALLS_DELAY, MAX_CHALLENGE_ROUNDS, MAX_EARLY_RESENDS};
pub use bootstrap::{
    read_root_info, root_sites_from_handles, root_sites_from_values, BootstrapError, ROOT_HANDLE,
};
pub use bootstrap_json::{builtin_root_sites, read_bootstrap_handles, BootstrapHandles};
pub use cache::{DEFAULT_CAPACITY, DEFAULT_MAX_TTL, DEFAULT_NEGATIVE_TTL, WEIGHT_UNIT};
pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{ProtocolViolation, ResolveError, SignatureFailure};
pub use health::{BREAKER_AFTER, BREAKER_FAILURES, FIRST_COOLDOWN, LEARNED_FOR, MAX_COOLDOWN};
pub use limiter::{INITIAL_LIMIT, LOSS_MEMORY, MAX_LIMIT, MIN_LIMIT, QUEUE_ALLOWANCE};
pub use loc::{locations_of, select_location, DEFAULT_CHOOSE_BY};
#[cfg(feature = "http")]
pub use proxy::{ProxyUrlError, MAX_REST_BODY, MAX_RETRIES, MAX_RETRY_WAIT};
pub use query::Query;
pub use record::{Attempt, AttemptOutcome, HandleRecord, Source};
pub use resolver::{BuildError, ResolveMany, Resolver, ResolverBuilder, SiteAnswer};
pub use session::{SESSION_LIFETIME, SESSION_REFUSED_FOR};
pub use settings::{
    TransportPreference, DEFAULT_ROOT_REFRESH_INTERVAL, MAX_ALIAS_DEPTH, MAX_REFERRALS,
    MAX_SERVICE_DEPTH, ROOT_MAX_AGE,
};
pub use sites::{server_record, Site, UNKNOWN_SERIAL};
pub use target::{Resolvable, Target};
pub use urn::{AsUrn, UrnAnswer, UrnError, UrnService, DEFAULT_URN3_RESOLVER_URL};
