//! Serves a JSON file of handles on 127.0.0.1 over UDP and TCP (the same port), and with
//! `--http` over HTTP on a port of its own, with the loopback test server of
//! `handle_resolver::testing`.
//!
//! ```text
//! cargo run --example testserver -- --port 2641 [FILE]
//! ```
//! Without FILE it serves `fixtures/testserver/handles.json`, built into the binary, so that
//! an installed `testserver` started from any folder has its sample handles. The file format
//! is documented in `handle_resolver::testing::json` (and in `fixtures/testserver/README.md`). Values marked `"self_site": true` get this server's own
//! HS_SITE record, so a file that holds `0.NA/0.NA` and `0.NA/<prefix>` that way makes the
//! server its own root: `resolve --root 127.0.0.1:PORT <prefix>/<suffix>` runs the whole chain.
//! `--reference-store FILE` starts from a handles JSON in the reference's own shape instead
//! (the batch samples' starting state):
//! ```text
//! cargo run --example testserver -- --port 2661 \
//!     --reference-store fixtures/genericbatch/server/handles.json --server-admin 300:0.NA/20.500.12345
//! ```
//! `--keep-sites` keeps that file's HS_SITE values as stored (the gateway sets,
//! `fixtures/gateway/handles.json`, are served so: `--reference-store FILE --keep-sites`).
//! Stop with Ctrl-C.

#[path = "common/log.rs"]
mod logging;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use handle_resolver::testing::{
    Faults, ReferenceStore, Store, StoreFile, TestServer, TestServerConfig,
};

#[derive(Parser, Debug)]
#[command(about = "Loopback Handle System test server")]
struct Args {
    /// JSON file of handles [default: the sample handles of fixtures/testserver/handles.json,
    /// built into this binary].
    file: Option<PathBuf>,
    /// Port for UDP and TCP on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// UDP worker tasks (0 = one per CPU).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Share of UDP requests dropped (0.0 to 1.0), to try retransmission.
    #[arg(long, default_value_t = 0.0)]
    drop: f64,
    /// Delay before every answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Seed of the fault RNG.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also serve HTTP on a port of its own (printed at start; `--http-port` fixes it): the
    /// native protocol (`POST /<handle>`), advertised in the server's HS_SITE.
    #[arg(long)]
    http: bool,
    /// Port of the HTTP side (0 = any free port); implies `--http`.
    #[arg(long, value_name = "PORT")]
    http_port: Option<u16>,
    /// Ignore every UDP datagram, as a firewall that drops them.
    #[arg(long)]
    drop_udp: bool,
    /// Reset every native TCP connection at once, as a firewall that rejects them.
    #[arg(long)]
    drop_tcp: bool,
    /// Close the UDP port (a datagram gets ICMP port unreachable); TCP still answers, and
    /// the server's site record still names UDP.
    #[arg(long, conflicts_with = "drop_udp")]
    close_udp: bool,
    /// Answer nothing at all: UDP datagrams are ignored and TCP connections are accepted but
    /// never answered, as an overloaded or firewalled server behaves (a black hole).
    #[arg(long, conflicts_with_all = ["drop_udp", "drop_tcp", "close_udp"])]
    silent: bool,
    /// Start from a handles JSON in the reference's own shape instead of FILE (handle →
    /// `{"handle", "values"}` with REST API values, as `fixtures/genericbatch/server/handles.json`):
    /// the prefixes of its `0.NA/` records are homed, and their HS_SITE values become this
    /// server's own. Suffixes are case-insensitive, as the reference's `case_sensitive = no`.
    /// A `fixtures/gateway/handles.json` (`{"handles": [...]}`) is read as well.
    #[arg(long, value_name = "FILE")]
    reference_store: Option<PathBuf>,
    /// With `--reference-store`: keep the file's HS_SITE values as stored (naming the server
    /// the file was recorded from) instead of replacing them by this server's own, and serve
    /// every `0.NA/` handle as that server, its own root, did; clients then reach this server
    /// with `--server` only.
    #[arg(long, requires = "reference_store")]
    keep_sites: bool,
    /// A server administrator (INDEX:HANDLE, e.g. 300:0.NA/20.500.12345): may home and unhome
    /// prefixes and change every handle. Repeatable.
    #[arg(long, value_name = "INDEX:HANDLE")]
    server_admin: Vec<String>,
    /// Also serve on [::1] at the same port (UDP and TCP), named in the server's HS_SITE by
    /// an `alt_addr` attribute, so that resolvers race the two families.
    #[arg(long)]
    ipv6: bool,
}

/// The sample handles served when no FILE is given: the repository's file as it was when
/// this binary was built, so that the server finds them from any folder.
const SAMPLE_FILE: &str = include_str!("../fixtures/testserver/handles.json");

/// The name the banner and messages give the built-in sample file.
const SAMPLE_NAME: &str = "fixtures/testserver/handles.json (built in)";

/// `println!` that never panics: a server whose banner nobody reads any more (`testserver |
/// head -1`, a closed pipe) keeps serving.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

fn main() -> ExitCode {
    logging::init();
    let args = Args::parse();
    if !(0.0..=1.0).contains(&args.drop) {
        eprintln!(
            "error: --drop {}: expected a share between 0.0 and 1.0",
            args.drop
        );
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(serve(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

async fn serve(args: &Args) -> Result<(), String> {
    let reference = match &args.reference_store {
        None => None,
        Some(path) => {
            let shown = path.display();
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("--reference-store {shown}: cannot read: {e}"))?;
            let file = ReferenceStore::parse(&text)
                .map_err(|e| format!("--reference-store {shown}: {e}"))?;
            Some(file)
        }
    };
    let file_name = match &args.file {
        Some(path) => path.display().to_string(),
        None => SAMPLE_NAME.to_string(),
    };
    let file = if reference.is_some() {
        StoreFile::parse("{}").map_err(|e| e.to_string())?
    } else {
        let text = match &args.file {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| format!("{file_name}: cannot read: {e}"))?,
            None => SAMPLE_FILE.to_string(),
        };
        StoreFile::parse(&text).map_err(|e| format!("{file_name}: {e}"))?
    };
    let store = Arc::new(if reference.is_some() {
        Store::case_insensitive()
    } else {
        file.new_store()
    });
    for admin in &args.server_admin {
        let (index, handle) = admin
            .split_once(':')
            .and_then(|(i, h)| Some((i.parse::<u32>().ok()?, h)))
            .filter(|(_, h)| !h.is_empty())
            .ok_or_else(|| format!("--server-admin {admin}: expected INDEX:HANDLE"))?;
        store.add_server_admin(index, handle);
    }
    let mut config = TestServerConfig::new(store.clone());
    config.port = args.port;
    config.udp_workers = args.workers;
    config.seed = args.seed;
    config.faults = Faults {
        drop_ratio: args.drop,
        delay: Duration::from_millis(args.delay_ms),
        block_udp: args.drop_udp,
        block_tcp: args.drop_tcp,
        silent: args.silent,
        ..Faults::default()
    };
    config.http = args.http || args.http_port.is_some();
    config.http_port = args.http_port.unwrap_or(0);
    config.udp_closed = args.close_udp;
    let v6_config = args.ipv6.then(|| {
        let mut c = config.clone();
        c.ip = std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST);
        c.http = false;
        c
    });
    let server = TestServer::start(config)
        .await
        .map_err(|e| format!("cannot serve on 127.0.0.1:{}: {e}", args.port))?;
    let _v6 = match v6_config {
        None => None,
        Some(mut c) => {
            c.port = server.addr().port();
            let v6 = TestServer::start(c)
                .await
                .map_err(|e| format!("cannot serve on [::1]:{}: {e}", server.addr().port()))?;
            let mut site = server.site_info();
            site.attributes.push(("alt_addr".into(), "::1".into()));
            server
                .set_site(site.clone(), 0)
                .map_err(|e| e.to_string())?;
            v6.set_site(site, 0).map_err(|e| e.to_string())?;
            v6.set_urns(file.urns().map_err(|e| format!("{file_name}: {e}"))?);
            say!("also on {} (UDP and TCP), its alt_addr", v6.addr());
            Some(v6)
        }
    };
    file.fill(&store, &server.site_value(1).data)
        .map_err(|e| format!("{file_name}: {e}"))?;
    let file_name = match (&reference, &args.reference_store) {
        (Some(reference), Some(path)) => {
            if args.keep_sites {
                reference.fill_as_recorded(&store);
            } else {
                reference.fill(&store, Some(&server.site_value(1).data));
            }
            path.display().to_string()
        }
        _ => file_name,
    };
    server.set_urns(file.urns().map_err(|e| format!("{file_name}: {e}"))?);
    match server.http_addr() {
        Some(http) => say!(
            "serving {} handles from {file_name} on {} (UDP and TCP) and http://{http}",
            store.len(),
            server.addr()
        ),
        None if args.close_udp => say!(
            "serving {} handles from {file_name} on {} (TCP; the UDP port is closed)",
            store.len(),
            server.addr()
        ),
        None => say!(
            "serving {} handles from {file_name} on {} (UDP and TCP)",
            store.len(),
            server.addr()
        ),
    }
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| format!("cannot wait for Ctrl-C: {e}"))?;
    say!(
        "stopping: {} UDP datagrams, {} TCP requests, {} HTTP requests received",
        server.udp_requests(),
        server.tcp_requests(),
        server.http_requests()
    );
    Ok(())
}
