//! [`CordraId`]: a handle whose prefix is digits and whose suffix is 32 hex digits.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

use super::chars::{
    check_controls, check_input, check_query, encode_query, find_byte, split_once_at, Span,
};
use super::error::IdentError;
use super::handle::{check_length, check_prefix, check_suffix, Handle};

/// A CORDRA identifier: prefix = digit-only segments separated by `.`, suffix = exactly 32 hex
/// digits (normalized to upper case), optionally followed by an RFC 3986 `?query` and
/// `#fragment`, which are kept but never sent on the wire ([`to_handle`](Self::to_handle) drops
/// them).
///
/// The suffix is also kept as written ([`written_handle`](Self::written_handle)): handles are
/// case sensitive unless a service says otherwise, so a resolver sends that one, and the
/// upper-case CORDRA form only when the CORDRA profile was asked for. Equality and hashing
/// follow the CORDRA rule: the suffix's case does not count.
///
/// ```
/// use handle_resolver::ident::CordraId;
///
/// let id = CordraId::parse("100.102/F58FB49EB1F848f0A606E84CEF294BE5?v=2#top")?;
/// assert_eq!(id.suffix(), "F58FB49EB1F848F0A606E84CEF294BE5");
/// assert_eq!((id.query(), id.fragment()), (Some("v=2"), Some("top")));
/// assert_eq!(id.to_handle().as_str(), "100.102/F58FB49EB1F848F0A606E84CEF294BE5");
/// assert_eq!(id.written_handle().as_str(), "100.102/F58FB49EB1F848f0A606E84CEF294BE5");
/// assert_eq!(id.to_string(), "100.102/F58FB49EB1F848F0A606E84CEF294BE5?v=2#top");
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CordraId {
    prefix: String,
    suffix: String,
    written: String,
    query: Option<String>,
    fragment: Option<String>,
}

impl CordraId {
    /// Parses `PREFIX/32HEX[?query][#fragment]`. For URI forms (`hdl:`, resolver URLs) use
    /// [`Identifier::parse_with`](super::Identifier::parse_with) with
    /// [`ParseOptions::cordra_only`](super::ParseOptions::cordra_only).
    ///
    /// ```
    /// use handle_resolver::ident::{CordraId, ErrorKind};
    ///
    /// let hyphenated = "100.102/f58fb49e-b1f8-48f0-a606-e84cef294be5";
    /// assert_eq!(CordraId::parse(hyphenated).unwrap_err().kind(), ErrorKind::CordraHyphenatedUuid);
    /// assert_eq!(CordraId::parse("10.abc/x").unwrap_err().kind(), ErrorKind::CordraPrefix);
    /// ```
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        check_input(s)?;
        let (prefix, rest) = split_once_at(s, '/');
        let (slash, rest) = rest.ok_or_else(|| IdentError::MissingSlash {
            at: s.len(),
            text: s.to_string(),
        })?;
        let base = slash.saturating_add(1);
        let (before_fragment, fragment) = split_once_at(rest, '#');
        let (suffix, query) = split_once_at(before_fragment, '?');
        if let Some((i, q)) = query {
            check_query(q, base.saturating_add(i).saturating_add(1), true, false)?;
        }
        if let Some((i, f)) = fragment {
            check_query(f, base.saturating_add(i).saturating_add(1), true, true)?;
        }
        let prefix_span = Span::plain(0, prefix);
        let suffix_span = Span::plain(base, suffix);
        check_cordra_prefix(prefix, &prefix_span)?;
        let upper = check_cordra_suffix(suffix, &suffix_span)?;
        check_length(prefix, &prefix_span, suffix, &suffix_span)?;
        Ok(Self::from_checked(
            prefix.to_string(),
            upper,
            suffix.to_string(),
            query.map(|(_, q)| encode_query(q)),
            fragment.map(|(_, f)| encode_query(f)),
        ))
    }

    /// False when `s` cannot be a CORDRA id because its suffix (after the first `/`, before
    /// any `#` fragment or `?` query) is not 32 bytes long: [`CordraId::parse`] would fail.
    /// Lets [`Identifier::parse_with`](super::Identifier::parse_with) skip the attempt (and
    /// the error it builds only to drop) for the plain handles most inputs are. Kept because
    /// it pays: without it a loopback resolution took 5.5-6.1 % more client instructions
    /// (callgrind, `loadgen --server ... --client-threads 0`, C = 256 and 1).
    pub(crate) fn may_match(s: &str) -> bool {
        let Some(slash) = find_byte(s, b'/') else {
            return false;
        };
        // The suffix ends at the query or the fragment, whichever comes first.
        let rest = s
            .as_bytes()
            .get(slash.saturating_add(1)..)
            .unwrap_or_default();
        let suffix_len = rest
            .iter()
            .position(|b| matches!(b, b'#' | b'?'))
            .unwrap_or(rest.len());
        suffix_len == 32
    }

    /// Checks that a handle meets the CORDRA rules (offsets are into the handle's text).
    ///
    /// ```
    /// use handle_resolver::ident::CordraId;
    /// use handle_resolver::Handle;
    ///
    /// let h = Handle::parse("100.102/f58fb49eb1f848f0a606e84cef294be5")?;
    /// assert_eq!(CordraId::from_handle(&h)?.suffix(), "F58FB49EB1F848F0A606E84CEF294BE5");
    /// assert!(CordraId::from_handle(&Handle::parse("10.1045/april2006-paskin")?).is_err());
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn from_handle(handle: &Handle) -> Result<Self, IdentError> {
        let prefix = handle.prefix();
        let suffix = handle.suffix();
        check_cordra_prefix(prefix, &Span::plain(0, prefix))?;
        let upper =
            check_cordra_suffix(suffix, &Span::plain(prefix.len().saturating_add(1), suffix))?;
        Ok(Self::from_checked(
            prefix.to_string(),
            upper,
            suffix.to_string(),
            None,
            None,
        ))
    }

    /// Mints a new id under `prefix` from a random (v4) UUID in its 32-hex-digit simple form.
    ///
    /// ```
    /// use handle_resolver::ident::CordraId;
    ///
    /// let id = CordraId::mint("20.500.12345")?;
    /// assert_eq!(id.suffix().len(), 32);
    /// assert_eq!(CordraId::parse(&id.to_string())?, id);
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn mint(prefix: &str) -> Result<Self, IdentError> {
        Self::from_uuid(prefix, Uuid::new_v4())
    }

    /// Makes the id `prefix/<uuid as 32 upper-case hex digits>`.
    ///
    /// ```
    /// use handle_resolver::ident::CordraId;
    /// use uuid::Uuid;
    ///
    /// let uuid = Uuid::parse_str("f58fb49e-b1f8-48f0-a606-e84cef294be5").unwrap();
    /// let id = CordraId::from_uuid("100.102", uuid)?;
    /// assert_eq!(id.to_string(), "100.102/F58FB49EB1F848F0A606E84CEF294BE5");
    /// assert_eq!(id.uuid(), uuid);
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn from_uuid(prefix: &str, uuid: Uuid) -> Result<Self, IdentError> {
        check_controls(prefix, 0)?;
        let span = Span::plain(0, prefix);
        check_cordra_prefix(prefix, &span)?;
        let suffix = format!("{:X}", uuid.simple());
        let suffix_span = Span::plain(prefix.len().saturating_add(1), &suffix);
        check_length(prefix, &span, &suffix, &suffix_span)?;
        Ok(Self::from_checked(
            prefix.to_string(),
            suffix.clone(),
            suffix,
            None,
            None,
        ))
    }

    /// An id from checked parts: `suffix` in upper case, `written` as the input had it.
    pub(crate) fn from_checked(
        prefix: String,
        suffix: String,
        written: String,
        query: Option<String>,
        fragment: Option<String>,
    ) -> Self {
        Self {
            prefix,
            suffix,
            written,
            query,
            fragment,
        }
    }

    /// The prefix (digits and dots).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The suffix: 32 upper-case hex digits.
    pub fn suffix(&self) -> &str {
        &self.suffix
    }

    /// The query, without `?`, as written (still percent-encoded; non-ASCII is
    /// percent-encoded too, so the id prints as a URI would).
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The fragment, without `#`, as written (still percent-encoded, non-ASCII too).
    pub fn fragment(&self) -> Option<&str> {
        self.fragment.as_deref()
    }

    /// The 128 bits of the suffix as a UUID.
    pub fn uuid(&self) -> Uuid {
        Uuid::try_parse(&self.suffix).unwrap_or_default()
    }

    /// The suffix as written (the same 32 hex digits as [`suffix`](Self::suffix), in the
    /// case the input had).
    pub fn written_suffix(&self) -> &str {
        &self.written
    }

    /// The handle in its CORDRA form, `prefix/SUFFIX` (upper-case suffix), without query or
    /// fragment: what is sent when the CORDRA profile was asked for.
    pub fn to_handle(&self) -> Handle {
        // Both parts were checked when the id was built.
        Handle::from_checked_parts(&self.prefix, &self.suffix)
    }

    /// The handle as written, without query or fragment: what a resolver sends unless the
    /// CORDRA profile was asked for (a case-sensitive server knows the handle only this way).
    pub fn written_handle(&self) -> Handle {
        // Both parts were checked when the id was built.
        Handle::from_checked_parts(&self.prefix, &self.written)
    }
}

/// Checks a CORDRA prefix: digit-only segments separated by `.`.
pub(crate) fn check_cordra_prefix(prefix: &str, span: &Span<'_>) -> Result<(), IdentError> {
    check_prefix(prefix, span)?;
    match prefix
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
    {
        Some((i, c)) => Err(IdentError::CordraPrefix {
            at: span.map(i),
            text: c.to_string(),
        }),
        None => Ok(()),
    }
}

/// Checks a CORDRA suffix and returns it upper-cased.
pub(crate) fn check_cordra_suffix(suffix: &str, span: &Span<'_>) -> Result<String, IdentError> {
    check_suffix(suffix, span)?;
    if suffix.len() == 36 && suffix.contains('-') && Uuid::try_parse(suffix).is_ok() {
        return Err(IdentError::CordraHyphenatedUuid {
            at: span.map(0),
            text: suffix.to_string(),
        });
    }
    if let Some((i, c)) = suffix.char_indices().find(|(_, c)| !c.is_ascii_hexdigit()) {
        return Err(IdentError::CordraSuffixNotHex {
            at: span.map(i),
            text: c.to_string(),
        });
    }
    if suffix.len() != 32 {
        return Err(IdentError::CordraSuffixLength {
            at: span.map(0),
            text: suffix.to_string(),
            found: suffix.len(),
        });
    }
    Ok(suffix.to_ascii_uppercase())
}

impl PartialEq for CordraId {
    fn eq(&self, other: &Self) -> bool {
        (&self.prefix, &self.suffix, &self.query, &self.fragment)
            == (&other.prefix, &other.suffix, &other.query, &other.fragment)
    }
}

impl Eq for CordraId {}

impl Hash for CordraId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (&self.prefix, &self.suffix, &self.query, &self.fragment).hash(state);
    }
}

impl CordraId {
    /// Writes the id with its suffix in CORDRA form, or as written.
    pub(crate) fn write(&self, f: &mut fmt::Formatter<'_>, as_written: bool) -> fmt::Result {
        let suffix = if as_written {
            &self.written
        } else {
            &self.suffix
        };
        write!(f, "{}/{}", self.prefix, suffix)?;
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        if let Some(frag) = &self.fragment {
            write!(f, "#{frag}")?;
        }
        Ok(())
    }
}

impl fmt::Display for CordraId {
    /// The id in CORDRA form (upper-case suffix), with its query and fragment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, false)
    }
}

impl FromStr for CordraId {
    type Err = IdentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for CordraId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CordraId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}
