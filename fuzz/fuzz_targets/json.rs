//! The JSON codec of handle records (`wire::json`): REST API answers and single values, both
//! ways.
//!
//! Input: byte 0 picks the mode (`mode % 4`):
//! - 0: the rest is a REST answer body (`RestAnswer::from_slice`);
//! - 1: the rest is one value in the REST shape (`value_from_json`);
//! - 2: the rest is one value in wire form (`HandleValue::decode`), then written as JSON;
//! - 3: the rest is the data of a value of type `TYPES[(mode >> 2) % TYPES.len()]`
//!   (`src/lib.rs`), then written as JSON, so that every structured form (site,
//!   admin, vlist, key) and its base64 fallback sees arbitrary bytes.
//!
//! Properties: decoding never panics; an answer that reads is written (compact and pretty)
//! as a body that reads back to the same answer; every value read from JSON, or written to
//! JSON from the wire, reads back from its JSON as the same value (the codec's promise: a
//! value encoded by it always decodes back to itself), also through the text of a REST
//! answer; and every value read from JSON has a wire form that decodes to the same value
//! under the same limits.
#![no_main]

use bytes::{Bytes, BytesMut};
use handle_resolver::wire::json::{value_from_json, value_to_json, RestAnswer};
use handle_resolver::wire::{HandleValue, Limits, Reader};
use handle_resolver_fuzz::TYPES;
use libfuzzer_sys::fuzz_target;

/// The value's wire form decodes to the value, using all of it.
fn wire_round_trip(v: &HandleValue, limits: &Limits) {
    let mut out = BytesMut::new();
    v.encode(&mut out).expect("a value read from JSON encodes");
    let mut r = Reader::new(out.freeze());
    let back = HandleValue::decode(&mut r, limits).expect("its wire form decodes");
    assert_eq!(r.remaining(), 0);
    assert_eq!(
        &back, v,
        "the wire form of a JSON value decodes to another value"
    );
}

/// The value's JSON reads back to the value, directly and as the text of an answer.
fn json_round_trip(v: &HandleValue, limits: &Limits) {
    let doc = value_to_json(v);
    let back = value_from_json(&doc, limits).expect("a value written as JSON reads back");
    assert_eq!(&back, v, "JSON changed the value: {doc}");
    let mut answer = RestAnswer::new(1, "0.NA/FUZZ");
    answer.values.push(v.clone());
    let body = answer.to_vec(false);
    let read = RestAnswer::from_slice(&body, limits).expect("an answer written reads back");
    assert_eq!(read, answer);
}

fn rest_answer(body: &[u8], limits: &Limits) {
    let Ok(answer) = RestAnswer::from_slice(body, limits) else {
        return;
    };
    for pretty in [false, true] {
        let written = answer.to_vec(pretty);
        let back = RestAnswer::from_slice(&written, limits).expect("an answer written reads back");
        assert_eq!(
            back, answer,
            "written (pretty {pretty}) and read back, the answer changed"
        );
    }
    let _ = answer.http_status();
    for v in &answer.values {
        wire_round_trip(v, limits);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    match mode % 4 {
        0 => rest_answer(rest, &limits),
        1 => {
            let Ok(doc) = serde_json::from_slice(rest) else {
                return;
            };
            let Ok(v) = value_from_json(&doc, &limits) else {
                return;
            };
            json_round_trip(&v, &limits);
            wire_round_trip(&v, &limits);
        }
        2 => {
            let mut r = Reader::new(Bytes::copy_from_slice(rest));
            if let Ok(v) = HandleValue::decode(&mut r, &limits) {
                json_round_trip(&v, &limits);
            }
        }
        _ => {
            let t = TYPES[usize::from(mode >> 2) % TYPES.len()];
            json_round_trip(
                &HandleValue::new(1, t, Bytes::copy_from_slice(rest)),
                &limits,
            );
        }
    }
});
