//! The proxy's pages other than a redirect, in a first, plain form: the values page, the
//! error pages ("Not Found", "Resolution Error", the 500 of an unreadable `10320/loc`) and
//! the query page, with the statuses and content type of the reference's. Their markup is
//! the reference's in outline only (issue 38's part 2 matches it).

use handle_resolver::wire::HandleValue;

use crate::redirect::{html_escape, Answer, HTML};

/// The contact the reference's error pages name (its default; the embedded server never
/// reads a prefix's own).
pub const DEFAULT_CONTACT: &str = "hdladmin@cnri.reston.va.us";

fn page(status: u16, title: &str, body: &str) -> Answer {
    let text = format!(
        "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">\n\n<html><head><title>{}</title></head>\n\n<body bgcolor=\"#ffffff\">\n{}\n</body></html>\n",
        html_escape(title),
        body
    );
    let mut a = Answer::new(status).header("Content-Type", HTML);
    a.body = text.into_bytes();
    a
}

/// The values page of `handle`: one row per value, in the server's order.
pub fn values_page(handle: &str, values: &[HandleValue]) -> Answer {
    if values.is_empty() {
        return page(
            200,
            "No Values Found",
            &format!("<p>No values found for {}</p>", html_escape(handle)),
        );
    }
    let mut rows = String::new();
    for v in values {
        let data = match std::str::from_utf8(&v.data) {
            Ok(t) => html_escape(t),
            Err(_) => v.data.iter().map(|b| format!("{b:02X}")).collect(),
        };
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            v.index,
            html_escape(&String::from_utf8_lossy(&v.type_name)),
            data
        ));
    }
    page(
        200,
        "Handle Proxy",
        &format!(
            "<table>\n<tr><th colspan=\"3\">Handle Values for: {}</th></tr>\n{rows}</table>",
            html_escape(handle)
        ),
    )
}

/// 404 "Not Found".
pub fn not_found(handle: &str) -> Answer {
    page(
        404,
        "Not Found",
        &format!(
            "<p>Handle {} not found. Contact {DEFAULT_CONTACT}.</p>",
            html_escape(handle)
        ),
    )
}

/// 404 for an alias chain longer than 20 hops (or a loop).
pub fn alias_chain_too_long(handle: &str) -> Answer {
    page(
        404,
        "Alias chain too long",
        &format!("<p>Alias chain too long: {}</p>", html_escape(handle)),
    )
}

/// "Resolution Error" of `status` (400 for a prefix not served there, 500 for a failure).
pub fn resolution_error(status: u16, handle: &str, reason: &str) -> Answer {
    page(
        status,
        "Resolution Error",
        &format!(
            "<p>Error resolving {}: {}</p>",
            html_escape(handle),
            html_escape(reason)
        ),
    )
}

/// 500 for a handle whose location values cannot be read.
pub fn redirect_error(handle: &str, reason: &str) -> Answer {
    page(
        500,
        &format!("Error showing redirect for '{handle}': {reason}"),
        "",
    )
}

/// 200, the query form (an empty path).
pub fn query_page() -> Answer {
    page(
        200,
        "Handle Proxy",
        "<form method=\"get\" action=\"/\"><input name=\"hdl\"><input type=\"submit\"></form>",
    )
}
