//! The `text/uri-list` decoder (`wire::uri_list`), the body of an RFC 2169 `N2Ls` answer.
//!
//! Input: a body, decoded under a cap of `MAX_URI_LIST_BYTES`.
//!
//! Properties: decoding never panics; an error names a line of the body and, for a bad
//! byte, that byte at that column; every URI read is non-empty printable ASCII, no comment,
//! with a scheme, and there are no more URIs than lines; the URIs written back one a line
//! (CRLF) read back to the same list; a cap one byte short of the body refuses it.
#![no_main]

use handle_resolver::wire::{decode_uri_list, UriListError, MAX_URI_LIST_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let uris = match decode_uri_list(data, MAX_URI_LIST_BYTES) {
        Ok(uris) => uris,
        Err(UriListError::BadByte { line, column, byte }) => {
            let text = lines
                .get(line - 1)
                .expect("the error names a line of the body");
            assert_eq!(text.get(column), Some(&byte), "line {line} column {column}");
            return;
        }
        Err(UriListError::NoScheme { line, .. }) => {
            assert!(line >= 1 && line <= lines.len());
            return;
        }
        Err(e) => panic!("{e}: not expected under the cap"),
    };
    assert!(uris.len() <= lines.len());
    for uri in &uris {
        assert!(!uri.is_empty());
        assert!(!uri.starts_with('#'));
        assert!(uri.bytes().all(|b| b.is_ascii_graphic()), "{uri:?}");
        let scheme = uri.split(':').next().unwrap_or_default();
        assert!(scheme.len() < uri.len() && scheme.starts_with(|c: char| c.is_ascii_alphabetic()));
    }
    let written: String = uris.iter().map(|u| format!("{u}\r\n")).collect();
    assert_eq!(
        decode_uri_list(written.as_bytes(), usize::MAX).as_ref(),
        Ok(&uris)
    );
    if !data.is_empty() {
        assert_eq!(
            decode_uri_list(data, data.len() - 1),
            Err(UriListError::TooLarge {
                len: data.len(),
                limit: data.len() - 1
            })
        );
    }
});
