//! `text/uri-list` (RFC 2483 §5), the body of an RFC 2169 `N2Ls` answer: one URI a line,
//! lines ending in CRLF, lines starting with `#` are comments. The order is kept: it is the
//! resolver's order of preference.
//!
//! ```
//! use handle_resolver::wire::{decode_uri_list, UriListError, MAX_URI_LIST_BYTES};
//!
//! let body = b"# urn:fdc:example.org:2024:a\r\nhttp://example.org/a\r\nftp://mirror.example.net/a\r\n";
//! assert_eq!(
//!     decode_uri_list(body, MAX_URI_LIST_BYTES)?,
//!     ["http://example.org/a", "ftp://mirror.example.net/a"]
//! );
//! let err = decode_uri_list(b"<!DOCTYPE html>\r\n", MAX_URI_LIST_BYTES).unwrap_err();
//! assert_eq!(err, UriListError::BadByte { line: 1, column: 0, byte: b'<' });
//! # Ok::<(), UriListError>(())
//! ```

use thiserror::Error;

/// The media type of a URI list.
pub const URI_LIST_MEDIA_TYPE: &str = "text/uri-list";

/// Default cap on a URI list's size in bytes: a list of a few hundred locations; a longer body
/// is not what an RFC 2169 resolver answers, and is refused before it is read.
pub const MAX_URI_LIST_BYTES: usize = 64 * 1024;

/// Why a body is not a usable `text/uri-list`. Lines are numbered from 1, columns (byte
/// offsets in the line) from 0.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum UriListError {
    /// The body is longer than the cap.
    #[error("uri-list: {len} bytes, more than the cap of {limit}")]
    TooLarge {
        /// The body's length.
        len: usize,
        /// The cap.
        limit: usize,
    },
    /// A line that is neither a comment nor a URI: no `scheme:` at its start.
    #[error("uri-list line {line}: {text:?} is not a URI (no scheme such as http:)")]
    NoScheme {
        /// The line number.
        line: usize,
        /// The start of the line (at most 40 characters, lossy UTF-8).
        text: String,
    },
    /// A line with a byte that a URI cannot hold (white space inside, a control, non-ASCII,
    /// `<`, `"`, ...) or a `%` without two hex digits.
    #[error("uri-list line {line}: byte {byte:#04x} at column {column} cannot be in a URI")]
    BadByte {
        /// The line number.
        line: usize,
        /// The byte's offset in the line.
        column: usize,
        /// The byte.
        byte: u8,
    },
}

/// Decodes a `text/uri-list` body into its URIs, in order. Comment lines (`#`) and blank lines
/// are skipped; white space around a URI is dropped; a line ending may be CRLF or LF. Any other
/// line that is not a URI (RFC 3986 characters only, starting with a scheme) rejects the whole
/// list: a resolver that sends garbage under this media type is not to be trusted for the rest.
/// A body longer than `max_bytes` is refused before it is looked at. An empty list (only
/// comments) is not an error.
pub fn decode_uri_list(body: &[u8], max_bytes: usize) -> Result<Vec<String>, UriListError> {
    if body.len() > max_bytes {
        return Err(UriListError::TooLarge {
            len: body.len(),
            limit: max_bytes,
        });
    }
    let mut uris = Vec::new();
    for (n, raw) in body.split(|&b| b == b'\n').enumerate() {
        let line = n.saturating_add(1);
        let trimmed = raw.trim_ascii();
        if trimmed.is_empty() || trimmed.first() == Some(&b'#') {
            continue;
        }
        let lead = raw.len().saturating_sub(raw.trim_ascii_start().len());
        check_uri(trimmed, line, lead)?;
        // Checked: ASCII only.
        uris.push(String::from_utf8_lossy(trimmed).into_owned());
    }
    Ok(uris)
}

/// Checks one URI (`lead` = its column in the line).
fn check_uri(uri: &[u8], line: usize, lead: usize) -> Result<(), UriListError> {
    let bad = |i: usize| UriListError::BadByte {
        line,
        column: lead.saturating_add(i),
        byte: uri.get(i).copied().unwrap_or_default(),
    };
    for (i, &b) in uri.iter().enumerate() {
        let ok = match b {
            b'%' => matches!(
                uri.get(i.saturating_add(1)..i.saturating_add(3)),
                Some([x, y]) if x.is_ascii_hexdigit() && y.is_ascii_hexdigit()
            ),
            _ => is_uri_byte(b),
        };
        if !ok {
            return Err(bad(i));
        }
    }
    let scheme_end = uri.iter().position(|&b| b == b':');
    let scheme_ok = scheme_end.is_some_and(|end| {
        let scheme = uri.get(..end).unwrap_or_default();
        scheme.first().is_some_and(u8::is_ascii_alphabetic)
            && scheme
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    if scheme_ok {
        Ok(())
    } else {
        Err(UriListError::NoScheme {
            line,
            text: String::from_utf8_lossy(uri).chars().take(40).collect(),
        })
    }
}

/// RFC 3986 `unreserved`, `gen-delims` and `sub-delims` (`%` is checked apart).
fn is_uri_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b':'
                | b'/'
                | b'?'
                | b'#'
                | b'['
                | b']'
                | b'@'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode(body: &str) -> Result<Vec<String>, UriListError> {
        decode_uri_list(body.as_bytes(), MAX_URI_LIST_BYTES)
    }

    #[test]
    fn keeps_order_and_skips_comments_and_blank_lines() {
        let body = "# urn:urn-3:hul.ois:home\r\n\
                    http://b.example.org/1\r\n\
                    \r\n\
                    #http://not-a-location.example.org/\r\n\
                    https://a.example.org/2?x=1&y=%2F#top\r\n\
                    urn:fdc:example.org:2024:a\r\n";
        assert_eq!(
            decode(body).unwrap(),
            [
                "http://b.example.org/1",
                "https://a.example.org/2?x=1&y=%2F#top",
                "urn:fdc:example.org:2024:a",
            ]
        );
    }

    #[test]
    fn bare_lf_no_final_newline_and_surrounding_blanks_are_accepted() {
        assert_eq!(
            decode("http://a.example/1\n  http://a.example/2\t\nhttp://a.example/3").unwrap(),
            [
                "http://a.example/1",
                "http://a.example/2",
                "http://a.example/3"
            ]
        );
        assert_eq!(decode("").unwrap(), Vec::<String>::new());
        assert_eq!(
            decode("# only a comment\r\n").unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn garbage_lines_are_rejected_naming_line_and_column() {
        let cases: &[(&str, UriListError)] = &[
            (
                "http://a.example/1\r\n<html><body>moved</body></html>\r\n",
                UriListError::BadByte {
                    line: 2,
                    column: 0,
                    byte: b'<',
                },
            ),
            (
                "http://a.example/a b\r\n",
                UriListError::BadByte {
                    line: 1,
                    column: 18,
                    byte: b' ',
                },
            ),
            (
                "  http://a.example/%zz\r\n",
                UriListError::BadByte {
                    line: 1,
                    column: 19,
                    byte: b'%',
                },
            ),
            (
                "http://a.example/caf\u{e9}\r\n",
                UriListError::BadByte {
                    line: 1,
                    column: 20,
                    byte: 0xc3,
                },
            ),
            (
                "http://a.example/\u{1}\r\n",
                UriListError::BadByte {
                    line: 1,
                    column: 17,
                    byte: 1,
                },
            ),
            (
                "#ok\r\nexample.org/a\r\n",
                UriListError::NoScheme {
                    line: 2,
                    text: "example.org/a".into(),
                },
            ),
            (
                "1http://a/\r\n",
                UriListError::NoScheme {
                    line: 1,
                    text: "1http://a/".into(),
                },
            ),
            (
                ":a\r\n",
                UriListError::NoScheme {
                    line: 1,
                    text: ":a".into(),
                },
            ),
        ];
        for (body, expected) in cases {
            assert_eq!(&decode(body).unwrap_err(), expected, "{body:?}");
        }
    }

    #[test]
    fn a_body_over_the_cap_is_refused_before_it_is_read() {
        let body = "http://a.example/1\r\n".repeat(10);
        assert!(decode_uri_list(body.as_bytes(), body.len()).is_ok());
        assert_eq!(
            decode_uri_list(body.as_bytes(), body.len() - 1).unwrap_err(),
            UriListError::TooLarge {
                len: body.len(),
                limit: body.len() - 1
            }
        );
    }

    proptest! {
        #[test]
        fn no_panic_and_what_is_accepted_is_uri_text(
            body in prop::collection::vec(any::<u8>(), 0..256),
        ) {
            match decode_uri_list(&body, MAX_URI_LIST_BYTES) {
                Ok(uris) => {
                    for uri in uris {
                        prop_assert!(!uri.is_empty());
                        prop_assert!(uri.bytes().all(|b| b.is_ascii_graphic()));
                        prop_assert!(uri.contains(':'));
                    }
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }

        #[test]
        fn lists_of_urls_read_back_in_order(
            urls in prop::collection::vec("(http|https|ftp)://[a-z0-9.-]{1,12}(/([A-Za-z0-9._~-]|%2F){0,12}){0,3}", 0..8),
            crlf in any::<bool>(),
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let body: String = urls.iter().map(|u| format!("# c{end}{u}{end}")).collect();
            prop_assert_eq!(decode(&body).unwrap(), urls);
        }
    }
}
