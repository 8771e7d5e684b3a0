//! Choosing one location of a handle as the handle.net proxy (Handle.Net 9.2.0, the servlet
//! proxy's `Location` handler) chooses it, for hdl.handle.net and doi.org.
//!
//! **The list** ([`LocationSet::from_values`]): the locations of every `10320/loc` value
//! (subtypes such as `10320/loc.x` included), value after value, then the handle's `URL`
//! values (and `URL.*` subtypes) as legacy locations: `href` the URL, `mode="legacy"`, and
//! weight `urlWeight` for a `URL` value and `urlSubtypeWeight` for a subtype (each from the
//! first value that sets it; by default 0 and 0, or 1 for `URL` when no `10320/loc` value
//! could be read; subtypes weigh as `URL` when the handle has no plain `URL`). `no_legacy`
//! (`yes`, `true` or `1`) leaves them out. A handle with no `10320/loc` (nor `10320/links`,
//! `10320/headers`) value at all is the legacy case: its first `URL` (or `0.TYPE/URL`) value,
//! else its first subtype of either, is the choice. The locations of other handles (`include`,
//! `includeNamespace`, `nshdl`, `overridePrefix`, `no_nslocs`) are gathered by
//! [`LocationGather`](super::LocationGather), which asks the caller for their values.
//!
//! **The choice** ([`LocationSet::select`]): the methods of `choose_by` (else `chooseby`;
//! default `locatt,address,country,score,weighted`) in turn, one location left being chosen
//! at once:
//! - `locatt`: each wish of the caller (`name:value`, or `name` for any value) keeps the
//!   locations that have it, in turn, and is skipped when none has;
//! - `address`: keeps the locations whose `addresses` (comma-separated CIDR ranges) hold
//!   the caller's client address, once per range that holds it; skipped when none does or
//!   no address is given;
//! - `country`: keeps the locations whose `country` is the caller's (any case), when any
//!   is and a country is given;
//! - `score`: keeps the locations of the highest `score` (missing = 0; the highest counted
//!   from 0, so when every score is negative none is left and nothing is chosen);
//! - `weighted`, and in any case after the last method: a draw by `weight` (missing or not
//!   a number = 1, negative = 0), the running sum taken from the last location back to the
//!   first; when the weights add up to 0 (or to no number), location `round(r × n)` clamped
//!   to the list (`r` uniform in [0, 1)), which favours the last and slights the first.
//!
//! The redirect around the choice: its status ([`LocationSet::redirect_status`], `http_sc`),
//! `Vary: Accept` ([`LocationSet::conneg`]), the `Link` headers of `10320/links` and of the
//! locations with a `rel` ([`LocationSet::link_headers`]), the `10320/headers` lines
//! ([`LocationSet::header_fields`], [`LocationSet::head_lines`]) and the TTLs for `Expires`
//! ([`LocationSet::ttls`]); the `locatt` wishes of the request's headers
//! ([`LocationRequest::negotiate`]). Not done here: the country of a client address (a GeoIP
//! database: give [`LocationRequest::country`]) and `urlappend`.

use std::net::IpAddr;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::reading::range_holds;
use super::Location;
use crate::wire::HandleValue;

/// The random draws of a location choice (the `weighted` method): the library's own
/// generator, so that no version of `rand` shows in a signature. [`Chooser::new`] seeds it at
/// random; [`Chooser::seeded`] from a number, for a choice that can be repeated (tests).
///
/// ```
/// use handle_resolver::wire::{Chooser, HandleValue, LocationRequest, LocationSet};
/// let values = [HandleValue::new(1, "10320/loc", r#"<locations>
///     <location href="https://a.example/"/><location href="https://b.example/"/>
/// </locations>"#)];
/// let set = LocationSet::from_values(&values);
/// let request = LocationRequest::new();
/// let first = set.select(&request, &mut Chooser::seeded(7)).and_then(|l| l.href());
/// assert_eq!(first, set.select(&request, &mut Chooser::seeded(7)).and_then(|l| l.href()));
/// ```
#[derive(Debug, Clone)]
pub struct Chooser {
    draws: Draws,
}

#[derive(Debug, Clone)]
enum Draws {
    Random(Box<StdRng>),
    /// Always this number (tests of the draw's ends).
    #[cfg(test)]
    Fixed(f64),
}

impl Chooser {
    /// Draws from a generator seeded at random.
    pub fn new() -> Self {
        Self {
            draws: Draws::Random(Box::new(StdRng::from_entropy())),
        }
    }

    /// Draws from a generator seeded with `seed`: the same seed, the same choices.
    pub fn seeded(seed: u64) -> Self {
        Self {
            draws: Draws::Random(Box::new(StdRng::seed_from_u64(seed))),
        }
    }

    /// A chooser whose every draw is `r` (in [0, 1)).
    #[cfg(test)]
    pub(crate) fn fixed(r: f64) -> Self {
        Self {
            draws: Draws::Fixed(r),
        }
    }

    /// A number uniform in [0, 1).
    fn next(&mut self) -> f64 {
        match &mut self.draws {
            Draws::Random(rng) => rng.gen::<f64>(),
            #[cfg(test)]
            Draws::Fixed(r) => *r,
        }
    }
}

impl Default for Chooser {
    fn default() -> Self {
        Self::new()
    }
}

/// The methods when no `choose_by` or `chooseby` is given.
pub(super) const DEFAULT_CHOOSE_BY: [&str; 5] =
    ["locatt", "address", "country", "score", "weighted"];

/// What the proxy knows of the request it chooses for: the caller's `locatt` wishes, the
/// client's address, its country.
///
/// ```
/// use handle_resolver::wire::LocationRequest;
/// let request = LocationRequest::new()
///     .locatt("view:json")
///     .address("192.0.2.7".parse().unwrap())
///     .country("NL");
/// assert_eq!(request.locatt, ["view:json"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocationRequest {
    /// The `locatt` wishes, in order: `name:value` (the value taken as written) or `name`.
    pub locatt: Vec<String>,
    /// The address of the client the choice is made for (method `address`).
    pub address: Option<IpAddr>,
    /// The country of the client (method `country`; the proxy finds it from the client
    /// address with GeoIP), as the locations write it (`NL`, `us`, ...).
    pub country: Option<String>,
}

impl LocationRequest {
    /// No wishes, no address, no country.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a `locatt` wish (`name:value`, or `name` for any value).
    pub fn locatt(mut self, wish: impl Into<String>) -> Self {
        self.locatt.push(wish.into());
        self
    }

    /// Sets the client address.
    pub fn address(mut self, address: IpAddr) -> Self {
        self.address = Some(address);
        self
    }

    /// Sets the client's country.
    pub fn country(mut self, country: impl Into<String>) -> Self {
        self.country = Some(country.into());
        self
    }
}

/// Every location of a handle, gathered as the proxy gathers them (see the module
/// documentation), ready to [`select`](LocationSet::select) from.
///
/// ```
/// use handle_resolver::wire::{Chooser, HandleValue, LocationRequest, LocationSet};
/// let values = [
///     HandleValue::new(1, "URL", "https://landing.example/"),
///     HandleValue::new(2, "10320/loc", r#"<locations>
///         <location href="https://a.example/page" view="html"/>
///         <location href="https://a.example/data.json" view="json"/>
///     </locations>"#),
/// ];
/// let set = LocationSet::from_values(&values);
/// assert_eq!(set.locations.len(), 3); // two locations, then the URL as a legacy one
/// let json = LocationRequest::new().locatt("view:json");
/// let chosen = set.select(&json, &mut Chooser::new()).unwrap();
/// assert_eq!(chosen.href(), Some("https://a.example/data.json"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocationSet {
    /// The methods, in order: from the first value with a `choose_by`, else the first with
    /// a `chooseby`, else the default `locatt,address,country,score,weighted`.
    pub choose_by: Vec<String>,
    /// The locations: those of each `10320/loc` value in turn, then the legacy ones.
    pub locations: Vec<Location>,
    /// True for a handle without location values: the one location is its URL.
    pub legacy_only: bool,
    /// The handles the values name by `include` (followed by [`LocationGather`]).
    ///
    /// [`LocationGather`]: super::LocationGather
    pub includes: Vec<String>,
    /// The attributes of each `<locations>` element whose attributes apply to the choice
    /// (`choose_by`, `http_sc`): the handle's own lists, then the namespace lists.
    pub set_attributes: Vec<Vec<(String, String)>>,
    /// The lists whose locations with a `rel` give `Link` headers
    /// ([`LocationSet::link_headers`]): the `10320/links` values (own, included,
    /// namespace), then the location lists.
    pub links: Vec<super::Locations>,
    /// The `10320/headers` texts (own, included, namespace), for
    /// [`LocationSet::header_fields`] and [`LocationSet::head_lines`].
    pub headers: Vec<String>,
    /// The TTLs of the values the choice consulted (location, link and header values, the
    /// URL values, those of other handles), for the redirect's `Expires`.
    pub ttls: Vec<super::ConsultedTtl>,
    /// Why `10320/loc` or `10320/links` values could not be read (the proxy answers an error
    /// page for such a handle).
    pub invalid: Vec<super::LocError>,
}

/// A Java `double` as Java's `String.valueOf` writes the special ones (so that it reads
/// back the same).
pub(super) fn java_text(x: f64) -> String {
    // The weights of plain URL values, written without `fmt` (900 instructions of a cold
    // redirect's location set, BENCHMARKS.md §18).
    if x == 1.0 {
        "1.0".into()
    } else if x == 0.0 && x.is_sign_positive() {
        "0.0".into()
    } else if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        format!("{x:?}")
    }
}

impl LocationSet {
    /// Gathers the locations of `values` (a handle's values, in the server's order), the
    /// handles they name (includes, namespaces) left out: [`LocationGather`] follows them.
    ///
    /// [`LocationGather`]: super::LocationGather
    pub fn from_values(values: &[HandleValue]) -> LocationSet {
        super::LocationGather::new(values).finish()
    }

    /// The location the proxy would redirect `request` to; `None` when there is none (no
    /// location, or none left after `score`). Its URL is [`Location::href_for`] the handle.
    /// The `weighted` draw takes its number from `chooser`.
    pub fn select(&self, request: &LocationRequest, chooser: &mut Chooser) -> Option<&Location> {
        if self.legacy_only {
            return self.locations.first();
        }
        let mut candidates: Vec<&Location> = self.locations.iter().collect();
        if candidates.is_empty() {
            return None;
        }
        for method in &self.choose_by {
            if let [only] = candidates[..] {
                return Some(only);
            }
            match method.trim().to_ascii_lowercase().as_str() {
                "locatt" => {
                    for wish in &request.locatt {
                        narrow(&mut candidates, |l| has_wish(l, wish));
                    }
                }
                "address" => {
                    if let Some(client) = request.address {
                        // Once per range that holds the client, as the proxy adds them.
                        let mut kept = Vec::new();
                        for &l in &candidates {
                            let Some(ranges) = l.attribute("addresses") else {
                                continue;
                            };
                            for range in ranges.split(',') {
                                if range_holds(range.trim(), client) {
                                    kept.push(l);
                                }
                            }
                        }
                        if !kept.is_empty() {
                            candidates = kept;
                        }
                    }
                }
                "country" => {
                    if let Some(country) = &request.country {
                        narrow(&mut candidates, |l| {
                            l.attribute("country")
                                .is_some_and(|c| c.trim().eq_ignore_ascii_case(country))
                        });
                    }
                }
                "score" => {
                    let mut best = 0.0;
                    let mut kept = Vec::new();
                    for &l in &candidates {
                        let score = l.number("score").unwrap_or(0.0);
                        if score > best {
                            best = score;
                            kept.clear();
                        }
                        if score == best {
                            kept.push(l);
                        }
                    }
                    candidates = kept;
                }
                "weighted" => return weighted(&candidates, chooser),
                _ => {}
            }
        }
        weighted(&candidates, chooser)
    }
}

/// Keeps the candidates `keep` accepts, unless it accepts none.
fn narrow(candidates: &mut Vec<&Location>, keep: impl Fn(&Location) -> bool) {
    let kept: Vec<&Location> = candidates.iter().copied().filter(|l| keep(l)).collect();
    if !kept.is_empty() {
        *candidates = kept;
    }
}

/// True when `location` has the attribute of `wish` (`name:value`: with that value, taken
/// as written; `name`: any value; the name trimmed).
fn has_wish(location: &Location, wish: &str) -> bool {
    let (name, value) = match wish.split_once(':') {
        Some((name, value)) => (name.trim(), Some(value)),
        None => (wish.trim(), None),
    };
    location
        .attribute(name)
        .is_some_and(|have| value.map_or(true, |want| want == have))
}

/// The weight a draw gives a location: Java's `Math.max(0, weight)` (NaN stays NaN).
fn draw_weight(l: &Location) -> f64 {
    let w = l.weight();
    if w.is_nan() {
        w
    } else {
        w.max(0.0)
    }
}

/// The proxy's weighted draw (see the module documentation).
fn weighted<'a>(candidates: &[&'a Location], chooser: &mut Chooser) -> Option<&'a Location> {
    let total: f64 = candidates.iter().rev().map(|l| draw_weight(l)).sum();
    if total > 0.0 {
        let r = chooser.next() * total;
        let mut sum = 0.0;
        for &l in candidates.iter().rev() {
            sum += draw_weight(l);
            if sum >= r {
                return Some(l);
            }
        }
        // Not reached with finite weights; the reference then takes the last one visited.
        return candidates.first().copied();
    }
    let n = candidates.len();
    let index = (chooser.next() * n as f64).round() as usize;
    candidates.get(index.min(n.checked_sub(1)?)).copied()
}

#[cfg(test)]
mod java_text_tests {
    use super::java_text;

    #[test]
    fn doubles_as_java_writes_them() {
        // The fast cases agree with the general rule (Rust's `{:?}` of an f64 writes what
        // Java's `String.valueOf` does for these).
        for x in [1.0, 0.0, -0.0, 0.5, 2.0, 1e-3] {
            assert_eq!(java_text(x), format!("{x:?}"), "{x}");
        }
        assert_eq!(java_text(1.0), "1.0");
        assert_eq!(java_text(-0.0), "-0.0");
        assert_eq!(java_text(f64::NAN), "NaN");
        assert_eq!(java_text(f64::NEG_INFINITY), "-Infinity");
    }
}
