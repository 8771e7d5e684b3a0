//! Answer and service-information caches (moka), size-bounded, with lifetimes from the values'
//! TTLs (PROTOCOL.md §11.5 step 5).
//!
//! Every entry carries its own deadline on tokio's clock, checked on each read (so paused-clock
//! tests see entries expire); moka's per-entry expiry frees the memory in real time.
//! The record key includes the certify flag, the filters and public-only, so certified and
//! plain answers never mix.

use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use tokio::time::Instant;

use crate::ident::Handle;
use crate::wire::{HandleValue, Ttl};

use super::super::query::Asked;
use super::super::record::Source;
use super::super::site::Site;

/// Longest lifetime given to a positive answer (relative TTLs above it are capped).
pub(crate) const DEFAULT_MAX_TTL: Duration = Duration::from_secs(2 * 24 * 3600);
/// Default lifetime of a "handle not found" answer.
pub(crate) const DEFAULT_NEGATIVE_TTL: Duration = Duration::from_secs(60);
/// Default number of cached answers (an answer of more than [`WEIGHT_UNIT`] bytes counts
/// as one per started unit).
pub(crate) const DEFAULT_CAPACITY: u64 = 10_000;
/// Size of answer that counts as one entry against the capacity: most answers are smaller,
/// a 256 KiB one counts as 256 entries, so memory stays near `capacity` KiB at most.
pub(crate) const WEIGHT_UNIT: usize = 1024;

/// What identifies a cached answer (also the key of identical queries in flight). The
/// handle compares as [`Handle`] does (ASCII case folded in the prefix, and in the whole of a
/// `0.` handle); the filters are normalised.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RecordKey {
    handle: Handle,
    /// Type filter, upper-cased, sorted, deduplicated.
    types: Vec<String>,
    /// Index filter, sorted, deduplicated.
    indexes: Vec<u32>,
    certified: bool,
    public_only: bool,
}

impl RecordKey {
    /// The key of a resolution of `handle` asking `asked`.
    pub(crate) fn new(handle: &Handle, asked: &Asked) -> Self {
        let mut types: Vec<String> = asked.types.iter().map(|t| t.to_ascii_uppercase()).collect();
        types.sort();
        types.dedup();
        let mut indexes = asked.indexes.clone();
        indexes.sort_unstable();
        indexes.dedup();
        Self {
            handle: handle.clone(),
            types,
            indexes,
            certified: asked.certify,
            public_only: asked.public_only,
        }
    }
}

/// The weight of an answer against the capacity: its approximate size in started
/// [`WEIGHT_UNIT`]s, at least 1.
fn weight(answer: &CachedAnswer) -> u32 {
    let bytes = match answer {
        CachedAnswer::NotFound => 0,
        CachedAnswer::Found { handle, values, .. } => values.iter().fold(handle.len(), |n, v| {
            let refs = v.references.iter().fold(0usize, |r, x| {
                r.saturating_add(x.handle.len()).saturating_add(8)
            });
            n.saturating_add(v.data.len())
                .saturating_add(v.type_name.len())
                .saturating_add(refs)
                .saturating_add(std::mem::size_of::<HandleValue>())
        }),
    };
    u32::try_from(bytes.div_ceil(WEIGHT_UNIT).max(1)).unwrap_or(u32::MAX)
}

/// A cached outcome.
#[derive(Debug, Clone)]
pub(crate) enum CachedAnswer {
    /// Values.
    Found {
        /// The handle as the server spelled it.
        handle: String,
        /// The values.
        values: Vec<HandleValue>,
        /// Where they came from.
        source: Source,
    },
    /// The handle does not exist (100).
    NotFound,
}

#[derive(Debug, Clone)]
struct Entry<T> {
    value: T,
    until: Instant,
}

type ServiceEntry = Arc<Entry<Arc<Vec<Site>>>>;

struct PerEntry;

impl<K, T> moka::Expiry<K, Arc<Entry<T>>> for PerEntry {
    fn expire_after_create(
        &self,
        _key: &K,
        value: &Arc<Entry<T>>,
        _created_at: std::time::Instant,
    ) -> Option<Duration> {
        Some(value.until.saturating_duration_since(Instant::now()))
    }

    /// A replaced entry gets the new value's lifetime (moka's default keeps the old one: a
    /// 60 s "not found" overwritten by an answer valid for a day was evicted after 60 s).
    fn expire_after_update(
        &self,
        _key: &K,
        value: &Arc<Entry<T>>,
        _updated_at: std::time::Instant,
        _duration_until_expiry: Option<Duration>,
    ) -> Option<Duration> {
        Some(value.until.saturating_duration_since(Instant::now()))
    }
}

/// Cache limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CacheConfig {
    /// Most answers kept (0 disables the answer cache); an answer larger than
    /// [`WEIGHT_UNIT`] counts once per started unit.
    pub(crate) capacity: u64,
    /// Most prefixes whose service information is kept.
    pub(crate) service_capacity: u64,
    /// Cap on positive lifetimes.
    pub(crate) max_ttl: Duration,
    /// Lifetime of "not found" answers (zero disables negative caching).
    pub(crate) negative_ttl: Duration,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            capacity: DEFAULT_CAPACITY,
            service_capacity: 1024,
            max_ttl: DEFAULT_MAX_TTL,
            negative_ttl: DEFAULT_NEGATIVE_TTL,
        }
    }
}

/// A live entry of `cache` under `key` (an entry past its deadline on tokio's clock is
/// dropped).
fn live<K, T>(cache: &Cache<K, Arc<Entry<T>>>, key: &K) -> Option<Arc<Entry<T>>>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    T: Send + Sync + 'static,
{
    let e = cache.get(key)?;
    if e.until <= Instant::now() {
        cache.invalidate(key);
        return None;
    }
    Some(e)
}

/// The answer cache: outcomes of resolutions by [`RecordKey`].
pub(crate) struct AnswerCache {
    config: CacheConfig,
    records: Cache<RecordKey, Arc<Entry<CachedAnswer>>>,
}

impl std::fmt::Debug for AnswerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerCache")
            .field("capacity", &self.config.capacity)
            .field("entries", &self.records.entry_count())
            .finish()
    }
}

impl AnswerCache {
    /// An empty cache with these limits.
    pub(crate) fn new(config: CacheConfig) -> Self {
        Self {
            config,
            records: Cache::builder()
                .max_capacity(config.capacity)
                .weigher(|_, e: &Arc<Entry<CachedAnswer>>| weight(&e.value))
                .expire_after(PerEntry)
                .build(),
        }
    }

    /// False when the cache is off (capacity 0).
    pub(crate) fn is_on(&self) -> bool {
        self.config.capacity > 0
    }

    /// A live cached answer.
    pub(crate) fn get(&self, key: &RecordKey) -> Option<CachedAnswer> {
        live(&self.records, key).map(|e| e.value.clone())
    }

    /// Caches values for the lifetime their TTLs allow (nothing when it is zero).
    pub(crate) fn put_found(
        &self,
        key: RecordKey,
        handle: String,
        values: Vec<HandleValue>,
        source: Source,
        now_unix: u64,
    ) {
        let Some(ttl) = values_ttl(&values, now_unix, self.config.max_ttl) else {
            return;
        };
        if ttl.is_zero() || !self.is_on() {
            return;
        }
        let until = Instant::now() + ttl;
        let value = CachedAnswer::Found {
            handle,
            values,
            source,
        };
        self.records.insert(key, Arc::new(Entry { value, until }));
    }

    /// Caches a "not found" answer for the negative TTL.
    pub(crate) fn put_not_found(&self, key: RecordKey) {
        if self.config.negative_ttl.is_zero() || !self.is_on() {
            return;
        }
        let until = Instant::now() + self.config.negative_ttl;
        let value = CachedAnswer::NotFound;
        self.records.insert(key, Arc::new(Entry { value, until }));
    }

    /// Forgets everything.
    pub(crate) fn clear(&self) {
        self.records.invalidate_all();
    }
}

/// The service cache: the sites of prefix handles, by prefix handle and certify flag (an
/// empty list: known to have none).
pub(crate) struct ServiceCache {
    config: CacheConfig,
    services: Cache<(Handle, bool), ServiceEntry>,
}

impl std::fmt::Debug for ServiceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCache")
            .field("entries", &self.services.entry_count())
            .finish()
    }
}

impl ServiceCache {
    /// An empty cache with these limits.
    pub(crate) fn new(config: CacheConfig) -> Self {
        Self {
            config,
            services: Cache::builder()
                .max_capacity(config.service_capacity)
                .expire_after(PerEntry)
                .build(),
        }
    }

    /// The limits.
    pub(crate) fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Live service sites for a prefix handle (empty: known to have none, see
    /// [`ServiceCache::put_not_found`]).
    pub(crate) fn get(&self, prefix_handle: &Handle, certified: bool) -> Option<Arc<Vec<Site>>> {
        live(&self.services, &(prefix_handle.clone(), certified)).map(|e| e.value.clone())
    }

    /// Caches service sites for `ttl` (capped; nothing when zero).
    pub(crate) fn put(
        &self,
        prefix_handle: &Handle,
        certified: bool,
        sites: Arc<Vec<Site>>,
        ttl: Duration,
    ) {
        let ttl = ttl.min(self.config.max_ttl);
        if ttl.is_zero() || self.config.service_capacity == 0 {
            return;
        }
        let until = Instant::now() + ttl;
        self.services.insert(
            (prefix_handle.clone(), certified),
            Arc::new(Entry {
                value: sites,
                until,
            }),
        );
    }

    /// Caches "no service for this prefix handle" (the root has no sites for it, also when
    /// asked with AT) for the negative TTL: an empty site list.
    pub(crate) fn put_not_found(&self, prefix_handle: &Handle, certified: bool) {
        let ttl = self.config.negative_ttl;
        self.put(prefix_handle, certified, Arc::new(Vec::new()), ttl);
    }

    /// Forgets the service information of a prefix handle (after an out-of-date answer).
    pub(crate) fn forget(&self, prefix_handle: &Handle) {
        self.services.invalidate(&(prefix_handle.clone(), false));
        self.services.invalidate(&(prefix_handle.clone(), true));
    }

    /// Forgets everything.
    pub(crate) fn clear(&self) {
        self.services.invalidate_all();
    }
}

/// The lifetime a set of values may be cached: the smallest of their TTLs, relative ones
/// capped at `cap`, absolute ones counted from `now_unix` (past = 0). `None` when a TTL is of
/// an unknown kind (not cached).
pub(crate) fn values_ttl(values: &[HandleValue], now_unix: u64, cap: Duration) -> Option<Duration> {
    values.iter().try_fold(cap, |ttl, v| {
        value_ttl(v, now_unix, cap).map(|this| ttl.min(this))
    })
}

/// The lifetime one value may be cached (see [`values_ttl`]). A relative TTL is an int4
/// (PROTOCOL.md §4.3): one with the sign bit set is negative, i.e. not cacheable, not 68+
/// years (the reference client only caches positive TTLs).
pub(crate) fn value_ttl(value: &HandleValue, now_unix: u64, cap: Duration) -> Option<Duration> {
    let ttl = match value.ttl {
        Ttl::Relative(s) => Duration::from_secs(u64::try_from(s).unwrap_or(0)),
        Ttl::Absolute(t) => Duration::from_secs(u64::from(t).saturating_sub(now_unix)),
        Ttl::Other { .. } => return None,
    };
    Some(ttl.min(cap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::TransportKind;
    use crate::wire::ProtocolVersion;

    fn source() -> Source {
        Source {
            server: Some("127.0.0.1:2641".parse().unwrap()),
            transport: TransportKind::Udp,
            site_serial: 1,
            site: None,
            certified: false,
            authoritative: false,
            protocol_version: ProtocolVersion::V2_11,
            url: None,
        }
    }

    fn value(ttl: Ttl) -> HandleValue {
        let mut v = HandleValue::new(1, "URL", "http://x/");
        v.ttl = ttl;
        v
    }

    #[test]
    fn ttl_rules() {
        let cap = DEFAULT_MAX_TTL;
        let d = |s| Some(Duration::from_secs(s));
        assert_eq!(values_ttl(&[value(Ttl::Relative(60))], 0, cap), d(60));
        assert_eq!(
            values_ttl(&[value(Ttl::Relative(i32::MAX))], 0, cap),
            Some(cap)
        );
        // int4 -1 and every other negative relative TTL: not cached.
        assert_eq!(values_ttl(&[value(Ttl::Relative(-1))], 0, cap), d(0));
        assert_eq!(values_ttl(&[value(Ttl::Relative(i32::MIN))], 0, cap), d(0));
        assert_eq!(values_ttl(&[value(Ttl::Absolute(1_000))], 400, cap), d(600));
        assert_eq!(values_ttl(&[value(Ttl::Absolute(1_000))], 4_000, cap), d(0));
        assert_eq!(
            values_ttl(&[value(Ttl::Relative(60)), value(Ttl::Relative(0))], 0, cap),
            d(0)
        );
        assert_eq!(
            values_ttl(&[value(Ttl::Other { kind: 7, value: 1 })], 0, cap),
            None
        );
    }

    fn asked(types: &[&str], indexes: &[u32], certify: bool) -> Asked {
        Asked {
            types: types.iter().map(|t| t.to_string()).collect(),
            indexes: indexes.to_vec(),
            certify,
            authoritative: false,
            public_only: true,
        }
    }

    fn key(handle: &str) -> RecordKey {
        RecordKey::new(&Handle::parse(handle).unwrap(), &asked(&[], &[], false))
    }

    #[test]
    fn keys_normalise_filters_and_prefix_case() {
        let h = |s: &str| Handle::parse(s).unwrap();
        let a = RecordKey::new(
            &h("abc.def/Suffix"),
            &asked(&["url", "EMAIL"], &[2, 1], false),
        );
        let b = RecordKey::new(
            &h("ABC.DEF/Suffix"),
            &asked(&["EMAIL", "URL", "url"], &[1, 2, 2], false),
        );
        assert_eq!(a, b);
        let c = RecordKey::new(
            &h("ABC.DEF/suffix"),
            &asked(&["url", "EMAIL"], &[2, 1], false),
        );
        assert_ne!(c, a);
        assert_eq!(key("0.na/10.abc"), key("0.NA/10.ABC"));
        assert_eq!(key("ab€/Cd"), key("AB€/Cd"));
        assert_ne!(
            RecordKey::new(&h("a/b"), &asked(&[], &[], true)),
            RecordKey::new(&h("a/b"), &asked(&[], &[], false))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn entries_expire_on_tokio_time() {
        let cache = AnswerCache::new(CacheConfig::default());
        let k = key("a/b");
        cache.put_found(
            k.clone(),
            "a/b".into(),
            vec![value(Ttl::Relative(30))],
            source(),
            0,
        );
        assert!(cache.get(&k).is_some());
        tokio::time::advance(Duration::from_secs(31)).await;
        assert!(cache.get(&k).is_none());

        let nf = key("a/c");
        cache.put_not_found(nf.clone());
        assert!(matches!(cache.get(&nf), Some(CachedAnswer::NotFound)));
        tokio::time::advance(DEFAULT_NEGATIVE_TTL).await;
        assert!(cache.get(&nf).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn big_answers_count_against_the_capacity_by_size() {
        let cache = AnswerCache::new(CacheConfig {
            capacity: 40,
            ..CacheConfig::default()
        });
        // Ten answers of 16 KiB each: 160 units against a capacity of 40.
        for i in 0..10 {
            let mut v = value(Ttl::Relative(600));
            v.data = bytes::Bytes::from(vec![b'x'; 16 * WEIGHT_UNIT]);
            cache.put_found(
                key(&format!("a/{i}")),
                format!("a/{i}"),
                vec![v],
                source(),
                0,
            );
        }
        cache.records.run_pending_tasks();
        assert!(cache.records.weighted_size() <= 40);
        assert!(cache.records.entry_count() <= 2);
        // Small answers still count one each.
        let small = CachedAnswer::Found {
            handle: "a/b".into(),
            values: vec![value(Ttl::Relative(1))],
            source: source(),
        };
        assert_eq!(weight(&small), 1);
        assert_eq!(weight(&CachedAnswer::NotFound), 1);
    }

    #[test]
    fn a_replaced_entry_lives_as_long_as_its_new_value() {
        // moka's clock is real time: a short first lifetime, really waited out.
        let cache = AnswerCache::new(CacheConfig {
            negative_ttl: Duration::from_millis(20),
            ..CacheConfig::default()
        });
        let k = key("a/b");
        cache.put_not_found(k.clone());
        // An authoritative resolution (no cache read) found it meanwhile: valid for an hour.
        let v = value(Ttl::Relative(3600));
        cache.put_found(k.clone(), "a/b".into(), vec![v], source(), 0);
        std::thread::sleep(Duration::from_millis(100));
        cache.records.run_pending_tasks();
        assert!(matches!(cache.get(&k), Some(CachedAnswer::Found { .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn ttl_zero_is_never_cached() {
        let cache = AnswerCache::new(CacheConfig::default());
        let k = key("a/b");
        cache.put_found(
            k.clone(),
            "a/b".into(),
            vec![value(Ttl::Relative(0))],
            source(),
            0,
        );
        assert!(cache.get(&k).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn service_entries_expire_and_can_be_forgotten() {
        let cache = ServiceCache::new(CacheConfig::default());
        let (lower, upper) = (
            Handle::parse("0.na/x").unwrap(),
            Handle::parse("0.NA/X").unwrap(),
        );
        let sites = Arc::new(vec![Site::single("127.0.0.1:1".parse().unwrap())]);
        cache.put(&lower, false, sites.clone(), Duration::from_secs(10));
        assert_eq!(cache.get(&upper, false), Some(sites.clone()));
        assert_eq!(cache.get(&upper, true), None);
        cache.forget(&upper);
        assert_eq!(cache.get(&upper, false), None);
        cache.put(&lower, false, sites, Duration::from_secs(10));
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(cache.get(&upper, false), None);
    }
}
