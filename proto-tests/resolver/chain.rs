//! The resolution chain on the scripted network: service lookup, HS_SERV, server hash,
//! aliases, answer checks (expiry, request digest), and every typed outcome.

use std::sync::Arc;

use handle_resolver::transport::TransportKind;
use handle_resolver::wire::{
    Body, DigestAlgorithm, HandleValue, OpFlags, ProtocolVersion, RequestDigest, ResponseCode,
};
use handle_resolver::{
    AttemptOutcome, ProtocolViolation, Query, ResolveError, Resolver, TransportPreference,
};

use super::mock::{addr, error_answer, handle_of, store_server, values_answer, Reply};
use super::world::{urls, World, PREFIX};

fn types_of(m: &handle_resolver::wire::Message) -> Vec<String> {
    match &m.body {
        Body::ResolutionRequest(r) => r
            .types
            .iter()
            .map(|t| String::from_utf8_lossy(t).into_owned())
            .collect(),
        _ => vec![],
    }
}

#[tokio::test(start_paused = true)]
async fn full_chain_root_to_prefix_through_hs_serv_to_the_hashed_server() {
    let w = World::new(None);
    let h = format!("{PREFIX}/abc");
    w.store.insert(&h, urls(&h, 40));
    let r = w.resolver();
    let rec = r.resolve(h.as_str()).await.unwrap();
    assert_eq!(rec.values, urls(&h, 40));
    assert_eq!(rec.handle, h);
    assert!(!rec.from_cache);

    let log = w.net.log();
    assert_eq!(log.len(), 3, "{log:#?}");
    // 1: 0.NA/<prefix> at the root, the reference client's service query.
    assert_eq!(log[0].to, w.root);
    assert_eq!(handle_of(&log[0].request), "0.NA/20.500.1");
    assert_eq!(
        types_of(&log[0].request),
        ["HS_SITE", "HS_SITE.6", "HS_SERV", "HS_NAMESPACE"]
    );
    assert_eq!(log[0].request.header.recursion_count, 1);
    assert_eq!(
        log[0].request.header.flags,
        OpFlags::REC | OpFlags::CA | OpFlags::PO
    );
    assert_eq!(log[0].kind, TransportKind::Udp);
    // 2: the HS_SERV service handle, also at the root.
    assert_eq!(handle_of(&log[1].request), "0.SERV/20.500.1");
    assert_eq!(
        types_of(&log[1].request),
        ["HS_SITE", "HS_SITE.6", "HS_SERV"]
    );
    // 3: the handle at the server the hash picks in one of the sites, with its serial.
    let chosen = log[2].to;
    assert!(
        chosen == w.hashed(0, &h) || chosen == w.hashed(1, &h),
        "{chosen}"
    );
    assert_eq!(handle_of(&log[2].request), h);
    assert_eq!(log[2].request.header.site_info_serial, 7);
    assert_eq!(log[2].request.envelope.version, ProtocolVersion::V2_11);
    assert_eq!(log[2].request.envelope.suggested, ProtocolVersion::V2_11);
    assert_eq!(rec.source.server, Some(chosen));
    assert_eq!(rec.source.transport, TransportKind::Udp);
    assert_eq!(rec.attempts.len(), 3);
    assert!(rec
        .attempts
        .iter()
        .all(|h| matches!(h.outcome, AttemptOutcome::Response(ResponseCode::Success))));
}

#[tokio::test(start_paused = true)]
async fn every_handle_goes_to_its_hashed_server_and_tcp_only_uses_tcp() {
    let w = World::new(None);
    let r = w
        .builder()
        .transport(TransportPreference::Tcp)
        .build()
        .unwrap();
    for i in 0..20 {
        let h = format!("{PREFIX}/h{i}");
        w.store.insert(&h, urls(&h, 2));
        let rec = r.resolve(h.as_str()).await.unwrap();
        let s = if w.servers(0).contains(&rec.source.server.unwrap()) {
            0
        } else {
            1
        };
        assert_eq!(rec.source.server, Some(w.hashed(s, &h)));
        assert_eq!(rec.source.transport, TransportKind::Tcp);
    }
    assert!(w.net.log().iter().all(|s| s.kind == TransportKind::Tcp));
    // The service was looked up once (cached by its TTL).
    assert_eq!(w.net.count_to(w.root), 2);
}

#[tokio::test(start_paused = true)]
async fn handles_under_0_go_to_the_root_directly() {
    let w = World::new(None);
    w.root_store.insert("0.TEST/x", urls("0.TEST/x", 1));
    let rec = w.resolver().resolve("0.TEST/x").await.unwrap();
    assert_eq!(rec.source.server, Some(w.root));
    assert_eq!(w.net.total(), 1);
}

#[tokio::test(start_paused = true)]
async fn typed_outcomes() {
    let w = World::new(None);
    let r = w.resolver();
    let mut secret = HandleValue::new(2, "SECRET", "x");
    secret.permissions.0 = 0x0C;
    w.store.insert(
        format!("{PREFIX}/s"),
        vec![HandleValue::new(1, "URL", "u"), secret],
    );
    assert!(matches!(
        r.resolve(&format!("{PREFIX}/none")).await,
        Err(ResolveError::NotFound { .. })
    ));
    let q = Query::new().types(["NOSUCHTYPE"]);
    assert!(matches!(
        r.resolve_with(&format!("{PREFIX}/s"), &q).await,
        Err(ResolveError::NoMatchingValues { .. })
    ));
    let q = Query::new().public_only(false);
    assert!(matches!(
        r.resolve_with(&format!("{PREFIX}/s"), &q).await,
        Err(ResolveError::AuthenticationNeeded { .. })
    ));
    // A prefix the root does not know: looked up twice (the second time with AT), then typed.
    let before = w.net.total();
    let e = r.resolve("99.999/x").await.unwrap_err();
    assert!(
        matches!(&e, ResolveError::ServiceNotFound { prefix_handle } if prefix_handle.as_str() == "0.NA/99.999"),
        "{e}"
    );
    let lookups: Vec<_> = w.net.log().into_iter().skip(before).collect();
    assert_eq!(lookups.len(), 2);
    assert!(lookups[1].request.header.flags.contains(OpFlags::AT));
    // Invalid identifiers and strict CORDRA mode: nothing sent.
    let sent = w.net.total();
    assert!(matches!(
        r.resolve("").await,
        Err(ResolveError::InvalidIdentifier(_))
    ));
    assert!(matches!(
        r.resolve("20.500.1/").await,
        Err(ResolveError::InvalidIdentifier(_))
    ));
    let strict = w.builder().strict_cordra(true).build().unwrap();
    assert!(matches!(
        strict.resolve("20.500.1/abc").await,
        Err(ResolveError::NotCordra { .. })
    ));
    assert_eq!(w.net.total(), sent);
    let e = strict
        .resolve("20.500.1/F58FB49EB1F848F0A606E84CEF294BE5")
        .await
        .unwrap_err();
    assert!(matches!(e, ResolveError::NotFound { .. }), "{e}");
}

#[tokio::test(start_paused = true)]
async fn every_site_answering_301_is_prefix_not_served() {
    let w = World::new(None);
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(
                a,
                Arc::new(|req, _| {
                    Reply::Answer(error_answer(req, ResponseCode::ServerNotResponsible))
                }),
            );
        }
    }
    let e = w.resolver().resolve("20.500.1/x").await.unwrap_err();
    assert!(matches!(e, ResolveError::PrefixNotServed { .. }), "{e}");
    // Both sites were asked (301 moves on to the next site).
    assert_eq!(w.net.total(), 4);
}

#[tokio::test(start_paused = true)]
async fn busy_and_error_answers_move_to_the_next_site() {
    let w = World::new(None);
    let h = "20.500.1/busy";
    w.store.insert(h, urls(h, 1));
    for a in w.servers(0) {
        w.net.serve(
            a,
            Arc::new(|req, _| Reply::Answer(error_answer(req, ResponseCode::ServerBusy))),
        );
    }
    let rec = w.resolver().resolve(h).await.unwrap();
    assert_eq!(rec.source.server, Some(w.hashed(1, h)));
    // Site B is a mirror: its answer is not authoritative, though it has AT set as every
    // server's answer does.
    assert!(!rec.source.authoritative);
    let index = w.sites[0].server_index_for(h.as_bytes()).unwrap();
    w.net.serve(
        w.hashed(0, h),
        store_server(w.store.clone(), Some((w.sites[0].clone(), index)), None),
    );
    let primary = w.builder().cache_size(0).build().unwrap();
    let at = Query::new().authoritative(true);
    let rec = primary.resolve_with(h, &at).await.unwrap();
    assert_eq!(rec.source.server, Some(w.hashed(0, h)));
    assert!(rec.source.authoritative);
}

#[tokio::test(start_paused = true)]
async fn aliases_are_followed_with_loop_and_depth_checks() {
    let w = World::new(None);
    let r = w.builder().follow_aliases(true).build().unwrap();
    w.store.insert(
        "20.500.1/old",
        vec![HandleValue::new(1, "HS_ALIAS", "20.500.1/new")],
    );
    w.store.insert("20.500.1/new", urls("20.500.1/new", 2));
    let rec = r.resolve("20.500.1/old").await.unwrap();
    assert_eq!(rec.handle, "20.500.1/new");
    assert_eq!(rec.values, urls("20.500.1/new", 2));
    assert_eq!(rec.aliases, ["20.500.1/old", "20.500.1/new"]);
    // With a type filter the alias is still seen, and not returned.
    let rec = r
        .resolve_with("20.500.1/old", &Query::new().types(["URL"]))
        .await
        .unwrap();
    assert_eq!(rec.values.len(), 2);
    assert!(rec.values.iter().all(|v| v.is_type("URL")));
    // Without the option the alias record itself is the answer.
    let plain = w.resolver().resolve("20.500.1/old").await.unwrap();
    assert!(plain.values[0].is_type("HS_ALIAS"));

    w.store.insert(
        "20.500.1/a",
        vec![HandleValue::new(1, "HS_ALIAS", "20.500.1/b")],
    );
    w.store.insert(
        "20.500.1/b",
        vec![HandleValue::new(1, "HS_ALIAS", "20.500.1/a")],
    );
    let e = r.resolve("20.500.1/a").await.unwrap_err();
    match e {
        ResolveError::AliasLoop { chain } => {
            let chain: Vec<&str> = chain.iter().map(|h| h.as_str()).collect();
            assert_eq!(chain, ["20.500.1/a", "20.500.1/b", "20.500.1/a"])
        }
        other => panic!("{other}"),
    }
    // 20 hops are followed, as the handle.net proxy follows them; the 21st is too many.
    for i in 0..25 {
        w.store.insert(
            format!("20.500.1/d{i}"),
            vec![HandleValue::new(
                1,
                "HS_ALIAS",
                format!("20.500.1/d{}", i + 1),
            )],
        );
    }
    let e = r.resolve("20.500.1/d0").await.unwrap_err();
    assert!(
        matches!(&e, ResolveError::TooManyAliases { limit: 20, chain } if chain.len() == 22),
        "{e}"
    );
    for i in 0..20 {
        w.store.insert(
            format!("20.500.1/e{i}"),
            vec![HandleValue::new(
                1,
                "HS_ALIAS",
                format!("20.500.1/e{}", i + 1),
            )],
        );
    }
    w.store.insert(
        "20.500.1/e20",
        vec![HandleValue::new(1, "URL", "https://example.org/e20")],
    );
    let rec = r.resolve("20.500.1/e0").await.unwrap();
    assert_eq!(rec.handle, "20.500.1/e20");
    assert_eq!(rec.aliases.len(), 21);
    // An alias target is server data: one starting with a multi-byte character is just a
    // handle nobody serves (it once panicked the cache key builder).
    w.store
        .insert("20.500.1/odd", vec![HandleValue::new(1, "HS_ALIAS", "€/x")]);
    let e = r.resolve("20.500.1/odd").await.unwrap_err();
    assert!(matches!(e, ResolveError::ServiceNotFound { .. }), "{e}");
}

#[tokio::test(start_paused = true)]
async fn expired_answers_are_rejected_and_the_next_site_answers() {
    let w = World::new(None);
    let h = "20.500.1/exp";
    w.store.insert(h, urls(h, 1));
    for a in w.servers(0) {
        w.net.serve(
            a,
            Arc::new(|req, _| {
                let mut m = values_answer(req, vec![HandleValue::new(1, "URL", "stale")]);
                m.header.expiration = 1_000; // 1970: long past.
                Reply::Answer(m)
            }),
        );
    }
    let (res, hops) = w.resolver().resolve_traced(h, &Query::default()).await;
    let rec = res.unwrap();
    assert_eq!(rec.values, urls(h, 1));
    assert_eq!(rec.source.server, Some(w.hashed(1, h)));
    // If site A was asked first, its answer shows up as rejected.
    if hops.iter().any(|x| x.server == Some(w.hashed(0, h))) {
        assert!(hops.iter().any(|x| matches!(
            &x.outcome,
            AttemptOutcome::Rejected(handle_resolver::Rejection::Protocol(
                handle_resolver::ProtocolViolation::Expired { .. }
            ))
        )));
    }
    // Expiration 0 means "never" and is accepted.
    for a in w.servers(0).into_iter().chain(w.servers(1)) {
        w.net.serve(
            a,
            Arc::new(|req, _| {
                let mut m = values_answer(req, vec![HandleValue::new(1, "URL", "zero")]);
                m.header.expiration = 0;
                Reply::Answer(m)
            }),
        );
    }
    let rec = w.resolver().resolve("20.500.1/zero").await.unwrap();
    assert_eq!(&rec.values[0].data[..], b"zero");
}

#[tokio::test(start_paused = true)]
async fn request_digest_is_checked_when_asked_for() {
    let w = World::new(None);
    let h = "20.500.1/rd";
    w.store.insert(h, urls(h, 1));
    let with_digest = |tamper: bool| {
        Arc::new(move |req: &handle_resolver::wire::Message, _| {
            let mut m = values_answer(req, urls("20.500.1/rd", 1));
            let mut hb = req.header_and_body().unwrap().to_vec();
            if tamper {
                hb[0] ^= 1;
            }
            m.request_digest = RequestDigest::compute(DigestAlgorithm::Sha256, &hb);
            m.header.flags = m.header.flags | OpFlags::RD;
            Reply::Answer(m)
        }) as super::mock::Handler
    };
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, with_digest(false));
        }
    }
    let r = w.builder().request_digest(true).build().unwrap();
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(rec.values, urls(h, 1));
    let to_sites = w
        .net
        .log()
        .into_iter()
        .filter(|s| handle_of(&s.request) == h)
        .collect::<Vec<_>>();
    assert!(!to_sites.is_empty());
    assert!(to_sites
        .iter()
        .all(|s| s.request.header.flags.contains(OpFlags::RD)));
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(a, with_digest(true));
        }
    }
    let e = r.resolve("20.500.1/rd2").await.unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Protocol {
                violation: ProtocolViolation::DigestMismatch,
                ..
            }
        ),
        "{e}"
    );
    // A server ignoring RD: digest missing.
    for s in 0..2 {
        for a in w.servers(s) {
            w.net.serve(
                a,
                Arc::new(|req, _| {
                    // response_to adds the digest like the reference server; this one does not.
                    let mut m = values_answer(req, vec![]);
                    m.request_digest = None;
                    m.header.flags = m.header.flags.without(OpFlags::RD);
                    Reply::Answer(m)
                }),
            );
        }
    }
    let e = r.resolve("20.500.1/rd3").await.unwrap_err();
    assert!(
        matches!(
            e,
            ResolveError::Protocol {
                violation: ProtocolViolation::DigestMissing,
                ..
            }
        ),
        "{e}"
    );
}

#[tokio::test(start_paused = true)]
async fn fixed_server_mode_skips_the_service_lookup() {
    let w = World::new(None);
    let h = "20.500.1/direct";
    w.store.insert(h, urls(h, 1));
    let r = w.builder().server(addr(10)).build().unwrap();
    w.net
        .serve(addr(10), store_server(w.store.clone(), None, None));
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(rec.source.server, Some(addr(10)));
    assert_eq!(w.net.total(), 1);
}

/// With a fixed server, nothing but that server is ever asked: not the built-in root
/// (whose keys make the resolver refresh a root it has not read, which in fixed-server mode
/// it never uses), not even in the background after the answer.
#[tokio::test(start_paused = true)]
async fn fixed_server_mode_never_refreshes_the_built_in_root() {
    let w = World::new(None);
    let h = "20.500.1/direct-only";
    w.store.insert(h, urls(h, 1));
    let r = Resolver::builder()
        .server(addr(10))
        .exchange(w.net.clone())
        .cache_size(0)
        .build()
        .unwrap();
    w.net
        .serve(addr(10), store_server(w.store.clone(), None, None));
    for _ in 0..3 {
        r.resolve(h).await.unwrap();
    }
    tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    let asked: Vec<_> = w.net.log().iter().map(|s| s.to).collect();
    assert_eq!(asked, [addr(10); 3]);
}

#[tokio::test(start_paused = true)]
async fn all_sites_shows_mirror_drift() {
    let w = World::new(None);
    let h = "20.500.1/drift";
    w.store.insert(h, urls(h, 2));
    let r = w.resolver();
    let answers = r.resolve_all_sites(h, &Query::default()).await.unwrap();
    // Every server of both sites was asked; only the hashed ones are responsible.
    assert_eq!(answers.len(), 6);
    let responsible: Vec<_> = answers.iter().filter(|a| a.responsible).collect();
    assert_eq!(responsible.len(), 2);
    assert!(responsible
        .iter()
        .all(|a| a.result.as_ref().unwrap() == &urls(h, 2)));
    assert!(answers.iter().filter(|a| !a.responsible).all(|a| matches!(
        a.result,
        Err(ResolveError::Server {
            code: ResponseCode::ServerNotResponsible,
            ..
        })
    )));
    // Site B's hashed server answers something else: the answers differ.
    let b = w.hashed(1, h);
    w.net.serve(
        b,
        Arc::new(|req, _| {
            Reply::Answer(values_answer(req, vec![HandleValue::new(1, "URL", "old")]))
        }),
    );
    let answers = r.resolve_all_sites(h, &Query::default()).await.unwrap();
    let from = |addr| {
        answers
            .iter()
            .find(|a| a.server == Some(addr))
            .unwrap()
            .result
            .clone()
            .unwrap()
    };
    assert_ne!(from(w.hashed(0, h)), from(b));
}

#[tokio::test(start_paused = true)]
async fn a_location_is_chosen_from_10320_loc() {
    let w = World::new(None);
    let h = "20.500.1/loc";
    let xml = r#"<locations><location href="https://a.example/" weight="0"/><location href="https://b.example/" view="json"/></locations>"#;
    w.store.insert(
        h,
        vec![
            HandleValue::new(1, "URL", "https://a.example/"),
            HandleValue::new(2, "10320/loc", xml),
        ],
    );
    let rec = w.resolver().resolve(h).await.unwrap();
    let mut chooser = handle_resolver::wire::Chooser::seeded(5);
    assert_eq!(
        rec.select_location_with(&handle_resolver::wire::LocationRequest::new(), &mut chooser)
            .as_deref(),
        Some("https://b.example/")
    );
}

/// `Resolver::locate`: HS_ALIAS followed first (whatever the resolver's own setting), as the
/// proxy does, then the choice among the last handle's locations, by `locatt`; a template
/// is filled in with the handle asked for.
#[tokio::test(start_paused = true)]
async fn locate_follows_aliases_then_chooses() {
    use handle_resolver::wire::LocationRequest;
    let w = World::new(None);
    let xml = r#"<locations>
        <location href="https://a.example/page" view="html" weight="1"/>
        <location href="https://a.example/data.json" view="json" weight="0"/>
        <location href_template="https://t.example/{hdl}" view="tpl" weight="0"/>
    </locations>"#;
    w.store.insert(
        "20.500.1/loc-target",
        vec![HandleValue::new(1, "10320/loc", xml)],
    );
    w.store.insert(
        "20.500.1/loc-alias",
        vec![HandleValue::new(1, "HS_ALIAS", "20.500.1/loc-target")],
    );
    w.store.insert(
        "20.500.1/loc-start",
        vec![HandleValue::new(1, "HS_ALIAS", "20.500.1/loc-alias")],
    );
    w.store.insert(
        "20.500.1/loc-none",
        vec![HandleValue::new(1, "EMAIL", "x@example.org")],
    );
    let r = w.resolver();
    let locate = |wish: &'static str| {
        let r = r.clone();
        async move {
            r.locate("20.500.1/loc-start", &LocationRequest::new().locatt(wish))
                .await
                .unwrap()
        }
    };
    assert_eq!(
        locate("view:json").await.as_deref(),
        Some("https://a.example/data.json")
    );
    // A wish no location has is skipped: the weights decide (the one of weight 1).
    assert_eq!(
        locate("view:pdf").await.as_deref(),
        Some("https://a.example/page")
    );
    assert_eq!(
        locate("view:tpl").await.as_deref(),
        Some("https://t.example/20.500.1%2Floc-start")
    );
    // The resolver itself does not follow aliases: plain resolution stops at the first.
    let rec = r.resolve("20.500.1/loc-start").await.unwrap();
    assert_eq!(rec.values[0].type_str(), "HS_ALIAS");
    assert_eq!(
        r.locate("20.500.1/loc-none", &LocationRequest::new())
            .await
            .unwrap(),
        None
    );
}
