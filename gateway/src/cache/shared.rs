//! The shared second tier on Redis (feature `redis`): what one gateway fetched, the others
//! find there before they ask the upstream.
//!
//! A record is stored under `redis_prefix` + [`Key::text`] as a JSON document, with Redis's
//! own expiry (`PX`) at the end of its freshness:
//!
//! ```json
//! {"version": 1, "fetched_ms": 1767225600000, "fresh_ms": 86400000,
//!  "values": [{"index": 1, "type": "URL", "data": {"format": "string", "value": "..."}, "ttl": 86400}]}
//! ```
//!
//! the values in the REST API's shape (`handle_resolver::wire::json`, byte-exact for every
//! value), `fetched_ms` the wall-clock time of the fetch (so that a record read by another
//! gateway keeps its true age, and its `Expires` what remains), `fresh_ms` its lifetime; a
//! "not found" answer has `"missing": 100` (or 200, no matching values) in place of `values`.
//!
//! Redis failing never fails a request: each command may take `redis_timeout` at most, and
//! after a failure the tier is left alone for [`BACKOFF`] (the connection manager reconnects
//! meanwhile). The gateway then answers from its own cache and the upstream.

use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use handle_resolver::wire::{json, Limits};
use handle_resolver::ResolveError;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::{json as doc, Value as Json};
use tokio::time::Instant;

use super::{Answered, Good, Kept, Key};
use crate::config::CacheSettings;

/// How long the tier is left alone after a command failed.
pub const BACKOFF: Duration = Duration::from_secs(5);

/// The document format's version.
const VERSION: u64 = 1;

/// The Redis tier.
pub struct Shared {
    prefix: String,
    timeout: Duration,
    /// Set once the first connection is made (in the background).
    connection: Arc<OnceLock<ConnectionManager>>,
    /// While this is in the future, the tier is not asked.
    resting_until: Mutex<Option<Instant>>,
}

/// Why the Redis tier cannot be used at all.
#[derive(Debug, thiserror::Error)]
#[error("redis_url {url}: {reason}")]
pub struct SharedError {
    url: String,
    reason: String,
}

impl Shared {
    /// The tier at `url`: connected when it answers within `redis_timeout`, else connecting
    /// in the background (trying again every second until it answers).
    pub async fn connect(url: &str, settings: &CacheSettings) -> Result<Shared, SharedError> {
        let client = redis::Client::open(url).map_err(|e| SharedError {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(settings.redis_timeout)
            .set_response_timeout(settings.redis_timeout)
            .set_number_of_retries(1)
            .set_max_delay(1_000);
        let connection = Arc::new(OnceLock::new());
        let first = tokio::time::timeout(
            settings.redis_timeout,
            ConnectionManager::new_with_config(client.clone(), config.clone()),
        )
        .await;
        match first {
            Ok(Ok(manager)) => {
                let _ = connection.set(manager);
            }
            Ok(Err(e)) => {
                tracing::warn!("redis tier {url}: {e} (going on without it; retrying)");
                keep_trying(client, config, Arc::downgrade(&connection), url.to_owned());
            }
            Err(_) => {
                tracing::warn!(
                    "redis tier {url}: no answer within {:?} (going on without it; retrying)",
                    settings.redis_timeout
                );
                keep_trying(client, config, Arc::downgrade(&connection), url.to_owned());
            }
        }
        Ok(Shared {
            prefix: settings.redis_prefix.clone(),
            timeout: settings.redis_timeout,
            connection,
            resting_until: Mutex::new(None),
        })
    }

    /// The connection, unless the tier is not connected or resting after a failure.
    fn usable(&self) -> Option<ConnectionManager> {
        let resting = self.resting_until.lock().ok().and_then(|r| *r);
        if resting.is_some_and(|until| Instant::now() < until) {
            return None;
        }
        self.connection.get().cloned()
    }

    fn failed(&self, what: &str, e: &dyn std::fmt::Display) {
        tracing::warn!(
            "redis tier: {what}: {e} (left alone for {} s)",
            BACKOFF.as_secs()
        );
        if let Ok(mut r) = self.resting_until.lock() {
            *r = Some(Instant::now() + BACKOFF);
        }
    }

    async fn run<T: redis::FromRedisValue>(&self, what: &str, cmd: redis::Cmd) -> Option<T> {
        let mut connection = self.usable()?;
        match tokio::time::timeout(self.timeout, cmd.query_async::<T>(&mut connection)).await {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) => {
                self.failed(what, &e);
                None
            }
            Err(_) => {
                self.failed(what, &format!("no answer within {:?}", self.timeout));
                None
            }
        }
    }

    /// The fresh record of `key` in Redis, if there is one.
    pub(crate) async fn get(&self, key: &Key) -> Option<Good> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(format!("{}{}", self.prefix, key.text()));
        let bytes: Option<Vec<u8>> = self.run("GET", cmd).await?;
        let document: Json = serde_json::from_slice(&bytes?).ok()?;
        match decode(&document, key, SystemTime::now()) {
            Ok(good) => good,
            Err(why) => {
                tracing::warn!("redis tier: {}{}: {why}", self.prefix, key.text());
                None
            }
        }
    }

    /// Stores `good` under `key` until its freshness ends.
    pub(crate) async fn put(&self, key: &Key, good: &Good) {
        let left = good.fresh_until.saturating_duration_since(Instant::now());
        let ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
        if ms == 0 {
            return;
        }
        let mut cmd = redis::cmd("SET");
        cmd.arg(format!("{}{}", self.prefix, key.text()))
            .arg(encode(good).to_string())
            .arg("PX")
            .arg(ms);
        let _: Option<()> = self.run("SET", cmd).await;
    }
}

/// Connects in the background, every second until it works (or the tier is dropped).
fn keep_trying(
    client: redis::Client,
    config: ConnectionManagerConfig,
    cell: Weak<OnceLock<ConnectionManager>>,
    url: String,
) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if cell.strong_count() == 0 {
                return;
            }
            if let Ok(manager) =
                ConnectionManager::new_with_config(client.clone(), config.clone()).await
            {
                if let Some(cell) = cell.upgrade() {
                    let _ = cell.set(manager);
                    tracing::info!("redis tier {url}: connected");
                }
                return;
            }
        }
    });
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The document of a record.
pub(crate) fn encode(good: &Good) -> Json {
    let fresh = good.fresh_until.saturating_duration_since(good.fetched);
    let mut d = doc!({
        "version": VERSION,
        "fetched_ms": unix_ms(good.fetched_wall),
        "fresh_ms": u64::try_from(fresh.as_millis()).unwrap_or(u64::MAX),
    });
    match &good.answered {
        Answered::Values(kept) => {
            d["values"] = Json::Array(kept.values.iter().map(json::value_to_json).collect());
        }
        Answered::Missing(e) => {
            let code = match e {
                ResolveError::NoMatchingValues { .. } => 200,
                _ => 100,
            };
            d["missing"] = Json::from(code);
        }
    }
    d
}

/// The record of a document read at `now`: `None` when no longer fresh; `Err` naming the
/// member that is not as written.
pub(crate) fn decode(d: &Json, key: &Key, now: SystemTime) -> Result<Option<Good>, String> {
    let number = |name: &str| {
        d[name]
            .as_u64()
            .ok_or_else(|| format!("{name}: not a whole number"))
    };
    if number("version")? != VERSION {
        return Err(format!("version: not {VERSION}"));
    }
    let fetched_ms = number("fetched_ms")?;
    let fresh = Duration::from_millis(number("fresh_ms")?);
    let fetched_wall = UNIX_EPOCH + Duration::from_millis(fetched_ms);
    // A fetch time ahead of this clock (another machine's) counts as now.
    let age = now.duration_since(fetched_wall).unwrap_or(Duration::ZERO);
    if age >= fresh {
        return Ok(None);
    }
    let answered = match (&d["values"], d["missing"].as_u64()) {
        (Json::Array(_), None) => Answered::Values(Kept::new(
            json::values_from_json(&d["values"], &Limits::default())
                .map_err(|e| format!("values: {e}"))?,
        )),
        (Json::Null, Some(100)) => Answered::Missing(ResolveError::NotFound {
            handle: key.handle().clone(),
        }),
        (Json::Null, Some(200)) => Answered::Missing(ResolveError::NoMatchingValues {
            handle: key.handle().clone(),
        }),
        _ => return Err("values or missing (100, 200): neither".into()),
    };
    let local_now = Instant::now();
    let fetched = local_now.checked_sub(age).unwrap_or(local_now);
    Ok(Some(Good {
        answered,
        fetched,
        fresh_until: fetched + fresh,
        fetched_wall,
        from_shared: true,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use handle_resolver::wire::{HandleValue, Ttl};
    use handle_resolver::Handle;

    fn good(answered: Answered, fresh: Duration) -> Good {
        let fetched = Instant::now();
        Good {
            answered,
            fetched,
            fresh_until: fetched + fresh,
            fetched_wall: SystemTime::now(),
            from_shared: false,
        }
    }

    #[test]
    fn documents_round_trip_and_keep_their_age() {
        let key = Key::new(&Handle::parse("20.500.1/X").unwrap(), &[], &[]);
        let mut url = HandleValue::new(1, "URL", "https://a.example/");
        url.ttl = Ttl::Absolute(2_000_000_000);
        url.timestamp = 1_767_225_600;
        let binary = HandleValue::new(2, "BIN", vec![0u8, 159, 255]);
        let values = vec![url, binary];
        let g = good(
            Answered::Values(Kept::new(values.clone())),
            Duration::from_secs(600),
        );
        let d = encode(&g);
        let later = SystemTime::now() + Duration::from_secs(100);
        let back = decode(&d, &key, later).unwrap().expect("still fresh");
        assert!(matches!(&back.answered, Answered::Values(v) if v.values == values));
        assert!(back.from_shared);
        let left = back.fresh_until.saturating_duration_since(Instant::now());
        assert!(
            (498..=500).contains(&left.as_secs()),
            "{left:?} of 600 s left after 100"
        );
        let much_later = SystemTime::now() + Duration::from_secs(601);
        assert!(decode(&d, &key, much_later).unwrap().is_none());

        let missing = good(
            Answered::Missing(ResolveError::NoMatchingValues {
                handle: key.handle().clone(),
            }),
            Duration::from_secs(10),
        );
        let back = decode(&encode(&missing), &key, SystemTime::now()).unwrap();
        assert!(matches!(
            back.map(|g| g.answered),
            Some(Answered::Missing(ResolveError::NoMatchingValues { .. }))
        ));
        let e = decode(
            &doc!({"version": 1, "fetched_ms": 1, "fresh_ms": "x"}),
            &key,
            later,
        );
        assert_eq!(e.unwrap_err(), "fresh_ms: not a whole number");
    }
}
