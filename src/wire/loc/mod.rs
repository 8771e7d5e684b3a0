//! `10320/loc` location lists (PROTOCOL.md §7.8): UTF-8 XML
//! `<locations choose_by="..."><location href="..." weight="..." .../></locations>`, which
//! the handle.net HTTP proxy reads to pick one of several URLs, and the choice itself as the
//! proxy makes it (`select.rs`: [`LocationSet`], [`LocationRequest`]; the way the reference
//! reads numbers, address ranges and templates in `reading.rs`).
//!
//! The text is parsed with `quick-xml` and kept as received, so it encodes back to the same
//! bytes. Every attribute is kept as text, as the reference keeps it: what a number means is
//! decided where it is used ([`Location::weight`], `score`), the way the reference decides
//! (a weight it cannot read counts as 1), so that a list the reference uses is never refused
//! here for one odd attribute.

mod conneg;
mod gather;
mod links;
mod reading;
mod select;
#[cfg(test)]
mod select_tests;

use quick_xml::events::{BytesStart, Event};
use serde_json::{json, Value as Json};
use thiserror::Error;

pub use gather::{ConsultedTtl, LocationGather, LocationNeed};
pub use links::encode_url_text;
pub use reading::encode_url_path;
pub use select::{Chooser, LocationRequest, LocationSet};

/// One `<location>` (or, the older name, `<loc_template>`) element.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Location {
    /// Every attribute (`href`, `weight`, `view`, `country`, ...), in document order,
    /// unescaped.
    pub attributes: Vec<(String, String)>,
    /// The element's name as written (`location`, `loc_template`, in the case used), which
    /// the proxy's list of locations (`action=showurls`) repeats.
    pub element: String,
}

/// A parsed `10320/loc` value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Locations {
    /// The methods of `choose_by` (or, when it has none, the older `chooseby`), in order
    /// (`locatt`, `address`, `country`, `score`, `weighted`); empty when neither is given
    /// or it lists nothing.
    pub choose_by: Vec<String>,
    /// Every attribute of `<locations>` (`choose_by`, `no_legacy`, `urlWeight`, ...), in
    /// document order, unescaped.
    pub attributes: Vec<(String, String)>,
    /// The locations, in document order.
    pub locations: Vec<Location>,
    /// The handles named by the `include` attribute, then by `<include>` elements, whose
    /// locations the proxy adds to these: named here, never resolved (see [`LocationSet`]).
    pub includes: Vec<String>,
    /// The prefix handles (`0.NA/<prefix>`) named by the `includeNamespace` attribute, then
    /// by `<includeNamespace>` elements, whose `HS_NAMESPACE` location handles the proxy
    /// adds: named here, resolved by [`LocationGather`].
    pub include_namespaces: Vec<String>,
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
    /// The text ends inside a tag (`<location href='...'` and no `>`). The message is the
    /// reference proxy's for this case, which its error page shows.
    #[error("Unexpected end of input reading attributes")]
    EndInTag,
    /// The root element is not `<locations>`.
    #[error("the root element is not <locations>")]
    NotLocations,
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

/// The value of attribute `name` (exact name, as the reference's attribute map).
fn attribute<'a>(attributes: &'a [(String, String)], name: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A `choose_by` text as a method list: split at commas, trimmed, blanks left out.
fn methods(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

impl Location {
    /// A `<location>` of these attributes.
    ///
    /// ```
    /// use handle_resolver::wire::Location;
    /// let l = Location::new([("href", "https://a.example/"), ("weight", "0")]);
    /// assert_eq!(l.href(), Some("https://a.example/"));
    /// assert_eq!(l.weight(), 0.0);
    /// ```
    pub fn new<K: Into<String>, V: Into<String>>(
        attributes: impl IntoIterator<Item = (K, V)>,
    ) -> Location {
        Location {
            attributes: attributes
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            element: "location".to_owned(),
        }
    }

    /// The value of the attribute `name` (the exact name; attribute names are
    /// case-sensitive, as in XML).
    pub fn attribute(&self, name: &str) -> Option<&str> {
        attribute(&self.attributes, name)
    }

    /// The `href` attribute as written.
    pub fn href(&self) -> Option<&str> {
        self.attribute("href")
    }

    /// The weight as the reference proxy reads it: the `weight` attribute read as a Java
    /// `double` (so `-1`, `NaN` and `Infinity` are numbers), 1 when it is missing or not a
    /// number.
    pub fn weight(&self) -> f64 {
        self.number("weight").unwrap_or(1.0)
    }

    /// The attribute `name` read as a Java `double`, `None` when missing or not a number.
    fn number(&self, name: &str) -> Option<f64> {
        self.attribute(name).and_then(reading::java_double)
    }

    /// The URL of this location for `handle` (the handle asked for), as the reference
    /// proxy makes it: `href` when there is one, else `href_template` with `{hdl}` replaced
    /// by the handle URL-component-encoded and `{hdl:path}` by the handle path-encoded
    /// (`/` kept); `None` when it has neither.
    ///
    /// ```
    /// use handle_resolver::wire::Location;
    /// let l = Location::new([("href_template", "https://r.example/{hdl}?p={hdl:path}")]);
    /// assert_eq!(
    ///     l.href_for("20.500.1/a b").as_deref(),
    ///     Some("https://r.example/20.500.1%2Fa%20b?p=20.500.1/a%20b")
    /// );
    /// ```
    pub fn href_for(&self, handle: &str) -> Option<String> {
        if let Some(href) = self.href() {
            return Some(href.to_owned());
        }
        self.attribute("href_template")
            .map(|template| reading::fill_template(template, handle))
    }

    /// The location as a JSON object of its attributes; a `weight` that is a finite number
    /// is written as one.
    fn to_json(&self) -> Json {
        let mut o = serde_json::Map::new();
        for (k, v) in &self.attributes {
            let number = (k == "weight")
                .then(|| reading::java_double(v))
                .flatten()
                .and_then(serde_json::Number::from_f64);
            let value = match number {
                Some(n) => Json::Number(n),
                None => Json::String(v.clone()),
            };
            o.insert(k.clone(), value);
        }
        Json::Object(o)
    }
}

impl Locations {
    /// Parses a location list: a `<locations>` element whose `<location>` (or
    /// `<loc_template>`) children, names in any case, are its locations. A location needs
    /// no `href` (it may have an `href_template`, or be chosen and lead nowhere, as with the
    /// proxy), and any attribute text is taken as it is.
    ///
    /// ```
    /// use handle_resolver::wire::Locations;
    /// let l = Locations::parse(r#"<locations chooseby="weighted">
    ///   <location href="http://a.example/" weight="0.5" view="html"/>
    ///   <location href_template="http://b.example/{hdl}" weight="-1"/>
    /// </locations>"#).unwrap();
    /// assert_eq!(l.choose_by, ["weighted"]);
    /// assert_eq!(l.locations[0].href(), Some("http://a.example/"));
    /// assert_eq!(l.locations[0].weight(), 0.5);
    /// assert_eq!(l.locations[0].attribute("view"), Some("html"));
    /// assert_eq!(l.locations[1].href(), None);
    /// assert_eq!(l.locations[1].weight(), -1.0);
    /// ```
    pub fn parse(text: &str) -> Result<Locations, LocError> {
        let mut reader = quick_xml::Reader::from_str(text);
        let mut depth = 0usize;
        let mut seen_root = false;
        let mut root_attributes = Vec::new();
        let mut locations = Vec::new();
        let mut include_elements = Vec::new();
        let mut namespace_elements = Vec::new();
        // The text of an `<include>` (false) or `<includeNamespace>` (true) child being read.
        let mut include: Option<(bool, String)> = None;
        loop {
            let event = reader.read_event().map_err(|e| match e {
                quick_xml::Error::Syntax(quick_xml::errors::SyntaxError::UnclosedTag) => {
                    LocError::EndInTag
                }
                e => xml_err(e),
            })?;
            let (e, empty) = match event {
                Event::Start(e) => (e, false),
                Event::Empty(e) => (e, true),
                Event::End(_) => {
                    depth = depth.checked_sub(1).ok_or(LocError::NotLocations)?;
                    if depth == 1 {
                        match include.take() {
                            Some((false, name)) => include_elements.push(name.trim().to_owned()),
                            Some((true, name)) => namespace_elements.push(name.trim().to_owned()),
                            None => {}
                        }
                    }
                    continue;
                }
                Event::Text(t) if depth == 0 && !t.iter().all(u8::is_ascii_whitespace) => {
                    return Err(LocError::NotLocations)
                }
                Event::Text(t) if depth == 2 => {
                    if let Some((_, name)) = include.as_mut() {
                        name.push_str(&t.unescape().map_err(xml_err)?);
                    }
                    continue;
                }
                Event::Eof => break,
                _ => continue,
            };
            if depth == 0 {
                if seen_root || e.name().as_ref() != b"locations" {
                    return Err(LocError::NotLocations);
                }
                seen_root = true;
                root_attributes = attributes(&e)?;
            } else if depth == 1 {
                let name = e.name();
                let name = name.as_ref();
                if name.eq_ignore_ascii_case(b"location")
                    || name.eq_ignore_ascii_case(b"loc_template")
                {
                    locations.push(Location {
                        attributes: attributes(&e)?,
                        element: String::from_utf8_lossy(name).into_owned(),
                    });
                } else if name == b"include" || name == b"includeNamespace" {
                    let namespace = name == b"includeNamespace";
                    if empty {
                        if namespace {
                            namespace_elements.push(String::new());
                        } else {
                            include_elements.push(String::new());
                        }
                    } else {
                        include = Some((namespace, String::new()));
                    }
                }
            }
            if !empty {
                depth += 1;
            }
        }
        if !seen_root || depth != 0 {
            return Err(LocError::NotLocations);
        }
        let choose_by = attribute(&root_attributes, "choose_by")
            .or_else(|| attribute(&root_attributes, "chooseby"))
            .map(methods)
            .unwrap_or_default();
        let includes = attribute(&root_attributes, "include")
            .map(str::to_owned)
            .into_iter()
            .chain(include_elements)
            .collect();
        let include_namespaces = attribute(&root_attributes, "includeNamespace")
            .map(str::to_owned)
            .into_iter()
            .chain(namespace_elements)
            .collect();
        Ok(Locations {
            choose_by,
            attributes: root_attributes,
            locations,
            includes,
            include_namespaces,
            raw: text.to_owned(),
        })
    }

    /// The value of the attribute `name` of `<locations>` (the exact name).
    pub fn attribute(&self, name: &str) -> Option<&str> {
        attribute(&self.attributes, name)
    }

    /// The value of a `locations` JSON view: `{"chooseBy": [...], "locations": [{"href": ...,
    /// "weight": ..., other attributes...}], "xml": raw text}` (a weight that is a finite
    /// number as a number, every other attribute as text).
    pub fn to_json(&self) -> Json {
        let locations: Vec<Json> = self.locations.iter().map(Location::to_json).collect();
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
        assert_eq!(
            l.locations[1].href(),
            Some("http://example.org/hslab/loc1.json")
        );
        assert_eq!(l.locations[1].weight(), 0.0);
        assert_eq!(
            l.locations[0].attributes,
            [
                ("id".to_string(), "0".to_string()),
                ("href".into(), "http://example.org/hslab/loc0".into()),
                ("weight".into(), "1".into()),
                ("view".into(), "html".into())
            ]
        );
        assert_eq!(l.raw, CAPTURED);
    }

    #[test]
    fn choose_by_wins_over_chooseby_and_values_are_unescaped() {
        for attr in ["chooseby", "choose_by"] {
            let text = format!(
                "<locations {attr}=\"locatt, country,,weighted\"><location href=\"a?b=1&amp;c=2\"/></locations>"
            );
            let l = Locations::parse(&text).unwrap();
            assert_eq!(l.choose_by, ["locatt", "country", "weighted"]);
            assert_eq!(l.locations[0].href(), Some("a?b=1&c=2"));
            assert_eq!(l.locations[0].attribute("weight"), None);
            assert_eq!(l.locations[0].weight(), 1.0);
        }
        let both = Locations::parse(
            r#"<locations chooseby="country" choose_by="score"><location href="x"/></locations>"#,
        )
        .unwrap();
        assert_eq!(both.choose_by, ["score"]);
        assert_eq!(both.attribute("chooseby"), Some("country"));
    }

    #[test]
    fn takes_what_the_reference_takes() {
        // No href, negative, unreadable and Java-only weights, the older element name in
        // another case, and children that are not locations.
        let l = Locations::parse(
            r#"<locations no_legacy="yes">
              <location href_template="t/{hdl}" weight="-2"/>
              <LOC_TEMPLATE href="b" weight="heavy"/>
              <location href="c" weight=" 2.5d "/>
              <location href="d" weight="NaN"/>
              <other href="not a location"/>
              <location href="e"><location href="nested, not one"/></location>
            </locations>"#,
        )
        .unwrap();
        let hrefs: Vec<Option<&str>> = l.locations.iter().map(Location::href).collect();
        assert_eq!(hrefs, [None, Some("b"), Some("c"), Some("d"), Some("e")]);
        assert_eq!(l.locations[0].weight(), -2.0);
        assert_eq!(l.locations[1].weight(), 1.0, "not a number: as missing");
        assert_eq!(l.locations[2].weight(), 2.5);
        assert!(l.locations[3].weight().is_nan());
        assert_eq!(l.attribute("no_legacy"), Some("yes"));
        // JSON: a finite weight as a number, any other as its text.
        let j = l.to_json();
        assert_eq!(
            j["locations"][0],
            json!({"href_template": "t/{hdl}", "weight": -2.0})
        );
        assert_eq!(j["locations"][1]["weight"], "heavy");
        assert_eq!(j["locations"][3]["weight"], "NaN");
    }

    #[test]
    fn names_its_includes() {
        let l = Locations::parse(
            r#"<locations include="20.500.1/a"><include> 20.500.1/b </include><include>20.500.1/&amp;c</include></locations>"#,
        )
        .unwrap();
        assert_eq!(l.includes, ["20.500.1/a", "20.500.1/b", "20.500.1/&c"]);
        assert!(l.locations.is_empty());
        let ns = Locations::parse(
            r#"<locations includeNamespace="0.NA/20.500.1"><includeNamespace>0.NA/20.500.2</includeNamespace></locations>"#,
        )
        .unwrap();
        assert_eq!(ns.include_namespaces, ["0.NA/20.500.1", "0.NA/20.500.2"]);
        assert!(ns.includes.is_empty());
    }

    #[test]
    fn rejects_what_is_not_a_location_list() {
        assert_eq!(Locations::parse("hello"), Err(LocError::NotLocations));
        assert_eq!(Locations::parse(""), Err(LocError::NotLocations));
        assert_eq!(Locations::parse("<other/>"), Err(LocError::NotLocations));
        assert!(Locations::parse("<locations><location href='x'>").is_err());
        assert!(Locations::parse("<locations></other>").is_err());
        assert!(Locations::parse("<locations/><locations/>").is_err());
        assert!(matches!(
            Locations::parse("<locations><location href='a' href='b'/></locations>"),
            Err(LocError::Xml(_))
        ));
    }
}
