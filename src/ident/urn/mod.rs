//! URNs: `urn:fdc:` (RFC 4198) and Harvard's `urn-3`, with RFC 2169 resolution URLs.

mod fdc;
mod urn3;

pub use fdc::{DateId, FdcUrn};
pub use urn3::{Urn3, DEFAULT_URN3_RESOLVER};

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use super::chars::{check_controls, check_percent, is_pct_triplet, split_once_at};
use super::error::IdentError;

/// A URN in one of the supported namespaces.
///
/// URNs are not handles: they resolve over HTTP through the URLs of
/// [`resolution_urls`](Self::resolution_urls), not through the Handle System.
///
/// ```
/// use handle_resolver::ident::{ErrorKind, Urn};
///
/// let u = Urn::parse("urn:fdc:example.com:2002:A572007")?;
/// assert_eq!(u.namespace(), "fdc");
/// assert_eq!(u.resolution_urls(), [
///     "http://example.com/uri-res/N2L?urn:fdc:example.com:2002:A572007",
///     "http://example.com/uri-res/N2Ls?urn:fdc:example.com:2002:A572007",
/// ]);
/// assert_eq!(Urn::parse("urn:urn-3:HUL.OIS:Home")?.canonical(), "urn:urn-3:hul.ois:home");
/// let err = Urn::parse("urn:isbn:0451450523").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnsupportedUrnNamespace);
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Urn {
    /// `urn:fdc:...`
    Fdc(FdcUrn),
    /// `urn:urn-3:...` or `urn-3:...`
    Urn3(Urn3),
}

impl Urn {
    /// Parses `urn:fdc:...`, `urn:urn-3:...` or bare `urn-3:...`; `urn` and the namespace id
    /// are case-insensitive.
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        if s.is_empty() {
            return Err(IdentError::Empty {
                at: 0,
                text: String::new(),
            });
        }
        check_controls(s, 0)?;
        if s.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("urn-3:")) {
            return Urn3::parse_nss(s.get(6..).unwrap_or_default(), 6).map(Urn::Urn3);
        }
        let invalid = || IdentError::InvalidUrn {
            at: 0,
            text: s.to_string(),
        };
        if !s.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("urn:")) {
            return Err(invalid());
        }
        let rest = s.get(4..).unwrap_or_default();
        let (nid, nss) = split_once_at(rest, ':');
        let (i, nss) = nss.ok_or_else(invalid)?;
        if !valid_nid(nid) {
            return Err(IdentError::InvalidUrn {
                at: 4,
                text: nid.to_string(),
            });
        }
        let nss_base = 4usize.saturating_add(i).saturating_add(1);
        match nid.to_ascii_lowercase().as_str() {
            "fdc" => FdcUrn::parse_nss(nss, nss_base).map(Urn::Fdc),
            "urn-3" => Urn3::parse_nss(nss, nss_base).map(Urn::Urn3),
            _ => Err(IdentError::UnsupportedUrnNamespace {
                at: 4,
                text: nid.to_string(),
            }),
        }
    }

    /// The namespace: `"fdc"` or `"urn-3"`.
    pub fn namespace(&self) -> &'static str {
        match self {
            Urn::Fdc(_) => "fdc",
            Urn::Urn3(_) => "urn-3",
        }
    }

    /// The canonical form; two URNs are equivalent exactly when their canonical forms are equal.
    pub fn canonical(&self) -> String {
        match self {
            Urn::Fdc(u) => u.canonical(),
            Urn::Urn3(u) => u.canonical(),
        }
    }

    /// RFC 2169 resolution URLs: at the ProviderId for fdc, at [`DEFAULT_URN3_RESOLVER`] for
    /// urn-3 (use [`Urn3::resolution_urls`] for another resolver).
    pub fn resolution_urls(&self) -> Vec<String> {
        match self {
            Urn::Fdc(u) => u.resolution_urls(),
            Urn::Urn3(u) => u.resolution_urls(DEFAULT_URN3_RESOLVER).unwrap_or_default(),
        }
    }

    /// Notes a user should see, such as a reserved fdc DateId.
    pub fn notes(&self) -> Vec<String> {
        match self {
            Urn::Fdc(u) if u.date_id().is_reserved() => vec![format!(
                "DateId {} is a reserved 1-3 digit form (RFC 4198)",
                u.date_id()
            )],
            _ => Vec::new(),
        }
    }
}

/// RFC 8141 NID: alphanumeric, then up to 30 of alphanumeric or `-`, then alphanumeric.
fn valid_nid(nid: &str) -> bool {
    let b = nid.as_bytes();
    (2..=32).contains(&b.len())
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// Checks that every character of `s` (at `base`) is allowed by `ok` or is a `%XX` escape.
pub(crate) fn check_chars(
    s: &str,
    base: usize,
    what: &'static str,
    ok: impl Fn(u8) -> bool,
) -> Result<(), IdentError> {
    check_percent(s, base)?;
    match s
        .char_indices()
        .find(|&(_, c)| !(c == '%' || (c.is_ascii() && ok(c as u8))))
    {
        Some((i, c)) => Err(IdentError::UrnCharacter {
            at: base.saturating_add(i),
            text: c.to_string(),
            what,
        }),
        None => Ok(()),
    }
}

/// Upper-cases the hex digits of every `%XX` escape.
pub(crate) fn upper_hex_escapes(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut upper = 0usize;
    for (i, c) in s.char_indices() {
        if is_pct_triplet(bytes, i) {
            upper = 2;
            out.push(c);
        } else if upper > 0 {
            upper -= 1;
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl fmt::Display for Urn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Urn::Fdc(u) => u.fmt(f),
            Urn::Urn3(u) => u.fmt(f),
        }
    }
}

impl FromStr for Urn {
    type Err = IdentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Urn {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.canonical())
    }
}
