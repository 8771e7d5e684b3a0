//! The three `session_*` scenarios of captures-auth, recomputed from their inputs: the
//! client's Diffie-Hellman key from its private exponent, the session key from the server's
//! public value, the session an answer opens, every request sent in the session byte for byte
//! (MAC, session counter, encryption under the captured IV) and every answer opened.

use bytes::Bytes;
use handle_resolver::auth::{answer_setup, DhKeyPair, Identity};
use handle_resolver::wire::{
    carries_restricted_values, open_message, verify_message, Body, Envelope, Limits, Message,
    Reader, SessionKey,
};
use serde_json::Value;
use zeroize::Zeroizing;

use super::captures::auth_dir;
use crate::support::captures::{scenario, Direction, Scenario};

const SESSIONS: [&str; 3] = [
    "session_admin_rsa_create_delete",
    "session_admin_seckey_create_delete",
    "session_resolve_seckey",
];

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn auth_json(s: &Scenario) -> Value {
    serde_json::from_str(&std::fs::read_to_string(s.dir.join("auth.json")).unwrap()).unwrap()
}

/// The setup answer's entry in `auth.json` (its key names the answer's files).
fn setup_entry(auth: &Value) -> &Value {
    auth["session"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with("setup_"))
        .map(|(_, v)| v)
        .unwrap()
}

fn split(frame: &Bytes) -> (Envelope, Bytes) {
    let mut r = Reader::new(frame.clone());
    let envelope = Envelope::decode(&mut r).unwrap();
    (envelope, r.rest())
}

#[test]
fn the_client_key_and_the_session_key_follow_from_the_exponents() {
    for name in SESSIONS {
        let s = scenario("captures-auth", name);
        let auth = auth_json(&s);
        let client = &auth["session"]["clientState"];
        let pair = DhKeyPair::from_secret(&unhex(&client["clientDhPrivateXHex"])).unwrap();
        assert_eq!(
            hex::encode(pair.public_key().encode().unwrap()),
            client["clientDhPublicKeyHdllibHex"].as_str().unwrap(),
            "{name}: the client's DH_PUB_KEY"
        );
        let setup = setup_entry(&auth);
        let key = pair.agree(&unhex(&setup["serverDhYHex"])).unwrap();
        assert_eq!(
            hex::encode(*key),
            client["sessions"][0]["sessionKeyHex"].as_str().unwrap(),
            "{name}: the session key"
        );
    }
}

#[test]
fn the_setup_request_is_the_captured_one_and_its_answer_opens_the_session() {
    let server_key = handle_resolver::wire::PublicKey::decode(
        &std::fs::read(auth_dir().join("keys/server_pubkey.bin")).unwrap(),
    )
    .unwrap();
    for name in SESSIONS {
        let s = scenario("captures-auth", name);
        let auth = auth_json(&s);
        let client = &auth["session"]["clientState"];
        let pair = DhKeyPair::from_secret(&unhex(&client["clientDhPrivateXHex"])).unwrap();
        let label = |class: &str| {
            s.decoded
                .iter()
                .find(|e| e["class"] == class)
                .map(|e| e["file"].as_str().unwrap().to_string())
                .unwrap()
        };
        // Our setup request, with the captured request id, version and expiration, is the
        // captured one byte for byte.
        let sent = s.message(&label("SessionSetupRequest")).unwrap().frame();
        let captured = Message::decode(sent.clone(), &Limits::default()).unwrap();
        let Body::SessionSetupRequest(b) = &captured.body else {
            panic!("{name}: not a setup request")
        };
        let identity = Identity::new(b.identity.index, b.identity.handle.clone());
        let mut ours = pair.setup_request(&identity, captured.header.expiration);
        ours.envelope = captured.envelope;
        ours.header.site_info_serial = captured.header.site_info_serial;
        assert_eq!(ours.encode().unwrap(), sent, "{name}: setup request");

        let answer = s.message(&label("SessionSetupResponse")).unwrap().frame();
        let answer = Message::decode(answer, &Limits::default()).unwrap();
        verify_message(&answer, &server_key).unwrap();
        let session = pair.accept(&answer).unwrap();
        let setup = setup_entry(&auth);
        assert_eq!(
            u64::from(session.session_id()),
            setup["sessionId"].as_u64().unwrap()
        );
    }
}

#[test]
fn the_server_side_of_a_setup_agrees_on_the_same_key() {
    let client = DhKeyPair::generate();
    let server = DhKeyPair::generate();
    let request = client.setup_request(&Identity::new(300, "20.500.12345/USER-SECKEY"), 0);
    let Body::SessionSetupRequest(body) = &request.body else {
        panic!("not a setup request")
    };
    let (data, server_key) = answer_setup(body, &server).unwrap();
    let mut answer = Message::response_to(
        &request,
        handle_resolver::wire::ResponseCode::Success,
        Body::SessionSetupResponse(handle_resolver::wire::SessionSetupResponse {
            key_exchange_mode: 4,
            data,
            trailer: Bytes::from_static(&[0, 0]),
        }),
    );
    answer.envelope.session_id = 9;
    let answer = Message::decode(answer.encode().unwrap(), &Limits::default()).unwrap();
    let session = client.accept(&answer).unwrap();
    let m = Message::resolution_request("0.NA/1", vec![], vec![], 1, 0);
    let sealed = session.seal(&m, 77).unwrap();
    let (env, rest) = split(&sealed);
    let opened = session.open(env, rest, &Limits::default()).unwrap();
    assert!(SessionKey::new(9, server_key).verify_mac(&opened));
    assert!(!SessionKey::new(9, Zeroizing::new([0; 32])).verify_mac(&opened));
}

/// Every client message sent inside a session (a credential or EC), rebuilt from its
/// plaintext with the captured request id, counter and IV: the captured bytes.
#[test]
fn requests_in_the_session_are_sealed_byte_for_byte() {
    let mut checked = 0;
    for name in SESSIONS {
        let s = scenario("captures-auth", name);
        let auth = auth_json(&s);
        let setup = setup_entry(&auth);
        let key: [u8; 32] = unhex(&auth["session"]["clientState"]["sessions"][0]["sessionKeyHex"])
            .try_into()
            .unwrap();
        let sid = setup["sessionId"].as_u64().unwrap() as u32;
        let session = SessionKey::new(sid, Zeroizing::new(key));
        for entry in &s.decoded {
            let cap = s.message(entry["file"].as_str().unwrap()).unwrap();
            if cap.direction != Direction::C2s || entry["envelope"]["sessionId"] != sid {
                continue;
            }
            let frame = cap.frame();
            let (env, rest) = split(&frame);
            let m = session.open(env, rest.clone(), &Limits::default()).unwrap();
            let request_id = env.request_id;
            let iv: [u8; 16] = if env.encrypted {
                rest[..16].try_into().unwrap()
            } else {
                [0; 16]
            };
            let counter = m.credential.as_ref().map_or(0, |c| c.signer.index);
            let mut plain = m.clone();
            plain.credential = None;
            plain.envelope.encrypted = false;
            plain.envelope.session_id = 0;
            plain.signed_bytes = Bytes::new();
            let sealed = session.seal_with(&plain, request_id, counter, &iv).unwrap();
            assert_eq!(sealed, frame, "{name}: {}", entry["file"]);
            if !matches!(m.body, Body::ChallengeAnswer(_)) {
                assert!(session.verify_mac(&m), "{name}: MAC of {}", entry["file"]);
            }
            checked += 1;
        }
    }
    // 3 in each admin session (create, its answer, delete), 2 in the resolution.
    assert_eq!(checked, 8);
}

/// Every answer of a session opens (decrypted when encrypted) to what the reference decoded.
#[test]
fn answers_in_the_session_open() {
    let mut encrypted = 0;
    for name in SESSIONS {
        let s = scenario("captures-auth", name);
        let auth = auth_json(&s);
        let setup = setup_entry(&auth);
        let key: [u8; 32] = unhex(&auth["session"]["clientState"]["sessions"][0]["sessionKeyHex"])
            .try_into()
            .unwrap();
        let session = SessionKey::new(
            setup["sessionId"].as_u64().unwrap() as u32,
            Zeroizing::new(key),
        );
        for entry in &s.decoded {
            let cap = s.message(entry["file"].as_str().unwrap()).unwrap();
            if cap.direction != Direction::S2c {
                continue;
            }
            let (env, rest) = split(&cap.frame());
            let m = session.open(env, rest.clone(), &Limits::default()).unwrap();
            if env.encrypted {
                encrypted += 1;
                assert!(carries_restricted_values(&m));
                // Without the session it is refused, not misread.
                assert!(open_message(None, env, rest, &Limits::default()).is_err());
                let iv: [u8; 16] = cap.frame()[20..36].try_into().unwrap();
                assert_eq!(session.seal_answer(&m, &iv).unwrap(), cap.frame());
            }
        }
    }
    assert_eq!(encrypted, 1, "the resolution's answer");
}
