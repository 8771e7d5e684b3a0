//! [`Health`]: what the resolver learns about each server's reachability, and acts on.
//!
//! - **Learned transports.** When a transport of a server fails by silence or a refused
//!   connection and a later transport of the same server then answers (UDP dropped by a
//!   firewall, TCP answering), the failed transport is put last for that server for
//!   [`LEARNED_FOR`]: the next requests go straight to the one that works instead of waiting
//!   out the failing one again (3 s of UDP retransmissions per request, otherwise). After that
//!   it is tried first again, once, and learned again if it still fails.
//! - **Breaker.** A server that stays silent (timeouts or refused connections, no answer at
//!   all) for [`BREAKER_AFTER`] after a failure (at least [`BREAKER_FAILURES`] in a row) is
//!   not asked for a while: requests to it fail at once (so a race moves
//!   on to the next site at once, and a bulk run against a dead server ends in about one
//!   deadline instead of one deadline per identifier). After the cool-down one request is let
//!   through as a probe (half-open): an answer closes the breaker, a failure opens it again
//!   for twice as long (up to [`MAX_COOLDOWN`]).
//!   A request given up on while the server still owed its answer (its call's deadline
//!   passed, or the caller went away) is silence too ([`Health::awaiting`]), dated from when
//!   it was sent: a server that takes requests and never answers anything (a black hole, as
//!   an overloaded or firewalled server behaves) opens the breaker with the first round of
//!   calls that waited for it until their deadline, however short the deadline is next to
//!   the transports' own timeouts. A request overtaken early (a hedge lost to a faster
//!   mirror) says nothing about the server.
//!
//! One per server, in its [`Peer`](super::Peer) (the server, whatever transport is used).

use std::borrow::Cow;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::transport::TransportKind;

/// How long a transport that failed while a later one answered stays last for a server.
const LEARNED_FOR: Duration = Duration::from_secs(300);
/// Failures in a row (with no answer in between) before the breaker may open.
pub(crate) const BREAKER_FAILURES: u32 = 1;
/// How long a server must have stayed silent since the first failure of the row before the
/// breaker opens (so that UDP timeouts with TCP about to answer do not open it; a transport
/// still waiting counts as silence, so a server that takes connections and never answers
/// opens it too).
pub(crate) const BREAKER_AFTER: Duration = Duration::from_secs(2);
/// The first cool-down of an open breaker; it doubles on every failed probe.
pub(crate) const FIRST_COOLDOWN: Duration = Duration::from_secs(2);
/// The longest cool-down.
pub(crate) const MAX_COOLDOWN: Duration = Duration::from_secs(60);

/// Whether a request may go to a server now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Yes.
    Go,
    /// Yes, as the one probe of a half-open breaker.
    Probe,
    /// No: the breaker is open for this much longer.
    Open(Duration),
}

#[derive(Debug, Clone)]
struct Entry {
    /// Transports that failed while a later one answered, and until when they stay last.
    demoted: Vec<(TransportKind, Instant)>,
    /// Failures in a row since the last answer, and when the first of them came.
    failures: u32,
    first_failure: Option<Instant>,
    /// The breaker: open until then.
    open_until: Option<Instant>,
    /// The cool-down the breaker opens for next.
    cooldown: Duration,
    /// When the probe of the half-open breaker started (one at a time).
    probe_since: Option<Instant>,
    /// The address family that answered last, for a server with addresses of both.
    ipv6_answered: Option<bool>,
}

impl Default for Entry {
    fn default() -> Self {
        Self {
            demoted: Vec::new(),
            failures: 0,
            first_failure: None,
            open_until: None,
            cooldown: FIRST_COOLDOWN,
            probe_since: None,
            ipv6_answered: None,
        }
    }
}

/// One server's reachability (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Health {
    entry: Mutex<Entry>,
}

impl Health {
    /// The transports to try on the server, in order: `order` with the transports it
    /// learned to fail moved to the end (in their order).
    pub(crate) fn transports<'a>(&self, order: &'a [TransportKind]) -> Cow<'a, [TransportKind]> {
        let e = self.entry.lock();
        // The common case, nothing learned for this server: the order as it is, no copy
        // (and no clock read: these run for every request).
        if e.demoted.is_empty() {
            return Cow::Borrowed(order);
        }
        let now = Instant::now();
        let demoted = |k: &TransportKind| e.demoted.iter().any(|(d, until)| d == k && *until > now);
        if !order.iter().any(demoted) {
            return Cow::Borrowed(order);
        }
        let mut out: Vec<TransportKind> = order.iter().copied().filter(|k| !demoted(k)).collect();
        out.extend(order.iter().copied().filter(|k| demoted(k)));
        Cow::Owned(out)
    }

    /// True when nothing has been learned of the server: no failure, no breaker, no
    /// transport put last, no address family preferred (forgetting it loses nothing).
    pub(crate) fn is_blank(&self) -> bool {
        let e = self.entry.lock();
        e.failures == 0
            && e.open_until.is_none()
            && e.demoted.is_empty()
            && e.ipv6_answered.is_none()
    }

    /// Whether a request may go to the server now (see [`Admission`]).
    pub(crate) fn admit(&self) -> Admission {
        let mut e = self.entry.lock();
        // The common case, a server that has not failed: no clock read.
        if e.first_failure.is_none() && e.open_until.is_none() {
            return Admission::Go;
        }
        let now = Instant::now();
        let Some(open_until) = e.open_until else {
            // Silent since a failure for long enough: open now.
            let silent = e
                .first_failure
                .is_some_and(|t| now.saturating_duration_since(t) >= BREAKER_AFTER);
            if silent && e.failures >= BREAKER_FAILURES {
                e.open_until = Some(now + e.cooldown);
                return Admission::Open(e.cooldown);
            }
            return Admission::Go;
        };
        if now < open_until {
            return Admission::Open(open_until - now);
        }
        // Half-open: one probe at a time; a probe that vanished (cancelled with its call)
        // for a whole cool-down is replaced.
        match e.probe_since {
            Some(since) if now.saturating_duration_since(since) < e.cooldown => {
                Admission::Open(e.cooldown - now.saturating_duration_since(since))
            }
            _ => {
                e.probe_since = Some(now);
                Admission::Probe
            }
        }
    }

    /// An answer came from the server after the transports in `failed` had failed on it
    /// (silence or refusal) in this request: those are learned, the breaker closes.
    pub(crate) fn answered(&self, failed: &[TransportKind]) {
        let mut e = self.entry.lock();
        if failed.is_empty() && e.failures == 0 && e.open_until.is_none() && e.demoted.is_empty() {
            return; // The common case: a healthy server, nothing to change (no clock read).
        }
        let now = Instant::now();
        e.failures = 0;
        e.first_failure = None;
        e.open_until = None;
        e.probe_since = None;
        e.cooldown = FIRST_COOLDOWN;
        e.demoted
            .retain(|(k, until)| *until > now && !failed.contains(k));
        for &k in failed {
            e.demoted.push((k, now + LEARNED_FOR));
        }
    }

    /// Whether IPv6 answered last for the server (known by its first address), `None` when
    /// neither family has.
    pub(crate) fn prefers_ipv6(&self) -> Option<bool> {
        self.entry.lock().ipv6_answered
    }

    /// The server (known by its first address) answered over IPv6 (`true`) or IPv4.
    pub(crate) fn answered_over(&self, ipv6: bool) {
        self.entry.lock().ipv6_answered = Some(ipv6);
    }

    /// A guard for one request sent to the server at `sent`, in a call that waits for it
    /// the `window` its deadline gave it: dropped before [`Awaiting::settled`], the request
    /// was given up on unanswered, which counts as silence ([`Health::abandoned`]).
    pub(crate) fn awaiting(&self, sent: Instant, window: Duration) -> Awaiting<'_> {
        Awaiting {
            health: self,
            sent,
            window,
            settled: false,
        }
    }

    /// A request sent at `sent` was given up on unanswered. It counts as silence when it had
    /// waited half its call's `window` or [`BREAKER_AFTER`], whichever is shorter (less:
    /// a hedge overtaken, a call cancelled early, which say nothing of the server); then the
    /// server has been silent for as long as its call would wait: the breaker opens (again,
    /// for twice as long, when it was the probe).
    pub(crate) fn abandoned(&self, sent: Instant, window: Duration) {
        let now = Instant::now();
        if now.saturating_duration_since(sent) < BREAKER_AFTER.min(window / 2) {
            return;
        }
        let mut e = self.entry.lock();
        e.failures = e.failures.saturating_add(1);
        let first = e.first_failure.get_or_insert(sent);
        *first = (*first).min(sent);
        let probe_failed = e.open_until.is_some_and(|t| now >= t) && e.probe_since.is_some();
        if probe_failed {
            e.cooldown = (e.cooldown * 2).min(MAX_COOLDOWN);
            e.open_until = Some(now + e.cooldown);
            e.probe_since = None;
        } else if e.open_until.map_or(true, |t| now >= t) {
            e.open_until = Some(now + e.cooldown);
        }
    }

    /// A transport of the server failed by silence or refusal. Opens the breaker when the
    /// server has failed [`BREAKER_FAILURES`] times in a row over at least
    /// [`BREAKER_AFTER`], or when it was the probe of a half-open breaker.
    pub(crate) fn failed(&self) {
        let now = Instant::now();
        let mut e = self.entry.lock();
        e.failures = e.failures.saturating_add(1);
        let first = *e.first_failure.get_or_insert(now);
        let probe_failed = e.open_until.is_some_and(|t| now >= t) && e.probe_since.is_some();
        if probe_failed {
            e.cooldown = (e.cooldown * 2).min(MAX_COOLDOWN);
            e.open_until = Some(now + e.cooldown);
            e.probe_since = None;
        } else if e.open_until.is_none()
            && e.failures >= BREAKER_FAILURES
            && now.saturating_duration_since(first) >= BREAKER_AFTER
        {
            e.open_until = Some(now + e.cooldown);
        }
    }
}

/// One request to a server, until its outcome is known (see [`Health::awaiting`]).
pub(crate) struct Awaiting<'a> {
    health: &'a Health,
    sent: Instant,
    window: Duration,
    settled: bool,
}

impl Awaiting<'_> {
    /// The request ended with an outcome (an answer or a failure, which the caller tells
    /// the health itself).
    pub(crate) fn settled(mut self) {
        self.settled = true;
    }
}

impl Drop for Awaiting<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.health.abandoned(self.sent, self.window);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TransportKind::{Http, Tcp, Udp};

    #[tokio::test(start_paused = true)]
    async fn a_transport_that_failed_before_another_answered_goes_last_for_a_while() {
        let h = Health::default();
        assert_eq!(&*h.transports(&[Udp, Tcp, Http]), [Udp, Tcp, Http]);
        h.answered(&[Udp]);
        assert_eq!(&*h.transports(&[Udp, Tcp, Http]), [Tcp, Http, Udp]);
        // Another server is not concerned.
        assert_eq!(&*Health::default().transports(&[Udp, Tcp]), [Udp, Tcp]);
        tokio::time::advance(LEARNED_FOR).await;
        assert_eq!(&*h.transports(&[Udp, Tcp, Http]), [Udp, Tcp, Http]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_breaker_opens_after_failures_in_a_row_over_time_and_probes_after_cooling() {
        let h = Health::default();
        for _ in 0..10 {
            h.failed();
        }
        // A burst of simultaneous failures does not open it (TCP may be about to answer).
        assert_eq!(h.admit(), Admission::Go);
        // Silence since then (nothing more needs to fail: a hanging transport is silence).
        tokio::time::advance(BREAKER_AFTER).await;
        assert_eq!(h.admit(), Admission::Open(FIRST_COOLDOWN));
        tokio::time::advance(FIRST_COOLDOWN).await;
        assert_eq!(h.admit(), Admission::Probe);
        // One probe at a time.
        assert!(matches!(h.admit(), Admission::Open(_)));
        // The probe fails: open for twice as long.
        h.failed();
        assert_eq!(h.admit(), Admission::Open(FIRST_COOLDOWN * 2));
        tokio::time::advance(FIRST_COOLDOWN * 2).await;
        assert_eq!(h.admit(), Admission::Probe);
        h.answered(&[]);
        assert_eq!(h.admit(), Admission::Go);
        // Closed and reset: a new burst does not reopen it at once.
        h.failed();
        assert_eq!(h.admit(), Admission::Go);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_resets_the_row_of_failures() {
        let h = Health::default();
        h.failed();
        tokio::time::advance(BREAKER_AFTER / 2).await;
        h.answered(&[]);
        tokio::time::advance(BREAKER_AFTER / 2).await;
        h.failed();
        assert_eq!(h.admit(), Admission::Go);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_given_up_on_unanswered_opens_the_breaker_when_it_waited_long_enough() {
        let window = Duration::from_millis(600);
        let h = Health::default();
        // Overtaken early (a lost hedge): nothing learned.
        let sent = Instant::now();
        let waiting = h.awaiting(sent, window);
        tokio::time::advance(window / 2 - Duration::from_millis(1)).await;
        drop(waiting);
        assert!(h.is_blank());
        // Settled (answered or failed, told by the caller): nothing from the guard.
        let waiting = h.awaiting(Instant::now(), window);
        tokio::time::advance(window).await;
        waiting.settled();
        assert!(h.is_blank());
        // Waited until its call gave up: silent that long, open at once.
        let waiting = h.awaiting(Instant::now(), window);
        tokio::time::advance(window).await;
        drop(waiting);
        assert_eq!(h.admit(), Admission::Open(FIRST_COOLDOWN));
        // The probe after the cool-down is given up on too: twice as long.
        tokio::time::advance(FIRST_COOLDOWN).await;
        assert_eq!(h.admit(), Admission::Probe);
        let probe = h.awaiting(Instant::now(), window);
        tokio::time::advance(window).await;
        drop(probe);
        assert_eq!(h.admit(), Admission::Open(FIRST_COOLDOWN * 2));
        // A long deadline: BREAKER_AFTER of waiting is enough.
        let h = Health::default();
        let waiting = h.awaiting(Instant::now(), Duration::from_secs(30));
        tokio::time::advance(BREAKER_AFTER).await;
        drop(waiting);
        assert_eq!(h.admit(), Admission::Open(FIRST_COOLDOWN));
    }

    #[tokio::test(start_paused = true)]
    async fn a_vanished_probe_is_replaced_after_a_cool_down() {
        let h = Health::default();
        h.failed();
        tokio::time::advance(BREAKER_AFTER).await;
        assert!(matches!(h.admit(), Admission::Open(_)));
        tokio::time::advance(FIRST_COOLDOWN).await;
        assert_eq!(h.admit(), Admission::Probe);
        tokio::time::advance(FIRST_COOLDOWN).await;
        assert_eq!(h.admit(), Admission::Probe);
    }
}
