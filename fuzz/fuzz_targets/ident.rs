//! The identifier parser: `Identifier::parse_with` under the options the first byte picks.
//!
//! Input: byte 0 picks the [`ParseOptions`] (bit 0 lenient, bit 1 strict, bit 2 CORDRA
//! only: all eight combinations); the rest is the text (invalid UTF-8 replaced by U+FFFD, so
//! that no input is wasted).
//!
//! Properties: parsing never panics; an error names a byte inside the text and prints; what
//! parses prints (`Display`) as text that the default options parse back to the same
//! identifier; its handle fits `MAX_HANDLE_LENGTH`; CORDRA-only parsing gives only CORDRA
//! ids; `describe` agrees with the identifier; the `hdl:` URI parses back to the same
//! normalized handle; a URN's canonical form parses back to the same URN.
#![no_main]

use handle_resolver::ident::{IdentifierKind, ParseOptions, Urn, MAX_HANDLE_LENGTH};
use handle_resolver::Identifier;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let options = ParseOptions::default()
        .lenient(mode & 1 != 0)
        .strict(mode & 2 != 0)
        .cordra_only(mode & 4 != 0);
    let text = String::from_utf8_lossy(rest);
    let id = match Identifier::parse_with(&text, options) {
        Ok(id) => id,
        Err(e) => {
            assert!(e.offset() <= text.len(), "{text:?}: {e}");
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let printed = id.to_string();
    assert_eq!(
        Identifier::parse(&printed).as_ref(),
        Ok(&id),
        "{text:?} printed as {printed:?}"
    );
    if options.is_cordra_only() {
        assert_eq!(id.kind(), IdentifierKind::Cordra, "{text:?}");
    }
    if let Ok(h) = id.to_handle() {
        assert!(h.as_str().len() <= MAX_HANDLE_LENGTH);
    }
    let d = id.describe(&text);
    assert_eq!(d.kind, id.kind());
    assert_eq!(d.input, text);
    let normalized = id.normalized_handle();
    assert_eq!(d.handle.as_deref(), normalized.as_ref().map(|h| h.as_str()));
    assert_eq!(d.hdl_uri, id.hdl_uri());
    match (&id, &normalized) {
        (Identifier::Urn(urn), _) => {
            assert!(normalized.is_none());
            assert_eq!(Urn::parse(&urn.canonical()).as_ref(), Ok(urn), "{text:?}");
            assert_eq!(Urn::parse(&urn.to_string()).as_ref(), Ok(urn), "{text:?}");
        }
        (_, Some(h)) => {
            let uri = id.hdl_uri().expect("a handle has an hdl: URI");
            let back = Identifier::parse(&uri).expect("its hdl: URI parses");
            assert_eq!(back.normalized_handle().as_ref(), Some(h), "{uri:?}");
            assert_eq!(back.query(), id.query(), "{uri:?}");
            assert_eq!(back.fragment(), id.fragment(), "{uri:?}");
        }
        (_, None) => panic!("a handle or CORDRA id without a normalized handle: {text:?}"),
    }
    let _ = id.resolver_urls();
});
