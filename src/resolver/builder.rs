//! [`ResolverBuilder`]: every setting of a [`Resolver`], with the defaults: built-in root,
//! UDP then TCP (then HTTP, HTTPS), public only, 10 s deadline, hedging 50-500 ms,
//! 500/1000/1500 ms UDP retransmission, 2-day TTL cap, 60 s negative TTL.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::root::{
    builtin_root_sites, is_bootstrap_handles, read_bootstrap_handles, read_root_info, root_sites,
    RootFileError,
};
use crate::transport::{Exchange, ExchangeOptions, NetTransport, TransportKind};
use crate::trust::{TrustRoot, TRUST_ROOT_HANDLE};
use crate::wire::{Limits, SiteInfo};

use super::ask::Asker;
use super::build_error::BuildError;
use super::locate::{sites_of, SiteLocator};
use super::peers::MAX_SESSION_WINDOW;
use super::resolution::{Shared, Upstream};
use super::resolver::Resolver;
use super::settings::{Settings, TransportPreference};
use super::site::Site;
use super::support::cache::{AnswerCache, CacheConfig, ServiceCache};
use super::support::clock::{Clock, SystemClock};

impl Resolver {
    /// A builder with the defaults (built-in root, UDP then TCP, 10 s deadline, ...).
    pub fn builder() -> ResolverBuilder {
        ResolverBuilder::new()
    }
}

/// Where the root (global) service information comes from.
#[derive(Debug, Clone)]
enum RootSource {
    BuiltIn,
    Sites(Vec<Site>),
    RootInfoFile(PathBuf),
    BootstrapFile(PathBuf),
    /// Either kind, told apart by its first bytes.
    AnyFile(PathBuf),
}

/// Builds a [`Resolver`].
pub struct ResolverBuilder {
    settings: Settings,
    options: ExchangeOptions,
    cache: CacheConfig,
    root: RootSource,
    server: Option<Site>,
    exchange: Option<Arc<dyn Exchange>>,
    clock: Option<Arc<dyn Clock>>,
    seed: Option<u64>,
    proxy: Option<String>,
    trust: TrustChoice,
}

/// The trust root a builder was given.
#[derive(Debug, Clone, Default)]
enum TrustChoice {
    /// The root's own (see [`ResolverBuilder::trust_root`]).
    #[default]
    Default,
    Set(TrustRoot),
    Off,
}

impl TrustChoice {
    fn take(&mut self) -> TrustChoice {
        std::mem::take(self)
    }
}

impl std::fmt::Debug for ResolverBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolverBuilder")
            .field("settings", &self.settings)
            .field("root", &self.root)
            .field("server", &self.server)
            .field("proxy", &self.proxy)
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
            options: ExchangeOptions {
                udp_loss_detection: true,
                ..ExchangeOptions::default()
            },
            cache: CacheConfig::default(),
            root: RootSource::BuiltIn,
            server: None,
            exchange: None,
            clock: None,
            seed: None,
            proxy: None,
            trust: TrustChoice::Default,
        }
    }

    /// The key(s) a root refresh must chain up to (`crate::trust`): the new root records
    /// (`0.0/0.0`, `0.NA/0.NA`, the service handles it names) are read whole, their
    /// HS_SIGNATURE and HS_CERT values checked up to this root, and only what verifies is
    /// taken; a root record that fails leaves the old root in place
    /// ([`ResolveError::UntrustedRoot`](crate::ResolveError::UntrustedRoot)). With it, the root is also refreshed when it is older
    /// than 23 hours (in the background, as the reference client does). Default: the global
    /// Handle System's key for the built-in root, the `0.0/0.0` keys of a `bootstrap_handles`
    /// file that has that record; none for other roots (refreshes then take what the root
    /// answers, checked only as `certify` asks).
    pub fn trust_root(mut self, root: TrustRoot) -> Self {
        self.trust = TrustChoice::Set(root);
        self
    }

    /// Who the resolver is when a server asks (402 AUTHENTICATION_NEEDED, e.g. for
    /// non-public values: a [`Query`](crate::Query) with `public_only(false)`): the challenge
    /// is checked against our request (its digest) and answered with this identity's secret
    /// or private key, at most twice per request. Without it a challenge is
    /// [`ResolveError::AuthenticationNeeded`](crate::ResolveError::AuthenticationNeeded).
    ///
    /// ```
    /// use handle_resolver::auth::{Authenticator, SecretKey};
    /// use handle_resolver::Resolver;
    /// let me = Authenticator::secret_key("300:20.500.12345/USER".parse()?, SecretKey::new("s3cret"));
    /// let resolver = Resolver::builder().authenticator(me).build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn authenticator(mut self, auth: crate::auth::Authenticator) -> Self {
        self.settings.authenticator = Some(Arc::new(auth));
        self
    }

    /// Whether requests that need the identity (administration, non-public values) go in
    /// sessions with servers, as the reference client's default does (default: on; used only
    /// with an [`authenticator`](Self::authenticator)). In a session the first request is
    /// challenged and authenticates it; the next ones to that server are not challenged, and
    /// messages with non-public values are encrypted (AES-128-CBC under a Diffie-Hellman key
    /// agreed with the server, whose setup answer must be signed by the server's key). A
    /// server that refuses sessions is asked with plain challenges. Off: every such request
    /// is challenged on its own (two round trips; the `udp_*`/`tcp_*` captures).
    pub fn sessions(mut self, on: bool) -> Self {
        self.settings.sessions = on;
        self
    }

    /// At most `window` requests in flight in one session with a server (default 100; at
    /// least 1, at most 200). The reference server remembers the last 200 session counters
    /// of a session and refuses, unexecuted, a request whose counter is at or below the
    /// oldest of them: with more requests in flight than that window, a slow one would come
    /// too late. The rest wait for a place (under the call's deadline).
    pub fn session_window(mut self, window: usize) -> Self {
        self.settings.session_window = window.clamp(1, MAX_SESSION_WINDOW);
        self
    }

    /// At most `n` requests in flight to any one server address at once, over any
    /// transport (at least 1, at most tokio's `Semaphore::MAX_PERMITS`; default: no bound
    /// but the UDP limit each server's answers teach, which starts at 32 and follows losses
    /// and queueing). A gateway or a bulk job in front of servers it does not run sets it so
    /// that no burst of its own clients reaches one server as more than `n` requests at a
    /// time. The requests over it wait for a place, first come, first served, under their
    /// call's deadline (a `debug` event says when one waits); a request's transports in
    /// turn, retransmissions, challenge answers and session setup are one request to the
    /// bound. A request given up on (a hedge another server answered first, a cancelled
    /// call) frees its place at once, though the server may still be working on it. A
    /// server listed with an IPv4 and an IPv6 address has a bound for each;
    /// [`Resolver::send_message`](crate::Resolver::send_message) sends outside it.
    ///
    /// ```
    /// use handle_resolver::Resolver;
    /// let resolver = Resolver::builder().max_in_flight_per_server(16).build()?;
    /// # Ok::<(), handle_resolver::BuildError>(())
    /// ```
    pub fn max_in_flight_per_server(mut self, n: usize) -> Self {
        self.settings.max_in_flight_per_server =
            Some(n.clamp(1, tokio::sync::Semaphore::MAX_PERMITS));
        self
    }

    /// No trust root, whatever the root (refreshes are not verified).
    pub fn without_trust_root(mut self) -> Self {
        self.trust = TrustChoice::Off;
        self
    }

    /// After every verified root refresh, write the verified records to `path` in the
    /// reference client's `bootstrap_handles` format (a file [`bootstrap_handles_file`]
    /// reads back). Write errors are logged, not returned.
    ///
    /// [`bootstrap_handles_file`]: Self::bootstrap_handles_file
    pub fn persist_root(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings.persist_root = Some(path.into());
        self
    }

    /// Resolves through the REST API of the handle proxy at `url` (e.g.
    /// `https://hdl.handle.net` or `https://doi.org`: `GET {url}/api/handles/{handle}`)
    /// instead of the native protocol: the same [`HandleRecord`](crate::HandleRecord)s, errors, cache and
    /// deadline; `source.transport` is `rest`. Filters travel as `type`/`index`, an
    /// authoritative query as `auth=true`, a certified one as `cert=true` (the proxy then
    /// checks the signatures of its own answers from the servers: its JSON carries none for
    /// the resolver to check, so [`certify(true)`](Self::certify), which promises
    /// signatures verified here, cannot be combined with a proxy). Root, server and
    /// transport settings do not apply. HTTP 429 and 503 are retried as `Retry-After` says,
    /// at most twice and never after a wait over 5 s. Feature `http`.
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Some(url.into());
        self
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

    /// A root of one server asked over its HTTP interface (HTTPS when `tls`): the native
    /// protocol over HTTP (`--root http://HOST:PORT`). `host` is the `Host` header and TLS
    /// name (default the address).
    pub fn root_server_http(mut self, addr: SocketAddr, host: Option<&str>, tls: bool) -> Self {
        self.root = RootSource::Sites(vec![Site::single_http(addr, host, tls)]);
        self
    }

    /// Root service information from a reference-client `root_info` file (read by `build`).
    pub fn root_info_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.root = RootSource::RootInfoFile(path.into());
        self
    }

    /// Root service information from a reference-client root file of either kind (read by
    /// `build`): `bootstrap_handles` when it is JSON, else `root_info` (`resolve --root
    /// FILE`).
    pub fn root_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.root = RootSource::AnyFile(path.into());
        self
    }

    /// Root service information from a reference-client `bootstrap_handles` JSON file (read by
    /// `build`): the sites of `0.NA/0.NA` and of the service handles it names.
    pub fn bootstrap_handles_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.root = RootSource::BootstrapFile(path.into());
        self
    }

    /// Sends every request to this one server, without service lookup (`--server`).
    pub fn server(mut self, addr: SocketAddr) -> Self {
        self.server = Some(Site::single(addr));
        self
    }

    /// Sends every request to this one server's HTTP interface (HTTPS when `tls`), without
    /// service lookup (`--server http://HOST:PORT`): the native protocol over HTTP. `host`
    /// is the `Host` header and TLS name (default the address). Over HTTPS the certificate
    /// is checked against the web PKI for `host`, as no site record names the server's key.
    pub fn server_http(mut self, addr: SocketAddr, host: Option<&str>, tls: bool) -> Self {
        self.server = Some(Site::single_http(addr, host, tls));
        self
    }

    /// UDP, then TCP, then HTTP(S) (default); TCP only; or HTTP(S) only.
    pub fn transport(mut self, preference: TransportPreference) -> Self {
        self.settings.transports = super::settings::usable(preference.kinds());
        self
    }

    /// Any order of transports (repeats are dropped; HTTP and HTTPS need the `http`
    /// feature and are dropped without it). Each is used on a server only when its site
    /// record offers it; the next is tried when one gets no answer, a refused or reset
    /// connection, or a request too large for UDP. An empty order makes every request fail
    /// with "no usable server".
    pub fn transport_order(mut self, order: impl IntoIterator<Item = TransportKind>) -> Self {
        let order: Vec<TransportKind> = order.into_iter().collect();
        self.settings.transports = super::settings::usable(&order);
        self
    }

    /// Certify every resolution: ask for signed answers (CT) and verify them with the server
    /// keys of the sites' HS_SITE values (default off). A [`Query`](crate::Query) cannot
    /// turn it off.
    ///
    /// The chain of keys starts at the root sites. The built-in root (the reference client's
    /// `bootstrap_handles` of 2019-07-26) and the root files
    /// ([`root_info_file`](Self::root_info_file),
    /// [`bootstrap_handles_file`](Self::bootstrap_handles_file)) carry their keys. A bare
    /// [`root_server`](Self::root_server) or [`server`](Self::server) carries none: take the
    /// root's keys from its own answer with [`Resolver::refresh_root`]`(false)` before
    /// resolving (trust on first use), else a certified resolution fails with
    /// [`ResolveError::Signature`](crate::ResolveError::Signature); it never returns an unverified answer.
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

    /// Bounds of the hedge delay (default 50-500 ms); a `max` below `min` is taken as `min`.
    pub fn hedge_delay(mut self, min: Duration, max: Duration) -> Self {
        self.settings.hedge_min = min;
        self.settings.hedge_max = max.max(min);
        self
    }

    /// Most attempts of one request running at once (default 3; 1 disables hedging; 0 is
    /// taken as 1).
    pub fn max_parallel(mut self, n: usize) -> Self {
        self.settings.max_parallel = n.max(1);
        self
    }

    /// UDP retransmission schedule: the wait after each (re)send (default 500, 1000, 1500 ms).
    /// An empty schedule sends no UDP at all: every request goes over TCP.
    pub fn retransmit(mut self, schedule: Vec<Duration>) -> Self {
        self.options.udp_retransmit = schedule;
        self
    }

    /// Early loss detection over UDP (default on; see
    /// [`ExchangeOptions::udp_loss_detection`]): a query unanswered after its server's loss
    /// timeout (a few of its round trips, at least 2 ms) is sent again at once (at most
    /// 4 times, each under the server's limit
    /// of requests in flight and with the timeout doubled, the whole counted as one loss by
    /// the limit) instead of after the first wait of the retransmission schedule. Only
    /// queries (resolutions, site information) are sent again this way, never
    /// administration requests.
    pub fn loss_detection(mut self, on: bool) -> Self {
        self.options.udp_loss_detection = on;
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

    /// The CORDRA profile (default off): accept CORDRA identifiers only, and send them in
    /// their CORDRA form (32-hex-digit suffix upper-cased). Without it every handle is sent as
    /// written, also one whose suffix looks like a CORDRA GUID (handles are case sensitive).
    pub fn strict_cordra(mut self, on: bool) -> Self {
        self.settings.strict_cordra = on;
        self
    }

    /// Resolves every URN at this RFC 2169 resolver (`http(s)://host[:port][/path]`)
    /// instead of its namespace's (`resolve --urn-resolver`); default none.
    pub fn urn_resolver(mut self, url: impl Into<String>) -> Self {
        self.settings.urn.resolver = Some(url.into());
        self
    }

    /// The RFC 2169 resolver of `urn-3` URNs (default
    /// `http://nrs.harvard.edu`, Harvard's HUL resolver).
    pub fn urn3_resolver(mut self, url: impl Into<String>) -> Self {
        self.settings.urn.urn3_resolver = url.into();
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

    /// Seeds the resolver's random choice (the jitter in the order of equally fast sites) for
    /// reproducible tests. Request ids are the transport's.
    pub fn rng_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Builds the resolver (reading a root file if one was given).
    pub fn build(mut self) -> Result<Resolver, BuildError> {
        let limits = self.settings.limits;
        // The trust root of refreshes, unless set: the global one for the built-in root, the
        // `0.0/0.0` keys of a bootstrap_handles file that has them; none otherwise.
        let mut default_trust = None;
        let root = match self.root {
            RootSource::BuiltIn => {
                default_trust = Some(TrustRoot::global());
                sites_of(builtin_root_sites())
            }
            RootSource::Sites(s) => s,
            RootSource::RootInfoFile(path) => root_info_sites(&path, &read_file(&path)?, &limits)?,
            RootSource::BootstrapFile(path) => {
                let (sites, trust) = bootstrap_sites(&path, &read_file(&path)?, &limits)?;
                default_trust = trust;
                sites
            }
            RootSource::AnyFile(path) => {
                let bytes = read_file(&path)?;
                if is_bootstrap_handles(&bytes) {
                    let (sites, trust) = bootstrap_sites(&path, &bytes, &limits)?;
                    default_trust = trust;
                    sites
                } else {
                    root_info_sites(&path, &bytes, &limits)?
                }
            }
        };
        self.settings.trust_root = match self.trust.take() {
            TrustChoice::Default => default_trust,
            TrustChoice::Set(t) => Some(t),
            TrustChoice::Off => None,
        };
        if root.is_empty() && self.server.is_none() {
            return Err(BuildError::NoRootSites);
        }
        // A first hop no chosen transport reaches fails every request; say so now, before
        // anything is sent (an empty transport order is documented to fail each request, and
        // a proxy does not use the root).
        let transports = &self.settings.transports;
        if self.proxy.is_none() && !transports.is_empty() {
            let (first_hop, server) = match &self.server {
                Some(site) => (std::slice::from_ref(site), true),
                None => (root.as_slice(), false),
            };
            if !super::site::any_reachable(first_hop, transports) {
                return Err(BuildError::NoTransport {
                    server,
                    transports: transports.clone(),
                });
            }
        }
        let rng = match self.seed {
            Some(s) => StdRng::seed_from_u64(s),
            None => StdRng::from_entropy(),
        };
        let exchange = self
            .exchange
            .unwrap_or_else(|| Arc::new(NetTransport::new()) as Arc<dyn Exchange>);
        let clock = self.clock.unwrap_or_else(|| Arc::new(SystemClock));
        let asker = Asker::new(&self.settings, exchange.clone(), self.options, clock, rng);
        let locator = Arc::new(SiteLocator::new(
            &self.settings,
            asker,
            root,
            self.server,
            ServiceCache::new(self.cache),
        ));
        let upstream = match &self.proxy {
            Some(url) => {
                if self.settings.certify {
                    return Err(BuildError::CertifyOverProxy);
                }
                Upstream::Proxy(super::proxy::Proxy::new(url, exchange, limits)?)
            }
            None => Upstream::Native,
        };
        let answers = AnswerCache::new(self.cache);
        Ok(Resolver::from_shared(Shared::new(
            self.settings,
            locator,
            upstream,
            answers,
        )))
    }
}

/// The root sites of a `root_info` file.
fn root_info_sites(path: &Path, bytes: &[u8], limits: &Limits) -> Result<Vec<Site>, BuildError> {
    let values = read_root_info(bytes, limits).map_err(|e| file_error(path, e))?;
    Ok(sites_of(root_sites(&values, limits)))
}

/// The root sites of a `bootstrap_handles` file, and the trust root its `0.0/0.0` record
/// gives, if it has one.
fn bootstrap_sites(
    path: &Path,
    bytes: &[u8],
    limits: &Limits,
) -> Result<(Vec<Site>, Option<TrustRoot>), BuildError> {
    let file = read_bootstrap_handles(bytes, limits).map_err(|e| file_error(path, e))?;
    let trust = file
        .handles
        .iter()
        .find(|(h, _)| h.eq_ignore_ascii_case(TRUST_ROOT_HANDLE))
        .map(|(_, values)| TrustRoot::from_values(values));
    Ok((sites_of(file.root_sites(limits)), trust))
}

fn read_file(path: &Path) -> Result<Vec<u8>, BuildError> {
    std::fs::read(path).map_err(|e| BuildError::ReadRootFile {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

fn file_error(path: &Path, error: RootFileError) -> BuildError {
    BuildError::RootFile {
        path: path.display().to_string(),
        error,
    }
}
