//! The receive task of a UDP demultiplexer: it alone reads the shared socket, drains it in
//! batches on readiness, reads the error queue (refused destinations), and hands each answer
//! to its pending entry: single datagrams decoded outside the table's lock, multi-datagram
//! answers collected in the entry's [`Collector`](crate::wire::Collector) under the socket's
//! reassembly budget.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use tokio::net::UdpSocket;
use tokio::time::Instant;
use tracing::debug;

use super::table::{refused, CloseOnDrop, Pending, Shared, Table};
use crate::transport::udp_sys::{self, QueuedError};
use crate::wire::open_message;
use crate::wire::{CollectError, Collected, Envelope, Reader, MAX_FRAGMENT_PAYLOAD};

/// Receive buffer size: 512 is enough for the reference servers; be tolerant (PROTOCOL.md §8.1).
const RECV_BUFFER: usize = 2048;
/// Datagrams handled per wake-up before the receive task yields to others.
const RECV_BATCH: usize = 256;

pub(super) async fn receive_loop(socket: Arc<UdpSocket>, shared: Arc<Shared>) {
    let _close = CloseOnDrop(shared.clone());
    let mut buf = vec![0u8; RECV_BUFFER];
    loop {
        let ready = match socket.ready(udp_sys::INTEREST).await {
            Ok(ready) => ready,
            Err(e) => {
                debug!(error = %e, "udp socket not readable; receive task stops");
                return;
            }
        };
        if ready.is_error() {
            shared.drain_errors(&socket, &mut buf);
        }
        if ready.is_readable() || ready.is_read_closed() {
            // Drain in batches, yielding between them so that one busy socket cannot starve
            // the other tasks of this worker thread.
            while let Drained::Batch = shared.drain(&socket, &mut buf) {
                tokio::task::yield_now().await;
            }
        }
    }
}

/// True when a datagram from `from` comes from `asked`, the address a request went to: same
/// IP and port. An IPv6 flow label is not part of the address (the kernel reports 0 on
/// receipt whatever the request carried), and a scope id counts only when `asked` names one.
fn same_peer(asked: SocketAddr, from: SocketAddr) -> bool {
    match (asked, from) {
        (SocketAddr::V4(a), SocketAddr::V4(f)) => a == f,
        (SocketAddr::V6(a), SocketAddr::V6(f)) => {
            a.ip() == f.ip()
                && a.port() == f.port()
                && (a.scope_id() == 0 || a.scope_id() == f.scope_id())
        }
        _ => false,
    }
}

/// How a drain of the socket ended.
enum Drained {
    /// Nothing more to read right now (readiness cleared).
    Empty,
    /// A full batch was handled; more may be waiting.
    Batch,
}

impl Shared {
    /// Reads datagrams with `try_recv_from` until the socket would block or a batch is done.
    fn drain(&self, socket: &UdpSocket, buf: &mut [u8]) -> Drained {
        let mut errors = 0usize;
        for _ in 0..RECV_BATCH {
            match socket.try_recv_from(buf) {
                Ok((n, from)) => {
                    let datagram = Bytes::copy_from_slice(buf.get(..n).unwrap_or_default());
                    self.on_datagram(datagram, from);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Drained::Empty,
                Err(e) => {
                    // E.g. a refusal reported once more (see `udp_sys`): not fatal.
                    debug!(error = %e, "udp receive error");
                    errors += 1;
                    if errors >= 16 {
                        return Drained::Batch;
                    }
                }
            }
        }
        Drained::Batch
    }

    /// Reads the socket's error queue until it is empty (or a batch is done) and ends every
    /// request pending to a destination that refused a datagram.
    fn drain_errors(&self, socket: &UdpSocket, buf: &mut [u8]) {
        for _ in 0..RECV_BATCH {
            match udp_sys::next_error(socket, buf) {
                Ok(QueuedError::Refused(peer)) => self.refuse(peer),
                Ok(QueuedError::Other(errno)) => debug!(errno, "udp error queued; ignored"),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    debug!(error = %e, "cannot read the udp error queue");
                    return;
                }
            }
        }
    }

    /// Ends every request pending to `peer` with [`refused`]: nobody listens there.
    fn refuse(&self, peer: SocketAddr) {
        let mut ended = Vec::new();
        {
            let mut t = self.lock();
            let ids: Vec<u32> = t
                .map
                .iter()
                .filter(|(_, p)| same_peer(p.peer, peer))
                .map(|(id, _)| *id)
                .collect();
            for id in ids {
                ended.extend(t.remove(id));
            }
        }
        debug!(%peer, requests = ended.len(), "udp port unreachable; pending requests refused");
        for p in ended {
            // The caller may be gone already (its guard then finds nothing to remove).
            let _ = p.tx.send(Err(refused()));
        }
    }

    fn on_datagram(&self, datagram: Bytes, from: SocketAddr) {
        let len = datagram.len();
        let mut reader = Reader::new(datagram);
        let envelope = match Envelope::decode(&mut reader) {
            Ok(e) => e,
            Err(e) => {
                debug!(%from, len, error = %e, "dropped udp datagram: no envelope");
                return;
            }
        };
        let fragmented = envelope.message_length as usize > MAX_FRAGMENT_PAYLOAD
            || envelope.sequence_number != 0;
        if fragmented {
            self.on_fragment(envelope, reader.rest(), from);
            return;
        }
        let id = envelope.request_id;
        let (limits, token, session) = {
            let mut t = self.lock();
            match self.acceptable(&t, id, from) {
                Some(p) => (p.limits, p.token, p.session.clone()),
                None => {
                    if !t.map.contains_key(&id) && t.loss.unmatched(from, id, Instant::now()) {
                        debug!(%from, request_id = id, "answer to a udp request presumed lost: the server's reorder window widens");
                    }
                    return;
                }
            }
        };
        // Decoded outside the lock (callers keep registering meanwhile), from the envelope
        // already read.
        let answer = match open_message(session.as_deref(), envelope, reader.rest(), &limits) {
            Ok(m) => m,
            Err(e) => {
                debug!(%from, request_id = id, error = %e, "dropped undecodable udp datagram");
                return;
            }
        };
        if !answer.is_response() {
            debug!(%from, request_id = id, "dropped udp datagram: not a response");
            return;
        }
        let mut t = self.lock();
        if !t.map.get(&id).is_some_and(|p| p.token == token) {
            // Presumed lost while it was being decoded.
            t.loss.unmatched(from, id, Instant::now());
        } else {
            if let Some((p, srtt)) = t.answered(id) {
                drop(t);
                // The caller may be gone already (its guard then finds nothing to remove).
                let _ = p.tx.send(Ok((answer, srtt)));
            }
        }
    }

    /// The pending entry for `id` if it was sent to `from`; logs why not otherwise.
    fn acceptable<'t>(&self, t: &'t Table, id: u32, from: SocketAddr) -> Option<&'t Pending> {
        match t.map.get(&id) {
            None => {
                debug!(%from, request_id = id, "dropped udp datagram: unknown request id");
                None
            }
            Some(p) if !same_peer(p.peer, from) => {
                debug!(%from, expected = %p.peer, request_id = id, "dropped udp datagram: wrong source");
                None
            }
            Some(p) => Some(p),
        }
    }

    /// One datagram of a multi-datagram answer (`payload`: what follows its envelope), fed
    /// to the pending entry's [`Collector`](crate::wire::Collector), which applies the reassembly rule (a misfit that
    /// is valid on its own restarts collection, newest wins; a datagram invalid on its own is
    /// dropped and changes nothing). This adds the socket's memory budget: a datagram that
    /// would start an answer larger than the budget left is dropped too (the retransmission
    /// gets another chance).
    fn on_fragment(&self, envelope: Envelope, payload: Bytes, from: SocketAddr) {
        let id = envelope.request_id;
        let mut guard = self.lock();
        if self.acceptable(&guard, id, from).is_none() {
            if !guard.map.contains_key(&id) {
                guard.loss.unmatched(from, id, Instant::now());
            }
            return;
        }
        let t = &mut *guard;
        let Some(p) = t.map.get_mut(&id) else {
            return;
        };
        let held = p.partial.held_bytes();
        // The budget less what the other entries hold: the answer this one collects would be
        // replaced by one that the datagram starts.
        let room = self
            .config
            .max_reassembly_bytes
            .saturating_sub(t.reassembly_bytes.saturating_sub(held));
        let pushed = p.partial.push(envelope, payload, &p.limits, room);
        t.reassembly_bytes = t
            .reassembly_bytes
            .saturating_sub(held)
            .saturating_add(p.partial.held_bytes());
        let (envelope, message) = match pushed {
            Ok(Collected::Held) => return,
            Ok(Collected::Restarted(e)) => {
                debug!(%from, request_id = id, error = %e, "another udp answer; reassembly restarts");
                return;
            }
            Ok(Collected::Complete { envelope, message }) => (envelope, message),
            Err(CollectError::NoRoom { need, room }) => {
                debug!(%from, request_id = id, need, budget_left = room, "dropped udp fragment: reassembly budget exhausted");
                return;
            }
            Err(CollectError::Invalid(e)) => {
                debug!(%from, request_id = id, error = %e, "dropped udp fragment");
                return;
            }
        };
        match open_message(p.session.as_deref(), envelope, message, &p.limits) {
            Ok(answer) if answer.is_response() => {
                if let Some((p, srtt)) = t.answered(id) {
                    drop(guard);
                    let _ = p.tx.send(Ok((answer, srtt)));
                }
            }
            Ok(_) => {
                debug!(%from, request_id = id, "dropped reassembled udp message: not a response")
            }
            Err(e) => {
                debug!(%from, request_id = id, error = %e, "dropped undecodable reassembled udp message")
            }
        }
    }
}
