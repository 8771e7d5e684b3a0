//! Sessions: the Diffie-Hellman setup answer, both sides (`auth::DhKeyPair::accept`,
//! `auth::answer_setup`), and the messages of an open session (`wire::open_message`,
//! `SessionKey::open`, `SessionKey::verify_mac`).
//!
//! Input: byte 0 the mode, the rest one whole message (envelope included). `mode >> 2`
//! (mod 3) picks one of the three captured sessions of `captures-auth` (`session_*`,
//! `auth.json`): the client's Diffie-Hellman pair (its private exponent), the session id
//! and the session key. `mode & 3`:
//! - 0: the message is a setup answer to that client: `Message::decode`, then `accept`;
//! - 1: the message is a setup request to a server with a fixed pair: `Message::decode`,
//!   then `answer_setup` on its body;
//! - 2: the message arrives in that session: envelope, then `open_message(Some(key), …)`, and
//!   `verify_mac` on what opens;
//! - 3: the message arrives with no session: envelope, then `open_message(None, …)`.
//!
//! Properties: nothing panics, and
//! - `accept` gives a key exactly when the answer is op code 400, success, key exchange mode
//!   4, `int4 3` (AES) then a `DH_PUB_KEY` over the 1024-bit group 2 (g = 2) whose public
//!   value is in 2..p-2, and a session id other than 0 (checked here independently of the
//!   crate's checks; no key for a value outside 2..p-2); the key has the answer's session
//!   id; the captured answer's server value and session id give the captured session key;
//! - `answer_setup` answers exactly when the request is mode 4 with a `DH_PUB_KEY` over group 2
//!   whose value is in 2..p-2; its data is `int4 3 ‖` the server pair's key; the client
//!   accepts that answer, and when the request carries the client's own public value both
//!   sides hold the same key;
//! - `open` of a message without EC is `Message::decode_parts`, with or without a session;
//!   with EC and no session it is `NoSession`; with the session it is the plaintext's
//!   message (`decode` of the envelope without EC and the decrypted bytes) under the
//!   envelope as received, and a ciphertext of the right length that does not decrypt is
//!   `Decrypt`; `SessionKey::open` is `open_message(Some(…))`;
//! - a decrypted message re-encrypted with the input's IV gives back the input, whenever the
//!   plaintext re-encodes to itself;
//! - `verify_mac` is true exactly when the credential is `HS_MAC` / `HMAC-SHA256` of this
//!   session id whose signature is `SessionKey::mac` of the message with its request id and
//!   counter; never under another key; every message that opens, sealed again in the session
//!   (`seal_with`, same request id and counter), opens to the same body and its MAC verifies
//!   (an answer to a challenge is sealed without one).
#![no_main]

use std::sync::OnceLock;

use bytes::{BufMut, Bytes, BytesMut};
use handle_resolver::auth::{answer_setup, DhKeyPair, DH_GROUP2_PRIME};
use handle_resolver::wire::HS_MAC;
use handle_resolver::wire::{decrypt_payload, SESSION_IV_LEN};
use handle_resolver::wire::{open_message, SESSION_KEY_LEN, SESSION_MAC_DIGEST};
use handle_resolver::wire::{
    Body, CryptError, Envelope, Limits, Message, OpCode, PublicKey, Reader, ResponseCode,
    SessionKey, SessionSetupResponse, ENVELOPE_LEN,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;
use zeroize::Zeroizing;

/// Key exchange mode 4: Diffie-Hellman.
const MODE_DH: u16 = 4;
/// Session cipher 3: AES.
const AES: [u8; 4] = [0, 0, 0, 3];

/// One captured session: the client's pair, the server's public value, the session.
struct Captured {
    client: DhKeyPair,
    /// The client's public value, leading zeros stripped.
    client_y: Vec<u8>,
    /// The server's public value of the captured setup answer, leading zeros stripped.
    server_y: Vec<u8>,
    session: SessionKey,
    /// The session key's bytes (a `SessionKey` does not give them out).
    key: Zeroizing<Vec<u8>>,
    /// The same session id under other key bytes.
    other: SessionKey,
}

struct Fixed {
    captured: Vec<Captured>,
    /// The server side of mode 1.
    server: DhKeyPair,
}

fn unhex(v: &Json) -> Vec<u8> {
    hex::decode(v.as_str().expect("a hex string")).expect("hex")
}

fn key32(bytes: &[u8]) -> Zeroizing<[u8; SESSION_KEY_LEN]> {
    Zeroizing::new(bytes.try_into().expect("a 32-byte session key"))
}

fn captured(auth_json: &str) -> Captured {
    let doc: Json = serde_json::from_str(auth_json).expect("auth.json");
    let s = &doc["session"];
    let state = &s["clientState"];
    let session = &state["sessions"][0];
    let id = u32::try_from(session["sessionId"].as_u64().expect("session id")).expect("u32");
    let key = unhex(&session["sessionKeyHex"]);
    let setup = s
        .as_object()
        .expect("session")
        .iter()
        .find(|(k, _)| k.starts_with("setup_"))
        .expect("the setup answer")
        .1;
    let client = DhKeyPair::from_secret(&unhex(&state["clientDhPrivateXHex"])).expect("x ≥ 2");
    let PublicKey::Dh { y, .. } = client.public_key() else {
        unreachable!("a DH key pair's public key")
    };
    let mut other = key.clone();
    other[0] ^= 1;
    Captured {
        client_y: strip(&y).to_vec(),
        server_y: strip(&unhex(&setup["serverDhYHex"])).to_vec(),
        client,
        session: SessionKey::new(id, key32(&key)),
        key: Zeroizing::new(key),
        other: SessionKey::new(id, key32(&other)),
    }
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| Fixed {
        captured: [
            include_str!("../../fixtures/reference/captures-auth/session_admin_rsa_create_delete/auth.json"),
            include_str!("../../fixtures/reference/captures-auth/session_admin_seckey_create_delete/auth.json"),
            include_str!("../../fixtures/reference/captures-auth/session_resolve_seckey/auth.json"),
        ]
        .into_iter()
        .map(captured)
        .collect(),
        server: DhKeyPair::from_secret(&[0x5A; 32]).expect("x ≥ 2"),
    })
}

/// A big-endian number without its leading zero bytes.
fn strip(n: &[u8]) -> &[u8] {
    let first = n.iter().position(|b| *b != 0).unwrap_or(n.len());
    &n[first..]
}

/// `2 ≤ y ≤ p - 2` for group 2's prime (which ends in 0xFF, so p - 2 is p with its last
/// byte 0xFD).
fn in_range(y: &[u8]) -> bool {
    let y = strip(y);
    let mut p_minus_2 = DH_GROUP2_PRIME;
    p_minus_2[127] -= 2;
    let at_least_2 = y.len() > 1 || y.first().is_some_and(|b| *b >= 2);
    let at_most = y.len() < 128 || (y.len() == 128 && y <= &p_minus_2[..]);
    at_least_2 && at_most
}

/// The public value of a `DH_PUB_KEY` over group 2 with g = 2, else `None`.
fn group2_value(blob: &Bytes) -> Option<Bytes> {
    match PublicKey::decode_bytes(blob) {
        Ok(PublicKey::Dh { y, p, g, .. })
            if strip(&p) == &DH_GROUP2_PRIME[..] && strip(&g) == [2] =>
        {
            Some(y)
        }
        _ => None,
    }
}

/// A message to compare two session keys by their MACs.
fn probe() -> &'static Message {
    static PROBE: OnceLock<Message> = OnceLock::new();
    PROBE.get_or_init(|| Message::resolution_request("0.NA/0.NA", vec![], vec![], 1, 0))
}

fn same_key(a: &SessionKey, b: &SessionKey) -> bool {
    a.session_id() == b.session_id()
        && a.mac(probe(), 1, 1).expect("MAC") == b.mac(probe(), 1, 1).expect("MAC")
}

fn accept(c: &Captured, frame: Bytes, limits: &Limits) {
    let Ok(m) = Message::decode(frame, limits) else {
        return;
    };
    let got = c.client.accept(&m);
    // What the answer must be for a key, read here field by field.
    let expected = match &m.body {
        Body::SessionSetupResponse(b)
            if m.header.op_code == OpCode::SessionSetup
                && m.response_code() == ResponseCode::Success
                && b.key_exchange_mode == MODE_DH
                && b.data.get(..4) == Some(&AES[..])
                && m.envelope.session_id != 0 =>
        {
            group2_value(&b.data.slice(4..)).filter(|y| in_range(y))
        }
        _ => None,
    };
    match (got, expected) {
        (Ok(key), Some(y)) => {
            assert_eq!(key.session_id(), m.envelope.session_id);
            if strip(&y) == c.server_y && m.envelope.session_id == c.session.session_id() {
                assert!(same_key(&key, &c.session), "not the captured session key");
            }
        }
        (Err(_), None) => {}
        (got, expected) => panic!(
            "accept gave {got:?}, expected a key: {}",
            expected.is_some()
        ),
    }
}

fn setup_request(c: &Captured, server: &DhKeyPair, frame: Bytes, limits: &Limits) {
    let Ok(m) = Message::decode(frame, limits) else {
        return;
    };
    let Body::SessionSetupRequest(request) = &m.body else {
        return;
    };
    let got = answer_setup(request, server);
    let client_y = request
        .public_key
        .as_ref()
        .filter(|_| request.key_exchange_mode == MODE_DH)
        .and_then(group2_value)
        .filter(|y| in_range(y));
    let (data, key) = match (got, client_y) {
        (Ok(answer), Some(_)) => answer,
        (Err(_), None) => return,
        (got, y) => panic!(
            "answer_setup gave {:?}, expected an answer: {}",
            got.map(|(d, _)| d),
            y.is_some()
        ),
    };
    assert_eq!(&data[..4], &AES[..]);
    assert_eq!(
        PublicKey::decode_bytes(&data.slice(4..)).expect("the server's key decodes"),
        server.public_key()
    );
    // The client takes the answer; with its own public value in the request, both sides
    // hold the same key.
    let mut answer = Message::response_to(
        &m,
        ResponseCode::Success,
        Body::SessionSetupResponse(SessionSetupResponse {
            key_exchange_mode: MODE_DH,
            data,
            trailer: Bytes::new(),
        }),
    );
    answer.header.op_code = OpCode::SessionSetup;
    answer.envelope.session_id = 7;
    let theirs = c
        .client
        .accept(&answer)
        .expect("the client accepts the answer");
    let ours = SessionKey::new(7, key);
    let same_client = client_y_of(request).is_some_and(|y| strip(&y) == c.client_y);
    assert_eq!(same_key(&theirs, &ours), same_client);
}

fn client_y_of(request: &handle_resolver::wire::SessionSetupRequest) -> Option<Bytes> {
    request.public_key.as_ref().and_then(group2_value)
}

fn opened(c: Option<&Captured>, input: Bytes, limits: &Limits) {
    let mut r = Reader::new(input.clone());
    let Ok(envelope) = Envelope::decode(&mut r) else {
        return;
    };
    let payload = r.rest();
    let none = open_message(None, envelope, payload.clone(), limits);
    if !envelope.encrypted {
        let plain: Result<Message, CryptError> =
            Message::decode_parts(envelope, payload.clone(), limits).map_err(Into::into);
        assert_eq!(none, plain);
    } else {
        assert_eq!(none, Err(CryptError::NoSession));
    }
    let Some(c) = c else {
        return;
    };
    let s = &c.session;
    let got = s.open(envelope, payload.clone(), limits);
    assert_eq!(
        got,
        open_message(Some(s), envelope, payload.clone(), limits)
    );
    if !envelope.encrypted {
        assert_eq!(got, none);
    } else {
        encrypted(c, envelope, &input, &payload, &got, limits);
    }
    if let Ok(m) = got {
        mac(c, &m, limits);
    }
}

/// An EC message in the session: what opens is the plaintext's message.
fn encrypted(
    c: &Captured,
    envelope: Envelope,
    input: &Bytes,
    payload: &Bytes,
    got: &Result<Message, CryptError>,
    limits: &Limits,
) {
    let declared = envelope.message_length as usize;
    if declared > limits.max_message_length || payload.len() != declared {
        assert!(matches!(got, Err(CryptError::Decode(_))), "{got:?}");
        return;
    }
    let key = &c.key[..];
    let plain = match decrypt_payload(key, payload) {
        Ok(p) => p,
        Err(e) => {
            assert_eq!(got.as_ref().err(), Some(&e));
            return;
        }
    };
    let mut frame = BytesMut::with_capacity(ENVELOPE_LEN + plain.len());
    let plain_envelope = Envelope {
        encrypted: false,
        message_length: plain.len() as u32,
        ..envelope
    };
    plain_envelope.encode(&mut frame);
    frame.put_slice(&plain);
    let frame = frame.freeze();
    let decoded = Message::decode(frame.clone(), limits);
    let m = match (got, decoded) {
        (Ok(m), Ok(mut d)) => {
            d.envelope = envelope;
            assert_eq!(m.header, d.header);
            assert_eq!(m.request_digest, d.request_digest);
            assert_eq!(m.body, d.body);
            assert_eq!(m.credential, d.credential);
            m
        }
        (Err(CryptError::Decode(e)), Err(d)) => {
            assert_eq!(e, &d);
            return;
        }
        (got, decoded) => panic!("open gave {got:?}, the plaintext decodes to {decoded:?}"),
    };
    // Re-encrypted with the input's IV: the input again, when the plaintext re-encodes.
    let mut plain_m = m.clone();
    plain_m.envelope.encrypted = false;
    plain_m.envelope.message_length = plain.len() as u32;
    let reencoded = plain_m.encode().expect("a decoded message encodes");
    if reencoded[ENVELOPE_LEN..] == plain[..] {
        let iv: [u8; SESSION_IV_LEN] = payload[..SESSION_IV_LEN].try_into().expect("IV");
        let again = m.encode_encrypted(key, &iv).expect("re-encrypts");
        assert_eq!(&again, input, "re-encrypting changed the bytes");
    }
}

/// `verify_mac` agrees with the MAC's definition, and a message sealed again verifies.
fn mac(c: &Captured, m: &Message, limits: &Limits) {
    let s = &c.session;
    let verified = s.verify_mac(m);
    let expected = m.credential.as_deref().is_some_and(|cred| {
        cred.credential_type.as_ref() == HS_MAC
            && cred.digest_algorithm.as_ref() == SESSION_MAC_DIGEST
            && m.envelope.session_id == s.session_id()
            && s.mac(m, m.envelope.request_id, cred.signer.index)
                .is_ok_and(|mac| mac[..] == cred.signature[..])
    });
    assert_eq!(verified, expected);
    if verified {
        assert!(!c.other.verify_mac(m), "a MAC verified under another key");
    }
    let counter = m.credential.as_ref().map_or(1, |cred| cred.signer.index);
    let iv = [0x3C; SESSION_IV_LEN];
    let sealed = s
        .seal_with(m, m.envelope.request_id, counter, &iv)
        .expect("a message that opened seals");
    let mut r = Reader::new(sealed);
    let envelope = Envelope::decode(&mut r).expect("a sealed envelope decodes");
    let back = s
        .open(envelope, r.rest(), limits)
        .expect("a sealed message opens");
    assert_eq!(back.envelope.session_id, s.session_id());
    assert_eq!(back.envelope.request_id, m.envelope.request_id);
    assert_eq!(back.body, m.body);
    if matches!(m.body, Body::ChallengeAnswer(_)) {
        // Sealed without a MAC: the credential is the message's own.
        assert_eq!(back.credential, m.credential);
    } else {
        assert!(
            s.verify_mac(&back),
            "a message sealed in the session fails its MAC"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let f = fixed();
    let c = &f.captured[usize::from(mode >> 2) % f.captured.len()];
    let limits = Limits::default();
    let input = Bytes::copy_from_slice(rest);
    match mode & 3 {
        0 => accept(c, input, &limits),
        1 => setup_request(c, &f.server, input, &limits),
        2 => opened(Some(c), input, &limits),
        _ => opened(None, input, &limits),
    }
});
