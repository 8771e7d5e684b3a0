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

use crate::wire::{HandleValue, Ttl};

use super::record::Source;
use super::sites::Site;

/// Longest lifetime given to a positive answer (relative TTLs above it are capped).
pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(2 * 24 * 3600);
/// Default lifetime of a "handle not found" answer.
pub const DEFAULT_NEGATIVE_TTL: Duration = Duration::from_secs(60);
/// Default number of cached answers (an answer of more than [`WEIGHT_UNIT`] bytes counts
/// as one per started unit).
pub const DEFAULT_CAPACITY: u64 = 10_000;
/// Size of answer that counts as one entry against the capacity: most answers are smaller,
/// a 256 KiB one counts as 256 entries, so memory stays near `capacity` KiB at most.
pub const WEIGHT_UNIT: usize = 1024;

/// What identifies a cached answer (also the key of identical queries in flight).
///
/// Hashed once, when built: a resolution looks its key up two or three times (cache, flight
/// table, flight landing), each then costing one `u64` instead of the whole key.
#[derive(Debug, Clone)]
pub struct RecordKey {
    /// The handle, prefix upper-cased (the whole handle for `0.` handles).
    pub handle: String,
    /// Type filter, upper-cased, sorted, deduplicated.
    pub types: Vec<String>,
    /// Index filter, sorted, deduplicated.
    pub indexes: Vec<u32>,
    /// Certified answer.
    pub certified: bool,
    /// Public values only.
    pub public_only: bool,
    /// The hash of the fields above.
    hash: u64,
}

impl PartialEq for RecordKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
            && self.handle == other.handle
            && self.types == other.types
            && self.indexes == other.indexes
            && self.certified == other.certified
            && self.public_only == other.public_only
    }
}

impl Eq for RecordKey {}

impl std::hash::Hash for RecordKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl RecordKey {
    /// Builds the key, normalising the filters.
    pub fn new(
        handle: &str,
        types: &[String],
        indexes: &[u32],
        certified: bool,
        public_only: bool,
    ) -> Self {
        let mut types: Vec<String> = types.iter().map(|t| t.to_ascii_uppercase()).collect();
        types.sort();
        types.dedup();
        let mut indexes = indexes.to_vec();
        indexes.sort_unstable();
        indexes.dedup();
        let handle = cache_handle(handle);
        let hash = {
            use std::hash::BuildHasher;
            super::fnv::FnvBuild::default().hash_one((
                &handle,
                &types,
                &indexes,
                certified,
                public_only,
            ))
        };
        Self {
            handle,
            types,
            indexes,
            certified,
            public_only,
            hash,
        }
    }
}

/// The handle with its prefix (or, for `0.` handles, all of it) ASCII upper-cased.
pub fn cache_handle(handle: &str) -> String {
    let global = handle
        .as_bytes()
        .get(..2)
        .is_some_and(|p| p.eq_ignore_ascii_case(b"0."));
    if global || !handle.contains('/') {
        return handle.to_ascii_uppercase();
    }
    match handle.split_once('/') {
        Some((p, s)) => {
            let mut out = String::with_capacity(handle.len());
            out.push_str(p);
            out.make_ascii_uppercase();
            out.push('/');
            out.push_str(s);
            out
        }
        None => handle.to_ascii_uppercase(),
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
pub enum CachedAnswer {
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
pub struct CacheConfig {
    /// Most answers kept (0 disables the answer cache); an answer larger than
    /// [`WEIGHT_UNIT`] counts once per started unit.
    pub capacity: u64,
    /// Most prefixes whose service information is kept.
    pub service_capacity: u64,
    /// Cap on positive lifetimes.
    pub max_ttl: Duration,
    /// Lifetime of "not found" answers (zero disables negative caching).
    pub negative_ttl: Duration,
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

/// The resolver's caches.
pub struct Caches {
    config: CacheConfig,
    records: Cache<RecordKey, Arc<Entry<CachedAnswer>>>,
    services: Cache<(String, bool), ServiceEntry>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches")
            .field("config", &self.config)
            .field("records", &self.records.entry_count())
            .field("services", &self.services.entry_count())
            .finish()
    }
}

impl Caches {
    /// Empty caches with these limits.
    pub fn new(config: CacheConfig) -> Self {
        Self {
            config,
            records: Cache::builder()
                .max_capacity(config.capacity)
                .weigher(|_, e: &Arc<Entry<CachedAnswer>>| weight(&e.value))
                .expire_after(PerEntry)
                .build(),
            services: Cache::builder()
                .max_capacity(config.service_capacity)
                .expire_after(PerEntry)
                .build(),
        }
    }

    /// The limits.
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// A live cached answer.
    pub fn get(&self, key: &RecordKey) -> Option<CachedAnswer> {
        let e = self.records.get(key)?;
        if e.until <= Instant::now() {
            self.records.invalidate(key);
            return None;
        }
        Some(e.value.clone())
    }

    /// Caches values for the lifetime their TTLs allow (nothing when it is zero).
    pub fn put_found(
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
        if ttl.is_zero() || self.config.capacity == 0 {
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
    pub fn put_not_found(&self, key: RecordKey) {
        if self.config.negative_ttl.is_zero() || self.config.capacity == 0 {
            return;
        }
        let until = Instant::now() + self.config.negative_ttl;
        let value = CachedAnswer::NotFound;
        self.records.insert(key, Arc::new(Entry { value, until }));
    }

    /// Live service sites for a prefix handle (empty: known to have none, see
    /// [`Caches::put_service_not_found`]).
    pub fn get_service(&self, prefix_handle: &str, certified: bool) -> Option<Arc<Vec<Site>>> {
        let key = (prefix_handle.to_ascii_uppercase(), certified);
        let e = self.services.get(&key)?;
        if e.until <= Instant::now() {
            self.services.invalidate(&key);
            return None;
        }
        Some(e.value.clone())
    }

    /// Caches service sites for `ttl` (capped; nothing when zero).
    pub fn put_service(
        &self,
        prefix_handle: &str,
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
            (prefix_handle.to_ascii_uppercase(), certified),
            Arc::new(Entry {
                value: sites,
                until,
            }),
        );
    }

    /// Caches "no service for this prefix handle" (the root has no sites for it, also when
    /// asked with AT) for the negative TTL: an empty site list, which
    /// [`Caches::get_service`] callers read as not found.
    pub fn put_service_not_found(&self, prefix_handle: &str, certified: bool) {
        let ttl = self.config.negative_ttl;
        self.put_service(prefix_handle, certified, Arc::new(Vec::new()), ttl);
    }

    /// Forgets the service information of a prefix handle (after an out-of-date answer).
    pub fn forget_service(&self, prefix_handle: &str) {
        let p = prefix_handle.to_ascii_uppercase();
        self.services.invalidate(&(p.clone(), false));
        self.services.invalidate(&(p, true));
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.records.invalidate_all();
        self.services.invalidate_all();
    }
}

/// The lifetime a set of values may be cached: the smallest of their TTLs, relative ones
/// capped at `cap`, absolute ones counted from `now_unix` (past = 0). `None` when a TTL is of
/// an unknown kind (not cached).
pub fn values_ttl(values: &[HandleValue], now_unix: u64, cap: Duration) -> Option<Duration> {
    values.iter().try_fold(cap, |ttl, v| {
        value_ttl(v, now_unix, cap).map(|this| ttl.min(this))
    })
}

/// The lifetime one value may be cached (see [`values_ttl`]). A relative TTL is an int4
/// (PROTOCOL.md §4.3): one with the sign bit set is negative, i.e. not cacheable, not 68+
/// years (the reference client only caches positive TTLs).
pub fn value_ttl(value: &HandleValue, now_unix: u64, cap: Duration) -> Option<Duration> {
    let ttl = match value.ttl {
        Ttl::Relative(s) if i32::try_from(s).is_err() => Duration::ZERO,
        Ttl::Relative(s) => Duration::from_secs(u64::from(s)),
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
            server: "127.0.0.1:2641".parse().unwrap(),
            transport: TransportKind::Udp,
            site_serial: 1,
            site_description: None,
            certified: false,
            authoritative: false,
            protocol_version: ProtocolVersion::V2_11,
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
            values_ttl(&[value(Ttl::Relative(i32::MAX as u32))], 0, cap),
            Some(cap)
        );
        // int4 -1 and every other negative relative TTL: not cached.
        assert_eq!(values_ttl(&[value(Ttl::Relative(u32::MAX))], 0, cap), d(0));
        assert_eq!(values_ttl(&[value(Ttl::Relative(1 << 31))], 0, cap), d(0));
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

    #[test]
    fn keys_normalise_filters_and_prefix_case() {
        let a = RecordKey::new(
            "abc.def/Suffix",
            &["url".into(), "EMAIL".into()],
            &[2, 1],
            false,
            true,
        );
        let b = RecordKey::new(
            "ABC.DEF/Suffix",
            &["EMAIL".into(), "URL".into(), "url".into()],
            &[1, 2, 2],
            false,
            true,
        );
        assert_eq!(a, b);
        let c = RecordKey::new("ABC.DEF/suffix", &[], &[], false, true);
        assert_ne!(c.handle, a.handle);
        assert_eq!(cache_handle("0.na/10.abc"), "0.NA/10.ABC");
        // A first character of more than one byte (alias targets come from servers).
        assert_eq!(cache_handle("€/x"), "€/x");
        assert_eq!(cache_handle("ab€/Cd"), "AB€/Cd");
        assert_ne!(
            RecordKey::new("a/b", &[], &[], true, true),
            RecordKey::new("a/b", &[], &[], false, true)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn entries_expire_on_tokio_time() {
        let caches = Caches::new(CacheConfig::default());
        let key = RecordKey::new("a/b", &[], &[], false, true);
        caches.put_found(
            key.clone(),
            "a/b".into(),
            vec![value(Ttl::Relative(30))],
            source(),
            0,
        );
        assert!(caches.get(&key).is_some());
        tokio::time::advance(Duration::from_secs(31)).await;
        assert!(caches.get(&key).is_none());

        let nf = RecordKey::new("a/c", &[], &[], false, true);
        caches.put_not_found(nf.clone());
        assert!(matches!(caches.get(&nf), Some(CachedAnswer::NotFound)));
        tokio::time::advance(DEFAULT_NEGATIVE_TTL).await;
        assert!(caches.get(&nf).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn big_answers_count_against_the_capacity_by_size() {
        let caches = Caches::new(CacheConfig {
            capacity: 40,
            ..CacheConfig::default()
        });
        // Ten answers of 16 KiB each: 160 units against a capacity of 40.
        for i in 0..10 {
            let mut v = value(Ttl::Relative(600));
            v.data = bytes::Bytes::from(vec![b'x'; 16 * WEIGHT_UNIT]);
            let key = RecordKey::new(&format!("a/{i}"), &[], &[], false, true);
            caches.put_found(key, format!("a/{i}"), vec![v], source(), 0);
        }
        caches.records.run_pending_tasks();
        assert!(caches.records.weighted_size() <= 40);
        assert!(caches.records.entry_count() <= 2);
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
        let caches = Caches::new(CacheConfig {
            negative_ttl: Duration::from_millis(20),
            ..CacheConfig::default()
        });
        let key = RecordKey::new("a/b", &[], &[], false, true);
        caches.put_not_found(key.clone());
        // An authoritative resolution (no cache read) found it meanwhile: valid for an hour.
        let v = value(Ttl::Relative(3600));
        caches.put_found(key.clone(), "a/b".into(), vec![v], source(), 0);
        std::thread::sleep(Duration::from_millis(100));
        caches.records.run_pending_tasks();
        assert!(matches!(caches.get(&key), Some(CachedAnswer::Found { .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn ttl_zero_is_never_cached() {
        let caches = Caches::new(CacheConfig::default());
        let key = RecordKey::new("a/b", &[], &[], false, true);
        caches.put_found(
            key.clone(),
            "a/b".into(),
            vec![value(Ttl::Relative(0))],
            source(),
            0,
        );
        assert!(caches.get(&key).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn service_entries_expire_and_can_be_forgotten() {
        let caches = Caches::new(CacheConfig::default());
        let sites = Arc::new(vec![Site::single("127.0.0.1:1".parse().unwrap())]);
        caches.put_service("0.na/x", false, sites.clone(), Duration::from_secs(10));
        assert_eq!(caches.get_service("0.NA/X", false), Some(sites.clone()));
        assert_eq!(caches.get_service("0.NA/X", true), None);
        caches.forget_service("0.NA/X");
        assert_eq!(caches.get_service("0.NA/X", false), None);
        caches.put_service("0.na/x", false, sites, Duration::from_secs(10));
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(caches.get_service("0.NA/X", false), None);
    }
}
