//! The loopback test server: UDP and TCP on one 127.0.0.1 port, several UDP worker tasks on
//! one socket, one task per TCP connection, counters and run-time faults.
//!
//! Layout: this file starts and steers a [`TestServer`]; `state` handles requests whatever
//! side they come in on (and is the HTTP side's backend); `udp` and `tcp` are those sides.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use bytes::Bytes;
use tokio::net::{TcpListener, UdpSocket};
use tokio::sync::{mpsc, Mutex as AsyncMutex};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::admin::AuthState;
use super::faults::{FaultState, Faults};
use super::key::TestKey;
use super::respond::SiteRole;
use super::store::Store;
use super::uri_res::Urns;
use crate::wire::{
    HandleValue, HashOption, Interface, InterfaceType, Limits, Protocol, ProtocolVersion,
    ServerInfo, SiteInfo,
};

mod state;
mod tcp;
mod udp;

pub(crate) use state::State;
use tcp::tcp_accept;
use udp::{udp_queue_worker, udp_receiver, udp_worker};

/// How a [`TestServer`] starts.
#[derive(Debug, Clone)]
pub struct TestServerConfig {
    /// The handles served (shared: it may be filled after the server started).
    pub store: Arc<Store>,
    /// The signing key (signed answers when CT is asked, and the key in the server record).
    pub key: TestKey,
    /// Faults in force from the start.
    pub faults: Faults,
    /// URNs the HTTP side resolves (RFC 2169 `/uri-res/N2L`, `/uri-res/N2Ls`).
    pub urns: Urns,
    /// Seed of the fault RNG (drops, garbage).
    pub seed: u64,
    /// UDP worker tasks on the shared socket; 0 = the number of CPUs.
    pub udp_workers: usize,
    /// This server's id in its server record.
    pub server_id: u32,
    /// Serial of the server's own single-server site (until [`TestServer::set_site`]).
    pub site_serial: u16,
    /// Protocol version advertised in the server's own site.
    pub protocol_version: ProtocolVersion,
    /// Whether the server's own site is primary.
    pub primary: bool,
    /// `desc` attribute of the server's own site.
    pub description: String,
    /// Limits for decoding requests.
    pub limits: Limits,
    /// Port to bind UDP and TCP to; 0 (default) = a free port.
    pub port: u16,
    /// Loopback address to bind to: 127.0.0.1 (default) or `::1`.
    pub ip: IpAddr,
    /// Also serve the native protocol over HTTP, on a port of its own that the server's
    /// site record names (interface type 3, protocol HTTP). Default off.
    pub http: bool,
    /// Port of the HTTP side; 0 (default) = a free port.
    pub http_port: u16,
    /// How the server's record lists its HTTP and HTTPS sides: `Some(kind)` (default
    /// [`InterfaceType::AdminAndQuery`]), or `None`, left out of the record. A native request
    /// over HTTP(S) that the record does not list the interface for is refused as the
    /// reference's `NativeServlet` refuses it (`Received query request on non-query
    /// interface`, `Received admin request on non-admin interface`); the REST API and RFC
    /// 2169 are served whatever the record says.
    pub http_kind: Option<InterfaceType>,
    /// UDP overload model: at most this many request datagrams wait to be served; one more
    /// is dropped, as a full receive buffer drops it (counted in `udp_dropped`). `None`
    /// (default): no model, the workers read the socket directly.
    pub capacity: Option<usize>,
    /// Also serve HTTPS on a free port of its own (interface type 3, protocol HTTPS), with
    /// a self-signed certificate for the server's key (which must then be of 2048 bits or
    /// more: [`TestKey::embedded_2048`]). Default off.
    pub https: bool,
    /// The UDP port is closed: nothing listens for UDP on the server's port, so the kernel
    /// answers a datagram with ICMP port unreachable, while TCP (and HTTP) serve as usual and
    /// the site record still names UDP. Default off.
    pub udp_closed: bool,
}

impl TestServerConfig {
    /// A healthy server for `store`, with the embedded test key.
    pub fn new(store: Arc<Store>) -> TestServerConfig {
        TestServerConfig {
            store,
            key: TestKey::embedded(),
            faults: Faults::default(),
            urns: Urns::new(),
            seed: 0x5eed,
            udp_workers: 0,
            server_id: 1,
            site_serial: 1,
            protocol_version: ProtocolVersion::V2_11,
            primary: true,
            description: "handle-resolver test server".into(),
            limits: Limits::default(),
            port: 0,
            ip: LOOPBACK,
            http: false,
            http_port: 0,
            http_kind: Some(InterfaceType::AdminAndQuery),
            capacity: None,
            https: false,
            udp_closed: false,
        }
    }
}

impl Default for TestServerConfig {
    fn default() -> Self {
        TestServerConfig::new(Arc::new(Store::new()))
    }
}

/// One test server: UDP and TCP on `127.0.0.1:<port>` (or `[::1]:<port>`; the same port for
/// both). Dropping it stops every task, delayed answers and open TCP connections included.
pub struct TestServer {
    state: Arc<State>,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.state.addr)
            .finish()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.state.stop.cancel();
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl TestServer {
    /// Binds UDP and TCP on one free 127.0.0.1 port and starts serving on the current tokio
    /// runtime (any flavour; on a multi-thread runtime the UDP workers run in parallel).
    pub async fn start(config: TestServerConfig) -> std::io::Result<TestServer> {
        if !config.ip.is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the test server only binds loopback addresses",
            ));
        }
        let (udp, tcp) = if config.port == 0 {
            bind_pair(config.ip).await?
        } else {
            (
                UdpSocket::bind((config.ip, config.port)).await?,
                TcpListener::bind((config.ip, config.port)).await?,
            )
        };
        // Room for a burst of requests from many clients (the default ~200 KB holds ~160
        // datagrams); capped by the kernel at `net.core.rmem_max`; best effort.
        if let Err(e) = socket2::SockRef::from(&udp).set_recv_buffer_size(4 << 20) {
            debug!(error = %e, "could not enlarge the udp receive buffer");
        }
        let addr = udp.local_addr()?;
        // A closed UDP port: the socket that held the port is closed, and a socket on a port
        // of its own stands in (no worker reads it).
        let udp = match config.udp_closed {
            true => {
                let stand_in = UdpSocket::bind((config.ip, 0)).await?;
                drop(udp);
                stand_in
            }
            false => udp,
        };
        let spoof = UdpSocket::bind((config.ip, 0)).await?;
        let http = match config.http {
            true => Some(TcpListener::bind((config.ip, config.http_port)).await?),
            false => None,
        };
        let http_addr = match &http {
            Some(l) => Some(l.local_addr()?),
            None => None,
        };
        let https = match config.https {
            true => Some((
                TcpListener::bind((config.ip, 0)).await?,
                super::http::tls_acceptor(&config.key)?,
            )),
            false => None,
        };
        let https_addr = match &https {
            Some((l, _)) => Some(l.local_addr()?),
            None => None,
        };
        let mut server = ServerInfo::new(config.server_id, addr.ip());
        server.public_key = config.key.hs_pubkey();
        server.interfaces = all_interfaces(
            addr.port(),
            http_addr.map(|a| a.port()),
            https_addr.map(|a| a.port()),
            config.http_kind,
        );
        let site = SiteInfo {
            data_format_version: 1,
            protocol_version: config.protocol_version,
            serial: config.site_serial,
            primary: config.primary,
            multi_primary: false,
            // Bit 0x80 = primary (PROTOCOL.md §7.1); kept in step with `primary`.
            primary_mask: if config.primary { 0x80 } else { 0 },
            hash_option: HashOption::ByHandle,
            hash_filter: Bytes::new(),
            attributes: vec![(
                Bytes::from_static(b"desc"),
                Bytes::copy_from_slice(config.description.as_bytes()),
            )],
            servers: vec![server],
        };
        let role = make_role(site, 0)?;
        let state = Arc::new(State {
            store: config.store,
            auth: AuthState::new(),
            key: config.key,
            limits: config.limits,
            addr,
            http_addr,
            https_addr,
            http_kind: config.http_kind,
            server_id: config.server_id,
            faults: FaultState::new(config.faults, config.seed),
            urns: RwLock::new(config.urns),
            role: RwLock::new(Arc::new(role)),
            udp: Arc::new(udp),
            spoof: Arc::new(spoof),
            reassemblers: Mutex::new(HashMap::new()),
            udp_requests: AtomicU64::new(0),
            udp_dropped: AtomicU64::new(0),
            tcp_requests: AtomicU64::new(0),
            http_requests: AtomicU64::new(0),
            delayed: Default::default(),
            stop: CancellationToken::new(),
        });
        let workers = match config.udp_workers {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        };
        let mut tasks = Vec::with_capacity(workers + 2);
        match config.capacity {
            _ if config.udp_closed => {}
            None => {
                for _ in 0..workers {
                    tasks.push(tokio::spawn(udp_worker(state.clone())));
                }
            }
            Some(capacity) => {
                let (tx, rx) = mpsc::channel(capacity.max(1));
                let rx = Arc::new(AsyncMutex::new(rx));
                tasks.push(tokio::spawn(udp_receiver(state.clone(), tx)));
                for _ in 0..workers {
                    tasks.push(tokio::spawn(udp_queue_worker(state.clone(), rx.clone())));
                }
            }
        }
        tasks.push(tokio::spawn(tcp_accept(state.clone(), tcp)));
        if let Some(listener) = http {
            tasks.push(tokio::spawn(super::http::accept(
                state.clone(),
                listener,
                None,
            )));
        }
        if let Some((listener, tls)) = https {
            tasks.push(tokio::spawn(super::http::accept(
                state.clone(),
                listener,
                Some(tls),
            )));
        }
        debug!(%addr, workers, "test server started");
        Ok(TestServer { state, tasks })
    }

    /// The address (UDP and TCP).
    pub fn addr(&self) -> SocketAddr {
        self.state.addr
    }

    /// UDP datagrams received (including those dropped by faults).
    pub fn udp_requests(&self) -> u64 {
        self.state.udp_requests.load(Ordering::Relaxed)
    }

    /// UDP datagrams dropped unanswered by `drop_ratio`, `block_udp` or the overload model
    /// ([`TestServerConfig::capacity`]).
    pub fn udp_dropped(&self) -> u64 {
        self.state.udp_dropped.load(Ordering::Relaxed)
    }

    /// TCP requests read (or, with `block_tcp`, connections closed unread).
    pub fn tcp_requests(&self) -> u64 {
        self.state.tcp_requests.load(Ordering::Relaxed)
    }

    /// Session setups (op code 400) answered.
    pub fn session_setups(&self) -> u64 {
        self.state.auth.sessions.setups()
    }

    /// Challenges (402) issued.
    pub fn challenges(&self) -> u64 {
        self.state.auth.issued()
    }

    /// Answers encrypted in a session (they carried non-public values).
    pub fn encrypted_answers(&self) -> u64 {
        self.state.auth.sessions.encrypted()
    }

    /// Encrypted requests received and opened in a session.
    pub fn encrypted_requests(&self) -> u64 {
        self.state.auth.sessions.opened()
    }

    /// Forgets every open session, as a restarted server would: a request in one then gets
    /// 500 SESSION_TIMEOUT.
    pub fn forget_sessions(&self) {
        self.state.auth.sessions.clear();
    }

    /// HTTP requests received.
    pub fn http_requests(&self) -> u64 {
        self.state.http_requests.load(Ordering::Relaxed)
    }

    /// The most requests whose answers the `delay` fault ([`Faults::delay`]) held back at
    /// once, over UDP and TCP: how many requests a client had in flight to this server at
    /// most, while answers are delayed.
    pub fn most_delayed_at_once(&self) -> u64 {
        self.state.delayed.most()
    }

    /// The HTTP listener's address (see [`TestServerConfig::http`]).
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.state.http_addr
    }

    /// The HTTPS listener's address (see [`TestServerConfig::https`]).
    pub fn https_addr(&self) -> Option<SocketAddr> {
        self.state.https_addr
    }

    /// Sets all counters back to zero.
    pub fn reset_counters(&self) {
        self.state.udp_requests.store(0, Ordering::Relaxed);
        self.state.udp_dropped.store(0, Ordering::Relaxed);
        self.state.tcp_requests.store(0, Ordering::Relaxed);
        self.state.http_requests.store(0, Ordering::Relaxed);
        self.state.delayed.reset();
    }

    /// Changes the faults in force (takes effect for the next request).
    pub fn set_faults(&self, faults: Faults) {
        self.state.faults.set(faults);
    }

    /// The store served.
    pub fn store(&self) -> &Arc<Store> {
        &self.state.store
    }

    /// Replaces the URNs the HTTP side resolves.
    pub fn set_urns(&self, urns: Urns) {
        *self.state.urns.write() = urns;
    }

    /// The signing key.
    pub fn key(&self) -> &TestKey {
        &self.state.key
    }

    /// This server's record: id, 127.0.0.1, the test key, interfaces TCP (query + admin) and
    /// UDP (query) on [`addr`](Self::addr)'s port, and HTTP and HTTPS (query + admin, or as
    /// [`TestServerConfig::http_kind`] lists them) on [`http_addr`](Self::http_addr)'s and
    /// [`https_addr`](Self::https_addr)'s when it has them.
    pub fn server_info(&self) -> ServerInfo {
        let mut s = ServerInfo::new(self.state.server_id, self.state.addr.ip());
        s.public_key = self.state.key.hs_pubkey();
        s.interfaces = all_interfaces(
            self.state.addr.port(),
            self.state.http_addr.map(|a| a.port()),
            self.state.https_addr.map(|a| a.port()),
            self.state.http_kind,
        );
        s
    }

    fn role(&self) -> Arc<SiteRole> {
        self.state.role.read().clone()
    }

    /// The site this server belongs to: its own single-server site unless
    /// [`set_site`](Self::set_site) made it part of another.
    pub fn site_info(&self) -> SiteInfo {
        self.role().site.clone()
    }

    /// An HS_SITE value at `index` describing [`site_info`](Self::site_info).
    pub fn site_value(&self, index: u32) -> HandleValue {
        HandleValue::new(index, &b"HS_SITE"[..], self.role().record.clone())
    }

    /// Makes this server the `index`-th server of `site`: the hash rule is enforced (301 for
    /// handles that hash to another server), GetSiteInfo answers `site`, and answers carry
    /// its serial.
    pub fn set_site(&self, site: SiteInfo, index: usize) -> std::io::Result<()> {
        let role = make_role(site, index)?;
        *self.state.role.write() = Arc::new(role);
        Ok(())
    }
}

fn make_role(site: SiteInfo, index: usize) -> std::io::Result<SiteRole> {
    let record = site
        .encode()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
    Ok(SiteRole {
        site,
        index,
        record,
    })
}

/// TCP (query and admin) and UDP (query) on `port`, as real servers list them.
pub fn interfaces(port: u16) -> Vec<Interface> {
    vec![
        Interface {
            kind: InterfaceType::AdminAndQuery,
            protocol: Protocol::Tcp,
            port: u32::from(port),
        },
        Interface {
            kind: InterfaceType::Query,
            protocol: Protocol::Udp,
            port: u32::from(port),
        },
    ]
}

/// [`interfaces`], plus HTTP and HTTPS (of `kind`) on their ports when given (and a kind).
fn all_interfaces(
    port: u16,
    http: Option<u16>,
    https: Option<u16>,
    kind: Option<InterfaceType>,
) -> Vec<Interface> {
    let mut all = interfaces(port);
    let Some(kind) = kind else {
        return all;
    };
    for (protocol, port) in [(Protocol::Http, http), (Protocol::Https, https)] {
        if let Some(port) = port {
            all.push(Interface {
                kind,
                protocol,
                port: u32::from(port),
            });
        }
    }
    all
}

/// A UDP socket and a TCP listener on the same free loopback port.
async fn bind_pair(ip: IpAddr) -> std::io::Result<(UdpSocket, TcpListener)> {
    let mut last = None;
    for _ in 0..64 {
        let udp = UdpSocket::bind((ip, 0)).await?;
        let port = udp.local_addr()?.port();
        match TcpListener::bind((ip, port)).await {
            Ok(tcp) => return Ok((udp, tcp)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free port pair")))
}

/// The loopback address servers bind to.
pub const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
