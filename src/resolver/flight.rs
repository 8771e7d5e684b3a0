//! Single flight: concurrent callers asking for the same thing share one piece of work (one
//! service lookup per prefix, one request per identical query) instead of each sending their
//! own requests.
//!
//! The work is a [`Shared`] future: whichever waiting caller polls it drives it, so a caller
//! that goes away (cancelled, timed out) does not fail the others. The table holds only a
//! [`WeakShared`]: once every caller has gone, the work is dropped (and with it every request
//! it had in flight), and its entry removes itself. An entry is also removed when its work
//! completes, so results are never kept here: caching is the caches' business.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use futures::future::{BoxFuture, FutureExt, Shared, WeakShared};

use super::fnv::FnvBuild;

/// The shared work of one flight.
pub(crate) type Flight<V> = Shared<BoxFuture<'static, V>>;

type Table<K, V, T> = HashMap<K, (u64, WeakShared<BoxFuture<'static, V>>, T), FnvBuild>;

/// Flights in progress, by key. Each flight carries a `T` its callers get too (the
/// bookkeeping of the shared work, so that a caller can list its attempts before it ends).
pub(crate) struct Flights<K, V, T> {
    table: Arc<Mutex<Table<K, V, T>>>,
    next_token: AtomicU64,
}

impl<K, V, T> Default for Flights<K, V, T> {
    fn default() -> Self {
        Self {
            table: Arc::new(Mutex::new(HashMap::default())),
            next_token: AtomicU64::new(1),
        }
    }
}

impl<K, V, T> std::fmt::Debug for Flights<K, V, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flights")
            .field("in_flight", &lock(&self.table).len())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes its flight's entry when the flight's work ends: completed, or dropped because every
/// caller went away.
struct Landing<K: Hash + Eq, V, T> {
    table: Weak<Mutex<Table<K, V, T>>>,
    key: Option<K>,
    token: u64,
}

impl<K: Hash + Eq, V, T> Drop for Landing<K, V, T> {
    fn drop(&mut self) {
        let (Some(table), Some(key)) = (self.table.upgrade(), self.key.take()) else {
            return;
        };
        let mut t = lock(&table);
        if t.get(&key)
            .is_some_and(|(token, _, _)| *token == self.token)
        {
            // The removed entry only holds a weak reference: dropping it under the lock
            // cannot drop (and re-enter) any work.
            t.remove(&key);
        }
    }
}

impl<K, V, T> Flights<K, V, T>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    T: Clone + Send + 'static,
{
    /// Joins the flight for `key`, or starts one running `work` (built by `start` from the
    /// flight's `T`, made by `tag`; `start` must only build the future). Returns the flight,
    /// its `T` and whether this call started it.
    pub(crate) fn join_or_start(
        &self,
        key: K,
        tag: impl FnOnce() -> T,
        start: impl FnOnce(T) -> BoxFuture<'static, V>,
    ) -> (Flight<V>, T, bool) {
        let mut t = lock(&self.table);
        if let Some((flight, tag)) = t
            .get(&key)
            .and_then(|(_, weak, tag)| Some((weak.upgrade()?, tag.clone())))
        {
            return (flight, tag, false);
        }
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let landing = Landing {
            table: Arc::downgrade(&self.table),
            key: Some(key.clone()),
            token,
        };
        let tag = tag();
        let work = start(tag.clone());
        let flight = async move {
            let out = work.await;
            drop(landing);
            out
        }
        .boxed()
        .shared();
        if let Some(weak) = flight.downgrade() {
            t.insert(key, (token, weak, tag.clone()));
        }
        (flight, tag, true)
    }

    /// Joins the flight for `key` if there is one.
    pub(crate) fn join(&self, key: &K) -> Option<(Flight<V>, T)> {
        lock(&self.table)
            .get(key)
            .and_then(|(_, weak, tag)| Some((weak.upgrade()?, tag.clone())))
    }

    /// Flights in progress (entries whose work is still alive).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.table).len()
    }
}

/// Single flight where the first caller (the leader) runs the work itself, inside its own
/// future, and later callers (followers) wait for a copy of the outcome.
///
/// Cheaper than [`Flights`] when, as for most resolutions, nobody joins: no boxed or shared
/// future, no task, one table entry and two lock round trips; the outcome is copied only
/// for followers that are actually waiting. The price is how a leader that goes away
/// (cancelled, timed out) is handled: its work stops with it, its followers learn so (their
/// [`Follower::wait`] returns `None`) and ask again, one of them becoming the new leader.
/// That suits work that is cheap to restart (one request), not service lookups that walk
/// several servers.
pub(crate) struct LeaderFlights<K, V, T> {
    /// The flights, and the token of the last one started (counted under the same lock, so
    /// a resolution touches one shared cache line here, not two).
    table: Mutex<LeaderTable<K, V, T>>,
}

/// The flights of a [`LeaderFlights`] by key, and the last token given out.
type LeaderTable<K, V, T> = (HashMap<K, LeaderEntry<V, T>, FnvBuild>, u64);

struct LeaderEntry<V, T> {
    token: u64,
    tag: T,
    waiters: Vec<tokio::sync::oneshot::Sender<V>>,
}

impl<K, V, T> Default for LeaderFlights<K, V, T> {
    fn default() -> Self {
        Self {
            table: Mutex::new((HashMap::default(), 0)),
        }
    }
}

impl<K, V, T> std::fmt::Debug for LeaderFlights<K, V, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderFlights")
            .field("in_flight", &lock(&self.table).0.len())
            .finish()
    }
}

/// What [`LeaderFlights::join_or_lead`] made of a caller.
pub(crate) enum Role<'a, K: Hash + Eq, V, T> {
    /// Run the work, then hand its outcome to [`Leader::finish`].
    Lead(Leader<'a, K, V, T>),
    /// Wait for the leader (whose tag is given).
    Follow(Follower<V>, T),
}

/// The leader's obligation: [`Leader::finish`] with the outcome, or (when dropped without
/// it) the followers are told the work stopped.
pub(crate) struct Leader<'a, K: Hash + Eq, V, T> {
    flights: &'a LeaderFlights<K, V, T>,
    key: Option<K>,
    token: u64,
}

/// A follower's wait.
pub(crate) struct Follower<V>(tokio::sync::oneshot::Receiver<V>);

impl<V> Follower<V> {
    /// The leader's outcome, or `None` when the leader went away without one.
    pub(crate) async fn wait(self) -> Option<V> {
        self.0.await.ok()
    }
}

impl<K: Hash + Eq, V, T> LeaderFlights<K, V, T> {
    /// Follows the flight for `key` when there is one (getting its tag), else leads a new
    /// one tagged with `tag()`.
    pub(crate) fn join_or_lead(&self, key: K, tag: impl FnOnce() -> T) -> Role<'_, K, V, T>
    where
        K: Clone,
        T: Clone,
    {
        let mut guard = lock(&self.table);
        let (t, last_token) = &mut *guard;
        if let Some(entry) = t.get_mut(&key) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            entry.waiters.push(tx);
            return Role::Follow(Follower(rx), entry.tag.clone());
        }
        *last_token = last_token.wrapping_add(1);
        let token = *last_token;
        t.insert(
            key.clone(),
            LeaderEntry {
                token,
                tag: tag(),
                waiters: Vec::new(),
            },
        );
        Role::Lead(Leader {
            flights: self,
            key: Some(key),
            token,
        })
    }

    /// Removes the leader's entry (when it is still its own) and returns its waiters.
    fn land(&self, key: K, token: u64) -> Vec<tokio::sync::oneshot::Sender<V>> {
        let mut guard = lock(&self.table);
        let t = &mut guard.0;
        match t.remove(&key) {
            Some(entry) if entry.token == token => entry.waiters,
            // Not this leader's flight (cannot happen while the leader holds its entry, but
            // a stranger's entry is put back rather than lost).
            Some(entry) => {
                t.insert(key, entry);
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// Flights in progress.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.table).0.len()
    }
}

impl<K: Hash + Eq, V, T> Leader<'_, K, V, T> {
    /// Ends the flight: every follower waiting gets the outcome `outcome()` builds (called
    /// only when there is one).
    pub(crate) fn finish(mut self, outcome: impl FnOnce() -> V)
    where
        V: Clone,
    {
        let Some(key) = self.key.take() else {
            return;
        };
        let mut waiters = self.flights.land(key, self.token);
        let Some(last) = waiters.pop() else {
            return;
        };
        let value = outcome();
        for w in waiters {
            // A follower that went away meanwhile is no one's loss.
            let _ = w.send(value.clone());
        }
        let _ = last.send(value);
    }
}

impl<K: Hash + Eq, V, T> Drop for Leader<'_, K, V, T> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // Dropping the senders tells the followers the work stopped.
            drop(self.flights.land(key, self.token));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn callers_share_one_run_and_the_entry_lands() {
        let flights: Flights<u32, u32, ()> = Flights::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let start = |()| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                7
            }
            .boxed()
        };
        let (a, (), started_a) = flights.join_or_start(1, || (), start);
        let (b, (), started_b) = flights.join_or_start(1, || (), start);
        assert!(started_a && !started_b);
        assert_eq!(flights.len(), 1);
        assert_eq!(futures::join!(a, b), (7, 7));
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(flights.len(), 0);
        // A later call runs the work again.
        let (c, (), started_c) = flights.join_or_start(1, || (), start);
        assert!(started_c);
        assert_eq!(c.await, 7);
        assert_eq!(runs.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_first_caller_does_not_fail_the_others() {
        let flights: Flights<u32, u32, ()> = Flights::default();
        let start = |()| {
            async {
                tokio::time::sleep(Duration::from_millis(10)).await;
                9
            }
            .boxed()
        };
        let (mut first, (), _) = flights.join_or_start(1, || (), start);
        // The first caller drives the work part of the way, then goes away.
        assert!(futures::poll!(&mut first).is_pending());
        let (second, (), started) = flights.join_or_start(1, || (), start);
        assert!(!started);
        drop(first);
        assert_eq!(second.await, 9);
    }

    #[tokio::test(start_paused = true)]
    async fn work_is_dropped_when_every_caller_is_gone() {
        struct Alive(Arc<AtomicUsize>);
        impl Drop for Alive {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let alive = Arc::new(AtomicUsize::new(0));
        let flights: Flights<u32, u32, ()> = Flights::default();
        let a2 = alive.clone();
        let (mut f, (), _) = flights.join_or_start(
            1,
            || (),
            move |()| {
                async move {
                    a2.fetch_add(1, Ordering::SeqCst);
                    let _alive = Alive(a2);
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    1
                }
                .boxed()
            },
        );
        assert!(futures::poll!(&mut f).is_pending());
        assert_eq!(alive.load(Ordering::SeqCst), 1);
        drop(f);
        assert_eq!(alive.load(Ordering::SeqCst), 0);
        assert_eq!(flights.len(), 0);
    }

    #[tokio::test]
    async fn followers_get_the_leaders_outcome_built_only_for_them() {
        let flights: LeaderFlights<u32, String, u8> = LeaderFlights::default();
        // Alone: the outcome is never built.
        let Role::Lead(alone) = flights.join_or_lead(1, || 7) else {
            panic!("the first caller leads");
        };
        assert_eq!(flights.len(), 1);
        alone.finish(|| panic!("no follower, no outcome"));
        assert_eq!(flights.len(), 0);
        // With two followers: each gets a copy, and they see the leader's tag.
        let Role::Lead(leader) = flights.join_or_lead(1, || 7) else {
            panic!("a new flight after the last one landed");
        };
        let mut waits = Vec::new();
        for _ in 0..2 {
            match flights.join_or_lead(1, || 99) {
                Role::Follow(f, tag) => {
                    assert_eq!(tag, 7);
                    waits.push(f.wait());
                }
                Role::Lead(_) => panic!("a flight is in progress"),
            }
        }
        // Another key is another flight.
        assert!(matches!(flights.join_or_lead(2, || 0), Role::Lead(_)));
        let mut built = 0;
        leader.finish(|| {
            built += 1;
            "answer".to_string()
        });
        assert_eq!(built, 1);
        let got = futures::future::join_all(waits).await;
        assert_eq!(
            got,
            [Some("answer".to_string()), Some("answer".to_string())]
        );
        assert_eq!(flights.len(), 0);
    }

    #[tokio::test]
    async fn a_leader_that_goes_away_lets_a_follower_lead() {
        let flights: LeaderFlights<u32, u32, ()> = LeaderFlights::default();
        let leader = flights.join_or_lead(5, || ());
        let Role::Follow(follower, ()) = flights.join_or_lead(5, || ()) else {
            panic!("a flight is in progress");
        };
        drop(leader);
        assert_eq!(follower.wait().await, None);
        assert_eq!(flights.len(), 0);
        assert!(matches!(flights.join_or_lead(5, || ()), Role::Lead(_)));
    }
}
