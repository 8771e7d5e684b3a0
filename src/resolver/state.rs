//! The resolver's shared state ([`Inner`], behind the `Arc` of every `Resolver` clone), its
//! settings ([`Config`]) and the per-resolution bookkeeping ([`Ctx`]).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::Rng;

use crate::transport::{Exchange, ExchangeOptions};
use crate::wire::Limits;

use super::cache::Caches;
use super::clock::Clock;
use super::error::ResolveError;
use super::record::Hop;
use super::selection::SrttTable;
use super::sites::Site;

/// Which transport to try first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportPreference {
    /// UDP, then TCP on the same server when UDP times out, is not offered or is too small.
    #[default]
    Udp,
    /// TCP only.
    Tcp,
}

/// Most referrals (302/303) and service-handle hops in one resolution (the reference client's
/// limit).
pub const MAX_REFERRALS: u32 = 40;
/// Deepest HS_SERV chain followed.
pub const MAX_SERVICE_DEPTH: usize = 20;
/// Longest HS_ALIAS chain followed.
pub const MAX_ALIAS_DEPTH: usize = 10;
/// Request expiration: now + 12 h, like the reference client.
pub const REQUEST_LIFETIME_SECS: u64 = 43_200;

/// Settings fixed when the resolver is built.
#[derive(Debug, Clone)]
pub struct Config {
    /// Transport order.
    pub transport: TransportPreference,
    /// Default certify flag of `resolve`.
    pub certify: bool,
    /// Default authoritative flag of `resolve`.
    pub authoritative: bool,
    /// Default public-only flag of `resolve`.
    pub public_only: bool,
    /// Overall deadline of one call.
    pub timeout: Duration,
    /// Lower bound of the hedge delay.
    pub hedge_min: Duration,
    /// Upper bound of the hedge delay.
    pub hedge_max: Duration,
    /// Most attempts running at once for one request.
    pub max_parallel: usize,
    /// Follow HS_ALIAS values.
    pub follow_aliases: bool,
    /// Accept CORDRA identifiers only.
    pub strict_cordra: bool,
    /// Ask for a request digest (RD) and check it.
    pub request_digest: bool,
    /// Decode limits.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            transport: TransportPreference::Udp,
            certify: false,
            authoritative: false,
            public_only: true,
            timeout: Duration::from_secs(10),
            hedge_min: Duration::from_millis(50),
            hedge_max: Duration::from_millis(500),
            max_parallel: 3,
            follow_aliases: false,
            strict_cordra: false,
            request_digest: false,
            limits: Limits::default(),
        }
    }
}

/// Shared state.
pub struct Inner {
    pub(crate) exchange: Arc<dyn Exchange>,
    pub(crate) options: ExchangeOptions,
    pub(crate) config: Config,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) srtt: SrttTable,
    pub(crate) caches: Caches,
    pub(crate) root: RwLock<Arc<Vec<Site>>>,
    /// `--server`: every request goes to this site, no service lookup.
    pub(crate) fixed: Option<Site>,
    pub(crate) rng: Mutex<StdRng>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("config", &self.config)
            .field("root_sites", &self.root_sites().len())
            .field("fixed", &self.fixed.as_ref().map(Site::label))
            .field("caches", &self.caches)
            .finish()
    }
}

impl Inner {
    /// Runs `f` with the resolver's random generator.
    pub(crate) fn with_rng<R>(&self, f: impl FnOnce(&mut StdRng) -> R) -> R {
        let mut guard = match self.rng.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        f(&mut guard)
    }

    /// A request id: random, never 0 or 0xFFFFFFFF.
    pub(crate) fn request_id(&self) -> u32 {
        self.with_rng(|r| r.gen_range(1..u32::MAX))
    }

    /// The current root sites.
    pub(crate) fn root_sites(&self) -> Arc<Vec<Site>> {
        match self.root.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Replaces the root sites.
    pub(crate) fn set_root_sites(&self, sites: Vec<Site>) {
        let mut g = match self.root.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g = Arc::new(sites);
    }

    /// Request expiration time: now + 12 h (saturating at the largest `u32`).
    pub(crate) fn request_expiration(&self) -> u32 {
        u32::try_from(self.clock.unix_now().saturating_add(REQUEST_LIFETIME_SECS))
            .unwrap_or(u32::MAX)
    }
}

/// Bookkeeping of one resolution (shared by its concurrent attempts).
#[derive(Debug)]
pub struct Ctx {
    /// The handle asked for (for error messages).
    pub(crate) origin: String,
    hops: Mutex<Vec<Hop>>,
    attempts: AtomicU32,
    referrals: AtomicU32,
    refreshed: AtomicBool,
}

impl Ctx {
    /// Fresh bookkeeping for a resolution of `origin`.
    pub(crate) fn new(origin: &str) -> Self {
        Self {
            origin: origin.to_string(),
            hops: Mutex::new(Vec::new()),
            attempts: AtomicU32::new(0),
            referrals: AtomicU32::new(0),
            refreshed: AtomicBool::new(false),
        }
    }

    /// Number for the next attempt (1-based).
    pub(crate) fn next_attempt(&self) -> u32 {
        self.attempts.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records a finished (or cancelled) attempt.
    pub(crate) fn push_hop(&self, hop: Hop) {
        let mut g = match self.hops.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        g.push(hop);
    }

    /// The attempts so far.
    pub(crate) fn hops(&self) -> Vec<Hop> {
        match self.hops.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Counts one referral or service hop; an error past [`MAX_REFERRALS`].
    pub(crate) fn count_referral(&self) -> Result<(), ResolveError> {
        let n = self.referrals.fetch_add(1, Ordering::Relaxed) + 1;
        if n > MAX_REFERRALS {
            return Err(ResolveError::TooManyReferrals {
                handle: self.origin.clone(),
                limit: MAX_REFERRALS,
            });
        }
        Ok(())
    }

    /// True the first time only: whether a root refresh may still be tried.
    pub(crate) fn claim_refresh(&self) -> bool {
        !self.refreshed.swap(true, Ordering::Relaxed)
    }
}
