//! The whole stack on loopback: resolver → NetTransport → the test network (root, two
//! three-server sites), with the test server's faults.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use handle_resolver::testing::{Faults, TestNetwork};
use handle_resolver::transport::{NetTransport, TransportKind};
use handle_resolver::wire::HandleValue;
use handle_resolver::{AttemptOutcome, Resolver, TransportPreference};

/// 40 URL values of ~60 bytes: a ~3.5 kB answer, 8 datagrams over UDP.
fn many_values(handle: &str) -> Vec<HandleValue> {
    (1..=40)
        .map(|i| {
            HandleValue::new(
                i,
                "URL",
                format!("https://example.org/{handle}/value/{i:04}/padding-padding"),
            )
        })
        .collect()
}

async fn network() -> TestNetwork {
    TestNetwork::builder().build().await.unwrap()
}

fn resolver(net: &TestNetwork, transport: &NetTransport) -> handle_resolver::ResolverBuilder {
    Resolver::builder()
        .root_sites([net.root_site()])
        .exchange(Arc::new(transport.clone()))
}

#[tokio::test]
async fn full_chain_to_the_hashed_server_over_udp_and_tcp() {
    let net = network().await;
    let transport = NetTransport::new();
    for kind in [TransportKind::Udp, TransportKind::Tcp] {
        let pref = match kind {
            TransportKind::Udp => TransportPreference::Udp,
            _ => TransportPreference::Tcp,
        };
        let r = resolver(&net, &transport).transport(pref).build().unwrap();
        for i in 0..6 {
            let h = format!("20.500.1/{kind:?}-{i}");
            net.insert(&h, many_values(&h));
            let rec = r.resolve(h.as_str()).await.unwrap();
            assert_eq!(rec.values, many_values(&h));
            assert_eq!(rec.source.transport, kind);
            let site = net
                .sites
                .iter()
                .find(|s| {
                    s.servers
                        .iter()
                        .any(|x| Some(x.addr()) == rec.source.server)
                })
                .unwrap();
            assert_eq!(
                Some(site.server_for(h.as_bytes()).unwrap().addr()),
                rec.source.server
            );
            // The source names the answering site: its record, and its `desc` on request.
            assert_eq!(rec.source.site.as_ref().map(|s| &*s.info), Some(&site.info));
            let desc = rec.source.site_description().unwrap();
            assert!(desc.starts_with("test site "), "{desc}");
        }
        // The root was asked over the same transport.
        match kind {
            TransportKind::Udp => assert!(net.root.udp_requests() > 0),
            _ => assert!(net.root.tcp_requests() > 0),
        }
    }
    // Only hashed servers were asked: a non-hashed server never answers 301 here.
    assert_eq!(transport.pending_count(), 0);
}

#[tokio::test]
async fn thirty_percent_datagram_loss_still_resolves_everything() {
    let net = network().await;
    net.set_faults(Faults {
        drop_ratio: 0.3,
        drop_answer_ratio: 0.3,
        ..Faults::default()
    });
    let transport = NetTransport::new();
    let r = resolver(&net, &transport)
        .retransmit(vec![
            Duration::from_millis(100),
            Duration::from_millis(200),
            Duration::from_millis(300),
        ])
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let handles: Vec<String> = (0..30).map(|i| format!("20.500.1/lossy{i}")).collect();
    for h in &handles {
        net.insert(h, many_values(h));
    }
    let results: Vec<_> = r.resolve_many(handles.clone(), 10).collect().await;
    assert_eq!(results.len(), 30);
    for (h, res) in results {
        assert_eq!(res.unwrap().values, many_values(&h), "{h}");
    }
    assert_eq!(transport.pending_count(), 0);
}

#[tokio::test]
async fn silent_hashed_server_is_hedged_on_loopback() {
    let net = network().await;
    let transport = NetTransport::new();
    let r = resolver(&net, &transport).build().unwrap();
    r.resolve("20.500.1/warm-up").await.unwrap_err();
    let h = "20.500.1/hedged";
    net.insert(h, many_values(h));
    for s in &net.sites {
        s.server_for(h.as_bytes()).unwrap().set_faults(Faults {
            silent: true,
            ..Faults::default()
        });
    }
    // Both sites' hashed servers are silent: the deadline, not seconds per server, bounds it.
    let r2 = resolver(&net, &transport)
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    assert!(r2.resolve(h).await.is_err());
    net.sites[1]
        .server_for(h.as_bytes())
        .unwrap()
        .set_faults(Faults::default());
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(
        rec.source.server,
        Some(net.sites[1].server_for(h.as_bytes()).unwrap().addr())
    );
    // The silent server's attempt (when it came first) was cancelled by the answer from the
    // hedge, before its 3 s UDP schedule ran out and TCP was tried: no wall-clock bound
    // needed (the paused-clock twin in `hedge` measures the time exactly).
    let silent = net.sites[0].server_for(h.as_bytes()).unwrap().addr();
    for hop in rec.attempts.iter().filter(|hop| hop.server == Some(silent)) {
        assert_eq!(hop.outcome, AttemptOutcome::Cancelled, "{hop}");
        assert_eq!(hop.transport, TransportKind::Udp, "{hop}");
    }
    assert_eq!(transport.pending_count(), 0);
}

#[tokio::test]
async fn blocked_udp_falls_back_to_tcp() {
    let net = network().await;
    net.set_faults(Faults {
        block_udp: true,
        ..Faults::default()
    });
    let transport = NetTransport::new();
    let r = resolver(&net, &transport)
        .retransmit(vec![Duration::from_millis(100), Duration::from_millis(100)])
        .build()
        .unwrap();
    let h = "20.500.1/blocked";
    net.insert(h, many_values(h));
    let rec = r.resolve(h).await.unwrap();
    assert_eq!(rec.source.transport, TransportKind::Tcp);
    assert_eq!(rec.values, many_values(h));
    assert!(net.root.tcp_requests() > 0 && net.root.udp_requests() > 0);
}

#[tokio::test]
async fn garbage_wrong_ids_spoofed_and_bad_lengths_are_ignored() {
    let net = network().await;
    net.set_faults(Faults {
        garbage: true,
        wrong_request_id: true,
        spoof_source: true,
        truncated_length: true,
        oversized_length: true,
        ..Faults::default()
    });
    let transport = NetTransport::new();
    let r = resolver(&net, &transport).build().unwrap();
    for i in 0..5 {
        let h = format!("20.500.1/noisy{i}");
        net.insert(&h, many_values(&h));
        let rec = r.resolve(h.as_str()).await.unwrap();
        assert_eq!(rec.values, many_values(&h));
        assert_eq!(rec.source.transport, TransportKind::Udp);
    }
    assert_eq!(transport.pending_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_resolutions_leave_nothing_pending() {
    let net = TestNetwork::builder().udp_workers(2).build().await.unwrap();
    let transport = NetTransport::new();
    let r = resolver(&net, &transport)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let handles: Vec<String> = (0..10_000).map(|i| format!("20.500.1/bulk{i}")).collect();
    for h in handles.iter().step_by(2) {
        net.insert(
            h,
            vec![HandleValue::new(
                1,
                "URL",
                format!("https://example.org/{h}"),
            )],
        );
    }
    let mut found = 0;
    let mut not_found = 0;
    let mut results = r.resolve_many(handles, 10_000);
    while let Some((h, res)) = results.next().await {
        match res {
            Ok(rec) => {
                found += 1;
                assert_eq!(rec.urls(), [format!("https://example.org/{h}")]);
            }
            Err(e) => {
                assert!(e.is_not_found(), "{h}: {e}");
                not_found += 1;
            }
        }
    }
    assert_eq!((found, not_found), (5_000, 5_000));
    assert_eq!(transport.pending_count(), 0);
    assert_eq!(transport.reassembly_bytes(), 0);
    // The cold-cache service lookup (`0.NA/20.500.1`, then `0.SERV/20.500.1`) was shared by
    // all 10,000: two requests at the root (a few more only if a datagram was retransmitted).
    let root = net.root.udp_requests() + net.root.tcp_requests();
    eprintln!("10,000 concurrent resolutions: {root} requests at the root");
    assert!(root <= 4, "{root}");
}

#[tokio::test]
async fn roots_from_root_info_and_bootstrap_handles_files() {
    let net = network().await;
    let h = "20.500.1/from-file";
    net.insert(h, many_values(h));
    let dir = std::env::temp_dir().join(format!("handle-resolver-roots-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // root_info: int4 totalLen (everything after it) ‖ int4 count ‖ values.
    let mut values = bytes::BytesMut::new();
    handle_resolver::wire::encode_values(&mut values, "values", &net.root_values()).unwrap();
    let mut root_info = (values.len() as u32).to_be_bytes().to_vec();
    root_info.extend_from_slice(&values);
    std::fs::write(dir.join("root_info"), root_info).unwrap();
    // bootstrap_handles in the reference client's shape: the root's values in the REST API
    // shape, under its handle.
    let values: Vec<serde_json::Value> = net
        .root_values()
        .iter()
        .map(handle_resolver::wire::json::value_to_json)
        .collect();
    let doc = serde_json::json!({
        "lastUpdate": 1_767_225_600_000u64,
        "handles": {"0.NA/0.NA": {"handle": "0.NA/0.NA", "values": values}},
    });
    std::fs::write(dir.join("bootstrap_handles"), doc.to_string()).unwrap();
    let transport = NetTransport::new();
    for builder in [
        Resolver::builder().root_info_file(dir.join("root_info")),
        Resolver::builder().bootstrap_handles_file(dir.join("bootstrap_handles")),
    ] {
        let r = builder
            .exchange(Arc::new(transport.clone()))
            .certify(true)
            .build()
            .unwrap();
        let rec = r.resolve(h).await.unwrap();
        assert_eq!(rec.values, many_values(h));
        // The root's key came with the file, so the whole chain was verified.
        assert!(rec.source.certified);
    }
    let missing = Resolver::builder()
        .root_info_file(dir.join("nope"))
        .build()
        .unwrap_err();
    assert!(
        matches!(missing, handle_resolver::BuildError::ReadRootFile { .. }),
        "{missing}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The reference client's own root files (`fixtures/reference/root-files`), as `--root FILE`
/// hands them to the builder: built, not contacted.
#[test]
fn reference_root_files_through_the_builder() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference/root-files");
    let sites = |b: handle_resolver::ResolverBuilder| {
        let r = b.exchange(Arc::new(NetTransport::new())).build().unwrap();
        let mut addrs: Vec<String> = r
            .root_sites()
            .iter()
            .map(|s| s.info.servers[0].address.to_string())
            .collect();
        addrs.sort();
        addrs
    };
    // `resolve --root FILE` tells the files apart by their first byte.
    let bootstrap = dir.join("bootstrap_handles");
    assert_eq!(std::fs::read(&bootstrap).unwrap().first(), Some(&b'{'));
    let from_json = sites(Resolver::builder().bootstrap_handles_file(&bootstrap));
    assert_eq!(from_json.len(), 13, "{from_json:?}");
    // The built-in root is the same file.
    assert_eq!(sites(Resolver::builder()), from_json);
    // root_info holds the HS_SITE values of 0.NA/0.NA only (not the 0.GHR/... services).
    let from_binary = sites(Resolver::builder().root_info_file(dir.join("root_info")));
    assert_eq!(
        from_binary,
        [
            "132.151.1.179",
            "134.76.10.100",
            "196.12.152.22",
            "212.193.120.1",
            "38.100.138.131",
            "38.100.138.153",
            "41.231.118.2",
            "86.111.195.107"
        ]
    );
    assert!(from_binary.iter().all(|a| from_json.contains(a)));
}
