//! [`Rtt`]: one server's decaying smoothed RTT, from which site order and hedge delays
//! come (in the manner of hickory-dns' `DecayingSrtt`, PROTOCOL.md §11.3).
//!
//! - Unknown servers get a tiny random score, so they are probed early.
//! - Over UDP the SRTT is the transport's own estimate (RFC 6298, from the round trips its
//!   receive task measures, which its loss timeouts come from), handed up with each answer
//!   (`Exchanged::srtt`): one estimate per server, not two. Other answers (TCP, HTTP) fold
//!   their RTT into the server's SRTT here (EWMA, weight 1/4 to the new sample).
//! - Answers that took more than one transmission are no sample: they carry no transmission number,
//!   so their RTT is ambiguous and is not used (Karn's rule); the SRTT is only raised to the
//!   first retransmission wait, which passed without an answer.
//! - A failure raises the SRTT to at least [`FAILURE_PENALTY`] (doubling on repeated failures,
//!   capped at [`MAX_SRTT`]).
//! - Scores decay towards zero while a server is not used (half-life [`DECAY_HALF_LIFE`]),
//!   so a penalised server is retried eventually.
//! - A random jitter (up to ±[`JITTER`] or ±10 %) spreads load between equally fast sites.

use std::time::Duration;

use parking_lot::Mutex;
use rand::Rng;
use tokio::time::Instant;

/// SRTT a server gets on a failure (or more, doubling with repeated failures).
const FAILURE_PENALTY: Duration = Duration::from_secs(1);
/// Largest SRTT kept.
const MAX_SRTT: Duration = Duration::from_secs(60);
/// Scores halve for every this much time without news of the server.
const DECAY_HALF_LIFE: Duration = Duration::from_secs(300);
/// Largest absolute jitter added to a score.
const JITTER: Duration = Duration::from_millis(5);

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Smoothed RTT in microseconds at `updated`.
    srtt_us: f64,
    updated: Instant,
}

impl Entry {
    fn decayed(&self, now: Instant) -> f64 {
        let dt = now.saturating_duration_since(self.updated).as_secs_f64();
        self.srtt_us * 0.5f64.powf(dt / DECAY_HALF_LIFE.as_secs_f64())
    }
}

/// One server's smoothed RTT (nothing until the first answer or failure).
#[derive(Debug, Default)]
pub(crate) struct Rtt {
    entry: Mutex<Option<Entry>>,
}

impl Rtt {
    /// The current (decayed) SRTT, `None` when nothing is known.
    pub(crate) fn srtt(&self) -> Option<Duration> {
        let now = Instant::now();
        self.entry
            .lock()
            .map(|e| Duration::from_micros(e.decayed(now) as u64))
    }

    /// Folds a measured RTT into the SRTT, now.
    #[cfg(test)]
    pub(crate) fn record_rtt(&self, rtt: Duration) {
        self.record_rtt_at(rtt, Instant::now());
    }

    /// Folds an RTT measured at `now` into the SRTT.
    fn record_rtt_at(&self, rtt: Duration, now: Instant) {
        let sample = rtt.as_micros() as f64;
        self.update(now, |old| match old {
            Some(e) => e.decayed(now) * 0.75 + sample * 0.25,
            None => sample,
        });
    }

    /// Records an answer that took `transmissions` transmissions, `rtt` after the first one.
    /// With one transmission it is a sample: `transport_srtt`, the transport's estimate of
    /// the server's RTT from the same round trip (UDP: its loss timeouts are learned from
    /// it), is taken as the SRTT, so that one server's RTT is estimated once (a penalty
    /// above it still fades by a quarter per answer); without one (TCP, HTTP, a scripted
    /// transport) `rtt` is folded into the SRTT here.
    /// With more transmissions `rtt` is ambiguous (the answer may belong to any
    /// transmission) and is not used (Karn's rule); what is certain is kept instead, as Karn
    /// keeps the backed-off timer: nothing came back within `first_wait` of the first
    /// transmission, so the SRTT is raised to at least that (a server that always needs a
    /// retransmission must not look unknown, and so first in line, for ever). `now` is when
    /// the answer came (the caller has just read the clock for `rtt`). Returns whether the
    /// answer was used as a sample.
    pub(crate) fn record_answer(
        &self,
        rtt: Duration,
        transport_srtt: Option<Duration>,
        transmissions: u32,
        first_wait: Duration,
        now: Instant,
    ) -> bool {
        if transmissions <= 1 {
            match transport_srtt {
                // The transport's estimate, except that a penalty (a failure, a
                // retransmission's floor) fades by a quarter an answer, as it fades under
                // the samples folded here.
                Some(srtt) => self.update(now, |old| {
                    let floor = old.map_or(0.0, |e| e.decayed(now) * 0.75);
                    (srtt.as_micros() as f64).max(floor)
                }),
                None => self.record_rtt_at(rtt, now),
            }
            return true;
        }
        let floor = first_wait.min(MAX_SRTT).as_micros() as f64;
        self.update(now, |old| old.map_or(floor, |e| e.decayed(now).max(floor)));
        false
    }

    /// Penalises the server after a failure (timeout, refused, bad answer).
    pub(crate) fn record_failure(&self) {
        let now = Instant::now();
        let floor = FAILURE_PENALTY.as_micros() as f64;
        let cap = MAX_SRTT.as_micros() as f64;
        self.update(now, |old| match old {
            Some(e) => (e.decayed(now) * 2.0).max(floor).min(cap),
            None => floor,
        });
    }

    /// Hedge delay for a request to this server: 3 × SRTT bounded to `[min, max]`.
    #[cfg(test)]
    fn hedge_delay(&self, min: Duration, max: Duration) -> Duration {
        hedge_delay(self.srtt(), min, max)
    }

    /// Sets the SRTT to `srtt_us(the entry)` as of `now`.
    fn update(&self, now: Instant, srtt_us: impl FnOnce(Option<&Entry>) -> f64) {
        let mut e = self.entry.lock();
        let srtt_us = srtt_us(e.as_ref());
        *e = Some(Entry {
            srtt_us,
            updated: now,
        });
    }
}

/// The sort score of a server of SRTT `srtt` (`None`: unknown).
pub(crate) fn score(srtt: Option<Duration>, rng: &mut impl Rng) -> f64 {
    match srtt {
        None => rng.gen_range(0.0..32.0),
        Some(d) => {
            let us = d.as_micros() as f64;
            let spread = (us * 0.1).min(JITTER.as_micros() as f64).max(1.0);
            us + rng.gen_range(-spread..spread)
        }
    }
}

/// Hedge delay for a server of SRTT `srtt`: 3 × SRTT bounded to `[min, max]`; `max` for an
/// unknown server.
pub(crate) fn hedge_delay(srtt: Option<Duration>, min: Duration, max: Duration) -> Duration {
    match srtt {
        None => max,
        Some(srtt) => srtt.saturating_mul(3).clamp(min, max.max(min)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn failures_penalise_and_penalties_decay() {
        let t = Rtt::default();
        t.record_rtt(Duration::from_millis(10));
        t.record_failure();
        assert!(t.srtt().unwrap() >= FAILURE_PENALTY);
        t.record_failure();
        assert!(t.srtt().unwrap() >= FAILURE_PENALTY * 2);
        tokio::time::advance(DECAY_HALF_LIFE * 4).await;
        let decayed = t.srtt().unwrap();
        assert!(decayed < Duration::from_millis(300), "{decayed:?}");
        // A success pulls it down further.
        t.record_rtt(Duration::from_millis(1));
        assert!(t.srtt().unwrap() < decayed);
    }

    #[tokio::test(start_paused = true)]
    async fn retransmitted_answers_are_not_rtt_samples() {
        let t = Rtt::default();
        let wait = Duration::from_millis(500);
        // Ambiguous: only "nothing within the first wait" is kept.
        assert!(!t.record_answer(Duration::from_millis(700), None, 2, wait, Instant::now()));
        assert_eq!(t.srtt(), Some(wait));
        assert!(t.record_answer(Duration::from_millis(100), None, 1, wait, Instant::now()));
        assert_eq!(t.srtt(), Some(Duration::from_millis(400)));
        // A known SRTT above the wait is left alone.
        let t = Rtt::default();
        t.record_failure();
        assert!(!t.record_answer(Duration::from_millis(1600), None, 3, wait, Instant::now()));
        assert_eq!(t.srtt(), Some(FAILURE_PENALTY));
    }

    #[tokio::test(start_paused = true)]
    async fn the_transports_estimate_is_taken_as_it_is() {
        let t = Rtt::default();
        let wait = Duration::from_millis(500);
        // The transport's estimate from the same round trip is the SRTT: no second smoothing
        // of the same samples.
        let srtt = Some(Duration::from_millis(12));
        assert!(t.record_answer(Duration::from_millis(13), srtt, 1, wait, Instant::now()));
        assert_eq!(t.srtt(), srtt);
        let higher = Some(Duration::from_millis(30));
        t.record_answer(Duration::from_millis(31), higher, 1, wait, Instant::now());
        assert_eq!(t.srtt(), higher);
        // A retransmitted answer is no sample, whatever the transport says.
        assert!(!t.record_answer(Duration::from_millis(700), srtt, 2, wait, Instant::now()));
        assert_eq!(t.srtt(), Some(wait));
        // A penalty is not wiped out by the next answer: it fades by a quarter an answer, as
        // under folded samples (2 s after two failures: 1.5 s, then 1.125 s).
        let t = Rtt::default();
        t.record_failure();
        t.record_failure();
        assert_eq!(t.srtt(), Some(FAILURE_PENALTY * 2));
        t.record_answer(Duration::from_millis(11), srtt, 1, wait, Instant::now());
        assert_eq!(t.srtt(), Some(Duration::from_millis(1500)));
        t.record_answer(Duration::from_millis(11), srtt, 1, wait, Instant::now());
        assert_eq!(t.srtt(), Some(Duration::from_millis(1125)));
    }

    #[tokio::test(start_paused = true)]
    async fn hedge_delay_is_bounded() {
        let (lo, hi) = (Duration::from_millis(50), Duration::from_millis(500));
        assert_eq!(Rtt::default().hedge_delay(lo, hi), hi);
        assert_eq!(hedge_delay(None, lo, hi), hi);
        let t = Rtt::default();
        t.record_rtt(Duration::from_micros(100));
        assert_eq!(t.hedge_delay(lo, hi), lo);
        let t = Rtt::default();
        t.record_rtt(Duration::from_millis(100));
        assert_eq!(t.hedge_delay(lo, hi), Duration::from_millis(300));
        let t = Rtt::default();
        t.record_failure();
        assert_eq!(t.hedge_delay(lo, hi), hi);
    }
}
