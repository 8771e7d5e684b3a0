//! `ResolverBuilder::max_in_flight_per_server`: the user's bound on the requests in flight to
//! one server, over any transport, against the loopback test server whose answers are held
//! back (the `delay` fault), so that every request a client has sent and not yet seen
//! answered is one the server holds: its most held at once is the client's most in flight.
//! (Early loss detection is off: a 150 ms answer from a server that answered in
//! microseconds before would be presumed lost and sent again, a second datagram held for
//! one request, which the bound counts once.)

use std::time::Duration;

use handle_resolver::testing::{Faults, TestNetwork};
use handle_resolver::wire::HandleValue;
use handle_resolver::{Resolver, TransportPreference};

const HANDLES: usize = 24;

/// A network of one site of one server, which holds every answer 150 ms, with `HANDLES`
/// handles. (One site: with two, a hedge to the other site that answers first ends the
/// attempt here, which frees its place while the server still holds the request.)
async fn slow_network() -> TestNetwork {
    let network = TestNetwork::builder()
        .prefixes(["20.500.1"])
        .sites(1)
        .servers_per_site(1)
        .build()
        .await
        .expect("test network");
    for i in 0..HANDLES {
        network.insert(
            format!("20.500.1/{i}"),
            vec![HandleValue::new(
                1,
                "URL",
                format!("https://example.org/{i}"),
            )],
        );
    }
    network.sites[0].set_faults(Faults {
        delay: Duration::from_millis(150),
        ..Faults::default()
    });
    network
}

/// Resolves every handle at once with `resolver`; the site server's most held at once.
async fn most_in_flight(network: &TestNetwork, resolver: &Resolver) -> u64 {
    let server = &network.sites[0].servers[0];
    // The prefix's service information first (one request, not counted).
    resolver
        .resolve("20.500.1/0")
        .await
        .expect("first resolution");
    server.reset_counters();
    let handles: Vec<String> = (0..HANDLES).map(|i| format!("20.500.1/{i}")).collect();
    let all = futures::future::join_all(handles.iter().map(|h| resolver.resolve(h))).await;
    for (h, r) in handles.iter().zip(all) {
        let record = r.unwrap_or_else(|e| panic!("{h}: {e}"));
        assert_eq!(record.values.len(), 1, "{h}");
    }
    server.most_delayed_at_once()
}

#[tokio::test]
async fn requests_to_one_server_stay_within_the_bound() {
    for transport in [TransportPreference::Udp, TransportPreference::Tcp] {
        let network = slow_network().await;
        let bounded = Resolver::builder()
            .root_server(network.root.addr())
            .transport(transport)
            .cache_size(0)
            .loss_detection(false)
            .max_in_flight_per_server(3)
            .build()
            .expect("resolver");
        let most = most_in_flight(&network, &bounded).await;
        assert!(
            (1..=3).contains(&most),
            "{transport:?}: {most} requests held at once with a bound of 3"
        );
        // Without the bound, the same burst reaches the server at once (the UDP limit
        // starts at 32): the bound above is what held it.
        let unbounded = Resolver::builder()
            .root_server(network.root.addr())
            .transport(transport)
            .cache_size(0)
            .loss_detection(false)
            .build()
            .expect("resolver");
        let most = most_in_flight(&network, &unbounded).await;
        assert!(
            most > 3,
            "{transport:?}: only {most} requests held at once without a bound"
        );
    }
}

#[tokio::test]
async fn the_largest_bound_is_taken_as_tokio_allows() {
    let network = TestNetwork::builder()
        .prefixes(["20.500.1"])
        .build()
        .await
        .expect("test network");
    network.insert(
        "20.500.1/x",
        vec![HandleValue::new(1, "URL", "https://example.org/x")],
    );
    // Beyond tokio's semaphore's bound: taken as that bound, not a panic at the first call.
    let resolver = Resolver::builder()
        .root_server(network.root.addr())
        .max_in_flight_per_server(usize::MAX)
        .build()
        .expect("resolver");
    let record = resolver.resolve("20.500.1/x").await.expect("resolves");
    assert_eq!(record.values.len(), 1);
}
