//! How the reference proxy reads the text of `10320/loc` attributes: numbers (a Java
//! `double`), switches (`yes`/`true`/`1`), address ranges (`addresses`, CIDR) and the
//! `href_template` of a location.

use std::net::IpAddr;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// The characters a URL component keeps as they are: letters, digits and `-_.!~*'()`
/// (as JavaScript's `encodeURIComponent`); everything else, UTF-8 first, is `%XX`.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// A URL path keeps `/` and `;` as well (as the reference's `encodeURLPath`: a `;` in a
/// handle stays, a `+` does not).
const PATH: &AsciiSet = &COMPONENT.remove(b'/').remove(b';');

/// `text` read as Java's `Double.parseDouble` reads the trimmed attribute: an optional sign,
/// then `NaN`, `Infinity` or a decimal number (`1`, `.5`, `2.`, `1e-3`) with an optional
/// `d`/`f` suffix. `None` for anything else: the reference then takes its default. (Java's
/// hexadecimal floating-point form is not read.)
pub(crate) fn java_double(text: &str) -> Option<f64> {
    // Java's trim: every character up to U+0020 at either end.
    let t = text.trim_matches(|c: char| c <= ' ');
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let magnitude = match body {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        _ => {
            let digits = body.strip_suffix(&['d', 'D', 'f', 'F'][..]).unwrap_or(body);
            // Rust also reads `inf`, `nan` and `infinity` in any case; Java does not.
            if !digits
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
                || !digits
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_digit() || b == b'.')
            {
                return None;
            }
            digits.parse::<f64>().ok()?
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// A switch attribute as the reference reads it: `yes`, `true` or `1` (any case) is on;
/// anything else off.
pub(crate) fn java_switch(text: &str) -> bool {
    let t = text.to_lowercase();
    t == "yes" || t == "true" || t == "1"
}

/// An address as the reference compares it: its bytes as one unsigned number (32 bits for
/// IPv4, 128 for IPv6), an IPv4-mapped IPv6 address read as its IPv4 address.
fn number(addr: IpAddr) -> (u128, u32) {
    match addr {
        IpAddr::V4(a) => (u128::from(u32::from(a)), 32),
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) => (u128::from(u32::from(v4)), 32),
            None => (u128::from(a), 128),
        },
    }
}

/// True when `range` (`ADDRESS` or `ADDRESS/PREFIX`, already trimmed) holds `client`, as
/// the reference compares: both as unsigned numbers, the range from its address with the
/// low bits cleared to the same with them set, so that an IPv4 client falls in an IPv6
/// range whose numbers cover it and the other way round; a prefix at or beyond the
/// address's width is the one address. A range that is no IP address, or whose prefix is
/// not a number of 0 or more, holds nothing (the reference, which also looks host names up,
/// fails the whole request on one).
pub(crate) fn range_holds(range: &str, client: IpAddr) -> bool {
    let (address, prefix) = match range.split_once('/') {
        Some((a, p)) => match p.parse::<u32>() {
            Ok(p) => (a, Some(p)),
            Err(_) => return false,
        },
        None => (range, None),
    };
    let address = address
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(address);
    let Ok(address) = address.parse::<IpAddr>() else {
        return false;
    };
    let (value, width) = number(address);
    let prefix = prefix.unwrap_or(width);
    let host_bits = width.saturating_sub(prefix);
    let low = match host_bits {
        0 => 0,
        128 => u128::MAX,
        n => (1u128 << n) - 1,
    };
    let start = value & !low;
    let end = start | low;
    let (target, _) = number(client);
    (start..=end).contains(&target)
}

/// `text` URL-component-encoded (as JavaScript's `encodeURIComponent`).
pub(crate) fn encode_component(text: &str) -> String {
    utf8_percent_encode(text, COMPONENT).to_string()
}

/// `text` path-encoded as the handle proxy encodes a handle in a URL path (the reference's
/// `encodeURLPath`): letters, digits, `-_.!~*'()`, `/` and `;` kept, everything else, UTF-8
/// first, `%XX`.
///
/// ```
/// use handle_resolver::wire::encode_url_path;
/// assert_eq!(encode_url_path("20.500.1/a b;c?d"), "20.500.1/a%20b;c%3Fd");
/// assert_eq!(encode_url_path("20.500.1/ö"), "20.500.1/%C3%B6");
/// ```
pub fn encode_url_path(text: &str) -> String {
    utf8_percent_encode(text, PATH).to_string()
}

/// `template` with `{hdl}` replaced by `handle` URL-component-encoded, then `{hdl:path}` by
/// `handle` path-encoded.
pub(crate) fn fill_template(template: &str, handle: &str) -> String {
    let component = utf8_percent_encode(handle, COMPONENT).to_string();
    let path = encode_url_path(handle);
    template
        .replace("{hdl}", &component)
        .replace("{hdl:path}", &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_java_reads_them() {
        let cases: [(&str, Option<f64>); 14] = [
            ("1", Some(1.0)),
            (" -2.5 ", Some(-2.5)),
            ("+.5", Some(0.5)),
            ("2.", Some(2.0)),
            ("1e3", Some(1000.0)),
            ("3d", Some(3.0)),
            ("0.25F", Some(0.25)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("inf", None),
            ("infinity", None),
            ("nan", None),
            ("heavy", None),
            ("", None),
            ("0x10p0", None),
        ];
        for (text, want) in cases {
            assert_eq!(java_double(text), want, "{text:?}");
        }
        assert!(java_double("NaN").is_some_and(f64::is_nan));
        assert!(java_double("-NaN").is_some_and(f64::is_nan));
    }

    #[test]
    fn switches() {
        for on in ["yes", "TRUE", "1"] {
            assert!(java_switch(on), "{on}");
        }
        for off in ["no", "0", "y", ""] {
            assert!(!java_switch(off), "{off}");
        }
    }

    #[test]
    fn address_ranges_compare_as_the_reference_compares() {
        let v4 = |s: &str| s.parse::<IpAddr>().unwrap();
        let client = v4("192.0.2.77");
        assert!(range_holds("192.0.2.0/24", client));
        assert!(range_holds("192.0.2.77", client));
        assert!(
            range_holds("192.0.2.77/40", client),
            "beyond the width: one address"
        );
        assert!(range_holds("0.0.0.0/0", client));
        assert!(!range_holds("192.0.3.0/24", client));
        assert!(!range_holds("192.0.2.78", client));
        // An IPv4-mapped client is its IPv4 address.
        assert!(range_holds("192.0.2.0/24", v4("::ffff:192.0.2.77")));
        // Both as numbers: an IPv4 client is in ::/96, an IPv6 one in 2001:db8::/32 only.
        assert!(range_holds("::/96", client));
        assert!(range_holds("[2001:db8::]/32", v4("2001:db8::1")));
        assert!(!range_holds("2001:db8::/32", client));
        assert!(range_holds("::/0", v4("2001:db8::1")));
        // Not a range: holds nothing.
        for bad in [
            "example.org",
            "192.0.2.0/x",
            "192.0.2.0/-1",
            "192.0.2.0/ 24",
            "",
        ] {
            assert!(!range_holds(bad, client), "{bad}");
        }
    }

    #[test]
    fn templates() {
        assert_eq!(
            fill_template("https://x/{hdl}/{hdl:path}/{hdl}", "10.1/a b~é?"),
            "https://x/10.1%2Fa%20b~%C3%A9%3F/10.1/a%20b~%C3%A9%3F/10.1%2Fa%20b~%C3%A9%3F"
        );
        assert_eq!(fill_template("no placeholder", "h/1"), "no placeholder");
    }
}
