//! PROTOCOL.md §12, reproduced byte for byte from `Message::resolution_request`.

use bytes::Bytes;
use handle_resolver::wire::{fragment, Body, Limits, Message, ProtocolVersion};

/// The full datagram printed in PROTOCOL.md §12.
const DATAGRAM: &str = "
02 0a 02 0b 00 00 00 00 12 34 56 78 00 00 00 00
00 00 00 34 00 00 00 01 00 00 00 00 19 00 00 00
ff ff 00 00 65 53 f1 00 00 00 00 18 00 00 00 0c
30 2e 4e 41 2f 31 30 2e 31 30 34 35 00 00 00 00
00 00 00 00 00 00 00 00";

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.split_whitespace().collect::<String>()).unwrap()
}

/// The §12 assumptions: version 2.10 (the GHR site's), suggested 2.11, request id
/// 0x12345678, REC|CA|PO, serial 0xFFFF, expiration 1 700 000 000, no credential.
fn build(handle: &'static str) -> Message {
    let mut m = Message::resolution_request(handle, vec![], vec![], 0x1234_5678, 1_700_000_000);
    m.envelope.version = ProtocolVersion::V2_10;
    m
}

#[test]
fn worked_example_byte_for_byte() {
    let expected = unhex(DATAGRAM);
    assert_eq!(expected.len(), 72);
    let encoded = build("0.NA/10.1045").encode().unwrap();
    assert_eq!(hex::encode(&encoded), hex::encode(&expected));
    // One datagram, unchanged by fragmentation.
    assert_eq!(fragment(&encoded), vec![encoded.clone()]);
    // And it decodes back to the same request.
    let m = Message::decode(encoded, &Limits::default()).unwrap();
    let Body::ResolutionRequest(r) = &m.body else {
        panic!("{:?}", m.body)
    };
    assert_eq!(r.handle, Bytes::from_static(b"0.NA/10.1045"));
    assert_eq!(m.header.body_length, 24);
    assert_eq!(m.envelope.message_length, 52);
}

#[test]
fn worked_example_variant_for_a_longer_handle() {
    // §12: for 20.500.12345/ABC only MessageLength, BodyLength and the body change.
    let mut expected = unhex(DATAGRAM);
    expected[0x10..0x14].copy_from_slice(&[0, 0, 0, 0x38]);
    expected[0x28..0x2c].copy_from_slice(&[0, 0, 0, 0x1c]);
    expected.truncate(0x2c);
    expected.extend(unhex(
        "00 00 00 10  32 30 2e 35 30 30 2e 31 32 33 34 35 2f 41 42 43  00 00 00 00  00 00 00 00",
    ));
    expected.extend([0, 0, 0, 0]); // credential length
    assert_eq!(expected.len(), 76);
    let encoded = build("20.500.12345/ABC").encode().unwrap();
    assert_eq!(hex::encode(&encoded), hex::encode(&expected));
}
