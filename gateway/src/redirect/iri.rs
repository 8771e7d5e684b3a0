//! A `Location` as the reference writes it (`HDLServletRequest.encodeIRIToURI`): the host of
//! an `http:`, `https:` or `ftp:` URL with non-ASCII characters in IDNA form (each label
//! lower-cased and Punycode-encoded, `xn--`), then the characters no URI holds
//! percent-encoded (UTF-8), `%` and the reserved characters kept.

use handle_resolver::wire::encode_url_text;

/// A host name in IDNA form: each label with a non-ASCII character lower-cased and
/// Punycode-encoded.
fn idna_host(host: &str) -> Option<String> {
    let labels: Option<Vec<String>> = host
        .split('.')
        .map(|label| {
            if label.is_ascii() {
                Some(label.to_owned())
            } else {
                idna::punycode::encode_str(&label.to_lowercase()).map(|p| format!("xn--{p}"))
            }
        })
        .collect();
    labels.map(|l| l.join("."))
}

/// `location` as the proxy sends it in `Location`.
///
/// ```
/// use handle_gateway::redirect::encode_iri;
/// assert_eq!(
///     encode_iri("http://bücher.example.org/ö/path with space/é"),
///     "http://xn--bcher-kva.example.org/%C3%B6/path%20with%20space/%C3%A9"
/// );
/// assert_eq!(encode_iri("mailto:a@example.org?subject=hi there"), "mailto:a@example.org?subject=hi%20there");
/// ```
pub fn encode_iri(location: &str) -> String {
    // The scheme compared in place: no lower-cased copy of every redirect's URL.
    let web = ["http://", "https://", "ftp://"].iter().any(|scheme| {
        location
            .get(..scheme.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(scheme))
    });
    if web {
        let scheme_end = location.find(':').unwrap_or(0) + 3;
        let mut start = scheme_end;
        let mut end = location.len();
        let mut colon = None;
        let (mut idn, mut seen_at) = (false, false);
        for (i, ch) in location.char_indices().filter(|(i, _)| *i >= scheme_end) {
            if !ch.is_ascii() && colon.is_none() {
                idn = true;
            } else if !seen_at && ch == '@' {
                seen_at = true;
                colon = None;
                start = i + 1;
                idn = false;
            } else if matches!(ch, '/' | '?' | '#') {
                end = i;
                break;
            } else if colon.is_none() && ch == ':' {
                colon = Some(i);
                if seen_at {
                    break;
                }
            }
        }
        if let Some(c) = colon {
            end = c;
        }
        if idn && start <= end {
            if let Some(host) = idna_host(&location[start..end]) {
                let rebuilt = format!("{}{}{}", &location[..start], host, &location[end..]);
                return encode_url_text(&rebuilt);
            }
        }
    }
    encode_url_text(location)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_in_idna_form() {
        assert_eq!(
            idna_host("münchen.日本").as_deref(),
            Some("xn--mnchen-3ya.xn--wgv71a")
        );
        assert_eq!(
            idna_host("BÜCHER.Example").as_deref(),
            Some("xn--bcher-kva.Example")
        );
    }

    #[test]
    fn only_web_hosts_are_idna_encoded() {
        assert_eq!(
            encode_iri("https://user@bücher.example:8080/x"),
            "https://user@xn--bcher-kva.example:8080/x"
        );
        assert_eq!(encode_iri("urn:x:ü"), "urn:x:%C3%BC");
        assert_eq!(
            encode_iri("https://tpl.example.org/p/20.500.1/a;b%2Fc?d#e"),
            "https://tpl.example.org/p/20.500.1/a;b%2Fc?d#e"
        );
    }
}
