//! Zero-copy decoding (issue 5): the type and data of every decoded value, and the handle,
//! are slices of the received buffer, not copies. Checked by pointer ranges, not by timing.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use bytes::Bytes;
use handle_resolver::wire::{Body, Limits, Message, Reassembler, ReassemblerConfig, SiteInfo};

fn capture(scenario: &str, file: &str) -> Bytes {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "fixtures/reference/captures",
        scenario,
        file,
    ]
    .iter()
    .collect();
    Bytes::from(std::fs::read(&path).unwrap())
}

/// The address range of `b`.
fn range(b: &[u8]) -> Range<usize> {
    let start = b.as_ptr() as usize;
    start..start + b.len()
}

/// Asserts `part` lies inside `whole` (an empty slice anywhere is fine: it holds no data).
fn assert_within(part: &[u8], whole: &Range<usize>, what: &str) {
    if part.is_empty() {
        return;
    }
    let p = range(part);
    assert!(
        p.start >= whole.start && p.end <= whole.end,
        "{what}: {p:?} is not inside the input buffer {whole:?} (copied)"
    );
}

/// Decodes `input` and checks every value's type and data borrow it; returns the value count.
fn check_message(m: &Message, input: &Range<usize>, what: &str) -> usize {
    let Body::ResolutionResponse(r) = &m.body else {
        panic!("{what}: not a resolution response: {:?}", m.body);
    };
    assert_within(&r.handle, input, what);
    for v in &r.values {
        assert_within(&v.type_name, input, what);
        assert_within(&v.data, input, what);
    }
    assert_within(&m.signed_bytes, input, what);
    r.values.len()
}

#[test]
fn one_datagram_response_values_borrow_the_datagram() {
    let input = capture("udp_resolve_all", "02_s2c_udp_cport33310.bin");
    let m = Message::decode(input.clone(), &Limits::default()).unwrap();
    let n = check_message(&m, &range(&input), "udp_resolve_all");
    assert_eq!(n, 4);
}

#[test]
fn tcp_frame_values_borrow_the_frame() {
    let input = capture("tcp_large", "tcp1_cport40414_s2c.bin");
    let m = Message::decode(input.clone(), &Limits::default()).unwrap();
    assert_eq!(check_message(&m, &range(&input), "tcp_large"), 42);
}

#[test]
fn a_copy_is_detected() {
    // The check itself must be able to fail: a value decoded from a copy of the input lies
    // outside the original buffer.
    let input = capture("udp_resolve_all", "02_s2c_udp_cport33310.bin");
    let copy = Bytes::copy_from_slice(&input);
    let m = Message::decode(copy, &Limits::default()).unwrap();
    let outcome = std::panic::catch_unwind(|| check_message(&m, &range(&input), "copy"));
    assert!(outcome.is_err());
}

#[test]
fn reassembled_values_borrow_the_reassembly_buffer_and_site_info_borrows_the_value() {
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let now = Instant::now();
    let mut out = None;
    for f in ["02_s2c_udp_cport45643.bin", "03_s2c_udp_cport45643.bin"] {
        if let Some(m) = r.push(capture("udp_prefix_handle", f), now).unwrap() {
            out = Some(m);
        }
    }
    let m = out.unwrap();
    // The reassembled message is one buffer of `MessageLength` bytes; the signed bytes are
    // its first part (header + body), so it starts where they start.
    let start = m.signed_bytes.as_ptr() as usize;
    let whole = start..start + m.envelope.message_length as usize;
    check_message(&m, &whole, "udp_prefix_handle");
    let Body::ResolutionResponse(b) = &m.body else {
        unreachable!()
    };
    let site = b.values.iter().find(|v| v.is_type("HS_SITE")).unwrap();
    let info = SiteInfo::decode(&site.data, &Limits::default()).unwrap();
    let data = range(&site.data);
    for (name, value) in &info.attributes {
        assert_within(name, &data, "site attribute name");
        assert_within(value, &data, "site attribute value");
    }
    assert!(!info.servers.is_empty());
}
