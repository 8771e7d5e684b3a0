//! `handle-gateway --listen 127.0.0.1:8080 --server HOST:PORT` (or `--root HOST:PORT`,
//! `--demo`, `--config FILE`): serves until Ctrl-C or SIGTERM, then lets the requests in
//! flight finish. Prints `listening on http://ADDR` on stdout once it accepts requests.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use handle_gateway::config::{Args, Settings, Upstream};
use handle_gateway::server;
use handle_gateway::upstream::Resolution;

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
            "listening on http://{addr}, resolving through {upstream}"
        );
        let _ = out.flush();
    }
    server::serve(listener, resolution, server::shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
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
