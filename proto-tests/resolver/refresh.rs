//! Root refresh triggers: a root site announcing a newer site serial (background, once per
//! resolution, rate-limited per resolver) and answers 300 (rate-limited the same way).

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use handle_resolver::testing::TestKey;
use handle_resolver::wire::{OpFlags, ResponseCode};
use handle_resolver::ResolveError;

use super::mock::{error_answer, handle_of, sign, site_value, store_server, Reply};
use super::world::{urls, World, PREFIX};

fn root_lookups(w: &World) -> usize {
    w.net
        .log()
        .iter()
        .filter(|s| handle_of(&s.request) == "0.NA/0.NA")
        .count()
}

/// The root answers from its store, announcing site serial `announced` in every answer.
fn announce(w: &World, announced: u16) {
    let inner = store_server(w.root_store.clone(), None, None);
    w.net.serve(
        w.root,
        Arc::new(move |req, kind| match inner(req, kind) {
            Reply::Answer(mut m) => {
                m.header.site_info_serial = announced;
                Reply::Answer(m)
            }
            other => other,
        }),
    );
}

#[tokio::test(start_paused = true)]
async fn a_newer_root_serial_refreshes_the_root_in_the_background() {
    let w = World::new(None);
    // The root's own record now has serial 9 (the bootstrap copy has 7), and it says so.
    let mut newer = w.root_site.clone();
    newer.serial = 9;
    w.root_store
        .insert("0.NA/0.NA", vec![site_value(1, &newer)]);
    announce(&w, 9);
    let h = format!("{PREFIX}/serial");
    w.store.insert(&h, urls(&h, 1));
    let r = w.resolver();
    assert_eq!(r.root_sites()[0].request_serial, 7);
    let rec = r.resolve(h.as_str()).await.unwrap();
    assert_eq!(rec.values, urls(&h, 1));
    // The answer did not wait for the refresh; the refresh follows.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(root_lookups(&w), 1);
    assert_eq!(r.root_sites()[0].request_serial, 9);
    // Serial 9 is sent now: nothing newer, no more refreshes.
    for i in 0..5 {
        r.resolve(format!("0.TEST/{i}").as_str()).await.unwrap_err();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(root_lookups(&w), 1);
}

#[tokio::test(start_paused = true)]
async fn automatic_refreshes_are_certified_when_the_root_has_keys() {
    // The root sites are shared by every caller: a refresh set off by a plain resolution
    // must still be checked against the current root keys, or it could hand unverified
    // keys to later certified resolutions.
    let key = TestKey::embedded();
    let w = World::new(Some(key.clone()));
    let mut newer = w.root_site.clone();
    newer.serial = 9;
    w.root_store
        .insert("0.NA/0.NA", vec![site_value(1, &newer)]);
    let inner = store_server(w.root_store.clone(), None, None);
    w.net.serve(
        w.root,
        Arc::new(move |req, kind| match inner(req, kind) {
            Reply::Answer(mut m) => {
                m.header.site_info_serial = 9;
                match req.header.flags.contains(OpFlags::CT) {
                    true => Reply::Answer(sign(m, &key)),
                    false => Reply::Answer(m),
                }
            }
            other => other,
        }),
    );
    let h = format!("{PREFIX}/plain");
    w.store.insert(&h, urls(&h, 1));
    let r = w.resolver();
    r.resolve(h.as_str()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let refreshes: Vec<_> = w
        .net
        .log()
        .into_iter()
        .filter(|s| handle_of(&s.request) == "0.NA/0.NA")
        .collect();
    assert_eq!(refreshes.len(), 1);
    assert!(refreshes[0].request.header.flags.contains(OpFlags::CT));
    // Verified with the current root key, and taken.
    assert_eq!(r.root_sites()[0].request_serial, 9);
}

#[tokio::test(start_paused = true)]
async fn newer_serial_refreshes_are_rate_limited() {
    let w = World::new(None);
    // The root announces 200 but its record still says 7: every answer looks newer.
    announce(&w, 200);
    let r = w.resolver();
    let outs = join_all((0..50).map(|i| {
        let r = r.clone();
        async move { r.resolve(format!("0.TEST/a{i}").as_str()).await }
    }))
    .await;
    assert!(outs
        .iter()
        .all(|o| matches!(o, Err(ResolveError::NotFound { .. }))));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(root_lookups(&w), 1);
    for i in 0..5 {
        r.resolve(format!("0.TEST/b{i}").as_str())
            .await
            .unwrap_err();
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    assert_eq!(root_lookups(&w), 1);
    tokio::time::sleep(Duration::from_secs(40)).await;
    r.resolve("0.TEST/c").await.unwrap_err();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(root_lookups(&w), 2);
    // The interval is configurable.
    let r = w
        .builder()
        .root_refresh_interval(Duration::from_secs(3600))
        .build()
        .unwrap();
    r.resolve("0.TEST/d").await.unwrap_err();
    tokio::time::sleep(Duration::from_secs(120)).await;
    r.resolve("0.TEST/e").await.unwrap_err();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(root_lookups(&w), 3);
}

#[tokio::test(start_paused = true)]
async fn out_of_date_answers_refresh_at_most_once_per_interval() {
    let w = World::new(None);
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(
                a,
                Arc::new(|req, _| {
                    Reply::Answer(error_answer(req, ResponseCode::OutOfDateSiteInfo))
                }),
            );
        }
    }
    let r = w.resolver();
    let is_300 = |e: &ResolveError| {
        matches!(
            e,
            ResolveError::Server {
                code: ResponseCode::OutOfDateSiteInfo,
                ..
            }
        )
    };
    let e = r.resolve(format!("{PREFIX}/a").as_str()).await.unwrap_err();
    assert!(is_300(&e), "{e}");
    assert_eq!(root_lookups(&w), 1);
    // Concurrent and later 300s within the interval start over without a new refresh
    // (the service is looked up again).
    let before = w.net.total();
    let outs = join_all((0..20).map(|i| {
        let r = r.clone();
        async move { r.resolve(format!("{PREFIX}/b{i}").as_str()).await }
    }))
    .await;
    assert!(outs.iter().all(|o| o.as_ref().is_err_and(is_300)));
    assert_eq!(root_lookups(&w), 1);
    assert!(w.net.total() > before);
    tokio::time::sleep(Duration::from_secs(61)).await;
    let e = r.resolve(format!("{PREFIX}/c").as_str()).await.unwrap_err();
    assert!(is_300(&e), "{e}");
    assert_eq!(root_lookups(&w), 2);
}

#[tokio::test(start_paused = true)]
async fn work_inside_a_refresh_never_waits_for_that_refresh() {
    let w = World::new(None);
    // The root's own record also names a service handle whose site always answers 300.
    let stale = super::mock::site(&[super::mock::addr(70)], true, "stale", None);
    w.root_store.insert(
        "0.NA/0.NA",
        vec![
            site_value(1, &w.root_site),
            handle_resolver::wire::HandleValue::new(2, "HS_SERV", "30.9/serv"),
        ],
    );
    w.root_store
        .insert("0.NA/30.9", vec![site_value(1, &stale)]);
    let out_of_date: super::mock::Handler =
        Arc::new(|req, _| Reply::Answer(error_answer(req, ResponseCode::OutOfDateSiteInfo)));
    w.net.serve(super::mock::addr(70), out_of_date.clone());
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, out_of_date.clone());
        }
    }
    let e = w
        .resolver()
        .resolve(format!("{PREFIX}/x").as_str())
        .await
        .unwrap_err();
    // The refresh ran (and asked the stale site), then the typed 300, not the deadline.
    assert!(
        matches!(
            e,
            ResolveError::Server {
                code: ResponseCode::OutOfDateSiteInfo,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(root_lookups(&w), 1);
    assert!(w.net.count_to(super::mock::addr(70)) > 0);
}

/// A resolution refreshes the root on a 300 once, not once per step of its alias chain,
/// whether its query is shared (answer cache on) or not.
#[tokio::test(start_paused = true)]
async fn one_refresh_per_resolution_across_its_alias_chain() {
    for cache in [10_000, 0] {
        let w = World::new(None);
        let (a, b) = (format!("{PREFIX}/aa"), format!("{PREFIX}/bb"));
        w.store.insert(
            &a,
            vec![handle_resolver::wire::HandleValue::new(
                1,
                "HS_ALIAS",
                b.clone(),
            )],
        );
        w.store.insert(&b, urls(&b, 1));
        // Each handle is answered 300 the first time it is asked, by whichever server.
        let seen = Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
        for s in 0..2 {
            for (i, addr) in w.servers(s).into_iter().enumerate() {
                let inner = store_server(w.store.clone(), Some((w.sites[s].clone(), i)), None);
                let seen = seen.clone();
                w.net.serve(
                    addr,
                    Arc::new(move |req, kind| {
                        if seen.lock().unwrap().insert(handle_of(req)) {
                            Reply::Answer(error_answer(req, ResponseCode::OutOfDateSiteInfo))
                        } else {
                            inner(req, kind)
                        }
                    }),
                );
            }
        }
        let r = w
            .builder()
            .follow_aliases(true)
            .cache_size(cache)
            .max_parallel(1)
            .build()
            .unwrap();
        let e = r.resolve(a.as_str()).await.unwrap_err();
        assert!(
            matches!(
                e,
                ResolveError::Server {
                    code: ResponseCode::OutOfDateSiteInfo,
                    ..
                }
            ),
            "cache {cache}: {e}"
        );
        assert_eq!(root_lookups(&w), 1, "cache {cache}");
    }
}
