//! Hedging, transport fallback, the overall deadline and cancellation, on the paused clock.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::transport::{TransportError, TransportKind};
use handle_resolver::{AttemptOutcome, Query, ResolveError};
use tokio::time::Instant;

use super::mock::{addr, store_server, Reply};
use super::world::{urls, World};

#[tokio::test(start_paused = true)]
async fn silent_hashed_server_costs_less_than_a_second() {
    let mut asked_silent_first = 0;
    for seed in 0..12u64 {
        let w = World::new(None);
        let h = format!("20.500.1/silent{seed}");
        w.store.insert(&h, urls(&h, 3));
        let silent = w.hashed(0, &h);
        w.net.serve(silent, Arc::new(|_, _| Reply::Silent));
        let r = w.builder().rng_seed(seed).build().unwrap();
        // Warm the service cache so only the handle's own resolution is timed.
        r.resolve("20.500.1/warm").await.ok();
        let t0 = Instant::now();
        let rec = r.resolve(h.as_str()).await.unwrap();
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(1), "seed {seed}: {took:?}");
        assert_eq!(rec.source.server, Some(w.hashed(1, &h)));
        assert_eq!(rec.values, urls(&h, 3));
        if rec.attempts.iter().any(|x| x.server == Some(silent)) {
            asked_silent_first += 1;
            // The silent attempt was cancelled when the other site answered.
            assert!(rec
                .attempts
                .iter()
                .any(|x| x.server == Some(silent) && x.outcome == AttemptOutcome::Cancelled));
            assert!(took >= Duration::from_millis(50), "{took:?}");
        }
        assert_eq!(w.net.in_flight(), 0, "a losing attempt is still running");
    }
    assert!(
        asked_silent_first > 0,
        "the silent site was never tried first"
    );
}

#[tokio::test(start_paused = true)]
async fn udp_timeout_falls_back_to_tcp_on_the_same_server() {
    let w = World::new(None);
    let h = "20.500.1/tcp";
    w.store.insert(h, urls(h, 2));
    let r = w.builder().server(addr(10)).build().unwrap();
    let tcp_only = store_server(w.store.clone(), None, None);
    w.net.serve(
        addr(10),
        Arc::new(move |req, kind| match kind {
            TransportKind::Udp => Reply::Silent,
            _ => tcp_only(req, kind),
        }),
    );
    let t0 = Instant::now();
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(rec.source.transport, TransportKind::Tcp);
    assert_eq!(rec.source.server, Some(addr(10)));
    // The default UDP schedule (0.5 + 1 + 1.5 s) was waited out first.
    assert!(t0.elapsed() >= Duration::from_secs(3));
    let kinds: Vec<TransportKind> = w.net.log().iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [TransportKind::Udp, TransportKind::Tcp]);
}

#[tokio::test(start_paused = true)]
async fn request_too_big_for_udp_goes_to_tcp_at_once() {
    let w = World::new(None);
    let h = "20.500.1/big";
    w.store.insert(h, urls(h, 1));
    let r = w.builder().server(addr(10)).build().unwrap();
    let tcp = store_server(w.store.clone(), None, None);
    w.net.serve(
        addr(10),
        Arc::new(move |req, kind| match kind {
            TransportKind::Udp => Reply::Fail(TransportError::TooLargeForUdp),
            _ => tcp(req, kind),
        }),
    );
    let t0 = Instant::now();
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(rec.source.transport, TransportKind::Tcp);
    assert!(t0.elapsed() < Duration::from_millis(10));
}

/// A refused UDP port says nothing of TCP (a server may listen on one and not the other):
/// TCP is tried at once, and only when it is refused too does the next site answer.
#[tokio::test(start_paused = true)]
async fn a_server_refusing_udp_and_tcp_moves_to_the_next_site() {
    let w = World::new(None);
    let h = "20.500.1/refused";
    w.store.insert(h, urls(h, 1));
    let refusing = w.hashed(0, h);
    w.net.serve(
        refusing,
        Arc::new(|_, _| {
            Reply::Fail(TransportError::Io(
                std::io::ErrorKind::ConnectionRefused,
                "refused".into(),
            ))
        }),
    );
    let t0 = Instant::now();
    let rec = w.resolver().resolve(h).await.unwrap();
    assert_eq!(rec.source.server, Some(w.hashed(1, h)));
    assert_eq!(rec.source.transport, TransportKind::Udp);
    let asked: Vec<TransportKind> = w
        .net
        .log()
        .iter()
        .filter(|s| s.to == refusing)
        .map(|s| s.kind)
        .collect();
    // Unless the hedge to the other site answered first.
    assert!(
        asked.is_empty() || asked == [TransportKind::Udp, TransportKind::Tcp],
        "{asked:?}"
    );
    assert!(t0.elapsed() < Duration::from_millis(10));
}

#[tokio::test(start_paused = true)]
async fn everything_silent_ends_at_the_overall_deadline_with_nothing_left_running() {
    let w = World::new(None);
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, Arc::new(|_, _| Reply::Silent));
        }
    }
    let r = w.builder().timeout(Duration::from_secs(2)).build().unwrap();
    let t0 = Instant::now();
    let e = r.resolve("20.500.1/x").await.unwrap_err();
    assert!(
        matches!(&e, ResolveError::Timeout { handle: Some(handle), after, .. } if handle.as_str() == "20.500.1/x" && *after == Duration::from_secs(2)),
        "{e}"
    );
    assert_eq!(e.to_string(), "20.500.1/x: no answer within 2 s");
    assert_eq!(t0.elapsed(), Duration::from_secs(2));
    assert_eq!(w.net.in_flight(), 0);
    // With a long deadline every site and transport is tried, then the transport error.
    let r = w
        .builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let e = r.resolve("20.500.1/y").await.unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Transport {
                error: TransportError::Timeout,
                ..
            }
        ),
        "{e}"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_cancels_every_attempt() {
    let w = World::new(None);
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, Arc::new(|_, _| Reply::Silent));
        }
    }
    let r = w.resolver();
    let out = tokio::time::timeout(Duration::from_millis(700), r.resolve("20.500.1/x")).await;
    assert!(out.is_err());
    assert!(
        w.net.total() >= 3,
        "hedging should have started a second site"
    );
    assert_eq!(w.net.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn slow_sites_are_avoided_once_measured() {
    let w = World::new(None);
    for (i, a) in w.servers(0).into_iter().enumerate() {
        let inner = store_server(w.store.clone(), Some((w.sites[0].clone(), i)), None);
        w.net.serve(
            a,
            Arc::new(move |req, kind| match inner(req, kind) {
                Reply::Answer(m) => Reply::After(Duration::from_millis(300), m),
                other => other,
            }),
        );
    }
    let r = w
        .builder()
        .hedge_delay(Duration::from_secs(5), Duration::from_secs(5))
        .build()
        .unwrap();
    for i in 0..4 {
        let h = format!("20.500.1/warm{i}");
        w.store.insert(&h, urls(&h, 1));
        r.resolve(h.as_str()).await.unwrap();
    }
    // Every server is known by now; the fast site wins the order from here on.
    let mut fast = 0;
    for i in 0..20 {
        let h = format!("20.500.1/m{i}");
        w.store.insert(&h, urls(&h, 1));
        let rec = r.resolve_with(h.as_str(), &Query::default()).await.unwrap();
        if w.servers(1).contains(&rec.source.server.unwrap()) {
            fast += 1;
        }
    }
    assert!(fast >= 16, "fast site chosen {fast}/20 times");
}

#[tokio::test(start_paused = true)]
async fn resolve_many_yields_in_completion_order_within_its_concurrency() {
    let w = World::new(None);
    let r = w.builder().server(addr(10)).build().unwrap();
    let store = w.store.clone();
    w.net.serve(
        addr(10),
        Arc::new(move |req, kind| {
            // "20.500.1/d<ms>" answers after <ms> milliseconds.
            let h = super::mock::handle_of(req);
            let ms: u64 = h
                .rsplit('d')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            match store_server(store.clone(), None, None)(req, kind) {
                Reply::Answer(m) => Reply::After(Duration::from_millis(ms), m),
                other => other,
            }
        }),
    );
    let ids = ["20.500.1/d300", "20.500.1/d100", "20.500.1/d200"];
    for h in ids {
        w.store.insert(h, urls(h, 1));
    }
    let t0 = Instant::now();
    // Read with its own `next`: no stream trait (and no extra crate) needed.
    let mut results = r.resolve_many(ids, 3);
    let mut out = Vec::new();
    while let Some((id, res)) = results.next().await {
        res.unwrap();
        out.push(id);
    }
    assert_eq!(out, ["20.500.1/d100", "20.500.1/d200", "20.500.1/d300"]);
    assert_eq!(t0.elapsed(), Duration::from_millis(300));
    r.clear_cache();
    // It is a `Stream` too.
    use futures::StreamExt;
    let out: Vec<&str> = r.resolve_many(ids, 1).map(|(id, _)| id).collect().await;
    assert_eq!(out, ids);
}

#[tokio::test(start_paused = true)]
async fn query_sends_one_request_and_returns_the_raw_answer() {
    use handle_resolver::wire::{Message, ResponseCode};
    let w = World::new(None);
    w.store.insert("20.500.1/q", urls("20.500.1/q", 2));
    w.net
        .serve(addr(10), store_server(w.store.clone(), None, None));
    let r = w.resolver();
    let req = Message::resolution_request("20.500.1/q", vec![], vec![], 42, 0);
    let answer = r.send_message(addr(10), &req).await.unwrap();
    assert_eq!(answer.header.response_code, ResponseCode::Success);
    assert_eq!(w.net.total(), 1);
    let missing = Message::resolution_request("20.500.1/none", vec![], vec![], 43, 0);
    let answer = r.send_message(addr(10), &missing).await.unwrap();
    assert_eq!(answer.header.response_code, ResponseCode::HandleNotFound);
}
