//! One request to one answer, as the reference's proxy decides it (Handle.Net 9.2.0,
//! `HDLProxy.doResolution`): the method, the handle and its parameters, the resolution,
//! the HS_ALIAS chain, then a redirect or a page.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::SystemTime;

use handle_resolver::wire::{encode_url_path, LocationRequest};
use handle_resolver::ResolveErrorKind;

use crate::aliases::{self, AliasEnd};
use crate::cache::bypass::TOKEN_HEADER;
use crate::cache::{LookupError, Record};
use crate::locations;
use crate::pages::{self, ErrorContext};
use crate::path::{self, ProxyRequest};
use crate::redirect::{self, earliest_expiry, Answer, RedirectParts};
use crate::rest;
use crate::server::country::CountryDb;
use crate::upstream::{Lookup, Resolution};

/// Where the reference's `/help.html` sends a client.
pub const HELP_URL: &str = "http://www.handle.net/proxy.html";

/// A request as received.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Incoming {
    /// The method.
    pub method: String,
    /// The path as received (not decoded).
    pub path: String,
    /// The query as received (without `?`).
    pub query: Option<String>,
    /// True for an HTTP/1.0 request.
    pub http10: bool,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// The client's address.
    pub client: IpAddr,
    /// True when `10320/loc` `addresses` are matched against `client` (the operator's
    /// `match_client_address`; off by default).
    pub match_address: bool,
    /// The operator's GeoIP database (`geoip_db`), when there is one: the client's country
    /// in it chooses among `10320/loc` locations unless the request says `?country=`
    /// (looked up only then).
    pub geoip: Option<Arc<CountryDb>>,
    /// The address the request came in on (the proxy's own URL when there is no `Host`).
    pub local: SocketAddr,
    /// The gateway's base URL (`https://hdl.example.org`) when the configured public base
    /// URL or a trusted proxy's `X-Forwarded-Proto`/`X-Forwarded-Host` name it; else it is
    /// `http://` and `Host`.
    pub base: Option<String>,
}

impl Incoming {
    /// An HTTP/1.1 request with no header and no body, from `client` to `local`.
    pub fn new(
        method: &str,
        path: &str,
        query: Option<&str>,
        client: IpAddr,
        local: SocketAddr,
    ) -> Incoming {
        Incoming {
            method: method.to_owned(),
            path: path.to_owned(),
            query: query.map(str::to_owned),
            http10: false,
            headers: Vec::new(),
            body: Vec::new(),
            client,
            match_address: false,
            geoip: None,
            local,
            base: None,
        }
    }

    /// Every value of header `name` (any case), in order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Which of the reference's servlets answers a path (its embedded server's routing:
/// `HDLProxy` on `/*`, the REST servlet on `/api/handles/*`, the prefix list on
/// `/api/prefixes/*`, an unknown-endpoint servlet on the rest of `/api/*`, static files on
/// `/static/*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Servlet {
    Proxy,
    Rest,
    Prefixes,
    UnknownApi,
    Static,
}

fn servlet(path: &str) -> Servlet {
    let under = |prefix: &str| {
        path == prefix
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if under("/api/handles") {
        Servlet::Rest
    } else if under("/api/prefixes") {
        Servlet::Prefixes
    } else if under("/api") {
        Servlet::UnknownApi
    } else if under("/static") {
        Servlet::Static
    } else {
        Servlet::Proxy
    }
}

/// The methods and request headers a CORS preflight may ask for (the reference's Jetty
/// `CrossOriginFilter` settings).
const CORS_METHODS: &str = "GET,POST,HEAD,PUT,DELETE";
const CORS_HEADERS: &str = "X-Requested-With,Authorization,Origin,Accept,Content-Type";

/// The answer to a CORS preflight (`OPTIONS` with `Origin` and
/// `Access-Control-Request-Method`): the allowed lists when the method and every header
/// asked for are in them, else a bare 200, as the reference's filter answers.
fn preflight(req: &Incoming, origin: &str, method: &str) -> Answer {
    let allowed = |list: &str, item: &str| {
        list.split(',')
            .any(|a| a.trim().eq_ignore_ascii_case(item.trim()))
    };
    let headers_ok = req
        .header_values("Access-Control-Request-Headers")
        .flat_map(|h| h.split(','))
        .filter(|h| !h.trim().is_empty())
        .all(|h| allowed(CORS_HEADERS, h));
    if !allowed(CORS_METHODS, method) || !headers_ok {
        return Answer::new(200);
    }
    Answer::new(200)
        .header("Access-Control-Allow-Origin", origin.to_owned())
        .header("Access-Control-Max-Age", "86400")
        .header("Access-Control-Allow-Methods", CORS_METHODS)
        .header("Access-Control-Allow-Headers", CORS_HEADERS)
}

/// True when `req` asks for an answer that is not from a cache (`Cache-Control: no-cache`,
/// or `Pragma: no-cache`).
fn asks_no_cache(req: &Incoming) -> bool {
    req.header_values("Cache-Control")
        .chain(req.header_values("Pragma"))
        .flat_map(|v| v.split(','))
        .any(|d| d.trim().eq_ignore_ascii_case("no-cache"))
}

/// The proxy's answer to `req`, resolving through `resolution` (and its cache: the answer
/// says in `X-Cache` how its resolutions were served, when it made any).
pub async fn answer(resolution: &Resolution, req: &Incoming) -> Answer {
    let bypass = asks_no_cache(req) && resolution.trusts(req.client, req.header(TOKEN_HEADER));
    let lookup = resolution.lookup(bypass);
    let mut answer = answer_with(&lookup, req).await;
    if let Some(served) = lookup.served() {
        answer
            .headers
            .push(("X-Cache".into(), served.as_str().into()));
    }
    answer
}

async fn answer_with(lookup: &Lookup<'_>, req: &Incoming) -> Answer {
    let method = req.method.to_ascii_uppercase();
    if !req.http10 && req.header("Host").is_none() {
        // HTTP/1.1 requires a Host (the reference's Jetty answers so).
        let mut a = Answer::new(400).header("Content-Type", "text/html;charset=iso-8859-1");
        a.body = b"<h1>Bad Message 400</h1><pre>reason: No Host</pre>".to_vec();
        return a;
    }
    let origin = req.header("Origin").map(str::to_owned);
    if let (Some(origin), "OPTIONS") = (&origin, method.as_str()) {
        if let Some(m) = req.header("Access-Control-Request-Method") {
            return preflight(req, origin, m);
        }
    }
    let servlet = servlet(&req.path);
    let mut answer = match (servlet, method.as_str()) {
        (Servlet::Rest, "GET" | "HEAD" | "POST") => rest_request(lookup, req).await,
        (Servlet::Rest, "OPTIONS") => {
            Answer::new(200).header("Allow", "GET, HEAD, POST, PUT, DELETE, TRACE, OPTIONS")
        }
        (Servlet::Rest, "PUT" | "DELETE") => rest::read_only(&method),
        (Servlet::Prefixes, _) => rest::authentication_required(None),
        (Servlet::UnknownApi, _) => rest::unknown_endpoint(&method, &req.path),
        (Servlet::Static, "GET" | "HEAD") if req.path == pages::LOGO_PATH => {
            let mut a = Answer::new(200).header("Content-Type", "image/svg+xml");
            a.body = pages::LOGO_SVG.as_bytes().to_vec();
            a
        }
        (Servlet::Static, _) => static_missing(&req.path),
        (_, "GET" | "HEAD" | "POST") => proxy(lookup, req).await,
        // TRACE is refused (405), so not offered (the reference offers and echoes it).
        (_, "OPTIONS") => Answer::new(200).header("Allow", "GET, HEAD, POST, OPTIONS"),
        (_, "PUT" | "DELETE" | "TRACE") => Answer::new(405),
        _ => Answer::new(501),
    };
    if let Some(origin) = origin {
        answer.headers.insert(0, ("Vary".into(), "Origin".into()));
        answer
            .headers
            .insert(0, ("Access-Control-Allow-Origin".into(), origin.into()));
        if servlet == Servlet::Rest {
            answer.headers.push((
                "Access-Control-Expose-Headers".into(),
                "Content-Length".into(),
            ));
        }
    }
    answer
}

/// 404 for a file under `/static/` (the gateway serves none).
fn static_missing(path: &str) -> Answer {
    let mut a = Answer::new(404).header("Content-Type", "text/html;charset=utf-8");
    a.body = format!(
        "<html><head><title>404 Not Found</title></head><body><h2>404 Not Found</h2>\
         <p>{}</p></body></html>\n",
        pages::text::cgi_escape(path)
    )
    .into_bytes();
    a
}

/// A request to the REST servlet (`/api/handles/...`): the handle as the path names it (no
/// scheme stripped, no alias followed); `?prefix=` without a handle lists a prefix's
/// handles, which needs authentication.
async fn rest_request(lookup: &Lookup<'_>, req: &Incoming) -> Answer {
    let pr = ProxyRequest::read("GET", &req.path, req.query.as_deref(), &[]);
    if pr.handle.is_empty() {
        if let Some(prefix) = pr.params.get("prefix") {
            return rest::authentication_required(Some(prefix));
        }
    }
    rest::answer(lookup, &pr.handle, &pr.params).await
}

/// The proxy's own base URL for this request: the one the server decided (configured, or
/// from a trusted proxy), else `http://` and the `Host` header, else the address the
/// request came in on.
fn base_url(req: &Incoming) -> String {
    if let Some(base) = &req.base {
        return base.clone();
    }
    match req.header("Host").map(str::trim).filter(|h| !h.is_empty()) {
        Some(host) => format!("http://{host}"),
        None => format!("http://{}", req.local),
    }
}

/// What an error page of this request says of `handle`.
fn context<'a>(base: &'a str, handle: &'a str, req: &'a Incoming) -> ErrorContext<'a> {
    ErrorContext {
        base,
        handle,
        referer: req.header("Referer").unwrap_or(""),
    }
}

/// The answer for a failed resolution of `handle`: 404 when it does not exist, 400 for a
/// prefix the server does not serve (the reference's answer to its RC 301), 500 otherwise.
fn lookup_failed(context: ErrorContext<'_>, e: &LookupError) -> Answer {
    if e.is_not_found() {
        return pages::not_found(context);
    }
    match e {
        LookupError::Resolve(r)
            if matches!(
                r.kind(),
                ResolveErrorKind::PrefixNotServed | ResolveErrorKind::UnknownPrefix
            ) =>
        {
            pages::error_page(400, "Resolution Error", context)
        }
        _ => pages::error_page(500, &format!("Resolution Error: {e}"), context),
    }
}

async fn proxy(lookup: &Lookup<'_>, req: &Incoming) -> Answer {
    if req.path == "/help.html" {
        return Answer::new(302).header("Location", HELP_URL);
    }
    if req.path == "/robots.txt" {
        let mut a = Answer::new(200).header("Content-Type", "text/plain");
        a.body = pages::ROBOTS_TXT.as_bytes().to_vec();
        return a;
    }
    let form = if req.method.eq_ignore_ascii_case("POST")
        && req.header("Content-Type").is_some_and(|t| {
            t.trim()
                .to_ascii_lowercase()
                .starts_with("application/x-www-form-urlencoded")
        }) {
        path::form_fields(&req.body)
    } else {
        Vec::new()
    };
    let pr = ProxyRequest::read(&req.method, &req.path, req.query.as_deref(), &form);
    if pr.api {
        if pr.old_api {
            return rest::unknown_endpoint(&req.method.to_ascii_uppercase(), &req.path);
        }
        return rest::answer(lookup, &pr.handle, &pr.params).await;
    }
    if pr.handle.is_empty() {
        return pages::query_page();
    }
    // Made only by the answers that name the proxy (the redirect does not).
    let base = || base_url(req);
    let mut handle = pr.handle.clone();
    if !handle.contains('/') {
        // A bare prefix: its prefix handle.
        handle = format!("0.NA/{handle}");
    }
    let types: Vec<String> = pr.params.all("type").map(str::to_owned).collect();
    let indexes: Vec<u32> = pr
        .params
        .all("index")
        .map(str::parse)
        .collect::<Result<_, _>>()
        .unwrap_or_default();
    let action = pr.params.get("action").map(str::to_ascii_lowercase);
    if action.as_deref() == Some("api") {
        return rest::answer(lookup, &handle, &pr.params).await;
    }
    let record = match lookup.values(&handle, &types, &indexes).await {
        Ok(r) => r,
        Err(LookupError::Resolve(e)) if e.kind() == ResolveErrorKind::NoMatchingValues => {
            Record::fresh(Vec::new())
        }
        Err(e) => return lookup_failed(context(&base(), &pr.handle, req), &e),
    };
    if record.values().is_empty() && types.is_empty() && !indexes.is_empty() {
        // Indexes alone that match nothing: the reference shows its error page, titled
        // "No Values Found", with 200 (a type that matches nothing gets the "No Values
        // Found" page of its own, below).
        return pages::error_page(200, "No Values Found", context(&base(), &pr.handle, req));
    }
    let metadata = action.as_deref() == Some("metadata");
    let show = match action.as_deref() {
        Some("showvalues") => Show::Values,
        Some("showurls") => Show::Urls,
        Some(_) => Show::Redirect,
        None if pr.params.has("noredirect") => Show::Values,
        None => Show::Redirect,
    };
    let is_post = req.method.eq_ignore_ascii_case("POST");
    // The handle the answer names: the one asked for, or the end of its alias chain.
    let mut shown = pr.handle.clone();
    let (record, mut alias_ttls) =
        if pr.params.has("ignore_aliases") || aliases::alias_target(record.values()).is_none() {
            (record, Vec::new())
        } else {
            match aliases::follow(lookup, record).await {
                AliasEnd::TooLong { handle } => {
                    return pages::alias_chain_too_long(context(&base(), &handle, req))
                }
                AliasEnd::Failed { handle, error } => {
                    return lookup_failed(context(&base(), &handle, req), &error)
                }
                AliasEnd::Final {
                    handle: target,
                    record,
                    ttls,
                } => {
                    if !is_post && show == Show::Redirect {
                        let mut location = format!("{}/{}", base(), encode_url_path(&target));
                        if let Some(q) = &pr.raw_query {
                            location.push('?');
                            location.push_str(q);
                        }
                        let mut a = Answer::new(301).header("Location", location);
                        if let Some(at) = earliest_expiry(&ttls, SystemTime::now()) {
                            a = a.header("Expires", httpdate::fmt_http_date(at));
                        }
                        return a;
                    }
                    shown = target;
                    (record, ttls)
                }
            }
        };
    match show {
        Show::Values => pages::values_page(&base(), &shown, record.values()),
        Show::Urls => show_urls(lookup, req, &base(), &shown, &record).await,
        Show::Redirect => {
            redirect_to_location(lookup, req, &pr, &record, metadata, &mut alias_ttls).await
        }
    }
}

/// What the proxy shows of a handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    /// The redirect (or the values page when there is nowhere to go).
    Redirect,
    /// The values page.
    Values,
    /// The candidate locations as XML (or the values page when there is none).
    Urls,
}

/// `action=showurls`: the candidates as XML, the values page when there is none, 500 when
/// a location list cannot be read.
async fn show_urls(
    lookup: &Lookup<'_>,
    req: &Incoming,
    base: &str,
    handle: &str,
    record: &Record,
) -> Answer {
    let values = record.values();
    if !locations::can_redirect(values) {
        return pages::values_page(base, handle, values);
    }
    let located = locations::locate(lookup, record).await;
    let set = located.set();
    if let Some(e) = set.invalid.first() {
        let message = format!("Error showing locations for '{handle}': {e}");
        return pages::error_page(500, &message, context(base, handle, req));
    }
    pages::showurls::showurls(handle, values, set)
        .unwrap_or_else(|| pages::values_page(base, handle, values))
}

/// The redirect of `values` (or their values page when there is nowhere to go).
async fn redirect_to_location(
    lookup: &Lookup<'_>,
    req: &Incoming,
    pr: &ProxyRequest,
    record: &Record,
    metadata: bool,
    alias_ttls: &mut Vec<handle_resolver::wire::ConsultedTtl>,
) -> Answer {
    // Made only by the pages (the redirect does not name the proxy).
    let base = || base_url(req);
    let values = record.values();
    if !locations::can_redirect(values) {
        return pages::values_page(&base(), &pr.handle, values);
    }
    let located = locations::locate(lookup, record).await;
    let set = located.set();
    if let Some(e) = set.invalid.first() {
        let message = format!("Error showing redirect for '{}': {e}", pr.handle);
        return pages::error_page(500, &message, context(&base(), &pr.handle, req));
    }
    let mut wishes = LocationRequest::new();
    for l in pr.params.all("locatt") {
        wishes = wishes.locatt(l);
    }
    if metadata {
        wishes = wishes.locatt("role:metadata");
    }
    let accept: Vec<&str> = req.header_values("Accept").collect();
    let languages: Vec<&str> = req.header_values("Accept-Language").collect();
    wishes = wishes.negotiate(&accept, req.header("User-Agent"), &languages, metadata);
    if req.match_address {
        wishes = wishes.address(req.client);
    }
    // The request's `?country=`, else the client's in the operator's GeoIP database.
    let geo_country = match pr.params.get("country") {
        Some(_) => None,
        None => req.geoip.as_ref().and_then(|db| db.country(req.client)),
    };
    if let Some(c) = pr.params.get("country").or(geo_country.as_deref()) {
        wishes = wishes.country(c);
    }
    // An answer that may differ from client to client is no answer for a shared cache.
    let has = |attribute| {
        set.locations
            .iter()
            .any(|l| l.attribute(attribute).is_some())
    };
    let private =
        (req.match_address && has("addresses")) || (geo_country.is_some() && has("country"));
    let mut chooser = handle_resolver::wire::Chooser::new();
    let Some(chosen) = set.select(&wishes, &mut chooser) else {
        return pages::values_page(&base(), &pr.handle, values);
    };
    let Some(mut url) = chosen.href_for(&pr.handle) else {
        return pages::values_page(&base(), &pr.handle, values);
    };
    if let Some(append) = pr.params.get("urlappend") {
        url.push_str(append);
    }
    alias_ttls.extend(located.aged_ttls());
    let parts = RedirectParts {
        status: set.redirect_status(chosen),
        http10: req.http10,
        headers_only: pr.params.has("redirectionHeaders"),
        expires: earliest_expiry(alias_ttls, SystemTime::now()),
        vary_accept: set.conneg(),
        fields: set.header_fields(&pr.handle),
        links: set.link_headers(&pr.handle),
        head_lines: set.head_lines(&pr.handle),
        private,
    };
    redirect::redirect(&url, &parts)
}
