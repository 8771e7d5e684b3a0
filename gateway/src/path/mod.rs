//! The handle and the parameters of a request, read as the reference's proxy reads them
//! (Handle.Net 9.2.0, `HDLServletRequest`: its constructor, `parseGetParams` and
//! `normalizeHandle`).
//!
//! - The handle is the request's path, percent-decoded with `+` kept as `+`, leading
//!   slashes removed (so `//H` works); a `#` in the path cuts it when there is no query, the
//!   rest becoming the `urlappend` parameter.
//! - `hdl:`, `doi:`, `info:hdl/`, `info:doi/`, `urn:hdl:`, `urn:doi:` and `urn:eidr:`
//!   (any case) are stripped; in the URN forms the first `:` becomes `/` when no `/` comes
//!   before it. `api/handles/H` and `api/H` mark a REST API request.
//! - Query parameters are split at `&` and `;`, names and values decoded as the path; a `#`
//!   in the query cuts it, the rest (from the `#`) becoming `urlappend`.
//! - A POST's form fields (`application/x-www-form-urlencoded`) are parameters too, and its
//!   `hdl` field (trimmed) is the handle.

use percent_encoding::percent_decode;

/// The parameters of a request, in order (a name may repeat).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(pub Vec<(String, String)>);

impl Params {
    /// The first value of `name` (names are case-sensitive, as the servlet's).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// True when `name` is given (with any value, even empty).
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Adds a parameter at the end.
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.0.push((name.into(), value.into()));
    }
}

/// A request as the proxy reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyRequest {
    /// The handle asked for, prefixes stripped (empty for the query page).
    pub handle: String,
    /// True for `/api/handles/H` (and `/api/H`): the REST API.
    pub api: bool,
    /// True for the older `/api/H` form.
    pub old_api: bool,
    /// The parameters.
    pub params: Params,
    /// The query as received (without `?`), for the alias redirect.
    pub raw_query: Option<String>,
}

/// `text` percent-decoded as the reference's `decodeURLIgnorePlus`: `%XX` becomes the byte,
/// `+` stays `+`, a `%` not followed by two hex digits stays as it is; the bytes read as
/// UTF-8 (a malformed sequence becomes U+FFFD).
///
/// ```
/// use handle_gateway::path::decode;
/// assert_eq!(decode("20.500.1%2Fa+b%23c%zz"), "20.500.1/a+b#c%zz");
/// assert_eq!(decode("%C3%9C"), "Ü");
/// ```
pub fn decode(text: &str) -> String {
    percent_decode(text.as_bytes())
        .decode_utf8_lossy()
        .into_owned()
}

/// A form body's fields (`application/x-www-form-urlencoded`: `+` is a space).
pub fn form_fields(body: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(body).into_owned().collect()
}

/// Adds the parameters of a GET query (`parseGetParams`).
fn query_params(path: &str, query: Option<&str>, params: &mut Params) {
    match query.filter(|q| !q.is_empty()) {
        None => {
            if let Some(n) = path.find('#') {
                params.push("urlappend", decode(&path[n..]));
            }
        }
        Some(query) => {
            let query = match query.find('#') {
                Some(n) => {
                    params.push("urlappend", decode(&query[n..]));
                    &query[..n]
                }
                None => query,
            };
            for token in query.split(['&', ';']).filter(|t| !t.is_empty()) {
                let (key, value) = token.split_once('=').unwrap_or((token, ""));
                params.push(decode(key), decode(value));
            }
        }
    }
}

/// Strips the REST API path and the identifier schemes (`normalizeHandle`): the handle,
/// whether it is a REST request, whether the older `/api/H` form.
///
/// ```
/// use handle_gateway::path::normalize;
/// assert_eq!(normalize("urn:hdl:20.500.1:a:b").0, "20.500.1/a:b");
/// assert_eq!(normalize("urn:hdl:20.500.1/a:b").0, "20.500.1/a:b");
/// assert_eq!(normalize("INFO:DOI/10.1/x").0, "10.1/x");
/// assert_eq!(normalize("api/handles/20.500.1/x"), ("20.500.1/x".to_string(), true, false));
/// ```
pub fn normalize(handle: &str) -> (String, bool, bool) {
    let mut hdl = handle.to_owned();
    let (mut api, mut old_api) = (false, false);
    // ASCII case only: the prefixes are ASCII, and the byte offsets stay those of `hdl`.
    let lower = hdl.to_ascii_lowercase();
    if lower.starts_with("api/handles/") || lower == "api/handles" {
        // The REST servlet's own path: no scheme is stripped there.
        return (hdl.get(12..).unwrap_or_default().to_owned(), true, false);
    } else if lower.starts_with("api/") || lower == "api" {
        api = true;
        old_api = true;
        hdl = hdl.get(4..).unwrap_or_default().to_owned();
    }
    let lower = hdl.to_ascii_lowercase();
    if lower.starts_with("info:doi/") || lower.starts_with("info:hdl/") {
        hdl = hdl.get(9..).unwrap_or_default().to_owned();
    } else if lower.starts_with("hdl:") || lower.starts_with("doi:") {
        hdl = hdl.get(4..).unwrap_or_default().to_owned();
    } else if lower.starts_with("urn:hdl:")
        || lower.starts_with("urn:doi:")
        || lower.starts_with("urn:eidr:")
    {
        // After the second colon; then the first colon is the slash when no slash precedes it.
        let first = hdl.find(':').unwrap_or(0);
        let second = hdl[first + 1..].find(':').map_or(0, |i| first + 1 + i);
        hdl = hdl.get(second + 1..).unwrap_or_default().to_owned();
        if let Some(colon) = hdl.find(':') {
            if hdl.find('/').map_or(true, |slash| slash > colon) {
                hdl.replace_range(colon..=colon, "/");
            }
        }
    }
    (hdl, api, old_api)
}

/// Reads a request: its method, path and query as received (not decoded), and for a POST
/// its form fields.
///
/// ```
/// use handle_gateway::path::ProxyRequest;
/// let r = ProxyRequest::read("GET", "//hdl:20.500.1%2Fa+b", Some("locatt=view:json;x=%41"), &[]);
/// assert_eq!(r.handle, "20.500.1/a+b");
/// assert_eq!(r.params.get("locatt"), Some("view:json"));
/// assert_eq!(r.params.get("x"), Some("A"));
/// let post = ProxyRequest::read("POST", "/", None, &[("hdl".into(), " doi:10.1/x ".into())]);
/// assert_eq!(post.handle, "10.1/x");
/// ```
pub fn read(
    method: &str,
    path: &str,
    query: Option<&str>,
    form: &[(String, String)],
) -> ProxyRequest {
    let query_given = query.is_some_and(|q| !q.is_empty());
    let mut uri = path;
    if !query_given {
        if let Some(n) = uri.find('#') {
            uri = &uri[..n];
        }
    }
    let mut hdl = decode(uri);
    while let Some(rest) = hdl.strip_prefix('/') {
        hdl = rest.trim().to_owned();
    }
    let mut params = Params::default();
    if method.eq_ignore_ascii_case("POST") {
        if let Some(q) = query.filter(|q| !q.is_empty()) {
            params
                .0
                .extend(form_urlencoded::parse(q.as_bytes()).into_owned());
        }
        params.0.extend(form.iter().cloned());
        if let Some(h) = params.get("hdl") {
            hdl = h.trim().to_owned();
        }
    } else if method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD") {
        query_params(path, query, &mut params);
    }
    let (handle, api, old_api) = normalize(&hdl);
    ProxyRequest {
        handle,
        api,
        old_api,
        params,
        raw_query: query.map(str::to_owned),
    }
}

impl ProxyRequest {
    /// [`read`]: a request of this method, path, query and form.
    pub fn read(
        method: &str,
        path: &str,
        query: Option<&str>,
        form: &[(String, String)],
    ) -> ProxyRequest {
        read(method, path, query, form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, query: Option<&str>) -> ProxyRequest {
        read("GET", path, query, &[])
    }

    #[test]
    fn path_forms() {
        for (path, want) in [
            ("/hdl:20.500.1/x", "20.500.1/x"),
            ("/doi:20.500.1/x", "20.500.1/x"),
            ("/HDL:20.500.1/x", "20.500.1/x"),
            ("/info:hdl/20.500.1/x", "20.500.1/x"),
            ("/urn:hdl:20.500.1:x", "20.500.1/x"),
            ("/urn:doi:20.500.1:x", "20.500.1/x"),
            ("/urn:eidr:20.500.1:x", "20.500.1/x"),
            ("/20.500.1%2Fx", "20.500.1/x"),
            ("//20.500.1/x", "20.500.1/x"),
            ("/%32%30.500.1/x", "20.500.1/x"),
            ("/20.500.1/a%2523b", "20.500.1/a%23b"),
            ("/20.500.1/a;b", "20.500.1/a;b"),
            ("/20.500.1/a+b", "20.500.1/a+b"),
            ("/20.500.1/x/", "20.500.1/x/"),
            ("/", ""),
        ] {
            assert_eq!(get(path, None).handle, want, "{path}");
        }
    }

    #[test]
    fn a_hash_is_urlappend_only_without_a_query() {
        let r = get("/20.500.1/a#b%2Fc", None);
        assert_eq!(r.handle, "20.500.1/a");
        assert_eq!(r.params.get("urlappend"), Some("#b/c"));
        let r = get("/20.500.1/a#b", Some("noredirect"));
        assert_eq!(r.handle, "20.500.1/a#b");
        assert!(r.params.has("noredirect"));
        let r = get("/20.500.1/x", Some("x=1#frag"));
        assert_eq!(r.params.get("urlappend"), Some("#frag"));
        assert_eq!(r.params.get("x"), Some("1"));
    }

    #[test]
    fn parameters() {
        let r = get(
            "/20.500.1/x",
            Some("&&=;a=1;a=2&urlappend=/a+b&noredirect&bad=%zz"),
        );
        assert_eq!(r.params.all("a").collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(r.params.get("urlappend"), Some("/a+b"));
        assert_eq!(r.params.get("noredirect"), Some(""));
        assert_eq!(r.params.get("bad"), Some("%zz"));
        assert_eq!(r.params.get(""), Some(""));
        assert_eq!(
            r.raw_query.as_deref(),
            Some("&&=;a=1;a=2&urlappend=/a+b&noredirect&bad=%zz")
        );
    }

    #[test]
    fn posts() {
        let form = form_fields(b"hdl=+20.500.1%2Fx+&locatt=view:json");
        let r = read("POST", "/", None, &form);
        assert_eq!(r.handle, "20.500.1/x");
        assert_eq!(r.params.get("locatt"), Some("view:json"));
        let r = read("POST", "/20.500.1/y", None, &[]);
        assert_eq!(r.handle, "20.500.1/y");
        // Other methods read no parameters.
        assert!(read("PUT", "/20.500.1/y", Some("a=1"), &[])
            .params
            .0
            .is_empty());
    }

    #[test]
    fn odd_text_never_panics() {
        for path in [
            "/\u{212A}api/x",
            "/İnfo:doi/x",
            "/urn:hdl:",
            "/urn:hdl:x",
            "/api",
            "/%FF%FE",
            "/#",
            "/hdl:",
        ] {
            let _ = get(path, None);
            let _ = get(path, Some("#"));
        }
        assert_eq!(get("/urn:hdl:", None).handle, "");
    }

    #[test]
    fn api_paths() {
        let r = get("/api/handles/20.500.1%2Fx", None);
        assert!(r.api && !r.old_api);
        assert_eq!(r.handle, "20.500.1/x");
        let r = get("/api/20.500.1/x", None);
        assert!(r.api && r.old_api);
        assert_eq!(
            get("/api/handles/hdl:20.500.1/x", None).handle,
            "hdl:20.500.1/x"
        );
        let r = get("/api/handles", None);
        assert!(r.api && !r.old_api && r.handle.is_empty());
    }
}
