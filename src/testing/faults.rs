//! Fault injection for the test server: what goes wrong, and the seeded randomness behind it.

use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::patch::patch_u32;

/// Faults a [`TestServer`](super::TestServer) injects. `Faults::default()` is a healthy server.
///
/// UDP: the misleading datagrams of `garbage`, `wrong_request_id`, `spoof_source`,
/// `truncated_length` and `oversized_length` are sent *before* the real answer, which still
/// follows: a client must ignore them and take the real one. TCP: they *replace* the answer,
/// and the client must fail with a typed error.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// UDP: share (0.0..=1.0) of received request datagrams dropped unanswered, drawn from
    /// the server's seeded RNG.
    pub drop_ratio: f64,
    /// UDP: share of answer datagrams (each fragment on its own) dropped on the way out.
    pub drop_answer_ratio: f64,
    /// Wait this long before answering (UDP and TCP).
    pub delay: Duration,
    /// Receive and count requests, never answer (UDP and TCP; a TCP connection is held open
    /// until the client closes it).
    pub silent: bool,
    /// UDP: a datagram of random bytes first. TCP: random bytes instead of the answer.
    pub garbage: bool,
    /// UDP: a copy of the answer with another request id first. TCP: the answer carries
    /// another request id.
    pub wrong_request_id: bool,
    /// UDP: a copy of the answer sent first from a second socket (another port).
    pub spoof_source: bool,
    /// UDP: the answer cut in half, `MessageLength` unchanged, first. TCP: the connection is
    /// closed after half of the answer.
    pub truncated_length: bool,
    /// UDP: a copy whose envelope `MessageLength` is 0x7FFFFFFF first. TCP: the answer with
    /// that length field.
    pub oversized_length: bool,
    /// TCP: the answer written in 16-byte pieces with this pause between them.
    pub slow_tcp: Option<Duration>,
    /// UDP: datagrams are ignored as if a firewall dropped them (still counted as received).
    pub block_udp: bool,
    /// HTTP REST API: the next `n` requests are answered `429 Too Many Requests` with
    /// `Retry-After:` [`rest_retry_after`](Self::rest_retry_after), counted down as they come
    /// (`None` once spent).
    pub rest_429: Option<u32>,
    /// HTTP REST API: share (0.0..=1.0) of requests answered 429, drawn from the server's
    /// seeded RNG (after [`rest_429`](Self::rest_429) is spent).
    pub rest_429_ratio: f64,
    /// HTTP REST API: the `Retry-After` seconds of the 429 answers.
    pub rest_retry_after: u32,
    /// TCP (native): connections are closed at once, unread, as where a firewall resets
    /// them (still counted as requests).
    pub block_tcp: bool,
    /// HTTP: requests are held unanswered, as where a firewall drops them.
    pub block_http: bool,
    /// UDP: every answer is held until this instant, as by a server that stops for a while
    /// (a collection pause, a descheduled machine) and answers what it received when it
    /// resumes.
    pub paused_until: Option<tokio::time::Instant>,
    /// TCP: before a request is looked at, a wait drawn between zero and this (from the
    /// server's seeded RNG), as a busy server's threads take requests in another order than
    /// they came: later requests are executed before earlier ones.
    pub process_jitter: Duration,
    /// The next `n` requests in a session whose MAC verifies are answered 505
    /// SESSION_MESSAGE_REJECTED (`Duplicate session counter ...`) and not executed, their
    /// counters taken into the session's window all the same (as a server that saw them
    /// already would hold them): a client that sends the same sealed bytes again is refused
    /// again. Counted down as they come.
    pub refuse_session_messages: u32,
}

impl Faults {
    /// True when nothing is injected.
    pub fn is_healthy(&self) -> bool {
        *self == Faults::default()
    }
}

/// The faults in force plus the seeded RNG; `active` is read lock-free on every request.
#[derive(Debug)]
pub(crate) struct FaultState {
    active: AtomicBool,
    faults: Mutex<Faults>,
    rng: Mutex<ChaCha8Rng>,
}

impl FaultState {
    pub(crate) fn new(faults: Faults, seed: u64) -> FaultState {
        FaultState {
            active: AtomicBool::new(!faults.is_healthy()),
            faults: Mutex::new(faults),
            rng: Mutex::new(ChaCha8Rng::seed_from_u64(seed)),
        }
    }

    pub(crate) fn set(&self, faults: Faults) {
        let healthy = faults.is_healthy();
        *self.faults.lock() = faults;
        self.active.store(!healthy, Ordering::Release);
    }

    /// The faults in force, or `None` for a healthy server (the fast path).
    pub(crate) fn current(&self) -> Option<Faults> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        Some(self.faults.lock().clone())
    }

    /// Whether this REST request is refused with 429, and the `Retry-After` seconds if so:
    /// spends one of [`Faults::rest_429`], else draws [`Faults::rest_429_ratio`].
    pub(crate) fn rest_throttle(&self) -> Option<u32> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        let (counted, ratio, retry_after) = {
            let mut f = self.faults.lock();
            let counted = match f.rest_429 {
                Some(n) if n > 0 => {
                    f.rest_429 = n.checked_sub(1).filter(|left| *left > 0);
                    if f.is_healthy() {
                        self.active.store(false, Ordering::Release);
                    }
                    true
                }
                _ => false,
            };
            (counted, f.rest_429_ratio, f.rest_retry_after)
        };
        (counted || self.chance(ratio)).then_some(retry_after)
    }

    /// Whether this session message is refused (505): spends one of
    /// [`Faults::refuse_session_messages`].
    pub(crate) fn refuse_session_message(&self) -> bool {
        if !self.active.load(Ordering::Acquire) {
            return false;
        }
        let mut f = self.faults.lock();
        if f.refuse_session_messages == 0 {
            return false;
        }
        f.refuse_session_messages -= 1;
        if f.is_healthy() {
            self.active.store(false, Ordering::Release);
        }
        true
    }

    fn rng(&self) -> MutexGuard<'_, ChaCha8Rng> {
        self.rng.lock()
    }

    /// True with probability `ratio`.
    pub(crate) fn chance(&self, ratio: f64) -> bool {
        ratio > 0.0 && self.rng().gen::<f64>() < ratio
    }

    /// A wait between zero and `max`, drawn from the seeded RNG.
    pub(crate) fn jitter(&self, max: Duration) -> Duration {
        if max.is_zero() {
            return Duration::ZERO;
        }
        max.mul_f64(self.rng().gen::<f64>())
    }

    /// `n` random bytes.
    pub(crate) fn garbage(&self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.rng().fill(&mut v[..]);
        v
    }
}

/// A copy of `answer` with `value` written at `at` (unchanged where it is too short).
pub(crate) fn patched(answer: &Bytes, at: usize, value: u32) -> Bytes {
    let mut b = BytesMut::from(&answer[..]);
    patch_u32(&mut b, at, value);
    b.freeze()
}

/// Another request id than `id`, never 0 or 0xFFFFFFFF.
pub(crate) fn other_id(id: u32) -> u32 {
    match id ^ 0x5A5A_5A5A {
        0 | u32::MAX => id ^ 0x0F0F_0F0F,
        x => x,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_429_counts_down_then_heals() {
        let state = FaultState::new(
            Faults {
                rest_429: Some(2),
                rest_retry_after: 7,
                ..Faults::default()
            },
            1,
        );
        assert_eq!(state.rest_throttle(), Some(7));
        assert_eq!(state.current().and_then(|f| f.rest_429), Some(1));
        assert_eq!(state.rest_throttle(), Some(7));
        assert_eq!(state.rest_throttle(), None);
        // Only the Retry-After value is left: not healthy, but nothing is refused.
        assert_eq!(state.current().map(|f| f.rest_429), Some(None));
        state.set(Faults {
            rest_429: Some(1),
            ..Faults::default()
        });
        assert_eq!(state.rest_throttle(), Some(0));
        assert!(state.current().is_none(), "healthy again once spent");
        assert_eq!(state.rest_throttle(), None);
    }

    #[test]
    fn rest_429_ratio_is_seeded() {
        let draws = |seed| {
            let state = FaultState::new(
                Faults {
                    rest_429_ratio: 0.5,
                    ..Faults::default()
                },
                seed,
            );
            (0..64)
                .map(|_| state.rest_throttle().is_some())
                .collect::<Vec<_>>()
        };
        let a = draws(3);
        assert_eq!(a, draws(3));
        let refused = a.iter().filter(|r| **r).count();
        assert!((16..=48).contains(&refused), "{refused} of 64");
    }
}
