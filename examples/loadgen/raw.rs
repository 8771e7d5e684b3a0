//! `loadgen`'s physical reference: minimal raw loops over the same socket kind as the
//! library, sending pre-encoded requests (request id patched in) and counting the answers
//! without decoding them.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use handle_resolver::wire::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::stats::{join_stats, Latencies, Stats};

/// Encoded requests for `handles`, as the library sends them (all values, default flags).
pub(crate) fn request_messages(handles: &[String]) -> Vec<Message> {
    let expiration = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
        .saturating_add(43_200);
    handles
        .iter()
        .map(|h| Message::resolution_request(h.clone().into_bytes(), vec![], vec![], 1, expiration))
        .collect()
}

/// The same requests, encoded.
pub(crate) fn raw_requests(messages: &[Message]) -> Vec<Vec<u8>> {
    messages
        .iter()
        .map(|m| m.encode().expect("encode request").to_vec())
        .collect()
}

/// Request id of the `seq`-th raw request: never 0 or 0xFFFFFFFF.
pub(crate) fn raw_id(seq: usize) -> u32 {
    (seq as u32 % 0xFFFF_FFF0) + 1
}

/// Raw UDP: one blocking socket, `c` outstanding requests, one new request per answer.
pub(crate) fn raw_udp(server: SocketAddr, requests: &[Vec<u8>], n: usize, c: usize) -> Stats {
    let bind: SocketAddr = if server.is_ipv6() {
        "[::]:0".parse().expect("addr")
    } else {
        "0.0.0.0:0".parse().expect("addr")
    };
    let sock = UdpSocket::bind(bind).expect("bind");
    // The same receive buffer as the library's shared socket.
    let _ = socket2::SockRef::from(&sock).set_recv_buffer_size(4 << 20);
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let mut reqs: Vec<Vec<u8>> = requests.to_vec();
    // sent_at[seq]: when sent; None once answered or given up.
    let mut sent_at: Vec<Option<Instant>> = Vec::with_capacity(n);
    let mut order = std::collections::VecDeque::with_capacity(c);
    let mut in_flight = 0usize;
    let mut s = Stats::default();
    let latencies = Latencies::new();
    let mut buf = vec![0u8; 65_536];
    let send = |seq: usize, reqs: &mut Vec<Vec<u8>>| {
        let k = seq % reqs.len();
        reqs[k][8..12].copy_from_slice(&raw_id(seq).to_be_bytes());
        let _ = sock.send_to(&reqs[k], server);
    };
    while sent_at.len() < n.min(c) {
        let seq = sent_at.len();
        sent_at.push(Some(Instant::now()));
        order.push_back(seq);
        in_flight += 1;
        send(seq, &mut reqs);
    }
    let mut done = 0usize;
    while done < n {
        if let Ok((len, from)) = sock.recv_from(&mut buf) {
            if from == server && len >= 20 {
                let id = u32::from_be_bytes([buf[8], buf[9], buf[10], buf[11]]);
                let seq = id.wrapping_sub(1) as usize;
                if let Some(t) = sent_at.get_mut(seq).and_then(Option::take) {
                    in_flight -= 1;
                    s.ok += 1;
                    done += 1;
                    latencies.record(t);
                }
            }
        }
        // Forget answered requests, give up on the oldest lost ones, refill to `c` in flight.
        while let Some(&seq) = order.front() {
            match sent_at[seq] {
                None => {
                    order.pop_front();
                }
                Some(t) if t.elapsed() > RAW_LOSS_TIMEOUT => {
                    sent_at[seq] = None;
                    in_flight -= 1;
                    s.errors += 1;
                    done += 1;
                    order.pop_front();
                }
                Some(_) => break,
            }
        }
        while in_flight < c && sent_at.len() < n {
            let seq = sent_at.len();
            sent_at.push(Some(Instant::now()));
            order.push_back(seq);
            in_flight += 1;
            send(seq, &mut reqs);
        }
    }
    s.latencies = Some(latencies.take());
    s
}

/// Raw TCP: `c` tasks, one connection per request, the answer read to EOF and counted.
pub(crate) async fn raw_tcp(
    server: SocketAddr,
    requests: Arc<Vec<Vec<u8>>>,
    n: usize,
    c: usize,
) -> Stats {
    let next = Arc::new(AtomicUsize::new(0));
    let latencies = Latencies::new();
    let tasks: Vec<_> = (0..c)
        .map(|_| {
            let (requests, next) = (requests.clone(), next.clone());
            let latencies = latencies.clone();
            tokio::spawn(async move {
                let mut s = Stats::default();
                let mut req = Vec::new();
                let mut answer = Vec::with_capacity(4096);
                loop {
                    let seq = next.fetch_add(1, Ordering::Relaxed);
                    if seq >= n {
                        return s;
                    }
                    req.clear();
                    req.extend_from_slice(&requests[seq % requests.len()]);
                    req[8..12].copy_from_slice(&raw_id(seq).to_be_bytes());
                    answer.clear();
                    let t0 = Instant::now();
                    let ok = async {
                        let mut conn = TcpStream::connect(server).await?;
                        conn.set_nodelay(true)?;
                        conn.write_all(&req).await?;
                        conn.read_to_end(&mut answer).await
                    }
                    .await;
                    match ok {
                        Ok(len) if len >= 20 => {
                            s.ok += 1;
                            latencies.record(t0);
                        }
                        _ => s.errors += 1,
                    }
                }
            })
        })
        .collect();
    join_stats(tasks, &latencies).await
}

/// An outstanding raw request older than this counts as lost (the library's first
/// retransmission comes after the same wait).
pub(crate) const RAW_LOSS_TIMEOUT: Duration = Duration::from_millis(500);
