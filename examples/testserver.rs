//! Serves a JSON file of handles on 127.0.0.1 over UDP and TCP (the same port), with the
//! loopback test server of `handle_resolver::testing`.
//!
//! ```text
//! cargo run --features testing --example testserver -- --port 2641 fixtures/testserver/handles.json
//! ```
//! The file format is documented in `handle_resolver::testing::json` (and in
//! `fixtures/testserver/README.md`). Values marked `"self_site": true` get this server's own
//! HS_SITE record, so a file that holds `0.NA/0.NA` and `0.NA/<prefix>` that way makes the
//! server its own root: `resolve --root 127.0.0.1:PORT <prefix>/<suffix>` runs the whole chain.
//! Stop with Ctrl-C.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use handle_resolver::testing::{Faults, StoreFile, TestServer, TestServerConfig};

#[derive(Parser, Debug)]
#[command(about = "Loopback Handle System test server")]
struct Args {
    /// JSON file of handles.
    #[arg(default_value = "fixtures/testserver/handles.json")]
    file: PathBuf,
    /// Port for UDP and TCP on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// UDP worker tasks (0 = one per CPU).
    #[arg(long, default_value_t = 0)]
    workers: usize,
    /// Share of UDP requests dropped (0.0 to 1.0).
    #[arg(long, default_value_t = 0.0)]
    drop: f64,
    /// Delay before every answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
    /// Seed of the fault RNG.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let text =
        std::fs::read_to_string(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let file = StoreFile::parse(&text)?;
    let store = Arc::new(file.new_store());
    let mut config = TestServerConfig::new(store.clone());
    config.port = args.port;
    config.udp_workers = args.workers;
    config.seed = args.seed;
    config.faults = Faults {
        drop_ratio: args.drop,
        delay: Duration::from_millis(args.delay_ms),
        ..Faults::default()
    };
    let server = TestServer::start(config).await?;
    file.fill(&store, &server.site_value(1).data)?;
    println!(
        "serving {} handles from {} on {} (UDP and TCP)",
        store.len(),
        args.file.display(),
        server.addr()
    );
    tokio::signal::ctrl_c().await?;
    println!(
        "stopping: {} UDP datagrams, {} TCP requests received",
        server.udp_requests(),
        server.tcp_requests()
    );
    Ok(())
}
