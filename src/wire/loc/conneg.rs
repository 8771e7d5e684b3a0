//! Content negotiation as the handle.net proxy does it (Handle.Net 9.2.0,
//! `HDLServletRequest.processAcceptHeader` and `processAcceptLanguageHeader`): the request's
//! `Accept`, `User-Agent` and `Accept-Language` headers become `locatt` wishes
//! (`http_role`, `ctype`, `media-type`, `language`), added after the caller's own.

use super::reading::java_double;
use super::select::LocationRequest;

/// Types that a browser asks for: a client whose best such type is as good as its best
/// type overall is served as a browser.
const BROWSER_TYPES: [&str; 6] = [
    "text/html",
    "text/xhtml",
    "application/xhtml+xml",
    "application/pdf",
    "application/vnd.wap.xhtml+xml",
    "text/vnd.wap.wml",
];

/// One entry of an `Accept` or `Accept-Language` header: its value trimmed and lower-cased,
/// its `q` (1 when missing or unreadable).
#[derive(Debug, Clone)]
struct Entry {
    value: String,
    quality: f64,
}

/// Every entry of every header line, in order: split at `,`, then at `;` (Java's `split`,
/// which drops trailing empty parts).
fn entries(lines: &[&str]) -> Vec<Entry> {
    let mut out = Vec::new();
    for line in lines {
        let mut parts: Vec<&str> = line.split(',').collect();
        while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
            parts.pop();
        }
        for part in parts {
            let mut fields: Vec<&str> = part.split(';').collect();
            while fields.len() > 1 && fields.last().is_some_and(|p| p.is_empty()) {
                fields.pop();
            }
            let value = fields.first().map_or("*/*", |v| v).trim().to_lowercase();
            let mut quality = 1.0;
            for field in fields.iter().skip(1) {
                if let Some(q) = field.trim().strip_prefix("q=") {
                    if let Some(q) = java_double(q) {
                        // Java's Float: a number it reads as NaN or out of range is kept.
                        quality = q;
                    }
                }
            }
            out.push(Entry { value, quality });
        }
    }
    out
}

/// True for a type a browser asks for: any wildcard, the browser types, images, audio,
/// video.
fn browser_type(t: &str) -> bool {
    t.contains('*')
        || BROWSER_TYPES.contains(&t)
        || t.starts_with("image/")
        || t.starts_with("audio/")
        || t.starts_with("video/")
}

/// The entries sorted by descending `q`, ties in header order.
fn by_quality(mut list: Vec<Entry>) -> Vec<Entry> {
    list.sort_by(|a, b| {
        b.quality
            .partial_cmp(&a.quality)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    list
}

impl LocationRequest {
    /// Adds the `locatt` wishes the proxy derives from a request's headers, after those
    /// already given (a `locatt` query parameter comes first):
    ///
    /// - no `Accept` (or only `*/*`): a `User-Agent` starting `mozilla/` or `opera/` (any
    ///   case) is a browser (`http_role:browser`, `ctype:text/html`,
    ///   `media-type:text/html`), anything else `http_role:no_conneg`;
    /// - else, when the best `q` of a browser type (a wildcard, `text/html`, `text/xhtml`,
    ///   `application/xhtml+xml`, `application/pdf`, the WAP types, `image/*`, `audio/*`,
    ///   `video/*`) is lower than the best overall: `ctype:T` and `media-type:T` for each
    ///   type by descending `q` up to the first wildcard, then `http_role:conneg`;
    ///   otherwise `http_role:browser`, with `ctype:text/html` and `media-type:text/html`
    ///   when `text/html`, `text/*` or `*/*` is listed;
    /// - then `language:TAG` for each `Accept-Language` entry by descending `q`.
    ///
    /// `accept` and `accept_language` are the header lines as received (several lines of
    /// one header are read in turn). With `metadata` (the proxy's `action=metadata`, which
    /// adds `role:metadata`), no `http_role` wish is added.
    ///
    /// ```
    /// use handle_resolver::wire::LocationRequest;
    /// let r = LocationRequest::new().negotiate(
    ///     &["application/x-bibtex;q=0.9, text/html;q=0.5"], Some("curl/8"), &["de"], false);
    /// assert_eq!(r.locatt, ["ctype:application/x-bibtex", "media-type:application/x-bibtex",
    ///     "ctype:text/html", "media-type:text/html", "http_role:conneg", "language:de"]);
    /// let browser = LocationRequest::new().negotiate(&[], Some("Mozilla/5.0"), &[], false);
    /// assert_eq!(browser.locatt, ["http_role:browser", "ctype:text/html", "media-type:text/html"]);
    /// ```
    pub fn negotiate(
        mut self,
        accept: &[&str],
        user_agent: Option<&str>,
        accept_language: &[&str],
        metadata: bool,
    ) -> Self {
        let accepts = entries(accept);
        let role = |r: &mut Self, role: &str| {
            if !metadata {
                r.locatt.push(format!("http_role:{role}"));
            }
        };
        if accepts.iter().all(|e| e.value == "*/*") {
            let browser = user_agent.is_some_and(|ua| {
                let ua = ua.trim().to_lowercase();
                ua.starts_with("mozilla/") || ua.starts_with("opera/")
            });
            if browser {
                role(&mut self, "browser");
                self.locatt.push("ctype:text/html".into());
                self.locatt.push("media-type:text/html".into());
            } else {
                role(&mut self, "no_conneg");
            }
        } else {
            let mut html = 0.0f64;
            let mut best = 0.0f64;
            for e in &accepts {
                if e.quality > best {
                    best = e.quality;
                }
                if e.quality > html && browser_type(&e.value) {
                    html = e.quality;
                }
            }
            if html < best {
                for e in by_quality(accepts) {
                    if e.value.contains('*') {
                        break;
                    }
                    self.locatt.push(format!("ctype:{}", e.value));
                    self.locatt.push(format!("media-type:{}", e.value));
                }
                role(&mut self, "conneg");
            } else {
                role(&mut self, "browser");
                if accepts
                    .iter()
                    .any(|e| matches!(e.value.as_str(), "text/html" | "text/*" | "*/*"))
                {
                    self.locatt.push("ctype:text/html".into());
                    self.locatt.push("media-type:text/html".into());
                }
            }
        }
        for e in by_quality(entries(accept_language)) {
            self.locatt.push(format!("language:{}", e.value));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wishes(accept: &[&str], ua: Option<&str>, lang: &[&str]) -> Vec<String> {
        LocationRequest::new()
            .negotiate(accept, ua, lang, false)
            .locatt
    }

    #[test]
    fn star_star_and_user_agents() {
        assert_eq!(wishes(&[], None, &[]), ["http_role:no_conneg"]);
        assert_eq!(
            wishes(&["*/*"], Some("curl/8.5.0"), &[]),
            ["http_role:no_conneg"]
        );
        assert_eq!(
            wishes(&["*/*"], Some(" Opera/9.80"), &[]),
            [
                "http_role:browser",
                "ctype:text/html",
                "media-type:text/html"
            ]
        );
    }

    #[test]
    fn conneg_by_quality_until_a_wildcard() {
        assert_eq!(
            wishes(&["application/json;q=0.9, */*;q=0.1"], None, &[]),
            [
                "ctype:application/json",
                "media-type:application/json",
                "http_role:conneg"
            ]
        );
        assert_eq!(
            wishes(&["*/*;q=0.1, application/json"], None, &[]),
            [
                "ctype:application/json",
                "media-type:application/json",
                "http_role:conneg"
            ]
        );
        // Two lines, read in turn; an unreadable q counts as 1; upper case is lowered.
        assert_eq!(
            wishes(&["text/html;q=0.2", "APPLICATION/JSON"], None, &[]),
            [
                "ctype:application/json",
                "media-type:application/json",
                "ctype:text/html",
                "media-type:text/html",
                "http_role:conneg"
            ]
        );
        assert_eq!(
            wishes(&["application/json;q=abc, text/html;q=0.5"], None, &[])[4],
            "http_role:conneg"
        );
    }

    #[test]
    fn browsers_and_languages() {
        assert_eq!(
            wishes(&["application/json, text/html"], None, &[]),
            [
                "http_role:browser",
                "ctype:text/html",
                "media-type:text/html"
            ]
        );
        assert_eq!(wishes(&["image/png"], None, &[]), ["http_role:browser"]);
        assert_eq!(
            wishes(&[], None, &["xx;q=0.1, de;q=0.8, fr;q=0.9"]),
            [
                "http_role:no_conneg",
                "language:fr",
                "language:de",
                "language:xx"
            ]
        );
        let metadata = LocationRequest::new().negotiate(&["application/json"], None, &[], true);
        assert_eq!(
            metadata.locatt,
            ["ctype:application/json", "media-type:application/json"]
        );
    }
}
