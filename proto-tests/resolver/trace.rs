//! The trace of a resolution the overall deadline ended: every request sent is in the attempts
//! returned with the error, including those made inside shared (single-flight) work and those
//! still running when the deadline passed.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::transport::TransportKind;
use handle_resolver::{Attempt, AttemptOutcome, Query, ResolveError};

use super::mock::{addr, Reply};
use super::world::World;

/// Every logged request has its own hop (same server and transport).
fn assert_every_request_traced(w: &World, hops: &[Attempt]) {
    let sent = w.net.log();
    assert_eq!(
        hops.len(),
        sent.len(),
        "sent {} requests, traced {}:\n{}",
        sent.len(),
        hops.len(),
        hops.iter().map(|h| format!("{h}\n")).collect::<String>()
    );
    let mut left: Vec<&Attempt> = hops.iter().collect();
    for s in &sent {
        let i = left
            .iter()
            .position(|h| h.server == Some(s.to) && h.transport == s.kind)
            .unwrap_or_else(|| panic!("no hop for the request to {} {:?}", s.to, s.kind));
        left.remove(i);
    }
    let mut numbers: Vec<u32> = hops.iter().map(|h| h.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=hops.len() as u32).collect::<Vec<_>>());
}

#[tokio::test(start_paused = true)]
async fn a_silent_service_leaves_every_attempt_in_the_trace_at_the_deadline() {
    let w = World::new(None);
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, Arc::new(|_, _| Reply::Silent));
        }
    }
    let deadline = Duration::from_secs(8);
    let r = w.builder().timeout(deadline).build().unwrap();
    let (out, hops) = r.resolve_traced("20.500.1/x", &Query::default()).await;
    assert!(matches!(out, Err(ResolveError::Timeout { .. })), "{out:?}");
    assert_every_request_traced(&w, &hops);
    // The root answered both service lookups (inside shared work).
    let root_answers = hops
        .iter()
        .filter(|h| h.server == Some(w.root) && h.outcome == AttemptOutcome::Response(1.into()))
        .count();
    assert_eq!(root_answers, 2, "{hops:#?}");
    // UDP to the silent sites gave up (retransmissions done), then TCP was still waiting
    // when the deadline passed: those show how long they had run, ending at the deadline.
    assert!(hops.iter().any(|h| h.transport == TransportKind::Udp
        && matches!(
            &h.outcome,
            AttemptOutcome::Failed(handle_resolver::transport::TransportError::Timeout)
        )));
    let running: Vec<&Attempt> = hops
        .iter()
        .filter(|h| h.transport == TransportKind::Tcp)
        .collect();
    assert!(!running.is_empty(), "{hops:#?}");
    for h in running {
        assert!(matches!(&h.outcome, AttemptOutcome::DeadlinePassed), "{h}");
        assert!(h.rtt > Duration::ZERO && h.rtt < deadline, "{h}");
    }
    assert_eq!(w.net.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_silent_fixed_server_is_traced_at_the_deadline() {
    let w = World::new(None);
    w.net.serve(addr(30), Arc::new(|_, _| Reply::Silent));
    let r = w
        .builder()
        .server(addr(30))
        .timeout(Duration::from_secs(8))
        .build()
        .unwrap();
    let (out, hops) = r.resolve_traced("20.500.1/x", &Query::default()).await;
    assert!(matches!(out, Err(ResolveError::Timeout { .. })), "{out:?}");
    assert_every_request_traced(&w, &hops);
    assert_eq!(hops.len(), 2, "{hops:#?}");
}

/// Attempts are numbered in the order they started and listed in the order they ended,
/// whether the query ran as shared work (answer cache on) or in the caller (cache off): a
/// hedged attempt that was still running when a later one won keeps the smaller number.
#[tokio::test(start_paused = true)]
async fn attempts_are_numbered_as_they_started_on_every_path() {
    for cache in [10_000, 0] {
        let w = World::new(None);
        let h = "20.500.1/hedged";
        w.store.insert(h, super::world::urls(h, 1));
        // The primary site is silent: its attempt is overtaken by the mirror's.
        for a in w.servers(0) {
            w.net.serve(a, Arc::new(|_, _| Reply::Silent));
        }
        let r = w.builder().cache_size(cache).build().unwrap();
        let (out, attempts) = r.resolve_traced(h, &Query::new()).await;
        out.unwrap();
        assert_every_request_traced(&w, &attempts);
        let asked: Vec<&Attempt> = attempts.iter().filter(|a| a.handle.as_str() == h).collect();
        let won = asked
            .iter()
            .find(|a| a.outcome == AttemptOutcome::Response(1.into()))
            .expect("an answer");
        let overtaken: Vec<&&Attempt> = asked
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::Cancelled)
            .collect();
        assert!(!overtaken.is_empty(), "cache {cache}: {attempts:#?}");
        for a in overtaken {
            assert!(a.number < won.number, "cache {cache}: {a} after {won}");
        }
        // Listed as they ended: the winner before the attempt it overtook.
        let pos = |x: &Attempt| attempts.iter().position(|a| a == x).unwrap();
        assert!(asked
            .iter()
            .all(|a| pos(a) >= pos(won) || a.number < won.number));
    }
}

/// One cold resolution through the root (the prefix handle, then its service handle) to a
/// service whose servers never answer ends exactly at the caller's deadline, however many
/// stages and shared lookups it went through; its trace names what the deadline cut short.
#[tokio::test(start_paused = true)]
async fn a_cold_resolution_to_a_silent_site_ends_exactly_at_the_callers_deadline() {
    let w = World::new(None);
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, Arc::new(|_, _| Reply::Silent));
        }
    }
    let deadline = Duration::from_millis(7_250);
    let r = w.builder().timeout(deadline).build().unwrap();
    let started = tokio::time::Instant::now();
    let (out, hops) = r.resolve_traced("20.500.1/x", &Query::default()).await;
    assert_eq!(started.elapsed(), deadline, "{out:?}");
    match out {
        Err(ResolveError::Timeout { handle, after, .. }) => {
            assert_eq!(handle.unwrap().as_str(), "20.500.1/x");
            assert_eq!(after, deadline);
        }
        other => panic!("{other:?}"),
    }
    // The root answered the prefix handle and the service handle.
    let asked_at_root: Vec<String> = hops
        .iter()
        .filter(|h| h.server == Some(w.root))
        .map(|h| format!("{} {}", h.handle, h.outcome))
        .collect();
    assert_eq!(asked_at_root.len(), 2, "{hops:#?}");
    // What the deadline cut short: requests for the handle to the site servers, each named
    // with its server, running until the deadline.
    let cut: Vec<&Attempt> = hops
        .iter()
        .filter(|h| h.outcome == AttemptOutcome::DeadlinePassed)
        .collect();
    assert!(!cut.is_empty(), "{hops:#?}");
    let site_servers: Vec<_> = (0..2).flat_map(|s| w.servers(s)).collect();
    for h in cut {
        assert_eq!(h.handle.as_str(), "20.500.1/x", "{h}");
        assert!(site_servers.contains(&h.server.unwrap()), "{h}");
    }
    assert_eq!(w.net.in_flight(), 0);
}
