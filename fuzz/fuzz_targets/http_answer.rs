//! The native answer in an HTTP response body (`transport::decode_native_answer`, the
//! decode step of a native exchange over HTTP(S), reached without a socket).
//!
//! Input: bytes 0-1 the HTTP status (big-endian); byte 2 the length `n` of the
//! `Content-Type` value that follows (`0xFF`: no `Content-Type`; invalid UTF-8 replaced by
//! U+FFFD, as the transport reads header values); the rest is the body.
//!
//! Properties: decoding never panics, and its outcome is the wire decoder's: a content type
//! other than `application/x-hdl-message` (any parameters, any case) or an empty body is an
//! HTTP error; otherwise a body shorter than its envelope or than the message length it
//! declares is `Closed`, a message length beyond the limits or a frame that does not decode
//! is that decode error, a request is an HTTP error, and a response is the answer, equal
//! to `Message::decode` of the body's first frame; an answer encodes, and its encoding
//! decodes to it.
#![no_main]

use bytes::Bytes;
use handle_resolver::transport::{decode_native_answer, HDL_MIME_TYPE};
use handle_resolver::transport::{ExchangeOptions, TransportError};
use handle_resolver::wire::{Message, ENVELOPE_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<3>() else {
        return;
    };
    let status = u16::from_be_bytes([head[0], head[1]]);
    let (content_type, body) = match usize::from(head[2]) {
        0xFF => (None, rest),
        n if n <= rest.len() => {
            let (ct, body) = rest.split_at(n);
            (Some(String::from_utf8_lossy(ct).into_owned()), body)
        }
        _ => return,
    };
    let options = ExchangeOptions::default();
    let body = Bytes::copy_from_slice(body);
    let got = decode_native_answer(status, content_type.as_deref(), body.clone(), &options);

    let mime = content_type.as_deref().map(|c| {
        c.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    });
    if mime.is_some_and(|m| m != HDL_MIME_TYPE) || body.is_empty() {
        assert!(matches!(got, Err(TransportError::Http(_))), "{got:?}");
        return;
    }
    let Some(len) = body.get(16..ENVELOPE_LEN) else {
        assert_eq!(got, Err(TransportError::Closed));
        return;
    };
    let len = u32::from_be_bytes(len.try_into().expect("four bytes")) as usize;
    if len > options.limits.max_message_length {
        assert!(matches!(got, Err(TransportError::Decode(_))), "{got:?}");
        return;
    }
    if body.len() < ENVELOPE_LEN + len {
        assert_eq!(got, Err(TransportError::Closed));
        return;
    }
    match Message::decode(body.slice(..ENVELOPE_LEN + len), &options.limits) {
        Err(e) => assert_eq!(got, Err(TransportError::Decode(e))),
        Ok(m) if !m.is_response() => {
            assert!(matches!(got, Err(TransportError::Http(_))), "{got:?}");
        }
        Ok(m) => {
            assert_eq!(got.as_ref(), Ok(&m));
            let encoded = m.encode().expect("an answer read encodes");
            let again = Message::decode(encoded, &options.limits).expect("its encoding decodes");
            assert_eq!(again.body, m.body);
            assert_eq!(again.header.response_code, m.header.response_code);
        }
    }
});
