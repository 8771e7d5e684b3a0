//! Character classes (RFC 3986) and percent-encoding helpers shared by the parsers.

use percent_encoding::{percent_decode_str, percent_encode_byte, AsciiSet, CONTROLS};

use super::error::IdentError;

/// What the formatter percent-encodes in a handle's prefix or local name: everything outside
/// RFC 3986 `pchar` (non-ASCII is always encoded by `utf8_percent_encode`), including `/`.
pub(crate) const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Like [`SEGMENT`] but keeps `/` (for `doi:` suffixes, which may contain it).
pub(crate) const DOI_SUFFIX: &AsciiSet = &SEGMENT.remove(b'/');

/// A whole handle in a URL path (`/prefix/suffix`, as the reference client and the proxies
/// write it): [`SEGMENT`] keeping `/`.
pub(crate) const HANDLE_PATH: &AsciiSet = DOI_SUFFIX;

/// RFC 3986 `unreserved`.
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 `sub-delims`.
pub(crate) fn is_sub_delim(b: u8) -> bool {
    matches!(
        b,
        b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
    )
}

/// RFC 3986 `query` / `fragment` characters, other than `%`.
pub(crate) fn is_query_char(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || matches!(b, b':' | b'@' | b'/' | b'?')
}

/// Checks a whole input before any parsing: not empty, no control characters.
pub(crate) fn check_input(s: &str) -> Result<(), IdentError> {
    if s.is_empty() {
        return Err(IdentError::Empty {
            at: 0,
            text: String::new(),
        });
    }
    check_controls(s, 0)
}

/// The first (up to four) bytes of `rest`, the bytes where UTF-8 decoding failed, as `\xNN`.
pub(crate) fn invalid_utf8_text(rest: &[u8]) -> String {
    rest.iter().take(4).map(|b| format!("\\x{b:02X}")).collect()
}

/// Where the ASCII byte `b` first occurs in `s` (a char boundary, since `b` is ASCII).
/// Identifiers are tens of bytes: a plain loop, where `str::find` and `split_once` spent
/// about 100 instructions a call in setting up their searcher (with the four scans of a
/// plain handle's parse as plain loops, `to_target` went from 1,620 to 1,170 instructions:
/// callgrind, `loadgen --server ... --concurrency 256 --client-threads 0`, BENCHMARKS §11).
pub(crate) fn find_byte(s: &str, b: u8) -> Option<usize> {
    debug_assert!(b.is_ascii());
    s.bytes().position(|x| x == b)
}

/// Rejects control characters; `base` is the offset of `s` in the caller's input.
pub(crate) fn check_controls(s: &str, base: usize) -> Result<(), IdentError> {
    // ASCII text (nearly every identifier): the controls are the ASCII ones, found bytewise.
    let found = if s.is_ascii() {
        s.bytes().position(|b| b.is_ascii_control()).map(|i| {
            (
                i,
                char::from(s.as_bytes().get(i).copied().unwrap_or_default()),
            )
        })
    } else {
        s.char_indices().find(|(_, c)| c.is_control())
    };
    match found {
        Some((i, c)) => Err(IdentError::ControlCharacter {
            at: base.saturating_add(i),
            text: c.to_string(),
        }),
        None => Ok(()),
    }
}

/// True when `s[i..]` starts with `%` and two hex digits.
pub(crate) fn is_pct_triplet(s: &[u8], i: usize) -> bool {
    matches!(
        s.get(i..i.saturating_add(3)),
        Some([b'%', a, b]) if a.is_ascii_hexdigit() && b.is_ascii_hexdigit()
    )
}

/// Checks that every `%` in `s` starts a `%XX` triplet.
pub(crate) fn check_percent(s: &str, base: usize) -> Result<(), IdentError> {
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'%' && !is_pct_triplet(bytes, i) {
            let end = s
                .char_indices()
                .map(|(j, _)| j)
                .filter(|&j| j > i)
                .nth(2)
                .unwrap_or(s.len());
            return Err(IdentError::InvalidPercentEncoding {
                at: base.saturating_add(i),
                text: s.get(i..end).unwrap_or("%").to_string(),
            });
        }
    }
    Ok(())
}

/// RFC 3986 `pchar` other than `%`, plus `/`.
pub(crate) fn is_path_char(b: u8) -> bool {
    is_unreserved(b) || is_sub_delim(b) || matches!(b, b':' | b'@' | b'/')
}

/// Strict URI paths: every ASCII character must be in the grammar (non-ASCII is accepted, as
/// in an IRI, and percent-encoded on output).
pub(crate) fn check_path(s: &str, base: usize) -> Result<(), IdentError> {
    match s
        .char_indices()
        .find(|&(_, c)| c.is_ascii() && c != '%' && !is_path_char(c as u8))
    {
        Some((i, c)) => Err(IdentError::InvalidUriCharacter {
            at: base.saturating_add(i),
            text: c.to_string(),
        }),
        None => Ok(()),
    }
}

/// Checks a query or fragment against RFC 3986 (`strict`; non-ASCII is accepted as in an
/// IRI), or only for controls (`!strict`).
pub(crate) fn check_query(
    s: &str,
    base: usize,
    strict: bool,
    fragment: bool,
) -> Result<(), IdentError> {
    check_controls(s, base)?;
    if !strict {
        return Ok(());
    }
    check_percent(s, base)?;
    match s
        .char_indices()
        .find(|&(_, c)| c.is_ascii() && c != '%' && !is_query_char(c as u8))
    {
        Some((i, c)) => {
            let at = base.saturating_add(i);
            let text = c.to_string();
            Err(if fragment {
                IdentError::InvalidFragment { at, text }
            } else {
                IdentError::InvalidQuery { at, text }
            })
        }
        None => Ok(()),
    }
}

/// Formats a query or fragment: keeps the grammar's characters and valid `%XX`, encodes the rest.
pub(crate) fn encode_query(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &b) in bytes.iter().enumerate() {
        if is_query_char(b) || (b == b'%' && is_pct_triplet(bytes, i)) {
            out.push(char::from(b));
        } else {
            out.push_str(percent_encode_byte(b));
        }
    }
    out
}

/// A part of the input and how it maps back: `base` is its offset, `decoded` says whether the
/// text the caller sees was percent-decoded from `raw`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span<'a> {
    pub(crate) base: usize,
    pub(crate) raw: &'a str,
    pub(crate) decoded: bool,
}

impl<'a> Span<'a> {
    /// A span over text taken from the input as is, at `base`.
    pub(crate) fn plain(base: usize, raw: &'a str) -> Self {
        Self {
            base,
            raw,
            decoded: false,
        }
    }

    /// A span over URI text that the caller sees percent-decoded.
    pub(crate) fn decoded(base: usize, raw: &'a str) -> Self {
        Self {
            base,
            raw,
            decoded: true,
        }
    }

    /// The input offset of byte `i` of the (possibly decoded) text.
    pub(crate) fn map(&self, i: usize) -> usize {
        if !self.decoded {
            return self.base.saturating_add(i);
        }
        let bytes = self.raw.as_bytes();
        let (mut src, mut dec) = (0usize, 0usize);
        while dec < i && src < bytes.len() {
            src = src.saturating_add(if is_pct_triplet(bytes, src) { 3 } else { 1 });
            dec += 1;
        }
        self.base.saturating_add(src)
    }

    /// Percent-decodes the span to UTF-8 text.
    pub(crate) fn decode(&self) -> Result<String, IdentError> {
        check_percent(self.raw, self.base)?;
        let bytes: Vec<u8> = percent_decode_str(self.raw).collect();
        String::from_utf8(bytes).map_err(|e| {
            let bad = e.utf8_error().valid_up_to();
            IdentError::InvalidUtf8 {
                at: self.map(bad),
                text: invalid_utf8_text(e.as_bytes().get(bad..).unwrap_or_default()),
            }
        })
    }
}

/// Splits `s` into (before, after) at the first `c`, or `(s, None)`.
pub(crate) fn split_once_at(s: &str, c: char) -> (&str, Option<(usize, &str)>) {
    match s.find(c) {
        Some(i) => (
            s.get(..i).unwrap_or_default(),
            Some((i, s.get(i.saturating_add(1)..).unwrap_or_default())),
        ),
        None => (s, None),
    }
}

/// The URI scheme at the start of `s` (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`), if
/// the first `:` comes before any `/`.
pub(crate) fn scheme_of(s: &str) -> Option<&str> {
    let colon = find_byte(s, b':')?;
    let scheme = s.get(..colon)?;
    if s.get(..colon)?.contains('/') {
        return None;
    }
    let mut bytes = scheme.bytes();
    let first = bytes.next()?;
    if first.is_ascii_alphabetic()
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        Some(scheme)
    } else {
        None
    }
}
