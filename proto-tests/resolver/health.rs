//! What the resolver learns about servers, on the paused clock: a transport that fails while
//! another answers is put last for that server; a server silent on every transport is not
//! asked for a while (its breaker), so a bulk run against it ends in about one deadline.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::ResolveError;

/// The breaker's first cool-down and its longest (README, "Under stress": 2 s, doubling to
/// 60 s).
const FIRST_COOLDOWN: Duration = Duration::from_secs(2);
const MAX_COOLDOWN: Duration = Duration::from_secs(60);
use handle_resolver::transport::TransportKind;
use tokio::time::Instant;

use super::mock::{store_server, Reply};
use super::world::{urls, World};

/// Every server of the world drops UDP and answers over TCP.
fn udp_dropped_everywhere(w: &World) {
    udp_failing_everywhere(w, || Reply::Silent);
}

/// Every server of the world fails UDP with `udp` and answers over TCP.
fn udp_failing_everywhere(w: &World, udp: fn() -> Reply) {
    let mut servers = vec![w.root];
    servers.extend(w.servers(0));
    servers.extend(w.servers(1));
    for s in servers {
        let store = if s == w.root {
            w.root_store.clone()
        } else {
            w.store.clone()
        };
        let site = if s == w.root {
            None
        } else {
            let n = usize::from(!w.servers(0).contains(&s));
            let i = w.servers(n).iter().position(|x| *x == s).unwrap();
            Some((w.sites[n].clone(), i))
        };
        let tcp = store_server(store, site, None);
        w.net.serve(
            s,
            Arc::new(move |req, kind| match kind {
                TransportKind::Udp => udp(),
                _ => tcp(req, kind),
            }),
        );
    }
}

#[tokio::test(start_paused = true)]
async fn udp_that_times_out_while_tcp_answers_is_learned() {
    let w = World::new(None);
    udp_dropped_everywhere(&w);
    for i in 0..200 {
        let h = format!("20.500.1/{i}");
        w.store.insert(&h, urls(&h, 1));
    }
    let r = w.builder().build().unwrap();
    // The first resolution waits out UDP (3 s of retransmissions) at each server it meets.
    let t0 = Instant::now();
    let first = r.resolve("20.500.1/0").await.unwrap();
    assert!(t0.elapsed() >= Duration::from_secs(3));
    assert_eq!(first.source.transport, TransportKind::Tcp);
    // 199 more at 16 at once: the servers met go to TCP first; those not met yet (other
    // servers of the sites) are learned on their first request. Far below 3 s each.
    let t0 = Instant::now();
    let ids: Vec<String> = (1..200).map(|i| format!("20.500.1/{i}")).collect();
    let mut results = r.resolve_many(ids, 16);
    let mut udp_attempts = 0;
    let mut n = 0;
    while let Some((_, outcome)) = results.next().await {
        let rec = outcome.unwrap();
        assert_eq!(rec.source.transport, TransportKind::Tcp);
        udp_attempts += rec
            .attempts
            .iter()
            .filter(|a| a.transport == TransportKind::Udp)
            .count();
        n += 1;
    }
    assert_eq!(n, 199);
    let took = t0.elapsed();
    // Without learning: 199 / 16 rounds of at least 3 s each, over 36 s.
    assert!(took < Duration::from_secs(8), "{took:?}");
    // At most the first requests to each of the six service servers tried UDP.
    assert!(udp_attempts <= 6 * 16, "{udp_attempts}");
}

/// A refused UDP port (the transport's ICMP port unreachable) moves on to TCP at once, and
/// is learned like a silence: the next requests go to TCP first.
#[tokio::test(start_paused = true)]
async fn udp_refused_while_tcp_answers_moves_on_at_once_and_is_learned() {
    use handle_resolver::transport::TransportError;
    use handle_resolver::AttemptOutcome;
    let w = World::new(None);
    udp_failing_everywhere(&w, || {
        Reply::Fail(TransportError::Io(
            std::io::ErrorKind::ConnectionRefused,
            "connection refused (udp port unreachable)".into(),
        ))
    });
    for i in 0..20 {
        let h = format!("20.500.1/{i}");
        w.store.insert(&h, urls(&h, 1));
    }
    let r = w.builder().build().unwrap();
    let t0 = Instant::now();
    let (first, attempts) = r
        .resolve_traced("20.500.1/0", &handle_resolver::Query::new())
        .await;
    // No retransmission wait: a few round trips of the scripted network.
    assert!(
        t0.elapsed() < Duration::from_millis(100),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(first.unwrap().source.transport, TransportKind::Tcp);
    let udp: Vec<_> = attempts
        .iter()
        .filter(|a| a.transport == TransportKind::Udp)
        .collect();
    assert!(!udp.is_empty());
    for a in &udp {
        assert!(
            matches!(
                &a.outcome,
                AttemptOutcome::Failed(TransportError::Io(
                    std::io::ErrorKind::ConnectionRefused,
                    _
                ))
            ),
            "{a}"
        );
    }
    // Learned: the servers met go to TCP first.
    let before = w.net.log().len();
    for i in 1..20 {
        let rec = r.resolve(format!("20.500.1/{i}").as_str()).await.unwrap();
        assert_eq!(rec.source.transport, TransportKind::Tcp);
    }
    let udp_later = w.net.log()[before..]
        .iter()
        .filter(|s| s.kind == TransportKind::Udp)
        .count();
    // Only servers not met before (the other servers of the sites) try UDP, once each.
    assert!(udp_later <= 6, "{udp_later}");
}

#[tokio::test(start_paused = true)]
async fn a_bulk_run_against_a_silent_root_ends_in_about_one_deadline() {
    let w = World::new(None);
    w.net.serve(w.root, Arc::new(|_, _| Reply::Silent));
    let deadline = Duration::from_secs(10);
    let r = w.builder().timeout(deadline).build().unwrap();
    let ids: Vec<String> = (0..1000).map(|i| format!("20.500.1/{i}")).collect();
    let t0 = Instant::now();
    let mut results = r.resolve_many(ids, 16);
    let (mut timeouts, mut unavailable) = (0, 0);
    while let Some((_, outcome)) = results.next().await {
        match outcome.unwrap_err() {
            ResolveError::Timeout { .. } => timeouts += 1,
            ResolveError::ServerUnavailable { retry_in, .. } => {
                assert!(retry_in <= FIRST_COOLDOWN * 64);
                unavailable += 1;
            }
            e => panic!("unexpected {e}"),
        }
    }
    let took = t0.elapsed();
    assert!(took <= deadline * 2, "{took:?}");
    assert_eq!(timeouts + unavailable, 1000);
    assert!(
        unavailable > 900,
        "{timeouts} timeouts, {unavailable} not asked"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_back_from_silence_is_asked_again_after_the_cool_down() {
    let w = World::new(None);
    let answering = store_server(w.root_store.clone(), None, None);
    w.net.serve(w.root, Arc::new(|_, _| Reply::Silent));
    let r = w
        .builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    for i in 0..3 {
        r.resolve(format!("20.500.1/a{i}").as_str())
            .await
            .unwrap_err();
    }
    let e = r.resolve("20.500.1/b").await.unwrap_err();
    assert!(matches!(e, ResolveError::ServerUnavailable { .. }), "{e}");
    // The root comes back; after the cool-down a probe finds it.
    w.net.serve(w.root, answering);
    w.store.insert("20.500.1/c", urls("20.500.1/c", 1));
    tokio::time::advance(MAX_COOLDOWN).await;
    let rec = r.resolve("20.500.1/c").await.unwrap();
    assert_eq!(rec.values, urls("20.500.1/c", 1));
}

/// RFC 8305 on the paused clock: the root has an IPv6 address too (`alt_addr`), silent; the
/// answer comes from IPv4 one race delay plus one round trip later, and the next request goes
/// to IPv4 at once.
#[tokio::test(start_paused = true)]
async fn a_silent_ipv6_address_costs_the_race_delay_once() {
    use bytes::Bytes;
    // How long the first address family has (README, "Under stress": 300 ms).
    const HAPPY_EYEBALLS_DELAY: Duration = Duration::from_millis(300);
    let w = World::new(None);
    let v6: std::net::SocketAddr = "[::1]:2641".parse().unwrap();
    w.net.serve(v6, Arc::new(|_, _| Reply::Silent));
    let mut root = w.root_site.clone();
    root.attributes
        .push((Bytes::from_static(b"alt_addr"), Bytes::from_static(b"::1")));
    let r = w
        .builder()
        .root_sites([root])
        .cache_size(0)
        .build()
        .unwrap();
    let t0 = Instant::now();
    let rec = r.resolve("0.NA/0.NA").await.unwrap();
    let took = t0.elapsed();
    assert_eq!(rec.source.server, Some(w.root));
    assert!(took >= HAPPY_EYEBALLS_DELAY, "{took:?}");
    assert!(
        took <= HAPPY_EYEBALLS_DELAY + super::mock::RTT * 2,
        "{took:?}"
    );
    let t0 = Instant::now();
    r.resolve("0.NA/0.NA").await.unwrap();
    assert!(t0.elapsed() <= super::mock::RTT * 2, "{:?}", t0.elapsed());
    assert_eq!(w.net.count_to(v6), 1);
}

/// A black-holed root (it takes requests and never answers, UDP or TCP) at a 2 s deadline,
/// 16 in flight: every identifier ends within its deadline (+50 ms), and once the first round
/// has shown the root silent, the rest fail at once (6-20 s for 1,000 before: a call given up
/// on at its deadline taught the breaker nothing, and the shared lookup lived on as long as
/// new calls joined it).
#[tokio::test(start_paused = true)]
async fn a_black_holed_root_ends_every_identifier_within_its_deadline() {
    use futures::StreamExt;
    let w = World::new(None);
    w.net.serve(w.root, Arc::new(|_, _| Reply::Silent));
    let deadline = Duration::from_secs(2);
    let r = w.builder().timeout(deadline).build().unwrap();
    let t0 = Instant::now();
    let mut ends = futures::stream::iter(0..1000)
        .map(|i| {
            let r = r.clone();
            async move {
                // The first round starts a millisecond apart, as a real run does: each later
                // call joins the service lookup its predecessors share, still in flight.
                if i < 16 {
                    tokio::time::sleep(Duration::from_millis(i)).await;
                }
                let started = Instant::now();
                let handle = format!("20.500.1/{i}");
                let outcome = r.resolve(handle.as_str()).await;
                (started.elapsed(), handle, outcome)
            }
        })
        .buffer_unordered(16);
    let mut longest = Duration::ZERO;
    let mut timeouts = 0;
    while let Some((took, asked, outcome)) = ends.next().await {
        longest = longest.max(took);
        match outcome.unwrap_err() {
            // Most of the first round joined the service lookup another call started and
            // timed out with it: the error still names the handle each call asked for.
            ResolveError::Timeout { handle, .. } => {
                assert_eq!(handle.as_ref().map(|h| h.as_str()), Some(asked.as_str()));
                timeouts += 1
            }
            ResolveError::ServerUnavailable { .. } => {}
            e => panic!("unexpected {e}"),
        }
    }
    let took = t0.elapsed();
    eprintln!("longest {longest:?}, all {took:?}, {timeouts} timeouts");
    assert!(
        longest <= deadline + Duration::from_millis(50),
        "{longest:?}"
    );
    assert!(took <= deadline * 2, "{took:?}");
    assert!(timeouts <= 32, "{timeouts} timeouts");
}
