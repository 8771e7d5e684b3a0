//! Hand-built packets for what the captures lack: a 2.1-era response with RD and an MD5
//! digest (checked against the request), a prefix referral (303) with an HS_SITE.PREFIX
//! value, and 303 below version 2.5 (an error body). Plus the request digests the captures
//! do carry, checked against their requests. Every byte is commented.

use bytes::{BufMut, Bytes, BytesMut};
use handle_resolver::wire::{
    Body, DigestAlgorithm, Limits, Message, OpFlags, ProtocolVersion, ResponseCode,
};

use crate::support::captures::{scenario, Direction};

fn unhex(s: &str) -> Vec<u8> {
    let clean: String = s
        .lines()
        .map(|l| l.split('#').next().unwrap())
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect();
    hex::decode(clean).unwrap()
}

/// The §12 request at version 2.1 (RFC level) with RD set: what a 2.1-era client sends.
const REQUEST_2_1: &str = "
02 01 02 01              # envelope: version 2.1, suggested 2.1
00 00 00 00              # session id 0
12 34 56 78              # request id (as in PROTOCOL.md §12)
00 00 00 00              # sequence number 0
00 00 00 34              # MessageLength 52 = 24 header + 24 body + 4 credential length
00 00 00 01              # header: OpCode 1 RESOLUTION
00 00 00 00              # ResponseCode 0 (request)
19 80 00 00              # OpFlag REC|CA|PO (0x19000000) | RD (0x00800000)
ff ff 00 00              # site serial unknown, recursion 0, reserved 0
65 53 f1 00              # expiration 1 700 000 000
00 00 00 18              # BodyLength 24
00 00 00 0c 30 2e 4e 41 2f 31 30 2e 31 30 34 35   # handle \"0.NA/10.1045\"
00 00 00 00              # index list: empty
00 00 00 00              # type list: empty
00 00 00 00              # CredentialLength 0
";

/// Its answer from a 2.1-era server: RD echoed, the body starts with an MD5 request digest.
const RESPONSE_2_1_MD5: &str = "
02 01 00 00              # envelope: version 2.1, bytes 2-3 zero (RFC: no suggested version)
00 00 00 00              # session id 0
12 34 56 78              # request id echoed
00 00 00 00              # sequence number 0
00 00 00 71              # MessageLength 113 = 24 + 85 + 4
00 00 00 01              # header: OpCode 1
00 00 00 01              # ResponseCode 1 SUCCESS
99 80 00 00              # AT (0x80000000) | REC|CA|PO | RD
00 01 00 00              # site serial 1, recursion 0, reserved 0
65 53 f1 00              # expiration copied from the request
00 00 00 55              # BodyLength 85 = 17 digest + 16 handle + 4 count + 48 value
01                       # DigestAlgorithm 1 = MD5 (PROTOCOL.md §5.1)
62 f7 bb 15 2a 6b e1 f3 73 1a 60 9f a6 1a d7 97   # MD5 of the request's header+body
                         # (its bytes 20..68), computed with Python's hashlib
00 00 00 0c 30 2e 4e 41 2f 31 30 2e 31 30 34 35   # handle \"0.NA/10.1045\"
00 00 00 01              # value count 1
00 00 00 01              # value: index 1
69 55 b9 00              # timestamp 1767225600 (2026-01-01, as the captures' values)
00                       # ttlType 0 relative
00 01 51 80              # ttl 86400
0e                       # permissions admin r/w, public read
00 00 00 03 55 52 4c     # type \"URL\"
00 00 00 13 68 74 74 70 3a 2f 2f 65 78 61 6d 70 6c 65 2e 6f 72 67 2f  # data \"http://example.org/\"
00 00 00 00              # no references
00 00 00 00              # CredentialLength 0
";

#[test]
fn md5_request_digest_of_a_2_1_response_matches_the_request() {
    let limits = Limits::default();
    let request = Message::decode(Bytes::from(unhex(REQUEST_2_1)), &limits).unwrap();
    assert_eq!(request.envelope.version, ProtocolVersion::V2_1);
    assert!(request.header.flags.contains(OpFlags::RD));
    let raw = Bytes::from(unhex(RESPONSE_2_1_MD5));
    let response = Message::decode(raw.clone(), &limits).unwrap();
    let rd = response
        .request_digest
        .as_ref()
        .expect("RD set: digest first");
    assert_eq!(rd.algorithm, DigestAlgorithm::Md5);
    assert_eq!(rd.digest.len(), 16);
    assert!(rd.matches(&request.signed_bytes));
    assert!(rd.matches(&request.header_and_body().unwrap()));
    // Any change to the request breaks the match.
    let mut other = request.signed_bytes.to_vec();
    other[30] ^= 0x01;
    assert!(!rd.matches(&other));
    // The body after the digest is the ordinary resolution response.
    let Body::ResolutionResponse(r) = &response.body else {
        panic!("{:?}", response.body)
    };
    assert_eq!(r.handle.as_ref(), b"0.NA/10.1045");
    assert_eq!(r.values.len(), 1);
    assert_eq!(r.values[0].data.as_ref(), b"http://example.org/");
    // Suggested major 0 means "same as the message version".
    assert_eq!(response.envelope.suggested, ProtocolVersion::V2_1);
    assert_eq!(response.encode().unwrap(), raw);
}

/// Data of the HS_SITE.PREFIX value that the DSA setup's root stores in `0.NA/20.500`,
/// copied from the `captures-dsa/udp_root_parent_prefix_20_500` response (its value 1).
fn captured_site_prefix_data() -> Bytes {
    let sc = scenario("captures-dsa", "udp_root_parent_prefix_20_500");
    let cap = sc
        .messages
        .iter()
        .find(|m| m.direction == Direction::S2c)
        .unwrap();
    let m = Message::decode(cap.frame(), &Limits::default()).unwrap();
    let v = m
        .body
        .values()
        .iter()
        .find(|v| v.is_type("HS_SITE.PREFIX"))
        .unwrap();
    v.data.clone()
}

/// A prefix referral as a 2.10 server sends it (PROTOCOL.md §5.3): empty referral handle,
/// then the HS_SITE.PREFIX value of the parent prefix. `minor` is the message's version.
fn prefix_referral(minor: u8, site: &[u8]) -> Bytes {
    let mut body = BytesMut::new();
    body.put_slice(&[0, 0, 0, 0]); // ReferralHandle: empty
    body.put_u32(1); // value count 1
    body.put_u32(1); // value index 1
    body.put_u32(1_748_736_000); // timestamp, as in the captured value
    body.put_u8(0); // ttlType relative
    body.put_u32(86_400); // ttl
    body.put_u8(0x0e); // permissions, as captured ("rwr-")
    body.put_u32(14); // type length
    body.put_slice(b"HS_SITE.PREFIX"); // type
    body.put_u32(site.len() as u32); // data length
    body.put_slice(site); // HS_SITE record copied from the capture
    body.put_u32(0); // no references
    let mut m = BytesMut::new();
    m.put_slice(&[2, minor, 2, 11]); // version 2.minor, suggested 2.11
    m.put_u32(0); // session 0
    m.put_u32(0x0abc_def0); // request id
    m.put_u32(0); // sequence 0
    m.put_u32((24 + body.len() + 4) as u32); // MessageLength
    m.put_u32(1); // OpCode RESOLUTION
    m.put_u32(303); // ResponseCode PREFIX_REFERRAL
    m.put_u32(0x9900_0000); // AT|REC|CA|PO
    m.put_slice(&[0, 1, 0, 0]); // serial 1, recursion 0, reserved 0
    m.put_u32(1_795_288_990); // expiration (as in the captures)
    m.put_u32(body.len() as u32); // BodyLength
    m.put_slice(&body);
    m.put_u32(0); // CredentialLength 0
    m.freeze()
}

#[test]
fn prefix_referral_with_site_prefix_values() {
    let site = captured_site_prefix_data();
    assert_eq!(site.len(), 1046);
    let raw = prefix_referral(10, &site);
    let m = Message::decode(raw.clone(), &Limits::default()).unwrap();
    assert_eq!(m.header.response_code, ResponseCode::PrefixReferral);
    let Body::Referral(r) = &m.body else {
        panic!("{:?}", m.body)
    };
    assert!(r.referral_handle.is_empty());
    let values = r.values.as_ref().expect("value list present");
    assert_eq!(values.len(), 1);
    assert!(values[0].is_type("HS_SITE.PREFIX"));
    assert_eq!(values[0].data, site);
    assert_eq!(m.encode().unwrap(), raw);
    // More than 492 bytes: it travels as three datagrams and comes back whole.
    let frags = handle_resolver::wire::fragment(&raw);
    assert_eq!(frags.len(), 3);
}

#[test]
fn prefix_referral_code_below_2_5_is_not_a_referral() {
    // The same bytes at version 2.4: the reference library reads 303 as an error body
    // (SERVER_BACKUP). Here the referral layout does not fit an error body, so the body
    // comes back raw rather than as a referral.
    let site = captured_site_prefix_data();
    let m = Message::decode(prefix_referral(4, &site), &Limits::default()).unwrap();
    assert!(
        matches!(m.body, Body::Unknown(_) | Body::Error(_)),
        "{:?}",
        m.body
    );
    // A genuine 2.4 "303" error answer: a message string.
    let mut raw = BytesMut::new();
    raw.put_slice(&[2, 4, 2, 4]); // version 2.4, suggested 2.4
    raw.put_u32(0); // session
    raw.put_u32(7); // request id
    raw.put_u32(0); // sequence
    raw.put_u32(24 + 10 + 4); // MessageLength: header + body + credential length
    raw.put_u32(1); // RESOLUTION
    raw.put_u32(303); // 303 = SERVER_BACKUP for a < 2.5 peer
    raw.put_u32(0x9900_0000); // AT|REC|CA|PO
    raw.put_slice(&[0, 1, 0, 0]); // serial 1, recursion 0, reserved 0
    raw.put_u32(1_795_288_990); // expiration
    raw.put_u32(10); // BodyLength: 4 + 6
    raw.put_u32(6); // message length
    raw.put_slice(b"backup"); // message text
    raw.put_u32(0); // CredentialLength 0
    let raw = raw.freeze();
    let m = Message::decode(raw.clone(), &Limits::default()).unwrap();
    let Body::Error(e) = &m.body else {
        panic!("{:?}", m.body)
    };
    assert_eq!(e.message.as_ref(), b"backup");
    assert_eq!(m.encode().unwrap(), raw);
}

#[test]
fn captured_request_digests_match_their_requests() {
    // The admin scenarios: each RD response (402 challenge, session setup) carries the
    // SHA-256 digest of the request it answers (message version 2.11).
    let mut checked = 0;
    for name in [
        "tcp_admin_create_handle",
        "tcp_admin_delete_handle",
        "udp_resolve_alltypes_without_PO",
    ] {
        let sc = scenario("captures", name);
        let decoded: Vec<Message> = sc
            .messages
            .iter()
            .map(|c| Message::decode(c.frame(), &Limits::default()).unwrap())
            .collect();
        for resp in decoded.iter().filter(|m| m.request_digest.is_some()) {
            let req = decoded
                .iter()
                .find(|m| !m.is_response() && m.request_id() == resp.request_id())
                .unwrap();
            let rd = resp.request_digest.as_ref().unwrap();
            assert_eq!(rd.algorithm, DigestAlgorithm::Sha256);
            assert!(rd.matches(&req.signed_bytes), "{name}");
            // response_to computes the same digest for the same request.
            if req.header.flags.contains(OpFlags::RD) {
                let built = Message::response_to(req, resp.header.response_code, resp.body.clone());
                assert_eq!(built.request_digest.as_ref(), Some(rd), "{name}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 5);
}
