//! Harvard's `urn-3` namespace: `urn:urn-3:authoritypath:resourcename`.

use std::fmt;
use std::hash::{Hash, Hasher};

use super::check_chars;
use crate::ident::chars::split_once_at;
use crate::ident::error::IdentError;

/// Harvard's Name Resolution Service, the usual resolver for `urn-3`.
pub const DEFAULT_URN3_RESOLVER: &str = "nrs.harvard.edu";

const EXPECTED: &str = "urn:urn-3:AUTHORITY.PATH:RESOURCENAME";

fn authority_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"()+,-=@;$_!*'".contains(&b)
}

/// A `urn-3` URN. The whole URN is case-insensitive: `==` and `Hash` compare the
/// [`canonical`](Self::canonical) form, which is lower case with the `urn:` prefix.
///
/// ```
/// use handle_resolver::ident::Urn3;
///
/// let u = Urn3::parse("urn-3:HBS.Baker.TC:1923")?;
/// assert_eq!(u.authority_path(), "HBS.Baker.TC");
/// assert_eq!(u.canonical(), "urn:urn-3:hbs.baker.tc:1923");
/// assert_eq!(u, Urn3::parse("URN:URN-3:hbs.baker.tc:1923")?);
/// assert_eq!(u.resolution_urls("nrs.harvard.edu")?[2], "http://nrs.harvard.edu/urn-3:hbs.baker.tc:1923");
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Urn3 {
    authority_path: String,
    resource: String,
}

impl Urn3 {
    /// Parses `urn:urn-3:...` or the bare `urn-3:...` form.
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        match super::Urn::parse(s)? {
            super::Urn::Urn3(u) => Ok(u),
            super::Urn::Fdc(_) => Err(IdentError::UnsupportedUrnNamespace {
                at: 0,
                text: "fdc (expected urn-3)".to_string(),
            }),
        }
    }

    /// Parses the part after `urn-3:`, which starts at `base` in the input.
    pub(crate) fn parse_nss(nss: &str, base: usize) -> Result<Self, IdentError> {
        let (path, rest) = split_once_at(nss, ':');
        let (i, resource) = rest.ok_or_else(|| IdentError::MissingUrnPart {
            at: base.saturating_add(nss.len()),
            text: nss.to_string(),
            what: "resource name",
            expected: EXPECTED,
        })?;
        let mut at = base;
        for authority in path.split('.') {
            if authority.is_empty() {
                return Err(IdentError::EmptyUrnPart {
                    at,
                    text: String::new(),
                    what: "urn-3 authority",
                });
            }
            check_chars(authority, at, "urn-3 authority", authority_char)?;
            at = at.saturating_add(authority.len()).saturating_add(1);
        }
        let resource_base = base.saturating_add(i).saturating_add(1);
        if resource.is_empty() {
            return Err(IdentError::EmptyUrnPart {
                at: resource_base,
                text: String::new(),
                what: "urn-3 resource name",
            });
        }
        check_chars(resource, resource_base, "urn-3 resource name", |b| {
            authority_char(b) || b == b'.' || b == b':'
        })?;
        Ok(Self {
            authority_path: path.to_string(),
            resource: resource.to_string(),
        })
    }

    /// The authority path (authorities joined by `.`), as written.
    pub fn authority_path(&self) -> &str {
        &self.authority_path
    }

    /// The authorities, left to right.
    pub fn authorities(&self) -> impl Iterator<Item = &str> {
        self.authority_path.split('.')
    }

    /// The resource name, as written.
    pub fn resource_name(&self) -> &str {
        &self.resource
    }

    /// The canonical form: lower case, with the `urn:` prefix.
    pub fn canonical(&self) -> String {
        format!(
            "urn:urn-3:{}:{}",
            self.authority_path.to_ascii_lowercase(),
            self.resource.to_ascii_lowercase()
        )
    }

    /// Resolution URLs at `host` (`name[:port]`): RFC 2169 `N2L` and `N2Ls`, then the
    /// PURL-like `http://<host>/urn-3:<authoritypath>:<resourcename>`.
    pub fn resolution_urls(&self, host: &str) -> Result<Vec<String>, IdentError> {
        check_host(host)?;
        let canonical = self.canonical();
        let bare = canonical.strip_prefix("urn:").unwrap_or(&canonical);
        Ok(vec![
            format!("http://{host}/uri-res/N2L?{canonical}"),
            format!("http://{host}/uri-res/N2Ls?{canonical}"),
            format!("http://{host}/{bare}"),
        ])
    }
}

fn check_host(host: &str) -> Result<(), IdentError> {
    let bad = host
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':' | '[' | ']')));
    match bad {
        Some((at, _)) => Err(IdentError::InvalidResolverHost {
            at,
            text: host.to_string(),
        }),
        None if host.is_empty() => Err(IdentError::InvalidResolverHost {
            at: 0,
            text: String::new(),
        }),
        None => Ok(()),
    }
}

impl PartialEq for Urn3 {
    fn eq(&self, other: &Self) -> bool {
        self.canonical() == other.canonical()
    }
}

impl Eq for Urn3 {}

impl Hash for Urn3 {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.canonical().hash(state);
    }
}

impl fmt::Display for Urn3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "urn:urn-3:{}:{}", self.authority_path, self.resource)
    }
}
