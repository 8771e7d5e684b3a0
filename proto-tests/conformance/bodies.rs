//! Every body type: built, encoded, decoded back equal; and every truncation of its bytes,
//! or of a whole message, is an error (or, for layouts with an optional tail, a shorter
//! valid body) — never a panic.

use bytes::Bytes;
use handle_resolver::wire::{
    Body, ChallengeAnswer, ChallengeBody, Credential, ErrorBody, GetSiteInfoRequest, HandleValue,
    Header, Limits, Message, OpCode, OpFlags, ReferralBody, ResolutionRequest, ResolutionResponse,
    ResponseCode, SessionSetupRequest, SessionSetupResponse, SiteInfoResponse, Ttl, ValueReference,
};

fn value(i: u32) -> HandleValue {
    let mut v = HandleValue::new(i, "URL", format!("http://example.org/{i}"));
    v.ttl = Ttl::Absolute(1_893_456_000);
    v.references.push(ValueReference {
        handle: Bytes::from_static(b"0.NA/20.500.12345"),
        index: 300,
    });
    v
}

fn h(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

/// (op code, response code, body, whether every strict prefix of the body bytes must fail).
fn cases() -> Vec<(OpCode, ResponseCode, Body, bool)> {
    use OpCode as O;
    use ResponseCode as R;
    vec![
        (
            O::Resolution,
            R::Reserved,
            Body::ResolutionRequest(ResolutionRequest {
                handle: h("20.500.12345/1"),
                indexes: vec![1, 100, 300],
                types: vec![h("URL"), h("HS_SITE.")],
            }),
            true,
        ),
        (
            O::Resolution,
            R::Success,
            Body::ResolutionResponse(ResolutionResponse {
                handle: h("20.500.12345/1"),
                values: vec![value(1), value(2)],
            }),
            true,
        ),
        (
            O::Resolution,
            R::HandleNotFound,
            Body::Error({
                let mut e = ErrorBody::new(h("nope"));
                e.indexes = Some(vec![4, 5]);
                e
            }),
            false, // the index list and the message are optional
        ),
        (
            O::Resolution,
            R::ServiceReferral,
            Body::Referral(ReferralBody {
                referral_handle: h("0.NA/0.NA"),
                values: Some(vec![value(3)]),
            }),
            false, // the value list is optional
        ),
        (
            O::Resolution,
            R::PrefixReferral,
            Body::Referral(ReferralBody {
                referral_handle: Bytes::new(),
                values: None,
            }),
            true,
        ),
        (
            O::Resolution,
            R::AuthenticationNeeded,
            Body::Challenge(ChallengeBody::new(Bytes::from_static(&[7; 16]))),
            true,
        ),
        (
            O::GetSiteInfo,
            R::Reserved,
            Body::GetSiteInfoRequest(GetSiteInfoRequest { handle: h("/") }),
            true,
        ),
        (
            O::GetSiteInfo,
            R::Success,
            Body::SiteInfoResponse(SiteInfoResponse {
                record: Bytes::from_static(&[0, 1, 2, 11, 0, 1, 0x80, 2]),
            }),
            false, // the record is the rest of the body
        ),
        (
            O::CreateHandle,
            R::Reserved,
            Body::CreateHandleRequest {
                handle: h("20.500.12345/new"),
                values: vec![value(1)],
            },
            true,
        ),
        (
            O::CreateHandle,
            R::Success,
            Body::CreateHandleResponse {
                handle: h("20.500.12345/new"),
            },
            false, // an empty success body is Success
        ),
        (
            O::DeleteHandle,
            R::Reserved,
            Body::DeleteHandleRequest {
                handle: h("20.500.12345/new"),
            },
            true,
        ),
        (
            O::AddValue,
            R::Reserved,
            Body::AddValueRequest {
                handle: h("20.500.12345/new"),
                values: vec![value(2)],
            },
            true,
        ),
        (
            O::ModifyValue,
            R::Reserved,
            Body::ModifyValueRequest {
                handle: h("20.500.12345/new"),
                values: vec![value(2)],
            },
            true,
        ),
        (
            O::RemoveValue,
            R::Reserved,
            Body::RemoveValueRequest {
                handle: h("20.500.12345/new"),
                indexes: vec![2, 3],
            },
            true,
        ),
        (O::DeleteHandle, R::Success, Body::Success, false),
        (
            O::SessionSetup,
            R::Reserved,
            Body::SessionSetupRequest(Box::new(SessionSetupRequest {
                key_exchange_mode: 4,
                timeout: 86_400,
                identity: ValueReference {
                    handle: h("20.500.12345/USER-RSA"),
                    index: 300,
                },
                public_key: Some(h("DH key")),
                exchange_key: None,
                trailer: Bytes::from_static(&[0, 0]),
            })),
            false,
        ),
        (
            O::SessionSetup,
            R::Success,
            Body::SessionSetupResponse(SessionSetupResponse {
                key_exchange_mode: 4,
                data: h("AES and DH key"),
                trailer: Bytes::from_static(&[0, 0]),
            }),
            false,
        ),
        (
            O::ChallengeResponse,
            R::Reserved,
            Body::ChallengeAnswer(Box::new(ChallengeAnswer {
                auth_type: h("HS_SECKEY"),
                identity: ValueReference {
                    handle: h("20.500.12345/USER-SECKEY"),
                    index: 300,
                },
                signed_response: Bytes::from_static(&[0x13, 1, 2]),
            })),
            true,
        ),
        (
            O::ListHandles,
            R::Reserved,
            Body::ListHandlesRequest {
                handle: h("0.NA/20.500.12345"),
            },
            true,
        ),
        (
            O::ListHandles,
            R::Success,
            Body::ListHandlesResponse {
                handles: vec![h("20.500.12345/A"), h("20.500.12345/B")],
            },
            true,
        ),
    ]
}

fn message(op: OpCode, rc: ResponseCode, body: Body) -> Message {
    let req = Message::request(Body::Success, op, 42, 1_795_288_990);
    if rc == ResponseCode::Reserved {
        Message { body, ..req }
    } else {
        Message::response_to(&req, rc, body)
    }
}

#[test]
fn every_body_type_round_trips() {
    let limits = Limits::default();
    for (op, rc, body, _) in cases() {
        for (rd, signed) in [(false, false), (true, false), (true, true)] {
            let mut m = message(op, rc, body.clone());
            if rd && rc != ResponseCode::Reserved {
                // A response to a request that asked for a digest.
                let mut req = Message::request(Body::Success, op, 42, 1_795_288_990);
                req.header.flags.set(OpFlags::RD, true);
                m = Message::response_to(&req, rc, body.clone());
                assert!(m.request_digest.is_some());
            }
            if signed {
                m.credential = Some(Box::new(Credential::new(
                    "HS_SIGNED",
                    "SHA-256",
                    vec![9u8; 64],
                    0,
                )));
            }
            let bytes = m.encode().unwrap();
            let back = Message::decode(bytes.clone(), &limits).unwrap();
            assert_eq!(back.body, body, "{op} {rc}");
            assert_eq!(back.request_digest, m.request_digest, "{op} {rc}");
            assert_eq!(
                back.credential.as_ref().map(|c| c.to_bytes().unwrap()),
                m.credential.as_ref().map(|c| c.to_bytes().unwrap())
            );
            assert_eq!(back.encode().unwrap(), bytes);
            assert_eq!(
                back.signed_bytes.len(),
                24 + back.header.body_length as usize
            );
        }
    }
}

#[test]
fn truncated_bodies_fail_or_shrink_never_panic() {
    let limits = Limits::default();
    for (op, rc, body, strict) in cases() {
        let m = message(op, rc, body.clone());
        let bytes = m.encode().unwrap();
        let body_bytes = bytes.slice(44..44 + body_len(&bytes));
        for k in 0..body_bytes.len() {
            let header = Header {
                body_length: k as u32,
                ..m.header
            };
            let r = Body::decode(
                &header,
                m.envelope.version,
                body_bytes.slice(..k),
                44,
                &limits,
            );
            if strict {
                assert!(r.is_err(), "{op} {rc}: prefix {k} decoded as {r:?}");
            } else if let Ok((_, b)) = r {
                assert_ne!(
                    b, body,
                    "{op} {rc}: a strict prefix cannot give the same body"
                );
            }
        }
    }
}

fn body_len(message: &Bytes) -> usize {
    u32::from_be_bytes([message[40], message[41], message[42], message[43]]) as usize
}

#[test]
fn every_truncated_message_is_an_error() {
    let limits = Limits::default();
    for (op, rc, body, _) in cases() {
        let bytes = message(op, rc, body).encode().unwrap();
        for k in 0..bytes.len() {
            assert!(
                Message::decode(bytes.slice(..k), &limits).is_err(),
                "{op} {rc} at {k}"
            );
        }
    }
}
