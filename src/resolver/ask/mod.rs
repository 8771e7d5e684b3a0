//! [`Asker`]: asks sites for one request. It picks the server each site's hash names for
//! the handle, races the sites hedged in SRTT order, runs the one fallback rule from
//! transport to transport on a server (UDP → TCP → HTTP → HTTPS, PROTOCOL.md §8.4), and
//! keeps what it learns of each server in the [`Peers`] table.
//!
//! Read top down: [`Asker::race`] asks a list of sites (hedged); `ask_site` the server a
//! site's hash picks; [`Asker::ask_server`] one server at its addresses (both families
//! raced); `ask_address` one address over the transports in turn (`over_transports`);
//! `attempt.rs` is one attempt over one transport (its session, its exchanges under the UDP
//! limit with early resends and challenge answers, the trace) and `check.rs` the checks of
//! its answer.
//! `request.rs` says what is sent and how an answer is read.

mod attempt;
mod check;
mod request;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::Rng;

use crate::transport::{Exchange, ExchangeOptions, TransportKind};
use crate::wire::{Message, ServerInfo};

use super::error::{ProtocolViolation, ResolveError};
use super::peers::{hedge_delay, peer_key, score, Admission, Peer, Peers};
use super::settings::Settings;
use super::site::{interface_addr, Site};
use super::support::clock::Clock;
use super::support::hedging::race;
use super::support::trace::Trace;

use attempt::Addressee;
use check::{is_silence, moves_on, summarize, telling};

pub(crate) use request::{error_text, Answer, RequestSpec};

/// How long the first address family of a server has before the other is tried too (the
/// reference client's 300 ms; RFC 8305 recommends 250 ms).
const HAPPY_EYEBALLS_DELAY: Duration = Duration::from_millis(300);

/// Asks sites and servers; holds what it learns about them ([`Peers`]).
pub(crate) struct Asker {
    exchange: Arc<dyn Exchange>,
    options: ExchangeOptions,
    transports: Box<[TransportKind]>,
    hedge_min: Duration,
    hedge_max: Duration,
    max_parallel: usize,
    clock: Arc<dyn Clock>,
    /// What is known of each server: RTT, health, UDP limit, session.
    peers: Peers,
    /// Who the resolver is when a server challenges (402).
    auth: Option<Arc<crate::auth::Authenticator>>,
    rng: Mutex<StdRng>,
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Asker")
            .field("transports", &self.transports)
            .field("max_parallel", &self.max_parallel)
            .finish_non_exhaustive()
    }
}

impl Asker {
    pub(crate) fn new(
        settings: &Settings,
        exchange: Arc<dyn Exchange>,
        options: ExchangeOptions,
        clock: Arc<dyn Clock>,
        rng: StdRng,
    ) -> Self {
        Self {
            exchange,
            options,
            transports: settings.transports.clone().into_boxed_slice(),
            hedge_min: settings.hedge_min,
            hedge_max: settings.hedge_max,
            max_parallel: settings.max_parallel,
            clock,
            peers: Peers::new(
                settings.sessions && settings.authenticator.is_some(),
                settings.session_window,
                settings.max_in_flight_per_server,
            ),
            auth: settings.authenticator.clone(),
            rng: Mutex::new(rng),
        }
    }

    /// The transport (also for HTTP GETs: RFC 2169 URN resolution).
    pub(crate) fn exchange(&self) -> &dyn Exchange {
        &*self.exchange
    }

    /// The wall clock (request expiry, absolute TTLs).
    pub(crate) fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The SRTT of a server (by query address), `None` while unknown.
    pub(crate) fn srtt(&self, server: SocketAddr) -> Option<Duration> {
        self.peers.find(server).and_then(|p| p.rtt.srtt())
    }

    /// Asks `sites` (primary sites only for AT requests), hedged in SRTT order: the first
    /// acceptable answer wins and the attempts still running are cancelled; when none
    /// comes, the most telling failure is returned.
    pub(crate) async fn race(
        &self,
        spec: &RequestSpec,
        sites: &[Site],
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        // One candidate (every `--server` request, every single-site service): nothing to
        // order or hedge, so it is asked directly. Kept because it pays: through the race
        // (its task set, timers, site order, hedge delays) a resolution against one server
        // took 27-29 % more client instructions (callgrind, `loadgen --server ...
        // --client-threads 0`, C = 1 and 256) and loadgen's UDP rate at C = 256 fell to
        // 0.81 (BENCHMARKS.md §2).
        if let [site] = sites {
            if !spec.authoritative() || site.is_primary() {
                return self
                    .ask_site(site, spec, trace)
                    .await
                    .map_err(|e| summarize(&spec.handle, vec![e]));
            }
        }
        let handle = spec.handle.as_bytes();
        let ordered = self.order_sites(sites, handle, spec.authoritative());
        let delays: Vec<Duration> = ordered
            .iter()
            .map(|(_, srtt)| hedge_delay(*srtt, self.hedge_min, self.hedge_max))
            .collect();
        let result = race(
            ordered.len(),
            self.max_parallel,
            |i| self.ask_site(&ordered[i].0, spec, trace),
            |i| delays.get(i).copied().unwrap_or(self.hedge_max),
        )
        .await;
        result
            .map(|(_, answer)| answer)
            .map_err(|errors| summarize(&spec.handle, errors.into_iter().map(|(_, e)| e).collect()))
    }

    /// Asks the server of `site` its hash picks for the handle.
    async fn ask_site(
        &self,
        site: &Site,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let server = site
            .server_for(spec.handle.as_bytes())
            .ok_or(ResolveError::Protocol {
                sites_asked: 1,
                server: None,
                violation: ProtocolViolation::NoUsableServer,
            })?;
        self.ask_server(site, server, spec, trace).await
    }

    /// Asks one server of `site`. A server with an address of the other family too (the
    /// site's `alt_addr` attributes) is asked at both, as RFC 8305 races them: the family
    /// that answered last time (IPv6 when none has yet) first, the other
    /// [`HAPPY_EYEBALLS_DELAY`] later or as soon as the first fails; the first answer wins
    /// and the other attempt is cancelled.
    pub(crate) async fn ask_server(
        &self,
        site: &Site,
        server: &ServerInfo,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let alt = site
            .info
            .alt_addr(server.server_id)
            .filter(|a| a.is_ipv6() != server.address.is_ipv6());
        let Some(alt) = alt else {
            return self.ask_address(site, server, spec, trace).await;
        };
        let mut other = server.clone();
        other.address = alt;
        let peer = self.peers.get(peer_key(server));
        let v6_first = peer.health.prefers_ipv6().unwrap_or(true);
        let candidates = if server.address.is_ipv6() == v6_first {
            [server, &other]
        } else {
            [&other, server]
        };
        let result = race(
            2,
            2,
            |i| self.ask_address(site, candidates[i], spec, trace),
            |_| HAPPY_EYEBALLS_DELAY,
        )
        .await;
        match result {
            Ok((i, answer)) => {
                peer.health.answered_over(candidates[i].address.is_ipv6());
                Ok(answer)
            }
            Err(errors) => Err(errors
                .into_iter()
                .map(|(_, e)| e)
                .min_by_key(telling)
                .unwrap_or(ResolveError::Protocol {
                    sites_asked: 1,
                    server: Some(peer_key(server)),
                    violation: ProtocolViolation::NoUsableServer,
                })),
        }
    }

    /// Asks one server at one address: the transports in order (those it learned to fail
    /// last), the next on the same server when one fails in a way the next may not
    /// ([`moves_on`]); at once an error when the server's breaker is open (`peers/health.rs`).
    async fn ask_address(
        &self,
        site: &Site,
        server: &ServerInfo,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        // The one lookup of the server in the table for this request: every part of it
        // (breaker, transports, limit, session, RTT) is read through this entry.
        let key = peer_key(server);
        let peer = self.peers.get(key);
        // A place among the server's requests in flight when the user bounded them
        // (`ResolverBuilder::max_in_flight_per_server`), held until this request to it ends:
        // its transports in turn, session setup, sends, resends and challenge answers are one
        // request to the bound. Taken before the breaker is asked, so that a request that
        // waited finds the breaker as it is then (a server that died meanwhile fails it at
        // once), and before any attempt's clock starts (waiting is not the server's silence).
        let _place = peer.place().await;
        if let Admission::Open(retry_in) = peer.health.admit() {
            return Err(ResolveError::ServerUnavailable {
                server: key,
                retry_in,
                sites_asked: 1,
            });
        }
        let mut kinds = peer.health.transports(&self.transports);
        if !spec.over_udp() {
            kinds.to_mut().retain(|k| *k != TransportKind::Udp);
        }
        let to_admin = spec.to_admin_interface();
        self.over_transports(
            &kinds,
            Some(&peer),
            |kind| interface_addr(server, kind, to_admin),
            Some(key),
            |addr, kind| {
                let to = Addressee {
                    site,
                    server,
                    peer: &peer,
                    addr,
                    kind,
                    to_admin,
                };
                self.attempt(to, spec, trace)
            },
        )
        .await
    }

    /// Sends `request` to `server` as it is (UDP then TCP, as configured) and returns the
    /// raw answer: no checks, no trace, no SRTT, nothing learned.
    pub(crate) async fn exchange_raw(
        &self,
        server: SocketAddr,
        request: &Message,
    ) -> Result<Message, ResolveError> {
        self.over_transports(
            &self.transports,
            None,
            |kind| matches!(kind, TransportKind::Udp | TransportKind::Tcp).then_some(server),
            Some(server),
            |addr, kind| async move {
                // Sent once as given: no early loss detection (its `PresumedLost` would end
                // the exchange with nothing to send it again).
                let options = self.exchange_options(None, None);
                self.exchange
                    .exchange(addr, kind, request, &options)
                    .await
                    .map(|e| e.message)
                    .map_err(|error| ResolveError::Transport {
                        sites_asked: 1,
                        server: addr,
                        kind,
                        error,
                    })
            },
        )
        .await
    }

    /// Runs `attempt` over `kinds` of one server, in order, moving on only when
    /// [`moves_on`] says so. `addr_of` gives the server's address for a transport (`None`:
    /// not offered); `unusable` names the server when none is offered. With `learn` (the
    /// server's entry), every silence or refusal and every answer is told to its health.
    async fn over_transports<T, Fut>(
        &self,
        kinds: &[TransportKind],
        learn: Option<&Peer>,
        addr_of: impl Fn(TransportKind) -> Option<SocketAddr>,
        unusable: Option<SocketAddr>,
        attempt: impl Fn(SocketAddr, TransportKind) -> Fut,
    ) -> Result<T, ResolveError>
    where
        Fut: Future<Output = Result<T, ResolveError>>,
    {
        let mut last = None;
        let mut silent: Vec<TransportKind> = Vec::new();
        for &kind in kinds {
            let Some(addr) = addr_of(kind) else {
                continue;
            };
            let result = attempt(addr, kind).await;
            if let Some(peer) = learn {
                match &result {
                    Err(e) if is_silence(e) => {
                        peer.health.failed();
                        silent.push(kind);
                    }
                    Err(ResolveError::Transport { .. }) => {}
                    // An answer, even a failing one, is a sign of life.
                    _ => peer.health.answered(&silent),
                }
            }
            match result {
                Ok(answer) => return Ok(answer),
                Err(e) if moves_on(kind, &e) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(ResolveError::Protocol {
            sites_asked: 1,
            server: unusable,
            violation: ProtocolViolation::NoUsableServer,
        }))
    }
    /// `sites` in the order to ask them about `handle`: primary sites only when
    /// `authoritative`, then by the score of the server the hash picks in each (lowest
    /// first: unknown servers, then the fastest, with a jitter); each with that server's
    /// SRTT, for its hedge delay.
    fn order_sites(
        &self,
        sites: &[Site],
        handle: &[u8],
        authoritative: bool,
    ) -> Vec<(Site, Option<Duration>)> {
        let mut rng = self.rng.lock();
        order_by_score(sites, handle, authoritative, &mut *rng, |server| {
            self.peers.find(peer_key(server)).and_then(|p| p.rtt.srtt())
        })
    }
}

/// [`Asker::order_sites`] with the SRTT of each server from `srtt_of`.
fn order_by_score(
    sites: &[Site],
    handle: &[u8],
    authoritative: bool,
    rng: &mut impl Rng,
    srtt_of: impl Fn(&ServerInfo) -> Option<Duration>,
) -> Vec<(Site, Option<Duration>)> {
    let mut scored: Vec<(f64, Site, Option<Duration>)> = sites
        .iter()
        .filter(|s| !authoritative || s.is_primary())
        .map(|s| match s.server_for(handle) {
            Some(server) => {
                let srtt = srtt_of(server);
                (score(srtt, rng), s.clone(), srtt)
            }
            None => (f64::MAX, s.clone(), None),
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.into_iter().map(|(_, s, srtt)| (s, srtt)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::net::IpAddr;

    fn ip(n: u8) -> SocketAddr {
        SocketAddr::new(IpAddr::from([127, 0, 0, n]), 2641)
    }

    #[test]
    fn unknown_servers_come_first_then_fastest() {
        let srtt = |server: &ServerInfo| match peer_key(server) {
            a if a == ip(1) => Some(Duration::from_millis(80)),
            a if a == ip(2) => Some(Duration::from_millis(10)),
            _ => None,
        };
        let sites: Vec<Site> = (1..=3).map(|n| Site::single(ip(n))).collect();
        let mut rng = StdRng::seed_from_u64(1);
        let order = order_by_score(&sites, b"x/y", false, &mut rng, srtt);
        let firsts: Vec<SocketAddr> = order
            .iter()
            .map(|(s, _)| peer_key(&s.info.servers[0]))
            .collect();
        assert_eq!(firsts, vec![ip(3), ip(2), ip(1)]);
    }

    #[test]
    fn authoritative_keeps_primary_sites_only() {
        let primary = Site::single("127.0.0.1:1".parse().unwrap());
        let mut mirror = Site::single("127.0.0.2:1".parse().unwrap());
        let mut info = (*mirror.info).clone();
        info.primary = false;
        mirror.info = std::sync::Arc::new(info);
        let sites = vec![mirror, primary.clone()];
        let mut rng = StdRng::seed_from_u64(2);
        let order = order_by_score(&sites, b"a/b", true, &mut rng, |_| None);
        assert_eq!(order, vec![(primary, None)]);
        assert_eq!(
            order_by_score(&sites, b"a/b", false, &mut rng, |_| None).len(),
            2
        );
    }
}
