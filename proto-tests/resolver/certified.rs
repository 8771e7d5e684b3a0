//! Certified resolution: CT set, every answer verified with the key from the HS_SITE of the
//! server asked; anything unverifiable is an error.

use std::sync::Arc;

use handle_resolver::resolver::{Query, ResolveError, SignatureFailure};
use handle_resolver::testing::TestKey;
use handle_resolver::wire::OpFlags;

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
