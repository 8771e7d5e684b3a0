//! The trust chain's verifier (`handle_resolver::trust::verify_records`) on whole record sets:
//! certificate chains built from the records given, JWS and claims read, value digests
//! compared, permissions and validity checked, signatures verified. (The JWS and claims
//! decoders alone, at their own speed, are the `jws` target.)
//!
//! Input: a mode byte, then records one after another until one does not read:
//! `handle length (u8) ‖ handle (UTF-8) ‖ value count (u8) ‖ values` (each in wire form,
//! `HandleValue::decode`); a handle given twice (compared as the verifier compares handles,
//! without case for `0.` handles) keeps its first record. The set is checked at
//! a time picked by `mode & 3` (the 2019 file's `lastUpdate`, 200 days later, 0, `u64::MAX`),
//! against the global root, or with bit 2 of the mode against the HS_PUBKEY values of the
//! set's own `0.0/0.0` (`TrustRoot::from_values`). Every record has one outcome; an error
//! names its record and, when it names a value, one of that record's values (or, for a
//! missing value, one that a signature lists); a verified
//! record's signed values, signatures and legacy signatures are values of the record, and
//! nothing verified has expired at that time. The same set given in the reverse order
//! verifies the same.
#![no_main]

use std::collections::BTreeSet;

use bytes::Bytes;
use handle_resolver::trust::{
    same_handle, verify_records, TrustErrorKind, TrustRoot, HS_SIGNATURE, TRUST_ROOT_HANDLE,
};
use handle_resolver::wire::{HandleValue, Limits, Reader};
use libfuzzer_sys::fuzz_target;

/// `lastUpdate` of the reference client's 2019 `bootstrap_handles` (2019-07-26T18:15:40Z),
/// inside every validity period of its signatures and certificates.
const LAST_UPDATE: u64 = 1_564_164_940;
const TIMES: [u64; 4] = [LAST_UPDATE, LAST_UPDATE + 200 * 86_400, 0, u64::MAX];

/// The records the input holds, in order, each handle once (its first record; handles
/// compared as the verifier compares them, `same_handle`).
fn records(rest: &[u8], limits: &Limits) -> Vec<(String, Vec<HandleValue>)> {
    let mut out: Vec<(String, Vec<HandleValue>)> = Vec::new();
    let mut r = Reader::new(Bytes::copy_from_slice(rest));
    loop {
        let Ok(len) = r.u8("handle length") else {
            return out;
        };
        let Ok(handle) = r.take("handle", usize::from(len)) else {
            return out;
        };
        let Ok(handle) = std::str::from_utf8(&handle) else {
            return out;
        };
        let Ok(count) = r.u8("value count") else {
            return out;
        };
        let mut values = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            match HandleValue::decode(&mut r, limits) {
                Ok(v) => values.push(v),
                Err(_) => break,
            }
        }
        let complete = values.len() == usize::from(count);
        if !out.iter().any(|(h, _)| same_handle(h, handle)) {
            out.push((handle.to_string(), values));
        }
        if !complete {
            return out;
        }
    }
}

fn check_records(mode: u8, rest: &[u8], limits: &Limits) {
    let given = records(rest, limits);
    let now = TIMES[usize::from(mode & 3)];
    let root = if mode & 4 == 0 {
        TrustRoot::global()
    } else {
        let own = given
            .iter()
            .find(|(h, _)| same_handle(h, TRUST_ROOT_HANDLE))
            .map(|(_, v)| v.as_slice())
            .unwrap_or_default();
        TrustRoot::from_values(own)
    };
    let v = verify_records(given.iter().map(|(h, v)| (h, v)), &root, now);
    assert_eq!(v.len(), given.len(), "one outcome per record");
    for (handle, values) in &given {
        let indexes: BTreeSet<u32> = values.iter().map(|v| v.index).collect();
        match v.get(handle).expect("every record has an outcome") {
            Err(e) => {
                assert_eq!(&e.handle, handle, "an error names its record");
                // A value of the record, or one a signature lists and the record lacks.
                if let Some(i) = e.index {
                    assert!(
                        indexes.contains(&i)
                            || matches!(e.kind, TrustErrorKind::MissingValue { .. }),
                        "{handle}: error names value {i}: {e:?}"
                    );
                }
            }
            Ok(rec) => {
                assert_eq!(&rec.handle, handle);
                assert!(rec.signed.is_subset(&indexes), "{handle}: signed values");
                assert!(!rec.signatures.is_empty(), "{handle}: verified unsigned");
                for s in &rec.signatures {
                    assert!(
                        values
                            .iter()
                            .any(|v| v.index == s.index && v.is_type(HS_SIGNATURE)),
                        "{handle}: signature {} is no HS_SIGNATURE of the record",
                        s.index
                    );
                }
                for i in &rec.legacy_signatures {
                    assert!(indexes.contains(i), "{handle}: legacy signature {i}");
                }
                if let Some(t) = rec.not_after() {
                    assert!(t >= now, "{handle}: verified after it expired");
                }
            }
        }
    }
    let reversed = verify_records(given.iter().rev().map(|(h, v)| (h, v)), &root, now);
    assert_eq!(reversed, v, "the order of the records changes nothing");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    check_records(mode, rest, &Limits::default());
});
