//! The malformed `raw_*` scenarios and the error answers: each decodes to the right typed
//! outcome or a typed error naming the field, never a panic.

use std::collections::BTreeSet;

use handle_resolver::wire::{Body, DecodeErrorKind, Limits, Message, OpCode, ResponseCode};

use crate::support::captures::{scenario, scenarios, Direction};

fn c2s(name: &str) -> bytes::Bytes {
    let sc = scenario("captures", name);
    let m = sc
        .messages
        .iter()
        .find(|m| m.direction == Direction::C2s)
        .unwrap();
    m.frame()
}

fn s2c(name: &str) -> Message {
    let sc = scenario("captures", name);
    let m = sc
        .messages
        .iter()
        .find(|m| m.direction == Direction::S2c)
        .unwrap();
    Message::decode(m.frame(), &Limits::default()).unwrap()
}

#[test]
fn short_message_length_is_a_truncated_header() {
    // MessageLength 10 < 24: the header cannot be read.
    let e = Message::decode(c2s("raw_udp_short_length"), &Limits::default()).unwrap_err();
    assert!(e.field.starts_with("header."), "{e}");
    assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }), "{e}");
}

#[test]
fn huge_handle_length_is_refused_by_the_limit() {
    for name in ["raw_udp_truncated_body", "raw_tcp_truncated_body"] {
        let e = Message::decode(c2s(name), &Limits::default()).unwrap_err();
        assert_eq!(e.field, "resolution_request.handle", "{name}");
        assert_eq!(
            e.offset, 44,
            "{name}: the body starts after envelope + header"
        );
        assert_eq!(
            e.kind,
            DecodeErrorKind::TooLarge {
                value: 0x7fff_0000,
                limit: 2048
            }
        );
    }
}

#[test]
fn garbage_is_refused_by_its_message_length() {
    // 44 bytes of ASCII: bytes 16-19 read as MessageLength 1852075109 (as the reference
    // library reports).
    let e = Message::decode(c2s("raw_udp_garbage"), &Limits::default()).unwrap_err();
    assert_eq!(e.field, "envelope.message_length");
    assert!(matches!(
        e.kind,
        DecodeErrorKind::TooLarge {
            value: 1_852_075_109,
            ..
        }
    ));
}

#[test]
fn unknown_op_codes_keep_their_body() {
    let m = Message::decode(c2s("raw_udp_zero_opcode"), &Limits::default()).unwrap();
    assert_eq!(m.header.op_code, OpCode::Reserved);
    assert!(!m.is_response());
    assert!(matches!(m.body, Body::Unknown(ref b) if b.len() == 26));
    let m = Message::decode(c2s("raw_udp_opcode_999"), &Limits::default()).unwrap();
    assert_eq!(m.header.op_code, OpCode::Other(999));
    assert!(matches!(m.body, Body::Unknown(_)));
}

#[test]
fn version_5_0_request_and_answer_decode() {
    let m = Message::decode(c2s("raw_udp_envelope_version_5_0"), &Limits::default()).unwrap();
    assert_eq!((m.envelope.version.major, m.envelope.version.minor), (5, 0));
    assert_eq!(
        m.envelope.suggested, m.envelope.version,
        "suggested major 0 = same"
    );
    assert!(matches!(m.body, Body::ResolutionRequest(_)));
    let r = s2c("raw_udp_envelope_version_5_0");
    assert_eq!((r.envelope.version.major, r.envelope.version.minor), (5, 0));
    assert!(matches!(r.body, Body::ResolutionResponse(_)));
}

#[test]
fn error_answers_to_garbage_have_request_id_minus_one() {
    for (name, rc) in [
        ("raw_udp_short_length", ResponseCode::ProtocolError),
        ("raw_udp_zero_opcode", ResponseCode::ProtocolError),
        ("raw_udp_truncated_body", ResponseCode::Error),
        ("raw_tcp_truncated_body", ResponseCode::Error),
        ("raw_udp_opcode_999", ResponseCode::Error),
        ("raw_udp_garbage", ResponseCode::Error),
    ] {
        let m = s2c(name);
        assert_eq!(m.request_id(), 0xFFFF_FFFF, "{name}");
        assert_eq!(m.header.op_code, OpCode::Reserved, "{name}");
        assert_eq!(m.header.response_code, rc, "{name}");
        assert!(m.is_response());
        assert!(matches!(m.body, Body::Error(_)), "{name}: {:?}", m.body);
    }
    // The garbage answer copied TC from the garbage (§14.17): decoded, and ignored.
    assert!(s2c("raw_udp_garbage").envelope.truncated);
}

#[test]
fn every_response_code_gets_its_body_layout() {
    let mut seen = BTreeSet::new();
    for sc in scenarios() {
        for cap in sc.messages.iter().filter(|m| m.direction == Direction::S2c) {
            let m = Message::decode(cap.frame(), &Limits::default()).unwrap();
            let rc = m.header.response_code;
            seen.insert(rc.code());
            let ok = match rc {
                ResponseCode::Success => !matches!(m.body, Body::Error(_) | Body::Referral(_)),
                ResponseCode::ServiceReferral | ResponseCode::PrefixReferral => {
                    matches!(m.body, Body::Referral(_))
                }
                ResponseCode::AuthenticationNeeded => matches!(m.body, Body::Challenge(_)),
                _ => matches!(m.body, Body::Error(_)),
            };
            assert!(ok, "{} {}: rc {rc} with {:?}", sc.id(), cap.label, m.body);
        }
    }
    let expected: BTreeSet<u32> = [1, 2, 4, 100, 200, 301, 303, 402].into();
    assert_eq!(seen, expected);
}

#[test]
fn not_found_and_wrong_server_texts() {
    let m = s2c("udp_unknown_prefix");
    assert_eq!(m.header.response_code, ResponseCode::ServerNotResponsible);
    let Body::Error(e) = &m.body else { panic!() };
    assert_eq!(e.message_str(), "That prefix doesn't live here");
    let m = s2c("udp_not_found");
    assert_eq!(m.header.response_code, ResponseCode::HandleNotFound);
    let Body::Error(e) = &m.body else { panic!() };
    assert!(e.message.is_empty() && e.indexes.is_none());
}
