//! The reference's ways of writing text into its pages (`net.cnri.util.StringUtils` and the
//! proxy's `looksLikeURI`), as the recorded pages show them.

use handle_resolver::wire::encode_url_text;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// `&`, `<`, `>`, `"` and `'` as entities (the reference's `cgiEscape`).
pub fn cgi_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// [`cgi_escape`], with line breaks as `<br />`, a tab as four non-breaking spaces and, when
/// `nbsp`, each space as one (the reference's `htmlEscapeWhitespace` and
/// `htmlEscapeWhitespaceNonBreakingSpaces`).
///
/// The reference writes a tab as `&nbsp;&nbsp;&nbsp&nbsp;`, one entity short of its `;`;
/// browsers read that as four spaces all the same, and the gateway writes the four entities
/// whole (a deliberate difference, gateway/README.md).
pub fn html_whitespace(text: &str, nbsp: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push_str("<br />"),
            '\t' => out.push_str("&nbsp;&nbsp;&nbsp;&nbsp;"),
            ' ' if nbsp => out.push_str("&nbsp;"),
            c => out.push_str(&cgi_escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// A URL for an HTML attribute: the characters no URL holds percent-encoded, then
/// [`cgi_escape`] (the reference's `encodeURLForAttr`).
pub fn url_for_attribute(url: &str) -> String {
    cgi_escape(&encode_url_text(url))
}

/// True for text that starts like a URI: a letter, then letters, digits-free scheme
/// characters (`+`, `-`, `.`) up to a `:`, and no whitespace anywhere (the proxy's
/// `looksLikeURI`).
pub fn looks_like_uri(text: &str) -> bool {
    if text.is_empty() || text.contains([' ', '\r', '\t', '\n']) {
        return false;
    }
    let mut chars = text.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    for c in chars {
        if c.is_ascii_alphabetic() || matches!(c, '+' | '-' | '.') {
            continue;
        }
        return c == ':';
    }
    false
}

/// What Java's `URLEncoder` keeps: letters, digits, `.`, `-`, `*`, `_`.
const JAVA_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'.')
    .remove(b'-')
    .remove(b'*')
    .remove(b'_');

/// `text` as a query component the way the reference's pages write one (Java's
/// `URLEncoder`, with a space as `%20`, not `+`).
pub fn query_component(text: &str) -> String {
    utf8_percent_encode(text, JAVA_COMPONENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_as_the_proxy_sees_them() {
        assert!(looks_like_uri("https://example.org/x"));
        assert!(looks_like_uri("mailto:a@example.org"));
        assert!(looks_like_uri("urn:x"));
        assert!(!looks_like_uri("http://bücher.example.org/path with space"));
        assert!(!looks_like_uri("10320/loc"));
        assert!(!looks_like_uri("a1:b"));
        assert!(!looks_like_uri("DESC"));
    }

    #[test]
    fn escapes_as_the_pages_show_them() {
        assert_eq!(
            html_whitespace("markup <b> & \"q\" 'a'\nline\ttab", false),
            "markup &lt;b&gt; &amp; &quot;q&quot; &#39;a&#39;<br />line&nbsp;&nbsp;&nbsp;&nbsp;tab"
        );
        assert_eq!(
            html_whitespace("2026-01-01 00:00:00Z", true),
            "2026-01-01&nbsp;00:00:00Z"
        );
        assert_eq!(query_component("20.500.1/a b*"), "20.500.1%2Fa%20b*");
    }
}
