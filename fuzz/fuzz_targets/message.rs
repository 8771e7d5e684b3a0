//! Whole-message decode: decode, re-encode, decode again, compare.
//!
//! Properties: decoding never panics; a message that decodes encodes; the encoding decodes to
//! the same envelope (bar `message_length`), header, digest, body and credential; encoding is
//! a fixed point; and the encoding is the input itself, except for two normalisations:
//! - the input left out the credential-length field (the encoder always writes it);
//! - an error body of 1 to 3 bytes (too few for a message length) decodes as a body without
//!   a message field and encodes as 0 bytes (BodyLength shrinks to the digest's length). A
//!   0-byte error body (legal from 2.0 peers, PROTOCOL.md §5.2) is no exception: it encodes
//!   as 0 bytes again.
#![no_main]

use bytes::Bytes;
use handle_resolver::wire::{Body, Limits, Message, ENVELOPE_LEN, HEADER_LEN};
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
    let digest_len = first.request_digest.as_ref().map_or(0, |d| d.encoded_len());
    let stray_error_bytes = matches!(&first.body, Body::Error(e) if e.message_absent())
        && first.header.body_length as usize != digest_len;
    let mut header = first.header;
    if stray_error_bytes {
        header.body_length = digest_len as u32;
    }
    assert_eq!(second.header, header);
    assert_eq!(second.request_digest, first.request_digest);
    assert_eq!(second.body, first.body);
    assert_eq!(second.credential, first.credential);
    assert_eq!(second.encode().expect("encodes again"), encoded);
    let without_credential_field =
        ENVELOPE_LEN + HEADER_LEN + first.header.body_length as usize == data.len();
    if !without_credential_field && !stray_error_bytes {
        assert_eq!(encoded, input, "re-encoding changed the bytes");
    }
    // The typed views of every value never panic and give back the data.
    for v in first.body.values() {
        assert_eq!(v.typed().encode().expect("typed view encodes"), v.data);
    }
});
