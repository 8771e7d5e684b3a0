//! The cache, counted in requests sent: hits send nothing, TTL 0 is never kept, negative
//! answers expire, certified and plain answers stay apart.

use std::time::Duration;

use handle_resolver::resolver::{Query, ResolveError};
use handle_resolver::testing::TestKey;
use handle_resolver::wire::{HandleValue, Ttl};

use super::world::{urls, World};

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
    r.resolve_with(h, &Query::types(["URL"])).await.unwrap();
    assert_eq!(w.net.total(), sent + 1);
    // Past the smallest TTL (120 s) the handle is asked again, the service is not.
    tokio::time::advance(Duration::from_secs(121)).await;
    let third = r.resolve(h).await.unwrap();
    assert!(!third.from_cache);
    assert_eq!(w.net.total(), sent + 2);
    // Authoritative requests bypass the cache.
    let at = Query {
        authoritative: true,
        ..Query::default()
    };
    assert!(!r.resolve_with(h, &at).await.unwrap().from_cache);
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
    let cq = Query {
        certify: true,
        ..Query::default()
    };
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
