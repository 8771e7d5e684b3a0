//! [`ResolverBuilder`]: every knob of the resolver, with the defaults of the issue (built-in
//! root, UDP then TCP, public only, 10 s deadline, hedging 50-500 ms, 500/1000/1500 ms UDP
//! retransmission, 2-day TTL cap, 60 s negative TTL).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use thiserror::Error;

use crate::transport::{Exchange, ExchangeOptions, NetTransport};
use crate::wire::{Limits, SiteInfo};

use super::attempter::Attempter;
use super::bootstrap::{
    builtin_root_sites, read_root_info, root_sites_from_handles, root_sites_from_values,
    BootstrapError,
};
use super::bootstrap_json::read_bootstrap_handles;
use super::cache::{AnswerCache, CacheConfig, ServiceCache};
use super::clock::{Clock, SystemClock};
use super::locator::SiteLocator;
use super::resolution::Core;
use super::resolver::Resolver;
use super::settings::{Settings, TransportPreference};
use super::sites::Site;

/// Why a [`ResolverBuilder`] could not build a resolver (a configuration mistake: nothing
/// was sent).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The root (bootstrap) information given could not be read or holds no site.
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] BootstrapError),
}

/// Where the root (global) service information comes from.
#[derive(Debug, Clone)]
enum RootSource {
    BuiltIn,
    Sites(Vec<Site>),
    RootInfoFile(PathBuf),
    BootstrapFile(PathBuf),
}

/// Builds a [`Resolver`].
pub struct ResolverBuilder {
    settings: Settings,
    options: ExchangeOptions,
    cache: CacheConfig,
    root: RootSource,
    server: Option<SocketAddr>,
    exchange: Option<Arc<dyn Exchange>>,
    clock: Option<Arc<dyn Clock>>,
    seed: Option<u64>,
}

impl std::fmt::Debug for ResolverBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolverBuilder")
            .field("settings", &self.settings)
            .field("root", &self.root)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Default for ResolverBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ResolverBuilder {
    /// The defaults.
    pub fn new() -> Self {
        Self {
            settings: Settings::default(),
            options: ExchangeOptions::default(),
            cache: CacheConfig::default(),
            root: RootSource::BuiltIn,
            server: None,
            exchange: None,
            clock: None,
            seed: None,
        }
    }

    /// Root service information from these HS_SITE records.
    pub fn root_sites(mut self, sites: impl IntoIterator<Item = SiteInfo>) -> Self {
        self.root = RootSource::Sites(sites.into_iter().map(Site::new).collect());
        self
    }

    /// A root of one server (`--root HOST:PORT`), asked over UDP and TCP on that port.
    pub fn root_server(mut self, addr: SocketAddr) -> Self {
        self.root = RootSource::Sites(vec![Site::single(addr)]);
        self
    }

    /// Root service information from a reference-client `root_info` file (read by `build`).
    pub fn root_info_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.root = RootSource::RootInfoFile(path.into());
        self
    }

    /// Root service information from a reference-client `bootstrap_handles` JSON file.
    pub fn bootstrap_handles_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.root = RootSource::BootstrapFile(path.into());
        self
    }

    /// Sends every request to this one server, without service lookup (`--server`).
    pub fn server(mut self, addr: SocketAddr) -> Self {
        self.server = Some(addr);
        self
    }

    /// UDP first (default) or TCP only.
    pub fn transport(mut self, preference: TransportPreference) -> Self {
        self.settings.transport = preference;
        self
    }

    /// Certify every resolution: ask for signed answers (CT) and verify them with the server
    /// keys of the sites' HS_SITE values (default off). A [`Query`](super::Query) cannot
    /// turn it off.
    pub fn certify(mut self, on: bool) -> Self {
        self.settings.certify = on;
        self
    }

    /// Default authoritative flag of a query (primary sites, no cache).
    pub fn authoritative(mut self, on: bool) -> Self {
        self.settings.authoritative = on;
        self
    }

    /// Default public-only flag of a query (default on).
    pub fn public_only(mut self, on: bool) -> Self {
        self.settings.public_only = on;
        self
    }

    /// Overall deadline of each call (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// Bounds of the hedge delay (default 50-500 ms).
    pub fn hedge_delay(mut self, min: Duration, max: Duration) -> Self {
        self.settings.hedge_min = min;
        self.settings.hedge_max = max.max(min);
        self
    }

    /// Most attempts of one request running at once (default 3; 1 disables hedging).
    pub fn max_parallel(mut self, n: usize) -> Self {
        self.settings.max_parallel = n.max(1);
        self
    }

    /// UDP retransmission schedule: the wait after each (re)send (default 500, 1000, 1500 ms).
    pub fn retransmit(mut self, schedule: Vec<Duration>) -> Self {
        self.options.udp_retransmit = schedule;
        self
    }

    /// TCP connect and read timeouts (default 5 s, 10 s).
    pub fn tcp_timeouts(mut self, connect: Duration, read: Duration) -> Self {
        self.options.tcp_connect_timeout = connect;
        self.options.tcp_read_timeout = read;
        self
    }

    /// Number of cached answers (default 10 000; 0 disables the answer cache). An answer
    /// larger than 1 KiB counts once per started KiB, so memory stays bounded too.
    ///
    /// With the cache on, identical queries made at the same time share one request; with
    /// it off, every call sends its own (service lookups are shared either way).
    pub fn cache_size(mut self, entries: u64) -> Self {
        self.cache.capacity = entries;
        self
    }

    /// Number of prefixes whose service information is cached.
    pub fn service_cache_size(mut self, entries: u64) -> Self {
        self.cache.service_capacity = entries;
        self
    }

    /// Cap on the lifetime of cached answers (default 2 days).
    pub fn max_ttl(mut self, cap: Duration) -> Self {
        self.cache.max_ttl = cap;
        self
    }

    /// Lifetime of cached "not found" answers (default 60 s; zero disables).
    pub fn negative_ttl(mut self, ttl: Duration) -> Self {
        self.cache.negative_ttl = ttl;
        self
    }

    /// Follow HS_ALIAS values (default off).
    pub fn follow_aliases(mut self, on: bool) -> Self {
        self.settings.follow_aliases = on;
        self
    }

    /// Accept CORDRA identifiers only (default off).
    pub fn strict_cordra(mut self, on: bool) -> Self {
        self.settings.strict_cordra = on;
        self
    }

    /// Ask for a request digest (RD) in every answer and check it (default off).
    pub fn request_digest(mut self, on: bool) -> Self {
        self.settings.request_digest = on;
        self
    }

    /// Decode limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.settings.limits = limits;
        self.options.limits = limits;
        self
    }

    /// Least time between two automatic root refreshes (after an answer 300, or a root site
    /// announcing a newer site serial); default 60 s. Explicit
    /// [`Resolver::refresh_root`] calls are not limited.
    pub fn root_refresh_interval(mut self, interval: Duration) -> Self {
        self.settings.root_refresh_interval = interval;
        self
    }

    /// A custom transport (tests script one; default [`NetTransport`]).
    pub fn exchange(mut self, exchange: Arc<dyn Exchange>) -> Self {
        self.exchange = Some(exchange);
        self
    }

    /// A custom wall clock (capture replay).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Seeds the random choices (request ids, site jitter, location choice) for reproducible
    /// tests.
    pub fn rng_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Builds the resolver (reading a root file if one was given).
    pub fn build(self) -> Result<Resolver, BuildError> {
        let limits = self.settings.limits;
        let root = match self.root {
            RootSource::BuiltIn => builtin_root_sites(),
            RootSource::Sites(s) => s,
            RootSource::RootInfoFile(path) => {
                let bytes = read_file(&path)?;
                root_sites_from_values(&read_root_info(&bytes, &limits)?, &limits)
            }
            RootSource::BootstrapFile(path) => {
                let bytes = read_file(&path)?;
                let text = String::from_utf8_lossy(&bytes);
                root_sites_from_handles(&read_bootstrap_handles(&text)?, &limits)
            }
        };
        if root.is_empty() && self.server.is_none() {
            return Err(BootstrapError::NoSites.into());
        }
        let rng = match self.seed {
            Some(s) => StdRng::seed_from_u64(s),
            None => StdRng::from_entropy(),
        };
        let exchange = self
            .exchange
            .unwrap_or_else(|| Arc::new(NetTransport::new()) as Arc<dyn Exchange>);
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let attempter = Attempter::new(&self.settings, exchange, self.options, clock, rng);
        let locator = SiteLocator::new(
            &self.settings,
            attempter,
            root,
            self.server.map(Site::single),
            ServiceCache::new(self.cache),
        );
        let answers = AnswerCache::new(self.cache);
        Ok(Resolver::from_core(Core::new(
            self.settings,
            locator,
            answers,
        )))
    }
}

fn read_file(path: &PathBuf) -> Result<Vec<u8>, BootstrapError> {
    std::fs::read(path).map_err(|e| BootstrapError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}
