//! Early loss detection for UDP requests: a loss timeout per server, learned from its
//! round-trip times as TCP learns its timeouts: the larger of RFC 6298's `srtt + 4 × rttvar`
//! and a tail-loss probe's `2 × srtt` (RFC 8985), with a floor of [`LOSS_TIMEOUT_FLOOR`]. A request still unanswered after it is
//! presumed lost, and its exchange ends
//! ([`TransportError::PresumedLost`](super::TransportError::PresumedLost)) so that the caller
//! sends it again under its own rules (the resolver does, under its per-server limit),
//! within a few round trips instead of after the 500 ms first wait of the retransmission
//! schedule.
//!
//! Which requests take part is the caller's choice
//! ([`ExchangeOptions::udp_loss_detection`](super::ExchangeOptions::udp_loss_detection)), and
//! only while the server has answered before (there is no timeout to learn from until
//! then) and its timeout is shorter than the schedule's first wait. Such a request is sent
//! once, so its answer is an unambiguous RTT sample; samples are taken in the receive task
//! as the answer arrives, so a busy caller does not inflate them.
//!
//! A presumption can be wrong: a server that stalls now and then answers later than its
//! timeout. An answer to a request presumed lost (remembered per server, the last
//! [`RECENT_PRESUMED`]) doubles the server's timeout (up to [`MAX_MULT`] times), as RFC
//! 8985 widens its reorder window on evidence of reordering; [`RESET_AFTER`] presumptions
//! in a row not contradicted bring it back. Sans-IO: the caller passes the clock.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use foldhash::HashMap;

use tokio::time::Instant;

/// The shortest loss timeout. On loopback a round trip is tens of microseconds, but a server
/// thread descheduled for a millisecond or two answers late: below this, that reads as a loss.
pub const LOSS_TIMEOUT_FLOOR: Duration = Duration::from_millis(2);
/// The most a server's timeout is widened by answers to requests presumed lost.
const MAX_MULT: u32 = 64;
/// Presumptions in a row not contradicted after which a widened timeout narrows again.
const RESET_AFTER: u32 = 16;
/// Requests presumed lost remembered per server, to notice one answered after all.
const RECENT_PRESUMED: usize = 64;
/// Servers tracked; beyond, the table is cleared (and relearned from the next answers).
const MAX_PEERS: usize = 4096;

/// What is known of one server.
#[derive(Debug)]
struct Peer {
    srtt: Duration,
    rttvar: Duration,
    mult: u32,
    /// When `mult` last doubled: at most once per timeout (a stall answers many late).
    widened_at: Option<Instant>,
    unchallenged: u32,
    /// Id and send time of the requests presumed lost lately.
    presumed: VecDeque<(u32, Instant)>,
}

impl Peer {
    fn new(rtt: Duration) -> Self {
        Self {
            srtt: rtt,
            rttvar: rtt / 2,
            mult: 1,
            widened_at: None,
            unchallenged: 0,
            presumed: VecDeque::new(),
        }
    }

    /// RFC 6298, §2.3, with α = 1/8 and β = 1/4.
    fn sample(&mut self, rtt: Duration) {
        let diff = if self.srtt > rtt {
            self.srtt - rtt
        } else {
            rtt - self.srtt
        };
        self.rttvar = (self.rttvar * 3 + diff) / 4;
        self.srtt = (self.srtt * 7 + rtt) / 8;
    }

    /// The larger of a tail-loss probe's `2 × srtt` (RFC 8985, §7.2) and RFC 6298's
    /// `srtt + 4 × rttvar`: a path with a steady RTT still gets a whole RTT of slack.
    fn timeout(&self) -> Duration {
        let rto = self.srtt + self.rttvar * 4;
        rto.max(self.srtt * 2).max(LOSS_TIMEOUT_FLOOR) * self.mult
    }
}

/// The table key of a server: its IP and port (an IPv6 flow label or scope id in the
/// address a request went to, or in the source of an answer, does not make another server,
/// as the socket's `same_peer` has it).
fn key(peer: SocketAddr) -> SocketAddr {
    SocketAddr::new(peer.ip(), peer.port())
}

/// The per-server loss timeouts of one UDP socket.
#[derive(Debug, Default)]
pub(crate) struct LossDetector {
    peers: HashMap<SocketAddr, Peer>,
}

impl LossDetector {
    /// How long a request to `peer` may go unanswered before it is presumed lost; `None`
    /// while the server has never answered.
    pub(crate) fn timeout(&self, peer: SocketAddr) -> Option<Duration> {
        self.peers.get(&key(peer)).map(Peer::timeout)
    }

    /// A request sent once to `peer` was answered `rtt` after it was sent; returns the
    /// server's smoothed round-trip time (RFC 6298) with it folded in.
    pub(crate) fn answered(&mut self, peer: SocketAddr, rtt: Duration) -> Duration {
        let peer = key(peer);
        if let Some(p) = self.peers.get_mut(&peer) {
            p.sample(rtt);
            return p.srtt;
        }
        if self.peers.len() >= MAX_PEERS {
            self.peers.clear();
        }
        let p = Peer::new(rtt);
        let srtt = p.srtt;
        self.peers.insert(peer, p);
        srtt
    }

    /// The request `id`, sent to `peer` at `sent_at`, was presumed lost.
    pub(crate) fn presumed(&mut self, peer: SocketAddr, id: u32, sent_at: Instant) {
        let Some(p) = self.peers.get_mut(&key(peer)) else {
            return;
        };
        if p.presumed.len() >= RECENT_PRESUMED {
            p.presumed.pop_front();
        }
        p.presumed.push_back((id, sent_at));
        p.unchallenged += 1;
        if p.unchallenged >= RESET_AFTER {
            p.mult = 1;
        }
    }

    /// An answer from `peer` at `now` matched no waiting request. When it answers one
    /// presumed lost, the presumption was wrong: its RTT is taken as a sample and the
    /// server's timeout doubles (once per timeout: the late answers of one stall are one
    /// piece of evidence). Returns whether it was.
    pub(crate) fn unmatched(&mut self, peer: SocketAddr, id: u32, now: Instant) -> bool {
        let Some(p) = self.peers.get_mut(&key(peer)) else {
            return false;
        };
        let Some(i) = p.presumed.iter().position(|&(x, _)| x == id) else {
            return false;
        };
        if let Some((_, sent_at)) = p.presumed.remove(i) {
            p.sample(now.saturating_duration_since(sent_at));
        }
        let timeout = p.timeout();
        if !p
            .widened_at
            .is_some_and(|t| now.saturating_duration_since(t) < timeout)
        {
            p.mult = (p.mult * 2).min(MAX_MULT);
            p.widened_at = Some(now);
        }
        p.unchallenged = 0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> SocketAddr {
        "127.0.0.1:2641".parse().unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_timeout_follows_rfc_6298_with_a_round_trip_of_slack_above_the_floor() {
        let mut d = LossDetector::default();
        assert_eq!(d.timeout(peer()), None, "nothing to learn from yet");
        // First sample 100 ms: srtt 100, rttvar 50, timeout 300 ms.
        d.answered(peer(), ms(100));
        assert_eq!(d.timeout(peer()), Some(ms(300)));
        // A steady RTT: rttvar shrinks toward 0, the timeout toward 2 × srtt.
        let steady: SocketAddr = "127.0.0.4:2641".parse().unwrap();
        for _ in 0..200 {
            d.answered(steady, ms(50));
        }
        assert_eq!(d.timeout(steady), Some(ms(100)));
        // Second sample 20 ms: rttvar = (3 × 50 + 80) / 4 = 57.5, srtt = (700 + 20) / 8 = 90.
        d.answered(peer(), ms(20));
        assert_eq!(
            d.timeout(peer()),
            Some(ms(90) + Duration::from_micros(57_500) * 4)
        );
        // Loopback: tens of microseconds, the floor.
        let lo: SocketAddr = "127.0.0.2:2641".parse().unwrap();
        for _ in 0..50 {
            d.answered(lo, Duration::from_micros(40));
        }
        assert_eq!(d.timeout(lo), Some(LOSS_TIMEOUT_FLOOR));
        // Another server learns on its own.
        assert_eq!(d.timeout("127.0.0.3:2641".parse().unwrap()), None);
    }

    #[test]
    fn a_wrong_presumption_widens_the_timeout_and_right_ones_narrow_it() {
        let mut d = LossDetector::default();
        let t0 = Instant::now();
        for _ in 0..50 {
            d.answered(peer(), Duration::from_micros(40));
        }
        d.presumed(peer(), 1, t0);
        // An unknown id is no evidence; the presumed one's answer is, once.
        assert!(!d.unmatched(peer(), 7, t0 + ms(3)));
        assert!(d.unmatched(peer(), 1, t0 + ms(3)));
        assert!(!d.unmatched(peer(), 1, t0 + ms(3)), "counted once");
        let widened = d.timeout(peer()).unwrap();
        // The late answer's 3 ms is a sample too, so the base grows as well as doubling.
        assert!(widened > LOSS_TIMEOUT_FLOOR * 2, "{widened:?}");
        // Late answers within one timeout of the last widening are the same stall: no
        // more doubling.
        d.presumed(peer(), 5, t0);
        assert!(d.unmatched(peer(), 5, t0 + ms(4)));
        assert_eq!(d.peers[&peer()].mult, 2);
        // Ten more, each a second apart: the multiplier doubles up to its cap.
        for (i, id) in (10..20).enumerate() {
            let answered_at = t0 + Duration::from_secs(1 + i as u64);
            d.presumed(peer(), id, answered_at - ms(3));
            assert!(d.unmatched(peer(), id, answered_at));
        }
        assert_eq!(d.peers[&peer()].mult, MAX_MULT);
        let widest = d.timeout(peer()).unwrap();
        // RESET_AFTER presumptions not contradicted: back to one times the base.
        for id in 100..100 + RESET_AFTER {
            d.presumed(peer(), id, t0);
        }
        assert_eq!(d.timeout(peer()).unwrap() * MAX_MULT, widest);
        // Only the last RECENT_PRESUMED are remembered.
        for id in 1000..1000 + RECENT_PRESUMED as u32 {
            d.presumed(peer(), id, t0);
        }
        assert!(!d.unmatched(peer(), 100, t0));
        assert!(d.unmatched(peer(), 1000, t0));
    }
}
