//! Resolver tests: the policy on tokio's paused clock with a scripted exchange (`mock`), the
//! capture replay, and the whole stack against the loopback test server.

mod blocking;
mod cache;
mod cancel;
mod certified;
mod chain;
mod cli;
mod cli_bulk;
#[cfg(feature = "testing")]
mod cli_location;
mod cordra_case;
mod early_loss;
mod first_hop;
mod flight;
mod health;
mod hedge;
mod http;
mod ipv6;
mod loopback;
mod mock;
mod negative_ttl;
mod per_server;
mod proxy;
mod referrals;
mod refresh;
// Only Linux reports a refused datagram on an unconnected socket (the error queue).
#[cfg(any(target_os = "linux", target_os = "android"))]
mod refused;
mod replay;
mod rtt;
mod trace;
mod trusted_root;
mod urn;
mod world;
