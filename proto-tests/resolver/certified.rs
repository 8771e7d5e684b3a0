//! Certified resolution: CT set, every answer verified with the key from the HS_SITE of the
//! server asked; anything unverifiable is an error.

use std::sync::Arc;

use handle_resolver::testing::TestKey;
use handle_resolver::wire::OpFlags;
use handle_resolver::{Query, ResolveError, SignatureFailure};

use super::mock::{sign, store_server, values_answer, Reply};
use super::world::{urls, World};

fn certify() -> Query {
    Query::new().certify(true)
}

#[tokio::test(start_paused = true)]
async fn certified_resolution_verifies_every_answer() {
    let w = World::new(Some(TestKey::embedded()));
    let h = "20.500.1/signed";
    w.store.insert(h, urls(h, 3));
    let rec = w.resolver().resolve_with(h, &certify()).await.unwrap();
    assert!(rec.source.certified);
    assert_eq!(rec.values, urls(h, 3));
    assert!(w
        .net
        .log()
        .iter()
        .all(|s| s.request.header.flags.contains(OpFlags::CT)));
    // The builder default applies to resolve().
    let r = w.builder().certify(true).build().unwrap();
    assert!(r.resolve("20.500.1/signed").await.unwrap().source.certified);
}

/// The builder's certify is a policy: no query turns it off, whatever it sets or leaves
/// unset (the README's own pattern, `resolve_with(id, &Query::new().types(["URL"]))`, once
/// returned an unsigned answer from a certifying resolver).
#[tokio::test(start_paused = true)]
async fn certify_on_the_builder_survives_any_query() {
    let w = World::new(Some(TestKey::embedded()));
    let h = "20.500.1/policy";
    w.store.insert(h, urls(h, 2));
    let r = w.builder().certify(true).build().unwrap();
    let queries = [
        Query::new(),
        Query::new().types(["URL"]),
        Query::new().indexes([1]),
        Query::new().certify(false),
        Query::new()
            .types(["URL"])
            .certify(false)
            .authoritative(true),
        Query::new().public_only(true),
    ];
    for q in &queries {
        r.clear_cache();
        let sent = w.net.total();
        let rec = r.resolve_with(h, q).await.unwrap();
        assert!(rec.source.certified, "{q:?}");
        // Every request of it, service lookups included, asked for a signature.
        let log = w.net.log();
        assert!(log.len() > sent, "{q:?}");
        assert!(
            log[sent..]
                .iter()
                .all(|s| s.request.header.flags.contains(OpFlags::CT)),
            "{q:?}"
        );
    }
    // Without the policy, a query asks for it, and an unset flag is plain.
    let plain = w.resolver();
    assert!(
        plain
            .resolve_with(h, &certify())
            .await
            .unwrap()
            .source
            .certified
    );
    plain.clear_cache();
    assert!(
        !plain
            .resolve_with(h, &Query::new())
            .await
            .unwrap()
            .source
            .certified
    );
}

#[tokio::test(start_paused = true)]
async fn unsigned_tampered_or_keyless_answers_are_rejected() {
    let w = World::new(Some(TestKey::embedded()));
    let h = "20.500.1/bad";
    w.store.insert(h, urls(h, 1));
    // Servers that ignore CT.
    for s in 0..2 {
        for (i, a) in w.servers(s).into_iter().enumerate() {
            w.net.serve(
                a,
                store_server(w.store.clone(), Some((w.sites[s].clone(), i)), None),
            );
        }
    }
    let e = w.resolver().resolve_with(h, &certify()).await.unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Signature {
                failure: SignatureFailure::Unsigned,
                ..
            }
        ),
        "{e}"
    );

    // Signed, then a value changed after signing.
    let key = TestKey::embedded();
    for s in 0..2 {
        for a in w.servers(s) {
            let key = key.clone();
            w.net.serve(
                a,
                Arc::new(move |req, _| {
                    let mut m = sign(values_answer(req, urls("20.500.1/bad", 1)), &key);
                    if let handle_resolver::wire::Body::ResolutionResponse(r) = &mut m.body {
                        r.values[0].data = "http://evil.example/".into();
                    }
                    Reply::Answer(m)
                }),
            );
        }
    }
    let e = w
        .resolver()
        .resolve_with("20.500.1/bad2", &certify())
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Signature {
                failure: SignatureFailure::Invalid(_),
                ..
            }
        ),
        "{e}"
    );

    // Sites without keys cannot be verified.
    let keyless = World::new(None);
    keyless.store.insert(h, urls(h, 1));
    let e = keyless
        .resolver()
        .resolve_with(h, &certify())
        .await
        .unwrap_err();
    assert!(matches!(e, ResolveError::Signature { .. }), "{e}");
}
