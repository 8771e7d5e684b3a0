//! The UDP side of the test server: worker tasks on the shared socket, fragmented requests
//! collected per client address, answers sent whole or fragmented, and the UDP faults.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, Mutex as AsyncMutex};
use tracing::debug;

use crate::testing::faults::{other_id, patched, Faults};
use crate::testing::patch::{request_id_of, MESSAGE_LENGTH_AT, REQUEST_ID_AT};
use crate::testing::respond::protocol_error;
use crate::wire::{
    fragment, Envelope, Message, Reader, Reassembler, ReassemblerConfig, MAX_DATAGRAM,
    MAX_FRAGMENT_PAYLOAD,
};

use super::state::State;

impl State {
    /// Decodes one request datagram from `peer`; fragments are collected (per client
    /// address) until their message is whole.
    fn decode_udp(&self, datagram: Bytes, peer: SocketAddr) -> Result<Option<Message>, String> {
        let envelope =
            Envelope::decode(&mut Reader::new(datagram.clone())).map_err(|e| e.to_string())?;
        if envelope.message_length as usize <= MAX_FRAGMENT_PAYLOAD && envelope.sequence_number == 0
        {
            return self.decode_request(datagram).map(Some);
        }
        let mut all = self.reassemblers.lock();
        let now = Instant::now();
        if !all.contains_key(&peer) && all.len() >= MAX_REASSEMBLY_PEERS {
            all.retain(|_, r| {
                r.expire(now);
                r.in_progress() > 0
            });
            if all.len() >= MAX_REASSEMBLY_PEERS {
                return Err("too many clients with fragmented requests in progress".into());
            }
        }
        let limits = self.limits;
        let r = all.entry(peer).or_insert_with(|| {
            Reassembler::new(ReassemblerConfig {
                limits,
                ..ReassemblerConfig::default()
            })
        });
        let pushed = r.push(datagram, now).map_err(|e| e.to_string());
        if r.in_progress() == 0 {
            all.remove(&peer);
        }
        pushed
    }
}

/// Most client addresses with fragmented requests in progress at once.
pub(super) const MAX_REASSEMBLY_PEERS: usize = 1024;

pub(super) async fn udp_worker(state: Arc<State>) {
    let mut buf = vec![0u8; 65_536];
    let mut out = BytesMut::with_capacity(8192);
    loop {
        if let Some((datagram, peer)) = receive(&state, &mut buf).await {
            serve_datagram(&state, datagram, peer, &mut out).await;
        }
    }
}

/// With a capacity (the overload model): one task receives, into a queue of `capacity`
/// datagrams; a datagram that finds it full is dropped, as a full receive buffer drops it.
pub(super) async fn udp_receiver(state: Arc<State>, queue: mpsc::Sender<(Bytes, SocketAddr)>) {
    let mut buf = vec![0u8; 65_536];
    loop {
        if let Some(item) = receive(&state, &mut buf).await {
            if queue.try_send(item).is_err() {
                state.udp_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A worker of the overload model: serves the queue.
pub(super) async fn udp_queue_worker(
    state: Arc<State>,
    queue: Arc<AsyncMutex<mpsc::Receiver<(Bytes, SocketAddr)>>>,
) {
    let mut out = BytesMut::with_capacity(8192);
    loop {
        let item = queue.lock().await.recv().await;
        let Some((datagram, peer)) = item else { return };
        serve_datagram(&state, datagram, peer, &mut out).await;
    }
}

/// One datagram from the socket, counted; `None` when a fault drops it (or on a receive
/// error).
pub(super) async fn receive(state: &State, buf: &mut [u8]) -> Option<(Bytes, SocketAddr)> {
    let (n, peer) = match state.udp.recv_from(buf).await {
        Ok(x) => x,
        Err(e) => {
            debug!(error = %e, "test server udp receive error");
            tokio::task::yield_now().await;
            return None;
        }
    };
    state.udp_requests.fetch_add(1, Ordering::Relaxed);
    if let Some(f) = &state.faults.current() {
        if f.block_udp || state.faults.chance(f.drop_ratio) {
            state.udp_dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
    }
    Some((
        Bytes::copy_from_slice(buf.get(..n).unwrap_or_default()),
        peer,
    ))
}

/// Answers one request datagram (faults applied).
pub(super) async fn serve_datagram(
    state: &Arc<State>,
    datagram: Bytes,
    peer: SocketAddr,
    out: &mut BytesMut,
) {
    out.clear();
    match state.decode_udp(datagram, peer) {
        Ok(Some(request)) => state.respond(&request, out),
        Ok(None) => return,
        Err(e) => protocol_error(&e, out),
    }
    if out.is_empty() {
        return;
    }
    match state.faults.current() {
        None => send_answer(&state.udp, out, peer).await,
        Some(f) => {
            let answer = Bytes::copy_from_slice(out);
            let paused = f.paused_until.map_or(Duration::ZERO, |t| {
                t.saturating_duration_since(tokio::time::Instant::now())
            });
            let wait = f.delay.max(paused);
            if wait.is_zero() {
                send_faulty(state, answer, peer, &f).await;
            } else {
                let state = state.clone();
                tokio::spawn(async move {
                    let delayed = async {
                        let _held = state.delayed.hold();
                        tokio::time::sleep(wait).await;
                        send_faulty(&state, answer, peer, &f).await;
                    };
                    state.stop.run_until_cancelled(delayed).await;
                });
            }
        }
    }
}

/// Sends an encoded answer: one datagram, or its fragments (PROTOCOL.md §8.1).
pub(super) async fn send_answer(socket: &UdpSocket, answer: &[u8], peer: SocketAddr) {
    if answer.len() <= MAX_DATAGRAM {
        if let Err(e) = socket.send_to(answer, peer).await {
            debug!(error = %e, %peer, "test server send failed");
        }
        return;
    }
    for d in fragment(&Bytes::copy_from_slice(answer)) {
        if let Err(e) = socket.send_to(&d, peer).await {
            debug!(error = %e, %peer, "test server send failed");
        }
    }
}

/// UDP with faults: misleading datagrams first, then the real answer (each datagram of it
/// subject to `drop_answer_ratio`).
pub(super) async fn send_faulty(state: &State, answer: Bytes, peer: SocketAddr, f: &Faults) {
    if f.silent {
        return;
    }
    let udp = &state.udp;
    let send = |d: Bytes, from: Arc<UdpSocket>| async move {
        if let Err(e) = from.send_to(&d, peer).await {
            debug!(error = %e, %peer, "test server send failed");
        }
    };
    if f.garbage {
        send(Bytes::from(state.faults.garbage(40)), udp.clone()).await;
    }
    let id = request_id_of(&answer).unwrap_or(0);
    if f.wrong_request_id {
        for d in fragment(&patched(&answer, REQUEST_ID_AT, other_id(id))) {
            send(d, udp.clone()).await;
        }
    }
    if f.spoof_source {
        for d in fragment(&answer) {
            send(d, state.spoof.clone()).await;
        }
    }
    let real = fragment(&answer);
    if f.truncated_length {
        if let Some(first) = real.first() {
            send(first.slice(..first.len() / 2), udp.clone()).await;
        }
    }
    if f.oversized_length {
        if let Some(first) = real.first() {
            send(patched(first, MESSAGE_LENGTH_AT, 0x7FFF_FFFF), udp.clone()).await;
        }
    }
    for d in real {
        if state.faults.chance(f.drop_answer_ratio) {
            continue;
        }
        send(d, udp.clone()).await;
    }
}
