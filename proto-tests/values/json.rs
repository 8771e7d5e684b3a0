//! The JSON codec (`wire::json`) against the reference captures: every value of every
//! captured answer reads back from its JSON encoding as the same `HandleValue`, and the
//! values the reference library itself wrote as JSON (`captures/handles.json`) read as the
//! bytes its server sent.

use std::collections::HashMap;

use handle_resolver::wire::json::{self, DataFormat, RestAnswer};
use handle_resolver::wire::{Body, HandleValue, Limits, Message, Reader};

use super::read_json;
use crate::support::captures::{scenarios, Direction};

/// Every value of every server-to-client message of both capture sets, decoded from the
/// packets: (where, handle asked, value).
fn native_values() -> Vec<(String, String, HandleValue)> {
    let limits = Limits::default();
    let mut out = Vec::new();
    for s in scenarios() {
        for m in s.messages.iter().filter(|m| m.direction == Direction::S2c) {
            let Ok(msg) = Message::decode(m.frame(), &limits) else {
                continue; // the raw_* scenarios: corrupt on purpose
            };
            let handle = match &msg.body {
                Body::ResolutionResponse(r) => String::from_utf8_lossy(&r.handle).to_uppercase(),
                _ => String::new(),
            };
            for v in msg.body.values() {
                out.push((format!("{} {}", s.id(), m.label), handle.clone(), v.clone()));
            }
        }
    }
    out
}

/// The DSA set's stored values, each with its whole wire encoding (`encodedValueHex`).
fn stored_dsa_values() -> Vec<(String, HandleValue)> {
    let doc = read_json("captures-dsa/handles.json");
    let mut out = Vec::new();
    for (h, entry) in doc["handles"].as_object().unwrap() {
        for v in entry["values"].as_array().unwrap() {
            let raw = hex::decode(v["encodedValueHex"].as_str().unwrap()).unwrap();
            let mut r = Reader::new(bytes::Bytes::from(raw));
            let value = HandleValue::decode(&mut r, &Limits::default()).unwrap();
            assert!(r.is_empty(), "{h}");
            out.push((format!("stored {h}"), value));
        }
    }
    out
}

#[test]
fn every_captured_value_reads_back_from_its_json() {
    let limits = Limits::default();
    let mut formats: HashMap<DataFormat, usize> = HashMap::new();
    let mut count = 0;
    let all = native_values()
        .into_iter()
        .map(|(at, _, v)| (at, v))
        .chain(stored_dsa_values());
    for (at, v) in all {
        let j = json::value_to_json(&v);
        // Through text, as it travels.
        let doc: serde_json::Value = serde_json::from_str(&j.to_string()).unwrap();
        let back = json::value_from_json(&doc, &limits).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(back, v, "{at}: {j}");
        *formats.entry(json::data_format(&v)).or_default() += 1;
        count += 1;
    }
    assert!(count >= 300, "only {count} values");
    // The captures hold every structured format (base64 data is in the reference
    // bootstrap_handles, read in the resolver's tests).
    for f in [
        DataFormat::String,
        DataFormat::Admin,
        DataFormat::VList,
        DataFormat::Site,
        DataFormat::Key,
    ] {
        assert!(formats.contains_key(&f), "no {f:?} value: {formats:?}");
    }
}

#[test]
fn the_reference_library_s_json_reads_as_its_server_s_bytes() {
    let limits = Limits::default();
    let native: HashMap<(String, u32), HandleValue> = native_values()
        .into_iter()
        .filter(|(_, h, _)| !h.is_empty())
        .map(|(_, h, v)| ((h, v.index), v))
        .collect();
    let doc = read_json("captures/handles.json");
    let mut compared = 0;
    for (handle, entry) in doc.as_object().unwrap() {
        let values = json::values_from_json(&entry["values"], &limits)
            .unwrap_or_else(|e| panic!("{handle}: {e}"));
        for (v, written) in values.iter().zip(entry["values"].as_array().unwrap()) {
            // Our encoder writes what the reference library wrote.
            assert_eq!(&json::value_to_json(v), written, "{handle} {}", v.index);
            if let Some(sent) = native.get(&(handle.to_uppercase(), v.index)) {
                assert_eq!(v, sent, "{handle} {}", v.index);
                compared += 1;
            }
        }
    }
    assert!(compared >= 40, "only {compared} values compared");
}

#[test]
fn a_captured_answer_as_a_rest_answer() {
    // udp_resolve_all: every value of one handle, as a REST answer, compact and pretty.
    let answer_values: Vec<(String, HandleValue)> = native_values()
        .into_iter()
        .filter(|(at, _, _)| at.starts_with("captures/udp_resolve_all "))
        .map(|(_, h, v)| (h, v))
        .collect();
    assert!(answer_values.len() > 3);
    let mut answer = RestAnswer::new(1, answer_values[0].0.clone());
    answer.values = answer_values.into_iter().map(|(_, v)| v).collect();
    for pretty in [false, true] {
        let body = answer.to_vec(pretty);
        assert_eq!(
            RestAnswer::from_slice(&body, &Limits::default()).unwrap(),
            answer
        );
    }
}
