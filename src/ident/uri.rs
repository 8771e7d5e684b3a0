//! [`HandleUri`]: `hdl:`, `hdl://`, `doi:` and HTTP(S) resolver URLs naming a handle.

use std::fmt;
use std::str::FromStr;

use percent_encoding::{utf8_percent_encode, AsciiSet};

use super::chars::{
    check_controls, check_path, check_query, encode_query, scheme_of, split_once_at, Span,
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

/// A handle written as a URI, with its optional query and fragment (kept as written, still
/// percent-encoded). The handle itself is percent-decoded.
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

    /// The query, without `?`.
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The fragment, without `#`.
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
/// use handle_resolver::ident::{resolver_urls, Handle};
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

/// Parses a URI, also returning where the prefix and the local name sit in the input.
pub(crate) fn parse_parts(
    s: &str,
    options: ParseOptions,
) -> Result<(HandleUri, Span<'_>, Span<'_>), IdentError> {
    if s.is_empty() {
        return Err(IdentError::Empty {
            at: 0,
            text: String::new(),
        });
    }
    check_controls(s, 0)?;
    let scheme = scheme_of(s).ok_or_else(|| IdentError::MissingScheme {
        at: 0,
        text: s.to_string(),
    })?;
    let after = scheme.len().saturating_add(1);
    let rest = s.get(after..).unwrap_or_default();
    let strict = !options.is_lenient();
    let (before_fragment, fragment) = split_once_at(rest, '#');
    let (hier, query) = split_once_at(before_fragment, '?');
    if let Some((i, q)) = query {
        check_query(q, after.saturating_add(i).saturating_add(1), strict, false)?;
    }
    if let Some((i, f)) = fragment {
        check_query(f, after.saturating_add(i).saturating_add(1), strict, true)?;
    }
    let lower = scheme.to_ascii_lowercase();
    let (form, prefix, local) = match lower.as_str() {
        "hdl" => match hier.strip_prefix("//") {
            Some(host_path) => {
                let (p, l) = split_path(host_path, after.saturating_add(2), strict)?;
                (UriForm::HdlHost, p, l)
            }
            None => {
                let (p, l) = split_path(hier, after, strict)?;
                (UriForm::Hdl, p, l)
            }
        },
        "doi" => {
            let (p, l) = split_path(hier, after, false)?;
            (UriForm::Doi, p, l)
        }
        "http" | "https" => http_parts(hier, after, lower == "https", strict)?,
        _ => {
            return Err(IdentError::UnsupportedScheme {
                at: 0,
                text: scheme.to_string(),
            })
        }
    };
    if strict {
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
        query: query.map(|(_, q)| q.to_string()),
        fragment: fragment.map(|(_, f)| f.to_string()),
    };
    Ok((uri, prefix, local))
}

fn decoded(base: usize, raw: &str) -> Span<'_> {
    Span {
        base,
        raw,
        decoded: true,
    }
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
    Ok((decoded(base, prefix), decoded(local_base, local)))
}

fn http_parts(
    hier: &str,
    base: usize,
    secure: bool,
    strict: bool,
) -> Result<(UriForm, Span<'_>, Span<'_>), IdentError> {
    let host_path = hier
        .strip_prefix("//")
        .ok_or_else(|| IdentError::InvalidAuthority {
            at: base,
            text: hier.to_string(),
        })?;
    let host_base = base.saturating_add(2);
    let (authority, path) = split_once_at(host_path, '/');
    let valid_host = !authority.is_empty()
        && authority.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':' | b'[' | b']')
        });
    if !valid_host {
        return Err(IdentError::InvalidAuthority {
            at: host_base,
            text: authority.to_string(),
        });
    }
    let (slash, path) = path.ok_or_else(|| IdentError::EmptyPrefix {
        at: host_base.saturating_add(authority.len()),
        text: String::new(),
    })?;
    let path_base = host_base.saturating_add(slash).saturating_add(1);
    let first = path.split('/').next().unwrap_or_default();
    let segments = path.split('/').count();
    let resolver_segment = segments >= 3
        && !first.is_empty()
        && !first.contains('.')
        && !first.bytes().all(|b| b.is_ascii_digit());
    let (segment, handle_path, handle_base) = if resolver_segment {
        let skip = first.len().saturating_add(1);
        (
            Some(first.to_string()),
            path.get(skip..).unwrap_or_default(),
            path_base.saturating_add(skip),
        )
    } else {
        (None, path, path_base)
    };
    let (prefix, local) = split_path(handle_path, handle_base, strict)?;
    let form = UriForm::Http {
        secure,
        authority: authority.to_string(),
        segment,
    };
    Ok((form, prefix, local))
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
