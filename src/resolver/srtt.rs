//! [`SrttTable`]: site order and hedge delays from a decaying smoothed RTT per server (in the manner of
//! hickory-dns' `DecayingSrtt`, PROTOCOL.md §11.3).
//!
//! - Unknown servers get a tiny random score, so they are probed early.
//! - Each answer folds its RTT into the server's SRTT (EWMA, weight 1/4 to the new sample),
//!   except answers that took more than one transmission: they carry no transmission number,
//!   so their RTT is ambiguous and is not used (Karn's rule); the SRTT is only raised to the
//!   first retransmission wait, which passed without an answer.
//! - A failure raises the SRTT to at least [`FAILURE_PENALTY`] (doubling on repeated failures,
//!   capped at [`MAX_SRTT`]).
//! - Scores decay towards zero while a server is not used (half-life [`DECAY_HALF_LIFE`]),
//!   so a penalised server is retried eventually.
//! - A random jitter (up to ±[`JITTER`] or ±10 %) spreads load between equally fast sites.

use foldhash::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use parking_lot::Mutex;
use rand::Rng;
use tokio::time::Instant;

use crate::transport::TransportKind;
use crate::wire::ServerInfo;

use super::sites::{query_addr, Site};

/// SRTT a server gets on a failure (or more, doubling with repeated failures).
pub(crate) const FAILURE_PENALTY: Duration = Duration::from_secs(1);
/// Largest SRTT kept.
pub(crate) const MAX_SRTT: Duration = Duration::from_secs(60);
/// Scores halve for every this much time without news of the server.
pub(crate) const DECAY_HALF_LIFE: Duration = Duration::from_secs(300);
/// Largest absolute jitter added to a score.
pub(crate) const JITTER: Duration = Duration::from_millis(5);
/// Most servers remembered; the stalest is forgotten beyond that.
pub(crate) const MAX_TRACKED: usize = 4096;

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

/// Per-server smoothed RTTs (keyed by the server's query address, see [`srtt_key`]).
#[derive(Debug, Default)]
pub(crate) struct SrttTable {
    entries: Mutex<HashMap<SocketAddr, Entry>>,
}

impl SrttTable {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut HashMap<SocketAddr, Entry>) -> R) -> R {
        f(&mut self.entries.lock())
    }

    /// The server's current (decayed) SRTT, `None` when nothing is known.
    pub(crate) fn srtt(&self, server: SocketAddr) -> Option<Duration> {
        let now = Instant::now();
        self.with(|m| {
            m.get(&server)
                .map(|e| Duration::from_micros(e.decayed(now) as u64))
        })
    }

    /// Folds a measured RTT into the server's SRTT, now.
    #[cfg(test)]
    pub(crate) fn record_rtt(&self, server: SocketAddr, rtt: Duration) {
        self.record_rtt_at(server, rtt, Instant::now());
    }

    /// Folds an RTT measured at `now` into the server's SRTT.
    fn record_rtt_at(&self, server: SocketAddr, rtt: Duration, now: Instant) {
        let sample = rtt.as_micros() as f64;
        self.with(|m| {
            update(m, server, now, |old| match old {
                Some(e) => e.decayed(now) * 0.75 + sample * 0.25,
                None => sample,
            })
        });
    }

    /// Records an answer that took `transmissions` transmissions, `rtt` after the first one.
    /// With one transmission `rtt` is folded into the SRTT. With more it is ambiguous (the
    /// answer may belong to any transmission) and is not used (Karn's rule); what is certain
    /// is kept instead, as Karn keeps the backed-off timer: nothing came back within
    /// `first_wait` of the first transmission, so the SRTT is raised to at least that (a
    /// server that always needs a retransmission must not look unknown, and so first in line,
    /// for ever). `now` is when the answer came (the caller has just read the clock for
    /// `rtt`). Returns whether `rtt` was used as a sample.
    pub(crate) fn record_answer(
        &self,
        server: SocketAddr,
        rtt: Duration,
        transmissions: u32,
        first_wait: Duration,
        now: Instant,
    ) -> bool {
        if transmissions <= 1 {
            self.record_rtt_at(server, rtt, now);
            return true;
        }
        let floor = first_wait.min(MAX_SRTT).as_micros() as f64;
        self.with(|m| {
            update(m, server, now, |old| {
                old.map_or(floor, |e| e.decayed(now).max(floor))
            })
        });
        false
    }

    /// Penalises the server after a failure (timeout, refused, bad answer).
    pub(crate) fn record_failure(&self, server: SocketAddr) {
        let now = Instant::now();
        let floor = FAILURE_PENALTY.as_micros() as f64;
        let cap = MAX_SRTT.as_micros() as f64;
        self.with(|m| {
            update(m, server, now, |old| match old {
                Some(e) => (e.decayed(now) * 2.0).max(floor).min(cap),
                None => floor,
            })
        });
    }

    /// The sort score of a server: decayed SRTT plus jitter; unknown servers score below
    /// 32 µs so they are probed first.
    pub(crate) fn score(&self, server: SocketAddr, rng: &mut impl Rng) -> f64 {
        match self.srtt(server) {
            None => rng.gen_range(0.0..32.0),
            Some(d) => {
                let us = d.as_micros() as f64;
                let spread = (us * 0.1).min(JITTER.as_micros() as f64).max(1.0);
                us + rng.gen_range(-spread..spread)
            }
        }
    }

    /// Hedge delay for a request to `server`: 3 × SRTT bounded to `[min, max]`; `max` for
    /// an unknown server.
    pub(crate) fn hedge_delay(
        &self,
        server: Option<SocketAddr>,
        min: Duration,
        max: Duration,
    ) -> Duration {
        match server.and_then(|s| self.srtt(s)) {
            None => max,
            Some(srtt) => srtt.saturating_mul(3).clamp(min, max.max(min)),
        }
    }

    /// How many servers are tracked.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.with(|m| m.len())
    }
}

/// Sets the server's SRTT to `srtt_us(its entry)` as of `now`: in place when it is known
/// (one lookup), else as a new entry (forgetting the stalest beyond [`MAX_TRACKED`]).
fn update(
    m: &mut HashMap<SocketAddr, Entry>,
    server: SocketAddr,
    now: Instant,
    srtt_us: impl FnOnce(Option<&Entry>) -> f64,
) {
    if let Some(e) = m.get_mut(&server) {
        *e = Entry {
            srtt_us: srtt_us(Some(e)),
            updated: now,
        };
        return;
    }
    let e = Entry {
        srtt_us: srtt_us(None),
        updated: now,
    };
    insert_bounded(m, server, e);
}

fn insert_bounded(m: &mut HashMap<SocketAddr, Entry>, key: SocketAddr, e: Entry) {
    if m.len() >= MAX_TRACKED && !m.contains_key(&key) {
        if let Some(oldest) = m.iter().min_by_key(|(_, e)| e.updated).map(|(k, _)| *k) {
            m.remove(&oldest);
        }
    }
    m.insert(key, e);
}

/// The key of a server in the table: its UDP query address, else its TCP one, else its IP
/// with port 0 (servers of one host on different ports are told apart).
pub(crate) fn srtt_key(server: &ServerInfo) -> SocketAddr {
    query_addr(server, TransportKind::Udp)
        .or_else(|| query_addr(server, TransportKind::Tcp))
        .unwrap_or_else(|| SocketAddr::new(server.address, 0))
}

/// Orders `sites` for a request about `handle`: primary sites only when `authoritative`,
/// then by the score of the server the hash picks in each site (lowest first).
pub(crate) fn order_sites(
    table: &SrttTable,
    sites: &[Site],
    handle: &[u8],
    authoritative: bool,
    rng: &mut impl Rng,
) -> Vec<Site> {
    let mut scored: Vec<(f64, Site)> = sites
        .iter()
        .filter(|s| !authoritative || s.is_primary())
        .map(|s| {
            let score = match s.server_for(handle) {
                Some(server) => table.score(srtt_key(server), rng),
                None => f64::MAX,
            };
            (score, s.clone())
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.into_iter().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::net::IpAddr;

    fn ip(n: u8) -> SocketAddr {
        SocketAddr::new(IpAddr::from([127, 0, 0, n]), 2641)
    }

    #[tokio::test(start_paused = true)]
    async fn unknown_servers_come_first_then_fastest() {
        let t = SrttTable::new();
        t.record_rtt(ip(1), Duration::from_millis(80));
        t.record_rtt(ip(2), Duration::from_millis(10));
        let sites: Vec<Site> = (1..=3).map(|n| Site::single(ip(n))).collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let order = order_sites(&t, &sites, b"x/y", false, &mut rng);
        let firsts: Vec<SocketAddr> = order.iter().map(|s| srtt_key(&s.info.servers[0])).collect();
        assert_eq!(firsts, vec![ip(3), ip(2), ip(1)]);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_penalise_and_penalties_decay() {
        let t = SrttTable::new();
        t.record_rtt(ip(1), Duration::from_millis(10));
        t.record_failure(ip(1));
        assert!(t.srtt(ip(1)).unwrap() >= FAILURE_PENALTY);
        t.record_failure(ip(1));
        assert!(t.srtt(ip(1)).unwrap() >= FAILURE_PENALTY * 2);
        tokio::time::advance(DECAY_HALF_LIFE * 4).await;
        let decayed = t.srtt(ip(1)).unwrap();
        assert!(decayed < Duration::from_millis(300), "{decayed:?}");
        // A success pulls it down further.
        t.record_rtt(ip(1), Duration::from_millis(1));
        assert!(t.srtt(ip(1)).unwrap() < decayed);
    }

    #[tokio::test(start_paused = true)]
    async fn retransmitted_answers_are_not_rtt_samples() {
        let t = SrttTable::new();
        let wait = Duration::from_millis(500);
        // Ambiguous: only "nothing within the first wait" is kept.
        assert!(!t.record_answer(ip(1), Duration::from_millis(700), 2, wait, Instant::now()));
        assert_eq!(t.srtt(ip(1)), Some(wait));
        assert!(t.record_answer(ip(1), Duration::from_millis(100), 1, wait, Instant::now()));
        assert_eq!(t.srtt(ip(1)), Some(Duration::from_millis(400)));
        // A known SRTT above the wait is left alone.
        t.record_failure(ip(2));
        assert!(!t.record_answer(ip(2), Duration::from_millis(1600), 3, wait, Instant::now()));
        assert_eq!(t.srtt(ip(2)), Some(FAILURE_PENALTY));
    }

    #[tokio::test(start_paused = true)]
    async fn hedge_delay_is_bounded() {
        let t = SrttTable::new();
        let (lo, hi) = (Duration::from_millis(50), Duration::from_millis(500));
        assert_eq!(t.hedge_delay(Some(ip(9)), lo, hi), hi);
        assert_eq!(t.hedge_delay(None, lo, hi), hi);
        t.record_rtt(ip(1), Duration::from_micros(100));
        assert_eq!(t.hedge_delay(Some(ip(1)), lo, hi), lo);
        t.record_rtt(ip(2), Duration::from_millis(100));
        assert_eq!(
            t.hedge_delay(Some(ip(2)), lo, hi),
            Duration::from_millis(300)
        );
        t.record_failure(ip(3));
        assert_eq!(t.hedge_delay(Some(ip(3)), lo, hi), hi);
    }

    #[tokio::test(start_paused = true)]
    async fn authoritative_keeps_primary_sites_only() {
        let t = SrttTable::new();
        let primary = Site::single("127.0.0.1:1".parse().unwrap());
        let mut mirror = Site::single("127.0.0.2:1".parse().unwrap());
        let mut info = (*mirror.info).clone();
        info.primary = false;
        mirror.info = std::sync::Arc::new(info);
        let sites = vec![mirror, primary.clone()];
        let mut rng = rand::rngs::StdRng::seed_from_u64(2);
        assert_eq!(
            order_sites(&t, &sites, b"a/b", true, &mut rng),
            vec![primary]
        );
        assert_eq!(order_sites(&t, &sites, b"a/b", false, &mut rng).len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn table_is_bounded() {
        let t = SrttTable::new();
        for i in 0..(MAX_TRACKED as u32 + 10) {
            t.record_rtt(
                SocketAddr::new(IpAddr::from(i.to_be_bytes()), 1),
                Duration::from_millis(1),
            );
        }
        assert_eq!(t.len(), MAX_TRACKED);
    }
}
