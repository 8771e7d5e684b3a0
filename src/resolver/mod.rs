//! The resolver: global resolution procedure, site choice, referrals and caching
//! (PROTOCOL.md §11.5).
//!
//! ```no_run
//! # async fn demo() -> Result<(), handle_resolver::resolver::ResolveError> {
//! use handle_resolver::resolver::{Query, Resolver};
//! let resolver = Resolver::builder().build()?;
//! let record = resolver.resolve("10.1045/april2006-paskin").await?;
//! for url in record.urls() {
//!     println!("{url}");
//! }
//! let emails = resolver.resolve_with("20.500.12345/1", &Query::types(["EMAIL"])).await?;
//! # let _ = emails;
//! # Ok(()) }
//! ```
//!
//! The public API is re-exported here: [`Resolver`] (entry points) and [`ResolverBuilder`]
//! (every option); [`Query`], [`HandleRecord`], [`Source`], [`Hop`] (what goes in and comes
//! out); [`ResolveError`] and its parts; the bootstrap readers ([`builtin_root_sites`],
//! [`read_root_info`], [`read_bootstrap_handles`], ...); the `10320/loc` helpers
//! ([`select_location`], [`locations_of`]); [`Clock`]; [`Site`].
//!
//! Layout (modules are private):
//! - `builder`: [`ResolverBuilder`]; `resolve`: [`Resolver`] and its entry points, the cache
//!   around them, HS_ALIAS following;
//! - `bootstrap`: built-in root sites and the `root_info` reader; `bootstrap_json`: the
//!   `bootstrap_handles` reader;
//! - `service`: service lookup (`0.NA/<prefix>`, HS_SERV chains, referral bodies, service
//!   lifetimes);
//! - `procedure`: hedged asks, referrals; `refresh`: root refresh (300, newer root serial,
//!   rate-limited, shared); `attempt`: one site, UDP → TCP, answer checks (expiry, digest,
//!   signature);
//! - `selection`: decaying SRTT (Karn's rule), site order, hedge delays; `hedging`: the race;
//! - `cache`: answer and service caches; `flight`: single flight (concurrent identical
//!   lookups, and with the answer cache on identical queries, share one); `loc`:
//!   `10320/loc` selection;
//! - `record`, `error`, `clock`, `sites`, `target`, `state`: the types; `fnv`: the hasher
//!   of the internal tables.

mod attempt;
mod bootstrap;
mod bootstrap_json;
mod builder;
mod cache;
mod clock;
mod error;
mod flight;
mod fnv;
mod hedging;
mod loc;
mod procedure;
mod record;
mod refresh;
mod resolve;
mod selection;
mod service;
mod sites;
mod state;
mod target;

pub use bootstrap::{
    builtin_root_sites, read_root_info, root_sites_from_handles, root_sites_from_values,
    BootstrapError, ROOT_HANDLE,
};
pub use bootstrap_json::read_bootstrap_handles;
pub use builder::ResolverBuilder;
pub use cache::{DEFAULT_CAPACITY, DEFAULT_MAX_TTL, DEFAULT_NEGATIVE_TTL, WEIGHT_UNIT};
pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{ProtocolViolation, ResolveError, SignatureFailure};
pub use loc::{locations_of, select_location, DEFAULT_CHOOSE_BY};
pub use record::{HandleRecord, Hop, HopOutcome, Query, Source};
pub use refresh::DEFAULT_ROOT_REFRESH_INTERVAL;
pub use resolve::{Resolver, SiteAnswer};
pub use sites::{server_record, Site, UNKNOWN_SERIAL};
pub use state::{TransportPreference, MAX_ALIAS_DEPTH, MAX_REFERRALS, MAX_SERVICE_DEPTH};
pub use target::{Resolvable, Target};
