//! UDP: the shared socket and its setup, and the send side: the per-request retransmission
//! loop (PROTOCOL.md §8.1). The receive task that demultiplexes answers by request id is in
//! `receive`, the table of pending requests it fills in `table`.
//!
//! The caller's future does the sending and waits on a oneshot channel; no task is spawned
//! per request. The receive task wakes on readiness, then drains the socket with
//! `try_recv_from` before waiting again; it alone reads the socket. (Callers once took turns
//! reading it too, to save the hop through the receive task: on a multi-threaded runtime
//! every answer then woke two tasks, often on two threads, and one request at a time took
//! 70 µs instead of 33 µs; see BENCHMARKS.md.) A datagram is accepted only when its request
//! id is pending, it comes from the address that request was sent to, and it decodes;
//! anything else is dropped with a `debug!` event. Multi-datagram answers are collected in the
//! pending entry by a [`Collector`], the reassembly rule of the wire layer; this module adds
//! only a per-socket memory budget (the collector's `room`). The entry is removed
//! on completion, and by a guard when the caller's future ends for any other reason
//! (timeout, error, or being dropped), so nothing is left behind.
//!
//! On Linux a datagram refused by its destination (ICMP port unreachable: nobody listens on
//! that UDP port) ends every request pending to that destination at once with
//! [`TransportError::Io`] of kind `ConnectionRefused`, instead of the whole retransmission
//! schedule (`udp_sys` reads the socket's error queue). Other platforms never learn of the
//! refusal: such a request waits out its schedule and ends with [`TransportError::Timeout`].
//!
//! The receive task belongs to the runtime of the first exchange. When it ends (that runtime
//! shuts down, or a bug panics it), every pending entry is dropped at once, so its caller
//! gets an error instead of waiting out its schedule, and the demultiplexer reports itself
//! closed (`UdpDemux::is_closed`): the transport then binds a fresh one.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::net::UdpSocket;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::debug;

use super::error::TransportError;
use super::exchange::{ExchangeOptions, Exchanged};
use super::request_id::{encode_with_request_id, random_request_id};
use super::udp_sys;
use crate::wire::envelope::mark_truncated;
use crate::wire::{
    fragment, Collector, Limits, Message, SessionKey, ENVELOPE_LEN, MAX_FRAGMENT_PAYLOAD,
};

mod receive;
mod table;

use receive::receive_loop;
use table::{receive_task_stopped, Outcome, Pending, PendingGuard, Shared, Table};

/// Kernel receive buffer asked for the shared socket.
const SOCKET_RECV_BUFFER: usize = 4 << 20;

/// Most UDP datagrams one request may be split into (the reference client has no limit; 64
/// fragments are 31 488 message bytes, far above any resolution request).
pub const MAX_UDP_REQUEST_FRAGMENTS: usize = 64;

/// Settings of one demultiplexer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UdpConfig {
    pub(crate) max_in_flight: usize,
    pub(crate) max_reassembly_bytes: usize,
}

/// Most doublings of a loss timeout for a request presumed lost before
/// ([`ExchangeOptions::udp_loss_backoff`]).
const MAX_LOSS_BACKOFF: u32 = 6;

/// What [`UdpDemux::presume_lost`] found.
enum Presumed {
    Lost,
    Answered,
    Collecting,
}

/// A pending entry registered: its guard, where its outcome comes, and for early loss
/// detection the server's loss timeout and the send time.
struct Registered<'a> {
    guard: PendingGuard<'a>,
    rx: oneshot::Receiver<Outcome>,
    loss_timeout: Option<(Duration, Instant)>,
    /// Its answer will be taken as an RTT sample (until it is sent again).
    sampled: bool,
}

/// One shared UDP socket and its receive task.
pub(crate) struct UdpDemux {
    socket: Arc<UdpSocket>,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for UdpDemux {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpDemux")
            .field("local", &self.socket.local_addr().ok())
            .field("pending", &self.pending_count())
            .finish()
    }
}

impl Drop for UdpDemux {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl UdpDemux {
    /// Binds the socket and starts the receive task on the current tokio runtime (an error,
    /// not a panic, outside one).
    pub(crate) fn bind(local: SocketAddr, config: UdpConfig) -> std::io::Result<UdpDemux> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let socket = std::net::UdpSocket::bind(local)?;
        socket.set_nonblocking(true)?;
        // Learn of refused datagrams (ICMP port unreachable) at once; best effort.
        if let Err(e) = udp_sys::enable_errors(&socket) {
            debug!(error = %e, "could not enable the udp error queue");
        }
        // Room for the answers of every request in flight: the default (~200 KB) holds only
        // ~160 small datagrams (the kernel counts ~1.3 KB each), and a burst of answers beyond
        // that is dropped, costing a retransmission wait. The kernel caps the size at
        // `net.core.rmem_max`; best effort.
        if let Err(e) = socket2::SockRef::from(&socket).set_recv_buffer_size(SOCKET_RECV_BUFFER) {
            debug!(error = %e, "could not enlarge the udp receive buffer");
        }
        let socket = Arc::new(UdpSocket::from_std(socket)?);
        let shared = Arc::new(Shared {
            table: Mutex::new(Table::default()),
            config,
            closed: AtomicBool::new(false),
        });
        let task = runtime.spawn(receive_loop(socket.clone(), shared.clone()));
        debug!(local = ?socket.local_addr().ok(), "udp demultiplexer started");
        Ok(UdpDemux {
            socket,
            shared,
            task,
        })
    }

    /// True once the receive task has ended: no answer can arrive through this socket.
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    pub(crate) fn pending_count(&self) -> usize {
        self.shared.lock().map.len()
    }

    pub(crate) fn loss_timeout(&self, server: SocketAddr) -> Option<Duration> {
        self.shared.lock().loss.timeout(server)
    }

    pub(crate) fn reassembly_bytes(&self) -> usize {
        self.shared.lock().reassembly_bytes
    }

    pub(crate) fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// Registers a pending entry with a fresh request id unique in the table.
    fn register(
        &self,
        peer: SocketAddr,
        limits: Limits,
        session: Option<Arc<SessionKey>>,
        loss_detection: Option<(Duration, u32)>,
    ) -> Result<Registered<'_>, TransportError> {
        let (tx, rx) = oneshot::channel();
        let mut id = random_request_id();
        let mut t = self.shared.lock();
        // Checked under the lock: an entry inserted before the receive task's end is
        // removed by its `CloseOnDrop`, one after it is refused here.
        if self.is_closed() {
            return Err(receive_task_stopped());
        }
        if t.map.len() >= self.shared.config.max_in_flight {
            return Err(TransportError::Busy);
        }
        while t.map.contains_key(&id) {
            id = random_request_id();
        }
        t.last_token = t.last_token.wrapping_add(1);
        let token = t.last_token;
        // Early loss detection when the server's loss timeout is shorter than the schedule's
        // first wait. Registered just before it is encoded and sent: the send time, to within
        // the encoding's microseconds.
        // Its answer is an RTT sample as long as it is sent once.
        let loss_timeout = loss_detection.and_then(|(first_wait, backoff)| {
            t.loss
                .timeout(peer)
                .map(|l| l.saturating_mul(2u32.pow(backoff.min(MAX_LOSS_BACKOFF))))
                .filter(|l| *l < first_wait)
        });
        let sent_at = loss_detection.map(|_| Instant::now());
        t.map.insert(
            id,
            Pending {
                peer,
                token,
                tx,
                limits,
                session,
                partial: Collector::new(),
                sent_at,
            },
        );
        drop(t);
        let guard = PendingGuard {
            shared: &self.shared,
            id,
            token,
        };
        Ok(Registered {
            guard,
            rx,
            loss_timeout: loss_timeout.zip(sent_at),
            sampled: sent_at.is_some(),
        })
    }

    /// Sends `request` to `server` (every fragment, again after each wait of the schedule)
    /// and waits for the answer. Also returns how many transmissions were sent: answers carry
    /// no transmission number, so after a retransmission the answer may belong to any of them.
    pub(crate) async fn exchange(
        &self,
        server: SocketAddr,
        request: &Message,
        options: &ExchangeOptions,
    ) -> Result<Exchanged, TransportError> {
        let Registered {
            guard,
            mut rx,
            loss_timeout,
            sampled,
        } = self.register(
            server,
            options.limits,
            options.session.clone(),
            options
                .udp_loss_detection
                .then(|| options.udp_retransmit.first().copied())
                .flatten()
                .map(|first_wait| (first_wait, options.udp_loss_backoff)),
        )?;
        let session = options.session.as_deref();
        let encoded = encode_with_request_id(request, guard.id, session)?;
        let single;
        let fragments: Vec<Bytes>;
        let datagrams: &[Bytes] = if encoded.len() <= ENVELOPE_LEN + MAX_FRAGMENT_PAYLOAD {
            single = [encoded];
            &single
        } else {
            // Every fragment of a multi-datagram request carries TC, as the reference client
            // sends them (PROTOCOL.md §8.1); receivers go by MessageLength either way. Set in
            // the bytes: a request sealed in a session is not sealed twice.
            let mut marked = bytes::BytesMut::from(&encoded[..]);
            mark_truncated(&mut marked);
            fragments = fragment(&marked.freeze());
            if fragments.len() > MAX_UDP_REQUEST_FRAGMENTS {
                return Err(TransportError::TooLargeForUdp);
            }
            &fragments
        };
        // The clock is read for the debug events only (the resolver times attempts itself).
        let timed = tracing::enabled!(tracing::Level::DEBUG);
        let started = timed.then(Instant::now);
        for (attempt, &scheduled) in options.udp_retransmit.iter().enumerate() {
            // With early loss detection the first wait is the server's loss timeout, and
            // the exchange ends there.
            let probe = loss_timeout.filter(|_| attempt == 0);
            let wait = probe.map_or(scheduled, |(timeout, _)| timeout);
            if attempt == 1 && sampled {
                // Sent again: its answer may be to either transmission, no RTT sample.
                let mut t = self.shared.lock();
                if let Some(p) = t.map.get_mut(&guard.id).filter(|p| p.token == guard.token) {
                    p.sent_at = None;
                }
            }
            let sent = if attempt == 0 {
                started
            } else {
                timed.then(Instant::now)
            };
            for d in datagrams {
                if let Err(e) = self.send_to(d, server).await {
                    debug!(%server, transport = "udp", attempt, error = %e, "send failed");
                    return Err(e.into());
                }
            }
            let transmissions = u32::try_from(attempt).map_or(u32::MAX, |a| a.saturating_add(1));
            let mut outcome = tokio::time::timeout(wait, &mut rx).await;
            if let (Err(_), Some((timeout, sent_at))) = (&outcome, probe) {
                match self.presume_lost(&guard, server, sent_at) {
                    Presumed::Lost => {
                        debug!(%server, transport = "udp", request_id = guard.id, timeout_us = timeout.as_micros() as u64, "presumed lost");
                        return Err(TransportError::PresumedLost);
                    }
                    // Its outcome was handed over (or is being) as the timeout fired.
                    Presumed::Answered => outcome = Ok((&mut rx).await),
                    // A multi-datagram answer is coming in: the rest of the first wait.
                    Presumed::Collecting => {
                        outcome =
                            tokio::time::timeout(scheduled.saturating_sub(timeout), &mut rx).await
                    }
                }
            }
            match outcome {
                Ok(Ok(Ok((answer, srtt)))) => {
                    // The RTT counts from the first transmission: the answer may belong to
                    // any of them (`transmissions` > 1 makes it an upper bound only).
                    debug!(
                        %server,
                        transport = "udp",
                        transmissions,
                        rtt_us = started.map_or(0, |t| t.elapsed().as_micros() as u64),
                        since_last_send_us = sent.map_or(0, |t| t.elapsed().as_micros() as u64),
                        code = %answer.header.response_code,
                        "answer"
                    );
                    return Ok(Exchanged::new(answer, transmissions).with_srtt(srtt));
                }
                Ok(Ok(Err(error))) => {
                    // Refused (ICMP port unreachable) or presumed lost.
                    debug!(%server, transport = "udp", attempt, %error, "ended without an answer");
                    return Err(error);
                }
                Ok(Err(_)) => {
                    // The sender leaves the table without an answer only when the receive
                    // task ends (`CloseOnDrop`).
                    debug!(%server, transport = "udp", attempt, "receive task stopped");
                    return Err(receive_task_stopped());
                }
                Err(_) => {
                    // An answer handed over after the deadline fired but before this point is
                    // still taken rather than lost (the entry is already gone from the table).
                    match rx.try_recv() {
                        Ok(Ok((answer, srtt))) => {
                            return Ok(Exchanged::new(answer, transmissions).with_srtt(srtt))
                        }
                        Ok(Err(error)) => return Err(error),
                        Err(_) => {}
                    }
                    debug!(%server, transport = "udp", attempt, wait_ms = wait.as_millis() as u64, "no answer");
                }
            }
        }
        drop(guard);
        Err(TransportError::Timeout)
    }

    /// At the loss timeout of the request of `guard`, in one look at the table: presumed lost
    /// (its entry removed) unless it was answered meanwhile or an answer to it is being
    /// collected.
    fn presume_lost(
        &self,
        guard: &PendingGuard<'_>,
        server: SocketAddr,
        sent_at: Instant,
    ) -> Presumed {
        let mut t = self.shared.lock();
        match t.map.get(&guard.id).filter(|p| p.token == guard.token) {
            None => Presumed::Answered,
            Some(p) if p.partial.held_bytes() > 0 => Presumed::Collecting,
            Some(_) => {
                t.remove(guard.id);
                t.loss.presumed(server, guard.id, sent_at);
                Presumed::Lost
            }
        }
    }

    /// Sends one datagram. A refusal reported by the send is not this datagram's (it was
    /// not sent): with the error queue on, the kernel reports a refusal of an earlier
    /// datagram, to whatever destination, from the next call on the socket, and that call
    /// fails without sending. The refused exchange learns of it through the error queue;
    /// this one sends again (a few times: refusals may keep coming in between).
    async fn send_to(&self, datagram: &[u8], server: SocketAddr) -> std::io::Result<usize> {
        let mut tries = 0;
        loop {
            match self.socket.send_to(datagram, server).await {
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && tries < 8 => {
                    tries += 1;
                }
                sent => return sent,
            }
        }
    }
}
