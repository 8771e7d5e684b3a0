//! The resolver's shared state ([`Inner`], behind the `Arc` of every `Resolver` clone), its
//! settings ([`Config`]) and the per-resolution bookkeeping ([`Ctx`]).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::Duration;

use rand::rngs::StdRng;
use tokio::time::Instant;

use crate::transport::{Exchange, ExchangeOptions, TransportKind};
use crate::wire::Limits;

use super::cache::{Caches, RecordKey};
use super::clock::Clock;
use super::error::ResolveError;
use super::flight::{Flights, LeaderFlights};
use super::record::{HandleRecord, Hop, HopOutcome};
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

impl TransportPreference {
    /// The transports to try on one server, in order.
    pub(crate) fn kinds(self) -> &'static [TransportKind] {
        match self {
            TransportPreference::Udp => &[TransportKind::Udp, TransportKind::Tcp],
            TransportPreference::Tcp => &[TransportKind::Tcp],
        }
    }
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
    /// Least time between two automatic root refreshes.
    pub root_refresh_interval: Duration,
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
            root_refresh_interval: super::refresh::DEFAULT_ROOT_REFRESH_INTERVAL,
        }
    }
}

/// What a shared piece of work hands every caller: its outcome and the attempts it made
/// (merged into each caller's trace).
pub(crate) type SharedOutcome<T> = (Result<T, ResolveError>, Vec<Hop>);

/// Key of a shared service lookup: what is looked up, and the service-handle path it is
/// looked up on (lookups on different paths are never merged, so a chain that comes back to
/// itself meets its loop check instead of waiting for itself).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ServiceFlightKey {
    /// `None` for a prefix handle lookup, the site kind for a service handle.
    pub(crate) kind: Option<super::service::SiteKind>,
    /// The handle looked up, ASCII upper-cased.
    pub(crate) handle: String,
    /// CT set.
    pub(crate) certify: bool,
    /// The service handles on the path, ASCII upper-cased.
    pub(crate) path: Vec<String>,
}

impl ServiceFlightKey {
    pub(crate) fn new(
        kind: Option<super::service::SiteKind>,
        handle: &str,
        certify: bool,
        path: &[String],
    ) -> Self {
        Self {
            kind,
            handle: handle.to_ascii_uppercase(),
            certify,
            path: path.iter().map(|p| p.to_ascii_uppercase()).collect(),
        }
    }
}

/// Work in progress shared by concurrent callers.
#[derive(Debug, Default)]
pub(crate) struct FlightTables {
    /// Prefix handle lookups (`0.NA/<prefix>`).
    pub(crate) services: Flights<ServiceFlightKey, SharedOutcome<Arc<Vec<Site>>>, Arc<Ctx>>,
    /// Service handle resolutions.
    pub(crate) service_handles:
        Flights<ServiceFlightKey, SharedOutcome<Arc<super::service::Collected>>, Arc<Ctx>>,
    /// Resolutions, by cache key.
    /// (The resolution asking first runs it; its bookkeeping and how many attempts it had
    /// made before are the tag.)
    pub(crate) records: LeaderFlights<RecordKey, SharedOutcome<HandleRecord>, (Arc<Ctx>, usize)>,
    /// Root refreshes, by certify flag.
    pub(crate) refresh: Flights<bool, SharedOutcome<()>, Arc<Ctx>>,
}

/// Shared state.
pub struct Inner {
    /// This state itself (for work that outlives the caller that started it).
    pub(crate) me: Weak<Inner>,
    pub(crate) flights: FlightTables,
    pub(crate) exchange: Arc<dyn Exchange>,
    pub(crate) options: ExchangeOptions,
    pub(crate) config: Config,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) srtt: SrttTable,
    pub(crate) caches: Caches,
    pub(crate) root: RwLock<Arc<Vec<Site>>>,
    /// `--server`: every request goes to this site, no service lookup.
    /// (Kept as the one-site list every request of the resolver asks.)
    pub(crate) fixed: Option<Arc<Vec<Site>>>,
    pub(crate) rng: Mutex<StdRng>,
    /// When the last automatic root refresh started (rate limit).
    pub(crate) root_refreshed_at: Mutex<Option<tokio::time::Instant>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("config", &self.config)
            .field("root_sites", &self.root_sites().len())
            .field(
                "fixed",
                &self.fixed.as_ref().and_then(|s| s.first()).map(Site::label),
            )
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

    /// A request id: random, never 0 or 0xFFFFFFFF. From the thread's own generator, not
    /// the resolver's shared one: no lock (and no cache line moving between cores) per
    /// request, and the UDP and TCP transports put in their own id anyway.
    pub(crate) fn request_id(&self) -> u32 {
        crate::transport::request_id::random_request_id()
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

/// The outcome text of an attempt still running when the overall deadline passed.
pub(crate) const DEADLINE_PASSED: &str = "no answer yet when the overall deadline passed";

/// The attempts of one resolution: finished, and running (token, hop, start).
#[derive(Debug, Default)]
struct Trace {
    done: Vec<Hop>,
    running: Running,
}

/// Attempts in progress, in the order they started: the first inline (most resolutions
/// never have two at once, and then need no allocation for this list).
#[derive(Debug, Default)]
struct Running {
    first: Option<(u64, Hop, Instant)>,
    more: Vec<(u64, Hop, Instant)>,
}

impl Running {
    fn push(&mut self, entry: (u64, Hop, Instant)) {
        if self.first.is_none() {
            self.first = Some(entry);
        } else {
            self.more.push(entry);
        }
    }

    /// Takes out the attempt with `token`, keeping the others in order.
    fn take(&mut self, token: u64) -> Option<(u64, Hop, Instant)> {
        if self.first.as_ref().is_some_and(|(k, _, _)| *k == token) {
            let taken = self.first.take();
            if !self.more.is_empty() {
                self.first = Some(self.more.remove(0));
            }
            return taken;
        }
        let i = self.more.iter().position(|(k, _, _)| *k == token)?;
        Some(self.more.remove(i))
    }

    fn to_vec(&self) -> Vec<(u64, Hop, Instant)> {
        self.first.iter().chain(self.more.iter()).cloned().collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Bookkeeping of one resolution (shared by its concurrent attempts).
#[derive(Debug)]
pub struct Ctx {
    /// The handle asked for (for error messages).
    pub(crate) origin: String,
    trace: Mutex<Trace>,
    attempts: AtomicU32,
    /// Shared work (single flights) this resolution waits for, by join token: their attempts
    /// belong in this resolution's trace should its deadline pass before they end.
    /// The number is how many of the shared work's finished attempts predate it (a leader
    /// running the work inline may have made attempts of its own before).
    joined: Mutex<Vec<(u64, Arc<Ctx>, usize)>>,
    next_token: AtomicU64,
    /// Referrals and service hops so far: shared with the work this resolution starts on
    /// behalf of others (single flights), so the limit bounds the whole tree of lookups.
    referrals: Arc<AtomicU32>,
    refreshed: AtomicBool,
}

impl Ctx {
    /// Fresh bookkeeping for a resolution of `origin`.
    pub(crate) fn new(origin: &str) -> Self {
        Self::owning(origin.to_string())
    }

    /// [`Ctx::new`] taking the handle's text without copying it.
    pub(crate) fn owning(origin: String) -> Self {
        Self::build(origin, Arc::new(AtomicU32::new(0)))
    }

    /// Fresh bookkeeping for a resolution of `origin` counting referrals in `referrals`.
    fn with_referrals(origin: &str, referrals: Arc<AtomicU32>) -> Self {
        Self::build(origin.to_string(), referrals)
    }

    fn build(origin: String, referrals: Arc<AtomicU32>) -> Self {
        Self {
            origin,
            trace: Mutex::new(Trace::default()),
            attempts: AtomicU32::new(0),
            joined: Mutex::new(Vec::new()),
            next_token: AtomicU64::new(1),
            referrals,
            refreshed: AtomicBool::new(false),
        }
    }

    /// Bookkeeping for shared work (a single flight) this resolution starts about `origin`:
    /// its own attempts and trace, but this resolution's referral budget, so nested lookups
    /// cannot each start over from [`MAX_REFERRALS`].
    pub(crate) fn for_flight(&self, origin: &str) -> Self {
        Self::with_referrals(origin, self.referrals.clone())
    }

    /// Number for the next attempt (1-based).
    pub(crate) fn next_attempt(&self) -> u32 {
        self.attempts.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Records an attempt that has just started (until [`Ctx::end_hop`]); returns its token.
    pub(crate) fn start_hop(&self, hop: Hop, started: Instant) -> u64 {
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        lock(&self.trace).running.push((token, hop, started));
        token
    }

    /// Records the end of an attempt started with [`Ctx::start_hop`]: `finish` fills in how
    /// it ended, and it moves from the running attempts to the finished ones.
    pub(crate) fn end_hop(&self, token: u64, finish: impl FnOnce(&mut Hop)) {
        let mut t = lock(&self.trace);
        if let Some((_, mut hop, _)) = t.running.take(token) {
            finish(&mut hop);
            t.done.push(hop);
        }
    }

    /// Records a finished attempt.
    fn push_hop(&self, hop: Hop) {
        lock(&self.trace).done.push(hop);
    }

    /// Notes that this resolution waits for shared work whose bookkeeping is `shared`;
    /// returns the token for [`Ctx::leave`].
    fn join(&self, shared: Arc<Ctx>, skip: usize) -> u64 {
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        lock(&self.joined).push((token, shared, skip));
        token
    }

    /// The shared work joined with `token` has ended (its attempts are merged with
    /// [`Ctx::extend_hops`]).
    fn leave(&self, token: u64) {
        lock(&self.joined).retain(|(k, _, _)| *k != token);
    }

    /// Appends the attempts of shared work done for this resolution, numbered after the
    /// attempts so far.
    pub(crate) fn extend_hops(&self, hops: Vec<Hop>) {
        for mut hop in hops {
            hop.attempt = self.next_attempt();
            self.push_hop(hop);
        }
    }

    /// Waits for shared work (its bookkeeping is `shared`) and merges its attempts into
    /// this resolution's trace; until it ends, [`Ctx::hops_at_deadline`] lists them too.
    pub(crate) async fn wait_for<R: Clone>(
        &self,
        flight: super::flight::Flight<SharedOutcome<R>>,
        shared: Arc<Ctx>,
    ) -> Result<R, ResolveError> {
        let token = self.join(shared, 0);
        let (out, hops) = flight.await;
        self.leave(token);
        self.extend_hops(hops);
        out
    }

    /// Waits for a leader running shared work inline (its bookkeeping is `leader`, of which
    /// the first `skip` finished attempts predate the work) and merges the work's attempts
    /// into this resolution's trace. `None`: the leader went away without an outcome.
    pub(crate) async fn follow<R>(
        &self,
        follower: super::flight::Follower<SharedOutcome<R>>,
        leader: Arc<Ctx>,
        skip: usize,
    ) -> Option<Result<R, ResolveError>> {
        let token = self.join(leader, skip);
        let outcome = follower.wait().await;
        self.leave(token);
        let (out, hops) = outcome?;
        self.extend_hops(hops);
        Some(out)
    }

    /// How many attempts have finished so far.
    pub(crate) fn finished(&self) -> usize {
        lock(&self.trace).done.len()
    }

    /// The finished attempts after the first `skip`.
    pub(crate) fn hops_since(&self, skip: usize) -> Vec<Hop> {
        lock(&self.trace)
            .done
            .get(skip..)
            .unwrap_or_default()
            .to_vec()
    }

    /// The attempts finished so far.
    pub(crate) fn hops(&self) -> Vec<Hop> {
        lock(&self.trace).done.clone()
    }

    /// The attempts finished so far, taken out (for a resolution that has ended; callers
    /// that shared its queries have had their copies).
    pub(crate) fn take_hops(&self) -> Vec<Hop> {
        std::mem::take(&mut lock(&self.trace).done)
    }

    /// Every attempt of this resolution when its deadline has passed: those finished, those
    /// of the shared work it was still waiting for, and those still running (as failed at
    /// the deadline, with the time they had run). Numbers the shared work's attempts after
    /// this resolution's own.
    pub(crate) fn hops_at_deadline(&self) -> Vec<Hop> {
        let (mut out, joined, running) = self.at_deadline(0);
        for mut hop in joined {
            hop.attempt = self.next_attempt();
            out.push(hop);
        }
        out.extend(running);
        out
    }

    /// The parts of [`Ctx::hops_at_deadline`], without the first `skip` finished attempts
    /// and without numbering anything: the finished attempts, those of the shared work
    /// joined (flattened, numbered by the caller) and those still running (marked as failed
    /// at the deadline). Nothing here is changed: a shared context may be a leader's own,
    /// still running, whose attempt numbers must not move because a follower's deadline
    /// passed.
    fn at_deadline(&self, skip: usize) -> (Vec<Hop>, Vec<Hop>, Vec<Hop>) {
        let (done, running) = {
            let t = lock(&self.trace);
            (
                t.done.get(skip..).unwrap_or_default().to_vec(),
                t.running.to_vec(),
            )
        };
        let joined: Vec<(Arc<Ctx>, usize)> = lock(&self.joined)
            .iter()
            .map(|(_, c, skip)| (c.clone(), *skip))
            .collect();
        let mut seen: Vec<*const Ctx> = Vec::new();
        let mut shared_hops = Vec::new();
        for (shared, skip) in joined {
            // Concurrent parts of this resolution may wait for the same shared work: its
            // attempts are listed once.
            let ptr = Arc::as_ptr(&shared);
            if seen.contains(&ptr) {
                continue;
            }
            seen.push(ptr);
            let (d, j, r) = shared.at_deadline(skip);
            shared_hops.extend(d);
            shared_hops.extend(j);
            shared_hops.extend(r);
        }
        let running = running
            .into_iter()
            .map(|(_, mut hop, started)| {
                hop.rtt = started.elapsed();
                hop.outcome = HopOutcome::Failed(DEADLINE_PASSED.to_string());
                hop
            })
            .collect();
        (done, shared_hops, running)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::TransportKind;

    fn hop(n: u32) -> Hop {
        Hop {
            handle: format!("1/{n}"),
            server: std::net::SocketAddr::from(([127, 0, 0, 1], 2641)),
            transport: TransportKind::Udp,
            attempt: n,
            rtt: Duration::ZERO,
            transmissions: 0,
            outcome: HopOutcome::Cancelled,
        }
    }

    fn attempts(r: &Running) -> Vec<u32> {
        r.to_vec().into_iter().map(|(_, h, _)| h.attempt).collect()
    }

    #[test]
    fn running_attempts_keep_their_order_whichever_ends_first() {
        let now = Instant::now();
        let mut r = Running::default();
        for n in 1..=4 {
            r.push((u64::from(n), hop(n), now));
        }
        assert_eq!(attempts(&r), [1, 2, 3, 4]);
        // The first ends: the second takes its place.
        assert_eq!(r.take(1).map(|(_, h, _)| h.attempt), Some(1));
        assert_eq!(attempts(&r), [2, 3, 4]);
        assert_eq!(r.take(3).map(|(_, h, _)| h.attempt), Some(3));
        assert_eq!(attempts(&r), [2, 4]);
        assert!(r.take(3).is_none());
        r.push((5, hop(5), now));
        assert_eq!(attempts(&r), [2, 4, 5]);
        for t in [2, 4, 5] {
            assert!(r.take(t).is_some());
        }
        assert!(r.to_vec().is_empty());
        // Alone, an attempt is kept inline.
        let mut alone = Running::default();
        alone.push((6, hop(6), now));
        assert!(alone.first.is_some());
        assert_eq!(alone.more.capacity(), 0);
    }
}
