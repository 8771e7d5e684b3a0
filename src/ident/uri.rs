//! [`HandleUri`]: `hdl:`, `hdl://`, `doi:` and HTTP(S) resolver URLs naming a handle.

use std::fmt;
use std::net::Ipv6Addr;
use std::str::FromStr;

use percent_encoding::{utf8_percent_encode, AsciiSet};

use super::chars::{
    check_input, check_path, check_query, encode_query, find_byte, scheme_of, split_once_at, Span,
    DOI_SUFFIX, SEGMENT,
};
use super::error::IdentError;
use super::handle::Handle;
use super::options::ParseOptions;

/// The global Handle.Net HTTP proxy.
pub const HANDLE_PROXY: &str = "hdl.handle.net";
/// The DOI Foundation's HTTP proxy (for handles whose prefix starts with `10.`).
pub const DOI_PROXY: &str = "doi.org";

/// Which URI form a [`HandleUri`] was written in (and is formatted in).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum UriForm {
    /// `hdl:PREFIX/LOCAL` (path form).
    Hdl,
    /// `hdl://PREFIX/LOCAL` (host form).
    HdlHost,
    /// `doi:10.PREFIX/SUFFIX` (the suffix may contain `/`).
    Doi,
    /// `http(s)://authority/[segment/]PREFIX/LOCAL`, a resolver URL such as
    /// `https://hdl.handle.net/...` or `http://host:2641/hdl/...`.
    Http {
        /// `https` rather than `http`.
        secure: bool,
        /// `host[:port]`.
        authority: String,
        /// The resolver's own first path segment (e.g. `hdl`), if any.
        segment: Option<String>,
    },
}

/// A handle written as a URI, with its optional query and fragment (kept in URI form: as
/// written, with what the URI grammar does not allow, such as non-ASCII, percent-encoded).
/// The handle itself is percent-decoded.
///
/// Strict parsing (the default) takes exactly two path segments, PREFIX and LOCAL: a `/` inside
/// the local name must be written `%2F`, and ASCII outside the URI grammar (a space, `<`, ...)
/// must be percent-encoded; non-ASCII is accepted as in an IRI. Lenient parsing takes everything
/// after the prefix's `/` and accepts any character but controls.
/// For resolver URLs a first segment is the resolver's own (like `hdl`) when there are three or
/// more and it has no `.` and is not all digits (prefixes such as `10` or `20.500` never look
/// like that). `doi:` always takes the rest as the suffix, since DOI suffixes may contain `/`.
///
/// ```
/// use handle_resolver::ident::{HandleUri, UriForm};
///
/// let uri = HandleUri::parse("http://arrow.resolver.au.gov:2641/hdl/100.102/a%2Fb?x=1")?;
/// assert_eq!(uri.handle().as_str(), "100.102/a/b");
/// assert_eq!(uri.query(), Some("x=1"));
/// assert!(matches!(uri.form(), UriForm::Http { segment: Some(s), .. } if s == "hdl"));
/// let hdl = HandleUri::new(UriForm::Hdl, uri.handle().clone());
/// assert_eq!(hdl.to_string(), "hdl:100.102/a%2Fb");
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HandleUri {
    form: UriForm,
    handle: Handle,
    query: Option<String>,
    fragment: Option<String>,
}

impl HandleUri {
    /// A URI in `form` for `handle`, without query or fragment.
    pub fn new(form: UriForm, handle: Handle) -> Self {
        Self {
            form,
            handle,
            query: None,
            fragment: None,
        }
    }

    /// Sets the query (without `?`); the formatter percent-encodes what the grammar forbids.
    pub fn with_query(mut self, query: Option<String>) -> Self {
        self.query = query;
        self
    }

    /// Sets the fragment (without `#`).
    pub fn with_fragment(mut self, fragment: Option<String>) -> Self {
        self.fragment = fragment;
        self
    }

    /// Parses strictly.
    pub fn parse(s: &str) -> Result<Self, IdentError> {
        Self::parse_with(s, ParseOptions::default())
    }

    /// Parses with options (see [`ParseOptions::lenient`]).
    pub fn parse_with(s: &str, options: ParseOptions) -> Result<Self, IdentError> {
        parse_parts(s, options).map(|(uri, _, _)| uri)
    }

    /// The form it is written in.
    pub fn form(&self) -> &UriForm {
        &self.form
    }

    /// The handle (percent-decoded).
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The query, without `?`, in URI form (see [`HandleUri`]).
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The fragment, without `#`, in URI form.
    pub fn fragment(&self) -> Option<&str> {
        self.fragment.as_deref()
    }

    /// Takes the parts: handle, query, fragment.
    pub fn into_parts(self) -> (Handle, Option<String>, Option<String>) {
        (self.handle, self.query, self.fragment)
    }
}

/// The HTTP resolver URLs for a handle: the Handle.Net proxy, and for a DOI prefix (`10.…`)
/// also `doi.org`.
///
/// ```
/// use handle_resolver::ident::resolver_urls;
/// use handle_resolver::Handle;
///
/// let h = Handle::parse("10.1045/april2006-paskin")?;
/// assert_eq!(resolver_urls(&h, None, None), [
///     "https://hdl.handle.net/10.1045/april2006-paskin",
///     "https://doi.org/10.1045/april2006-paskin",
/// ]);
/// # Ok::<(), handle_resolver::ident::IdentError>(())
/// ```
pub fn resolver_urls(handle: &Handle, query: Option<&str>, fragment: Option<&str>) -> Vec<String> {
    let mut hosts = vec![HANDLE_PROXY];
    let prefix = handle.prefix();
    if prefix.starts_with("10.") {
        hosts.push(DOI_PROXY);
    }
    hosts
        .into_iter()
        .map(|host| {
            let form = UriForm::Http {
                secure: true,
                authority: host.to_string(),
                segment: None,
            };
            HandleUri::new(form, handle.clone())
                .with_query(query.map(str::to_string))
                .with_fragment(fragment.map(str::to_string))
                .to_string()
        })
        .collect()
}

/// The hosts of the public HTTP proxies, whose whole path is the handle (no resolver segment
/// of their own): a URL on one of them is also recognized without its scheme
/// (`doi.org/10.1000/x`).
pub const PROXY_HOSTS: &[&str] = &["hdl.handle.net", "doi.org", "dx.doi.org", "www.doi.org"];

/// The path prefix of the proxies' REST API (`/api/handles/<handle>`).
const REST_API: &str = "api/handles/";

/// The URI schemes read, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Hdl,
    Doi,
    /// `http(s)://`, or a proxy URL pasted without its scheme (`authority_first`).
    Http {
        secure: bool,
        authority_first: bool,
    },
}

/// Parses a URI, also returning where the prefix and the local name sit in the input.
pub(crate) fn parse_parts(
    s: &str,
    options: ParseOptions,
) -> Result<(HandleUri, Span<'_>, Span<'_>), IdentError> {
    check_input(s)?;
    let scheme = scheme_of(s).ok_or_else(|| IdentError::MissingScheme {
        at: 0,
        text: s.to_string(),
    })?;
    let after = scheme.len().saturating_add(1);
    let rest = s.get(after..).unwrap_or_default();
    let kind = match scheme.to_ascii_lowercase().as_str() {
        "hdl" => Scheme::Hdl,
        "doi" => Scheme::Doi,
        "http" => Scheme::Http {
            secure: false,
            authority_first: false,
        },
        "https" => Scheme::Http {
            secure: true,
            authority_first: false,
        },
        _ => {
            return Err(IdentError::UnsupportedScheme {
                at: 0,
                text: scheme.to_string(),
            })
        }
    };
    parse_after_scheme(kind, rest, after, options)
}

/// True when `s` (without a scheme) starts with the host of a public proxy and a `/`:
/// `doi.org/10.1000/x`, `hdl.handle.net/20.500.1/1` (ASCII case-insensitive).
pub(crate) fn is_proxy_url_without_scheme(s: &str) -> bool {
    find_byte(s, b'/')
        .and_then(|slash| s.get(..slash))
        .is_some_and(|host| {
            PROXY_HOSTS
                .iter()
                .any(|proxy| proxy.eq_ignore_ascii_case(host))
        })
}

/// Parses a proxy URL pasted without its scheme (see [`is_proxy_url_without_scheme`]), as
/// `https://` would have it.
pub(crate) fn parse_without_scheme(
    s: &str,
    options: ParseOptions,
) -> Result<(HandleUri, Span<'_>, Span<'_>), IdentError> {
    check_input(s)?;
    let kind = Scheme::Http {
        secure: true,
        authority_first: true,
    };
    parse_after_scheme(kind, s, 0, options)
}

/// Parses what follows the scheme (`rest`, at `after` in the input).
fn parse_after_scheme(
    kind: Scheme,
    rest: &str,
    after: usize,
    options: ParseOptions,
) -> Result<(HandleUri, Span<'_>, Span<'_>), IdentError> {
    // Resolver URLs are read as the proxies read them unless the CORDRA profile is asked for:
    // then no grammar check but for controls, as a proxy has none either.
    let proxy = matches!(kind, Scheme::Http { .. }) && !options.is_strict();
    let grammar = !options.is_lenient() && !proxy;
    let (before_fragment, fragment) = split_once_at(rest, '#');
    let (hier, query) = split_once_at(before_fragment, '?');
    if let Some((i, q)) = query {
        check_query(q, after.saturating_add(i).saturating_add(1), grammar, false)?;
    }
    if let Some((i, f)) = fragment {
        check_query(f, after.saturating_add(i).saturating_add(1), grammar, true)?;
    }
    let (form, prefix, local) = match kind {
        Scheme::Hdl => match hier.strip_prefix("//") {
            Some(host_path) => {
                let (p, l) = split_path(host_path, after.saturating_add(2), grammar)?;
                (UriForm::HdlHost, p, l)
            }
            None => {
                let (p, l) = split_path(hier, after, grammar)?;
                (UriForm::Hdl, p, l)
            }
        },
        Scheme::Doi => {
            let (p, l) = split_path(hier, after, false)?;
            (UriForm::Doi, p, l)
        }
        Scheme::Http {
            secure,
            authority_first,
        } => {
            let (host_path, host_base) = if authority_first {
                (hier, after)
            } else {
                let host_path =
                    hier.strip_prefix("//")
                        .ok_or_else(|| IdentError::InvalidAuthority {
                            at: after,
                            text: hier.to_string(),
                        })?;
                (host_path, after.saturating_add(2))
            };
            http_parts(host_path, host_base, secure, proxy, grammar)?
        }
    };
    if grammar {
        check_path(prefix.raw, prefix.base)?;
        check_path(local.raw, local.base)?;
    }
    let prefix_text = prefix.decode()?;
    let local_text = local.decode()?;
    if form == UriForm::Doi && !prefix_text.starts_with("10.") {
        return Err(IdentError::DoiPrefix {
            at: prefix.base,
            text: prefix_text,
        });
    }
    let handle = Handle::from_spans(&prefix_text, &prefix, &local_text, &local)?;
    let uri = HandleUri {
        form,
        handle,
        query: query.map(|(_, q)| encode_query(q)),
        fragment: fragment.map(|(_, f)| encode_query(f)),
    };
    Ok((uri, prefix, local))
}

/// Splits `PREFIX/LOCAL` (at `base` in the input); strict: LOCAL may not contain `/`.
fn split_path(path: &str, base: usize, strict: bool) -> Result<(Span<'_>, Span<'_>), IdentError> {
    if path.is_empty() || path.starts_with('/') {
        return Err(IdentError::EmptyPrefix {
            at: base,
            text: String::new(),
        });
    }
    let (prefix, rest) = split_once_at(path, '/');
    let (slash, local) = rest.ok_or_else(|| IdentError::MissingSlash {
        at: base.saturating_add(path.len()),
        text: path.to_string(),
    })?;
    let local_base = base.saturating_add(slash).saturating_add(1);
    if strict {
        if let Some(j) = local.find('/') {
            return Err(IdentError::ExtraPathSegment {
                at: local_base.saturating_add(j),
                text: local.get(j..).unwrap_or_default().to_string(),
            });
        }
    }
    Ok((
        Span::decoded(base, prefix),
        Span::decoded(local_base, local),
    ))
}

/// Splits a path the way the proxies read it: the whole path is percent-decoded, then split
/// at its first `/` (which may have been written `%2F`); so the local name may hold `/`.
fn split_decoded_path(path: &str, base: usize) -> Result<(Span<'_>, Span<'_>), IdentError> {
    let whole = Span::decoded(base, path);
    let decoded = whole.decode()?;
    let Some(slash) = decoded.find('/') else {
        return Err(if decoded.is_empty() {
            IdentError::EmptyPrefix {
                at: base,
                text: String::new(),
            }
        } else {
            IdentError::MissingSlash {
                at: base.saturating_add(path.len()),
                text: decoded,
            }
        });
    };
    // Where the slash sits in `path`, and how many bytes it takes there (`/` or `%2F`).
    let raw_slash = whole.map(slash).saturating_sub(base);
    let width = if path.as_bytes().get(raw_slash) == Some(&b'/') {
        1
    } else {
        3
    };
    let local_at = raw_slash.saturating_add(width);
    Ok((
        Span::decoded(base, path.get(..raw_slash).unwrap_or_default()),
        Span::decoded(
            base.saturating_add(local_at),
            path.get(local_at..).unwrap_or_default(),
        ),
    ))
}

/// Reads `host[:port]/path` of a resolver URL (at `host_base` in the input). `proxy`: as the
/// proxies read it (leading slashes skipped, the REST API's `api/handles/` taken off, the
/// path decoded as a whole); otherwise by the CORDRA URI profile (`grammar`: a `/` in the
/// local name must be `%2F`).
fn http_parts(
    host_path: &str,
    host_base: usize,
    secure: bool,
    proxy: bool,
    grammar: bool,
) -> Result<(UriForm, Span<'_>, Span<'_>), IdentError> {
    let (authority, path) = split_once_at(host_path, '/');
    check_authority(authority, host_base)?;
    let (slash, path) = path.ok_or_else(|| IdentError::EmptyPrefix {
        at: host_base.saturating_add(authority.len()),
        text: String::new(),
    })?;
    let mut path_base = host_base.saturating_add(slash).saturating_add(1);
    let mut path = path;
    if proxy {
        let trimmed = path.trim_start_matches('/');
        path_base = path_base.saturating_add(path.len().saturating_sub(trimmed.len()));
        path = trimmed;
    }
    let host = authority.split(':').next().unwrap_or_default();
    let known_proxy = PROXY_HOSTS.iter().any(|p| p.eq_ignore_ascii_case(host));
    let first = path.split('/').next().unwrap_or_default();
    let segments = path.split('/').count();
    let rest_api = proxy
        && path
            .get(..REST_API.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(REST_API));
    // The public proxies have no segment of their own: their whole path is the handle.
    let own_path = proxy && known_proxy;
    let resolver_segment = !own_path
        && segments >= 3
        && !first.is_empty()
        && !first.contains('.')
        && !first.bytes().all(|b| b.is_ascii_digit());
    let (segment, handle_path, handle_base) = if rest_api || resolver_segment {
        let len = if rest_api {
            REST_API.len().saturating_sub(1)
        } else {
            first.len()
        };
        let skip = len.saturating_add(1);
        (
            path.get(..len).map(str::to_string),
            path.get(skip..).unwrap_or_default(),
            path_base.saturating_add(skip),
        )
    } else {
        (None, path, path_base)
    };
    let (prefix, local) = if proxy {
        split_decoded_path(handle_path, handle_base)?
    } else {
        split_path(handle_path, handle_base, grammar)?
    };
    let form = UriForm::Http {
        secure,
        authority: authority.to_string(),
        segment,
    };
    Ok((form, prefix, local))
}

/// Checks `host[:port]` (RFC 3986 §3.2.2-3.2.3, without userinfo): a bracketed IPv6 literal,
/// or a name or IPv4 address of letters, digits, `-`, `.`, `_` and `~`; then optionally `:`
/// and a port of at most 5 digits, up to 65535 (an empty port is the scheme's default).
fn check_authority(authority: &str, base: usize) -> Result<(), IdentError> {
    let bad = |i: usize| IdentError::InvalidAuthority {
        at: base.saturating_add(i),
        text: authority.to_string(),
    };
    let port_at = match authority.strip_prefix('[') {
        Some(rest) => {
            let close = rest.find(']').ok_or_else(|| bad(0))?;
            let literal = rest.get(..close).unwrap_or_default();
            if literal.parse::<Ipv6Addr>().is_err() {
                return Err(bad(1));
            }
            close.saturating_add(2)
        }
        None => {
            let end = authority.find(':').unwrap_or(authority.len());
            let host = authority.get(..end).unwrap_or_default();
            if host.is_empty() {
                return Err(bad(0));
            }
            let name_char =
                |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
            if let Some(i) = host.find(|c: char| !name_char(c)) {
                return Err(bad(i));
            }
            end
        }
    };
    let rest = authority.get(port_at..).unwrap_or_default();
    if rest.is_empty() {
        return Ok(());
    }
    let port = rest.strip_prefix(':').ok_or_else(|| bad(port_at))?;
    let valid_port = port.len() <= 5
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u32>().map_or(port.is_empty(), |p| p <= 65_535);
    if valid_port {
        Ok(())
    } else {
        Err(bad(port_at.saturating_add(1)))
    }
}

fn encode(s: &str, set: &'static AsciiSet) -> String {
    utf8_percent_encode(s, set).to_string()
}

impl fmt::Display for HandleUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = encode(self.handle.prefix(), SEGMENT);
        let suffix_set = if self.form == UriForm::Doi {
            DOI_SUFFIX
        } else {
            SEGMENT
        };
        let suffix = encode(self.handle.suffix(), suffix_set);
        match &self.form {
            UriForm::Hdl => write!(f, "hdl:{prefix}/{suffix}")?,
            UriForm::HdlHost => write!(f, "hdl://{prefix}/{suffix}")?,
            UriForm::Doi => write!(f, "doi:{prefix}/{suffix}")?,
            UriForm::Http {
                secure,
                authority,
                segment,
            } => {
                let scheme = if *secure { "https" } else { "http" };
                write!(f, "{scheme}://{authority}/")?;
                if let Some(segment) = segment {
                    write!(f, "{segment}/")?;
                }
                write!(f, "{prefix}/{suffix}")?;
            }
        }
        if let Some(q) = &self.query {
            write!(f, "?{}", encode_query(q))?;
        }
        if let Some(frag) = &self.fragment {
            write!(f, "#{}", encode_query(frag))?;
        }
        Ok(())
    }
}

impl FromStr for HandleUri {
    type Err = IdentError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}
