//! [`Limiter`]: how many UDP requests may be in flight to one server at once, learned from
//! what the network says, so that asking for more concurrency is never slower: the requests
//! over the limit wait here, in the client, instead of overflowing the server's receive
//! buffer (where each dropped datagram costs a 500 ms retransmission).
//!
//! The limit follows a gradient on round-trip times, in the manner of Netflix's
//! concurrency-limits (`Gradient2Limit`): with `rtt_noload` the lowest RTT seen lately, every
//! answer moves the limit toward `limit × min(1, 2 × rtt_noload / rtt) + √limit`, so it grows
//! while answers come as fast as an idle server gives them (by √limit per answer, smoothed:
//! a path with a long RTT fills quickly) and shrinks as soon as they queue (RTT over twice the
//! idle one), before the server drops anything. A loss (an answer that needed a
//! retransmission, or none at all) halves it, at most once per [`CUT_INTERVAL`]. Bounds:
//! [`MIN_LIMIT`] to [`MAX_LIMIT`], starting at [`INITIAL_LIMIT`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The limit of a server not seen yet.
pub const INITIAL_LIMIT: f64 = 32.0;
/// The lowest limit.
pub const MIN_LIMIT: f64 = 4.0;
/// The highest limit (a path of 50 ms RTT needs 4096 in flight for 80,000 answers/s).
pub const MAX_LIMIT: f64 = 8192.0;
/// At most one cut for losses in this long (one burst of drops is one signal).
pub const CUT_INTERVAL: Duration = Duration::from_millis(250);
/// Weight of one answer's target in the smoothed limit.
const SMOOTHING: f64 = 0.2;
/// An RTT up to this many times the idle one is not queueing.
const TOLERANCE: f64 = 2.0;
/// How fast the idle RTT creeps up toward what is measured (so that a path that became
/// slower for good is learned): this share of the difference per answer.
const NOLOAD_DRIFT: f64 = 0.001;
/// Most servers tracked; idle ones are forgotten beyond.
const MAX_TRACKED: usize = 4096;

#[derive(Debug)]
struct State {
    limit: f64,
    in_flight: usize,
    rtt_noload: Option<f64>,
    last_cut: Option<Instant>,
}

/// The limit of one server and the requests waiting for it.
#[derive(Debug)]
struct ServerLimit {
    state: Mutex<State>,
    freed: Notify,
}

impl ServerLimit {
    fn new() -> Self {
        Self {
            state: Mutex::new(State {
                limit: INITIAL_LIMIT,
                in_flight: 0,
                rtt_noload: None,
                last_cut: None,
            }),
            freed: Notify::new(),
        }
    }
}

/// Per-server limits on UDP requests in flight.
#[derive(Debug, Default)]
pub(crate) struct Limiter {
    servers: Mutex<HashMap<SocketAddr, Arc<ServerLimit>>>,
}

/// A place in flight to one server; given back when dropped. Tell it how the request went
/// ([`answered`](Permit::answered), [`lost`](Permit::lost)) so the limit learns.
#[derive(Debug)]
pub(crate) struct Permit {
    server: Arc<ServerLimit>,
}

impl Limiter {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn server(&self, server: SocketAddr) -> Arc<ServerLimit> {
        let mut m = self.servers.lock();
        if let Some(s) = m.get(&server) {
            return s.clone();
        }
        if m.len() >= MAX_TRACKED {
            // Forget the servers nobody holds a place of or waits for.
            m.retain(|_, s| Arc::strong_count(s) > 1);
        }
        let s = Arc::new(ServerLimit::new());
        m.insert(server, s.clone());
        s
    }

    /// Waits for a place in flight to `server`. Cancellation-safe: a waiter dropped takes
    /// nothing.
    pub(crate) async fn acquire(&self, server: SocketAddr) -> Permit {
        let server = self.server(server);
        loop {
            {
                let freed = server.freed.notified();
                tokio::pin!(freed);
                // Registered before the check, so a place freed in between wakes it.
                freed.as_mut().enable();
                let got = {
                    let mut st = server.state.lock();
                    let free = (st.in_flight as f64) < st.limit.floor();
                    if free {
                        st.in_flight += 1;
                    }
                    free
                };
                if !got {
                    freed.await;
                    continue;
                }
            }
            return Permit { server };
        }
    }

    /// The current limit of `server` (for tests and the curious).
    #[cfg(test)]
    pub(crate) fn limit(&self, server: SocketAddr) -> f64 {
        self.server(server).state.lock().limit
    }
}

impl Permit {
    /// The request was answered `rtt` after it was sent, after `transmissions`
    /// transmissions (above 1: a loss, and an ambiguous RTT, which is not used).
    pub(crate) fn answered(self, rtt: Duration, transmissions: u32) {
        if transmissions > 1 {
            return self.lost();
        }
        let before;
        let after;
        {
            let mut st = self.server.state.lock();
            before = st.limit;
            let rtt = rtt.as_secs_f64().max(1e-6);
            let noload = match st.rtt_noload {
                Some(n) if rtt >= n => n + (rtt - n) * NOLOAD_DRIFT,
                _ => rtt,
            };
            st.rtt_noload = Some(noload);
            let gradient = (TOLERANCE * noload / rtt).min(1.0);
            let target = st.limit * gradient + st.limit.sqrt();
            st.limit =
                (st.limit * (1.0 - SMOOTHING) + target * SMOOTHING).clamp(MIN_LIMIT, MAX_LIMIT);
            after = st.limit;
        }
        // A higher limit lets more waiters go (the drop of `self` frees one more place).
        for _ in 0..(after.floor() - before.floor()).max(0.0) as usize {
            self.server.freed.notify_one();
        }
    }

    /// The request got no answer, or one only after a retransmission: the limit is halved
    /// (once per [`CUT_INTERVAL`]).
    pub(crate) fn lost(self) {
        let now = Instant::now();
        let mut st = self.server.state.lock();
        if !st
            .last_cut
            .is_some_and(|t| now.saturating_duration_since(t) < CUT_INTERVAL)
        {
            st.limit = (st.limit * 0.5).max(MIN_LIMIT);
            st.last_cut = Some(now);
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.server.state.lock().in_flight -= 1;
        self.server.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> SocketAddr {
        "127.0.0.1:2641".parse().unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn requests_over_the_limit_wait_for_a_place() {
        let l = Arc::new(Limiter::new());
        let mut held = Vec::new();
        for _ in 0..INITIAL_LIMIT as usize {
            held.push(l.acquire(at()).await);
        }
        let waiter = tokio::spawn({
            let l = l.clone();
            async move { l.acquire(at()).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiter.is_finished());
        drop(held.pop());
        let permit = waiter.await.unwrap();
        drop(permit);
        // Another server has places of its own.
        let _other = l.acquire("127.0.0.2:2641".parse().unwrap()).await;
    }

    #[tokio::test(start_paused = true)]
    async fn fast_answers_raise_the_limit_queueing_and_losses_lower_it() {
        let l = Limiter::new();
        for _ in 0..200 {
            l.acquire(at()).await.answered(Duration::from_millis(1), 1);
        }
        let high = l.limit(at());
        assert!(high > 200.0, "{high}");
        // Answers that queue (RTT 5 × the idle one) bring it down.
        for _ in 0..50 {
            l.acquire(at()).await.answered(Duration::from_millis(5), 1);
        }
        let queued = l.limit(at());
        assert!(queued < high * 0.6, "{queued} vs {high}");
        // A burst of losses is one halving.
        for _ in 0..10 {
            l.acquire(at()).await.lost();
        }
        assert_eq!(l.limit(at()), (queued * 0.5).max(MIN_LIMIT));
        tokio::time::advance(CUT_INTERVAL).await;
        l.acquire(at()).await.answered(Duration::from_millis(9), 3);
        assert_eq!(l.limit(at()), (queued * 0.25).max(MIN_LIMIT));
        // Never below the floor.
        for _ in 0..20 {
            tokio::time::advance(CUT_INTERVAL).await;
            l.acquire(at()).await.lost();
        }
        assert_eq!(l.limit(at()), MIN_LIMIT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_path_fills_quickly() {
        let l = Limiter::new();
        // Every answer 50 ms: no queueing, the limit grows by about √limit × 0.2 per answer.
        let mut answers = 0;
        while l.limit(at()) < 4096.0 {
            l.acquire(at()).await.answered(Duration::from_millis(50), 1);
            answers += 1;
        }
        assert!(answers < 2000, "{answers} answers to reach 4096");
    }
}
