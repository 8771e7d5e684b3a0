//! The TCP side of the test server: the accept loop and one task per connection (one
//! request, one answer, close), with the TCP faults.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::debug;

use crate::testing::faults::{other_id, patched};
use crate::testing::patch::{request_id_of, MESSAGE_LENGTH_AT, REQUEST_ID_AT};
use crate::testing::respond::protocol_error;
use crate::wire::{Envelope, Reader, ENVELOPE_LEN};

use super::state::State;

pub(super) async fn tcp_accept(state: Arc<State>, listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(tcp_connection(state.clone(), stream));
            }
            Err(e) => {
                debug!(error = %e, "test server accept error");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// Longest a TCP connection may live on the server, whatever the client or the faults do.
const TCP_CONNECTION_LIMIT: Duration = Duration::from_secs(120);

/// One request, one answer, close (as the reference server does, PROTOCOL.md §14.5); a
/// connection that lingers past [`TCP_CONNECTION_LIMIT`] is dropped.
async fn tcp_connection(state: Arc<State>, stream: TcpStream) {
    let stop = state.stop.clone();
    let serve = tokio::time::timeout(TCP_CONNECTION_LIMIT, tcp_serve(state, stream));
    stop.run_until_cancelled(serve).await;
}

async fn tcp_serve(state: Arc<State>, mut stream: TcpStream) {
    if state.faults.current().is_some_and(|f| f.block_tcp) {
        state.tcp_requests.fetch_add(1, Ordering::Relaxed);
        // Closed unread: with data still unread the kernel resets the connection.
        let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
        return;
    }
    let _ = stream.set_nodelay(true);
    let mut head = [0u8; ENVELOPE_LEN];
    if stream.read_exact(&mut head).await.is_err() {
        return;
    }
    let mut out = BytesMut::new();
    let request = match Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(&head))) {
        Ok(env) if (env.message_length as usize) <= state.limits.max_message_length => {
            let mut msg = vec![0u8; ENVELOPE_LEN + env.message_length as usize];
            if let Some(h) = msg.get_mut(..ENVELOPE_LEN) {
                h.copy_from_slice(&head);
            }
            if let Some(rest) = msg.get_mut(ENVELOPE_LEN..) {
                if stream.read_exact(rest).await.is_err() {
                    return;
                }
            }
            state.tcp_requests.fetch_add(1, Ordering::Relaxed);
            state.decode_request(Bytes::from(msg))
        }
        Ok(env) => {
            state.tcp_requests.fetch_add(1, Ordering::Relaxed);
            Err(format!("message length {} too large", env.message_length))
        }
        Err(e) => Err(e.to_string()),
    };
    if let Some(max) = state.faults.current().map(|f| f.process_jitter) {
        let wait = state.faults.jitter(max);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
    match request {
        Ok(request) => state.respond(&request, &mut out),
        Err(e) => protocol_error(&e, &mut out),
    }
    let faults = state.faults.current();
    let mut answer = out.freeze();
    if let Some(f) = &faults {
        if f.silent {
            // Hold the connection until the client gives up.
            let mut sink = [0u8; 256];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
            return;
        }
        if !f.delay.is_zero() {
            let _held = state.delayed.hold();
            tokio::time::sleep(f.delay).await;
        }
        let id = request_id_of(&answer).unwrap_or(0);
        if f.garbage {
            answer = Bytes::from(state.faults.garbage(64));
        } else if f.wrong_request_id {
            answer = patched(&answer, REQUEST_ID_AT, other_id(id));
        } else if f.truncated_length {
            answer = answer.slice(..answer.len() / 2);
        } else if f.oversized_length {
            answer = patched(&answer, MESSAGE_LENGTH_AT, 0x7FFF_FFFF);
        }
        if let Some(pause) = f.slow_tcp {
            for chunk in answer.chunks(16) {
                if stream.write_all(chunk).await.is_err() {
                    return;
                }
                let _ = stream.flush().await;
                tokio::time::sleep(pause).await;
            }
            let _ = stream.shutdown().await;
            return;
        }
    }
    let _ = stream.write_all(&answer).await;
    let _ = stream.shutdown().await;
}
