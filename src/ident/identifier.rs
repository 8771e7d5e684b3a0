//! [`Identifier`]: the one entry point that reads every supported form.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::chars::{check_input, scheme_of, Span};
use super::cordra::{check_cordra_prefix, check_cordra_suffix, CordraId};
use super::error::IdentError;
use super::handle::Handle;
use super::options::ParseOptions;
use super::uri::{
    is_proxy_url_without_scheme, parse_parts, parse_without_scheme, resolver_urls, HandleUri,
    UriForm,
};
use super::urn::Urn;

/// What an [`Identifier`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IdentifierKind {
    /// A handle (including DOIs and handles read from URIs).
    Handle,
    /// A handle that meets the CORDRA rules.
    Cordra,
    /// A URN (`fdc` or `urn-3`).
    Urn,
}

impl IdentifierKind {
    /// `"handle"`, `"cordra"` or `"urn"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            IdentifierKind::Handle => "handle",
            IdentifierKind::Cordra => "cordra",
            IdentifierKind::Urn => "urn",
        }
    }
}

impl fmt::Display for IdentifierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Any supported identifier: a handle, a CORDRA id or a URN.
///
/// [`Identifier::parse`] reads a bare handle (`PREFIX/SUFFIX`), `hdl:` and `hdl://` URIs,
/// HTTP(S) resolver URLs (REST API URLs too, and a proxy URL without its scheme such as
/// `doi.org/10.1000/x`; see [`ParseOptions`] for how), `doi:`, `urn:fdc:`, `urn:urn-3:` and
/// `urn-3:`. Whatever meets the CORDRA rules is reported as [`Identifier::Cordra`]; its
/// handle is still sent as written ([`to_handle`](Self::to_handle)), the CORDRA form is
/// [`normalized_handle`](Self::normalized_handle).
///
/// ```
/// use handle_resolver::ident::IdentifierKind;
/// use handle_resolver::Identifier;
///
/// let id = Identifier::parse("hdl://100.102/F58FB49EB1F848f0A606E84CEF294BE5")?;
/// assert_eq!(id.kind(), IdentifierKind::Cordra);
/// assert_eq!(id.to_handle()?.as_str(), "100.102/F58FB49EB1F848f0A606E84CEF294BE5");
/// assert_eq!(
///     id.normalized_handle().unwrap().as_str(),
///     "100.102/F58FB49EB1F848F0A606E84CEF294BE5"
/// );
///
/// let id = Identifier::parse("https://doi.org/10.1093/nar/gkaa1100")?;
/// assert_eq!(id.to_handle()?.as_str(), "10.1093/nar/gkaa1100");
///
/// let id = Identifier::parse("20.500.12345/1")?;
/// assert_eq!(id.kind(), IdentifierKind::Handle);
/// assert_eq!(id.hdl_uri().as_deref(), Some("hdl:20.500.12345/1"));
///
/// let id = Identifier::parse("urn:fdc:example.org:20010527:img089322-038")?;
/// assert_eq!(id.kind(), IdentifierKind::Urn);
/// assert!(id.to_handle().is_err()); // URNs resolve over HTTP, not as handles
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Identifier {
    /// A handle, with the query and fragment of the URI it was read from, if any.
    Handle {
        /// The handle (percent-decoded).
        handle: Handle,
        /// The URI query, without `?`.
        query: Option<String>,
        /// The URI fragment, without `#`.
        fragment: Option<String>,
    },
    /// A CORDRA id.
    Cordra(CordraId),
    /// A URN.
    Urn(Urn),
}

impl Identifier {
    /// Parses with the default options: as people paste identifiers (see [`ParseOptions`]).
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        Self::parse_with(s, ParseOptions::default())
    }

    /// Parses with options (the strict CORDRA URI profile, lenient URIs, CORDRA only).
    ///
    /// ```
    /// use handle_resolver::ident::{ErrorKind, ParseOptions};
    /// use handle_resolver::Identifier;
    ///
    /// let cordra = ParseOptions::default().cordra_only(true);
    /// let err = Identifier::parse_with("hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE", cordra)
    ///     .unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::CordraSuffixLength);
    /// assert_eq!(err.offset(), 12); // where the suffix starts in the input
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn parse_with(s: &str, options: ParseOptions) -> Result<Self, IdentError> {
        check_input(s)?;
        let scheme = scheme_of(s).map(str::to_ascii_lowercase);
        match scheme.as_deref() {
            Some("urn") | Some("urn-3") => {
                let urn = Urn::parse(s)?;
                if options.is_cordra_only() {
                    return Err(IdentError::NotCordra {
                        at: 0,
                        text: s.to_string(),
                    });
                }
                Ok(Identifier::Urn(urn))
            }
            Some(_) => {
                let (uri, prefix, suffix) = parse_parts(s, options)?;
                let (handle, query, fragment) = uri.into_parts();
                classify(handle, query, fragment, &prefix, &suffix, options)
            }
            None if !options.is_strict() && is_proxy_url_without_scheme(s) => {
                let (uri, prefix, suffix) = parse_without_scheme(s, options)?;
                let (handle, query, fragment) = uri.into_parts();
                classify(handle, query, fragment, &prefix, &suffix, options)
            }
            None if !options.is_cordra_only() && !CordraId::may_match(s) => {
                Ok(Identifier::Handle {
                    handle: Handle::parse_checked_input(s)?,
                    query: None,
                    fragment: None,
                })
            }
            None => match CordraId::parse(s) {
                Ok(id) => Ok(Identifier::Cordra(id)),
                Err(e) if options.is_cordra_only() => Err(e),
                Err(_) => Ok(Identifier::Handle {
                    handle: Handle::parse_checked_input(s)?,
                    query: None,
                    fragment: None,
                }),
            },
        }
    }

    /// What it is.
    pub fn kind(&self) -> IdentifierKind {
        match self {
            Identifier::Handle { .. } => IdentifierKind::Handle,
            Identifier::Cordra(_) => IdentifierKind::Cordra,
            Identifier::Urn(_) => IdentifierKind::Urn,
        }
    }

    /// The handle to resolve through the Handle System, as written (without query or
    /// fragment; a CORDRA id's suffix in the case it was given: handles are case sensitive).
    /// URNs are not handles: they give [`IdentError::UrnIsNotAHandle`].
    pub fn to_handle(&self) -> Result<Handle, IdentError> {
        match self {
            Identifier::Handle { handle, .. } => Ok(handle.clone()),
            Identifier::Cordra(id) => Ok(id.written_handle()),
            Identifier::Urn(urn) => Err(IdentError::UrnIsNotAHandle {
                at: 0,
                text: urn.to_string(),
            }),
        }
    }

    /// Like [`Identifier::to_handle`], taking the identifier apart instead of copying its
    /// handle.
    pub fn into_handle(self) -> Result<Handle, IdentError> {
        match self {
            Identifier::Handle { handle, .. } => Ok(handle),
            other => other.to_handle(),
        }
    }

    /// The query, without `?` (never sent on the wire).
    pub fn query(&self) -> Option<&str> {
        match self {
            Identifier::Handle { query, .. } => query.as_deref(),
            Identifier::Cordra(id) => id.query(),
            Identifier::Urn(_) => None,
        }
    }

    /// The fragment, without `#` (never sent on the wire).
    pub fn fragment(&self) -> Option<&str> {
        match self {
            Identifier::Handle { fragment, .. } => fragment.as_deref(),
            Identifier::Cordra(id) => id.fragment(),
            Identifier::Urn(_) => None,
        }
    }

    /// The CORDRA id, if it is one.
    pub fn as_cordra(&self) -> Option<&CordraId> {
        match self {
            Identifier::Cordra(id) => Some(id),
            _ => None,
        }
    }

    /// The URN, if it is one.
    pub fn as_urn(&self) -> Option<&Urn> {
        match self {
            Identifier::Urn(urn) => Some(urn),
            _ => None,
        }
    }

    /// The normalized handle, for handles and CORDRA ids: the prefix upper-cased, and a CORDRA
    /// id in its CORDRA form (upper-case suffix).
    pub fn normalized_handle(&self) -> Option<Handle> {
        match self {
            Identifier::Cordra(id) => Some(id.to_handle().normalized()),
            _ => self.to_handle().ok().map(|h| h.normalized()),
        }
    }

    /// The `hdl:` URI of the normalized handle, with query and fragment; `None` for URNs.
    pub fn hdl_uri(&self) -> Option<String> {
        let handle = self.normalized_handle()?;
        Some(
            HandleUri::new(UriForm::Hdl, handle)
                .with_query(self.query().map(str::to_string))
                .with_fragment(self.fragment().map(str::to_string))
                .to_string(),
        )
    }

    /// URLs that resolve it over HTTP: the Handle.Net proxy (and `doi.org` for `10.` prefixes),
    /// or a URN's RFC 2169 URLs.
    pub fn resolver_urls(&self) -> Vec<String> {
        match (self, self.normalized_handle()) {
            (Identifier::Urn(urn), _) => urn.resolution_urls(),
            (_, Some(h)) => resolver_urls(&h, self.query(), self.fragment()),
            (_, None) => Vec::new(),
        }
    }

    /// Everything `resolve --check` reports, ready for serde, for a resolver without the
    /// CORDRA profile: the handle is the one such a resolver sends (a CORDRA id's suffix as
    /// written), its CORDRA form beside it. [`Identifier::describe_with`] takes the profile
    /// from the parse options.
    ///
    /// ```
    /// use handle_resolver::Identifier;
    ///
    /// let d = Identifier::parse("doi:10.1045/april2006-paskin")?.describe("doi:10.1045/april2006-paskin");
    /// assert_eq!(d.handle.as_deref(), Some("10.1045/april2006-paskin"));
    /// assert_eq!(d.resolver_urls[1], "https://doi.org/10.1045/april2006-paskin");
    /// let cordra = "100.102/f58fb49eb1f848f0a606e84cef294be5";
    /// let d = Identifier::parse(cordra)?.describe(cordra);
    /// assert_eq!(d.handle.as_deref(), Some(cordra));
    /// assert_eq!(d.cordra_handle.as_deref(), Some("100.102/F58FB49EB1F848F0A606E84CEF294BE5"));
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn describe(&self, input: &str) -> Description {
        self.describe_with(input, ParseOptions::default())
    }

    /// As [`Identifier::describe`], for a resolver reading identifiers with `options`: under
    /// the CORDRA profile ([`ParseOptions::cordra_only`], what
    /// [`ResolverBuilder::strict_cordra`](crate::ResolverBuilder::strict_cordra) sends) the
    /// handle is a CORDRA id's CORDRA form (upper-case suffix).
    ///
    /// ```
    /// use handle_resolver::ident::ParseOptions;
    /// use handle_resolver::Identifier;
    ///
    /// let cordra = ParseOptions::default().cordra_only(true);
    /// let input = "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5";
    /// let d = Identifier::parse_with(input, cordra)?.describe_with(input, cordra);
    /// assert_eq!(d.handle.as_deref(), Some("100.102/F58FB49EB1F848F0A606E84CEF294BE5"));
    /// # Ok::<(), handle_resolver::ident::IdentError>(())
    /// ```
    pub fn describe_with(&self, input: &str, options: ParseOptions) -> Description {
        // What is sent: the handle as written (its prefix normalized, which servers fold
        // anyway), or under the CORDRA profile a CORDRA id's CORDRA form.
        let cordra = self.as_cordra().map(|id| id.to_handle().normalized());
        let handle = match &cordra {
            Some(c) if options.is_cordra_only() => Some(c.clone()),
            _ => self.to_handle().ok().map(|h| h.normalized()),
        };
        let urn = self.as_urn();
        let hdl_uri = handle.as_ref().map(|h| {
            HandleUri::new(UriForm::Hdl, h.clone())
                .with_query(self.query().map(str::to_string))
                .with_fragment(self.fragment().map(str::to_string))
                .to_string()
        });
        let urls = match (urn, &handle) {
            (Some(urn), _) => urn.resolution_urls(),
            (None, Some(h)) => resolver_urls(h, self.query(), self.fragment()),
            (None, None) => Vec::new(),
        };
        Description {
            input: input.to_string(),
            kind: self.kind(),
            prefix: handle.as_ref().map(|h| h.prefix().to_string()),
            suffix: handle.as_ref().map(|h| h.suffix().to_string()),
            handle: handle.as_ref().map(|h| h.to_string()),
            cordra_handle: cordra.map(|h| h.to_string()),
            query: self.query().map(str::to_string),
            fragment: self.fragment().map(str::to_string),
            hdl_uri,
            urn: urn.map(Urn::canonical),
            namespace: urn.map(Urn::namespace),
            resolver_urls: urls,
            notes: urn.map(Urn::notes).unwrap_or_default(),
        }
    }
}

fn classify(
    handle: Handle,
    query: Option<String>,
    fragment: Option<String>,
    prefix_span: &Span<'_>,
    suffix_span: &Span<'_>,
    options: ParseOptions,
) -> Result<Identifier, IdentError> {
    let checked = check_cordra_prefix(handle.prefix(), prefix_span)
        .and_then(|()| check_cordra_suffix(handle.suffix(), suffix_span));
    match checked {
        Ok(suffix) => Ok(Identifier::Cordra(CordraId::from_checked(
            handle.prefix().to_string(),
            suffix,
            handle.suffix().to_string(),
            query,
            fragment,
        ))),
        Err(e) if options.is_cordra_only() => Err(e),
        Err(_) => Ok(Identifier::Handle {
            handle,
            query,
            fragment,
        }),
    }
}

/// The normalized view of one identifier, as `resolve --check --json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Description {
    /// The text as given.
    pub input: String,
    /// `"handle"`, `"cordra"` or `"urn"`.
    pub kind: IdentifierKind,
    /// The handle as a resolver sends it (its prefix normalized; a CORDRA id's suffix as
    /// written, or its CORDRA form under the CORDRA profile); `None` for URNs.
    pub handle: Option<String>,
    /// A CORDRA id's CORDRA form (upper-case suffix), what the CORDRA profile sends; `None`
    /// for other identifiers.
    pub cordra_handle: Option<String>,
    /// The handle's prefix; `None` for URNs.
    pub prefix: Option<String>,
    /// The handle's suffix; `None` for URNs.
    pub suffix: Option<String>,
    /// URI query, without `?`.
    pub query: Option<String>,
    /// URI fragment, without `#`.
    pub fragment: Option<String>,
    /// The `hdl:` form of `handle`, with query and fragment; `None` for URNs.
    pub hdl_uri: Option<String>,
    /// The canonical URN; `None` for handles.
    pub urn: Option<String>,
    /// `"fdc"` or `"urn-3"`; `None` for handles.
    pub namespace: Option<&'static str>,
    /// HTTP URLs that resolve it (for a handle, of `handle`).
    pub resolver_urls: Vec<String>,
    /// Remarks, such as a reserved fdc DateId.
    pub notes: Vec<String>,
}

impl fmt::Display for Identifier {
    /// The shortest text that parses back to the same identifier: a bare handle when that is
    /// unambiguous, otherwise its `hdl:` URI; a CORDRA id bare, its suffix as written (that is
    /// the handle sent); a URN as written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Identifier::Handle {
                handle,
                query,
                fragment,
            } => {
                let bare_ok = query.is_none()
                    && fragment.is_none()
                    && Identifier::parse(handle.as_str()).is_ok_and(|id| &id == self);
                if bare_ok {
                    f.write_str(handle.as_str())
                } else {
                    HandleUri::new(UriForm::Hdl, handle.clone())
                        .with_query(query.clone())
                        .with_fragment(fragment.clone())
                        .fmt(f)
                }
            }
            Identifier::Cordra(id) => id.write(f, true),
            Identifier::Urn(urn) => urn.fmt(f),
        }
    }
}

impl FromStr for Identifier {
    type Err = IdentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for Identifier {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Identifier {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}
