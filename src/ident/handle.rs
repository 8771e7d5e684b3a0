//! [`Handle`]: `PREFIX/SUFFIX` as RFC 3650/3651 define it (PROTOCOL.md §11.1).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::chars::{check_controls, check_input, find_byte, invalid_utf8_text, Span};
use super::error::IdentError;

/// The longest handle, in UTF-8 bytes, that the protocol carries: the reference
/// implementation's cap on a handle in a message (PROTOCOL.md §1.3). Identifier parsing
/// refuses a longer handle, so that nothing is sent that a server cannot read, and the wire
/// codec's default [`Limits::max_handle_length`](crate::wire::Limits::max_handle_length) is this
/// same constant.
pub const MAX_HANDLE_LENGTH: usize = 2048;

/// A handle, `PREFIX/SUFFIX`, split at the first `/`.
///
/// The prefix is one or more non-empty segments separated by `.`; the suffix is non-empty and may
/// contain `/`. Control characters are rejected, and so is a handle longer than
/// [`MAX_HANDLE_LENGTH`] bytes. The text is kept exactly as given (see
/// [`Handle::normalized`] for the canonical form); equality and hashing fold ASCII case in the
/// prefix, and in the whole handle when it starts with `0.`, as the Global Handle Registry does.
///
/// ```
/// use handle_resolver::Handle;
///
/// let h: Handle = "20.500.12345/Abc/1".parse()?;
/// assert_eq!(h.prefix(), "20.500.12345");
/// assert_eq!(h.suffix(), "Abc/1");
/// assert_eq!(h.parents().collect::<Vec<_>>(), ["20.500", "20"]);
/// assert_eq!(h.prefix_handle().to_string(), "0.NA/20.500.12345");
/// assert_eq!(Handle::parse("0.na/10.abc")?.normalized().to_string(), "0.NA/10.ABC");
/// assert_eq!(Handle::parse("cnri.Test/x")?, Handle::parse("CNRI.test/x")?);
/// assert_ne!(Handle::parse("10.1/x")?, Handle::parse("10.1/X")?);
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Handle {
    /// Shared, so that a resolution's many copies (its trace, its requests, its attempts)
    /// cost no allocation each.
    text: Arc<str>,
    slash: usize,
}

impl Handle {
    /// Parses a handle from text.
    ///
    /// ```
    /// use handle_resolver::ident::ErrorKind;
    /// use handle_resolver::Handle;
    ///
    /// assert_eq!(Handle::parse("10.1045/april2006-paskin")?.suffix(), "april2006-paskin");
    /// assert_eq!(Handle::parse("10.1045").unwrap_err().kind(), ErrorKind::MissingSlash);
    /// assert_eq!(Handle::parse("10..1/x").unwrap_err().kind(), ErrorKind::EmptyPrefixSegment);
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        check_input(s)?;
        Self::parse_checked_input(s)
    }

    /// [`Handle::parse`] of text that has passed `check_input` already (not empty, no
    /// control character).
    pub(crate) fn parse_checked_input(s: &str) -> Result<Self, IdentError> {
        let slash = find_byte(s, b'/').ok_or_else(|| IdentError::MissingSlash {
            at: s.len(),
            text: s.to_string(),
        })?;
        let prefix = s.get(..slash).unwrap_or_default();
        let suffix = s.get(slash.saturating_add(1)..).unwrap_or_default();
        let prefix_span = Span::plain(0, prefix);
        let suffix_span = Span::plain(slash.saturating_add(1), suffix);
        check_prefix(prefix, &prefix_span)?;
        check_suffix(suffix, &suffix_span)?;
        check_length(prefix, &prefix_span, suffix, &suffix_span)?;
        Ok(Self {
            text: Arc::from(s),
            slash,
        })
    }

    /// Parses a handle from bytes, as it travels in a message: they must be UTF-8.
    ///
    /// ```
    /// use handle_resolver::ident::ErrorKind;
    /// use handle_resolver::Handle;
    ///
    /// assert_eq!(Handle::parse_bytes(b"0.NA/10.1045")?.prefix(), "0.NA");
    /// let err = Handle::parse_bytes(b"10.1/\xff").unwrap_err();
    /// assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidUtf8, 5));
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, IdentError> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Self::parse(s),
            Err(e) => {
                let bad = e.valid_up_to();
                Err(IdentError::InvalidUtf8 {
                    at: bad,
                    text: invalid_utf8_text(bytes.get(bad..).unwrap_or_default()),
                })
            }
        }
    }

    /// Builds a handle from a prefix and a suffix (the suffix may contain `/`).
    ///
    /// ```
    /// use handle_resolver::Handle;
    ///
    /// assert_eq!(Handle::from_parts("10.1045", "a/b")?.as_str(), "10.1045/a/b");
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn from_parts(prefix: &str, suffix: &str) -> Result<Self, IdentError> {
        let suffix_at = prefix.len().saturating_add(1);
        Self::from_spans(
            prefix,
            &Span::plain(0, prefix),
            suffix,
            &Span::plain(suffix_at, suffix),
        )
    }

    /// Builds a handle whose parts came from elsewhere in the input (errors point there).
    pub(crate) fn from_spans(
        prefix: &str,
        prefix_span: &Span<'_>,
        suffix: &str,
        suffix_span: &Span<'_>,
    ) -> Result<Self, IdentError> {
        if let Some((i, c)) = prefix.char_indices().find(|(_, c)| c.is_control()) {
            return Err(IdentError::ControlCharacter {
                at: prefix_span.map(i),
                text: c.to_string(),
            });
        }
        if let Some((i, c)) = suffix.char_indices().find(|(_, c)| c.is_control()) {
            return Err(IdentError::ControlCharacter {
                at: suffix_span.map(i),
                text: c.to_string(),
            });
        }
        if let Some(i) = prefix.find('/') {
            return Err(IdentError::SlashInPrefix {
                at: prefix_span.map(i),
                text: prefix.to_string(),
            });
        }
        check_prefix(prefix, prefix_span)?;
        check_suffix(suffix, suffix_span)?;
        check_length(prefix, prefix_span, suffix, suffix_span)?;
        Ok(Self {
            text: Arc::from(format!("{prefix}/{suffix}")),
            slash: prefix.len(),
        })
    }

    /// Builds a handle from parts that have already been checked.
    pub(crate) fn from_checked_parts(prefix: &str, suffix: &str) -> Self {
        Self {
            text: Arc::from(format!("{prefix}/{suffix}")),
            slash: prefix.len(),
        }
    }

    /// The prefix handle `0.NA/<PREFIX>` of a prefix (upper-cased ASCII), after checking it.
    ///
    /// ```
    /// use handle_resolver::Handle;
    ///
    /// assert_eq!(Handle::for_prefix("10.1045")?.as_str(), "0.NA/10.1045");
    /// assert!(Handle::for_prefix("10.").is_err());
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn for_prefix(prefix: &str) -> Result<Self, IdentError> {
        check_controls(prefix, 0)?;
        if let Some(i) = prefix.find('/') {
            return Err(IdentError::SlashInPrefix {
                at: i,
                text: prefix.to_string(),
            });
        }
        let span = Span::plain(0, prefix);
        check_prefix(prefix, &span)?;
        // The prefix handle is what is sent: `0.NA/` and the prefix.
        check_length("0.NA", &Span::plain(0, ""), prefix, &span)?;
        Ok(Self::prefix_handle_of(prefix))
    }

    fn prefix_handle_of(prefix: &str) -> Self {
        Self {
            text: Arc::from(format!("0.NA/{}", prefix.to_ascii_uppercase())),
            slash: 4,
        }
    }

    /// The handle as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The handle's text, as parsed.
    ///
    /// ```
    /// use handle_resolver::Handle;
    ///
    /// assert_eq!(Handle::parse("10.1045/x")?.into_string(), "10.1045/x");
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn into_string(self) -> String {
        self.text.to_string()
    }

    /// The UTF-8 bytes sent on the wire.
    pub fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    /// The prefix (naming authority), before the first `/`.
    pub fn prefix(&self) -> &str {
        self.text.get(..self.slash).unwrap_or_default()
    }

    /// The suffix (local name), after the first `/`.
    pub fn suffix(&self) -> &str {
        self.text
            .get(self.slash.saturating_add(1)..)
            .unwrap_or_default()
    }

    /// The prefix's `.`-separated segments, left to right.
    pub fn prefix_segments(&self) -> impl Iterator<Item = &str> {
        self.prefix().split('.')
    }

    /// The prefix's ancestors, nearest first: `20.500.12345` gives `20.500`, then `20`.
    pub fn parents(&self) -> impl Iterator<Item = &str> {
        let prefix = self.prefix();
        std::iter::successors(Some(prefix), |p| p.rfind('.').and_then(|i| p.get(..i))).skip(1)
    }

    /// The prefix handle under which the prefix is registered: `0.NA/<PREFIX>`, ASCII
    /// upper-cased (for a handle under `0.NA` itself that is `0.NA/0.NA`).
    pub fn prefix_handle(&self) -> Handle {
        Self::prefix_handle_of(self.prefix())
    }

    /// True for handles of the global service, which the root sites serve themselves: those
    /// whose prefix is `0` or starts with `0.` (`0.NA/10.1045`, `0.SERV/x`, `0/abc`).
    ///
    /// ```
    /// use handle_resolver::Handle;
    ///
    /// assert!(Handle::parse("0.NA/10.1045")?.is_global());
    /// assert!(Handle::parse("0/abc")?.is_global());
    /// assert!(!Handle::parse("10.1045/abc")?.is_global());
    /// assert!(!Handle::parse("0a/b")?.is_global());
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn is_global(&self) -> bool {
        let prefix = self.prefix();
        prefix == "0" || prefix.starts_with("0.")
    }

    /// True for prefix handles, `0.NA/<prefix>` (any case).
    pub fn is_prefix_handle(&self) -> bool {
        self.prefix().eq_ignore_ascii_case("0.NA")
    }

    /// For a prefix handle `0.NA/a.b.c`, the parent prefix handle `0.NA/A.B`; `None` when the
    /// handle is not a prefix handle or names a top-level prefix.
    ///
    /// ```
    /// use handle_resolver::Handle;
    ///
    /// let h = Handle::parse("0.NA/20.500.12345")?;
    /// assert_eq!(h.parent_prefix_handle().map(|p| p.to_string()), Some("0.NA/20.500".into()));
    /// assert!(Handle::parse("0.NA/20")?.parent_prefix_handle().is_none());
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn parent_prefix_handle(&self) -> Option<Handle> {
        if !self.is_prefix_handle() || self.suffix().contains('/') {
            return None;
        }
        let suffix = self.suffix();
        let parent = suffix.get(..suffix.rfind('.')?)?;
        if parent.is_empty() || parent.split('.').any(str::is_empty) {
            return None;
        }
        Some(Self::prefix_handle_of(parent))
    }

    /// The normalized form: ASCII upper-cased in the prefix, and in the whole handle when it
    /// starts with `0.` (Java's `upperCasePrefix`). Non-ASCII is never touched.
    pub fn normalized(&self) -> Handle {
        let all = self.whole_folds();
        let text = self
            .text
            .char_indices()
            .map(|(i, c)| {
                if all || i < self.slash {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect::<String>();
        Self {
            text: Arc::from(text),
            slash: self.slash,
        }
    }

    /// True when the handle is already in [`normalized`](Self::normalized) form.
    pub fn is_normalized(&self) -> bool {
        self.norm_bytes().eq(self.text.bytes())
    }

    fn whole_folds(&self) -> bool {
        self.text.starts_with("0.")
    }

    fn norm_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let all = self.whole_folds();
        let slash = self.slash;
        self.text.bytes().enumerate().map(move |(i, b)| {
            if all || i < slash {
                b.to_ascii_uppercase()
            } else {
                b
            }
        })
    }
}

/// Checks a prefix: non-empty, no white space, segments non-empty.
pub(crate) fn check_prefix(prefix: &str, span: &Span<'_>) -> Result<(), IdentError> {
    if prefix.is_empty() {
        return Err(IdentError::EmptyPrefix {
            at: span.map(0),
            text: String::new(),
        });
    }
    let space = if prefix.is_ascii() {
        prefix.bytes().position(|b| char::from(b).is_whitespace())
    } else {
        prefix
            .char_indices()
            .find(|(_, c)| c.is_whitespace())
            .map(|(at, _)| at)
    };
    if let Some(at) = space {
        return Err(IdentError::PrefixWhitespace {
            at: span.map(at),
            text: prefix.to_string(),
        });
    }
    // Segments are separated by '.', an ASCII byte, so a byte scan finds the empty ones:
    // `start` is where the current segment begins.
    let mut start = 0usize;
    for (i, &b) in prefix.as_bytes().iter().enumerate() {
        if b == b'.' {
            if i == start {
                break;
            }
            start = i.saturating_add(1);
        }
    }
    let empty = start == prefix.len() || prefix.as_bytes().get(start) == Some(&b'.');
    if empty {
        return Err(IdentError::EmptyPrefixSegment {
            at: span.map(start),
            text: prefix.to_string(),
        });
    }
    Ok(())
}

/// Checks that `prefix/suffix` fits in [`MAX_HANDLE_LENGTH`] bytes; the error points at the
/// first byte past the limit (through the spans, so into the caller's input).
pub(crate) fn check_length(
    prefix: &str,
    prefix_span: &Span<'_>,
    suffix: &str,
    suffix_span: &Span<'_>,
) -> Result<(), IdentError> {
    let len = prefix.len().saturating_add(1).saturating_add(suffix.len());
    if len <= MAX_HANDLE_LENGTH {
        return Ok(());
    }
    let over = MAX_HANDLE_LENGTH; // index, in `prefix/suffix`, of the first byte too many
    let at = match over.checked_sub(prefix.len().saturating_add(1)) {
        Some(in_suffix) => suffix_span.map(in_suffix),
        None => prefix_span.map(over.min(prefix.len())),
    };
    let start: String = prefix.chars().take(24).collect();
    Err(IdentError::HandleTooLong {
        at,
        text: format!("{start}..."),
        len,
        limit: MAX_HANDLE_LENGTH,
    })
}

/// Checks a suffix: non-empty.
pub(crate) fn check_suffix(suffix: &str, span: &Span<'_>) -> Result<(), IdentError> {
    if suffix.is_empty() {
        return Err(IdentError::EmptySuffix {
            at: span.map(0),
            text: String::new(),
        });
    }
    Ok(())
}

impl PartialEq for Handle {
    fn eq(&self, other: &Self) -> bool {
        self.text.len() == other.text.len() && self.norm_bytes().eq(other.norm_bytes())
    }
}

impl Eq for Handle {}

impl Hash for Handle {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.text.len());
        for b in self.norm_bytes() {
            state.write_u8(b);
        }
    }
}

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Handle {
    type Err = IdentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl AsRef<str> for Handle {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl Serialize for Handle {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Handle {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}
