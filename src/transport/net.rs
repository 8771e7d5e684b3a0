//! [`NetTransport`], the real transport: one UDP demultiplexer per address family (bound
//! lazily, replaced when its runtime shuts down) and TCP, behind the [`Exchange`] trait.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use futures::future::BoxFuture;

use super::error::TransportError;
use super::exchange::{Exchange, ExchangeOptions, Exchanged, TransportKind};
#[cfg(feature = "http")]
use super::exchange::{Fetched, HttpGet, HttpSend};
#[cfg(feature = "http")]
use super::http;
use super::tcp;
use super::udp::{UdpConfig, UdpDemux};
use crate::wire::Message;

/// Builder of a [`NetTransport`].
#[derive(Debug, Clone)]
pub struct NetTransportBuilder {
    max_in_flight: usize,
    max_reassembly_bytes: usize,
    bind_v4: SocketAddr,
    bind_v6: SocketAddr,
}

impl Default for NetTransportBuilder {
    fn default() -> Self {
        Self {
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_reassembly_bytes: DEFAULT_MAX_REASSEMBLY_BYTES,
            bind_v4: SocketAddr::from(([0, 0, 0, 0], 0)),
            bind_v6: SocketAddr::from(([0u16; 8], 0)),
        }
    }
}

/// Default cap on UDP requests in flight per address family (beyond it: [`TransportError::Busy`]).
pub const DEFAULT_MAX_IN_FLIGHT: usize = 65_536;
/// Default cap on the bytes held by all partially received multi-datagram UDP answers of one
/// socket together (each is also capped by
/// [`Limits::max_message_length`](crate::wire::Limits::max_message_length)).
pub const DEFAULT_MAX_REASSEMBLY_BYTES: usize = 32 * 1024 * 1024;

impl NetTransportBuilder {
    /// Most UDP requests in flight per address family; one more gets [`TransportError::Busy`].
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n;
        self
    }

    /// Most bytes held by partially received multi-datagram answers of one socket together;
    /// fragments that would exceed it are dropped (the retransmission gets another chance).
    pub fn max_reassembly_bytes(mut self, n: usize) -> Self {
        self.max_reassembly_bytes = n;
        self
    }

    /// Local address of the IPv4 UDP socket (default `0.0.0.0:0`).
    pub fn bind_v4(mut self, addr: SocketAddr) -> Self {
        self.bind_v4 = addr;
        self
    }

    /// Local address of the IPv6 UDP socket (default `[::]:0`).
    pub fn bind_v6(mut self, addr: SocketAddr) -> Self {
        self.bind_v6 = addr;
        self
    }

    /// Builds the transport. No socket is opened until the first UDP exchange of each
    /// address family.
    pub fn build(self) -> NetTransport {
        NetTransport {
            inner: Arc::new(Inner {
                config: self,
                v4: Slot::default(),
                v6: Slot::default(),
                #[cfg(feature = "http")]
                getter: OnceLock::new(),
            }),
        }
    }
}

/// The real transport: one shared UDP socket per address family (bound lazily, on the tokio
/// runtime of the first exchange, which also runs its receive task), demultiplexed by request
/// id; TCP with one connection per request through `tokio_util::codec::Framed` and the wire
/// codec.
///
/// UDP rules chosen here: requests are fragmented like the reference client does (at most
/// [`MAX_UDP_REQUEST_FRAGMENTS`](super::MAX_UDP_REQUEST_FRAGMENTS) datagrams, else
/// [`TransportError::TooLargeForUdp`]); every retransmission resends every fragment with the
/// same request id; an answer is accepted only from the address the request was sent to;
/// multi-datagram answers are reassembled per request (fragments of earlier transmissions
/// count); on Linux a request whose destination port is closed (ICMP port unreachable) ends
/// at once with [`TransportError::Io`] of kind `ConnectionRefused` (elsewhere it times out).
/// Cheap to clone (shared state).
///
/// Its UDP sockets and receive tasks belong to the tokio runtime of their first exchange and
/// stop with it: UDP exchanges then waiting fail at once with [`TransportError::Io`], and the
/// next one binds a fresh socket on its own runtime.
///
/// ```no_run
/// use handle_resolver::transport::{Exchange, ExchangeOptions, NetTransport, TransportKind};
/// use handle_resolver::wire::Message;
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = NetTransport::new();
/// let request = Message::resolution_request("0.NA/10.1045", vec![], vec![], 0, 0);
/// let server = "127.0.0.1:2641".parse()?;
/// let answer = transport
///     .exchange(server, TransportKind::Udp, &request, &ExchangeOptions::default())
///     .await?;
/// println!("{}", answer.message.header.response_code);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct NetTransport {
    inner: Arc<Inner>,
}

/// An IPv4-mapped IPv6 address (`[::ffff:a.b.c.d]:p`) as the IPv4 address it maps: it goes
/// through the IPv4 socket (an IPv6 socket may be IPv6-only) and its answers come from there.
fn canonical(server: SocketAddr) -> SocketAddr {
    match server {
        SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
            Some(v4) => SocketAddr::from((v4, v6.port())),
            None => server,
        },
        SocketAddr::V4(_) => server,
    }
}

/// One UDP demultiplexer per address family, bound on first use and replaced when closed.
#[derive(Debug, Default)]
struct Slot {
    /// The first one bound: read without a lock (or a reference count) for as long as it
    /// stays open, which for most programs is for ever. (Once closed it is kept, socket
    /// included, for the transport's lifetime: one descriptor per address family.)
    first: OnceLock<Arc<UdpDemux>>,
    /// The one that replaced it after it closed (its runtime shut down), and so on.
    later: Mutex<Option<Arc<UdpDemux>>>,
}

/// A demultiplexer to use for one exchange: the slot's first (borrowed) or a replacement.
enum DemuxRef<'a> {
    First(&'a UdpDemux),
    Later(Arc<UdpDemux>),
}

impl std::ops::Deref for DemuxRef<'_> {
    type Target = UdpDemux;

    fn deref(&self) -> &UdpDemux {
        match self {
            DemuxRef::First(d) => d,
            DemuxRef::Later(d) => d,
        }
    }
}

#[derive(Debug)]
struct Inner {
    config: NetTransportBuilder,
    v4: Slot,
    v6: Slot,
    #[cfg(feature = "http")]
    getter: OnceLock<http::Getter>,
}

/// The demultiplexer in `slot`, if bound: the first while it is open, else the latest.
fn current(slot: &Slot) -> Option<Arc<UdpDemux>> {
    match slot.first.get() {
        Some(d) if !d.is_closed() => Some(d.clone()),
        first => slot.later.lock().clone().or_else(|| first.cloned()),
    }
}

impl Default for NetTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl NetTransport {
    /// A transport with the default settings.
    pub fn new() -> NetTransport {
        NetTransportBuilder::default().build()
    }

    /// A builder to change the defaults.
    pub fn builder() -> NetTransportBuilder {
        NetTransportBuilder::default()
    }

    /// UDP requests currently waiting for an answer (both address families). Zero when
    /// nothing is in flight: every entry is removed on answer, timeout, error or cancellation.
    pub fn pending_count(&self) -> usize {
        [&self.inner.v4, &self.inner.v6]
            .into_iter()
            .filter_map(current)
            .map(|d| d.pending_count())
            .sum()
    }

    /// The UDP loss timeout learned for `server` (early loss detection,
    /// [`ExchangeOptions::udp_loss_detection`](super::ExchangeOptions::udp_loss_detection)):
    /// `None` until it has answered a request that took part.
    pub fn udp_loss_timeout(&self, server: SocketAddr) -> Option<std::time::Duration> {
        let slot = if server.is_ipv4() {
            &self.inner.v4
        } else {
            &self.inner.v6
        };
        current(slot)?.loss_timeout(server)
    }

    /// Bytes currently held by partially received multi-datagram answers (both families).
    pub fn reassembly_bytes(&self) -> usize {
        [&self.inner.v4, &self.inner.v6]
            .into_iter()
            .filter_map(current)
            .map(|d| d.reassembly_bytes())
            .sum()
    }

    /// Local address of the UDP socket used for `server`'s address family, once bound.
    pub fn udp_local_addr(&self, server: SocketAddr) -> Option<SocketAddr> {
        let slot = if canonical(server).is_ipv4() {
            &self.inner.v4
        } else {
            &self.inner.v6
        };
        current(slot).and_then(|d| d.local_addr().ok())
    }

    /// The demultiplexer of `server`'s address family: bound on first use, and bound again
    /// when the one there is closed (its runtime shut down).
    fn demux(&self, server: SocketAddr) -> Result<DemuxRef<'_>, TransportError> {
        let (slot, bind) = if server.is_ipv4() {
            (&self.inner.v4, self.inner.config.bind_v4)
        } else {
            (&self.inner.v6, self.inner.config.bind_v6)
        };
        if let Some(d) = slot.first.get().filter(|d| !d.is_closed()) {
            return Ok(DemuxRef::First(d));
        }
        // Binding is serialised by this lock, so `first` is set once.
        let mut later = slot.later.lock();
        // Another caller may have bound the first one while this one waited for the lock.
        if let Some(d) = slot.first.get().filter(|d| !d.is_closed()) {
            return Ok(DemuxRef::First(d));
        }
        if let Some(d) = later.as_ref().filter(|d| !d.is_closed()) {
            return Ok(DemuxRef::Later(d.clone()));
        }
        let config = UdpConfig {
            max_in_flight: self.inner.config.max_in_flight,
            max_reassembly_bytes: self.inner.config.max_reassembly_bytes,
        };
        let d = Arc::new(UdpDemux::bind(bind, config)?);
        if slot.first.get().is_none() && slot.first.set(d.clone()).is_ok() {
            return Ok(DemuxRef::Later(d));
        }
        *later = Some(d.clone());
        Ok(DemuxRef::Later(d))
    }

    /// One UDP exchange (see [`Exchange::exchange`]).
    pub async fn udp_exchange(
        &self,
        server: SocketAddr,
        request: &Message,
        options: &ExchangeOptions,
    ) -> Result<Exchanged, TransportError> {
        let server = canonical(server);
        let demux = self.demux(server)?;
        demux.exchange(server, request, options).await
    }

    /// One TCP exchange (see [`Exchange::exchange`]); always one transmission.
    pub async fn tcp_exchange(
        &self,
        server: SocketAddr,
        request: &Message,
        options: &ExchangeOptions,
    ) -> Result<Exchanged, TransportError> {
        let (message, continued) = tcp::exchange(server, request, options).await?;
        let mut exchanged = Exchanged::new(message, 1);
        exchanged.continued = continued;
        Ok(exchanged)
    }
}

impl Exchange for NetTransport {
    fn exchange<'a>(
        &'a self,
        server: SocketAddr,
        kind: TransportKind,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        match kind {
            TransportKind::Udp => Box::pin(self.udp_exchange(server, request, options)),
            TransportKind::Tcp => Box::pin(self.tcp_exchange(server, request, options)),
            #[cfg(feature = "http")]
            TransportKind::Http => {
                Box::pin(self.http_exchange(http::HttpTarget::http(server), request, options))
            }
            #[cfg(feature = "http")]
            TransportKind::Https => {
                Box::pin(self.http_exchange(http::HttpTarget::https(server), request, options))
            }
            #[cfg(not(feature = "http"))]
            TransportKind::Http | TransportKind::Https => {
                Box::pin(async { Err(TransportError::Unsupported("http (feature off)")) })
            }
            TransportKind::Rest => Box::pin(async {
                Err(TransportError::Unsupported(
                    "the REST API is asked with fetch",
                ))
            }),
        }
    }

    #[cfg(feature = "http")]
    fn exchange_http<'a>(
        &'a self,
        target: &'a http::HttpTarget,
        request: &'a Message,
        options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        Box::pin(http::exchange(target, request, options))
    }

    #[cfg(feature = "http")]
    fn fetch<'a>(&'a self, get: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        Box::pin(async move { self.getter()?.get(get).await })
    }

    #[cfg(feature = "http")]
    fn send<'a>(&'a self, send: &'a HttpSend) -> BoxFuture<'a, Result<Fetched, TransportError>> {
        Box::pin(async move { self.getter()?.send(send).await })
    }
}

#[cfg(feature = "http")]
impl NetTransport {
    /// One native exchange over HTTP(S) (see [`Exchange::exchange_http`]).
    async fn http_exchange(
        &self,
        target: http::HttpTarget,
        request: &Message,
        options: &ExchangeOptions,
    ) -> Result<Exchanged, TransportError> {
        http::exchange(&target, request, options).await
    }

    /// The pooled GET client, made on first use.
    fn getter(&self) -> Result<&http::Getter, TransportError> {
        if let Some(g) = self.inner.getter.get() {
            return Ok(g);
        }
        let made = http::Getter::new()?;
        Ok(self.inner.getter.get_or_init(|| made))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Two first exchanges at once: the one that waited for the binding lock while the other
    /// bound the first demultiplexer uses that one instead of binding a second socket (which
    /// `udp_local_addr` and `pending_count` would not see, and which fails outright with a
    /// fixed local port).
    #[test]
    fn a_caller_waiting_for_the_first_bind_uses_the_first_demultiplexer() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _enter = rt.enter();
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let transport = NetTransport::builder().bind_v4(bind).build();
        let server = SocketAddr::from(([127, 0, 0, 1], 9));
        let slot = &transport.inner.v4;
        // The other caller holds the lock while it binds.
        let binding = slot.later.lock();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let _enter = rt.enter();
                transport
                    .demux(server)
                    .map(|d| d.local_addr().unwrap())
                    .map_err(|e| e.to_string())
            });
            // Time for the waiter to find no first demultiplexer and block on the lock.
            std::thread::sleep(Duration::from_millis(200));
            let config = UdpConfig {
                max_in_flight: 8,
                max_reassembly_bytes: 1 << 16,
            };
            let first = Arc::new(UdpDemux::bind(bind, config).unwrap());
            let first_addr = first.local_addr().unwrap();
            assert!(slot.first.set(first).is_ok());
            drop(binding);
            let used = waiter.join().unwrap().unwrap();
            assert_eq!(used, first_addr);
            assert_eq!(transport.udp_local_addr(server), Some(first_addr));
            assert!(slot.later.lock().is_none());
        });
    }
}
