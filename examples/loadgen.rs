//! `loadgen`: loopback load generator. Resolves N handles with C requests in flight through the
//! public library API (a [`Resolver`] in single-server mode, cache off), and, in the same run,
//! the **physical reference**: a minimal raw loop over the same socket kind that sends
//! pre-encoded requests (request id patched in) and counts the answers without decoding them.
//! Prints one line per run: transport, C, N, resolutions/s, p50, p99, max, errors, and the
//! ratio library / raw.
//!
//! ```text
//! cargo run --release --features testing --example loadgen -- --transport udp,tcp --concurrency 1,16,256 --n 20000
//! cargo run --release --features testing --example loadgen -- --server 127.0.0.1:2641 --handle 20.500.1/1
//! ```
//! Without `--server` it starts the test server (`handle_resolver::testing`) on 127.0.0.1 in
//! its own multi-threaded runtime, holding `--handles` handles of four values each (one
//! datagram per answer, like the reference capture `udp_resolve_all`). Every measurement
//! prints the client's CPU seconds (user + sys, from `/proc/self/stat`, less the built-in
//! server's threads) per 100,000 resolutions: the client's cost, comparable with any other
//! client run against the same server.
//!
//! Each run alternates raw loop, library (and, with `--transport-layer`, `NetTransport` alone)
//! `--slices` times on shares of N, so that all meet the same background load; with
//! `--runs` > 1 a median line follows (median rate per column, median of the runs' ratios).
//!
//! Raw UDP: one blocking `std` socket on one thread (4 MB receive buffer, as the library's), C requests outstanding, a new one sent
//! for each answer datagram (an outstanding request older than 500 ms counts as an error and
//! is replaced). Raw TCP: C tokio tasks, each connecting, writing the request, reading to
//! EOF (the server closes after each answer, as the reference server does).

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Parser, ValueEnum};
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::{Exchange, ExchangeOptions, NetTransport, TransportKind};
use handle_resolver::wire::{HandleValue, Message};
use handle_resolver::{Resolver, TransportPreference};
use hdrhistogram::Histogram;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

/// `println!` that ends the program quietly when stdout is closed (`loadgen | head -1`)
/// instead of panicking: the figures are for whoever still reads them.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// An outstanding raw request older than this counts as lost (the library's first
/// retransmission comes after the same wait).
const RAW_LOSS_TIMEOUT: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Kind {
    Udp,
    Tcp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Udp => "udp",
            Kind::Tcp => "tcp",
        }
    }
}

/// Loopback load generator: library vs raw sockets.
#[derive(Debug, Parser)]
#[command(name = "loadgen")]
struct Args {
    /// Transports to measure.
    #[arg(long, value_delimiter = ',', default_value = "udp")]
    transport: Vec<Kind>,
    /// Requests in flight (one run each).
    #[arg(long, value_delimiter = ',', default_value = "1,16,256")]
    concurrency: Vec<usize>,
    /// Resolutions per run.
    #[arg(long, default_value_t = 20_000)]
    n: usize,
    /// Repetitions of every (transport, concurrency) pair; with more than one, a median line
    /// follows.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Target this server instead of starting the test server.
    #[arg(long)]
    server: Option<SocketAddr>,
    /// Handles to resolve (repeatable; cycled). Default: the generated ones, or `20.500.1/1`
    /// with `--server`.
    #[arg(long = "handle")]
    handles: Vec<String>,
    /// Handles generated for the built-in server.
    #[arg(long, default_value_t = 1000)]
    generated: usize,
    /// Worker threads of the client runtime (0: a current-thread runtime).
    #[arg(long, default_value_t = 2)]
    client_threads: usize,
    /// Worker threads (and UDP workers) of the built-in server's runtime.
    #[arg(long, default_value_t = 2)]
    server_threads: usize,
    /// Turns per run: the raw loop, the library (and the transport layer) alternate this
    /// many times, each resolving N / slices, so that they meet the same background load.
    #[arg(long, default_value_t = 5)]
    slices: usize,
    /// Skip the raw reference.
    #[arg(long)]
    no_raw: bool,
    /// Skip the library.
    #[arg(long)]
    no_library: bool,
    /// Also measure the transport layer alone (`NetTransport::exchange` with pre-built
    /// requests), to split the library's cost between resolver and transport.
    #[arg(long)]
    transport_layer: bool,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// The built-in server's UDP overload model: at most N requests wait, one more is
    /// dropped (as a full receive buffer drops it).
    #[arg(long, value_name = "N")]
    server_capacity: Option<usize>,
    /// The built-in server waits this long before every answer.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    delay_ms: u64,
    /// Share (0.0 to 1.0) of UDP requests the built-in server drops (a soak with loss).
    #[arg(long, default_value_t = 0.0, value_name = "R")]
    server_drop: f64,
    /// The built-in server stops answering for this long once, halfway through each
    /// measured library turn (it answers what it received when it resumes), to show how the
    /// library recovers from a server's pause.
    #[arg(long, default_value_t = 0, value_name = "MS")]
    server_pause_ms: u64,
    /// Failover instead: a test network whose primary site is silent and whose mirror
    /// answers; N cold resolutions (a new resolver each, so nothing is learned between them),
    /// printing the time to the first answer (p50, p99).
    #[arg(long, value_name = "N")]
    failover: Option<usize>,
}

/// Adds up the counts of the client tasks of one measurement (a task that failed counts as
/// one error), with the latencies they recorded.
async fn join_stats(tasks: Vec<tokio::task::JoinHandle<Stats>>, latencies: &Latencies) -> Stats {
    let mut all = Stats::default();
    for t in tasks {
        match t.await {
            Ok(s) => {
                all.ok += s.ok;
                all.errors += s.errors;
            }
            Err(_) => all.errors += 1,
        }
    }
    all.latencies = Some(latencies.take());
    all
}

/// The latencies of one measurement, in microseconds: one histogram (3 significant digits)
/// that all its client tasks record into, so that the memory they take does not grow with
/// N. (A list of every latency grew by 4 bytes a resolution: 16 MB in a soak of 4 million,
/// which hid whether the library's own memory stays flat.)
#[derive(Clone)]
struct Latencies(Arc<parking_lot::Mutex<Histogram<u64>>>);

impl Latencies {
    fn new() -> Self {
        Self(Arc::new(parking_lot::Mutex::new(empty_histogram())))
    }

    /// Records the time since `start`.
    fn record(&self, start: Instant) {
        let us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.0.lock().saturating_record(us);
    }

    /// What was recorded, leaving an empty histogram.
    fn take(&self) -> Histogram<u64> {
        std::mem::replace(&mut *self.0.lock(), empty_histogram())
    }
}

/// 1 µs to an hour (a longer latency counts as an hour), 3 significant digits (within
/// 0.1 %).
fn empty_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

/// Outcome of one measured run.
#[derive(Debug, Clone, Default)]
struct Stats {
    ok: usize,
    errors: usize,
    elapsed: Duration,
    /// Latencies of the successful requests, microseconds.
    latencies: Option<Histogram<u64>>,
    /// CPU seconds of the client during the run (the process less the built-in server).
    cpu: f64,
}

impl Stats {
    /// Adds another slice of the same measurement.
    fn absorb(&mut self, other: Stats) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.elapsed += other.elapsed;
        self.cpu += other.cpu;
        match (&mut self.latencies, other.latencies) {
            // The same bounds, so adding cannot fall out of range.
            (Some(mine), Some(theirs)) => {
                let _ = mine.add(theirs);
            }
            (mine @ None, theirs) => *mine = theirs,
            (Some(_), None) => {}
        }
    }
    fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    fn pct(&self, p: u32) -> u64 {
        self.latencies
            .as_ref()
            .map_or(0, |h| h.value_at_quantile(f64::from(p) / 100.0))
    }
    fn max(&self) -> u64 {
        self.latencies.as_ref().map_or(0, Histogram::max)
    }
    fn cpu_per_100k(&self) -> f64 {
        self.cpu * 100_000.0 / (self.ok.max(1) as f64)
    }
    fn json(&self, with_cpu: bool) -> serde_json::Value {
        let mut v = json!({
            "resolutions_per_s": self.rate().round(),
            "ok": self.ok,
            "errors": self.errors,
            "seconds": self.elapsed.as_secs_f64(),
            "p50_us": self.pct(50),
            "p99_us": self.pct(99),
            "max_us": self.max(),
        });
        if with_cpu {
            v["cpu_s_per_100k"] = json!(self.cpu_per_100k());
        }
        v
    }
    fn text(&self, with_cpu: bool) -> String {
        let cpu = if with_cpu {
            format!(" cpu {:.2}s/100k", self.cpu_per_100k())
        } else {
            String::new()
        };
        format!(
            "{:>8.0}/s p50 {}us p99 {}us max {}us errors {}{cpu}",
            self.rate(),
            self.pct(50),
            self.pct(99),
            self.max(),
            self.errors
        )
    }
}

/// User + system CPU seconds of the client: the whole process (`/proc/self/stat`, which
/// keeps the time of threads that have ended, such as the raw loop's) less the built-in
/// server's threads (named `testserver`, alive for the whole run, from
/// `/proc/self/task/*/stat`).
fn cpu_seconds() -> f64 {
    let process = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| stat_cpu(&stat).map(|(_, cpu)| cpu))
        .unwrap_or(0.0);
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return process;
    };
    let mut server = 0.0;
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        if let Some((name, cpu)) = stat_cpu(&stat) {
            if name.starts_with("testserver") {
                server += cpu;
            }
        }
    }
    process - server
}

/// A process's or thread's name and user + system CPU seconds, from its `stat` line.
fn stat_cpu(stat: &str) -> Option<(&str, f64)> {
    // `pid (comm) state ...`: the name is between the first '(' and the last ')'.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat.get(open + 1..close)?;
    // Fields 14 and 15 (utime, stime) in clock ticks; USER_HZ is 100 on Linux.
    let f: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    Some((name, (tick(11) + tick(12)) / 100.0))
}

/// Times `work` and fills in the elapsed time and CPU used.
fn measured(work: impl FnOnce() -> Stats) -> Stats {
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let mut s = work();
    s.elapsed = t0.elapsed();
    s.cpu = cpu_seconds() - cpu0;
    s
}

/// Four values, as a typical handle (and the capture `udp_resolve_all`) has.
fn values_for(i: usize) -> Vec<HandleValue> {
    vec![
        HandleValue::new(1, "URL", format!("https://example.org/landing/{i}")),
        HandleValue::new(2, "EMAIL", "support@example.org"),
        HandleValue::new(
            3,
            "DESC",
            format!("Handle {i} served by the handle-resolver load generator"),
        ),
        HandleValue::new(
            100,
            "HS_ADMIN",
            &b"\x0f\xff\x00\x00\x00\x0d0.NA/20.500.1\x00\x00\x01\x2c"[..],
        ),
    ]
}

/// Something to do once, halfway through a run (`--server-pause-ms`: pause the server).
type Halfway = Arc<dyn Fn() + Send + Sync>;

async fn library_run(
    resolver: Resolver,
    handles: Arc<Vec<String>>,
    n: usize,
    c: usize,
    halfway: Option<Halfway>,
) -> Stats {
    let next = Arc::new(AtomicUsize::new(0));
    let latencies = Latencies::new();
    let tasks: Vec<_> = (0..c)
        .map(|_| {
            let (resolver, handles, next) = (resolver.clone(), handles.clone(), next.clone());
            let (halfway, latencies) = (halfway.clone(), latencies.clone());
            tokio::spawn(async move {
                let mut s = Stats::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return s;
                    }
                    if i == n / 2 {
                        if let Some(f) = &halfway {
                            f();
                        }
                    }
                    let h = &handles[i % handles.len()];
                    let t0 = Instant::now();
                    match resolver.resolve(h.as_str()).await {
                        Ok(r) if !r.values.is_empty() => {
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

/// The transport layer alone: `c` tasks calling [`Exchange::exchange`] with pre-built
/// requests (the transport puts in a fresh request id).
async fn transport_run(
    kind: Kind,
    server: SocketAddr,
    requests: Arc<Vec<Message>>,
    n: usize,
    c: usize,
) -> Stats {
    let transport = Arc::new(NetTransport::new());
    let options = Arc::new(ExchangeOptions::default());
    let kind = match kind {
        Kind::Udp => TransportKind::Udp,
        Kind::Tcp => TransportKind::Tcp,
    };
    let next = Arc::new(AtomicUsize::new(0));
    let latencies = Latencies::new();
    let tasks: Vec<_> = (0..c)
        .map(|_| {
            let (transport, options, requests, next) = (
                transport.clone(),
                options.clone(),
                requests.clone(),
                next.clone(),
            );
            let latencies = latencies.clone();
            tokio::spawn(async move {
                let mut s = Stats::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return s;
                    }
                    let request = &requests[i % requests.len()];
                    let t0 = Instant::now();
                    match transport.exchange(server, kind, request, &options).await {
                        Ok(e) if e.message.is_response() => {
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

/// Encoded requests for `handles`, as the library sends them (all values, default flags).
fn request_messages(handles: &[String]) -> Vec<Message> {
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
fn raw_requests(messages: &[Message]) -> Vec<Vec<u8>> {
    messages
        .iter()
        .map(|m| m.encode().expect("encode request").to_vec())
        .collect()
}

/// Request id of the `seq`-th raw request: never 0 or 0xFFFFFFFF.
fn raw_id(seq: usize) -> u32 {
    (seq as u32 % 0xFFFF_FFF0) + 1
}

/// Raw UDP: one blocking socket, `c` outstanding requests, one new request per answer.
fn raw_udp(server: SocketAddr, requests: &[Vec<u8>], n: usize, c: usize) -> Stats {
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
async fn raw_tcp(server: SocketAddr, requests: Arc<Vec<Vec<u8>>>, n: usize, c: usize) -> Stats {
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

/// One (transport, C) measurement. After a short warm-up of each, the raw loop, the library
/// and (if asked) the transport layer take turns, `--slices` times, each resolving its share
/// of N, so that all of them meet the same background load of this shared machine.
#[allow(clippy::too_many_arguments)]
fn measure(
    rt: &Runtime,
    kind: Kind,
    server: SocketAddr,
    handles: &Arc<Vec<String>>,
    requests: &Arc<Vec<Vec<u8>>>,
    messages: &Arc<Vec<Message>>,
    n: usize,
    c: usize,
    args: &Args,
    halfway: Option<Halfway>,
) -> [Option<Stats>; 3] {
    let warm = (n / 10).clamp(c, 5_000);
    let raw_once = |n: usize| match kind {
        Kind::Udp => {
            let requests = requests.clone();
            measured(|| {
                std::thread::spawn(move || raw_udp(server, &requests, n, c))
                    .join()
                    .unwrap_or_default()
            })
        }
        Kind::Tcp => measured(|| rt.block_on(raw_tcp(server, requests.clone(), n, c))),
    };
    let resolver = rt
        .block_on(async {
            Resolver::builder()
                .server(server)
                .transport(match kind {
                    Kind::Udp => TransportPreference::Udp,
                    Kind::Tcp => TransportPreference::Tcp,
                })
                .cache_size(0)
                .service_cache_size(0)
                .build()
        })
        .expect("resolver");
    // The warm-up turn (`halfway` None) has no pause.
    let library_once = |n: usize, halfway: Option<Halfway>| {
        measured(|| {
            rt.block_on(library_run(
                resolver.clone(),
                handles.clone(),
                n,
                c,
                halfway,
            ))
        })
    };
    let transport_once =
        |n: usize| measured(|| rt.block_on(transport_run(kind, server, messages.clone(), n, c)));
    let which = [!args.no_library, args.transport_layer, !args.no_raw];
    let run = |i: usize, n: usize, halfway: Option<Halfway>| match i {
        0 => library_once(n, halfway),
        1 => transport_once(n),
        _ => raw_once(n),
    };
    for (i, on) in which.iter().enumerate() {
        if *on {
            run(i, warm, None);
        }
    }
    let slices = args.slices.clamp(1, n.max(1));
    let mut out: [Option<Stats>; 3] = Default::default();
    for k in 0..slices {
        let share = n / slices + usize::from(k < n % slices);
        for i in [2, 0, 1] {
            if which[i] {
                let s = run(i, share, halfway.clone());
                out[i].get_or_insert_with(Stats::default).absorb(s);
            }
        }
    }
    out
}

fn median_of(runs: &[Stats]) -> Stats {
    let mut v: Vec<&Stats> = runs.iter().collect();
    v.sort_by(|a, b| a.rate().total_cmp(&b.rate()));
    v.get(v.len() / 2).map(|s| (*s).clone()).unwrap_or_default()
}

/// library / raw resolutions per second.
fn ratio_of(stats: &[Option<Stats>; 3]) -> Option<f64> {
    match stats {
        [Some(l), _, Some(r)] => Some(l.rate() / r.rate().max(1e-9)),
        _ => None,
    }
}

/// Prints one line; `ratio` is library / raw (for a median line: the median of the runs'
/// ratios, each taken under the same load).
fn report(
    args: &Args,
    kind: Kind,
    c: usize,
    label: &str,
    stats: [Option<&Stats>; 3],
    ratio: Option<f64>,
) {
    let [lib, transport, raw] = stats;
    // The client's own CPU (the built-in server's threads are left out).
    let with_cpu = true;
    if args.json {
        let line = json!({
            "run": label,
            "transport": kind.name(),
            "concurrency": c,
            "n": args.n,
            "library": lib.map(|s| s.json(with_cpu)),
            "transport_layer": transport.map(|s| s.json(with_cpu)),
            "raw": raw.map(|s| s.json(with_cpu)),
            "ratio": ratio,
        });
        say!("{line}");
        return;
    }
    let lib = lib.map_or_else(|| "-".into(), |s| s.text(with_cpu));
    let transport = transport.map_or_else(String::new, |s| {
        format!(" | transport {}", s.text(with_cpu))
    });
    let raw = raw.map_or_else(|| "-".into(), |s| s.text(with_cpu));
    let ratio = ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}"));
    say!(
        "{label:<6} {} C={c:<3} N={} | library {lib}{transport} | raw {raw} | library/raw {ratio}",
        kind.name(),
        args.n
    );
}

/// `--failover N`: cold resolutions against a network whose primary site is silent.
fn failover(args: &Args, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    use handle_resolver::testing::{Faults, TestNetwork};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads.max(1))
        .enable_all()
        .build()?;
    let (p50, p99, errors) = rt.block_on(async {
        let net = TestNetwork::builder()
            .sites(2)
            .servers_per_site(1)
            .build()
            .await?;
        net.insert("20.500.1/failover", values_for(0));
        net.sites[0].set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
        let transport = NetTransport::new();
        let mut took = Vec::with_capacity(n);
        let mut errors = 0;
        for _ in 0..n {
            let r = Resolver::builder()
                .root_sites([net.root_site()])
                .exchange(Arc::new(transport.clone()))
                .build()?;
            let t0 = Instant::now();
            match r.resolve("20.500.1/failover").await {
                Ok(_) => took.push(t0.elapsed()),
                Err(_) => errors += 1,
            }
        }
        took.sort();
        let at = |q: f64| {
            took.get(((took.len() as f64 * q) as usize).min(took.len().saturating_sub(1)))
                .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
        };
        Ok::<_, Box<dyn std::error::Error>>((at(0.5), at(0.99), errors))
    })?;
    if args.json {
        say!(
            "{}",
            json!({"failover": n, "first_answer_ms_p50": p50, "first_answer_ms_p99": p99, "errors": errors})
        );
    } else {
        say!("failover: {n} cold resolutions, primary site silent: first answer p50 {p50:.1} ms, p99 {p99:.1} ms, errors {errors}");
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if let Some(n) = args.failover {
        return failover(&args, n);
    }
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.server_threads.max(1))
        .thread_name("testserver")
        .enable_all()
        .build()?;
    let (server, handles, _test_server, pause) = match args.server {
        Some(addr) => {
            let handles = if args.handles.is_empty() {
                vec!["20.500.1/1".to_string()]
            } else {
                args.handles.clone()
            };
            if args.server_pause_ms > 0 {
                eprintln!("note: --server-pause-ms applies to the built-in server only");
            }
            (addr, handles, None, None)
        }
        None => {
            let store = Arc::new(Store::new());
            let handles: Vec<String> = if args.handles.is_empty() {
                (0..args.generated.max(1))
                    .map(|i| format!("20.500.1/bench-{i}"))
                    .collect()
            } else {
                args.handles.clone()
            };
            for (i, h) in handles.iter().enumerate() {
                store.insert(h, values_for(i));
            }
            let mut config = TestServerConfig::new(store);
            config.udp_workers = args.server_threads.max(1);
            config.capacity = args.server_capacity;
            config.faults.delay = Duration::from_millis(args.delay_ms);
            config.faults.drop_ratio = args.server_drop.clamp(0.0, 1.0);
            let faults = config.faults.clone();
            let ts = Arc::new(server_rt.block_on(TestServer::start(config))?);
            let pause = (args.server_pause_ms > 0).then(|| {
                let (ts, length) = (ts.clone(), Duration::from_millis(args.server_pause_ms));
                // Numbers the pauses, so that only the last one's end restores the faults.
                let pauses = Arc::new(AtomicUsize::new(0));
                Arc::new(move || {
                    let mut f = faults.clone();
                    f.paused_until = Some(tokio::time::Instant::now() + length);
                    ts.set_faults(f);
                    let this = pauses.fetch_add(1, Ordering::SeqCst) + 1;
                    // Back to the faults asked for once the pause is over (an expired pause
                    // holds nothing, but keeps the server on its slower path for faults).
                    let (ts, faults, pauses) = (ts.clone(), faults.clone(), pauses.clone());
                    std::thread::spawn(move || {
                        std::thread::sleep(length);
                        if pauses.load(Ordering::SeqCst) == this {
                            ts.set_faults(faults);
                        }
                    });
                }) as Halfway
            });
            (ts.addr(), handles, Some(ts), pause)
        }
    };
    let client_rt = match args.client_threads {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .thread_name("client")
            .enable_all()
            .build()?,
    };
    let messages = Arc::new(request_messages(&handles));
    let requests = Arc::new(raw_requests(&messages));
    let handles = Arc::new(handles);
    if !args.json {
        // The state a spawned resolution keeps besides what the library allocates.
        let future_size = client_rt.block_on(async {
            let r = Resolver::builder()
                .server(server)
                .build()
                .expect("resolver");
            let size = std::mem::size_of_val(&r.resolve("0.NA/0.NA"));
            size
        });
        say!("resolve() future: {future_size} bytes");
        say!(
            "server {server} ({}), {} handles, client threads {}",
            if args.server.is_some() {
                "external"
            } else {
                "built-in test server"
            },
            handles.len(),
            args.client_threads
        );
    }
    let rss_start = rss_kb();
    let rss_during = RssSampler::start();
    for &kind in &args.transport {
        for &c in &args.concurrency {
            let c = c.max(1);
            let mut all: [Vec<Stats>; 3] = Default::default();
            let mut ratios = Vec::new();
            for run in 0..args.runs.max(1) {
                let stats = measure(
                    &client_rt,
                    kind,
                    server,
                    &handles,
                    &requests,
                    &messages,
                    args.n,
                    c,
                    &args,
                    pause.clone(),
                );
                let label = format!("run{}", run + 1);
                let ratio = ratio_of(&stats);
                report(
                    &args,
                    kind,
                    c,
                    &label,
                    stats.each_ref().map(Option::as_ref),
                    ratio,
                );
                ratios.extend(ratio);
                for (list, s) in all.iter_mut().zip(stats) {
                    list.extend(s);
                }
            }
            if args.runs > 1 {
                let medians = all.map(|l| (!l.is_empty()).then(|| median_of(&l)));
                ratios.sort_by(f64::total_cmp);
                let ratio = ratios.get(ratios.len() / 2).copied();
                report(
                    &args,
                    kind,
                    c,
                    "median",
                    medians.each_ref().map(Option::as_ref),
                    ratio,
                );
            }
        }
    }
    // Resident memory of the whole process (client and built-in server) before the first
    // run and after the last, and while they ran (at a quarter, half, three quarters and
    // the end of the time, and the highest sample): flat when nothing leaks or grows with
    // the number of requests.
    let rss_end = rss_kb();
    let (quarters, peak) = rss_during.stop();
    if args.json {
        say!(
            "{}",
            json!({"rss_kb_start": rss_start, "rss_kb_end": rss_end,
                   "rss_kb_quarters": quarters, "rss_kb_peak": peak})
        );
    } else {
        let [q1, q2, q3, q4] = quarters;
        say!(
            "resident memory: {rss_start} kB before the runs, {rss_end} kB after; while they ran \
             {q1} / {q2} / {q3} / {q4} kB at 1/4, 1/2, 3/4 and the end of the time, peak {peak} kB"
        );
    }
    Ok(())
}

/// Samples the resident memory every 200 ms on a thread of its own while the runs go on.
struct RssSampler {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl RssSampler {
    fn start() -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                samples.push(rss_kb());
                std::thread::sleep(Duration::from_millis(200));
            }
            samples
        });
        RssSampler { stop, thread }
    }

    /// The samples at 1/4, 1/2, 3/4 and the end of the time, and the highest one.
    fn stop(self) -> ([u64; 4], u64) {
        self.stop.store(true, Ordering::Relaxed);
        let samples = self.thread.join().unwrap_or_default();
        let at = |num: usize| {
            let i = (samples.len() * num / 4).min(samples.len().saturating_sub(1));
            samples.get(i).copied().unwrap_or(0)
        };
        let peak = samples.iter().copied().max().unwrap_or(0);
        ([at(1), at(2), at(3), at(4)], peak)
    }
}

/// Resident set size of this process in kB (`VmRSS` of `/proc/self/status`; 0 if unknown).
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
