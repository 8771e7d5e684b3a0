//! URN resolution over HTTP (RFC 2169, with RFC 2483's services), for the URN namespaces of
//! the identifier specifications: `urn:fdc` (RFC 4198) at an HTTP server named by its
//! ProviderId, Harvard's `urn-3` at the HUL resolver.
//!
//! One resolution ([`Resolver::resolve_urn`](crate::Resolver::resolve_urn)):
//! 1. the URN in its canonical form (the namespace's lexical equivalence: `urn:fdc:` and the
//!    ProviderId in lower case, `%XX` escapes in upper case; a `urn-3` URN in lower case);
//! 2. the resolver: [`ResolverBuilder::urn_resolver`](crate::ResolverBuilder::urn_resolver)
//!    when set, else `http://<ProviderId>` for `urn:fdc`, the `urn-3` resolver
//!    (Harvard's HUL resolver, `http://nrs.harvard.edu`, unless
//!    [`urn3_resolver`](crate::ResolverBuilder::urn3_resolver) says otherwise) for `urn-3`;
//! 3. `GET <resolver>/uri-res/N2Ls?<urn>`: a `text/uri-list` of URLs, in the resolver's order
//!    of preference;
//! 4. when the resolver does not offer N2Ls for it (404, 405, 501, or an empty list),
//!    `GET <resolver>/uri-res/N2L?<urn>`: a redirect whose `Location` is the URL.
//!
//! A redirect is a result, never followed. Everything runs through
//! [`Exchange::fetch`] under the resolver's one deadline.
//! What a resolver answers that is not one of the above is a typed [`UrnError`].

use std::time::Duration;

use serde::Serialize;
use thiserror::Error;

use crate::ident::{IdentError, Identifier, Urn};
use crate::resolver::{Deadline, Resolver, UrnSettings};
use crate::transport::addr::BaseUrl;
use crate::transport::{Exchange, HttpGet, TransportError};
use crate::wire::uri_list::{decode_uri_list, UriListError, URI_LIST_MEDIA_TYPE};

impl Resolver {
    /// Resolves a `urn:fdc` or `urn-3` URN over HTTP (RFC 2169): `N2Ls` at its resolver
    /// (the ProviderId for `urn:fdc`, the HUL resolver for `urn-3`, or
    /// [`ResolverBuilder::urn_resolver`](crate::ResolverBuilder::urn_resolver)), with `N2L`
    /// as the fallback, the URN in its canonical form. A redirect is a result, not followed.
    /// Under the resolver's deadline, through [`Exchange::fetch`]:
    ///
    /// 1. the URN in its canonical form (the namespace's lexical equivalence: `urn:fdc:` and
    ///    the ProviderId in lower case, `%XX` escapes in upper case; a `urn-3` URN in lower
    ///    case);
    /// 2. the resolver: [`ResolverBuilder::urn_resolver`](crate::ResolverBuilder::urn_resolver)
    ///    when set, else `http://<ProviderId>` for `urn:fdc`, the `urn-3` resolver
    ///    (`http://nrs.harvard.edu` unless
    ///    [`urn3_resolver`](crate::ResolverBuilder::urn3_resolver) says otherwise) for `urn-3`;
    /// 3. `GET <resolver>/uri-res/N2Ls?<urn>`: a `text/uri-list` of URLs, in the resolver's
    ///    order of preference;
    /// 4. when the resolver does not offer N2Ls for it (404, 405, 501, or an empty list),
    ///    `GET <resolver>/uri-res/N2L?<urn>`: a redirect whose `Location` is the URL (for
    ///    `urn-3`, then the HUL resolver's path form `GET /urn-3:<authority path>:<name>`).
    ///
    /// What a resolver answers that is not one of these is a typed [`UrnError`].
    ///
    /// ```no_run
    /// # async fn demo(resolver: handle_resolver::Resolver) {
    /// match resolver.resolve_urn("urn-3:HUL.OIS:Home").await {
    ///     Ok(answer) => answer.urls.iter().for_each(|url| println!("{url}")),
    ///     Err(e) if e.is_not_found() => println!("the resolver does not know it"),
    ///     Err(e) => println!("failed: {e}"),
    /// }
    /// # }
    /// ```
    pub async fn resolve_urn<U: AsUrn + ?Sized>(&self, urn: &U) -> Result<UrnAnswer, UrnError> {
        let settings = self.settings();
        let deadline = Deadline::start(settings.timeout);
        let urn = urn.to_urn()?;
        resolve(self.exchange(), &settings.urn, deadline, &urn).await
    }
}

/// The RFC 2169 service that gave an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UrnService {
    /// `N2Ls`: URN to URLs, a `text/uri-list`.
    N2Ls,
    /// `N2L`: URN to URL, a redirect.
    N2L,
    /// The PURL-like form of `urn-3` at the HUL resolver: `GET /urn-3:<authority path>:<name>`,
    /// a redirect (asked when neither RFC 2169 service is offered).
    Path,
}

impl UrnService {
    /// `"N2Ls"`, `"N2L"` (as in the request path) or `"path"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            UrnService::N2Ls => "N2Ls",
            UrnService::N2L => "N2L",
            UrnService::Path => "path",
        }
    }

    fn accept(self) -> &'static str {
        match self {
            UrnService::N2Ls => URI_LIST_MEDIA_TYPE,
            UrnService::N2L | UrnService::Path => "*/*",
        }
    }

    /// The URL asking this service about `urn` (canonical) at `base`.
    fn url(self, base: &str, urn: &str) -> String {
        match self {
            UrnService::N2Ls | UrnService::N2L => format!("{base}/uri-res/{self}?{urn}"),
            UrnService::Path => format!("{base}/{}", urn.strip_prefix("urn:").unwrap_or(urn)),
        }
    }
}

impl std::fmt::Display for UrnService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a URN resolves to. Serializes as `resolve --json` prints it:
/// `{"urn": …, "responseCode": 1, "urls": [...], "resolver": "<URL asked>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct UrnAnswer {
    /// The URN asked for, in canonical form (what was sent).
    pub urn: String,
    /// 1 (success), as in the handle REST API; failures are [`UrnError`]s, whose
    /// [`response_code`](UrnError::response_code) is 100 or 2.
    #[serde(rename = "responseCode")]
    pub response_code: u32,
    /// The URLs, in the resolver's order of preference (one for a redirect).
    pub urls: Vec<String>,
    /// The URL asked that gave them.
    pub resolver: String,
    /// The service that gave them.
    #[serde(skip)]
    pub service: UrnService,
}

/// Why a URN did not resolve. Decide on the variant, never on the text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum UrnError {
    /// The text is not a `urn:fdc` or `urn-3` URN; nothing was sent.
    #[error("invalid URN: {0}")]
    InvalidUrn(#[from] IdentError),
    /// The resolver URL configured is not an `http(s)://host[:port][/path]` URL; nothing was
    /// sent.
    #[error("URN resolver {url:?} is not usable: {reason}")]
    InvalidResolver {
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The resolver does not know the URN (HTTP 404; response code 100).
    #[error("{urn}: not found (404) at {url}")]
    NotFound {
        /// The URN (canonical).
        urn: String,
        /// The URL asked.
        url: String,
    },
    /// The resolver's deadline passed.
    #[error("{urn}: no answer within {} s from {resolver}", after.as_secs_f64())]
    Timeout {
        /// The URN (canonical).
        urn: String,
        /// The resolver asked.
        resolver: String,
        /// The deadline.
        after: Duration,
    },
    /// The request failed below HTTP (connection refused, reset, TLS, ...).
    #[error("{url}: {error}")]
    Transport {
        /// The URL asked.
        url: String,
        /// What failed.
        error: TransportError,
    },
    /// An HTTP status that is no answer of this service: a server error (5xx), a client error
    /// other than 404, or a 200 to N2L (which answers with a redirect).
    #[error("{url} answered HTTP {status}{}", status_hint(*status))]
    Status {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// A redirect without a `Location` header.
    #[error("{url} answered HTTP {status} without a Location")]
    NoLocation {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// A redirect whose `Location` is not a URL.
    #[error("{url}: redirect to {location:?}, which is not a URL")]
    BadLocation {
        /// The URL asked.
        url: String,
        /// The `Location` as sent.
        location: String,
    },
    /// An N2Ls answer that is not a `text/uri-list`.
    #[error("{url}: content type {}, expected text/uri-list", got.as_deref().map_or("none".to_string(), |t| format!("{t:?}")))]
    ContentType {
        /// The URL asked.
        url: String,
        /// The `Content-Type` sent, if any.
        got: Option<String>,
    },
    /// An N2Ls answer whose list holds a line that is not a URI.
    #[error("{url}: {error}")]
    UriList {
        /// The URL asked.
        url: String,
        /// Which line, and why.
        error: UriListError,
    },
    /// An answer longer than the cap ([`MAX_URI_LIST_BYTES`](crate::wire::uri_list::MAX_URI_LIST_BYTES)).
    #[error("{url}: answer longer than {limit} bytes")]
    BodyTooLarge {
        /// The URL asked.
        url: String,
        /// The cap.
        limit: usize,
    },
}

fn status_hint(status: u16) -> &'static str {
    match status {
        200..=299 => " where a redirect was expected",
        405 | 501 => " (service not offered)",
        500..=599 => " (server error)",
        _ => "",
    }
}

impl UrnError {
    /// The response code this outcome stands for in `resolve --json`: 100 when the resolver
    /// does not know the URN, 2 (error) otherwise.
    pub fn response_code(&self) -> u32 {
        match self {
            UrnError::NotFound { .. } => 100,
            _ => 2,
        }
    }

    /// True when the resolver does not know the URN.
    pub fn is_not_found(&self) -> bool {
        matches!(self, UrnError::NotFound { .. })
    }

    /// True for errors found before anything was sent (bad URN, bad resolver URL).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            UrnError::InvalidUrn(_) | UrnError::InvalidResolver { .. }
        )
    }

    /// The failure in the JSON shape of an answer ([`UrnAnswer`]), as `resolve --json`
    /// writes it: `urn` (the URN asked, `urn` here), its `responseCode`, no `urls`, the
    /// `resolver` URL asked (`null` when nothing was sent) and the `message`.
    ///
    /// ```
    /// # async fn demo(resolver: handle_resolver::Resolver) {
    /// if let Err(e) = resolver.resolve_urn("urn-3:HUL.OIS:Home").await {
    ///     println!("{}", e.to_json("urn:urn-3:hul.ois:home"));
    /// }
    /// # }
    /// ```
    pub fn to_json(&self, urn: &str) -> serde_json::Value {
        serde_json::json!({
            "urn": urn,
            "responseCode": self.response_code(),
            "urls": [],
            "resolver": self.url(),
            "message": self.to_string(),
        })
    }

    /// The URL asked when it failed (the resolver, for a timeout); `None` when nothing was
    /// sent.
    pub fn url(&self) -> Option<&str> {
        match self {
            UrnError::InvalidUrn(_) | UrnError::InvalidResolver { .. } => None,
            UrnError::Timeout { resolver, .. } => Some(resolver),
            UrnError::NotFound { url, .. }
            | UrnError::Transport { url, .. }
            | UrnError::Status { url, .. }
            | UrnError::NoLocation { url, .. }
            | UrnError::BadLocation { url, .. }
            | UrnError::ContentType { url, .. }
            | UrnError::UriList { url, .. }
            | UrnError::BodyTooLarge { url, .. } => Some(url),
        }
    }
}

/// Anything [`Resolver::resolve_urn`](crate::Resolver::resolve_urn) accepts: URN text, a
/// parsed [`Urn`], or an [`Identifier`] that is one.
pub trait AsUrn {
    /// The URN, or why there is none (nothing is sent then).
    fn to_urn(&self) -> Result<Urn, IdentError>;
}

impl AsUrn for str {
    /// Parses `urn:fdc:…`, `urn:urn-3:…` or `urn-3:…` (surrounding white space ignored).
    fn to_urn(&self) -> Result<Urn, IdentError> {
        Urn::parse(self.trim())
    }
}

impl AsUrn for String {
    fn to_urn(&self) -> Result<Urn, IdentError> {
        self.as_str().to_urn()
    }
}

impl AsUrn for Urn {
    fn to_urn(&self) -> Result<Urn, IdentError> {
        Ok(self.clone())
    }
}

impl AsUrn for Identifier {
    /// The URN of [`Identifier::Urn`]; a handle gives [`IdentError::InvalidUrn`].
    fn to_urn(&self) -> Result<Urn, IdentError> {
        match self {
            Identifier::Urn(urn) => Ok(urn.clone()),
            other => Err(IdentError::InvalidUrn {
                at: 0,
                text: other.to_string(),
            }),
        }
    }
}

impl<T: AsUrn + ?Sized> AsUrn for &T {
    fn to_urn(&self) -> Result<Urn, IdentError> {
        (**self).to_urn()
    }
}

/// Resolves `urn` through `exchange` as `settings` say, under the call's `deadline`.
async fn resolve(
    exchange: &dyn Exchange,
    settings: &UrnSettings,
    deadline: Deadline,
    urn: &Urn,
) -> Result<UrnAnswer, UrnError> {
    let canonical = urn.canonical();
    let base = resolver_base(settings, urn)?;
    let services: &[UrnService] = match urn {
        Urn::Urn3(_) => &[UrnService::N2Ls, UrnService::N2L, UrnService::Path],
        _ => &[UrnService::N2Ls, UrnService::N2L],
    };
    let work = ask_services(exchange, &base, &canonical, services, settings.max_body);
    let timed_out = |after| UrnError::Timeout {
        urn: canonical.clone(),
        resolver: base.clone(),
        after,
    };
    deadline.run(work, timed_out).await
}

/// The resolver's base URL (without a final `/`) for `urn`.
fn resolver_base(settings: &UrnSettings, urn: &Urn) -> Result<String, UrnError> {
    match (&settings.resolver, urn) {
        (Some(url), _) => checked_base(url),
        (None, Urn::Fdc(fdc)) => Ok(format!("http://{}", fdc.provider_id().to_ascii_lowercase())),
        (None, Urn::Urn3(_)) => checked_base(&settings.urn3_resolver),
    }
}

/// Checks a configured resolver URL (`http(s)://host[:port][/path]`, [`BaseUrl`]); returns
/// it without a final `/`.
fn checked_base(url: &str) -> Result<String, UrnError> {
    BaseUrl::parse(url)
        .map(|u| u.as_str().to_string())
        .map_err(|e| UrnError::InvalidResolver {
            url: e.url,
            reason: e.reason,
        })
}

/// Why one service gave no URLs: the resolver does not offer it for this URN (try the
/// next), or a failure that ends the resolution.
enum Failed {
    NotOffered(UrnError),
    Fatal(UrnError),
}

/// The services in order (N2Ls, then N2L, then for `urn-3` the path form), the next when one
/// is not offered.
async fn ask_services(
    exchange: &dyn Exchange,
    base: &str,
    urn: &str,
    services: &[UrnService],
    max_body: usize,
) -> Result<UrnAnswer, UrnError> {
    let mut not_offered = None;
    for &service in services {
        let url = service.url(base, urn);
        match ask(exchange, service, &url, urn, max_body).await {
            Ok(urls) => {
                return Ok(UrnAnswer {
                    urn: urn.to_string(),
                    response_code: 1,
                    urls,
                    resolver: url,
                    service,
                })
            }
            Err(Failed::Fatal(e)) => return Err(e),
            // "Not found" from either service tells more than "not offered" from the other.
            Err(Failed::NotOffered(e)) => match &not_offered {
                Some(UrnError::NotFound { .. }) if !e.is_not_found() => {}
                _ => not_offered = Some(e),
            },
        }
    }
    Err(not_offered.unwrap_or_else(|| UrnError::NotFound {
        urn: urn.to_string(),
        url: base.to_string(),
    }))
}

/// One GET of one service.
async fn ask(
    exchange: &dyn Exchange,
    service: UrnService,
    url: &str,
    urn: &str,
    max_body: usize,
) -> Result<Vec<String>, Failed> {
    let get = HttpGet {
        url: url.to_string(),
        accept: service.accept(),
        max_body,
    };
    let fatal = |e| Failed::Fatal(e);
    let fetched = exchange.fetch(&get).await.map_err(|error| {
        fatal(match error {
            TransportError::BodyTooLarge { limit } => UrnError::BodyTooLarge {
                url: url.to_string(),
                limit,
            },
            error => UrnError::Transport {
                url: url.to_string(),
                error,
            },
        })
    })?;
    if fetched.body.len() > max_body {
        return Err(fatal(UrnError::BodyTooLarge {
            url: url.to_string(),
            limit: max_body,
        }));
    }
    let status = fetched.status;
    let not_found = || UrnError::NotFound {
        urn: urn.to_string(),
        url: url.to_string(),
    };
    match status {
        200..=299 if service == UrnService::N2Ls => {
            if !fetched.has_media_type(URI_LIST_MEDIA_TYPE) {
                return Err(fatal(UrnError::ContentType {
                    url: url.to_string(),
                    got: fetched.content_type,
                }));
            }
            let urls = decode_uri_list(&fetched.body, max_body).map_err(|error| {
                fatal(match error {
                    UriListError::TooLarge { limit, .. } => UrnError::BodyTooLarge {
                        url: url.to_string(),
                        limit,
                    },
                    error => UrnError::UriList {
                        url: url.to_string(),
                        error,
                    },
                })
            })?;
            if urls.is_empty() {
                // A list without a location: the resolver has none for it this way.
                return Err(Failed::NotOffered(not_found()));
            }
            Ok(urls)
        }
        300..=399 => {
            let Some(location) = fetched.location else {
                return Err(fatal(UrnError::NoLocation {
                    url: url.to_string(),
                    status,
                }));
            };
            match absolute_location(url, &location) {
                Some(target) => Ok(vec![target]),
                None => Err(fatal(UrnError::BadLocation {
                    url: url.to_string(),
                    location,
                })),
            }
        }
        404 => Err(Failed::NotOffered(not_found())),
        405 | 501 => Err(Failed::NotOffered(UrnError::Status {
            url: url.to_string(),
            status,
        })),
        _ => Err(fatal(UrnError::Status {
            url: url.to_string(),
            status,
        })),
    }
}

/// A redirect's `Location` as an absolute URL (RFC 9110 §10.2.2 allows a reference relative
/// to the URL asked); `None` when it is empty or holds what no URL can (white space,
/// controls, non-ASCII).
fn absolute_location(asked: &str, location: &str) -> Option<String> {
    let location = location.trim();
    if location.is_empty() || !location.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    let has_scheme = location.find(':').is_some_and(|colon| {
        let scheme = location.get(..colon).unwrap_or_default();
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    });
    if has_scheme {
        return Some(location.to_string());
    }
    // `asked` is ours: `scheme://authority/path?query`.
    let (scheme, rest) = asked.split_once("://")?;
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let origin = format!("{scheme}://{}", rest.get(..authority_end)?);
    let path = rest.get(authority_end..)?;
    let path = path.split('?').next().unwrap_or_default();
    Some(if location.starts_with("//") {
        format!("{scheme}:{location}")
    } else if location.starts_with('/') {
        format!("{origin}{location}")
    } else if location.starts_with('?') {
        format!("{origin}{path}{location}")
    } else {
        let dir = path.rfind('/').and_then(|i| path.get(..=i)).unwrap_or("/");
        format!("{origin}{dir}{location}")
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use futures::future::BoxFuture;
    use parking_lot::Mutex;

    use super::*;
    use crate::transport::{ExchangeOptions, Exchanged, Fetched, TransportKind};
    use crate::wire::Message;

    /// What the scripted double answers to one URL.
    #[derive(Clone)]
    enum Reply {
        Answer(Fetched),
        Fail(TransportError),
        Silence,
    }

    /// A scripted exchange: HTTP answers by URL (404 for the rest); it records what it was
    /// asked.
    #[derive(Default)]
    struct Script {
        replies: Mutex<HashMap<String, Reply>>,
        asked: Mutex<Vec<HttpGet>>,
    }

    impl Script {
        fn with(self, url: &str, reply: Reply) -> Self {
            self.replies.lock().insert(url.to_string(), reply);
            self
        }

        fn asked(&self) -> Vec<String> {
            self.asked.lock().iter().map(|g| g.url.clone()).collect()
        }
    }

    impl Exchange for Script {
        fn exchange<'a>(
            &'a self,
            _: std::net::SocketAddr,
            _: TransportKind,
            _: &'a Message,
            _: &'a ExchangeOptions,
        ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
            Box::pin(async { Err(TransportError::Unsupported("native protocol")) })
        }

        fn fetch<'a>(&'a self, get: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
            self.asked.lock().push(get.clone());
            let reply = self.replies.lock().get(&get.url).cloned();
            Box::pin(async move {
                match reply {
                    Some(Reply::Answer(f)) => Ok(f),
                    Some(Reply::Fail(e)) => Err(e),
                    Some(Reply::Silence) => futures::future::pending().await,
                    None => Ok(Fetched::new(404, "not here")),
                }
            })
        }
    }

    fn list(body: &str) -> Reply {
        Reply::Answer(Fetched::new(200, body.to_string()).with_content_type("text/uri-list"))
    }

    fn status(status: u16) -> Reply {
        Reply::Answer(Fetched::new(status, ""))
    }

    fn redirect(location: &str) -> Reply {
        Reply::Answer(Fetched::new(302, "").with_location(location))
    }

    const FDC: &str = "urn:fdc:example.org:2024:img-1";
    const N2LS: &str = "http://example.org/uri-res/N2Ls?urn:fdc:example.org:2024:img-1";
    const N2L: &str = "http://example.org/uri-res/N2L?urn:fdc:example.org:2024:img-1";

    fn resolver(script: Script) -> (Resolver, Arc<Script>) {
        let script = Arc::new(script);
        let r = Resolver::builder()
            .exchange(script.clone())
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        (r, script)
    }

    async fn resolve(script: Script, urn: &str) -> (Result<UrnAnswer, UrnError>, Vec<String>) {
        let (r, script) = resolver(script);
        let out = r.resolve_urn(urn).await;
        (out, script.asked())
    }

    #[tokio::test]
    async fn n2ls_gives_the_list_in_order_from_the_provider() {
        let script = Script::default().with(
            N2LS,
            list(
                "# urn:fdc:example.org:2024:img-1\r\nhttp://b.example/1\r\nhttp://a.example/1\r\n",
            ),
        );
        // The namespace's lexical equivalence applies before the request.
        let (out, asked) = resolve(script, "URN:FDC:Example.ORG:2024:img-1").await;
        let answer = out.unwrap();
        assert_eq!(answer.urn, FDC);
        assert_eq!(answer.urls, ["http://b.example/1", "http://a.example/1"]);
        assert_eq!(answer.resolver, N2LS);
        assert_eq!(answer.service, UrnService::N2Ls);
        assert_eq!(asked, [N2LS]);
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            serde_json::json!({
                "urn": FDC, "responseCode": 1,
                "urls": ["http://b.example/1", "http://a.example/1"], "resolver": N2LS,
            })
        );
    }

    #[tokio::test]
    async fn the_http_get_asks_for_a_uri_list_with_a_cap() {
        let (r, script) = resolver(Script::default().with(N2LS, list("http://a.example/\r\n")));
        r.resolve_urn(FDC).await.unwrap();
        let get = script.asked.lock()[0].clone();
        assert_eq!(get.accept, "text/uri-list");
        assert_eq!(get.max_body, crate::wire::uri_list::MAX_URI_LIST_BYTES);
    }

    #[tokio::test]
    async fn urn3_goes_to_the_hul_resolver_in_lower_case() {
        let url = "http://nrs.harvard.edu/uri-res/N2Ls?urn:urn-3:hbs.baker.tc:1923";
        let script = Script::default().with(url, list("https://baker.example.edu/1923\r\n"));
        let (out, asked) = resolve(script, "urn-3:HBS.Baker.TC:1923").await;
        assert_eq!(out.unwrap().urls, ["https://baker.example.edu/1923"]);
        assert_eq!(asked, [url]);
    }

    #[tokio::test]
    async fn the_configured_resolvers_are_asked() {
        let url3 = "http://127.0.0.1:8000/nrs/uri-res/N2Ls?urn:urn-3:hul.ois:home";
        let script =
            Arc::new(Script::default().with(url3, list("https://library.example.edu/home\r\n")));
        let r = Resolver::builder()
            .exchange(script.clone())
            .urn3_resolver("http://127.0.0.1:8000/nrs/")
            .build()
            .unwrap();
        assert_eq!(
            r.resolve_urn("urn:urn-3:HUL.OIS:Home")
                .await
                .unwrap()
                .resolver,
            url3
        );
        // urn_resolver overrides both namespaces.
        let over = "http://127.0.0.1:9/uri-res/N2Ls?urn:fdc:example.org:2024:img-1";
        let script = Arc::new(Script::default().with(over, list("http://x.example/\r\n")));
        let r = Resolver::builder()
            .exchange(script.clone())
            .urn_resolver("http://127.0.0.1:9")
            .build()
            .unwrap();
        assert_eq!(r.resolve_urn(FDC).await.unwrap().resolver, over);
        let err = r.resolve_urn("urn-3:HUL.OIS:Home").await.unwrap_err();
        // The last service asked (for urn-3, the path form) is the one the error names.
        assert_eq!(err.url(), Some("http://127.0.0.1:9/urn-3:hul.ois:home"));
    }

    #[tokio::test]
    async fn urn3_falls_back_to_the_path_form_of_the_hul_resolver() {
        let n2ls = "http://nrs.harvard.edu/uri-res/N2Ls?urn:urn-3:hbs.baker.tc:1923";
        let n2l = "http://nrs.harvard.edu/uri-res/N2L?urn:urn-3:hbs.baker.tc:1923";
        let path = "http://nrs.harvard.edu/urn-3:hbs.baker.tc:1923";
        let script = Script::default()
            .with(n2ls, status(501))
            .with(n2l, status(404))
            .with(path, redirect("https://baker.example.edu/1923"));
        let (out, asked) = resolve(script, "urn-3:HBS.Baker.TC:1923").await;
        let answer = out.unwrap();
        assert_eq!(answer.urls, ["https://baker.example.edu/1923"]);
        assert_eq!(
            (answer.service, answer.resolver.as_str()),
            (UrnService::Path, path)
        );
        assert_eq!(asked, [n2ls, n2l, path]);
        // urn:fdc has no such form: two services only.
        let script = Script::default()
            .with(N2LS, status(501))
            .with(N2L, status(501));
        let (out, asked) = resolve(script, FDC).await;
        assert!(out.is_err());
        assert_eq!(asked, [N2LS, N2L]);
    }

    #[tokio::test]
    async fn n2l_is_the_fallback_and_its_redirect_is_the_result() {
        for n2ls in [status(404), status(501), status(405), list("# nothing\r\n")] {
            let script = Script::default()
                .with(N2LS, n2ls)
                .with(N2L, redirect("https://example.org/img/1"));
            let (out, asked) = resolve(script, FDC).await;
            let answer = out.unwrap();
            assert_eq!(answer.urls, ["https://example.org/img/1"]);
            assert_eq!(
                (answer.service, answer.resolver.as_str()),
                (UrnService::N2L, N2L)
            );
            assert_eq!(asked, [N2LS, N2L]);
        }
    }

    #[tokio::test]
    async fn redirects_are_results_not_followed_and_relative_ones_are_resolved() {
        for (location, url) in [
            ("/img/1", "http://example.org/img/1"),
            ("img/1", "http://example.org/uri-res/img/1"),
            ("//cdn.example.net/1", "http://cdn.example.net/1"),
            ("urn:x-other:1", "urn:x-other:1"),
        ] {
            let script = Script::default().with(N2LS, redirect(location));
            let (out, asked) = resolve(script, FDC).await;
            assert_eq!(out.unwrap().urls, [url], "{location}");
            assert_eq!(asked, [N2LS], "not followed");
        }
    }

    #[tokio::test]
    async fn not_found_is_response_code_100() {
        let (out, asked) = resolve(Script::default(), FDC).await;
        let err = out.unwrap_err();
        assert!(
            matches!(&err, UrnError::NotFound { url, .. } if url == N2L),
            "{err:?}"
        );
        assert_eq!(err.response_code(), 100);
        assert_eq!(asked, [N2LS, N2L]);
        // N2Ls says 404, N2L is not offered: still "not found".
        let script = Script::default().with(N2L, status(501));
        let err = resolve(script, FDC).await.0.unwrap_err();
        assert!(
            matches!(&err, UrnError::NotFound { url, .. } if url == N2LS),
            "{err:?}"
        );
        // Neither service offered: the last word.
        let script = Script::default()
            .with(N2LS, status(501))
            .with(N2L, status(501));
        let err = resolve(script, FDC).await.0.unwrap_err();
        assert_eq!(
            err,
            UrnError::Status {
                url: N2L.into(),
                status: 501
            }
        );
        assert_eq!(err.response_code(), 2);
    }

    #[tokio::test]
    async fn bad_answers_are_typed_errors() {
        let html = Reply::Answer(
            Fetched::new(200, "<html></html>").with_content_type("text/html; charset=utf-8"),
        );
        let garbage = list("http://a.example/1\r\n<p>moved</p>\r\n");
        let too_long = Reply::Answer(
            Fetched::new(200, "h:x\n".repeat(20_000)).with_content_type("text/uri-list"),
        );
        let untyped = Reply::Answer(Fetched::new(200, "http://a.example/\r\n"));
        let cases: Vec<(Reply, UrnError)> = vec![
            (
                html,
                UrnError::ContentType {
                    url: N2LS.into(),
                    got: Some("text/html; charset=utf-8".into()),
                },
            ),
            (
                untyped,
                UrnError::ContentType {
                    url: N2LS.into(),
                    got: None,
                },
            ),
            (
                garbage,
                UrnError::UriList {
                    url: N2LS.into(),
                    error: UriListError::BadByte {
                        line: 2,
                        column: 0,
                        byte: b'<',
                    },
                },
            ),
            (
                status(302),
                UrnError::NoLocation {
                    url: N2LS.into(),
                    status: 302,
                },
            ),
            (
                redirect("not a url"),
                UrnError::BadLocation {
                    url: N2LS.into(),
                    location: "not a url".into(),
                },
            ),
            (
                status(500),
                UrnError::Status {
                    url: N2LS.into(),
                    status: 500,
                },
            ),
            (
                status(503),
                UrnError::Status {
                    url: N2LS.into(),
                    status: 503,
                },
            ),
            (
                status(400),
                UrnError::Status {
                    url: N2LS.into(),
                    status: 400,
                },
            ),
            (
                too_long,
                UrnError::BodyTooLarge {
                    url: N2LS.into(),
                    limit: crate::wire::uri_list::MAX_URI_LIST_BYTES,
                },
            ),
            (
                Reply::Fail(TransportError::BodyTooLarge { limit: 65_536 }),
                UrnError::BodyTooLarge {
                    url: N2LS.into(),
                    limit: 65_536,
                },
            ),
            (
                Reply::Fail(TransportError::Io(
                    std::io::ErrorKind::ConnectionRefused,
                    "connection refused".into(),
                )),
                UrnError::Transport {
                    url: N2LS.into(),
                    error: TransportError::Io(
                        std::io::ErrorKind::ConnectionRefused,
                        "connection refused".into(),
                    ),
                },
            ),
        ];
        for (reply, expected) in cases {
            let (out, asked) = resolve(Script::default().with(N2LS, reply), FDC).await;
            let err = out.unwrap_err();
            assert_eq!(err, expected);
            assert_eq!(err.response_code(), 2);
            assert_eq!(asked, [N2LS], "{expected}: no fallback after a failure");
            assert!(!err.to_string().is_empty());
        }
        // N2L answering 200 (no redirect) or a server error.
        for (reply, code) in [(list("http://a.example/\r\n"), 200), (status(502), 502)] {
            let script = Script::default().with(N2L, reply);
            let err = resolve(script, FDC).await.0.unwrap_err();
            assert_eq!(
                err,
                UrnError::Status {
                    url: N2L.into(),
                    status: code
                }
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn silence_ends_at_the_deadline() {
        let script = Arc::new(Script::default().with(N2LS, Reply::Silence));
        let r = Resolver::builder()
            .exchange(script.clone())
            .timeout(Duration::from_secs(3))
            .build()
            .unwrap();
        let start = tokio::time::Instant::now();
        let err = r.resolve_urn(FDC).await.unwrap_err();
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        assert_eq!(
            err,
            UrnError::Timeout {
                urn: FDC.into(),
                resolver: "http://example.org".into(),
                after: Duration::from_secs(3),
            }
        );
        assert_eq!(err.url(), Some("http://example.org"));
    }

    #[tokio::test]
    async fn bad_input_sends_nothing() {
        for (urn, resolver) in [
            ("urn:isbn:0451450523", None),
            ("20.500.1/1", None),
            (FDC, Some("ftp://127.0.0.1/")),
            (FDC, Some("http://")),
            (FDC, Some("http://127.0.0.1/?x")),
            (FDC, Some("http://127.0.0.1/a b")),
        ] {
            let script = Arc::new(Script::default());
            let mut b = Resolver::builder().exchange(script.clone());
            if let Some(url) = resolver {
                b = b.urn_resolver(url);
            }
            let err = b.build().unwrap().resolve_urn(urn).await.unwrap_err();
            assert!(err.is_input_error(), "{urn} {resolver:?}: {err:?}");
            assert_eq!(err.url(), None);
            assert!(script.asked().is_empty());
        }
        let id = Identifier::parse("urn-3:HUL.OIS:Home").unwrap();
        assert_eq!(id.to_urn().unwrap().canonical(), "urn:urn-3:hul.ois:home");
        assert!(Identifier::parse("20.500.1/1").unwrap().to_urn().is_err());
    }

    #[test]
    fn locations_resolve_against_the_url_asked() {
        let asked = "https://r.example:8443/a/uri-res/N2L?urn:fdc:x.example:2024:1";
        for (location, expected) in [
            ("https://o.example/x", Some("https://o.example/x")),
            ("/x?y", Some("https://r.example:8443/x?y")),
            ("x", Some("https://r.example:8443/a/uri-res/x")),
            ("?z", Some("https://r.example:8443/a/uri-res/N2L?z")),
            ("//h.example/p", Some("https://h.example/p")),
            ("  /x  ", Some("https://r.example:8443/x")),
            ("", None),
            ("/a b", None),
            ("/caf\u{e9}", None),
        ] {
            assert_eq!(
                absolute_location(asked, location).as_deref(),
                expected,
                "{location:?}"
            );
        }
    }

    /// The test server's RFC 2169 side answering through the exchange (what the HTTP
    /// listener serves), with the sample file's `urns`.
    #[cfg(feature = "testing")]
    struct TestServerSide(crate::testing::Urns);

    #[cfg(feature = "testing")]
    impl Exchange for TestServerSide {
        fn exchange<'a>(
            &'a self,
            _: std::net::SocketAddr,
            _: TransportKind,
            _: &'a Message,
            _: &'a ExchangeOptions,
        ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
            Box::pin(async { Err(TransportError::Unsupported("native protocol")) })
        }

        fn fetch<'a>(&'a self, get: &'a HttpGet) -> BoxFuture<'a, Result<Fetched, TransportError>> {
            let target = get
                .url
                .strip_prefix("http://127.0.0.1:8000")
                .unwrap_or("/elsewhere");
            let reply = crate::testing::uri_res::respond(&self.0, target);
            let mut fetched = Fetched::new(reply.status, reply.body);
            fetched.content_type = reply.content_type.map(str::to_string);
            fetched.location = reply
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("location"))
                .map(|(_, v)| v.clone());
            Box::pin(async move { Ok(fetched) })
        }
    }

    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn the_test_servers_urns_resolve() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/testserver/handles.json"
        );
        let file = crate::testing::StoreFile::parse(&std::fs::read_to_string(path).unwrap());
        let urns = file.unwrap().urns().unwrap();
        let r = Resolver::builder()
            .exchange(Arc::new(TestServerSide(urns)))
            .urn_resolver("http://127.0.0.1:8000")
            .build()
            .unwrap();
        let a = r
            .resolve_urn("urn:fdc:Example.ORG:2024:report-7")
            .await
            .unwrap();
        assert_eq!(
            a.urls,
            [
                "https://example.org/reports/7.pdf",
                "https://mirror.example.net/reports/7.pdf"
            ]
        );
        let a = r.resolve_urn("URN-3:hbs.baker.tc:1923").await.unwrap();
        assert_eq!(a.urls.len(), 2);
        let err = r
            .resolve_urn("urn:fdc:example.org:2024:missing")
            .await
            .unwrap_err();
        assert_eq!(err.response_code(), 100);
    }
}
