//! The log filter of the examples that log (`resolve`, `testserver`): `RUST_LOG` as
//! comma-separated `target=level` directives or a bare level (`RUST_LOG=handle_resolver=debug`,
//! `RUST_LOG=warn`), errors only when it is unset or empty.
//!
//! `tracing_subscriber`'s `Targets` reads that form without the regex engine behind
//! `EnvFilter`'s span and field directives, which the examples do not need and which cost the
//! first build a few seconds (BENCHMARKS.md §17).

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

/// Logs to stderr what `RUST_LOG` asks for; a `RUST_LOG` it cannot read is reported on stderr
/// and leaves errors only.
pub fn init() {
    let targets = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.trim().is_empty() => {
            directives.parse::<Targets>().unwrap_or_else(|e| {
                eprintln!("warning: RUST_LOG={directives}: {e}; logging errors only");
                errors_only()
            })
        }
        _ => errors_only(),
    };
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(targets)
        .init();
}

fn errors_only() -> Targets {
    Targets::new().with_default(LevelFilter::ERROR)
}
