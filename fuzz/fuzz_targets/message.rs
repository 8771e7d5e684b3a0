//! Whole-message decode: decode, re-encode, decode again, compare.
//!
//! Properties: decoding never panics; a message that decodes encodes; the encoding decodes to
//! the same envelope (bar `message_length`), header, digest, body and credential; encoding is
//! a fixed point; and the encoding is the input itself unless the input left out the
//! credential-length field (which the encoder always writes).
#![no_main]

use bytes::Bytes;
use handle_resolver::wire::{Limits, Message, ENVELOPE_LEN, HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let input = Bytes::copy_from_slice(data);
    let Ok(first) = Message::decode(input.clone(), &limits) else {
        return;
    };
    let encoded = first.encode().expect("a decoded message encodes");
    let second = Message::decode(encoded.clone(), &limits).expect("its encoding decodes");
    let mut envelope = first.envelope;
    envelope.message_length = second.envelope.message_length;
    assert_eq!(second.envelope, envelope);
    assert_eq!(second.header, first.header);
    assert_eq!(second.request_digest, first.request_digest);
    assert_eq!(second.body, first.body);
    assert_eq!(second.credential, first.credential);
    assert_eq!(second.encode().expect("encodes again"), encoded);
    let without_credential_field =
        ENVELOPE_LEN + HEADER_LEN + first.header.body_length as usize == data.len();
    if !without_credential_field {
        assert_eq!(encoded, input, "re-encoding changed the bytes");
    }
    // The typed views of every value never panic and give back the data.
    for v in first.body.values() {
        assert_eq!(v.typed().encode().expect("typed view encodes"), v.data);
    }
});
