//! A `Location` as the reference writes it (`HDLServletRequest.encodeIRIToURI`): the host of
//! an `http:`, `https:` or `ftp:` URL with non-ASCII characters in IDNA form (each label
//! lower-cased and Punycode-encoded, `xn--`), then the characters no URI holds
//! percent-encoded (UTF-8), `%` and the reserved characters kept.

use handle_resolver::wire::encode_url_text;

/// Punycode (RFC 3492) of one label, without the `xn--` prefix; `None` on overflow.
fn punycode(label: &str) -> Option<String> {
    const BASE: u32 = 36;
    const TMIN: u32 = 1;
    const TMAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    let adapt = |mut delta: u32, points: u32, first: bool| {
        delta /= if first { DAMP } else { 2 };
        delta += delta / points;
        let mut k = 0;
        while delta > ((BASE - TMIN) * TMAX) / 2 {
            delta /= BASE - TMIN;
            k += BASE;
        }
        k + (BASE - TMIN + 1) * delta / (delta + SKEW)
    };
    let digit = |d: u32| -> char {
        let d = d as u8;
        if d < 26 {
            (b'a' + d) as char
        } else {
            (b'0' + d - 26) as char
        }
    };
    let chars: Vec<u32> = label.chars().map(u32::from).collect();
    let mut out: String = label.chars().filter(char::is_ascii).collect();
    let basic = out.len() as u32;
    let mut handled = basic;
    if basic > 0 {
        out.push('-');
    }
    let (mut n, mut delta, mut bias) = (128u32, 0u32, 72u32);
    while (handled as usize) < chars.len() {
        let m = chars.iter().copied().filter(|&c| c >= n).min()?;
        delta = delta.checked_add((m - n).checked_mul(handled + 1)?)?;
        n = m;
        for &c in &chars {
            if c < n {
                delta = delta.checked_add(1)?;
            }
            if c == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        TMIN
                    } else if k >= bias + TMAX {
                        TMAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    out.push(digit(t + (q - t) % (BASE - t)));
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                out.push(digit(q));
                bias = adapt(delta, handled + 1, handled == basic);
                delta = 0;
                handled += 1;
            }
        }
        delta += 1;
        n += 1;
    }
    Some(out)
}

/// A host name in IDNA form: each label with a non-ASCII character lower-cased and
/// Punycode-encoded.
fn idna_host(host: &str) -> Option<String> {
    let labels: Option<Vec<String>> = host
        .split('.')
        .map(|label| {
            if label.is_ascii() {
                Some(label.to_owned())
            } else {
                punycode(&label.to_lowercase()).map(|p| format!("xn--{p}"))
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
    let lower = location.to_lowercase();
    if ["http://", "https://", "ftp://"]
        .iter()
        .any(|s| lower.starts_with(s))
    {
        let chars: Vec<(usize, char)> = location.char_indices().collect();
        let scheme_end = location.find(':').unwrap_or(0) + 3;
        let mut start = scheme_end;
        let mut end = location.len();
        let mut colon = None;
        let (mut idn, mut seen_at) = (false, false);
        for &(i, ch) in chars.iter().filter(|(i, _)| *i >= scheme_end) {
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
    fn punycode_of_rfc_3492_samples() {
        assert_eq!(punycode("bücher").as_deref(), Some("bcher-kva"));
        assert_eq!(punycode("münchen").as_deref(), Some("mnchen-3ya"));
        assert_eq!(punycode("日本").as_deref(), Some("wgv71a"));
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
