//! The test server's answers: resolution rules, the hash rule, site information, signed
//! answers, referrals, the network chain, and the JSON store file.

use std::sync::Arc;

use bytes::Bytes;
use handle_resolver::testing::{
    Referral, Store, StoreFile, TestNetwork, TestServer, TestServerConfig,
};
use handle_resolver::transport::{Exchange, NetTransport, TransportKind};
use handle_resolver::wire::{signed_data, verify_message};
use handle_resolver::wire::{
    Body, GetSiteInfoRequest, HandleValue, Limits, Message, OpCode, OpFlags, Permissions, Protocol,
    PublicKey, ReferralBody, ResponseCode, SiteInfo,
};
use rsa::Pkcs1v15Sign;
use sha2::{Digest, Sha256};

use super::{answer_values, b, expiration, options, request, server};

async fn ask(server: std::net::SocketAddr, req: &Message) -> Message {
    NetTransport::new()
        .exchange(server, TransportKind::Udp, req, &options(&[2000]))
        .await
        .unwrap()
        .message
}

#[tokio::test]
async fn resolution_rules_filters_po_and_errors() {
    let store = Arc::new(Store::new());
    let mut secret = HandleValue::new(3, "SECRET", "s");
    secret.permissions = Permissions(0x0C);
    store.insert(
        "20.500.1/x",
        vec![
            HandleValue::new(1, "URL", "https://example.org/"),
            HandleValue::new(2, "URL.mirror", "https://mirror.example.org/"),
            secret,
        ],
    );
    store.home_prefix("20.500.1");
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let addr = server.addr();

    // PO (set by default): the non-public value is left out.
    let all = ask(addr, &request("20.500.1/x")).await;
    let idx: Vec<u32> = answer_values(&all).iter().map(|v| v.index).collect();
    assert_eq!(idx, vec![1, 2]);
    // The handle is echoed as asked (prefix case-folded on lookup).
    match &all.body {
        Body::ResolutionResponse(r) => assert_eq!(&r.handle[..], b"20.500.1/x"),
        _ => unreachable!(),
    }
    let lower = ask(addr, &request("20.500.1/x".to_lowercase().as_str())).await;
    assert_eq!(lower.header.response_code, ResponseCode::Success);

    // Type hierarchy filter.
    let req = Message::resolution_request("20.500.1/x", vec![], vec![b("url.")], 1, expiration());
    assert_eq!(answer_values(&ask(addr, &req).await).len(), 2);
    // No match: 200.
    let req = Message::resolution_request("20.500.1/x", vec![], vec![b("HS_")], 1, expiration());
    assert_eq!(
        ask(addr, &req).await.header.response_code,
        ResponseCode::ValuesNotFound
    );
    // PO cleared and a restricted value selected: 402.
    let mut req = request("20.500.1/x");
    req.header.flags = req.header.flags.without(OpFlags::PO);
    assert_eq!(
        ask(addr, &req).await.header.response_code,
        ResponseCode::AuthenticationNeeded
    );
    // Missing handle: 100. Foreign prefix: 301.
    assert_eq!(
        ask(addr, &request("20.500.1/nope"))
            .await
            .header
            .response_code,
        ResponseCode::HandleNotFound
    );
    assert_eq!(
        ask(addr, &request("99.999/abc")).await.header.response_code,
        ResponseCode::ServerNotResponsible
    );
}

#[tokio::test]
async fn referral_is_answered_as_configured() {
    let store = Arc::new(Store::new());
    store.insert_referral(
        "20.500.1/moved",
        Referral {
            code: ResponseCode::ServiceReferral,
            body: ReferralBody {
                referral_handle: b("0.SERV/elsewhere"),
                values: None,
            },
        },
    );
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let answer = ask(server.addr(), &request("20.500.1/moved")).await;
    assert_eq!(answer.header.response_code, ResponseCode::ServiceReferral);
    match answer.body {
        Body::Referral(r) => assert_eq!(&r.referral_handle[..], b"0.SERV/elsewhere"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn get_site_info_describes_the_server_with_its_key() {
    let server = server(1).await;
    let req = Message::request(
        Body::GetSiteInfoRequest(GetSiteInfoRequest { handle: b("/") }),
        OpCode::GetSiteInfo,
        1,
        expiration(),
    );
    let answer = ask(server.addr(), &req).await;
    let record = match answer.body {
        Body::SiteInfoResponse(s) => s.record,
        other => panic!("{other:?}"),
    };
    let site = SiteInfo::decode(&record, &Limits::default()).unwrap();
    assert_eq!(site, server.site_info());
    let s = &site.servers[0];
    assert_eq!(s.socket_addr(Protocol::Udp, false), Some(server.addr()));
    assert_eq!(s.socket_addr(Protocol::Tcp, true), Some(server.addr()));
    let key = s.public_key().unwrap().unwrap();
    assert_eq!(key, PublicKey::from_rsa(server.key().public_key()));
    assert_eq!(answer.header.site_info_serial, site.serial);
}

#[tokio::test]
async fn certified_answer_is_signed_with_the_server_key() {
    let server = server(1).await;
    for kind in [TransportKind::Udp, TransportKind::Tcp] {
        let mut req = request("20.500.1/small");
        req.header.flags = req.header.flags.with(OpFlags::CT);
        let answer = NetTransport::new()
            .exchange(server.addr(), kind, &req, &options(&[2000]))
            .await
            .unwrap()
            .message;
        assert!(answer.header.flags.contains(OpFlags::CT));
        let cred = answer.credential.clone().expect("a credential");
        assert_eq!(&cred.credential_type[..], b"HS_SIGNED");
        assert_eq!(&cred.digest_algorithm[..], b"SHA-256");
        // PROTOCOL.md §9.2 for version 2.11: 16-byte prefix ‖ header ‖ body.
        let data = signed_data(
            answer.envelope.version,
            answer.envelope.suggested,
            answer.envelope.session_id,
            answer.envelope.request_id,
            cred.signer.index,
            &answer.signed_bytes,
        );
        assert_eq!(data.len(), 16 + answer.signed_bytes.len());
        let key = server.key().public_key();
        key.verify(
            Pkcs1v15Sign::new::<Sha256>(),
            &Sha256::digest(&data),
            &cred.signature,
        )
        .unwrap();
        // The library's own check agrees, with the key from the server's HS_SITE.
        let site_key = server.site_info().servers[0].public_key().unwrap().unwrap();
        verify_message(&answer, &site_key).unwrap();
        // One changed byte of the signed region and it no longer verifies.
        let mut bad = data.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(key
            .verify(
                Pkcs1v15Sign::new::<Sha256>(),
                &Sha256::digest(&bad),
                &cred.signature
            )
            .is_err());
    }
}

fn values_of<'a>(m: &'a Message, t: &str) -> Vec<&'a HandleValue> {
    answer_values(m).iter().filter(|v| v.is_type(t)).collect()
}

#[tokio::test]
async fn network_chain_root_serv_site_hashed_server() {
    let net = TestNetwork::builder()
        .sites(2)
        .servers_per_site(3)
        .build()
        .await
        .unwrap();
    let handle = "20.500.1/chain";
    net.insert(handle, super::values(30, 100));
    let root = net.root.addr();
    // Root: 0.NA/20.500.1 → HS_SERV 0.SERV/20.500.1.
    let prefix = ask(root, &request("0.NA/20.500.1")).await;
    let serv = values_of(&prefix, "HS_SERV");
    assert_eq!(&serv[0].data[..], b"0.SERV/20.500.1");
    // Root: 0.SERV/20.500.1 → one HS_SITE per site.
    let service = ask(root, &request("0.SERV/20.500.1")).await;
    let sites: Vec<SiteInfo> = values_of(&service, "HS_SITE")
        .iter()
        .map(|v| SiteInfo::decode(&v.data, &Limits::default()).unwrap())
        .collect();
    assert_eq!(sites.len(), 2);
    for (i, site) in sites.iter().enumerate() {
        assert_eq!(site.servers.len(), 3);
        let chosen = site.server_index_for(handle.as_bytes()).unwrap();
        for (k, s) in site.servers.iter().enumerate() {
            let addr = s.socket_addr(Protocol::Udp, false).unwrap();
            let answer = ask(addr, &request(handle)).await;
            if k == chosen {
                assert_eq!(answer_values(&answer).len(), 30, "site {i} server {k}");
            } else {
                // The hash rule: any other server of the site refuses.
                assert_eq!(
                    answer.header.response_code,
                    ResponseCode::ServerNotResponsible
                );
            }
        }
        assert_eq!(
            net.sites[i].server_for(handle.as_bytes()).unwrap().addr(),
            site.servers[chosen]
                .socket_addr(Protocol::Tcp, false)
                .unwrap()
        );
    }
    // The root's own site is at 0.NA/0.NA and matches root_values().
    let root_info = ask(root, &request("0.NA/0.NA")).await;
    assert_eq!(answer_values(&root_info), &net.root_values()[..]);
}

#[tokio::test]
async fn store_file_json_loads_with_self_site() {
    let text = r#"{
        "homed_prefixes": ["20.500.1", "0.NA"],
        "handles": {
            "20.500.1/x": [
                {"index": 1, "type": "URL", "data": "https://example.org/"},
                {"index": 2, "type": "BIN", "data_hex": "00ff", "permissions": 12, "ttl": 5}
            ],
            "0.NA/20.500.1": [{"index": 1, "type": "HS_SITE", "self_site": true}]
        },
        "referrals": {"20.500.1/moved": {"code": 303, "handle": ""}}
    }"#;
    let file = StoreFile::parse(text).unwrap();
    let store = Arc::new(file.new_store());
    let server = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    let record: Bytes = server.site_value(1).data;
    file.fill(&store, &record).unwrap();
    let x = store.get("20.500.1/x").unwrap();
    assert_eq!(&x.values[1].data[..], &[0x00, 0xff]);
    assert_eq!(x.values[1].permissions, Permissions(12));
    let site = ask(server.addr(), &request("0.NA/20.500.1")).await;
    assert_eq!(answer_values(&site)[0].data, record);
    let moved = ask(server.addr(), &request("20.500.1/moved")).await;
    assert_eq!(moved.header.response_code, ResponseCode::PrefixReferral);
    assert!(StoreFile::parse(r#"{"handles": {"a/b": [{"index": 1}]}}"#).is_err());
}

#[tokio::test]
async fn sample_store_file_serves_its_own_chain() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/testserver/handles.json"
    );
    let file = StoreFile::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let store = Arc::new(file.new_store());
    let server = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    file.fill(&store, &server.site_value(1).data).unwrap();
    // 0.NA/20.500.1 points at this very server.
    let prefix = ask(server.addr(), &request("0.NA/20.500.1")).await;
    let site =
        SiteInfo::decode(&values_of(&prefix, "HS_SITE")[0].data, &Limits::default()).unwrap();
    let addr = site.servers[0].socket_addr(Protocol::Udp, false).unwrap();
    assert_eq!(addr, server.addr());
    // 20.500.1/1: four values, one of them not public.
    let answer = ask(addr, &request("20.500.1/1")).await;
    let idx: Vec<u32> = answer_values(&answer).iter().map(|v| v.index).collect();
    assert_eq!(idx, vec![1, 2, 3]);
}

/// The s2c datagrams of a capture folder, reassembled into envelope ‖ message.
fn captured_answer(folder: &str) -> Bytes {
    let dir = format!(
        "{}/fixtures/reference/captures/{folder}",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("_s2c_udp_") && n.ends_with(".bin"))
        .collect();
    names.sort();
    let mut reassembly = None;
    for n in names {
        let d = Bytes::from(std::fs::read(format!("{dir}/{n}")).unwrap());
        let env = handle_resolver::wire::Envelope::decode(&mut handle_resolver::wire::Reader::new(
            d.clone(),
        ))
        .unwrap();
        let p = reassembly.get_or_insert_with(|| {
            handle_resolver::wire::PartialMessage::new(env, &Limits::default()).unwrap()
        });
        if let Some(message) = p.push(d).unwrap() {
            let mut full = bytes::BytesMut::new();
            let mut env0 = *p.envelope();
            env0.sequence_number = 0;
            env0.encode(&mut full);
            full.extend_from_slice(&message);
            return full.freeze();
        }
    }
    panic!("incomplete capture {folder}");
}

#[tokio::test]
async fn raw_answers_replay_captures_with_our_request_id() {
    let store = Arc::new(Store::new());
    let small = captured_answer("udp_resolve_all");
    let large = captured_answer("udp_large");
    store.insert_raw_answer("20.500.12345/1", small.clone());
    store.insert_raw_answer("20.500.12345/LARGE", large.clone());
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    for (handle, recorded, kind) in [
        ("20.500.12345/1", &small, TransportKind::Udp),
        ("20.500.12345/LARGE", &large, TransportKind::Udp),
        ("20.500.12345/LARGE", &large, TransportKind::Tcp),
    ] {
        let req = request(handle);
        let answer = NetTransport::new()
            .exchange(server.addr(), kind, &req, &options(&[2000]))
            .await
            .unwrap()
            .message;
        let expected = Message::decode(recorded.clone(), &Limits::default()).unwrap();
        assert_eq!(answer_values(&answer), answer_values(&expected));
        assert_eq!(answer.header.expiration, req.header.expiration);
        assert_ne!(answer.request_id(), expected.request_id());
    }
    assert_eq!(
        answer_values(&Message::decode(large, &Limits::default()).unwrap()).len(),
        42
    );
}

#[tokio::test]
async fn raw_answer_too_short_to_patch_gets_an_error_answer() {
    // A recorded answer of 30 bytes: room for the request id (envelope bytes 8..12) but not
    // for the expiration (header bytes 16..20, message bytes 36..40). The server must not
    // send it half patched; it answers RC 2 ERROR to our request instead.
    let store = Arc::new(Store::new());
    let recorded = captured_answer("udp_resolve_all");
    store.insert_raw_answer("10.1045/short", recorded.slice(..30));
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let answer = ask(server.addr(), &request("10.1045/short")).await;
    assert_eq!(answer.header.response_code, ResponseCode::Error);
    assert_eq!(answer.header.op_code, OpCode::Resolution);
}

// Paused clock: the delay and the client's wait are virtual, so the outcome does not depend
// on the machine's load.
#[tokio::test(start_paused = true)]
async fn dropped_server_sends_no_delayed_answer() {
    use handle_resolver::testing::Faults;
    let server = server(1).await;
    server.set_faults(Faults {
        delay: std::time::Duration::from_millis(200),
        ..Faults::default()
    });
    let client = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let req = request("20.500.1/small").encode().unwrap();
    client.send_to(&req, server.addr()).await.unwrap();
    // The request is in: its answer is now waiting out the delay.
    while server.udp_requests() == 0 {
        tokio::task::yield_now().await;
    }
    drop(server);
    let mut buf = [0u8; 2048];
    let got = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        client.recv_from(&mut buf),
    )
    .await;
    assert!(got.is_err(), "a dropped server answered: {got:?}");
}

// Paused clock: the waits for answers are virtual, so a missing answer fails at once.
#[tokio::test(start_paused = true)]
async fn fragmented_requests_of_two_clients_with_the_same_id_do_not_mix() {
    use handle_resolver::wire::{fragment, Reassembler, ReassemblerConfig};
    let store = Arc::new(Store::new());
    // Two handles of the same length: their requests differ only in the handle's letters.
    let handles = [
        format!("20.500.1/{}", "a".repeat(1200)),
        format!("20.500.1/{}", "b".repeat(1200)),
    ];
    for (i, h) in handles.iter().enumerate() {
        store.insert(h, vec![HandleValue::new(1, "URL", format!("client {i}"))]);
    }
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let mut clients = Vec::new();
    let mut datagrams = Vec::new();
    for h in &handles {
        clients.push(tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap());
        // The same request id, 77, for both.
        let mut req = Message::resolution_request(b(h), vec![], vec![], 77, expiration());
        req.envelope.truncated = true;
        let frags = fragment(&req.encode().unwrap());
        assert_eq!(frags.len(), 3);
        datagrams.push(frags);
    }
    // Interleaved: fragment k of client 0, then fragment k of client 1.
    for k in 0..3 {
        for (c, frags) in clients.iter().zip(&datagrams) {
            c.send_to(&frags[k], server.addr()).await.unwrap();
        }
    }
    for (i, c) in clients.iter().enumerate() {
        // The answers echo the 1209-byte handle: several datagrams each.
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let answer = loop {
            let mut buf = [0u8; 2048];
            let (n, _) =
                tokio::time::timeout(std::time::Duration::from_secs(5), c.recv_from(&mut buf))
                    .await
                    .unwrap_or_else(|_| panic!("client {i} got no whole answer"))
                    .unwrap();
            let d = Bytes::copy_from_slice(&buf[..n]);
            if let Some(m) = r.push(d, std::time::Instant::now()).unwrap() {
                break m;
            }
        };
        assert_eq!(answer.request_id(), 77);
        let v = answer_values(&answer);
        assert_eq!(&v[0].data[..], format!("client {i}").as_bytes());
    }
}
