//! `loadgen --failover N`: cold resolutions (a new resolver each, so nothing is learned
//! between them) against a test network of two one-server sites whose primary is silent.

use std::sync::Arc;
use std::time::Instant;

use handle_resolver::testing::{Faults, TestNetwork};
use handle_resolver::transport::NetTransport;
use handle_resolver::wire::HandleValue;
use handle_resolver::Resolver;

/// `n` cold resolutions of one handle holding `values`, on `threads` client threads: the
/// time to the first answer in milliseconds (p50, p99) and the errors.
pub(crate) fn cold_resolutions(
    threads: usize,
    n: usize,
    values: Vec<HandleValue>,
) -> Result<(f64, f64, usize), Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()?;
    rt.block_on(async {
        let net = TestNetwork::builder()
            .sites(2)
            .servers_per_site(1)
            .build()
            .await?;
        net.insert("20.500.1/failover", values);
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
        Ok((at(0.5), at(0.99), errors))
    })
}
