//! Single flight: concurrent resolutions share one service lookup per prefix (and one
//! resolution of each HS_SERV handle), identical concurrent queries share one request, a
//! dropped first caller does not fail the others, and nothing is kept alive once every caller
//! is gone.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::{Query, ResolveError};

use handle_resolver::wire::ResponseCode;

use super::mock::{
    error_answer, handle_of, referral_answer, site, site_value, store_server, Reply,
};
use super::world::{urls, World, PREFIX};

/// Requests the resolver sent for `handle` (to any server).
fn asked(w: &World, handle: &str) -> usize {
    w.net
        .log()
        .iter()
        .filter(|s| handle_of(&s.request) == handle)
        .count()
}

#[tokio::test(start_paused = true)]
async fn bulk_resolution_of_one_prefix_looks_the_service_up_once() {
    let w = World::new(None);
    let n = 10_000;
    let handles: Vec<String> = (0..n).map(|i| format!("{PREFIX}/bulk-{i}")).collect();
    for h in &handles {
        w.store.insert(h, urls(h, 1));
    }
    let r = w.resolver();
    let mut ok = 0usize;
    let mut results = r.resolve_many(handles.clone(), 256);
    while let Some((h, out)) = results.next().await {
        let rec = out.unwrap_or_else(|e| panic!("{h}: {e}"));
        assert_eq!(rec.values, urls(&h, 1));
        ok += 1;
    }
    assert_eq!(ok, n);
    let prefix_lookups = asked(&w, &format!("0.NA/{PREFIX}"));
    let serv_lookups = asked(&w, &format!("0.SERV/{PREFIX}"));
    eprintln!("bulk {n} @256: 0.NA lookups {prefix_lookups}, HS_SERV lookups {serv_lookups}");
    assert_eq!(prefix_lookups, 1);
    assert_eq!(serv_lookups, 1);
    assert_eq!(w.net.count_to(w.root), 2);
    // One request per handle, nothing more.
    assert_eq!(w.net.total(), n + 2);
    assert_eq!(w.net.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn identical_concurrent_queries_share_one_request() {
    let w = World::new(None);
    let h = format!("{PREFIX}/same");
    w.store.insert(&h, urls(&h, 3));
    let r = w.resolver();
    let outs = futures::future::join_all((0..100).map(|_| r.resolve(h.as_str()))).await;
    for out in outs {
        assert_eq!(out.unwrap().values, urls(&h, 3));
    }
    assert_eq!(asked(&w, &h), 1);
    // Other filters are other queries; differently cased prefixes are the same one.
    let q = Query::new().types(["URL"]);
    let lower = h.to_ascii_lowercase();
    let (a, b, c) = futures::join!(
        r.resolve_with(h.as_str(), &q),
        r.resolve_with(h.as_str(), &q),
        r.resolve(lower.as_str()),
    );
    assert!(a.is_ok() && b.is_ok());
    assert!(c.unwrap().from_cache);
    assert_eq!(asked(&w, &h), 2);
    // Authoritative queries are not shared.
    let at = Query::new().authoritative(true);
    let (a, b) = futures::join!(
        r.resolve_with(h.as_str(), &at),
        r.resolve_with(h.as_str(), &at)
    );
    assert!(a.is_ok() && b.is_ok());
    assert_eq!(asked(&w, &h), 4);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_first_caller_does_not_fail_the_others() {
    let w = World::new(None);
    // The root answers slowly, so the first caller is cancelled while its lookup is out.
    let slow = store_server(w.root_store.clone(), None, None);
    w.net.serve(
        w.root,
        Arc::new(move |req, kind| match slow(req, kind) {
            Reply::Answer(m) => Reply::After(Duration::from_millis(100), m),
            other => other,
        }),
    );
    for i in 0..2 {
        let h = format!("{PREFIX}/c{i}");
        w.store.insert(&h, urls(&h, 1));
    }
    let r = w.resolver();
    let (r1, r2) = (r.clone(), r.clone());
    let first = tokio::spawn(async move { r1.resolve(&format!("{PREFIX}/c0")).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 1);
    let second = tokio::spawn(async move { r2.resolve(&format!("{PREFIX}/c1")).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    let rec = second.await.unwrap().unwrap();
    assert_eq!(rec.values, urls(&format!("{PREFIX}/c1"), 1));
    // The second caller's trace shows the shared lookup it waited for.
    assert!(rec
        .attempts
        .iter()
        .any(|h| h.handle.as_str() == format!("0.NA/{PREFIX}")));
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 1);
    assert_eq!(asked(&w, &format!("0.SERV/{PREFIX}")), 1);
    assert_eq!(w.net.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn shared_work_stops_when_every_caller_is_gone() {
    let w = World::new(None);
    w.net.serve(w.root, Arc::new(|_, _| Reply::Silent));
    let r = w.resolver();
    let h = format!("{PREFIX}/gone");
    w.store.insert(&h, urls(&h, 1));
    let all = futures::future::join_all((0..10).map(|_| r.resolve(h.as_str())));
    assert!(tokio::time::timeout(Duration::from_millis(300), all)
        .await
        .is_err());
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 1);
    // Nothing is left running, and the next resolution starts afresh.
    assert_eq!(w.net.in_flight(), 0);
    w.net
        .serve(w.root, store_server(w.root_store.clone(), None, None));
    assert_eq!(r.resolve(h.as_str()).await.unwrap().values, urls(&h, 1));
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 2);
}

#[tokio::test(start_paused = true)]
async fn a_shared_failure_is_not_cached() {
    let w = World::new(None);
    let good = store_server(w.root_store.clone(), None, None);
    // The root is busy (after a while, so that the callers overlap).
    w.net.serve(
        w.root,
        Arc::new(|req, _| {
            Reply::After(
                Duration::from_millis(20),
                error_answer(req, ResponseCode::ServerBusy),
            )
        }),
    );
    let r = w.resolver();
    let handles: Vec<String> = (0..50).map(|i| format!("{PREFIX}/f{i}")).collect();
    for h in &handles {
        w.store.insert(h, urls(h, 1));
    }
    let outs = futures::future::join_all(handles.iter().map(|h| r.resolve(h.as_str()))).await;
    for out in outs {
        assert!(
            matches!(
                out,
                Err(ResolveError::Server {
                    code: ResponseCode::ServerBusy,
                    ..
                })
            ),
            "{out:?}"
        );
    }
    // One lookup for all 50 callers, and its failure is not remembered.
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 1);
    w.net.serve(w.root, good);
    let rec = r.resolve(handles[0].as_str()).await.unwrap();
    assert!(!rec.from_cache);
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 2);
}

#[tokio::test(start_paused = true)]
async fn identical_queries_go_on_when_the_caller_sending_for_them_is_cancelled() {
    let w = World::new(None);
    let h = format!("{PREFIX}/shared");
    w.store.insert(&h, urls(&h, 2));
    w.store.insert(format!("{PREFIX}/warm"), urls("warm", 1));
    let r = w.resolver();
    // The service lookup is done (and cached) first: only the query itself is shared.
    r.resolve(&format!("{PREFIX}/warm")).await.unwrap();
    // Every server of the prefix answers after 100 ms.
    for (s, info) in w.sites.iter().enumerate() {
        for (i, addr) in w.servers(s).into_iter().enumerate() {
            let answer = store_server(w.store.clone(), Some((info.clone(), i)), None);
            w.net.serve(
                addr,
                Arc::new(move |req, kind| match answer(req, kind) {
                    Reply::Answer(m) => Reply::After(Duration::from_millis(100), m),
                    other => other,
                }),
            );
        }
    }
    let (r1, r2) = (r.clone(), r.clone());
    let (h1, h2) = (h.clone(), h.clone());
    let first = tokio::spawn(async move { r1.resolve(h1.as_str()).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = tokio::spawn(async move { r2.resolve(h2.as_str()).await });
    tokio::time::sleep(Duration::from_millis(10)).await;
    // The second caller waits for the first one's request instead of sending its own.
    assert_eq!(asked(&w, &h), 1);
    first.abort();
    assert!(first.await.unwrap_err().is_cancelled());
    // The request it shared goes on (the second caller drives it): no second request.
    let rec = second.await.unwrap().unwrap();
    assert_eq!(rec.values, urls(&h, 2));
    assert_eq!(asked(&w, &h), 1);
    assert_eq!(w.net.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn with_the_answer_cache_off_every_query_sends_its_own_request() {
    let w = World::new(None);
    let h = format!("{PREFIX}/fresh");
    w.store.insert(&h, urls(&h, 1));
    let r = w.builder().cache_size(0).build().unwrap();
    let outs = futures::future::join_all((0..5).map(|_| r.resolve(h.as_str()))).await;
    for out in outs {
        let rec = out.unwrap();
        assert_eq!(rec.values, urls(&h, 1));
        assert!(!rec.from_cache);
    }
    assert_eq!(asked(&w, &h), 5);
    // The service lookup is still shared (it has its own cache and flights).
    assert_eq!(asked(&w, &format!("0.NA/{PREFIX}")), 1);
}

#[tokio::test(start_paused = true)]
async fn a_follower_reaching_its_deadline_does_not_renumber_the_leaders_attempts() {
    // The follower started first (its alias at the root is slow), so its deadline passes
    // while the leader of the query it follows still waits for the (slow) service lookup.
    // Listing the follower's trace then must not touch the leader's own numbering.
    let w = World::new(None);
    let h = format!("{PREFIX}/x");
    w.store.insert(&h, urls(&h, 1));
    w.root_store.insert(
        "0.TEST/alias",
        vec![handle_resolver::wire::HandleValue::new(
            1,
            "HS_ALIAS",
            h.clone(),
        )],
    );
    let inner = store_server(w.root_store.clone(), None, None);
    let service = format!("0.NA/{PREFIX}");
    w.net.serve(
        w.root,
        Arc::new(move |req, kind| {
            let asked = handle_of(req);
            let delay = if asked == "0.TEST/alias" {
                Some(Duration::from_secs(3))
            } else if asked == service {
                Some(Duration::from_millis(4500))
            } else {
                None
            };
            match (inner(req, kind), delay) {
                (Reply::Answer(m), Some(d)) => Reply::After(d, m),
                (other, _) => other,
            }
        }),
    );
    let r = w
        .builder()
        .follow_aliases(true)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let (r1, r2) = (r.clone(), r.clone());
    let follower =
        tokio::spawn(async move { r1.resolve_traced("0.TEST/alias", &Query::default()).await });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let h2 = h.clone();
    let leader =
        tokio::spawn(async move { r2.resolve_traced(h2.as_str(), &Query::default()).await });
    let (out, hops) = follower.await.unwrap();
    assert!(matches!(out, Err(ResolveError::Timeout { .. })), "{out:?}");
    // Its own request and the leader's service lookup still running.
    assert_eq!(hops.len(), 2, "{hops:#?}");
    let (out, hops) = leader.await.unwrap();
    assert_eq!(out.unwrap().values, urls(&h, 1));
    let numbers: Vec<u32> = hops.iter().map(|h| h.number).collect();
    assert_eq!(
        numbers,
        (1..=hops.len() as u32).collect::<Vec<_>>(),
        "{hops:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_follower_s_error_names_the_handle_it_asked_for() {
    // The leader came to `20.500.1/far` through an alias; the follower asked for it
    // directly. Endless referrals end both with TooManyReferrals, which must name the
    // handle whose resolution hit the limit, not the leader's own input.
    let w = World::new(None);
    let far = format!("{PREFIX}/far");
    w.root_store.insert(
        "0.TEST/alias",
        vec![handle_resolver::wire::HandleValue::new(
            1,
            "HS_ALIAS",
            far.clone(),
        )],
    );
    // Server 127.0.1.n refers to 127.0.1.(n+1), for ever.
    let next = |n: u8| {
        let s = site(
            &[std::net::SocketAddr::from(([127, 0, 1, n], 2641))],
            true,
            "chain",
            None,
        );
        vec![site_value(1, &s)]
    };
    let refer = |v: Vec<handle_resolver::wire::HandleValue>| -> super::mock::Handler {
        Arc::new(move |req, _| {
            Reply::Answer(referral_answer(
                req,
                ResponseCode::ServiceReferral,
                "",
                Some(v.clone()),
            ))
        })
    };
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, refer(next(0)));
        }
    }
    for n in 0..=250u8 {
        w.net.serve(
            std::net::SocketAddr::from(([127, 0, 1, n], 2641)),
            refer(next(n.wrapping_add(1))),
        );
    }
    let r = w.builder().follow_aliases(true).build().unwrap();
    let r1 = r.clone();
    let leader = tokio::spawn(async move { r1.resolve("0.TEST/alias").await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let walked = asked(&w, &far);
    assert!(
        walked > 1 && walked < 40,
        "the leader is on its referral walk: {walked}"
    );
    let e = r.resolve(far.as_str()).await.unwrap_err();
    assert!(
        matches!(&e, ResolveError::TooManyReferrals { handle, .. } if handle.as_str() == far),
        "{e:?}"
    );
    let e = leader.await.unwrap().unwrap_err();
    assert!(
        matches!(&e, ResolveError::TooManyReferrals { handle, .. } if handle.as_str() == far),
        "{e:?}"
    );
    // One referral walk for both.
    assert!(asked(&w, &far) <= 45, "{}", asked(&w, &far));
}
