//! `--demo`: a whole resolution on a machine with no network. Starts the bundled test
//! network in-process on ephemeral loopback ports: a root server holding `0.NA/0.NA`,
//! `0.NA/20.500.1` (an HS_SERV value naming `0.SERV/20.500.1`) and `0.SERV/20.500.1` (the
//! HS_SITE values of a service of 2 sites of 3 servers each, the server of a handle chosen by
//! the MD5 hash of the handle); the handles below are stored on every site. The run then
//! resolves through it like any other root (`--root`), with the trace.

use handle_resolver::testing::TestNetwork;
use handle_resolver::wire::HandleValue;

use crate::{out, Args};

/// The prefix of the demo service.
pub const PREFIX: &str = "20.500.1";
/// The handle resolved when no identifier is given.
pub const HANDLE: &str = "20.500.1/demo";

/// Starts the network, points `args` at its root (with `--trace`, and [`HANDLE`] when no
/// identifier was given) and says on stderr what it holds. Keep the network while resolving:
/// dropping it stops every server.
pub async fn start(args: &mut Args) -> std::io::Result<TestNetwork> {
    let network = TestNetwork::builder()
        .sites(2)
        .servers_per_site(3)
        .prefixes([PREFIX])
        .build()
        .await?;
    network.insert(
        HANDLE,
        vec![
            HandleValue::new(1, "URL", "https://example.org/demo"),
            HandleValue::new(2, "EMAIL", "demo@example.org"),
            HandleValue::new(3, "DESC", "a handle served by the --demo test network"),
        ],
    );
    network.insert(
        "20.500.1/alias",
        vec![HandleValue::new(1, "HS_ALIAS", HANDLE)],
    );
    let root = network.root.addr();
    if args.ids.is_empty() {
        args.ids.push(HANDLE.to_string());
    }
    args.root = Some(root.to_string());
    args.trace = true;
    out::note(format!(
        "demo: a test network on loopback: root {root}; prefix {PREFIX} served through \
         0.SERV/{PREFIX} by {} sites of {} servers each; handles {HANDLE}, 20.500.1/alias",
        network.sites.len(),
        network.sites.first().map_or(0, |s| s.servers.len()),
    ));
    for (i, site) in network.sites.iter().enumerate() {
        let servers: Vec<String> = site.servers.iter().map(|s| s.addr().to_string()).collect();
        let picked = site
            .server_for(HANDLE.as_bytes())
            .map(|s| s.addr().to_string())
            .unwrap_or_default();
        out::note(format!(
            "demo: site {i} ({}): {}; the hash of {HANDLE} picks {picked}",
            if site.info.primary {
                "primary"
            } else {
                "mirror"
            },
            servers.join(" ")
        ));
    }
    Ok(network)
}
