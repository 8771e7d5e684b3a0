//! `action=showurls`: the handle's candidate locations as XML, `text/xml`, as the
//! reference's `Location.doShowLocations` writes them: a `<locations>` element, one child
//! per candidate (the handle's own, the included ones, its `URL` values as
//! `mode="legacy"` locations, the namespace ones), each with its `href` (made from its
//! `href_template` when it has none).
//!
//! The reference keeps an element's attributes in a Java `HashMap`, so it writes them in
//! that map's order, not the document's; `java_map_order` reproduces it, as the recorded
//! answers show it (`fixtures/gateway/`, `handle/*/showurls`).

use handle_resolver::wire::{HandleValue, Location, LocationSet};

use crate::redirect::Answer;

/// The content type of the list.
pub const XML: &str = "text/xml;charset=utf-8";

/// Java's `String.hashCode` of `s` (UTF-16 code units).
fn java_hash(s: &str) -> u32 {
    s.encode_utf16()
        .fold(0u32, |h, c| h.wrapping_mul(31).wrapping_add(u32::from(c)))
}

/// The order in which a Java `HashMap` created with `capacity` (a power of two) and filled
/// with `names` in order iterates them: by bucket (the hash, spread as the map spreads it,
/// modulo the table size the map has grown to), then in insertion order within a bucket
/// (a resize keeps that order).
fn java_map_order(names: &[&str], capacity: usize) -> Vec<usize> {
    let mut table = capacity.max(1);
    // The map doubles when it holds more than three quarters of its table.
    while names.len() * 4 > table * 3 {
        table *= 2;
    }
    let bucket = |name: &str| {
        let h = java_hash(name);
        ((h ^ (h >> 16)) as usize) & (table - 1)
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| bucket(names[i]));
    order
}

/// The table a `HashMap` copied from a map of `size` entries starts with (Java's
/// `putMapEntries`: `tableSizeFor(size / 0.75 + 1)`).
fn copied_map_capacity(size: usize) -> usize {
    ((size as f64 / 0.75 + 1.0) as usize).next_power_of_two()
}

/// `text` for a double-quoted XML attribute.
fn xml_attribute(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// One candidate as the reference writes it. Its attributes were read into a map of
/// Java's default table (16); a location with an `href` of its own is written from a copy
/// of that map (filled in the first map's order, into the table a copy gets), one whose
/// `href` is made from its template gets it added to the first map, after the others.
fn write_location(out: &mut String, location: &Location, handle: &str) {
    let mut attributes: Vec<(&str, String)> = location
        .attributes
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let own_href = location.href().is_some();
    if !own_href {
        if let Some(href) = location.href_for(handle) {
            attributes.push(("href", href));
        }
    }
    let names: Vec<&str> = attributes.iter().map(|(k, _)| *k).collect();
    let mut order = java_map_order(&names, 16);
    if own_href {
        let copied: Vec<&str> = order.iter().map(|&i| names[i]).collect();
        order = java_map_order(&copied, copied_map_capacity(copied.len()))
            .into_iter()
            .map(|j| order[j])
            .collect();
    }
    out.push('<');
    out.push_str(&location.element);
    for i in order {
        let (name, value) = &attributes[i];
        out.push_str(&format!(" {name}=\"{}\"", xml_attribute(value)));
    }
    out.push_str("/>\n");
}

/// The handle's plain-URL candidates when it has no location values: every `URL` value
/// (else every `URL.*` one) in the server's order, the first of weight 1, the others 0.
fn legacy_candidates(values: &[HandleValue]) -> Vec<Location> {
    let plain: Vec<&HandleValue> = values.iter().filter(|v| v.is_type("URL")).collect();
    let chosen = if plain.is_empty() {
        values
            .iter()
            .filter(|v| v.type_name.len() > 4 && v.type_name[..4].eq_ignore_ascii_case(b"URL."))
            .collect()
    } else {
        plain
    };
    chosen
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Location::new([
                ("href", String::from_utf8_lossy(&v.data).into_owned()),
                ("weight", if i == 0 { "1.0" } else { "0.0" }.to_owned()),
                ("mode", "legacy".to_owned()),
            ])
        })
        .collect()
}

/// The list of `set`'s candidates for `handle` (whose values are `values`), or `None` when
/// there is none (the proxy shows the values page then).
pub fn showurls(handle: &str, values: &[HandleValue], set: &LocationSet) -> Option<Answer> {
    let legacy;
    let locations: &[Location] = if set.legacy_only {
        legacy = legacy_candidates(values);
        &legacy
    } else {
        &set.locations
    };
    if locations.is_empty() {
        return None;
    }
    let mut xml = String::from("<locations>\n");
    for l in locations {
        write_location(&mut xml, l, handle);
    }
    xml.push_str("</locations>\n");
    let mut a = Answer::new(200).header("Content-Type", XML);
    a.body = xml.into_bytes();
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hashes() {
        assert_eq!(java_hash("href"), 3_211_051);
        assert_eq!(java_hash(""), 0);
    }

    #[test]
    fn attributes_in_the_order_the_reference_writes_them() {
        // handle/loc-locatt/showurls: href, role, weight read; weight, role, href written
        // (the copy of the first map: role, weight, href into a table of 8).
        let mut out = String::new();
        let l = Location::new([("href", "h"), ("role", "metadata"), ("weight", "1")]);
        write_location(&mut out, &l, "20.500.1/x");
        assert_eq!(
            out,
            "<location weight=\"1\" role=\"metadata\" href=\"h\"/>\n"
        );
        // handle/loc-template/showurls: href_template, view, weight read, href added.
        let names = ["href_template", "view", "weight", "href"];
        let order: Vec<&str> = java_map_order(&names, 16)
            .into_iter()
            .map(|i| names[i])
            .collect();
        assert_eq!(order, ["view", "weight", "href", "href_template"]);
    }
}
