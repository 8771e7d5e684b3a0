//! Referrals (302 service, 303 prefix), loops and limits, HS_SERV chains, and the root
//! refresh on 300, on the scripted network.

use std::sync::Arc;

use bytes::Bytes;
use handle_resolver::testing::Referral;
use handle_resolver::wire::{HandleValue, ProtocolVersion, ReferralBody, ResponseCode};
use handle_resolver::{AttemptOutcome, ProtocolViolation, ResolveError};

use super::mock::{
    addr, error_answer, handle_of, referral_answer, site, site_value, store_server, Reply,
};
use super::world::{urls, World};

#[tokio::test(start_paused = true)]
async fn prefix_referral_303_is_followed_for_prefix_handles() {
    let w = World::new(None);
    // 0.NA/20.600.7 is not at the root: its parent 0.NA/20.600 refers to a delegate site.
    let delegate = site(&[addr(30)], true, "delegate", None);
    w.root_store.insert_referral(
        "0.NA/20.600.7",
        Referral {
            code: ResponseCode::PrefixReferral,
            body: ReferralBody {
                referral_handle: Bytes::new(),
                values: Some(vec![HandleValue::new(
                    1,
                    "HS_SITE.PREFIX",
                    delegate.encode().unwrap(),
                )]),
            },
        },
    );
    let delegate_store = Arc::new(handle_resolver::testing::Store::new());
    let service = site(&[addr(31)], true, "service", None);
    delegate_store.insert("0.NA/20.600.7", vec![site_value(1, &service)]);
    w.net
        .serve(addr(30), store_server(delegate_store, None, None));
    let store = Arc::new(handle_resolver::testing::Store::new());
    store.insert("20.600.7/x", urls("20.600.7/x", 3));
    w.net.serve(addr(31), store_server(store, None, None));
    let rec = w.resolver().resolve("20.600.7/x").await.unwrap();
    assert_eq!(rec.values, urls("20.600.7/x", 3));
    assert_eq!(rec.source.server, Some(addr(31)));
    let log = w.net.log();
    assert_eq!(log[1].to, addr(30));
    assert_eq!(handle_of(&log[1].request), "0.NA/20.600.7");
}

#[tokio::test(start_paused = true)]
async fn prefix_referral_to_a_plain_handle_is_a_protocol_error() {
    let w = World::new(None);
    let h = "20.500.1/p";
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(
                a,
                Arc::new(|req, _| {
                    Reply::Answer(referral_answer(req, ResponseCode::PrefixReferral, "", None))
                }),
            );
        }
    }
    let e = w.resolver().resolve(h).await.unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Protocol {
                violation: ProtocolViolation::UnexpectedPrefixReferral,
                ..
            }
        ),
        "{e}"
    );
}

#[tokio::test(start_paused = true)]
async fn service_referral_302_is_followed() {
    let w = World::new(None);
    let h = "20.500.1/moved";
    let elsewhere = site(&[addr(40)], true, "elsewhere", None);
    let values = vec![site_value(1, &elsewhere)];
    for s in 0..2 {
        for a in w.servers(s) {
            let v = values.clone();
            w.net.serve(
                a,
                Arc::new(move |req, _| {
                    Reply::Answer(referral_answer(
                        req,
                        ResponseCode::ServiceReferral,
                        "",
                        Some(v.clone()),
                    ))
                }),
            );
        }
    }
    let store = Arc::new(handle_resolver::testing::Store::new());
    store.insert(h, urls(h, 2));
    w.net.serve(addr(40), store_server(store, None, None));
    let rec = w.resolver().resolve(h).await.unwrap();
    assert_eq!(rec.source.server, Some(addr(40)));
    assert_eq!(rec.values, urls(h, 2));
    // Each referral counts in the resent request's RecursionCount (PROTOCOL.md §5.3), so
    // servers can end loops too.
    let counts: Vec<u8> = w
        .net
        .log()
        .iter()
        .filter(|s| handle_of(&s.request) == h)
        .map(|s| s.request.header.recursion_count)
        .collect();
    assert_eq!(counts.first(), Some(&0));
    assert_eq!(counts.last(), Some(&1));
}

#[tokio::test(start_paused = true)]
async fn referral_loops_end_with_referral_loop() {
    let w = World::new(None);
    // Site A refers to X, X refers back to site A.
    let x = site(&[addr(50)], true, "x", None);
    let x_values = vec![site_value(1, &x)];
    let a_values: Vec<HandleValue> = vec![site_value(1, &w.sites[0]), site_value(2, &w.sites[1])];
    for s in 0..2 {
        for a in w.servers(s) {
            let v = x_values.clone();
            w.net.serve(
                a,
                Arc::new(move |req, _| {
                    Reply::Answer(referral_answer(
                        req,
                        ResponseCode::ServiceReferral,
                        "",
                        Some(v.clone()),
                    ))
                }),
            );
        }
    }
    w.net.serve(
        addr(50),
        Arc::new(move |req, _| {
            Reply::Answer(referral_answer(
                req,
                ResponseCode::ServiceReferral,
                "",
                Some(a_values.clone()),
            ))
        }),
    );
    let e = w.resolver().resolve("20.500.1/loop").await.unwrap_err();
    assert!(matches!(e, ResolveError::ReferralLoop { .. }), "{e}");
}

#[tokio::test(start_paused = true)]
async fn endless_fresh_referrals_end_with_too_many_referrals() {
    let w = World::new(None);
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
    for s in 0..2 {
        for a in w.servers(s) {
            let v = next(0);
            w.net.serve(
                a,
                Arc::new(move |req, _| {
                    Reply::Answer(referral_answer(
                        req,
                        ResponseCode::ServiceReferral,
                        "",
                        Some(v.clone()),
                    ))
                }),
            );
        }
    }
    for n in 0..=250u8 {
        let v = next(n.wrapping_add(1));
        w.net.serve(
            std::net::SocketAddr::from(([127, 0, 1, n], 2641)),
            Arc::new(move |req, _| {
                Reply::Answer(referral_answer(
                    req,
                    ResponseCode::ServiceReferral,
                    "",
                    Some(v.clone()),
                ))
            }),
        );
    }
    let e = w.resolver().resolve("20.500.1/far").await.unwrap_err();
    assert!(
        matches!(e, ResolveError::TooManyReferrals { limit: 40, .. }),
        "{e}"
    );
    assert!(w.net.total() <= 45, "{}", w.net.total());
}

#[tokio::test(start_paused = true)]
async fn deep_and_looping_hs_serv_chains_end_with_typed_errors() {
    let w = World::new(None);
    // 0.NA/30.1 -> 0.SERV/c1 -> 0.SERV/c2 -> ... -> 0.SERV/c30 (deeper than 20).
    w.root_store.insert(
        "0.NA/30.1",
        vec![HandleValue::new(1, "HS_SERV", "0.SERV/c1")],
    );
    for i in 1..=30 {
        w.root_store.insert(
            format!("0.SERV/c{i}"),
            vec![HandleValue::new(1, "HS_SERV", format!("0.SERV/c{}", i + 1))],
        );
    }
    let e = w.resolver().resolve("30.1/x").await.unwrap_err();
    assert!(
        matches!(e, ResolveError::TooManyReferrals { limit: 20, .. }),
        "{e}"
    );
    // 0.NA/30.2 -> 0.SERV/a -> 0.SERV/b -> 0.SERV/a.
    w.root_store.insert(
        "0.NA/30.2",
        vec![HandleValue::new(1, "HS_SERV", "0.SERV/a")],
    );
    w.root_store
        .insert("0.SERV/a", vec![HandleValue::new(1, "HS_SERV", "0.SERV/b")]);
    w.root_store
        .insert("0.SERV/b", vec![HandleValue::new(1, "HS_SERV", "0.SERV/a")]);
    let e = w.resolver().resolve("30.2/x").await.unwrap_err();
    assert!(
        matches!(&e, ResolveError::ReferralLoop { at: Some(at), .. } if at.as_str() == "0.SERV/a"),
        "{e}"
    );
}

#[tokio::test(start_paused = true)]
async fn out_of_date_site_info_refreshes_the_root_once() {
    let w = World::new(None);
    let h = "20.500.1/stale";
    w.store.insert(h, urls(h, 1));
    let first = Arc::new(std::sync::atomic::AtomicBool::new(true));
    for s in 0..2 {
        for (i, a) in w.servers(s).into_iter().enumerate() {
            let good = store_server(w.store.clone(), Some((w.sites[s].clone(), i)), None);
            let first = first.clone();
            w.net.serve(
                a,
                Arc::new(move |req, kind| {
                    if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
                        Reply::Answer(error_answer(req, ResponseCode::OutOfDateSiteInfo))
                    } else {
                        good(req, kind)
                    }
                }),
            );
        }
    }
    let rec = w.resolver().resolve(h).await.unwrap();
    assert_eq!(rec.values, urls(h, 1));
    let handles: Vec<String> = w.net.log().iter().map(|s| handle_of(&s.request)).collect();
    assert!(handles.iter().any(|h| h == "0.NA/0.NA"), "{handles:?}");
    // Always 300: one refresh, then the typed server error.
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
    let e = w.resolver().resolve("20.500.1/other").await.unwrap_err();
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
}

/// PROTOCOL.md §3.1: below version 2.5 the reference library reads 303 as SERVER_BACKUP with
/// an error body, not as a prefix referral. A site answering that way is skipped like a busy
/// one, and the answer comes from the other site, whichever site is asked first.
#[tokio::test(start_paused = true)]
async fn code_303_below_version_2_5_is_server_backup_and_moves_to_the_next_site() {
    let mut backup_asked = 0;
    for seed in 0..8u64 {
        let w = World::new(None);
        let h = format!("20.500.1/backup{seed}");
        w.store.insert(&h, urls(&h, 2));
        let backup = w.hashed(0, &h);
        w.net.serve(
            backup,
            Arc::new(|req, _| {
                let mut m = error_answer(req, ResponseCode::PrefixReferral);
                m.envelope.version = ProtocolVersion::new(2, 4);
                Reply::Answer(m)
            }),
        );
        let rec = w
            .builder()
            .rng_seed(seed)
            .build()
            .unwrap()
            .resolve(h.as_str())
            .await;
        let rec = rec.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(rec.source.server, Some(w.hashed(1, &h)));
        assert_eq!(rec.values, urls(&h, 2));
        if rec.attempts.iter().any(|x| {
            x.server == Some(backup)
                && x.outcome == AttemptOutcome::Response(ResponseCode::ServerBackup)
        }) {
            backup_asked += 1;
        }
    }
    assert!(backup_asked > 0, "no seed asked the backup site first");
}

#[tokio::test(start_paused = true)]
async fn a_diamond_of_service_handles_is_bounded_by_one_referral_budget() {
    // 0.NA/20.500.9 → HS_SERV 0.SERV/d0-a, 0.SERV/d0-b; each 0.SERV/dk-* → both
    // 0.SERV/d(k+1)-*: no handle repeats on any one path, yet there are 2^20 paths. Shared
    // lookups (single flights) once each started with a fresh budget of 40, so the walk was
    // only ended by the deadline, thousands of requests later.
    let w = World::new(None);
    let serv = |k: usize| {
        vec![
            HandleValue::new(1, "HS_SERV", format!("0.SERV/d{k}-a")),
            HandleValue::new(2, "HS_SERV", format!("0.SERV/d{k}-b")),
        ]
    };
    w.root_store.insert("0.NA/20.500.9", serv(0));
    for k in 0..30 {
        for side in ["a", "b"] {
            w.root_store
                .insert(format!("0.SERV/d{k}-{side}"), serv(k + 1));
        }
    }
    let e = w.resolver().resolve("20.500.9/x").await.unwrap_err();
    // The first path down ends at the depth limit (20); the others run into the budget (40).
    assert!(matches!(e, ResolveError::TooManyReferrals { .. }), "{e}");
    // The prefix lookup plus at most one request per counted service hop.
    assert!(w.net.total() <= 41, "{} requests", w.net.total());
}
