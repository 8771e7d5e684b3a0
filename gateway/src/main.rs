//! `handle-gateway --listen 127.0.0.1:8080 --server HOST:PORT` (or `--root HOST:PORT`,
//! `--demo`, `--config FILE`): serves until Ctrl-C or SIGTERM, then lets the requests in
//! flight finish. Prints `listening on http://ADDR` on stdout once it accepts requests.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use handle_gateway::config::{check_file, Args, Settings, Upstream};
use handle_gateway::server;
use handle_gateway::upstream::Resolution;

/// mimalloc rather than glibc's malloc: with glibc a quarter of a warm request's CPU went to
/// the allocator and its arena lock; alone, mimalloc took the warm redirect at 64 connections
/// from 29,400 to 37,400 requests/s (alternated wrk runs) and 119,600 to 94,100 instructions
/// a request (BENCHMARKS.md §18).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

async fn run(args: Args) -> Result<(), String> {
    let settings = Settings::from_args(&args).map_err(|e| e.to_string())?;
    let resolution = Arc::new(
        Resolution::start(&settings)
            .await
            .map_err(|e| e.to_string())?,
    );
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|e| format!("--listen {}: {e}", settings.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let tls = match &settings.ops.tls {
        Some(files) => {
            Some(server::tls::acceptor(&files.cert, &files.key).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    // The access log opened and the GeoIP database read before the banner says it serves.
    let ops = Arc::new(server::Ops::new(settings.ops.clone()).map_err(|e| e.to_string())?);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let upstream = match &settings.upstream {
        Upstream::Server(_) => format!("server {}", args.server.as_deref().unwrap_or("(config)")),
        Upstream::Root(_) => format!("root {}", args.root.as_deref().unwrap_or("(config)")),
        Upstream::Demo => {
            "the bundled test network (20.500.1/demo, 20.500.1/alias, 20.500.1/loc)".into()
        }
        _ => "the global root".into(),
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "listening on {scheme}://{addr}, resolving through {upstream}"
        );
        let _ = out.flush();
    }
    if let Some(addr) = settings.ops.metrics_listen {
        let metrics = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("metrics_listen {addr}: {e}"))?;
        let bound = metrics.local_addr().map_err(|e| e.to_string())?;
        let app = server::metrics_router(ops.clone());
        tokio::spawn(async move {
            if let Err(e) = axum::serve(metrics, app).await {
                tracing::error!("metrics_listen {bound}: {e}");
            }
        });
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "metrics on http://{bound}/metrics");
        let _ = out.flush();
    }
    server::serve_listener(listener, tls, resolution, ops, server::shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    if let Some(file) = &args.check_config {
        return match check_file(&args, file)
            .map_err(|e| e.to_string())
            .and_then(|s| {
                // The files the settings name are read as the gateway would read them.
                if let Some(tls) = &s.ops.tls {
                    server::tls::acceptor(&tls.cert, &tls.key).map_err(|e| e.to_string())?;
                }
                if let Some(path) = &s.ops.geoip_db {
                    server::country::CountryDb::open(path).map_err(|e| e.to_string())?;
                }
                Ok(())
            }) {
            Ok(()) => {
                println!("{}: ok", file.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        };
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
