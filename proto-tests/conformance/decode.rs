//! Every captured message decodes to what the reference library decoded, field by field,
//! whether taken whole or fed datagram by datagram (any order, with a duplicate) through the
//! reassembler.

use std::time::Instant;

use handle_resolver::wire::{Limits, Message, Reassembler, ReassemblerConfig};

use super::compare::compare;
use crate::support::captures::{scenarios, Transport};

/// Feeds the datagrams of one message to a fresh reassembler, last first, with the last one
/// sent twice; returns the completed message.
fn reassemble(datagrams: &[bytes::Bytes]) -> Message {
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let now = Instant::now();
    let mut order: Vec<_> = datagrams.iter().rev().cloned().collect();
    if datagrams.len() > 1 {
        order.insert(1, datagrams[datagrams.len() - 1].clone());
    }
    let mut done = None;
    for d in order {
        if let Some(m) = r.push(d, now).unwrap() {
            assert!(done.is_none(), "completed twice");
            done = Some(m);
        }
    }
    assert_eq!(r.in_progress(), 0);
    done.expect("message never completed")
}

#[test]
fn every_capture_decodes_like_the_reference_library() {
    let limits = Limits::default();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut multi_datagram = 0;
    for sc in scenarios() {
        for entry in &sc.decoded {
            let label = entry["file"].as_str().unwrap();
            let ctx = format!("{} {label}", sc.id());
            let Some(cap) = sc.message(label) else {
                failures.push(format!("{ctx}: no such message in the packet files"));
                continue;
            };
            if entry.get("decodeError").is_some() {
                continue; // the raw_* requests the reference library refused: see raw.rs
            }
            let m = match Message::decode(cap.frame(), &limits) {
                Ok(m) => m,
                Err(e) => {
                    failures.push(format!("{ctx}: {e}"));
                    continue;
                }
            };
            failures.extend(compare(&ctx, &m, cap.datagrams.len(), entry));
            if cap.transport == Transport::Udp {
                let r = reassemble(&cap.datagrams);
                if r != m {
                    failures.push(format!("{ctx}: reassembled message differs"));
                }
                if cap.datagrams.len() > 1 {
                    multi_datagram += 1;
                }
            }
            compared += 1;
        }
        // Every message in the packet files has a reference entry.
        for cap in &sc.messages {
            if !sc.decoded.iter().any(|e| e["file"] == cap.label.as_str()) {
                failures.push(format!("{} {}: not in decoded.json", sc.id(), cap.label));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 179 reference entries minus the 6 raw requests the reference library refused.
    assert_eq!(compared, 173);
    assert!(
        multi_datagram >= 20,
        "only {multi_datagram} multi-datagram messages"
    );
}
