//! Handle values: wire decode + encode, and the typed views.
//!
//! Input: the first byte picks the mode. Even: the rest is one value in wire form; it must
//! re-encode to the bytes it was read from (and `encoded_len` must agree). Odd: the rest is
//! the data of a value whose type is `TYPES[(byte >> 1) % TYPES.len()]`, so that every typed
//! parser (HS_SITE, HS_ADMIN, HS_VLIST, HS_PUBKEY, 10320/loc, ...) sees arbitrary bytes.
//! Either way the typed view must never panic, must encode back to the data, and its JSON
//! view must build.
#![no_main]

use bytes::{Bytes, BytesMut};
use handle_resolver::wire::{HandleValue, Limits, Reader};
use handle_resolver_fuzz::TYPES;
use libfuzzer_sys::fuzz_target;

fn check_typed(v: &HandleValue) {
    let typed = v.typed();
    assert_eq!(typed.encode().expect("typed view encodes"), v.data);
    let _ = typed.to_json();
    if let Ok(strict) = v.try_typed() {
        assert_eq!(strict, typed);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let mut r = Reader::new(Bytes::copy_from_slice(rest));
        let Ok(v) = HandleValue::decode(&mut r, &Limits::default()) else {
            return;
        };
        let used = rest.len() - r.remaining();
        let mut out = BytesMut::new();
        v.encode(&mut out).expect("a decoded value encodes");
        assert_eq!(&out[..], &rest[..used]);
        assert_eq!(out.len(), v.encoded_len());
        check_typed(&v);
    } else {
        let t = TYPES[usize::from(mode >> 1) % TYPES.len()];
        check_typed(&HandleValue::new(1, t, Bytes::copy_from_slice(rest)));
    }
});
