//! Every captured message re-encodes to the identical bytes: responses from their decoded
//! struct, requests both from the struct and rebuilt from the reference decode's fields
//! through `Message::request` / `Message::resolution_request`; multi-datagram messages also
//! fragment back into the captured datagrams.

use bytes::Bytes;
use handle_resolver::wire::{
    fragment, Body, GetSiteInfoRequest, Limits, Message, OpCode, OpFlags, ProtocolVersion,
};
use serde_json::Value;

use crate::support::captures::{scenarios, Direction, Transport};

fn version(s: &str) -> ProtocolVersion {
    let (a, b) = s.split_once('.').unwrap();
    ProtocolVersion::new(a.parse().unwrap(), b.parse().unwrap())
}

const FLAGS: [(&str, OpFlags); 12] = [
    ("AT_authoritative", OpFlags::AT),
    ("CT_certify", OpFlags::CT),
    ("ENC_encrypt", OpFlags::ENC),
    ("REC_recursive", OpFlags::REC),
    ("CA_cacheCertify", OpFlags::CA),
    ("CN_continuous", OpFlags::CN),
    ("KA_keepAlive", OpFlags::KC),
    ("PO_ignoreRestrictedValues", OpFlags::PO),
    ("RD_returnRequestDigest", OpFlags::RD),
    ("OVRW_overwriteWhenExists", OpFlags::OW),
    ("MINT_mintNewSuffix", OpFlags::MINT),
    ("DNRF_doNotRefer", OpFlags::DNR),
];

/// Rebuilds a request from the reference decode: the body from its handle / indexes /
/// types (struct-held parts the JSON lacks — admin values, raw bodies, credentials — come
/// from our decode), the envelope and header from its fields.
fn rebuild_request(j: &Value, decoded: &Message) -> Message {
    let h = &j["header"];
    let rid = h["requestId"].as_i64().unwrap() as u32;
    let exp = h["expiration"].as_i64().unwrap() as u32;
    let handle = || Bytes::from(j["handle"].as_str().unwrap().to_string());
    let op = OpCode::from_code(h["opCode"].as_i64().unwrap() as u32);
    let mut m = match j["class"].as_str().unwrap() {
        "ResolutionRequest" => Message::resolution_request(
            handle(),
            j["indexes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_i64().unwrap() as u32)
                .collect(),
            j["types"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| Bytes::from(t.as_str().unwrap().to_string()))
                .collect(),
            rid,
            exp,
        ),
        "GenericRequest" => Message::request(
            Body::GetSiteInfoRequest(GetSiteInfoRequest { handle: handle() }),
            op,
            rid,
            exp,
        ),
        "DeleteHandleRequest" => {
            Message::request(Body::DeleteHandleRequest { handle: handle() }, op, rid, exp)
        }
        "CreateHandleRequest" => Message::request(
            Body::CreateHandleRequest {
                handle: handle(),
                values: decoded.body.values().to_vec(),
            },
            op,
            rid,
            exp,
        ),
        _ => Message::request(decoded.body.clone(), op, rid, exp),
    };
    m.envelope.version = version(h["envelopeVersion"].as_str().unwrap());
    m.envelope.suggested = version(h["suggestedVersion"].as_str().unwrap());
    // Byte 2 as the reference decode printed it (the 5.0 request carries 0: "suggested =
    // message version", which only the raw bytes can express).
    let byte2 = j["envelope"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("byte2=0x"))
        .unwrap();
    m.envelope.raw_flags = [
        u8::from_str_radix(byte2, 16).unwrap(),
        m.envelope.suggested.minor,
    ];
    m.envelope.session_id = h["sessionId"].as_i64().unwrap() as u32;
    let mut flags = OpFlags(0);
    for (name, f) in FLAGS {
        flags.set(f, h["flags"][name].as_bool().unwrap());
    }
    m.header.flags = flags;
    m.header.site_info_serial = h["siteInfoSerial"].as_i64().unwrap() as u16;
    m.header.recursion_count = h["recursionCount"].as_i64().unwrap() as u8;
    m.credential = decoded.credential.clone();
    m
}

#[test]
fn every_message_re_encodes_to_the_captured_bytes() {
    let limits = Limits::default();
    let mut failures = Vec::new();
    let (mut requests, mut responses) = (0, 0);
    for sc in scenarios() {
        for entry in &sc.decoded {
            if entry.get("decodeError").is_some() {
                continue;
            }
            let label = entry["file"].as_str().unwrap();
            let ctx = format!("{} {label}", sc.id());
            let cap = sc.message(label).unwrap();
            let frame = cap.frame();
            let m = Message::decode(frame.clone(), &limits).unwrap();
            let again = m.encode().unwrap();
            if again != frame {
                failures.push(format!("{ctx}: struct re-encode differs"));
            }
            if cap.transport == Transport::Udp && fragment(&again) != cap.datagrams {
                failures.push(format!(
                    "{ctx}: fragments differ from the captured datagrams"
                ));
            }
            if cap.direction == Direction::C2s {
                assert!(!m.is_response(), "{ctx}");
                let rebuilt = rebuild_request(entry, &m).encode().unwrap();
                if rebuilt != frame {
                    failures.push(format!(
                        "{ctx}: rebuilt request differs:\n ours {}\n file {}",
                        hex::encode(&rebuilt),
                        hex::encode(&frame)
                    ));
                }
                requests += 1;
            } else {
                assert!(m.is_response(), "{ctx}");
                responses += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        requests >= 80 && responses >= 80,
        "{requests} requests, {responses} responses"
    );
}
