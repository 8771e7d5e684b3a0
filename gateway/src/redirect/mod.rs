//! The redirect as the reference's proxy sends it (Handle.Net 9.2.0,
//! `HDLServletRequest.sendHTTPRedirect`, `expirationDateFor`, `Location.sendHttpRedirectResponse`):
//! its status (302 unless `http_sc` says 301, 303, 307 or 308; an HTTP/1.0 request gets 302
//! for anything but 301; `redirectionHeaders` gets 200), `Location` in URI form
//! ([`encode_iri`]), `Expires` at the earliest expiry of the values used (relative TTLs from
//! now, absolute ones as they are, none later than 172,800 s from now), the headers and
//! `Link`s of the handle's `10320/headers` and `10320/links`, and a small HTML page.

mod iri;

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use handle_resolver::wire::{ConsultedTtl, Ttl};

pub use iri::encode_iri;

/// No value's expiry is taken beyond this many seconds from now (`MAX_RECOGNIZED_TTL`).
pub const MAX_TTL_SECONDS: u64 = 172_800;

/// The values of other handles (included, namespace) expire at most this many seconds from
/// now: the reference caches their location information for an hour, and answers from that
/// cache after the first request.
pub const OTHER_HANDLE_TTL_SECONDS: u64 = 3_600;

/// The `Content-Type` of the proxy's HTML pages, as the reference writes it.
pub const HTML: &str = "text/html;charset=utf-8";

/// A header's name or value: most are written in the code (no allocation for them, nor a
/// copy when the response is made: BENCHMARKS.md §18).
pub type HeaderText = Cow<'static, str>;

/// An answer to send: status, headers in order, body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers, in order (a name may repeat).
    pub headers: Vec<(HeaderText, HeaderText)>,
    /// The body (left out for HEAD).
    pub body: Vec<u8>,
}

impl Answer {
    /// An answer of `status` with no header and no body.
    pub fn new(status: u16) -> Answer {
        Answer {
            status,
            ..Answer::default()
        }
    }

    /// Adds a header at the end.
    pub fn header(mut self, name: impl Into<HeaderText>, value: impl Into<HeaderText>) -> Answer {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The first value of header `name` (any case).
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

/// When a value of this TTL, read at `now`, expires (for `Expires`).
pub fn expiry_of(ttl: &ConsultedTtl, now: SystemTime) -> SystemTime {
    let at = match ttl.ttl {
        Ttl::Absolute(secs) => UNIX_EPOCH + Duration::from_secs(u64::from(secs)),
        Ttl::Relative(secs) => shift(now, i64::from(secs)),
        // The reference reads any other kind as relative.
        other => shift(now, i64::from(other.value() as i32)),
    };
    let mut cap = now + Duration::from_secs(MAX_TTL_SECONDS);
    if ttl.other_handle {
        cap = cap.min(now + Duration::from_secs(OTHER_HANDLE_TTL_SECONDS));
    }
    at.min(cap)
}

/// `now` moved by `secs` seconds (either way).
fn shift(now: SystemTime, secs: i64) -> SystemTime {
    let d = Duration::from_secs(secs.unsigned_abs());
    if secs >= 0 {
        now + d
    } else {
        now.checked_sub(d).unwrap_or(UNIX_EPOCH)
    }
}

/// The earliest expiry of `ttls` read at `now`; `None` when there is none.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use handle_gateway::redirect::earliest_expiry;
/// use handle_resolver::wire::{HandleValue, LocationSet, Ttl};
/// let mut url = HandleValue::new(1, "URL", "https://a.example/");
/// url.ttl = Ttl::Relative(600);
/// let set = LocationSet::from_values(&[url]);
/// let now = SystemTime::now();
/// assert_eq!(earliest_expiry(&set.ttls, now), Some(now + Duration::from_secs(600)));
/// ```
pub fn earliest_expiry(ttls: &[ConsultedTtl], now: SystemTime) -> Option<SystemTime> {
    ttls.iter().map(|t| expiry_of(t, now)).min()
}

/// `text` with `&`, `<`, `>` and `"` as character references (the reference's `cgiEscape`).
pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    // Runs without a character to escape are copied whole.
    while let Some(i) = rest.find(['&', '<', '>', '"']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            _ => "&quot;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    out
}

/// What a redirect carries besides its target.
#[derive(Debug, Clone, Default)]
pub struct RedirectParts {
    /// The status `http_sc` asks for (302 by default).
    pub status: u16,
    /// True for an HTTP/1.0 request.
    pub http10: bool,
    /// True with `redirectionHeaders`: status 200, the same headers.
    pub headers_only: bool,
    /// When the answer expires (`None`: no `Expires`).
    pub expires: Option<SystemTime>,
    /// `Vary: Accept`.
    pub vary_accept: bool,
    /// The `10320/headers` fields.
    pub fields: Vec<(String, String)>,
    /// The `Link` header values.
    pub links: Vec<String>,
    /// The `10320/headers` lines for the page's `<head>`.
    pub head_lines: Vec<String>,
    /// `Cache-Control: private`: the choice depended on who the client is (its address,
    /// its country from the operator's GeoIP database), so that a shared cache in front
    /// does not hand one client's location to another (the reference sends none).
    pub private: bool,
}

/// The final status of a redirect: `status` (301, 302, 303, 307 or 308), 302 for an
/// HTTP/1.0 client unless 301.
pub fn final_status(status: u16, http10: bool) -> u16 {
    if http10 && status != 301 {
        302
    } else {
        status
    }
}

/// The redirect to `url` (the chosen location with `urlappend`, as text).
///
/// ```
/// use handle_gateway::redirect::{redirect, RedirectParts};
/// let a = redirect("https://a.example/?x=1&y", &RedirectParts { status: 307, http10: true, ..Default::default() });
/// assert_eq!(a.status, 302);
/// assert_eq!(a.header_value("Location"), Some("https://a.example/?x=1&y"));
/// assert!(String::from_utf8(a.body).unwrap().contains("?x=1&amp;y"));
/// ```
pub fn redirect(url: &str, parts: &RedirectParts) -> Answer {
    let url = url.trim();
    let status = if parts.headers_only {
        200
    } else {
        final_status(
            if parts.status == 0 { 302 } else { parts.status },
            parts.http10,
        )
    };
    let mut a = Answer::new(status);
    if parts.vary_accept {
        a = a.header("Vary", "Accept");
    }
    a = a.header("Location", encode_iri(url));
    if let Some(at) = parts.expires {
        a = a.header("Expires", httpdate::fmt_http_date(at));
    }
    if parts.private {
        a = a.header("Cache-Control", "private");
    }
    for (name, value) in &parts.fields {
        a = a.header(name.clone(), value.clone());
    }
    for link in &parts.links {
        a = a.header("Link", link.clone());
    }
    a = a.header("Content-Type", HTML);
    let escaped = html_escape(url);
    let mut page = String::with_capacity(100 + 2 * escaped.len());
    page.push_str("<html><head><title>Handle Redirect</title>");
    if !parts.head_lines.is_empty() {
        page.push('\n');
        for line in &parts.head_lines {
            page.push_str(line);
            page.push('\n');
        }
    }
    for piece in [
        "</head>\n<body><a href=\"",
        &escaped,
        "\">",
        &escaped,
        "</a></body></html>",
    ] {
        page.push_str(piece);
    }
    a.body = page.into_bytes();
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ttl(t: Ttl, other: bool) -> ConsultedTtl {
        ConsultedTtl::new(t, other)
    }

    #[test]
    fn expiries() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let at = |t, o| expiry_of(&ttl(t, o), now);
        assert_eq!(
            at(Ttl::Relative(600), false),
            now + Duration::from_secs(600)
        );
        assert_eq!(at(Ttl::Relative(-1), false), now - Duration::from_secs(1));
        assert_eq!(at(Ttl::Relative(0), false), now);
        assert_eq!(
            at(Ttl::Relative(86_400), true),
            now + Duration::from_secs(3_600)
        );
        assert_eq!(
            at(Ttl::Absolute(1_900_000_000), false),
            now + Duration::from_secs(MAX_TTL_SECONDS)
        );
        assert_eq!(
            at(Ttl::Absolute(946_684_800), false),
            UNIX_EPOCH + Duration::from_secs(946_684_800)
        );
    }

    #[test]
    fn pages_and_headers() {
        let parts = RedirectParts {
            status: 303,
            vary_accept: true,
            fields: vec![("X-A".into(), "1".into())],
            links: vec!["<https://l.example/>; rel=\"x\"".into()],
            head_lines: vec!["<meta name=\"a\">".into()],
            headers_only: true,
            ..RedirectParts::default()
        };
        let a = redirect(" https://a.example/ ", &parts);
        assert_eq!(a.status, 200);
        let names: Vec<&str> = a.headers.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(names, ["Vary", "Location", "X-A", "Link", "Content-Type"]);
        assert_eq!(
            String::from_utf8(a.body).unwrap(),
            "<html><head><title>Handle Redirect</title>\n<meta name=\"a\">\n</head>\n<body><a href=\"https://a.example/\">https://a.example/</a></body></html>"
        );
        assert_eq!(final_status(301, true), 301);
        assert_eq!(final_status(308, false), 308);
    }
}
