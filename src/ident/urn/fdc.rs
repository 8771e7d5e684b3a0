//! `urn:fdc:` (RFC 4198): ProviderId, DateId and ResourceId, with their full ABNF.

use std::fmt;
use std::hash::{Hash, Hasher};

use time::{Date, Month};

use super::{check_chars, upper_hex_escapes};
use crate::ident::chars::split_once_at;
use crate::ident::error::IdentError;

const EXPECTED: &str = "urn:fdc:ProviderId:DateId:ResourceId";

/// The DateId of an fdc URN: a year, a month or a day that exists, or a reserved 1-3 digit id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DateId {
    /// `CCYY`.
    Year {
        /// The year.
        year: u16,
    },
    /// `CCYYMM`.
    Month {
        /// The year.
        year: u16,
        /// The month, 1-12.
        month: u8,
    },
    /// `CCYYMMDD`, a real calendar day.
    Day {
        /// The year.
        year: u16,
        /// The month, 1-12.
        month: u8,
        /// The day of the month.
        day: u8,
    },
    /// 1 to 3 digits: reserved by RFC 4198; accepted and flagged.
    Reserved {
        /// The value.
        value: u16,
        /// How many digits were written (leading zeros count).
        digits: u8,
    },
}

impl DateId {
    /// True for the reserved 1-3 digit form.
    pub fn is_reserved(&self) -> bool {
        matches!(self, DateId::Reserved { .. })
    }

    fn parse(text: &str, at: usize) -> Result<Self, IdentError> {
        if text.is_empty() {
            return Err(IdentError::EmptyUrnPart {
                at,
                text: String::new(),
                what: "DateId",
            });
        }
        let format_error = || IdentError::DateIdFormat {
            at,
            text: text.to_string(),
        };
        if !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 8 {
            return Err(format_error());
        }
        let num = |range: std::ops::Range<usize>| -> u16 {
            text.get(range)
                .and_then(|d| d.parse().ok())
                .unwrap_or_default()
        };
        let not_a_date = |reason| IdentError::DateIdNotADate {
            at,
            text: text.to_string(),
            reason,
        };
        let year = num(0..4);
        let month = u8::try_from(num(4..6)).unwrap_or_default();
        let checked_month =
            || Month::try_from(month).map_err(|_| not_a_date("the month must be 01 to 12"));
        match text.len() {
            1..=3 => Ok(DateId::Reserved {
                value: num(0..text.len()),
                digits: u8::try_from(text.len()).unwrap_or_default(),
            }),
            4 => Ok(DateId::Year { year }),
            6 => checked_month().map(|_| DateId::Month { year, month }),
            8 => {
                let day = u8::try_from(num(6..8)).unwrap_or_default();
                Date::from_calendar_date(i32::from(year), checked_month()?, day)
                    .map_err(|_| not_a_date("that month has no such day"))?;
                Ok(DateId::Day { year, month, day })
            }
            _ => Err(format_error()),
        }
    }
}

impl fmt::Display for DateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DateId::Year { year } => write!(f, "{year:04}"),
            DateId::Month { year, month } => write!(f, "{year:04}{month:02}"),
            DateId::Day { year, month, day } => write!(f, "{year:04}{month:02}{day:02}"),
            DateId::Reserved { value, digits } => {
                write!(f, "{value:0width$}", width = usize::from(digits))
            }
        }
    }
}

/// An `urn:fdc:ProviderId:DateId:ResourceId` URN (RFC 4198).
///
/// Equivalence (`==`, `Hash`): `urn` and `fdc` case-insensitive, `%XX` hex case-insensitive,
/// ProviderId lower-cased, the rest exact. [`canonical`](Self::canonical) gives that form.
///
/// ```
/// use handle_resolver::ident::{DateId, FdcUrn};
///
/// let u = FdcUrn::parse("urn:fdc:example.net:200406:ivr:51089")?;
/// assert_eq!(u.provider_id(), "example.net");
/// assert_eq!(u.date_id(), DateId::Month { year: 2004, month: 6 });
/// assert_eq!(u.resource_id(), "ivr:51089");
/// assert_eq!(u, FdcUrn::parse("URN:FDC:Example.NET:200406:ivr:51089")?);
/// assert_eq!(u.resolution_urls()[0], "http://example.net/uri-res/N2L?urn:fdc:example.net:200406:ivr:51089");
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FdcUrn {
    provider: String,
    date: DateId,
    resource: String,
}

impl FdcUrn {
    /// Parses a whole `urn:fdc:...` URN.
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        match super::Urn::parse(s)? {
            super::Urn::Fdc(u) => Ok(u),
            super::Urn::Urn3(_) => Err(IdentError::UnsupportedUrnNamespace {
                at: 0,
                text: "urn-3 (expected fdc)".to_string(),
            }),
        }
    }

    /// Parses the part after `urn:fdc:`, which starts at `base` in the input.
    pub(crate) fn parse_nss(nss: &str, base: usize) -> Result<Self, IdentError> {
        let missing = |what| IdentError::MissingUrnPart {
            at: base.saturating_add(nss.len()),
            text: nss.to_string(),
            what,
            expected: EXPECTED,
        };
        let (provider, rest) = split_once_at(nss, ':');
        let (i, rest) = rest.ok_or_else(|| missing("DateId"))?;
        let date_base = base.saturating_add(i).saturating_add(1);
        let (date, rest) = split_once_at(rest, ':');
        let (j, resource) = rest.ok_or_else(|| missing("ResourceId"))?;
        let resource_base = date_base.saturating_add(j).saturating_add(1);
        check_provider(provider, base)?;
        let date = DateId::parse(date, date_base)?;
        if resource.is_empty() {
            return Err(IdentError::EmptyUrnPart {
                at: resource_base,
                text: String::new(),
                what: "ResourceId",
            });
        }
        check_chars(resource, resource_base, "ResourceId", |b| {
            b.is_ascii_alphanumeric() || b"()+,-.:=@;$_!*'".contains(&b)
        })?;
        Ok(Self {
            provider: provider.to_string(),
            date,
            resource: resource.to_string(),
        })
    }

    /// The ProviderId (a domain name), as written.
    pub fn provider_id(&self) -> &str {
        &self.provider
    }

    /// The DateId.
    pub fn date_id(&self) -> DateId {
        self.date
    }

    /// The ResourceId, as written (may contain `:` and `%XX`).
    pub fn resource_id(&self) -> &str {
        &self.resource
    }

    /// The canonical form: `urn:fdc:` + lower-case ProviderId + DateId + ResourceId with
    /// upper-case `%XX`.
    pub fn canonical(&self) -> String {
        format!(
            "urn:fdc:{}:{}:{}",
            self.provider.to_ascii_lowercase(),
            self.date,
            upper_hex_escapes(&self.resource)
        )
    }

    /// The RFC 2169 resolution URLs at the provider: `N2L` (to a URL) then `N2Ls` (all URLs).
    pub fn resolution_urls(&self) -> Vec<String> {
        let host = self.provider.to_ascii_lowercase();
        let urn = self.canonical();
        ["N2L", "N2Ls"]
            .iter()
            .map(|service| format!("http://{host}/uri-res/{service}?{urn}"))
            .collect()
    }
}

/// ProviderId: labels of letters, digits and inner `-`, at least one dot, top label starting
/// with a letter.
fn check_provider(provider: &str, base: usize) -> Result<(), IdentError> {
    if provider.is_empty() {
        return Err(IdentError::EmptyUrnPart {
            at: base,
            text: String::new(),
            what: "ProviderId",
        });
    }
    let error = |at: usize, reason| IdentError::InvalidProviderId {
        at: base.saturating_add(at),
        text: provider.to_string(),
        reason,
    };
    if !provider.contains('.') {
        return Err(error(0, "it needs at least one dot, as in example.com"));
    }
    let mut at = 0usize;
    let labels = provider.split('.').count();
    for (n, label) in provider.split('.').enumerate() {
        if label.is_empty() {
            return Err(error(at, "a label between dots is empty"));
        }
        if let Some((i, _)) = label
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return Err(error(
                at.saturating_add(i),
                "labels hold only letters, digits and '-'",
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(error(at, "a label cannot start or end with '-'"));
        }
        let top = n.saturating_add(1) == labels;
        if top && !label.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Err(error(at, "the top-level label must start with a letter"));
        }
        at = at.saturating_add(label.len()).saturating_add(1);
    }
    Ok(())
}

impl PartialEq for FdcUrn {
    fn eq(&self, other: &Self) -> bool {
        self.canonical() == other.canonical()
    }
}

impl Eq for FdcUrn {}

impl Hash for FdcUrn {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.canonical().hash(state);
    }
}

impl fmt::Display for FdcUrn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "urn:fdc:{}:{}:{}",
            self.provider, self.date, self.resource
        )
    }
}
