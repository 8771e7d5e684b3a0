//! `10320/loc` location lists (PROTOCOL.md §7.8), and the choice of one of them
//! (`select.rs`): UTF-8 XML
//! `<locations chooseby="..."><location href="..." weight="..." .../></locations>`, used by
//! the handle.net HTTP proxy to pick one of several URLs.
//!
//! The text is parsed with `quick-xml` and kept as received, so it encodes back to the same
//! bytes.

mod select;

use quick_xml::events::{BytesStart, Event};
use serde_json::{json, Value as Json};
use thiserror::Error;

/// One `<location>` element.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    /// The `href` attribute.
    pub href: String,
    /// The `weight` attribute, when present: a finite number, 0 or more.
    pub weight: Option<f64>,
    /// Every other attribute (`id`, `view`, `country`, ...), in document order, unescaped.
    pub attributes: Vec<(String, String)>,
}

/// A parsed `10320/loc` value.
#[derive(Debug, Clone, PartialEq)]
pub struct Locations {
    /// The `chooseby` (or `choose_by`) methods, in order (`locatt`, `country`, `weighted`...).
    pub choose_by: Vec<String>,
    /// The locations, in document order.
    pub locations: Vec<Location>,
    /// The XML text exactly as received.
    pub raw: String,
}

/// Why a `10320/loc` text is not a location list.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LocError {
    /// The XML is not well-formed.
    #[error("invalid XML: {0}")]
    Xml(String),
    /// The root element is not `<locations>`.
    #[error("the root element is not <locations>")]
    NotLocations,
    /// A `<location>` has no `href`.
    #[error("a <location> has no href")]
    MissingHref,
    /// A `weight` is not a finite number ≥ 0.
    #[error("weight {0:?} is not a number of 0 or more")]
    BadWeight(String),
}

fn xml_err(e: impl std::fmt::Display) -> LocError {
    LocError::Xml(e.to_string())
}

fn attributes(e: &BytesStart<'_>) -> Result<Vec<(String, String)>, LocError> {
    e.attributes()
        .map(|a| {
            let a = a.map_err(xml_err)?;
            let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
            let value = a.unescape_value().map_err(xml_err)?.into_owned();
            Ok((key, value))
        })
        .collect()
}

fn location(e: &BytesStart<'_>) -> Result<Location, LocError> {
    let mut href = None;
    let mut weight = None;
    let mut rest = Vec::new();
    for (k, v) in attributes(e)? {
        match k.as_str() {
            "href" => href = Some(v),
            "weight" => {
                // Rust also reads `NaN` and `inf`; a weight is a finite number ≥ 0.
                match v.trim().parse::<f64>() {
                    Ok(w) if w.is_finite() && w >= 0.0 => weight = Some(w),
                    _ => return Err(LocError::BadWeight(v)),
                }
            }
            _ => rest.push((k, v)),
        }
    }
    Ok(Location {
        href: href.ok_or(LocError::MissingHref)?,
        weight,
        attributes: rest,
    })
}

impl Locations {
    /// Parses a location list.
    ///
    /// ```
    /// use handle_resolver::wire::Locations;
    /// let l = Locations::parse(r#"<locations chooseby="weighted">
    ///   <location href="http://a.example/" weight="0.5" view="html"/>
    /// </locations>"#).unwrap();
    /// assert_eq!(l.choose_by, ["weighted"]);
    /// assert_eq!(l.locations[0].href, "http://a.example/");
    /// assert_eq!(l.locations[0].weight, Some(0.5));
    /// assert_eq!(l.locations[0].attributes, [("view".to_string(), "html".to_string())]);
    /// ```
    pub fn parse(text: &str) -> Result<Locations, LocError> {
        let mut reader = quick_xml::Reader::from_str(text);
        let mut depth = 0usize;
        let mut seen_root = false;
        let mut choose_by = Vec::new();
        let mut locations = Vec::new();
        loop {
            let (e, empty) = match reader.read_event().map_err(xml_err)? {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    depth = depth.checked_sub(1).ok_or(LocError::NotLocations)?;
                    continue;
                }
                Event::Text(t) if depth == 0 && !t.iter().all(u8::is_ascii_whitespace) => {
                    return Err(LocError::NotLocations)
                }
                Event::Eof => break,
                _ => continue,
            };
            if depth == 0 {
                if seen_root || e.name().as_ref() != b"locations" {
                    return Err(LocError::NotLocations);
                }
                seen_root = true;
                for (k, v) in attributes(&e)? {
                    if k == "chooseby" || k == "choose_by" {
                        choose_by = v
                            .split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(String::from)
                            .collect();
                    }
                }
            } else if depth == 1 && e.name().as_ref() == b"location" {
                locations.push(location(&e)?);
            }
            if !empty {
                depth += 1;
            }
        }
        if !seen_root || depth != 0 {
            return Err(LocError::NotLocations);
        }
        Ok(Locations {
            choose_by,
            locations,
            raw: text.to_owned(),
        })
    }

    /// The value of a `locations` JSON view: `{"chooseBy": [...], "locations": [{"href": ...,
    /// "weight": ..., other attributes...}], "xml": raw text}`.
    pub fn to_json(&self) -> Json {
        let locations: Vec<Json> = self
            .locations
            .iter()
            .map(|l| {
                let mut o = serde_json::Map::new();
                o.insert("href".into(), json!(l.href));
                if let Some(w) = l.weight {
                    o.insert("weight".into(), json!(w));
                }
                for (k, v) in &l.attributes {
                    o.insert(k.clone(), json!(v));
                }
                Json::Object(o)
            })
            .collect();
        json!({"chooseBy": self.choose_by, "locations": locations, "xml": self.raw})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 10320/loc value of `20.500.12345/ALLTYPES` in the captures.
    const CAPTURED: &str = "<locations>\n<location id=\"0\" href=\"http://example.org/hslab/loc0\" weight=\"1\" view=\"html\" />\n<location id=\"1\" href=\"http://example.org/hslab/loc1.json\" weight=\"0\" view=\"json\" />\n</locations>";

    #[test]
    fn parses_the_captured_list() {
        let l = Locations::parse(CAPTURED).unwrap();
        assert!(l.choose_by.is_empty());
        assert_eq!(l.locations.len(), 2);
        assert_eq!(l.locations[1].href, "http://example.org/hslab/loc1.json");
        assert_eq!(l.locations[1].weight, Some(0.0));
        assert_eq!(
            l.locations[0].attributes,
            [("id".into(), "0".into()), ("view".into(), "html".into())]
        );
        assert_eq!(l.raw, CAPTURED);
    }

    #[test]
    fn accepts_both_choose_by_spellings_and_unescapes() {
        for attr in ["chooseby", "choose_by"] {
            let text = format!(
                "<locations {attr}=\"locatt, country,weighted\"><location href=\"a?b=1&amp;c=2\"/></locations>"
            );
            let l = Locations::parse(&text).unwrap();
            assert_eq!(l.choose_by, ["locatt", "country", "weighted"]);
            assert_eq!(l.locations[0].href, "a?b=1&c=2");
            assert_eq!(l.locations[0].weight, None);
        }
    }

    #[test]
    fn rejects_what_is_not_a_location_list() {
        assert_eq!(Locations::parse("hello"), Err(LocError::NotLocations));
        assert_eq!(Locations::parse(""), Err(LocError::NotLocations));
        assert_eq!(Locations::parse("<other/>"), Err(LocError::NotLocations));
        assert_eq!(
            Locations::parse("<locations><location/></locations>"),
            Err(LocError::MissingHref)
        );
        assert!(matches!(
            Locations::parse("<locations><location href='x' weight='heavy'/></locations>"),
            Err(LocError::BadWeight(_))
        ));
        for w in ["NaN", "inf", "-1", "-0.5"] {
            let text = format!("<locations><location href='x' weight='{w}'/></locations>");
            assert_eq!(
                Locations::parse(&text),
                Err(LocError::BadWeight(w.into())),
                "{w}"
            );
        }
        assert!(Locations::parse("<locations><location href='x'>").is_err());
        assert!(Locations::parse("<locations></other>").is_err());
        assert!(Locations::parse("<locations/><locations/>").is_err());
    }
}
