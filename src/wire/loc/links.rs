//! What a proxy's redirect carries besides its `Location`, as the handle.net proxy writes it
//! (Handle.Net 9.2.0, `Location.writeLinks`, `getLinkValue`, `writeHttpHeaders`,
//! `writeHtmlHeaders`, `sendHttpRedirectResponse`): the status of `http_sc`, `Vary: Accept`,
//! the `Link` headers and the `10320/headers` lines.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use super::reading::{encode_component, fill_template};
use super::{Location, LocationSet};

/// What the reference's `encodeURL` leaves: everything a URI may hold, `%` included (so
/// that an encoded URL stays as it is); a space, the characters no URI holds and every
/// non-ASCII character (UTF-8 first) become `%XX`.
const URL_TEXT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `text` with the characters no URL holds percent-encoded (the reference's `encodeURL`).
///
/// ```
/// use handle_resolver::wire::encode_url_text;
/// assert_eq!(encode_url_text("mailto:a@example.org?subject=hi there"),
///            "mailto:a@example.org?subject=hi%20there");
/// assert_eq!(encode_url_text("https://x.example/ö/a%2Fb;c"), "https://x.example/%C3%B6/a%2Fb;c");
/// ```
pub fn encode_url_text(text: &str) -> String {
    // Through `Cow` rather than `to_string`: a text with nothing to encode is copied once,
    // not written through `fmt` (a redirect's `Location`: 500 instructions, BENCHMARKS.md §18).
    std::borrow::Cow::from(utf8_percent_encode(text, URL_TEXT)).into_owned()
}

/// The location with its `href` made from `href_template` for `handle` when it has none.
fn with_href(location: &Location, handle: &str) -> Location {
    let mut l = location.clone();
    if l.href().is_none() {
        if let Some(t) = l.attribute("href_template") {
            let href = fill_template(t, handle);
            l.attributes.push(("href".to_owned(), href));
        }
    }
    l
}

/// True when every character is printable ASCII.
fn printable_ascii(s: &str) -> bool {
    s.chars().all(|c| (' '..='~').contains(&c))
}

/// The `Link` header value of a location with a `rel` and an `href`.
fn link_value(l: &Location) -> String {
    let mut out = format!("<{}>", encode_url_text(l.href().unwrap_or_default()));
    if let Some(anchor) = l.attribute("anchor") {
        out.push_str(&format!("; anchor=\"{}\"", encode_url_text(anchor)));
    }
    for (attribute, name) in [
        ("rel", "rel"),
        ("media-type", "type"),
        ("target-type", "target-type"),
        ("media", "media"),
        ("hreflang", "hreflang"),
    ] {
        if let Some(v) = l.attribute(attribute) {
            out.push_str(&format!("; {name}=\"{v}\""));
        }
    }
    if let Some(title) = l.attribute("title") {
        let lang = l.attribute("titlelang");
        if lang.is_none() && printable_ascii(title) {
            let escaped = title.replace('\\', "\\\\").replace('"', "\\\"");
            out.push_str(&format!("; title=\"{escaped}\""));
        } else {
            out.push_str(&format!(
                "; title*=UTF-8'{}'{}",
                lang.unwrap_or_default(),
                encode_component(title)
            ));
        }
    }
    out
}

impl LocationSet {
    /// The attribute `name` of `location`, else of the first `<locations>` that has it (the
    /// handle's own lists, then the namespace lists), as the proxy reads `http_sc`.
    pub fn attribute_for<'a>(&'a self, location: &'a Location, name: &str) -> Option<&'a str> {
        location.attribute(name).or_else(|| {
            self.set_attributes
                .iter()
                .find_map(|a| super::attribute(a, name))
        })
    }

    /// The redirect status for `location`: its `http_sc` (else its list's) when it is 301,
    /// 302, 303, 307 or 308 exactly, else 302. (The proxy answers an HTTP/1.0 request 302
    /// for anything but 301.)
    ///
    /// ```
    /// use handle_resolver::wire::{HandleValue, LocationSet};
    /// let set = LocationSet::from_values(&[HandleValue::new(1, "10320/loc",
    ///     r#"<locations http_sc="307"><location href="a" http_sc="301"/><location href="b"/>
    ///        <location href="c" http_sc="399"/></locations>"#)]);
    /// let status: Vec<u16> = set.locations.iter().map(|l| set.redirect_status(l)).collect();
    /// assert_eq!(status, [301, 307, 302]);
    /// ```
    pub fn redirect_status(&self, location: &Location) -> u16 {
        match self.attribute_for(location, "http_sc") {
            Some("301") => 301,
            Some("303") => 303,
            Some("307") => 307,
            Some("308") => 308,
            _ => 302,
        }
    }

    /// True when a location's `http_role` contains `conneg`: the proxy's redirect then
    /// carries `Vary: Accept` (not for a legacy-only handle, whose URL is taken as it is).
    pub fn conneg(&self) -> bool {
        !self.legacy_only
            && self.locations.iter().any(|l| {
                l.attribute("http_role")
                    .is_some_and(|r| r.contains("conneg"))
            })
    }

    /// The `Link` header values, in order: for each list of [`LocationSet::links`], each
    /// location with a `rel` and an `href` (or `href_template`, filled in for `handle`):
    /// `<href>; anchor="..."; rel="..."; type="<media-type>"; target-type="...";
    /// media="..."; hreflang="..."; title="..."` (`anchor` from the `href` of the location of
    /// the list whose `id` is `anchor-id` when it has none; `title*=UTF-8'<titlelang>'...`
    /// for a title with a `titlelang` or characters beyond printable ASCII).
    ///
    /// ```
    /// use handle_resolver::wire::{HandleValue, LocationSet};
    /// let set = LocationSet::from_values(&[HandleValue::new(1, "10320/links",
    ///     r#"<locations><location id="l" rel="cite-as" href="https://a.example/"/>
    ///        <location rel="describedby" href_template="https://m.example/{hdl}"
    ///         media-type="application/json" anchor-id="l"/></locations>"#)]);
    /// assert_eq!(set.link_headers("20.500.1/x"), [
    ///     r#"<https://a.example/>; rel="cite-as""#,
    ///     r#"<https://m.example/20.500.1%2Fx>; anchor="https://a.example/"; rel="describedby"; type="application/json""#,
    /// ]);
    /// ```
    pub fn link_headers(&self, handle: &str) -> Vec<String> {
        let mut out = Vec::new();
        for list in &self.links {
            let mut anchors: Vec<(String, String)> = Vec::new();
            let mut linked = Vec::new();
            for l in &list.locations {
                if l.attribute("rel").is_none() {
                    continue;
                }
                let l = with_href(l, handle);
                let Some(href) = l.href() else { continue };
                if let Some(id) = l.attribute("id") {
                    anchors.retain(|(k, _)| k != id);
                    anchors.push((id.to_owned(), href.to_owned()));
                }
                linked.push(l);
            }
            for l in &mut linked {
                if l.attribute("anchor").is_some() {
                    continue;
                }
                let Some(id) = l.attribute("anchor-id") else {
                    continue;
                };
                if let Some((_, href)) = anchors.iter().find(|(k, _)| k == id) {
                    l.attributes.push(("anchor".to_owned(), href.clone()));
                }
            }
            out.extend(linked.iter().map(link_value));
        }
        out
    }

    /// The response headers of the `10320/headers` lines: each `Name: value` line (trimmed;
    /// not starting with `<`), `{hdl}` and `{hdl:path}` in the value filled in for `handle`.
    ///
    /// ```
    /// use handle_resolver::wire::{HandleValue, LocationSet};
    /// let set = LocationSet::from_values(&[HandleValue::new(1, "10320/headers",
    ///     "X-Id: id {hdl}\n<meta name=\"doi\" content=\"{hdl}\">\nnot a header")]);
    /// assert_eq!(set.header_fields("20.500.1/x"), [("X-Id".to_string(), "id 20.500.1%2Fx".to_string())]);
    /// assert_eq!(set.head_lines("20.500.1/x"), ["<meta name=\"doi\" content=\"20.500.1%2Fx\">"]);
    /// ```
    pub fn header_fields(&self, handle: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for text in &self.headers {
            for line in text.split('\n') {
                let line = line.trim();
                if line.is_empty() || line.starts_with('<') {
                    continue;
                }
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                out.push((name.trim().to_owned(), fill_template(value.trim(), handle)));
            }
        }
        out
    }

    /// The `10320/headers` lines that go into the redirect page's `<head>`: those starting
    /// with `<` (after blanks), as written, `{hdl}` and `{hdl:path}` filled in for `handle`.
    pub fn head_lines(&self, handle: &str) -> Vec<String> {
        self.headers
            .iter()
            .flat_map(|text| text.split('\n'))
            .filter(|line| line.trim().starts_with('<'))
            .map(|line| fill_template(line, handle))
            .collect()
    }
}
