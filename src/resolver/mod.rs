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
//! Layout:
//! - [`builder`]: [`ResolverBuilder`] (every option); [`resolve`]: [`Resolver`] and its entry
//!   points, the cache around them, HS_ALIAS following;
//! - [`bootstrap`]: built-in root sites and the `root_info` reader; [`bootstrap_json`]: the
//!   `bootstrap_handles` reader;
//! - [`service`]: service lookup (`0.NA/<prefix>`, HS_SERV chains, referral bodies);
//! - [`procedure`]: hedged asks, referrals, root refresh; [`attempt`]: one site, UDP → TCP,
//!   answer checks (expiry, digest, signature);
//! - [`selection`]: decaying SRTT, site order, hedge delays; [`hedging`]: the race;
//! - [`cache`]: answer and service caches; [`loc`]: `10320/loc` selection;
//! - [`record`], [`error`], [`clock`], [`sites`], [`target`], [`state`]: the types.

pub mod attempt;
pub mod bootstrap;
pub mod bootstrap_json;
pub mod builder;
pub mod cache;
pub mod clock;
pub mod error;
pub mod hedging;
pub mod loc;
pub mod procedure;
pub mod record;
pub mod resolve;
pub mod selection;
pub mod service;
pub mod sites;
pub mod state;
pub mod target;

pub use bootstrap::{
    builtin_root_sites, read_root_info, root_sites_from_handles, root_sites_from_values,
    BootstrapError, ROOT_HANDLE,
};
pub use bootstrap_json::read_bootstrap_handles;
pub use builder::ResolverBuilder;
pub use clock::{Clock, FixedClock, SystemClock};
pub use error::{ProtocolViolation, ResolveError, SignatureFailure};
pub use loc::{locations_of, select_location};
pub use record::{HandleRecord, Hop, HopOutcome, Query, Source};
pub use resolve::{Resolver, SiteAnswer};
pub use sites::Site;
pub use state::TransportPreference;
pub use target::{Resolvable, Target};
