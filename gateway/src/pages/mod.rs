//! The proxy's pages other than a redirect, as the reference writes them (Handle.Net 9.2.0,
//! `HDLProxy.returnResponsePage`, `returnValuesNotFoundPage`, `returnErrorPage`,
//! `returnQueryPage` with the page templates of `servlet_proxy/resources/WEB-INF/html/`):
//! the values page, "No Values Found", the error pages and the query form, with the
//! `showurls` list of locations in [`showurls`].
//!
//! The `.html` files beside this one are the recorded answers of the reference's proxy
//! (`fixtures/gateway/requests.jsonl`: `handle/url-only/noredirect`,
//! `query/type-missing-noredirect`, `path/trailing-slash`, `path/empty-path`), with the
//! parts that vary replaced by `{{name}}` marks that `fill` fills in; `robots.txt` is the
//! recorded `/robots.txt`.

pub mod showurls;
pub mod text;

use handle_resolver::wire::{encode_url_path, HandleValue};

use crate::redirect::{Answer, HTML};
use text::{cgi_escape, html_whitespace, looks_like_uri, query_component, url_for_attribute};

/// The contact the reference's error pages name (its default; the embedded server never
/// reads a prefix's own).
pub const DEFAULT_CONTACT: &str = "hdladmin@cnri.reston.va.us";

const VALUES: &str = include_str!("values.html");
const NO_VALUES: &str = include_str!("novalues.html");
const ERROR: &str = include_str!("error.html");
const QUERY: &str = include_str!("query.html");
/// The image every page shows at the top (`/static/images/res_tool.gif` in the reference's
/// pages): the gateway's own, an SVG (a browser goes by the content type, not the name).
pub const LOGO_SVG: &str = include_str!("logo.svg");
/// The path the pages name the logo by.
pub const LOGO_PATH: &str = "/static/images/res_tool.gif";
/// `/robots.txt`, as the reference serves it.
pub const ROBOTS_TXT: &str = include_str!("robots.txt");

/// `template` with each `{{name}}` replaced by its value, in one pass (a value is never read
/// for marks); an unknown mark is left as it is.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}").and_then(|end| {
            let name = &after[..end];
            values
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (end, *v))
        }) {
            Some((end, value)) => {
                out.push_str(value);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn html(status: u16, text: String) -> Answer {
    let mut a = Answer::new(status).header("Content-Type", HTML);
    a.body = text.into_bytes();
    a
}

/// The proxy's URL of `handle` (`base` is `http://` and the host): the handle
/// path-encoded (the reference's `getURLForHandle`).
pub fn handle_url(base: &str, handle: &str) -> String {
    format!("{base}/{}", encode_url_path(handle))
}

/// A value's time as the values page shows it: `2026-01-01 00:00:00Z` (the reference's
/// `getNicerTimestampAsString`, UTC).
fn timestamp(seconds: u32) -> String {
    const FORMAT: &[time::format_description::FormatItem<'static>] =
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]Z");
    time::OffsetDateTime::from_unix_timestamp(i64::from(seconds))
        .ok()
        .and_then(|t| t.format(FORMAT).ok())
        .unwrap_or_else(|| "NA".to_owned())
}

/// The type cell: a link to the type's own record where the reference gives one (a URI
/// itself; a handle, any type with a `/`; `0.TYPE/<type>` for `HS_*`, `URL`, `DESC` and
/// `EMAIL`).
fn type_cell(base: &str, type_name: &str) -> String {
    let shown = html_whitespace(type_name, true);
    let upper = type_name.to_ascii_uppercase();
    let target = if looks_like_uri(type_name) {
        Some(type_name.to_owned())
    } else if type_name.contains('/') {
        Some(handle_url(base, type_name))
    } else if upper.starts_with("HS_") || ["URL", "DESC", "EMAIL"].contains(&upper.as_str()) {
        Some(handle_url(base, &format!("0.TYPE/{type_name}")))
    } else {
        None
    };
    match target {
        Some(t) => format!("<a href=\"{}\">{shown}</a>", url_for_attribute(&t)),
        None => shown,
    }
}

/// The data cell: the data as the reference shows it (hex when binary), a link when it
/// looks like a URI.
fn data_cell(value: &HandleValue) -> String {
    let data = value.data_as_string();
    if looks_like_uri(&data) {
        format!(
            "<a href=\"{}\">{}</a>",
            url_for_attribute(&data),
            html_whitespace(&data, false)
        )
    } else {
        html_whitespace(&data, false)
    }
}

/// The values page of `handle`: one row per value, in the server's order; "No Values
/// Found" (also 200) when there is none. `base` is the proxy's own URL (`http://host`).
pub fn values_page(base: &str, handle: &str, values: &[HandleValue]) -> Answer {
    if values.is_empty() {
        let url = handle_url(base, handle);
        return html(
            200,
            fill(
                NO_VALUES,
                &[("handle", &cgi_escape(handle)), ("handle_url", &url)],
            ),
        );
    }
    let mut rows = String::from(
        "<tr><td align=\"left\" valign=\"top\">Index</td><td align=\"left\" valign=\"top\">Type</td>\
         <td align=\"left\" valign=\"top\">Timestamp</td><td align=\"left\" valign=\"top\">Data</td></tr>\n",
    );
    for (i, v) in values.iter().enumerate() {
        rows.push_str(&format!(
            "<tr bgcolor=\"#{}\"><td align=\"left\" valign=\"top\"><b>{}</b></td>\
             <td align=\"left\" valign=\"top\"><b>{}</b></td><td valign=\"top\">\
             <span style='white-space:nowrap'>{}</span></td>\n<td>{}</td></tr>\n",
            if i % 2 == 0 { "dddddd" } else { "ffffff" },
            v.index as i32,
            type_cell(base, &v.type_str()),
            html_whitespace(&timestamp(v.timestamp), true),
            data_cell(v),
        ));
    }
    html(
        200,
        fill(
            VALUES,
            &[("handle", &cgi_escape(handle)), ("values", &rows)],
        ),
    )
}

/// What an error page says besides its message.
#[derive(Debug, Clone, Copy)]
pub struct ErrorContext<'a> {
    /// The proxy's own URL (`http://host`).
    pub base: &'a str,
    /// The handle the page names.
    pub handle: &'a str,
    /// The request's `Referer`, or empty.
    pub referer: &'a str,
}

/// The error page of `status` saying `message` about `context.handle` (the reference's
/// `error.html`: "Not Found", "Alias chain too long", "Resolution Error", a location list
/// that cannot be read), with the reference's note when the handle ends in `/`.
pub fn error_page(status: u16, message: &str, context: ErrorContext<'_>) -> Answer {
    let handle = context.handle;
    let trailing = match handle.strip_suffix('/') {
        Some(without) => format!(
            "<p>The handle you requested included a trailing slash character (/) which may be \
             incorrect.  <a href=\"{}\">Click here</a> to attempt to resolve the handle without \
             the slash.  Please note that a handle with and without a trailing slash are \
             different identifers and will likely return different results.</p>",
            handle_url(context.base, without)
        ),
        None => String::new(),
    };
    html(
        status,
        fill(
            ERROR,
            &[
                ("error", &cgi_escape(message)),
                ("handle", &cgi_escape(handle)),
                ("handle_component", &query_component(handle)),
                ("referer", &cgi_escape(context.referer)),
                ("referer_component", &query_component(context.referer)),
                ("trailing_slash", &trailing),
            ],
        ),
    )
}

/// 404 "Not Found".
pub fn not_found(context: ErrorContext<'_>) -> Answer {
    error_page(404, "Not Found", context)
}

/// 404 for an alias chain longer than 20 hops (or a loop).
pub fn alias_chain_too_long(context: ErrorContext<'_>) -> Answer {
    error_page(404, "Alias chain too long", context)
}

/// 200, the query form (an empty path).
pub fn query_page() -> Answer {
    html(200, QUERY.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_filled_once() {
        assert_eq!(
            fill("a {{x}} b {{y}} {{z}}", &[("x", "{{y}}"), ("y", "2")]),
            "a {{y}} b 2 {{z}}"
        );
    }

    #[test]
    fn timestamps_as_the_page_shows_them() {
        assert_eq!(timestamp(1_767_225_600), "2026-01-01 00:00:00Z");
        assert_eq!(timestamp(0), "1970-01-01 00:00:00Z");
    }
}
