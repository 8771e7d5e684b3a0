//! `loadgen`: loopback load generator. Resolves N handles with C requests in flight through the
//! public library API (a [`Resolver`] in single-server mode, cache off), and, in the same run,
//! the **physical reference**: a minimal raw loop over the same socket kind that sends
//! pre-encoded requests (request id patched in) and counts the answers without decoding them.
//! Prints one line per run: transport, C, N, resolutions/s, p50, p99, max, errors, and the
//! ratio library / raw.
//!
//! ```text
//! cargo run --release --example loadgen -- --transport udp,tcp --concurrency 1,16,256 --n 20000
//! cargo run --release --example loadgen -- --server 127.0.0.1:2641 --handle 20.500.1/1
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

#[path = "loadgen/failover.rs"]
mod failover;
#[path = "loadgen/raw.rs"]
mod raw;
#[path = "loadgen/stats.rs"]
mod stats;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use handle_resolver::testing::{Store, TestServer, TestServerConfig};
use handle_resolver::transport::{Exchange, ExchangeOptions, NetTransport, TransportKind};
use handle_resolver::wire::{HandleValue, Message};
use handle_resolver::{Resolver, TransportPreference};
use serde_json::json;
use tokio::runtime::Runtime;

use raw::{raw_requests, raw_tcp, raw_udp, request_messages};
use stats::{join_stats, measured, median_of, rss_kb, Latencies, RssSampler, Stats};

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
    let (p50, p99, errors) = failover::cold_resolutions(args.client_threads, n, values_for(0))?;
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
