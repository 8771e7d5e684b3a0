//! [`Limit`]: how many UDP requests may be in flight to one server at once, learned from
//! what the network says, so that asking for more concurrency is never slower: the requests
//! over the limit wait here, in the client, instead of overflowing the server's receive
//! buffer.
//!
//! Two signals move the limit, in the manner of a TCP congestion window:
//! - **Loss** halves it: a request presumed lost by the transport (no answer within the
//!   server's loss timeout, a few round trips: `ExchangeOptions::udp_loss_detection`),
//!   answered only after a retransmission, or never answered. Losses of requests sent before
//!   the last cut are the same event and do not cut again (one cut per round of requests).
//! - **Queueing** shrinks it: with `rtt_noload` the lowest RTT seen lately, an answer whose
//!   RTT exceeds both twice `rtt_noload` and `rtt_noload` + [`QUEUE_ALLOWANCE`] moves the
//!   limit toward `limit × allowed / rtt`, by its share of a round (at most half the limit
//!   in a round whose answers are all late). Queueing below the allowance is not a signal: on
//!   loopback the idle RTT is tens of microseconds, and a healthy server's receive buffer
//!   holding a few milliseconds of requests is what fills it.
//!
//! Otherwise each answer raises it: by `√limit / 5` (it doubles in a few round trips, so a
//! path with a long RTT fills quickly) while the server has not lost a request for
//! [`LOSS_MEMORY`], and by `1 / limit` (one per round of requests) after a loss, so that a
//! server that drops beyond some depth is probed gently. Bounds: [`MIN_LIMIT`] to
//! [`MAX_LIMIT`], starting at [`INITIAL_LIMIT`].
//!
//! A round is `limit` answers: while far fewer requests are in flight than the limit allows
//! (the limit is not what holds them back, and it does not grow then), the queueing signal
//! and the idle RTT's drift act that much more slowly.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The limit of a server not seen yet.
const INITIAL_LIMIT: f64 = 32.0;
/// The lowest limit.
const MIN_LIMIT: f64 = 4.0;
/// The highest limit (a path of 50 ms RTT needs 4096 in flight for 80,000 answers/s).
const MAX_LIMIT: f64 = 8192.0;
/// Queueing up to this much over the idle RTT is not a signal (as CoDel's 5 ms target).
const QUEUE_ALLOWANCE: Duration = Duration::from_millis(5);
/// After a loss, the limit grows by one per round of requests for this long.
const LOSS_MEMORY: Duration = Duration::from_secs(10);
/// Weight of `√limit` in the growth before any loss.
const SMOOTHING: f64 = 0.2;
/// Most of the limit one round of answers past the queueing allowance takes away (all of
/// them infinitely late); as a loss, at most half.
const QUEUE_CUT: f64 = 0.5;
/// An RTT up to this many times the idle one is not queueing.
const TOLERANCE: f64 = 2.0;
/// How fast the idle RTT creeps up toward what is measured (so that a path that became
/// slower for good is learned in a few tens of rounds): this share of the difference per
/// round of answers, each answer taking its `1 / limit` of it. (Per answer, a round of
/// thousands of answers held up by a pause dragged the idle RTT up to the pause.)
const NOLOAD_DRIFT: f64 = 0.05;

#[derive(Debug)]
struct State {
    limit: f64,
    /// The places that exist: those held and those free in the semaphore. Above the limit
    /// after a cut, until enough are given back.
    places: usize,
    rtt_noload: Option<f64>,
    /// When the limit was last cut for a loss.
    last_cut: Option<Instant>,
}

/// The limit of one server and the requests waiting for it: in a fair (first come, first
/// served) semaphore, so that a request woken for a free place cannot lose it to one that
/// just arrived, and no request waits through many rounds while others pass.
#[derive(Debug)]
pub(crate) struct Limit {
    state: Mutex<State>,
    free: Semaphore,
}

impl Default for Limit {
    fn default() -> Self {
        Self::new()
    }
}

impl Limit {
    /// Makes the places match a changed limit: more places for the next waiters when it
    /// grew; when it shrank, the free places above it are taken back at once (the held
    /// ones as they are given back).
    fn fit_places(&self, st: &mut State) {
        let target = st.limit as usize;
        if target > st.places {
            self.free.add_permits(target - st.places);
            st.places = target;
        } else if st.places > target {
            st.places -= self.free.forget_permits(st.places - target);
        }
    }

    fn new() -> Self {
        Self {
            state: Mutex::new(State {
                limit: INITIAL_LIMIT,
                places: INITIAL_LIMIT as usize,
                rtt_noload: None,
                last_cut: None,
            }),
            free: Semaphore::new(INITIAL_LIMIT as usize),
        }
    }
}

/// A place in flight to one server; given back when dropped. Tell it how the request went
/// ([`answered`](Permit::answered), [`lost`](Permit::lost)) so the limit learns.
#[derive(Debug)]
pub(crate) struct Permit {
    server: Arc<Limit>,
    /// When the place was taken (the request is sent right after).
    taken: Instant,
}

impl Limit {
    /// Waits for a place in flight to the server, in turn. Cancellation-safe: a waiter
    /// dropped takes nothing.
    pub(crate) async fn acquire(self: &Arc<Self>) -> Permit {
        // The place is counted in `State::places` and given back by the permit's drop. (The
        // semaphore is never closed, so the error arm does not happen.)
        if let Ok(place) = self.free.acquire().await {
            place.forget();
        }
        Permit {
            server: self.clone(),
            taken: Instant::now(),
        }
    }

    /// The current limit (for tests and the curious).
    #[cfg(test)]
    pub(crate) fn limit(&self) -> f64 {
        self.state.lock().limit
    }
}

impl Permit {
    /// The request was answered `rtt` after it was sent, after `transmissions`
    /// transmissions (above 1: a loss, and an ambiguous RTT, which is not used).
    pub(crate) fn answered(self, rtt: Duration, transmissions: u32) {
        if transmissions > 1 {
            return self.lost();
        }
        {
            let mut st = self.server.state.lock();
            let rtt = rtt.as_secs_f64().max(1e-6);
            let noload = match st.rtt_noload {
                Some(n) if rtt >= n => n + (rtt - n) * NOLOAD_DRIFT / st.limit,
                _ => rtt,
            };
            st.rtt_noload = Some(noload);
            let allowed = (TOLERANCE * noload).max(noload + QUEUE_ALLOWANCE.as_secs_f64());
            let recent_loss = st
                .last_cut
                .is_some_and(|t| self.taken.saturating_duration_since(t) < LOSS_MEMORY);
            // Only a limit that is used grows (RFC 7661): with few requests in flight an
            // answer says nothing of a larger number, and a limit grown idle would let a
            // burst through untested.
            let held = st
                .places
                .saturating_sub(self.server.free.available_permits());
            // An answer that queued past the allowance says the limit is too high: it
            // does not raise it either.
            let growth = if (held as f64) * 2.0 < st.limit || rtt > allowed {
                0.0
            } else if recent_loss {
                1.0 / st.limit
            } else {
                SMOOTHING * st.limit.sqrt()
            };
            // Each answer is one `limit`-th of a round: its share of the round's decrease
            // toward `limit × allowed / rtt`, so that a round of late answers lowers the
            // limit by at most `QUEUE_CUT`, however many answers it has. (A share of the
            // whole limit per answer compounded: the thousands of answers held up by a
            // server's 200 ms pause took a limit of 4,096 to the floor at once.)
            let shrink = QUEUE_CUT * (1.0 - (allowed / rtt).min(1.0));
            st.limit = (st.limit - shrink + growth).clamp(MIN_LIMIT, MAX_LIMIT);
            self.server.fit_places(&mut st);
        }
    }

    /// The request got no answer, one only after a retransmission, or was presumed lost:
    /// the limit is halved, unless it was sent before the last cut (the same event).
    pub(crate) fn lost(self) {
        let mut st = self.server.state.lock();
        if !st.last_cut.is_some_and(|t| self.taken <= t) {
            st.limit = (st.limit * 0.5).max(MIN_LIMIT);
            st.last_cut = Some(Instant::now());
            self.server.fit_places(&mut st);
        }
    }

    /// When the place was taken.
    pub(crate) fn taken(&self) -> Instant {
        self.taken
    }

    /// The same place, counted as taken at `first`: a request sent again after a loss is
    /// one request, and its losses one event with the first (no second cut for it).
    pub(crate) fn taken_at(mut self, first: Instant) -> Self {
        self.taken = self.taken.min(first);
        self
    }
}

impl Drop for Permit {
    /// Gives the place back, unless there are more places than the limit (after a cut).
    fn drop(&mut self) {
        let mut st = self.server.state.lock();
        if st.places > st.limit as usize {
            st.places -= 1;
        } else {
            self.server.free.add_permits(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use std::collections::VecDeque;

    #[tokio::test(start_paused = true)]
    async fn requests_over_the_limit_wait_for_a_place() {
        let l = Arc::new(Limit::new());
        let mut held = Vec::new();
        for _ in 0..INITIAL_LIMIT as usize {
            held.push(l.acquire().await);
        }
        let waiter = tokio::spawn({
            let l = l.clone();
            async move { l.acquire().await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!waiter.is_finished());
        drop(held.pop());
        let permit = waiter.await.unwrap();
        drop(permit);
        // Another server has places of its own.
        let _other = Arc::new(Limit::new()).acquire().await;
    }

    #[tokio::test(start_paused = true)]
    async fn waiters_get_places_in_turn() {
        let l = Arc::new(Limit::new());
        let mut held = Vec::new();
        for _ in 0..INITIAL_LIMIT as usize {
            held.push(l.acquire().await);
        }
        let mut waiters = Vec::new();
        for _ in 0..3 {
            waiters.push(tokio::spawn({
                let l = l.clone();
                async move { l.acquire().await }
            }));
            // Each registers before the next arrives.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        for (i, _) in waiters.iter().enumerate() {
            drop(held.pop());
            tokio::time::sleep(Duration::from_millis(1)).await;
            let done: Vec<bool> = waiters.iter().map(|w| w.is_finished()).collect();
            assert_eq!(done, (0..3).map(|j| j <= i).collect::<Vec<_>>());
            // A request arriving now queues behind those still waiting.
            if i == 0 {
                assert!(tokio::time::timeout(Duration::from_millis(1), l.acquire())
                    .await
                    .is_err());
            }
        }
    }

    /// Takes every free place of the server into `window` (outside tokio's cooperative
    /// budget, which would make an acquire pending after a hundred-odd in one poll).
    fn fill(l: &Arc<Limit>, window: &mut VecDeque<Permit>) {
        while let Some(p) = tokio::task::unconstrained(l.acquire()).now_or_never() {
            window.push_back(p);
        }
    }

    /// Answers `n` requests at `rtt` with the limit in use: every place taken, and each
    /// answer's place taken again at once.
    fn answer_full(l: &Arc<Limit>, window: &mut VecDeque<Permit>, n: usize, rtt: Duration) {
        for _ in 0..n {
            fill(l, window);
            if let Some(p) = window.pop_front() {
                p.answered(rtt, 1);
            }
        }
        fill(l, window);
    }

    fn free(l: &Limit) -> usize {
        l.free.available_permits()
    }

    #[tokio::test(start_paused = true)]
    async fn fast_answers_raise_the_limit_queueing_and_losses_lower_it() {
        let l = Arc::new(Limit::new());
        let mut w = VecDeque::new();
        let ms = Duration::from_millis;
        answer_full(&l, &mut w, 200, ms(1));
        let high = l.limit();
        assert!(high > 200.0, "{high}");
        // Queueing within the allowance (idle RTT 1 ms, answers at 1 + 5 ms) is no signal.
        answer_full(&l, &mut w, 50, ms(6));
        assert!(l.limit() > high, "{} vs {high}", l.limit());
        let high = l.limit();
        // Answers that queue past it (RTT 20 ms, allowed 6 ms at first) bring it down, by
        // their share of a round each, `0.5 × (1 − allowed / rtt)`: 0.35 at first, and a
        // little less as the idle RTT creeps up (to 1.1 ms after 100 answers).
        answer_full(&l, &mut w, 100, ms(20));
        let queued = l.limit();
        assert!(
            queued < high - 30.0 && queued > high - 36.0,
            "{queued} vs {high}"
        );
        // However late the answers of a round (a server paused for a while), they take at
        // most half the limit.
        let before = queued;
        answer_full(&l, &mut w, before as usize, Duration::from_secs(30));
        let after = l.limit();
        assert!(
            after >= before * 0.5 - 1.0 && after < before * 0.9,
            "{before} → {after}"
        );
        let queued = after;
        // A burst of losses of requests sent before the cut is one halving.
        tokio::time::advance(ms(1)).await;
        for p in w.drain(..) {
            p.lost();
        }
        assert_eq!(l.limit(), (queued * 0.5).max(MIN_LIMIT));
        assert_eq!(free(&l), l.limit() as usize, "places back to the limit");
        // A request sent after the cut and answered after a retransmission cuts again.
        tokio::time::advance(ms(1)).await;
        fill(&l, &mut w);
        w.pop_front().unwrap().answered(ms(9), 3);
        let cut = l.limit();
        assert_eq!(cut, (queued * 0.25).max(MIN_LIMIT));
        // After a loss it grows by one per round of requests (1 / limit per answer) ...
        let n = 100;
        answer_full(&l, &mut w, n, ms(1));
        let grown = l.limit();
        assert!(
            grown > cut && grown < cut + n as f64 / cut + 1.0,
            "{cut} → {grown}"
        );
        // ... for LOSS_MEMORY, then faster again (for requests sent after it).
        tokio::time::advance(LOSS_MEMORY).await;
        w.clear();
        answer_full(&l, &mut w, n, ms(1));
        assert!(l.limit() > grown + 100.0, "{grown} → {}", l.limit());
        // Never below the floor.
        w.clear();
        for _ in 0..20 {
            tokio::time::advance(ms(1)).await;
            l.acquire().await.lost();
        }
        assert_eq!(l.limit(), MIN_LIMIT);
        assert_eq!(free(&l), MIN_LIMIT as usize);
    }

    #[tokio::test(start_paused = true)]
    async fn a_limit_grows_only_when_used_and_a_cut_takes_back_free_places() {
        let l = Arc::new(Limit::new());
        // One request at a time: a limit of 32 is not in use, and does not grow.
        for _ in 0..500 {
            l.acquire().await.answered(Duration::from_millis(1), 1);
        }
        assert_eq!(l.limit(), INITIAL_LIMIT);
        // Two in flight and a loss: the limit halves, and so do the places at once, not
        // as the 30 free ones would come back (they are not held).
        let a = l.acquire().await;
        let b = l.acquire().await;
        tokio::time::advance(Duration::from_millis(1)).await;
        a.lost();
        assert_eq!(l.limit(), INITIAL_LIMIT / 2.0);
        assert_eq!(free(&l), (INITIAL_LIMIT / 2.0) as usize - 1);
        drop(b);
        assert_eq!(free(&l), (INITIAL_LIMIT / 2.0) as usize);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_sent_again_is_one_loss_event() {
        let l = Arc::new(Limit::new());
        let first = l.acquire().await;
        let first_taken = first.taken();
        tokio::time::advance(Duration::from_millis(3)).await;
        first.lost();
        let once = l.limit();
        assert_eq!(once, INITIAL_LIMIT / 2.0);
        // Sent again (a new place, after the cut) and lost again: no second cut.
        tokio::time::advance(Duration::from_millis(3)).await;
        l.acquire().await.taken_at(first_taken).lost();
        assert_eq!(l.limit(), once);
        // Another request taken after the cut is another event.
        l.acquire().await.lost();
        assert_eq!(l.limit(), once / 2.0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_path_fills_quickly() {
        let l = Arc::new(Limit::new());
        let mut w = VecDeque::new();
        // Every answer 50 ms: no queueing, the limit grows by about √limit × 0.2 per answer.
        let mut answers = 0;
        while l.limit() < 4096.0 {
            answer_full(&l, &mut w, 1, Duration::from_millis(50));
            answers += 1;
        }
        assert!(answers < 2000, "{answers} answers to reach 4096");
    }
}
