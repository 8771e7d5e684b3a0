//! The cache every resolution passes (issue 40): resolved records in process (moka), keyed
//! by what selects the answer (the handle as the server matches it, the type and index
//! filters), optionally shared with other gateways on Redis (feature `redis`).
//!
//! - **Lifetime**: a record lives until its values' smallest TTL ([`ttl::lifetime`]:
//!   relative from the fetch, absolute as it is, at most 172,800 s; TTL 0 is not kept);
//!   "not found" and "no matching values" for `negative_ttl`. Every entry carries its times
//!   on tokio's clock, checked on each read (paused-clock tests see them expire); moka's own
//!   per-entry expiry only frees the memory.
//! - **Single flight**: a miss goes through moka's entry API, which runs one resolution per
//!   key and makes concurrent misses wait for it; a failed resolution is kept for
//!   [`ERROR_RETRY`] too, so that while a server fails the requests queued behind one timeout
//!   do not each wait for another.
//! - **Stale-if-error**: while the upstream fails, the last good record answers, up to
//!   `stale_if_error` past its expiry ([`Served::Stale`]).
//! - **Bypass**: a trusted request asking for it resolves at the upstream (rate-limited,
//!   [`bypass`]) and stores what it got for everyone.
//!
//! What is kept is the values; the answer (the redirect, its random `10320/loc` choice, the
//! page) is made anew for every request, with relative TTLs counted down by the record's age
//! ([`Record::aged_values`]) so that `Expires` says what remains.

pub mod bypass;
mod record;
#[cfg(feature = "redis")]
mod shared;
pub mod ttl;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use handle_resolver::wire::HandleValue;
use handle_resolver::{Handle, ResolveError};
use tokio::time::Instant;

use crate::config::CacheSettings;

use record::location_allowance;
pub(crate) use record::Kept;
pub use record::Record;

/// The in-process tier: moka's cache, hashed with foldhash (randomly seeded per process) rather
/// than SipHash, which took 1,700 of a warm request's instructions (BENCHMARKS.md §18).
type Moka<K, V> = moka::future::Cache<K, V, foldhash::fast::RandomState>;

/// Why a handle's values are not there: what a lookup through the cache yields instead of
/// a record (the cache keeps it too, for negative answers and stale-if-error).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// The text is not a handle (no `/`, empty): as not found.
    #[error("not a handle: {0}")]
    NotAHandle(String),
    /// The resolution failed.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

impl LookupError {
    /// True when the handle does not exist (or is no handle).
    pub fn is_not_found(&self) -> bool {
        match self {
            LookupError::NotAHandle(_) => true,
            LookupError::Resolve(e) => e.is_not_found(),
        }
    }
}

/// What a resolution at the upstream gives the cache.
type Fetched = Result<Vec<HandleValue>, LookupError>;

/// After a failed resolution, the next one of the same key waits this long (the requests in
/// between get the stale record, or the failure).
pub const ERROR_RETRY: Duration = Duration::from_secs(1);

/// What selects an answer: the handle as the server matches it ([`Handle`]'s equality: ASCII
/// case folded in the prefix), the type filter (upper-cased, sorted, without repeats) and the
/// index filter (sorted, without repeats), as the library keys its own answers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    handle: Handle,
    types: Vec<String>,
    indexes: Vec<u32>,
}

impl Key {
    /// The key of a resolution of `handle` with these filters.
    pub fn new(handle: &Handle, types: &[String], indexes: &[u32]) -> Key {
        let mut types: Vec<String> = types.iter().map(|t| t.to_ascii_uppercase()).collect();
        types.sort();
        types.dedup();
        let mut indexes = indexes.to_vec();
        indexes.sort_unstable();
        indexes.dedup();
        Key {
            handle: handle.clone(),
            types,
            indexes,
        }
    }

    /// The key as text (the Redis tier's key, after its prefix): the normalized handle, then
    /// `?type=A,B&index=1,2` when there are filters.
    pub fn text(&self) -> String {
        let mut out = self.handle.normalized().into_string();
        if !self.types.is_empty() || !self.indexes.is_empty() {
            let indexes: Vec<String> = self.indexes.iter().map(u32::to_string).collect();
            out.push_str(&format!(
                "?type={}&index={}",
                self.types.join(","),
                indexes.join(",")
            ));
        }
        out
    }

    /// The handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }
}

/// How an answer was served, as its `X-Cache` header says: of all the resolutions a request
/// made, the last of `hit`, `miss`, `bypass`, `stale` in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Served {
    /// From the cache (this gateway's, or the shared tier), no upstream query of its own.
    Hit,
    /// Resolved at the upstream (the cache had nothing fresh), or the resolution failed.
    Miss,
    /// Resolved at the upstream for a trusted client that asked for it.
    Bypass,
    /// From the cache past its expiry, because the upstream failed.
    Stale,
}

impl Served {
    /// The `X-Cache` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Served::Hit => "hit",
            Served::Miss => "miss",
            Served::Bypass => "bypass",
            Served::Stale => "stale",
        }
    }
}

/// An upstream answer that is kept: values, or "not found" / "no matching values".
#[derive(Debug, Clone)]
pub(crate) enum Answered {
    Values(Arc<Kept>),
    Missing(ResolveError),
}

/// A kept answer and its times.
#[derive(Debug)]
pub(crate) struct Good {
    answered: Answered,
    /// When it was fetched (tokio's clock).
    fetched: Instant,
    /// When it stops being fresh.
    fresh_until: Instant,
    /// When it was fetched (the wall clock, for the shared tier).
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    fetched_wall: SystemTime,
    /// True when it came from the shared tier.
    from_shared: bool,
}

impl Good {
    fn answer(&self, now: Instant, served: Served) -> (Result<Record, LookupError>, Served) {
        let result = match &self.answered {
            Answered::Values(kept) => Ok(Record::shared(
                kept.clone(),
                now.saturating_duration_since(self.fetched),
            )),
            Answered::Missing(e) => Err(LookupError::Resolve(e.clone())),
        };
        (result, served)
    }

    fn bytes(&self) -> usize {
        match &self.answered {
            Answered::Missing(_) => 64,
            Answered::Values(kept) => kept.values.iter().fold(64, |n, v| {
                n.saturating_add(v.data.len())
                    .saturating_add(v.type_name.len())
                    .saturating_add(v.references.len() * 32)
                    .saturating_add(std::mem::size_of::<HandleValue>())
                    .saturating_add(location_allowance(v))
            }),
        }
    }
}

/// What a key holds.
#[derive(Debug)]
enum Slot {
    Good(Arc<Good>),
    /// The last resolution failed; `last` is the record before it.
    Failed {
        last: Option<Arc<Good>>,
        error: LookupError,
        retry_at: Instant,
    },
}

impl Slot {
    /// True while no new resolution is needed.
    fn fresh(&self, now: Instant) -> bool {
        match self {
            Slot::Good(g) => now < g.fresh_until,
            Slot::Failed { retry_at, .. } => now < *retry_at,
        }
    }

    fn last_good(&self) -> Option<Arc<Good>> {
        match self {
            Slot::Good(g) => Some(g.clone()),
            Slot::Failed { last, .. } => last.clone(),
        }
    }

    /// Until when the slot is worth keeping (fresh, or stale but still able to answer).
    fn keep_until(&self, stale: Duration) -> Instant {
        match self {
            Slot::Good(g) => g.fresh_until + stale,
            Slot::Failed { last, retry_at, .. } => last
                .as_ref()
                .map_or(*retry_at, |g| (*retry_at).max(g.fresh_until + stale)),
        }
    }
}

/// moka's per-entry expiry: the entry's memory is freed once it can no longer answer.
struct KeepUntil {
    stale: Duration,
}

impl moka::Expiry<Key, Arc<Slot>> for KeepUntil {
    fn expire_after_create(
        &self,
        _key: &Key,
        slot: &Arc<Slot>,
        _created_at: std::time::Instant,
    ) -> Option<Duration> {
        Some(
            slot.keep_until(self.stale)
                .saturating_duration_since(Instant::now()),
        )
    }

    fn expire_after_update(
        &self,
        key: &Key,
        slot: &Arc<Slot>,
        updated_at: std::time::Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        self.expire_after_create(key, slot, updated_at)
    }
}

/// Why the cache cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// The Redis tier's URL is refused.
    #[error("{0}")]
    Redis(String),
}

/// The cache (see the module's documentation).
///
/// ```
/// use handle_gateway::cache::{Cache, Key, Served};
/// use handle_gateway::config::CacheSettings;
/// use handle_gateway::cache::LookupError;
/// use handle_resolver::{wire::HandleValue, Handle};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let cache = Cache::new(&CacheSettings::default()).await?;
/// let key = Key::new(&Handle::parse("20.500.1/x")?, &[], &[]);
/// let fetch = || async {
///     Ok::<_, LookupError>(vec![HandleValue::new(1, "URL", "https://a.example/")])
/// };
/// let (first, served) = cache.get(key.clone(), fetch, false).await;
/// assert_eq!(served, Served::Miss);
/// let (again, served) = cache.get(key, fetch, false).await;
/// assert_eq!(served, Served::Hit);
/// assert_eq!(first?.values(), again?.values());
/// # Ok(()) }
/// ```
pub struct Cache {
    local: Option<Moka<Key, Arc<Slot>>>,
    negative_ttl: Duration,
    stale_if_error: Duration,
    bypass: bypass::Bypass,
    #[cfg(feature = "redis")]
    shared: Option<shared::Shared>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("on", &self.local.is_some())
            .field("negative_ttl", &self.negative_ttl)
            .field("stale_if_error", &self.stale_if_error)
            .finish_non_exhaustive()
    }
}

impl Cache {
    /// The cache of `settings`, with its Redis tier when there is one (connected when it
    /// answers within `redis_timeout`, else in the background: until it answers, and whenever
    /// it fails, the gateway goes on without it).
    pub async fn new(settings: &CacheSettings) -> Result<Cache, CacheError> {
        let local = (settings.max_bytes > 0).then(|| {
            moka::future::Cache::builder()
                .max_capacity(settings.max_bytes)
                .weigher(|key: &Key, slot: &Arc<Slot>| {
                    let bytes = slot.last_good().map_or(64, |g| g.bytes());
                    u32::try_from(bytes.saturating_add(key.handle.as_str().len()))
                        .unwrap_or(u32::MAX)
                })
                .expire_after(KeepUntil {
                    stale: settings.stale_if_error,
                })
                .build_with_hasher(foldhash::fast::RandomState::default())
        });
        Ok(Cache {
            local,
            negative_ttl: settings.negative_ttl,
            stale_if_error: settings.stale_if_error,
            bypass: bypass::Bypass::new(settings),
            #[cfg(feature = "redis")]
            shared: match settings.redis_url.as_deref() {
                Some(url) => Some(
                    shared::Shared::connect(url, settings)
                        .await
                        .map_err(|e| CacheError::Redis(e.to_string()))?,
                ),
                None => None,
            },
        })
    }

    /// True when a request from `client` with this `X-Bypass-Token` may bypass the cache.
    pub fn trusts(&self, client: std::net::IpAddr, token: Option<&str>) -> bool {
        self.bypass.trusts(client, token)
    }

    /// The record of `key`: fresh from the cache, else from the resolution `fetch` makes
    /// (one at a time per key), else (the upstream failing) the last good one while it may
    /// still answer. With `bypass`, `fetch` is asked first when the rate limit allows.
    ///
    /// `fetch` is called only on a miss, and every path that awaits a resolution is boxed:
    /// a resolution's future is large (the resolver's whole procedure), and held inline it
    /// made every request's future as large, copied from layer to layer of the HTTP stack
    /// four times a request: 34 % of a warm request's instructions were that `memcpy`
    /// (BENCHMARKS.md §18).
    pub async fn get<F, Fut>(
        &self,
        key: Key,
        fetch: F,
        bypass: bool,
    ) -> (Result<Record, LookupError>, Served)
    where
        F: FnOnce() -> Fut + Send,
        Fut: Future<Output = Fetched> + Send,
    {
        let Some(local) = &self.local else {
            return (Box::pin(fetch()).await.map(Record::fresh), Served::Miss);
        };
        let existing = local.get(&key).await;
        let now = Instant::now();
        if bypass && self.bypass.admit() {
            return Box::pin(self.bypass_get(local, key, fetch(), existing)).await;
        }
        if let Some(slot) = existing.as_ref().filter(|s| s.fresh(now)) {
            return self.serve(slot, false, now);
        }
        Box::pin(self.fill(local, key, fetch(), existing)).await
    }

    /// A miss: the key's entry filled by one resolution however many requests wait for it.
    async fn fill<F>(
        &self,
        local: &Moka<Key, Arc<Slot>>,
        key: Key,
        fetch: F,
        existing: Option<Arc<Slot>>,
    ) -> (Result<Record, LookupError>, Served)
    where
        F: Future<Output = Fetched> + Send,
    {
        let last = existing.and_then(|s| s.last_good());
        let entry = local
            .entry(key.clone())
            .or_insert_with_if(self.resolve(&key, fetch, last), |s| {
                !s.fresh(Instant::now())
            })
            .await;
        let initialized = entry.is_fresh();
        self.serve(&entry.into_value(), initialized, Instant::now())
    }

    /// A bypass: the upstream's answer, kept for everyone; the cache's when it fails.
    async fn bypass_get<F>(
        &self,
        local: &Moka<Key, Arc<Slot>>,
        key: Key,
        fetch: F,
        existing: Option<Arc<Slot>>,
    ) -> (Result<Record, LookupError>, Served)
    where
        F: Future<Output = Fetched> + Send,
    {
        match self.keep_shared(&key, fetch.await).await {
            Ok(good) => {
                let good = Arc::new(good);
                local.insert(key, Arc::new(Slot::Good(good.clone()))).await;
                good.answer(Instant::now(), Served::Bypass)
            }
            Err(error) => {
                let last = existing.and_then(|s| s.last_good());
                self.serve_failure(last, error, Instant::now())
            }
        }
    }

    /// The resolution of a miss (run once per key however many wait): the shared tier's
    /// record, else the upstream's answer, else the failure with the record before it.
    #[cfg_attr(not(feature = "redis"), allow(unused_variables))]
    async fn resolve<F>(&self, key: &Key, fetch: F, last: Option<Arc<Good>>) -> Arc<Slot>
    where
        F: Future<Output = Fetched> + Send,
    {
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            if let Some(good) = shared.get(key).await {
                return Arc::new(Slot::Good(Arc::new(good)));
            }
        }
        let slot = match self.keep_shared(key, fetch.await).await {
            Ok(good) => Slot::Good(Arc::new(good)),
            Err(error) => Slot::Failed {
                last,
                error,
                retry_at: Instant::now() + ERROR_RETRY,
            },
        };
        Arc::new(slot)
    }

    /// [`Cache::keep`], and what is kept written to the shared tier too.
    #[cfg_attr(not(feature = "redis"), allow(unused_variables))]
    async fn keep_shared(&self, key: &Key, result: Fetched) -> Result<Good, LookupError> {
        let good = self.keep(result)?;
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            shared.put(key, &good).await;
        }
        Ok(good)
    }

    /// What of an upstream answer is kept, and for how long; `Err`: a failure.
    fn keep(&self, result: Fetched) -> Result<Good, LookupError> {
        let fetched = Instant::now();
        let fetched_wall = SystemTime::now();
        let (answered, lifetime) = match result {
            Ok(values) => {
                let unix = fetched_wall
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let lifetime = ttl::lifetime(&values, unix).unwrap_or(self.negative_ttl);
                (Answered::Values(Kept::new(values)), lifetime)
            }
            Err(LookupError::Resolve(e)) if e.is_not_found() => {
                (Answered::Missing(e), self.negative_ttl)
            }
            Err(e) => return Err(e),
        };
        Ok(Good {
            answered,
            fetched,
            fresh_until: fetched + lifetime,
            fetched_wall,
            from_shared: false,
        })
    }

    /// The answer a slot gives now (`initialized`: this request resolved it).
    fn serve(
        &self,
        slot: &Slot,
        initialized: bool,
        now: Instant,
    ) -> (Result<Record, LookupError>, Served) {
        match slot {
            Slot::Good(g) => {
                let served = if initialized && !g.from_shared {
                    Served::Miss
                } else {
                    Served::Hit
                };
                g.answer(now, served)
            }
            Slot::Failed { last, error, .. } => {
                self.serve_failure(last.clone(), error.clone(), now)
            }
        }
    }

    /// While the upstream fails: the last good record if it may still answer, else the
    /// failure.
    fn serve_failure(
        &self,
        last: Option<Arc<Good>>,
        error: LookupError,
        now: Instant,
    ) -> (Result<Record, LookupError>, Served) {
        match last {
            Some(g) if now <= g.fresh_until + self.stale_if_error => g.answer(now, Served::Stale),
            _ => (Err(error), Served::Miss),
        }
    }
}
