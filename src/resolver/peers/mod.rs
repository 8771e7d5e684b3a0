//! [`Peers`]: what the resolver knows of each server, in one table with one bound. A request
//! looks its server up once ([`Peers::get`]) and reads and updates the parts of its
//! [`Peer`], each of which owns its state:
//!
//! - [`rtt`](Peer::rtt): the decaying smoothed RTT that orders sites and sets hedge delays
//!   (`rtt.rs`);
//! - [`health`](Peer::health): transports learned to fail, and the breaker of a silent
//!   server (`health.rs`);
//! - [`limit`](Peer::limit): how many UDP requests may be in flight to it (`limit.rs`);
//! - [`session`](Peer::session): the session held with it, for requests that need the
//!   resolver's identity (`session.rs`);
//! - its places ([`Peer::place`]): the bound the user set on requests in flight to one
//!   server over any transport (`ResolverBuilder::max_in_flight_per_server`), none by
//!   default.
//!
//! A server is known by its query address ([`peer_key`]: UDP, else TCP, else its IP with
//! port 0), whatever transport a request uses. The transport keeps the one other
//! per-server table, the UDP loss timeouts its receive task learns from unambiguous round
//! trips; its RTT estimate comes up with each UDP answer (`Exchanged::srtt`) and is the
//! server's RTT here (`rtt.rs`), so no server's RTT is estimated twice. The limit
//! (`limit.rs`) keeps, on purpose, a statistic of its own: the lowest round trip seen lately,
//! the baseline its queueing signal measures each answer against (not an estimate of the
//! RTT, and never read by anything else).

mod health;
mod limit;
mod rtt;
mod session;
mod window;

use std::net::SocketAddr;
use std::sync::Arc;

use foldhash::HashMap;
use parking_lot::Mutex;
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::transport::TransportKind;
use crate::wire::ServerInfo;

use super::site::query_addr;

pub(crate) use health::Admission;
pub(crate) use limit::Permit;
pub(crate) use rtt::{hedge_delay, score};
pub(crate) use session::{Lease, DEFAULT_SESSION_WINDOW, MAX_SESSION_WINDOW};

use health::Health;
use limit::Limit;
use rtt::Rtt;
use session::Session;

/// Most servers remembered; beyond, one nobody is using is forgotten: the stalest of those of
/// which nothing worth keeping is known, else the stalest. While every one is in use, the
/// table grows past the bound (a server in use keeps its limit and session).
const MAX_PEERS: usize = 4096;

/// One server as the resolver knows it.
#[derive(Debug)]
pub(crate) struct Peer {
    /// Its smoothed RTT.
    pub(crate) rtt: Rtt,
    /// Its reachability: transports learned to fail, the breaker.
    pub(crate) health: Health,
    /// Its limit of UDP requests in flight (shared with the permits handed out).
    pub(crate) limit: Arc<Limit>,
    /// The session held with it.
    pub(crate) session: Session,
    /// The user's bound on its requests in flight, any transport (fair: first come, first
    /// served).
    places: Option<Semaphore>,
}

impl Peer {
    fn new(sessions: bool, session_window: usize, places: Option<usize>) -> Self {
        Self {
            rtt: Rtt::default(),
            health: Health::default(),
            limit: Arc::new(Limit::default()),
            session: Session::with_window(sessions, session_window),
            // At most `Semaphore::MAX_PERMITS` (the builder's bound too): tokio refuses more.
            places: places.map(|n| Semaphore::new(n.min(Semaphore::MAX_PERMITS))),
        }
    }

    /// Waits for a place among the requests in flight to the server, when the user bounded
    /// them (`ResolverBuilder::max_in_flight_per_server`); the place is given back when the
    /// returned guard is dropped. The wait is under the call's deadline, as all of a request.
    pub(crate) async fn place(&self) -> Option<SemaphorePermit<'_>> {
        let places = self.places.as_ref()?;
        if let Ok(place) = places.try_acquire() {
            return Some(place);
        }
        tracing::debug!("waiting for a place among the server's requests in flight");
        // `acquire` fails only on a closed semaphore, and this one is never closed.
        places.acquire().await.ok()
    }

    /// True when nothing worth keeping is known of the server: no failure or breaker, no
    /// live session (its RTT and limit are relearned in a few answers).
    fn is_disposable(&self) -> bool {
        self.health.is_blank() && self.session.is_idle()
    }

    /// Waits for a place among the server's UDP requests in flight (see `limit.rs`).
    pub(crate) async fn udp_permit(&self) -> Permit {
        self.limit.acquire().await
    }
}

/// A server in the table, and the lookup that last asked for it.
#[derive(Debug)]
struct Tracked {
    peer: Arc<Peer>,
    touched: u64,
}

/// The servers, and how many lookups the table has had (the order of staleness, without a
/// clock read per request).
#[derive(Debug, Default)]
struct Table {
    map: HashMap<SocketAddr, Tracked>,
    lookups: u64,
}

/// Every server the resolver knows (see the module documentation).
#[derive(Debug)]
pub(crate) struct Peers {
    table: Mutex<Table>,
    /// Whether requests that need the identity go in sessions.
    sessions: bool,
    /// Requests in flight in one session at most.
    session_window: usize,
    /// Requests in flight to one server at most (`None`: no bound of the user's).
    places: Option<usize>,
}

impl Peers {
    /// An empty table; `sessions` when requests that need the identity go in sessions,
    /// at most `session_window` of them in flight in one session; at most `places` requests
    /// in flight to one server when given.
    pub(crate) fn new(sessions: bool, session_window: usize, places: Option<usize>) -> Self {
        Self {
            table: Mutex::new(Table::default()),
            sessions,
            session_window,
            places,
        }
    }

    /// The server known by `key` ([`peer_key`]), added when new.
    pub(crate) fn get(&self, key: SocketAddr) -> Arc<Peer> {
        let mut table = self.table.lock();
        table.lookups += 1;
        let now = table.lookups;
        let map = &mut table.map;
        if let Some(t) = map.get_mut(&key) {
            t.touched = now;
            return t.peer.clone();
        }
        if map.len() >= MAX_PEERS {
            evict_one(map);
        }
        let peer = Arc::new(Peer::new(self.sessions, self.session_window, self.places));
        map.insert(
            key,
            Tracked {
                peer: peer.clone(),
                touched: now,
            },
        );
        peer
    }

    /// The server known by `key`, when the table has it (nothing is added).
    pub(crate) fn find(&self, key: SocketAddr) -> Option<Arc<Peer>> {
        self.table.lock().map.get(&key).map(|t| t.peer.clone())
    }

    /// How many servers are known.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().map.len()
    }
}

/// Forgets one server nobody holds: the stalest of those [disposable](Peer::is_disposable),
/// else the stalest; none while every server is in use.
fn evict_one(map: &mut HashMap<SocketAddr, Tracked>) {
    let unused = || map.iter().filter(|(_, t)| Arc::strong_count(&t.peer) == 1);
    let victim = unused()
        .filter(|(_, t)| t.peer.is_disposable())
        .min_by_key(|(_, t)| t.touched)
        .or_else(|| unused().min_by_key(|(_, t)| t.touched))
        .map(|(k, _)| *k);
    if let Some(k) = victim {
        map.remove(&k);
    }
}

/// The key of a server in the table: its UDP query address, else its TCP one, else its IP
/// with port 0 (servers of one host on different ports are told apart).
pub(crate) fn peer_key(server: &ServerInfo) -> SocketAddr {
    query_addr(server, TransportKind::Udp)
        .or_else(|| query_addr(server, TransportKind::Tcp))
        .unwrap_or_else(|| SocketAddr::new(server.address, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;
    use std::time::Duration;

    fn key(i: u32) -> SocketAddr {
        SocketAddr::new(IpAddr::from(i.to_be_bytes()), 1)
    }

    #[tokio::test(start_paused = true)]
    async fn one_entry_per_server_and_the_table_is_bounded() {
        let peers = Peers::new(false, 1, None);
        let first = peers.get(key(0));
        first.rtt.record_rtt(Duration::from_millis(3));
        // The same server is the same entry, whatever part is asked.
        assert!(Arc::ptr_eq(&first, &peers.get(key(0))));
        assert_eq!(
            peers.find(key(0)).and_then(|p| p.rtt.srtt()),
            Some(Duration::from_millis(3))
        );
        assert!(peers.find(key(1)).is_none(), "find adds nothing");
        for i in 1..(MAX_PEERS as u32 + 10) {
            tokio::time::advance(Duration::from_millis(1)).await;
            drop(peers.get(key(i)));
        }
        assert_eq!(peers.len(), MAX_PEERS);
        // The server still in use was kept although it is the stalest.
        assert!(peers.find(key(0)).is_some());
        assert!(peers.find(key(1)).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn what_is_learned_outlives_blank_servers_and_servers_in_use_stay() {
        let peers = Peers::new(false, 1, None);
        // The stalest server has failed: its health is worth keeping.
        peers.get(key(0)).health.failed();
        for i in 1..(MAX_PEERS as u32 + 10) {
            tokio::time::advance(Duration::from_millis(1)).await;
            drop(peers.get(key(i)));
        }
        assert_eq!(peers.len(), MAX_PEERS);
        assert!(
            peers.find(key(0)).is_some(),
            "the failed server was forgotten"
        );
        assert!(peers.find(key(1)).is_none());
        // Every server in use: the table grows rather than drop one.
        let held: Vec<Arc<Peer>> = (0..MAX_PEERS as u32 + 10)
            .map(|i| peers.get(key(i + 100_000)))
            .collect();
        assert!(peers.len() >= held.len());
    }
}
