//! The one error type of the identifier layer: what is wrong, where (byte offset) and with what text.
//!
//! Every variant carries `at`, the byte offset in the text the caller passed to the parser, and
//! `text`, the offending part of it. Offsets inside percent-encoded URI parts point at the encoded
//! input, not at the decoded text. The `Display` form says what to do about it, for example
//! `suffix has 31 hex digits, a CORDRA id needs 32 (at byte 8)`.

use thiserror::Error;

/// Why an identifier was rejected. The variant is the kind; every variant carries the byte
/// offset `at` and the offending `text`.
///
/// ```
/// use handle_resolver::ident::{CordraId, ErrorKind};
///
/// let err = CordraId::parse("100.102/F58FB49EB1F848f0A606E84CEF294BE").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::CordraSuffixLength);
/// assert_eq!(err.offset(), 8);
/// assert_eq!(err.to_string(), "suffix has 31 hex digits, a CORDRA id needs 32 (at byte 8)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum IdentError {
    /// The input is empty.
    #[error("the identifier is empty (at byte {at})")]
    Empty {
        /// Byte offset.
        at: usize,
        /// Offending text (empty).
        text: String,
    },
    /// Bytes that are not UTF-8 (directly, or after percent-decoding).
    #[error("invalid UTF-8 {text} (at byte {at}); identifiers are UTF-8 text")]
    InvalidUtf8 {
        /// Byte offset.
        at: usize,
        /// The first offending bytes, in hex.
        text: String,
    },
    /// A control character (C0, DEL or C1).
    #[error("control character {} is not allowed (at byte {at})", .text.escape_unicode())]
    ControlCharacter {
        /// Byte offset.
        at: usize,
        /// The character.
        text: String,
    },
    /// A handle without `/` between prefix and suffix.
    #[error("no '/' in {text:?}: a handle is PREFIX/SUFFIX; to name a prefix write 0.NA/{text} (at byte {at})")]
    MissingSlash {
        /// Byte offset (end of input).
        at: usize,
        /// The text that has no slash.
        text: String,
    },
    /// Nothing before the first `/`.
    #[error("the prefix before '/' is empty (at byte {at})")]
    EmptyPrefix {
        /// Byte offset.
        at: usize,
        /// Offending text.
        text: String,
    },
    /// A prefix with an empty `.`-separated segment (`10..1`, `.10`, `10.`).
    #[error("prefix {text:?} has an empty segment; segments are separated by single dots (at byte {at})")]
    EmptyPrefixSegment {
        /// Byte offset of the empty segment.
        at: usize,
        /// The whole prefix.
        text: String,
    },
    /// A prefix containing white space (`" 10.1045"`, `"10. 1045"`): no registered prefix has
    /// any, and it is almost always a copy-and-paste slip.
    #[error("prefix {text:?} contains white space; a prefix is segments separated by dots (at byte {at})")]
    PrefixWhitespace {
        /// Byte offset of the white-space character.
        at: usize,
        /// The whole prefix.
        text: String,
    },
    /// A prefix that would contain `/` (written `%2F` in a URI, or given to a prefix API).
    #[error("a prefix cannot contain '/', the separator between prefix and suffix (at byte {at})")]
    SlashInPrefix {
        /// Byte offset of the `/`.
        at: usize,
        /// The prefix.
        text: String,
    },
    /// Nothing after the first `/`.
    #[error("the suffix after '/' is empty (at byte {at})")]
    EmptySuffix {
        /// Byte offset.
        at: usize,
        /// Offending text.
        text: String,
    },
    /// A handle longer than the protocol carries ([`MAX_HANDLE_LENGTH`](super::MAX_HANDLE_LENGTH)
    /// bytes of UTF-8): servers refuse it, so it is never sent.
    #[error("the handle is {len} bytes long; the protocol carries at most {limit} (at byte {at})")]
    HandleTooLong {
        /// Byte offset of the first byte past the limit.
        at: usize,
        /// The start of the handle.
        text: String,
        /// The handle's length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A CORDRA prefix holds something other than digits and dots.
    #[error("character {text:?} in the prefix: a CORDRA prefix is digits separated by dots (at byte {at})")]
    CordraPrefix {
        /// Byte offset of the character.
        at: usize,
        /// The character.
        text: String,
    },
    /// A CORDRA suffix with the wrong number of hex digits.
    #[error("suffix has {found} hex digit{}, a CORDRA id needs 32 (at byte {at})", if *found == 1 { "" } else { "s" })]
    CordraSuffixLength {
        /// Byte offset of the suffix.
        at: usize,
        /// The suffix.
        text: String,
        /// How many hex digits it has.
        found: usize,
    },
    /// A CORDRA suffix with a character that is not a hex digit.
    #[error("suffix character {text:?} is not a hex digit; a CORDRA id suffix is 32 hex digits (at byte {at})")]
    CordraSuffixNotHex {
        /// Byte offset of the character.
        at: usize,
        /// The character.
        text: String,
    },
    /// A CORDRA suffix written as a hyphenated UUID.
    #[error("suffix {text:?} is a hyphenated UUID; a CORDRA id uses its 32-hex-digit form without '-' (at byte {at})")]
    CordraHyphenatedUuid {
        /// Byte offset of the suffix.
        at: usize,
        /// The suffix.
        text: String,
    },
    /// A character outside the RFC 3986 query grammar.
    #[error("character {text:?} is not allowed in a query; percent-encode it (at byte {at})")]
    InvalidQuery {
        /// Byte offset of the character.
        at: usize,
        /// The character.
        text: String,
    },
    /// A character outside the RFC 3986 fragment grammar.
    #[error("character {text:?} is not allowed in a fragment; percent-encode it (at byte {at})")]
    InvalidFragment {
        /// Byte offset of the character.
        at: usize,
        /// The character.
        text: String,
    },
    /// An ASCII character outside the URI grammar in a URI path (strict parsing).
    #[error("character {text:?} is not allowed in a URI path; percent-encode it, or parse leniently (at byte {at})")]
    InvalidUriCharacter {
        /// Byte offset of the character.
        at: usize,
        /// The character.
        text: String,
    },
    /// A `%` not followed by two hex digits.
    #[error("'%' must be followed by two hex digits, found {text:?} (at byte {at})")]
    InvalidPercentEncoding {
        /// Byte offset of the `%`.
        at: usize,
        /// The `%` and what follows (up to two characters).
        text: String,
    },
    /// A URI scheme this library does not read.
    #[error("unsupported scheme {text:?}: use hdl:, hdl://, doi:, http(s)://, urn:fdc:, urn:urn-3: or a bare PREFIX/SUFFIX handle (at byte {at})")]
    UnsupportedScheme {
        /// Byte offset of the scheme.
        at: usize,
        /// The scheme.
        text: String,
    },
    /// A URI that needs a scheme has none.
    #[error("{text:?} has no URI scheme such as hdl: (at byte {at})")]
    MissingScheme {
        /// Byte offset.
        at: usize,
        /// The input.
        text: String,
    },
    /// `http(s)://` without a host, or an authority that is not `host[:port]`.
    #[error("invalid or missing authority {text:?} after '//': expected host[:port], the host a name, an IPv4 address or a bracketed IPv6 address, the port 0-65535 (at byte {at})")]
    InvalidAuthority {
        /// Byte offset of the host.
        at: usize,
        /// The host as written.
        text: String,
    },
    /// A `/` inside a local name where the strict URI grammar has none.
    #[error("the local name contains '/'; write it as %2F, or parse leniently (at byte {at})")]
    ExtraPathSegment {
        /// Byte offset of the `/`.
        at: usize,
        /// The rest of the path from that `/`.
        text: String,
    },
    /// A `doi:` whose prefix does not start with `10.`.
    #[error("DOI prefix {text:?} must start with \"10.\" (at byte {at})")]
    DoiPrefix {
        /// Byte offset of the prefix.
        at: usize,
        /// The prefix.
        text: String,
    },
    /// Text starting with `urn:` that is not `urn:NID:NSS`.
    #[error("malformed URN {text:?}: expected urn:NAMESPACE:SPECIFIC-STRING (at byte {at})")]
    InvalidUrn {
        /// Byte offset.
        at: usize,
        /// Offending text.
        text: String,
    },
    /// A URN namespace id that breaks RFC 8141.
    #[error("URN namespace id {text:?} must be 2 to 32 letters, digits or '-', starting and ending with a letter or digit (at byte {at})")]
    InvalidUrnNamespaceId {
        /// Byte offset of the namespace id.
        at: usize,
        /// The namespace id.
        text: String,
    },
    /// A well-formed URN in a namespace other than `fdc` and `urn-3`.
    #[error("unsupported URN namespace {text:?}: only fdc (RFC 4198) and urn-3 are supported (at byte {at})")]
    UnsupportedUrnNamespace {
        /// Byte offset of the namespace id.
        at: usize,
        /// The namespace id.
        text: String,
    },
    /// A URN of the other supported namespace where one was asked for (`FdcUrn::parse` given
    /// a urn-3, or the reverse).
    #[error("URN namespace {text:?} where {expected} URN was expected (at byte {at})")]
    WrongUrnNamespace {
        /// Byte offset of the namespace id.
        at: usize,
        /// The namespace id as written.
        text: String,
        /// The namespace wanted, with its article (`"an fdc"`, `"an urn-3"`).
        expected: &'static str,
    },
    /// A URN part that is missing altogether (too few `:`).
    #[error("the URN has no {what} after {text:?}; expected {expected} (at byte {at})")]
    MissingUrnPart {
        /// Byte offset (end of input).
        at: usize,
        /// The URN so far.
        text: String,
        /// Which part.
        what: &'static str,
        /// The full form expected.
        expected: &'static str,
    },
    /// A URN part that is present but empty.
    #[error("the {what} is empty (at byte {at})")]
    EmptyUrnPart {
        /// Byte offset.
        at: usize,
        /// Offending text (empty).
        text: String,
        /// Which part.
        what: &'static str,
    },
    /// An fdc ProviderId that is not a domain name with at least one dot.
    #[error("ProviderId {text:?} is not a domain name: {reason} (at byte {at})")]
    InvalidProviderId {
        /// Byte offset of the problem.
        at: usize,
        /// The ProviderId.
        text: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// An fdc DateId with a non-digit or the wrong number of digits.
    #[error(
        "DateId {text:?} must be CCYY, CCYYMM, CCYYMMDD or a reserved 1-3 digit id (at byte {at})"
    )]
    DateIdFormat {
        /// Byte offset of the DateId.
        at: usize,
        /// The DateId.
        text: String,
    },
    /// An fdc DateId naming a day that does not exist.
    #[error("DateId {text:?} is not a real calendar date: {reason} (at byte {at})")]
    DateIdNotADate {
        /// Byte offset of the DateId.
        at: usize,
        /// The DateId.
        text: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A character not allowed in a URN part.
    #[error(
        "character {text:?} is not allowed in a {what}; percent-encode it as %XX (at byte {at})"
    )]
    UrnCharacter {
        /// Byte offset of the character.
        at: usize,
        /// The character.
        text: String,
        /// Which part.
        what: &'static str,
    },
    /// A host name for resolution URLs that is not one.
    #[error("invalid resolver host {text:?} (at byte {at})")]
    InvalidResolverHost {
        /// Byte offset in the host text.
        at: usize,
        /// The host.
        text: String,
    },
    /// A URN was asked for as a handle.
    #[error(
        "{text} is a URN, not a handle; it resolves through its RFC 2169 N2L URLs (at byte {at})"
    )]
    UrnIsNotAHandle {
        /// Always 0.
        at: usize,
        /// The URN.
        text: String,
    },
    /// A CORDRA id was required and something else was given.
    #[error("{text} is a URN, not a CORDRA id (at byte {at})")]
    NotCordra {
        /// Byte offset.
        at: usize,
        /// The identifier.
        text: String,
    },
}

/// The kind of an [`IdentError`], without its data (handy for matching in tables and tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is empty.
    Empty,
    /// Bytes that are not UTF-8 (directly, or after percent-decoding).
    InvalidUtf8,
    /// A control character (C0, DEL or C1).
    ControlCharacter,
    /// A handle without `/` between prefix and suffix.
    MissingSlash,
    /// Nothing before the first `/`.
    EmptyPrefix,
    /// A prefix with an empty `.`-separated segment (`10..1`, `.10`, `10.`).
    EmptyPrefixSegment,
    /// A prefix containing white space.
    PrefixWhitespace,
    /// A prefix that would contain `/` (written `%2F` in a URI, or given to a prefix API).
    SlashInPrefix,
    /// Nothing after the first `/`.
    EmptySuffix,
    /// A handle longer than the protocol carries.
    HandleTooLong,
    /// A CORDRA prefix holds something other than digits and dots.
    CordraPrefix,
    /// A CORDRA suffix with the wrong number of hex digits.
    CordraSuffixLength,
    /// A CORDRA suffix with a character that is not a hex digit.
    CordraSuffixNotHex,
    /// A CORDRA suffix written as a hyphenated UUID.
    CordraHyphenatedUuid,
    /// A character outside the RFC 3986 query grammar.
    InvalidQuery,
    /// A character outside the RFC 3986 fragment grammar.
    InvalidFragment,
    /// An ASCII character outside the URI grammar in a URI path (strict parsing).
    InvalidUriCharacter,
    /// A `%` not followed by two hex digits.
    InvalidPercentEncoding,
    /// A URI scheme this library does not read.
    UnsupportedScheme,
    /// A URI that needs a scheme has none.
    MissingScheme,
    /// `http(s)://` without a host, or an authority that is not `host[:port]`.
    InvalidAuthority,
    /// A `/` inside a local name where the strict URI grammar has none.
    ExtraPathSegment,
    /// A `doi:` whose prefix does not start with `10.`.
    DoiPrefix,
    /// Text starting with `urn:` that is not `urn:NID:NSS`.
    InvalidUrn,
    /// A URN namespace id that breaks RFC 8141.
    InvalidUrnNamespaceId,
    /// A well-formed URN in a namespace other than `fdc` and `urn-3`.
    UnsupportedUrnNamespace,
    /// A URN of the other supported namespace where one was asked for.
    WrongUrnNamespace,
    /// A URN part that is missing altogether (too few `:`).
    MissingUrnPart,
    /// A URN part that is present but empty.
    EmptyUrnPart,
    /// An fdc ProviderId that is not a domain name with at least one dot.
    InvalidProviderId,
    /// An fdc DateId with a non-digit or the wrong number of digits.
    DateIdFormat,
    /// An fdc DateId naming a day that does not exist.
    DateIdNotADate,
    /// A character not allowed in a URN part.
    UrnCharacter,
    /// A host name for resolution URLs that is not one.
    InvalidResolverHost,
    /// A URN was asked for as a handle.
    UrnIsNotAHandle,
    /// A CORDRA id was required and something else was given.
    NotCordra,
}

impl IdentError {
    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        use IdentError as E;
        match self {
            E::Empty { .. } => ErrorKind::Empty,
            E::InvalidUtf8 { .. } => ErrorKind::InvalidUtf8,
            E::ControlCharacter { .. } => ErrorKind::ControlCharacter,
            E::MissingSlash { .. } => ErrorKind::MissingSlash,
            E::EmptyPrefix { .. } => ErrorKind::EmptyPrefix,
            E::EmptyPrefixSegment { .. } => ErrorKind::EmptyPrefixSegment,
            E::PrefixWhitespace { .. } => ErrorKind::PrefixWhitespace,
            E::SlashInPrefix { .. } => ErrorKind::SlashInPrefix,
            E::EmptySuffix { .. } => ErrorKind::EmptySuffix,
            E::HandleTooLong { .. } => ErrorKind::HandleTooLong,
            E::CordraPrefix { .. } => ErrorKind::CordraPrefix,
            E::CordraSuffixLength { .. } => ErrorKind::CordraSuffixLength,
            E::CordraSuffixNotHex { .. } => ErrorKind::CordraSuffixNotHex,
            E::CordraHyphenatedUuid { .. } => ErrorKind::CordraHyphenatedUuid,
            E::InvalidQuery { .. } => ErrorKind::InvalidQuery,
            E::InvalidFragment { .. } => ErrorKind::InvalidFragment,
            E::InvalidUriCharacter { .. } => ErrorKind::InvalidUriCharacter,
            E::InvalidPercentEncoding { .. } => ErrorKind::InvalidPercentEncoding,
            E::UnsupportedScheme { .. } => ErrorKind::UnsupportedScheme,
            E::MissingScheme { .. } => ErrorKind::MissingScheme,
            E::InvalidAuthority { .. } => ErrorKind::InvalidAuthority,
            E::ExtraPathSegment { .. } => ErrorKind::ExtraPathSegment,
            E::DoiPrefix { .. } => ErrorKind::DoiPrefix,
            E::InvalidUrn { .. } => ErrorKind::InvalidUrn,
            E::InvalidUrnNamespaceId { .. } => ErrorKind::InvalidUrnNamespaceId,
            E::UnsupportedUrnNamespace { .. } => ErrorKind::UnsupportedUrnNamespace,
            E::WrongUrnNamespace { .. } => ErrorKind::WrongUrnNamespace,
            E::MissingUrnPart { .. } => ErrorKind::MissingUrnPart,
            E::EmptyUrnPart { .. } => ErrorKind::EmptyUrnPart,
            E::InvalidProviderId { .. } => ErrorKind::InvalidProviderId,
            E::DateIdFormat { .. } => ErrorKind::DateIdFormat,
            E::DateIdNotADate { .. } => ErrorKind::DateIdNotADate,
            E::UrnCharacter { .. } => ErrorKind::UrnCharacter,
            E::InvalidResolverHost { .. } => ErrorKind::InvalidResolverHost,
            E::UrnIsNotAHandle { .. } => ErrorKind::UrnIsNotAHandle,
            E::NotCordra { .. } => ErrorKind::NotCordra,
        }
    }

    /// The byte offset of the problem in the text given to the parser.
    pub fn offset(&self) -> usize {
        let (at, _) = self.parts();
        at
    }

    /// The offending text.
    pub fn text(&self) -> &str {
        let (_, text) = self.parts();
        text
    }

    fn parts(&self) -> (usize, &str) {
        use IdentError as E;
        match self {
            E::Empty { at, text }
            | E::InvalidUtf8 { at, text }
            | E::ControlCharacter { at, text }
            | E::MissingSlash { at, text }
            | E::EmptyPrefix { at, text }
            | E::EmptyPrefixSegment { at, text }
            | E::PrefixWhitespace { at, text }
            | E::SlashInPrefix { at, text }
            | E::EmptySuffix { at, text }
            | E::HandleTooLong { at, text, .. }
            | E::CordraPrefix { at, text }
            | E::CordraSuffixLength { at, text, .. }
            | E::CordraSuffixNotHex { at, text }
            | E::CordraHyphenatedUuid { at, text }
            | E::InvalidQuery { at, text }
            | E::InvalidFragment { at, text }
            | E::InvalidUriCharacter { at, text }
            | E::InvalidPercentEncoding { at, text }
            | E::UnsupportedScheme { at, text }
            | E::MissingScheme { at, text }
            | E::InvalidAuthority { at, text }
            | E::ExtraPathSegment { at, text }
            | E::DoiPrefix { at, text }
            | E::InvalidUrn { at, text }
            | E::InvalidUrnNamespaceId { at, text }
            | E::UnsupportedUrnNamespace { at, text }
            | E::WrongUrnNamespace { at, text, .. }
            | E::MissingUrnPart { at, text, .. }
            | E::EmptyUrnPart { at, text, .. }
            | E::InvalidProviderId { at, text, .. }
            | E::DateIdFormat { at, text }
            | E::DateIdNotADate { at, text, .. }
            | E::UrnCharacter { at, text, .. }
            | E::InvalidResolverHost { at, text }
            | E::UrnIsNotAHandle { at, text }
            | E::NotCordra { at, text } => (*at, text),
        }
    }
}
