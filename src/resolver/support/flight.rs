//! Single flight: concurrent callers asking for the same thing share one piece of work (one
//! service lookup per prefix, one request per identical query) instead of each sending their
//! own requests.
//!
//! The work is a [`Shared`] future: whichever waiting caller polls it drives it, so a caller
//! that goes away (cancelled, timed out) does not fail the others. The table holds only a
//! [`WeakShared`]: once every caller has gone, the work is dropped (and with it every request
//! it had in flight), and its entry removes itself. An entry is also removed when its work
//! completes, so results are never kept here: caching is the caches' business.
//!
//! A flight has no clock of its own: [`Trace::share`](super::trace::Trace::share) runs its
//! work under the deadline of the call that started it, so that work shared among a stream
//! of callers (a bulk run over one prefix) does not outlive each of their deadlines.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use futures::future::{BoxFuture, FutureExt, Shared, WeakShared};

/// The shared work of one flight.
pub(crate) type Flight<V> = Shared<BoxFuture<'static, V>>;

type Table<K, V, T> = HashMap<K, (u64, WeakShared<BoxFuture<'static, V>>, T)>;

/// Flights in progress, by key. Each flight carries a `T` its callers get too (the
/// bookkeeping of the shared work, so that a caller can list its attempts before it ends).
pub(crate) struct Flights<K, V, T> {
    table: Arc<Mutex<Table<K, V, T>>>,
    next_token: AtomicU64,
}

impl<K, V, T> Flights<K, V, T> {
    /// No flight in progress.
    pub(crate) fn new() -> Self {
        Self {
            table: Arc::new(Mutex::new(HashMap::default())),
            next_token: AtomicU64::new(1),
        }
    }
}

impl<K, V, T> std::fmt::Debug for Flights<K, V, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flights")
            .field("in_flight", &self.table.lock().len())
            .finish()
    }
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
        let mut t = table.lock();
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
        let mut t = self.table.lock();
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
        self.table
            .lock()
            .get(key)
            .and_then(|(_, weak, tag)| Some((weak.upgrade()?, tag.clone())))
    }

    /// Flights in progress (entries whose work is still alive).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn callers_share_one_run_and_the_entry_lands() {
        let flights: Flights<u32, u32, ()> = Flights::new();
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
        let flights: Flights<u32, u32, ()> = Flights::new();
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
        let flights: Flights<u32, u32, ()> = Flights::new();
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
}
