//! One test per rule of the proxy's choice (`select.rs`); the draws are checked by their
//! distribution over many seeded draws, and the walk of the draw by the two ends of `r`.

use super::{Chooser, Location, LocationRequest, LocationSet};
use crate::wire::HandleValue;

/// A set of one `10320/loc` value.
fn set(xml: &str) -> LocationSet {
    LocationSet::from_values(&[HandleValue::new(1, "10320/loc", xml.to_owned())])
}

fn href(l: Option<&Location>) -> Option<&str> {
    l.and_then(Location::href)
}

/// One choice with `request`, the draw's `r` fixed at 0.
fn pick<'a>(set: &'a LocationSet, request: &LocationRequest) -> Option<&'a str> {
    href(set.select(request, &mut Chooser::fixed(0.0)))
}

/// The share of `draws` seeded choices that went to each href of the set, in set order.
fn shares(set: &LocationSet, request: &LocationRequest, draws: usize) -> Vec<f64> {
    let mut rng = Chooser::seeded(28);
    let mut counts = vec![0usize; set.locations.len()];
    for _ in 0..draws {
        let chosen = set.select(request, &mut rng).unwrap();
        let at = set
            .locations
            .iter()
            .position(|l| std::ptr::eq(l, chosen))
            .unwrap();
        counts[at] += 1;
    }
    counts.iter().map(|&c| c as f64 / draws as f64).collect()
}

/// `got` within 0.01 of `want`, share by share (at 40 000 draws, 0.01 is five standard
/// deviations or more).
fn assert_shares(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 0.01, "got {got:?}, want {want:?}");
    }
}

const DRAWS: usize = 40_000;

#[test]
fn the_default_methods_and_where_choose_by_comes_from() {
    let none = set(r#"<locations><location href="a"/></locations>"#);
    assert_eq!(
        none.choose_by,
        ["locatt", "address", "country", "score", "weighted"]
    );
    // `choose_by` in any value wins over `chooseby` in an earlier one; blanks are dropped.
    let two = LocationSet::from_values(&[
        HandleValue::new(1, "10320/loc", r#"<locations chooseby="country"/>"#),
        HandleValue::new(
            2,
            "10320/loc",
            r#"<locations choose_by=" score, ,weighted"/>"#,
        ),
        HandleValue::new(3, "10320/loc", r#"<locations choose_by="locatt"/>"#),
    ]);
    assert_eq!(two.choose_by, ["score", "weighted"]);
    // Given and empty: no method, only the final draw.
    assert!(set(r#"<locations choose_by=""/>"#).choose_by.is_empty());
}

#[test]
fn one_location_left_is_chosen_at_once() {
    // locatt leaves b alone: chosen before `score`, which would leave nothing (its score is
    // below 0), and whatever its weight.
    let s = set(r#"<locations choose_by="locatt,score">
        <location href="a" view="html"/>
        <location href="b" view="json" score="-1" weight="0"/>
    </locations>"#);
    let json = LocationRequest::new().locatt("view:json");
    assert_eq!(pick(&s, &json), Some("b"));
    // Without the wish, `score` runs and leaves a (score 0 beats -1).
    assert_eq!(pick(&s, &LocationRequest::new()), Some("a"));
}

#[test]
fn locatt_wishes_narrow_in_turn_and_are_skipped_when_none_matches() {
    let s = set(r#"<locations choose_by="locatt">
        <location href="a" view="html" lang="en"/>
        <location href="b" view="json" lang="en"/>
        <location href="c" view="json" lang="fr"/>
        <location href="d" view=" json"/>
    </locations>"#);
    let ask = |wishes: &[&str]| {
        let mut r = LocationRequest::new();
        for w in wishes {
            r = r.locatt(*w);
        }
        // Every location left gets its share of the final draw: the hrefs with one.
        let got = shares(&s, &r, 2_000);
        s.locations
            .iter()
            .zip(got)
            .filter(|(_, share)| *share > 0.0)
            .map(|(l, _)| l.href().unwrap_or(""))
            .collect::<Vec<_>>()
    };
    assert_eq!(ask(&["view:json", "lang:fr"]), ["c"]);
    // A wish nothing matches is skipped; the next still narrows.
    assert_eq!(ask(&["view:pdf", "lang:fr"]), ["c"]);
    // A name alone matches any value; the name is trimmed, the value is not.
    assert_eq!(ask(&[" lang "]), ["a", "b", "c"]);
    assert_eq!(ask(&["view: json"]), ["d"]);
    assert_eq!(ask(&[]), ["a", "b", "c", "d"]);
}

#[test]
fn address_keeps_the_locations_whose_ranges_hold_the_client() {
    let s = set(r#"<locations choose_by="address">
        <location href="lan" addresses="10.0.0.0/8, 192.0.2.0/24"/>
        <location href="twice" addresses="192.0.2.0/25,192.0.2.7"/>
        <location href="v6" addresses="2001:db8::/32"/>
        <location href="anyone"/>
    </locations>"#);
    let at = |ip: &str| LocationRequest::new().address(ip.parse().unwrap());
    // 192.0.2.7: in lan's second range and in both of twice's, which is counted twice.
    assert_shares(
        &shares(&s, &at("192.0.2.7"), DRAWS),
        &[1.0 / 3.0, 2.0 / 3.0, 0.0, 0.0],
    );
    assert_eq!(shares(&s, &at("2001:db8::5"), 100), [0.0, 0.0, 1.0, 0.0]);
    // In no range, or no address given: not narrowed.
    assert_shares(&shares(&s, &at("198.51.100.1"), DRAWS), &[0.25; 4]);
    assert_shares(&shares(&s, &LocationRequest::new(), DRAWS), &[0.25; 4]);
}

#[test]
fn country_keeps_matching_countries_when_any_match() {
    let s = set(r#"<locations choose_by="country">
        <location href="nl" country=" NL "/>
        <location href="us" country="us"/>
        <location href="none"/>
    </locations>"#);
    let from = |c: &str| LocationRequest::new().country(c);
    assert_eq!(pick(&s, &from("nl")), Some("nl"));
    assert_eq!(pick(&s, &from("US")), Some("us"));
    let third = [1.0 / 3.0; 3];
    assert_shares(&shares(&s, &from("FR"), DRAWS), &third);
    assert_shares(&shares(&s, &LocationRequest::new(), DRAWS), &third);
}

#[test]
fn score_keeps_the_highest_counted_from_zero() {
    let s = set(r#"<locations choose_by="score">
        <location href="low" score="1"/>
        <location href="high" score="2.5"/>
        <location href="high too" score="2.5"/>
        <location href="none"/>
    </locations>"#);
    assert_shares(
        &shares(&s, &LocationRequest::new(), DRAWS),
        &[0.0, 0.5, 0.5, 0.0],
    );
    // Missing is 0, which beats a negative score.
    let s = set(r#"<locations choose_by="score">
        <location href="neg" score="-3"/><location href="missing"/>
    </locations>"#);
    assert_eq!(pick(&s, &LocationRequest::new()), Some("missing"));
    // Every score below 0: nothing is left, nothing is chosen.
    let s = set(r#"<locations choose_by="score">
        <location href="a" score="-1"/><location href="b" score="-2"/>
    </locations>"#);
    assert_eq!(pick(&s, &LocationRequest::new()), None);
}

#[test]
fn the_draw_follows_the_weights() {
    // Weights 1, 3, 0, missing (1), negative (0), not a number (1): shares 1/6, 3/6, 0,
    // 1/6, 0, 1/6.
    let s = set(r#"<locations choose_by="weighted">
        <location href="a" weight="1"/>
        <location href="b" weight="3"/>
        <location href="c" weight="0"/>
        <location href="d"/>
        <location href="e" weight="-2"/>
        <location href="f" weight="heavy"/>
    </locations>"#);
    let sixth = 1.0 / 6.0;
    assert_shares(
        &shares(&s, &LocationRequest::new(), DRAWS),
        &[sixth, 0.5, 0.0, sixth, 0.0, sixth],
    );
}

#[test]
fn the_draw_ends_every_list_whether_or_not_weighted_is_listed() {
    // The old rule chose the first location when `weighted` was not listed.
    let s = set(r#"<locations choose_by="locatt">
        <location href="never" weight="0"/><location href="always"/>
    </locations>"#);
    assert_eq!(shares(&s, &LocationRequest::new(), 1_000), [0.0, 1.0]);
}

#[test]
fn the_draw_walks_from_the_last_location() {
    // r = 0: the last location is taken even at weight 0 (the running sum, 0, reaches r);
    // r just below 1: the walk reaches the first.
    let s = set(r#"<locations choose_by="weighted">
        <location href="first"/><location href="second"/><location href="last" weight="0"/>
    </locations>"#);
    let request = LocationRequest::new();
    assert_eq!(
        href(s.select(&request, &mut Chooser::fixed(0.0))),
        Some("last")
    );
    let top = &mut Chooser::fixed(1.0 - f64::EPSILON / 2.0);
    assert_eq!(href(s.select(&request, top)), Some("first"));
}

#[test]
fn weights_adding_up_to_zero_draw_round_r_times_n() {
    // round(r × 4) clamped to 0..=3: index 0 for r < 1/8, 1 and 2 for a quarter each, 3
    // for r ≥ 5/8: shares 1/8, 1/4, 1/4, 3/8.
    let s = set(r#"<locations choose_by="weighted">
        <location href="a" weight="0"/><location href="b" weight="-1"/>
        <location href="c" weight="0"/><location href="d" weight="0"/>
    </locations>"#);
    assert_shares(
        &shares(&s, &LocationRequest::new(), DRAWS),
        &[0.125, 0.25, 0.25, 0.375],
    );
    // A weight that is not a number makes the sum none: the same draw.
    let s = set(r#"<locations choose_by="weighted">
        <location href="a" weight="5"/><location href="b" weight="NaN"/>
    </locations>"#);
    assert_shares(&shares(&s, &LocationRequest::new(), DRAWS), &[0.25, 0.75]);
}

#[test]
fn every_loc_value_is_merged_and_urls_join_as_legacy_locations() {
    let values = [
        HandleValue::new(1, "URL", "https://url/"),
        HandleValue::new(
            2,
            "10320/loc",
            r#"<locations><location href="one"/></locations>"#,
        ),
        HandleValue::new(3, "URL.mirror", "https://mirror/"),
        // A subtype of 10320/loc is a location value too.
        HandleValue::new(
            4,
            "10320/LOC.more",
            r#"<locations><location href="two"/></locations>"#,
        ),
        HandleValue::new(5, "EMAIL", "x@example.org"),
    ];
    let s = LocationSet::from_values(&values);
    assert!(!s.legacy_only);
    let listed: Vec<(&str, &str, Option<&str>)> = s
        .locations
        .iter()
        .map(|l| {
            (
                l.href().unwrap_or(""),
                l.attribute("weight").unwrap_or(""),
                l.attribute("mode"),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("one", "", None),
            ("two", "", None),
            // urlWeight and urlSubtypeWeight default to 0 next to location lists.
            ("https://url/", "0.0", Some("legacy")),
            ("https://mirror/", "0.0", Some("legacy")),
        ]
    );

    // The weights from the first value that sets them; subtypes weigh as URL when the
    // handle has no plain URL.
    let weights = |values: &[HandleValue]| -> Vec<f64> {
        LocationSet::from_values(values)
            .locations
            .iter()
            .filter(|l| l.attribute("mode") == Some("legacy"))
            .map(Location::weight)
            .collect()
    };
    let loc = |attrs: &str| HandleValue::new(9, "10320/loc", format!("<locations {attrs}/>"));
    let url = HandleValue::new(1, "URL", "u");
    let sub = HandleValue::new(2, "URL.x", "s");
    assert_eq!(
        weights(&[
            loc(r#"urlWeight="2""#),
            loc(r#"urlWeight="5" urlSubtypeWeight="0.5""#),
            url.clone(),
            sub.clone()
        ]),
        [2.0, 0.5]
    );
    assert_eq!(
        weights(&[loc(r#"urlWeight="2" urlSubtypeWeight="0.5""#), sub.clone()]),
        [2.0]
    );
    // No location list could be read: URL weighs 1.
    let broken = HandleValue::new(9, "10320/loc", "not xml");
    assert_eq!(weights(&[broken, url.clone(), sub.clone()]), [1.0, 0.0]);
    // no_legacy leaves them out.
    assert_eq!(
        weights(&[loc(r#"no_legacy="true""#), url.clone()]),
        Vec::<f64>::new()
    );
    assert_eq!(weights(&[loc(r#"no_legacy="no""#), url]), [0.0]);
}

#[test]
fn without_location_values_the_first_url_is_the_choice() {
    let values = [
        HandleValue::new(1, "URL.mirror", "https://mirror/"),
        HandleValue::new(2, "EMAIL", "x@example.org"),
        HandleValue::new(3, "0.TYPE/URL", "https://typed/"),
        HandleValue::new(4, "URL", "https://plain/"),
    ];
    let s = LocationSet::from_values(&values);
    assert!(s.legacy_only);
    // A plain URL (or 0.TYPE/URL) first, in value order, whatever follows.
    assert_eq!(pick(&s, &LocationRequest::new()), Some("https://typed/"));
    // Else the first subtype.
    let s = LocationSet::from_values(&values[..2]);
    assert_eq!(pick(&s, &LocationRequest::new()), Some("https://mirror/"));
    let s = LocationSet::from_values(&values[1..2]);
    assert_eq!(pick(&s, &LocationRequest::new()), None);
    // A 10320/links value is a location value: not the legacy case.
    let with_links = [
        HandleValue::new(1, "10320/links", "<links/>"),
        HandleValue::new(2, "URL", "https://plain/"),
    ];
    assert!(!LocationSet::from_values(&with_links).legacy_only);
}

#[test]
fn templates_give_the_href_of_a_location_without_one() {
    let s = set(r#"<locations>
        <location href_template="https://t.example/{hdl}" weight="0"/>
        <loc_template href_template="https://p.example/{hdl:path}"/>
        <location href="https://h.example/" href_template="ignored"/>
        <location view="nowhere" weight="0"/>
    </locations>"#);
    let h = "20.500.1/a b";
    let urls: Vec<Option<String>> = s.locations.iter().map(|l| l.href_for(h)).collect();
    assert_eq!(
        urls,
        [
            Some("https://t.example/20.500.1%2Fa%20b".to_string()),
            Some("https://p.example/20.500.1/a%20b".to_string()),
            Some("https://h.example/".to_string()),
            None
        ]
    );
}

#[test]
fn includes_are_named_not_followed() {
    let s = LocationSet::from_values(&[
        HandleValue::new(1, "10320/loc", r#"<locations include="20.500.1/a"/>"#),
        HandleValue::new(
            2,
            "10320/loc",
            r#"<locations><include>20.500.1/b</include></locations>"#,
        ),
    ]);
    assert_eq!(s.includes, ["20.500.1/a", "20.500.1/b"]);
    assert!(s.locations.is_empty());
    assert_eq!(pick(&s, &LocationRequest::new()), None);
}
