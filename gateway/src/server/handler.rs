//! One request to one answer, as the reference's proxy decides it (Handle.Net 9.2.0,
//! `HDLProxy.doResolution`): the method, the handle and its parameters, the resolution,
//! the HS_ALIAS chain, then a redirect or a page.

use std::net::{IpAddr, SocketAddr};
use std::time::SystemTime;

use handle_resolver::wire::{encode_url_path, HandleValue, LocationRequest};
use handle_resolver::ResolveErrorKind;

use crate::aliases::{self, AliasEnd};
use crate::locations;
use crate::pages;
use crate::path::{self, ProxyRequest};
use crate::redirect::{self, earliest_expiry, Answer, RedirectParts};
use crate::rest;
use crate::upstream::{LookupError, Resolution};

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
    /// The address the request came in on (the proxy's own URL when there is no `Host`).
    pub local: SocketAddr,
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
            local,
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

/// The proxy's answer to `req`, resolving through `resolution`.
pub async fn answer(resolution: &Resolution, req: &Incoming) -> Answer {
    let method = req.method.to_ascii_uppercase();
    if !req.http10 && req.header("Host").is_none() {
        // HTTP/1.1 requires a Host (the reference's Jetty answers so).
        let mut a = Answer::new(400).header("Content-Type", "text/html;charset=iso-8859-1");
        a.body = b"<h1>Bad Message 400</h1><pre>reason: No Host</pre>".to_vec();
        return a;
    }
    let mut answer = match method.as_str() {
        "GET" | "HEAD" | "POST" => proxy(resolution, req).await,
        "OPTIONS" => Answer::new(200).header("Allow", "GET, HEAD, POST, TRACE, OPTIONS"),
        "TRACE" => trace(req),
        "PUT" | "DELETE" => Answer::new(405),
        _ => Answer::new(501),
    };
    if let Some(origin) = req.header("Origin") {
        answer.headers.insert(0, ("Vary".into(), "Origin".into()));
        answer
            .headers
            .insert(0, ("Access-Control-Allow-Origin".into(), origin.to_owned()));
    }
    answer
}

/// `TRACE`: the request's head echoed, `message/http`.
fn trace(req: &Incoming) -> Answer {
    let mut text = format!(
        "TRACE {}{} {}\r\n",
        req.path,
        req.query
            .as_deref()
            .map(|q| format!("?{q}"))
            .unwrap_or_default(),
        if req.http10 { "HTTP/1.0" } else { "HTTP/1.1" }
    );
    for (k, v) in &req.headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    let mut a = Answer::new(200).header("Content-Type", "message/http");
    a.body = text.into_bytes();
    a
}

/// The proxy's own base URL for this request: `http://` and the `Host` header, else the
/// address the request came in on.
fn base_url(req: &Incoming) -> String {
    match req.header("Host").map(str::trim).filter(|h| !h.is_empty()) {
        Some(host) => format!("http://{host}"),
        None => format!("http://{}", req.local),
    }
}

/// The answer for a failed resolution of `handle`: 404 when it does not exist, 400 for a
/// prefix the server does not serve (the reference's answer to its RC 301), 500 otherwise.
fn lookup_failed(handle: &str, e: &LookupError) -> Answer {
    if e.is_not_found() {
        return pages::not_found(handle);
    }
    let status = match e {
        LookupError::Resolve(r)
            if matches!(
                r.kind(),
                ResolveErrorKind::PrefixNotServed | ResolveErrorKind::UnknownPrefix
            ) =>
        {
            400
        }
        _ => 500,
    };
    pages::resolution_error(status, handle, &e.to_string())
}

async fn proxy(resolution: &Resolution, req: &Incoming) -> Answer {
    if req.path == "/help.html" {
        return Answer::new(302).header("Location", HELP_URL);
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
        return rest::answer(resolution, &pr.handle, &pr.params).await;
    }
    if pr.handle.is_empty() {
        return pages::query_page();
    }
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
        return rest::answer(resolution, &handle, &pr.params).await;
    }
    let values = match resolution.values(&handle, &types, &indexes).await {
        Ok(v) => v,
        Err(LookupError::Resolve(e)) if e.kind() == ResolveErrorKind::NoMatchingValues => {
            Vec::new()
        }
        Err(e) => return lookup_failed(&pr.handle, &e),
    };
    let metadata = action.as_deref() == Some("metadata");
    let show_values = match action.as_deref() {
        Some("showvalues") | Some("showurls") => true,
        Some(_) => false,
        None => pr.params.has("noredirect"),
    };
    let is_post = req.method.eq_ignore_ascii_case("POST");
    let (values, mut alias_ttls) = if pr.params.has("ignore_aliases")
        || aliases::alias_target(&values).is_none()
    {
        (values, Vec::new())
    } else {
        match aliases::follow(resolution, values).await {
            AliasEnd::TooLong => return pages::alias_chain_too_long(&pr.handle),
            AliasEnd::Failed(e) => return lookup_failed(&pr.handle, &e),
            AliasEnd::Final {
                handle: target,
                values,
                ttls,
            } => {
                if !is_post && !show_values {
                    let mut location = format!("{}/{}", base_url(req), encode_url_path(&target));
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
                (values, ttls)
            }
        }
    };
    if show_values {
        return pages::values_page(&pr.handle, &values);
    }
    redirect_to_location(resolution, req, &pr, &values, metadata, &mut alias_ttls).await
}

/// The redirect of `values` (or their values page when there is nowhere to go).
async fn redirect_to_location(
    resolution: &Resolution,
    req: &Incoming,
    pr: &ProxyRequest,
    values: &[HandleValue],
    metadata: bool,
    alias_ttls: &mut Vec<handle_resolver::wire::ConsultedTtl>,
) -> Answer {
    if !locations::can_redirect(values) {
        return pages::values_page(&pr.handle, values);
    }
    let set = locations::gather(resolution, values).await;
    if let Some(e) = set.invalid.first() {
        return pages::redirect_error(&pr.handle, &e.to_string());
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
    wishes = wishes
        .negotiate(&accept, req.header("User-Agent"), &languages, metadata)
        .address(req.client);
    if let Some(c) = pr.params.get("country") {
        wishes = wishes.country(c);
    }
    let mut chooser = handle_resolver::wire::Chooser::new();
    let Some(chosen) = set.select(&wishes, &mut chooser) else {
        return pages::values_page(&pr.handle, values);
    };
    let Some(mut url) = chosen.href_for(&pr.handle) else {
        return pages::values_page(&pr.handle, values);
    };
    if let Some(append) = pr.params.get("urlappend") {
        url.push_str(append);
    }
    alias_ttls.extend(set.ttls.iter().copied());
    let parts = RedirectParts {
        status: set.redirect_status(chosen),
        http10: req.http10,
        headers_only: pr.params.has("redirectionHeaders"),
        expires: earliest_expiry(alias_ttls, SystemTime::now()),
        vary_accept: set.conneg(),
        fields: set.header_fields(&pr.handle),
        links: set.link_headers(&pr.handle),
        head_lines: set.head_lines(&pr.handle),
    };
    redirect::redirect(&url, &parts)
}
