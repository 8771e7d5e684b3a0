//! The gathering of `gather.rs`: the order of the locations, links and headers, what the
//! other handles add, what suppresses them, the TTLs consulted.

use super::*;
use crate::wire::{Chooser, LocationRequest};

fn value(index: u32, t: &str, data: &str) -> HandleValue {
    HandleValue::new(index, t.to_owned(), data.to_owned())
}

/// Gathers `own`, answering each need from `others` (handle → values; missing: not found),
/// and returns the set with the needs asked, in order.
fn gather(
    own: &[HandleValue],
    others: &[(&str, Vec<HandleValue>)],
) -> (LocationSet, Vec<LocationNeed>) {
    let mut g = LocationGather::new(own);
    let mut asked = Vec::new();
    while let Some(need) = g.next_need() {
        assert!(asked.len() < 50, "asks forever: {asked:?}");
        let values = others
            .iter()
            .find(|(h, _)| *h == need.handle())
            .map(|(_, v)| v.clone());
        g.provide(&need, values);
        asked.push(need);
    }
    (g.finish(), asked)
}

fn hrefs(set: &LocationSet) -> Vec<String> {
    set.locations
        .iter()
        .map(|l| {
            l.href()
                .or(l.attribute("href_template"))
                .unwrap_or("-")
                .to_owned()
        })
        .collect()
}

#[test]
fn namespace_location_handles() {
    assert_eq!(
        namespace_locs(
            "<NAMESPACE>\n<contact>x@example.org</contact>\n<locs> 20.500.1/ns </locs><locs>20.500.1/b</locs>\n</NAMESPACE>"
        ),
        ["20.500.1/ns", "20.500.1/b"]
    );
    assert!(namespace_locs("<NAMESPACE/>").is_empty());
}

#[test]
fn own_then_included_then_legacy_then_namespace() {
    let own = [
        value(1, "URL", "https://u.example/"),
        value(
            2,
            "10320/loc",
            r#"<locations include="20.500.1/a" nshdl="20.500.1/ns"><include>20.500.1/b</include><location href="own"/></locations>"#,
        ),
        value(
            3,
            "10320/links",
            r#"<locations><location rel="cite-as" href="https://c.example/"/></locations>"#,
        ),
    ];
    let others = [
        (
            "20.500.1/a",
            vec![
                value(
                    1,
                    "10320/loc",
                    r#"<locations><location href="a" rel="item"/></locations>"#,
                ),
                value(2, "10320/headers", "X-A: a"),
            ],
        ),
        (
            "20.500.1/b",
            vec![value(
                1,
                "10320/loc",
                r#"<locations><location href="b"/></locations>"#,
            )],
        ),
        (
            "20.500.1/ns",
            vec![
                value(
                    1,
                    "10320/loc",
                    r#"<locations http_sc="303"><location href="ns" http_role="conneg"/></locations>"#,
                ),
                value(2, "10320/headers", "X-Ns: {hdl}"),
            ],
        ),
    ];
    let (set, asked) = gather(&own, &others);
    assert_eq!(
        asked,
        [
            LocationNeed::Locations("20.500.1/a".into()),
            LocationNeed::Locations("20.500.1/b".into()),
            LocationNeed::Locations("20.500.1/ns".into()),
        ]
    );
    assert_eq!(hrefs(&set), ["own", "a", "b", "https://u.example/", "ns"]);
    // URL weighs 0 beside a location list.
    assert_eq!(set.locations[3].weight(), 0.0);
    assert!(!set.legacy_only);
    assert!(set.conneg(), "a namespace location does conneg");
    // http_sc from the namespace list when the own list has none.
    assert_eq!(set.redirect_status(&set.locations[0]), 303);
    // Links: 10320/links first, then the location lists (own, included).
    assert_eq!(
        set.link_headers("20.500.1/x"),
        ["<https://c.example/>; rel=\"cite-as\"", "<a>; rel=\"item\""]
    );
    assert_eq!(
        set.header_fields("20.500.1/x"),
        [
            ("X-A".to_string(), "a".to_string()),
            ("X-Ns".to_string(), "20.500.1%2Fx".to_string())
        ]
    );
    // Own values: loc, links, URL; the other handles' values are marked.
    let own_ttls = set.ttls.iter().filter(|t| !t.other_handle).count();
    assert_eq!(own_ttls, 3);
    assert_eq!(set.ttls.len() - own_ttls, 5);
}

#[test]
fn namespaces_of_prefixes_and_their_suppression() {
    let ns = "<NAMESPACE><locs>20.500.1/ns</locs></NAMESPACE>";
    let others = [
        ("0.NA/20.500.1", vec![value(2, "HS_NAMESPACE", ns)]),
        (
            "20.500.1/ns",
            vec![value(
                1,
                "10320/loc",
                r#"<locations><location href="ns"/></locations>"#,
            )],
        ),
    ];
    for attribute in ["includeNamespace", "overridePrefix"] {
        let own = [value(
            1,
            "10320/loc",
            &format!(
                r#"<locations {attribute}="0.NA/20.500.1"><location href="own"/></locations>"#
            ),
        )];
        let (set, asked) = gather(&own, &others);
        assert_eq!(asked[0], LocationNeed::Namespace("0.NA/20.500.1".into()));
        assert_eq!(asked[0].types(), ["HS_NAMESPACE"]);
        assert_eq!(hrefs(&set), ["own", "ns"], "{attribute}");
    }
    let own = [value(
        1,
        "10320/loc",
        r#"<locations no_nslocs="true" nshdl="20.500.1/ns"><location href="own"/></locations>"#,
    )];
    let (set, asked) = gather(&own, &others);
    assert!(asked.is_empty());
    assert_eq!(hrefs(&set), ["own"]);
    // A handle that is not found adds nothing.
    let own = [value(
        1,
        "10320/loc",
        r#"<locations nshdl="20.500.1/none"><location href="own"/></locations>"#,
    )];
    assert_eq!(hrefs(&gather(&own, &others).0), ["own"]);
}

#[test]
fn include_loops_end_and_each_handle_is_asked_once() {
    let own = [value(
        1,
        "10320/loc",
        r#"<locations include="20.500.1/self"><location href="own"/></locations>"#,
    )];
    let others = [(
        "20.500.1/self",
        vec![value(
            1,
            "10320/loc",
            r#"<locations include="20.500.1/self"><location href="again"/></locations>"#,
        )],
    )];
    let (set, asked) = gather(&own, &others);
    assert_eq!(asked.len(), 1);
    // The reference adds the looping list once per level, 21 levels deep.
    assert_eq!(set.locations.len(), 1 + 21);
}

#[test]
fn legacy_only_unreadable_and_no_legacy() {
    let set = LocationSet::from_values(&[
        value(1, "0.TYPE/URL", "https://zero.example/"),
        value(2, "URL", "https://u.example/"),
    ]);
    assert!(set.legacy_only);
    assert_eq!(hrefs(&set), ["https://zero.example/"]);
    assert_eq!(set.ttls.len(), 1, "only the chosen URL counts");
    assert!(!set.conneg());

    let set = LocationSet::from_values(&[
        value(1, "URL", "https://u.example/"),
        value(2, "10320/loc", "<locations><location href='x'"),
    ]);
    assert_eq!(set.invalid.len(), 1);
    // No list could be read: the URL weighs 1.
    assert_eq!(set.locations[0].weight(), 1.0);

    let set = LocationSet::from_values(&[
        value(1, "URL", "https://u.example/"),
        value(
            2,
            "10320/loc",
            r#"<locations no_legacy="true"><location href="only"/></locations>"#,
        ),
    ]);
    let chosen = set.select(&LocationRequest::new(), &mut Chooser::seeded(1));
    assert_eq!(chosen.and_then(Location::href), Some("only"));
}
