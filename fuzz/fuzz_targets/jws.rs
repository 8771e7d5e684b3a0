//! The signed statements of the trust chain (`handle_resolver::trust`): the compact JWS of
//! HS_SIGNATURE and HS_CERT values and the claims of its payload. No signature is checked
//! here (the `trust` target does, on whole record sets): this target runs at the decoders'
//! speed.
//!
//! Input: the first byte picks the mode.
//! - Even: the rest is a value's data read as a compact JWS (`Jws::parse`). What parses
//!   parses the same with ASCII whitespace around it, and its payload goes on to
//!   `Claims::parse` (as below).
//! - Odd: the rest is a JWS payload (`Claims::parse`). What parses is written back as JSON
//!   (`Claims::to_json`) and reads back to the same claims.
#![no_main]

use handle_resolver::trust::{Claims, Jws};
use handle_resolver::wire::Limits;
use libfuzzer_sys::fuzz_target;

fn check_claims(payload: &[u8], limits: &Limits) {
    let Ok(claims) = Claims::parse(payload, limits) else {
        return;
    };
    let json = serde_json::to_vec(&claims.to_json()).expect("claims JSON serializes");
    let again = Claims::parse(&json, limits).expect("written claims read back");
    assert_eq!(again, claims, "claims written and read back");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    if mode & 1 == 1 {
        return check_claims(rest, &limits);
    }
    let Ok(jws) = Jws::parse(rest) else {
        return;
    };
    let mut padded = b" \t\r\n".to_vec();
    padded.extend_from_slice(rest);
    padded.extend_from_slice(b"\n ");
    assert_eq!(
        Jws::parse(&padded).as_ref(),
        Ok(&jws),
        "whitespace around a JWS"
    );
    check_claims(jws.payload(), &limits);
});
