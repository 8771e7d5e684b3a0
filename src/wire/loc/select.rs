//! Choosing one location of a `10320/loc` value ([`Locations::select`], as the handle.net
//! proxy does): the methods
//! of `chooseby` in order (default `locatt,country,weighted`): `locatt` keeps the locations
//! whose attributes match the caller's wishes (when any does), `country` is skipped (no
//! geolocation here), `weighted` draws one by `weight` (missing = 1, 0 = never drawn).
//! Without `weighted` the first remaining location is chosen.

use rand::Rng;

use super::{Location, Locations};
use crate::wire::HandleValue;

/// The default method list of the handle.net proxy.
pub(crate) const DEFAULT_CHOOSE_BY: [&str; 3] = ["locatt", "country", "weighted"];

impl Locations {
    /// Picks one location as the handle.net proxy does (see the module documentation).
    /// `locatt` holds the wished attributes (`("view", "json")`, ...).
    ///
    /// ```
    /// use handle_resolver::wire::Locations;
    /// use rand::SeedableRng;
    /// let l = Locations::parse(r#"<locations>
    ///   <location href="http://a/" view="html"/><location href="http://b/" view="json"/>
    /// </locations>"#).unwrap();
    /// let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    /// let wish = [("view".to_string(), "json".to_string())];
    /// assert_eq!(l.select(&wish, &mut rng).unwrap().href, "http://b/");
    /// ```
    pub fn select(&self, locatt: &[(String, String)], rng: &mut impl Rng) -> Option<&Location> {
        let methods: Vec<&str> = if self.choose_by.is_empty() {
            DEFAULT_CHOOSE_BY.to_vec()
        } else {
            self.choose_by.iter().map(String::as_str).collect()
        };
        let mut candidates: Vec<&Location> = self.locations.iter().collect();
        for method in methods {
            if method.eq_ignore_ascii_case("locatt") && !locatt.is_empty() {
                let matching: Vec<&Location> = candidates
                    .iter()
                    .copied()
                    .filter(|l| {
                        locatt
                            .iter()
                            .all(|(k, v)| l.attributes.iter().any(|(lk, lv)| lk == k && lv == v))
                    })
                    .collect();
                if !matching.is_empty() {
                    candidates = matching;
                }
            } else if method.eq_ignore_ascii_case("weighted") {
                return weighted(&candidates, rng);
            }
        }
        candidates.first().copied()
    }

    /// The parsed `10320/loc` values among `values`, in order (undecodable ones skipped).
    pub fn all_in(values: &[HandleValue]) -> Vec<Locations> {
        values
            .iter()
            .filter(|v| v.is_type("10320/loc"))
            .filter_map(|v| std::str::from_utf8(&v.data).ok())
            .filter_map(|t| Locations::parse(t).ok())
            .collect()
    }
}

fn weighted<'a>(candidates: &[&'a Location], rng: &mut impl Rng) -> Option<&'a Location> {
    let raw = |l: &Location| {
        let w = l.weight.unwrap_or(1.0);
        if w.is_finite() && w > 0.0 {
            w
        } else {
            0.0
        }
    };
    // Scale by the largest weight so that the sum stays finite however large the weights
    // written in the XML are (two weights of 1e308 would otherwise add up to infinity).
    let max = candidates.iter().map(|l| raw(l)).fold(0.0, f64::max);
    if max <= 0.0 {
        return candidates.first().copied();
    }
    let weight = |l: &Location| raw(l) / max;
    let total: f64 = candidates.iter().map(|l| weight(l)).sum();
    let mut x = rng.gen_range(0.0..total);
    for l in candidates {
        let w = weight(l);
        if x < w {
            return Some(l);
        }
        x -= w;
    }
    candidates.iter().rev().find(|l| weight(l) > 0.0).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn locs(xml: &str) -> Locations {
        Locations::parse(xml).unwrap()
    }

    #[test]
    fn weighted_choice_follows_weights_and_never_picks_zero() {
        let l = locs(
            r#"<locations chooseby="weighted">
            <location href="a" weight="0"/><location href="b" weight="3"/><location href="c" weight="1"/>
            </locations>"#,
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(42);
        let mut counts = [0usize; 3];
        for _ in 0..4000 {
            match l.select(&[], &mut rng).unwrap().href.as_str() {
                "a" => counts[0] += 1,
                "b" => counts[1] += 1,
                _ => counts[2] += 1,
            }
        }
        assert_eq!(counts[0], 0);
        // Expected 3000 / 1000.
        assert!((2700..3300).contains(&counts[1]), "{counts:?}");
        assert!((700..1300).contains(&counts[2]), "{counts:?}");
    }

    #[test]
    fn huge_weights_do_not_overflow_the_draw() {
        let l = locs(
            r#"<locations chooseby="weighted">
            <location href="a" weight="1e308"/><location href="b" weight="1e308"/><location href="c" weight="0"/>
            </locations>"#,
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut seen = [0usize; 2];
        for _ in 0..200 {
            match l.select(&[], &mut rng).unwrap().href.as_str() {
                "a" => seen[0] += 1,
                "b" => seen[1] += 1,
                other => panic!("weight 0 chosen: {other}"),
            }
        }
        assert!(seen[0] > 50 && seen[1] > 50, "{seen:?}");
    }

    #[test]
    fn locatt_filters_before_weighting_and_falls_back_when_nothing_matches() {
        let l = locs(
            r#"<locations><location href="a" view="html" weight="100"/><location href="b" view="json" weight="0.001"/></locations>"#,
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let json = [("view".to_string(), "json".to_string())];
        for _ in 0..50 {
            assert_eq!(l.select(&json, &mut rng).unwrap().href, "b");
        }
        let pdf = [("view".to_string(), "pdf".to_string())];
        let picked = l.select(&pdf, &mut rng).unwrap();
        assert!(picked.href == "a" || picked.href == "b");
    }

    #[test]
    fn without_weighted_the_first_is_chosen_and_empty_gives_none() {
        let l = locs(
            r#"<locations chooseby="locatt"><location href="x"/><location href="y"/></locations>"#,
        );
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        assert_eq!(l.select(&[], &mut rng).unwrap().href, "x");
        let empty = locs("<locations/>");
        assert!(empty.select(&[], &mut rng).is_none());
        let zero = locs(r#"<locations><location href="z" weight="0"/></locations>"#);
        assert_eq!(zero.select(&[], &mut rng).unwrap().href, "z");
    }

    #[test]
    fn finds_loc_values() {
        let v = vec![
            HandleValue::new(1, "URL", "http://u/"),
            HandleValue::new(
                2,
                "10320/loc",
                r#"<locations><location href="h"/></locations>"#,
            ),
            HandleValue::new(3, "10320/loc", "not xml <"),
        ];
        let found = Locations::all_in(&v);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].locations[0].href, "h");
    }
}
