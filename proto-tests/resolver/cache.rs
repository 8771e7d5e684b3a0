//! The cache, counted in requests sent: hits send nothing, TTL 0 is never kept, negative
//! answers expire, certified and plain answers stay apart.

use std::sync::Arc;
use std::time::Duration;

use handle_resolver::testing::TestKey;
use handle_resolver::wire::{HandleValue, Ttl};
use handle_resolver::{FixedClock, Query, ResolveError};

use super::world::{urls, World, PREFIX};

#[tokio::test(start_paused = true)]
async fn a_second_resolution_sends_no_packet_until_the_ttl_runs_out() {
    let w = World::new(None);
    let h = "20.500.1/c";
    let mut values = urls(h, 2);
    values[1].ttl = Ttl::Relative(120);
    w.store.insert(h, values.clone());
    let r = w.resolver();
    let first = r.resolve(h).await.unwrap();
    let sent = w.net.total();
    let second = r.resolve(h).await.unwrap();
    assert_eq!(w.net.total(), sent);
    assert!(second.from_cache && !first.from_cache);
    assert_eq!(second.values, values);
    assert_eq!(second.source, first.source);
    // A clone shares the cache.
    assert!(r.clone().resolve(h).await.unwrap().from_cache);
    // Other filters are other entries.
    r.resolve_with(h, &Query::new().types(["URL"]))
        .await
        .unwrap();
    assert_eq!(w.net.total(), sent + 1);
    // Past the smallest TTL (120 s) the handle is asked again, the service is not.
    tokio::time::advance(Duration::from_secs(121)).await;
    let third = r.resolve(h).await.unwrap();
    assert!(!third.from_cache);
    assert_eq!(w.net.total(), sent + 2);
    // Authoritative requests bypass the cache.
    let at = Query::new().authoritative(true);
    assert!(!r.resolve_with(h, &at).await.unwrap().from_cache);
}

#[tokio::test(start_paused = true)]
async fn an_unknown_prefix_is_cached_as_briefly_as_a_negative_answer() {
    let w = World::new(None);
    let r = w.resolver();
    let unknown = |e: &ResolveError| matches!(e, ResolveError::ServiceNotFound { prefix_handle } if prefix_handle.as_str() == "0.NA/99.999");
    let e = r.resolve("99.999/a").await.unwrap_err();
    assert!(unknown(&e), "{e}");
    let sent = w.net.total();
    assert_eq!(sent, 2, "looked up plain, then with AT");
    // Other handles under the same prefix: answered from the cache, no packet.
    for h in ["99.999/b", "99.999/c"] {
        let e = r.resolve(h).await.unwrap_err();
        assert!(unknown(&e), "{e}");
    }
    assert_eq!(w.net.total(), sent);
    // Once the negative TTL has passed the root is asked again (the prefix may exist now).
    // The default negative TTL (`ResolverBuilder::negative_ttl`: 60 s).
    tokio::time::advance(std::time::Duration::from_secs(60)).await;
    let e = r.resolve("99.999/d").await.unwrap_err();
    assert!(unknown(&e), "{e}");
    assert_eq!(w.net.total(), sent + 2);
    // No negative caching when it is switched off.
    let r = w.builder().negative_ttl(Duration::ZERO).build().unwrap();
    let before = w.net.total();
    r.resolve("99.999/e").await.unwrap_err();
    r.resolve("99.999/f").await.unwrap_err();
    assert_eq!(w.net.total(), before + 4);
}

#[tokio::test(start_paused = true)]
async fn ttl_zero_is_not_cached_and_absolute_ttls_are_honoured() {
    let w = World::new(None);
    let mut v = HandleValue::new(1, "URL", "http://zero/");
    v.ttl = Ttl::Relative(0);
    w.store.insert("20.500.1/zero", vec![v]);
    let r = w.resolver();
    r.resolve("20.500.1/zero").await.unwrap();
    let sent = w.net.total();
    assert!(!r.resolve("20.500.1/zero").await.unwrap().from_cache);
    assert_eq!(w.net.total(), sent + 1);

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut v = HandleValue::new(1, "URL", "http://abs/");
    v.ttl = Ttl::Absolute((now + 30) as u32);
    w.store.insert("20.500.1/abs", vec![v]);
    r.resolve("20.500.1/abs").await.unwrap();
    assert!(r.resolve("20.500.1/abs").await.unwrap().from_cache);
    tokio::time::advance(Duration::from_secs(31)).await;
    assert!(!r.resolve("20.500.1/abs").await.unwrap().from_cache);
}

#[tokio::test(start_paused = true)]
async fn negative_answers_are_cached_briefly() {
    let w = World::new(None);
    let r = w.resolver();
    let h = "20.500.1/later";
    assert!(matches!(
        r.resolve(h).await,
        Err(ResolveError::NotFound { .. })
    ));
    let sent = w.net.total();
    w.store.insert(h, urls(h, 1));
    assert!(matches!(
        r.resolve(h).await,
        Err(ResolveError::NotFound { .. })
    ));
    assert_eq!(w.net.total(), sent);
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(r.resolve(h).await.unwrap().values, urls(h, 1));
    // Negative caching can be switched off.
    let r = w.builder().negative_ttl(Duration::ZERO).build().unwrap();
    let before = w.net.total();
    r.resolve("20.500.1/nope").await.unwrap_err();
    r.resolve("20.500.1/nope").await.unwrap_err();
    // service lookup (2) + twice the handle
    assert_eq!(w.net.total(), before + 4);
}

#[tokio::test(start_paused = true)]
async fn certified_and_plain_answers_never_mix() {
    let w = World::new(Some(TestKey::embedded()));
    let h = "20.500.1/cert";
    w.store.insert(h, urls(h, 1));
    let r = w.resolver();
    let plain = r.resolve(h).await.unwrap();
    assert!(!plain.source.certified);
    let sent = w.net.total();
    let cq = Query::new().certify(true);
    let certified = r.resolve_with(h, &cq).await.unwrap();
    assert!(certified.source.certified && !certified.from_cache);
    assert!(w.net.total() > sent);
    let again_plain = r.resolve(h).await.unwrap();
    assert!(again_plain.from_cache && !again_plain.source.certified);
    let again_cert = r.resolve_with(h, &cq).await.unwrap();
    assert!(again_cert.from_cache && again_cert.source.certified);
}

#[tokio::test(start_paused = true)]
async fn the_cache_is_bounded() {
    let w = World::new(None);
    let r = w.builder().cache_size(0).build().unwrap();
    let h = "20.500.1/nocache";
    w.store.insert(h, urls(h, 1));
    r.resolve(h).await.unwrap();
    assert!(!r.resolve(h).await.unwrap().from_cache);
}

/// Service lookups (`0.NA/<prefix>`, `0.SERV/<prefix>`) sent so far.
fn service_lookups(w: &World) -> (usize, usize) {
    let log = w.net.log();
    let count = |h: String| {
        log.iter()
            .filter(|s| super::mock::handle_of(&s.request) == h)
            .count()
    };
    (
        count(format!("0.NA/{PREFIX}")),
        count(format!("0.SERV/{PREFIX}")),
    )
}

/// Sets the TTL of value `index` of `handle` in the root store.
fn set_ttl(w: &World, handle: &str, index: u32, ttl: Ttl) {
    let mut values = w.root_store.get(handle).unwrap().values.clone();
    values.iter_mut().find(|v| v.index == index).unwrap().ttl = ttl;
    w.root_store.insert(handle, values);
}

/// Resolves a fresh handle (so that only the service may come from the cache).
async fn resolve_fresh(w: &World, r: &handle_resolver::Resolver, n: &mut u32) {
    *n += 1;
    let h = format!("{PREFIX}/svc-{n}");
    w.store.insert(&h, urls(&h, 1));
    assert_eq!(r.resolve(h.as_str()).await.unwrap().values, urls(&h, 1));
}

#[tokio::test(start_paused = true)]
async fn service_lifetime_is_the_smallest_ttl_of_every_contributing_value() {
    let serv = format!("0.SERV/{PREFIX}");
    let prefix = format!("0.NA/{PREFIX}");
    let mut n = 0;
    // A site value of the HS_SERV handle (not of the prefix handle) has the smallest TTL.
    let w = World::new(None);
    set_ttl(&w, &serv, 2, Ttl::Relative(100));
    let r = w.resolver();
    resolve_fresh(&w, &r, &mut n).await;
    tokio::time::advance(Duration::from_secs(99)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (1, 1));
    tokio::time::advance(Duration::from_secs(2)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (2, 2));

    // The prefix handle's HS_SERV value has the smallest TTL.
    let w = World::new(None);
    set_ttl(&w, &prefix, 1, Ttl::Relative(30));
    let r = w.resolver();
    resolve_fresh(&w, &r, &mut n).await;
    tokio::time::advance(Duration::from_secs(29)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (1, 1));
    tokio::time::advance(Duration::from_secs(2)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn service_lifetime_honours_absolute_ttls_the_cap_and_zero() {
    let serv = format!("0.SERV/{PREFIX}");
    let mut n = 0;
    // Absolute: 40 s after the resolver's clock.
    let now = 1_900_000_000u32;
    let w = World::new(None);
    set_ttl(&w, &serv, 1, Ttl::Absolute(now + 40));
    let r = w
        .builder()
        .clock(Arc::new(FixedClock(u64::from(now))))
        .build()
        .unwrap();
    resolve_fresh(&w, &r, &mut n).await;
    tokio::time::advance(Duration::from_secs(39)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (1, 1));
    tokio::time::advance(Duration::from_secs(2)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (2, 2));

    // Relative TTLs are capped.
    let w = World::new(None);
    set_ttl(&w, &serv, 1, Ttl::Relative(i32::MAX));
    let r = w
        .builder()
        .max_ttl(Duration::from_secs(300))
        .build()
        .unwrap();
    resolve_fresh(&w, &r, &mut n).await;
    tokio::time::advance(Duration::from_secs(299)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (1, 1));
    tokio::time::advance(Duration::from_secs(2)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (2, 2));

    // TTL 0 on a site value of the HS_SERV handle: the service is never cached.
    let w = World::new(None);
    set_ttl(&w, &serv, 2, Ttl::Relative(0));
    let r = w.resolver();
    for _ in 0..3 {
        resolve_fresh(&w, &r, &mut n).await;
    }
    assert_eq!(service_lookups(&w), (3, 3));
}

#[tokio::test(start_paused = true)]
async fn a_partial_service_is_kept_no_longer_than_the_negative_ttl() {
    let mut n = 0;
    let w = World::new(None);
    // A second HS_SERV value points to a service handle that does not exist.
    let prefix = format!("0.NA/{PREFIX}");
    let mut values = w.root_store.get(&prefix).unwrap().values.clone();
    values.push(HandleValue::new(2, "HS_SERV", "0.SERV/missing"));
    w.root_store.insert(&prefix, values);
    let r = w.resolver();
    resolve_fresh(&w, &r, &mut n).await;
    tokio::time::advance(Duration::from_secs(59)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (1, 1));
    tokio::time::advance(Duration::from_secs(2)).await;
    resolve_fresh(&w, &r, &mut n).await;
    assert_eq!(service_lookups(&w), (2, 2));
}
