//! The table of pending UDP requests shared by the sending callers and the receive task:
//! one entry per request in flight (its peer, limits, session, the [`Collector`] of a
//! multi-datagram answer, the channel its outcome goes to), the per-socket reassembly byte
//! count, the loss detector, and the guards that remove an entry whatever ends its caller.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use foldhash::HashMap;
use parking_lot::{Mutex, MutexGuard};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::UdpConfig;
use crate::transport::error::TransportError;
use crate::transport::udp_loss::LossDetector;
use crate::wire::{Collector, Limits, Message, SessionKey};

pub(super) type IdMap<V> = HashMap<u32, V>;

/// What a pending request is handed: the answer, or why there will be none (the destination
/// refused the request).
/// What a pending request gets: the answer, with the server's smoothed RTT when the answer
/// was a sample of it (the request was sent once); or why there is none.
pub(super) type Outcome = Result<(Message, Option<Duration>), TransportError>;

/// One request waiting for its answer.
pub(super) struct Pending {
    /// Where the request went: the only address an answer is accepted from (`same_peer`).
    pub(super) peer: SocketAddr,
    /// Distinguishes this entry from a later one that happens to reuse the id.
    pub(super) token: u64,
    pub(super) tx: oneshot::Sender<Outcome>,
    /// Decode limits of this request.
    pub(super) limits: Limits,
    /// The session its answer is opened with.
    pub(super) session: Option<Arc<SessionKey>>,
    /// A multi-datagram answer being collected; its `held_bytes` are counted in the table's
    /// `reassembly_bytes`. One pointer wide while empty (the collector boxes its partial
    /// message): most answers are one datagram, and every pending entry (a table slot per
    /// request in flight) would otherwise carry the partial message's hundred-odd bytes.
    pub(super) partial: Collector,
    /// When it was sent, for a request taking part in early loss detection
    /// ([`ExchangeOptions::udp_loss_detection`](crate::transport::ExchangeOptions::udp_loss_detection)): sent once, so its answer is an RTT sample.
    pub(super) sent_at: Option<Instant>,
}

#[derive(Default)]
pub(super) struct Table {
    pub(super) map: IdMap<Pending>,
    pub(super) reassembly_bytes: usize,
    /// The loss timeouts per server, for early loss detection.
    pub(super) loss: LossDetector,
    /// The token of the last entry registered (counted under the table's lock: one shared
    /// cache line per request instead of two).
    pub(super) last_token: u64,
}

impl Table {
    pub(super) fn remove(&mut self, id: u32) -> Option<Pending> {
        let p = self.map.remove(&id)?;
        self.reassembly_bytes = self.reassembly_bytes.saturating_sub(p.partial.held_bytes());
        Some(p)
    }

    /// Removes the entry of `id`, answered now: with the server's smoothed RTT when the
    /// answer is a sample of it (a request sent once, in early loss detection), which the
    /// loss timeouts learn from in the same step.
    pub(super) fn answered(&mut self, id: u32) -> Option<(Pending, Option<Duration>)> {
        let p = self.remove(id)?;
        let srtt = p
            .sent_at
            .map(|sent_at| self.loss.answered(p.peer, sent_at.elapsed()));
        Some((p, srtt))
    }
}

pub(super) struct Shared {
    pub(super) table: Mutex<Table>,
    pub(super) config: UdpConfig,
    /// Set for good when the receive task has ended.
    pub(super) closed: AtomicBool,
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, Table> {
        // parking_lot: no poisoning (a panic while holding the lock cannot leave the table
        // inconsistent in a way that matters: entries are independent).
        self.table.lock()
    }
}

/// Owned by the receive task: when the task ends, however (runtime shutdown drops it, a panic
/// unwinds it), the demultiplexer is marked closed and every pending entry is dropped, which
/// wakes its caller with an error.
pub(super) struct CloseOnDrop(pub(super) Arc<Shared>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        let mut t = self.0.lock();
        t.map.clear();
        t.reassembly_bytes = 0;
    }
}

/// The error of a caller whose receive task is gone.
pub(super) fn receive_task_stopped() -> TransportError {
    TransportError::Io(
        std::io::ErrorKind::NotConnected,
        "udp receive task stopped (its runtime shut down)".into(),
    )
}

/// The error of a request whose destination refused it (ICMP port unreachable).
pub(super) fn refused() -> TransportError {
    TransportError::Io(
        std::io::ErrorKind::ConnectionRefused,
        "connection refused (udp port unreachable)".into(),
    )
}

/// Removes its pending entry when dropped, whatever ended the caller's future.
pub(super) struct PendingGuard<'a> {
    pub(super) shared: &'a Shared,
    pub(super) id: u32,
    pub(super) token: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let mut t = self.shared.lock();
        if t.map.get(&self.id).is_some_and(|p| p.token == self.token) {
            t.remove(self.id);
        }
    }
}
