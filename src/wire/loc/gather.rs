//! Gathering a handle's locations as the handle.net proxy does (Handle.Net 9.2.0, the
//! `Location` handler's `determineLocContext`, `processIncludes` and
//! `resolveNamespaceLocations`), with the values of other handles it names asked of the
//! caller: sans-IO, a [`LocationGather`] says which handle it needs next
//! ([`LocationGather::next_need`]), the caller resolves it and hands the values back
//! ([`LocationGather::provide`]), until [`LocationGather::finish`] builds the
//! [`LocationSet`].
//!
//! The order of the locations: those of the handle's own `10320/loc` values, then those of
//! the handles they include (`include` attribute and `<include>` elements, and the location
//! handles of the prefixes named by `includeNamespace`, recursively up to depth 20), then the
//! handle's `URL` values as legacy locations (unless `no_legacy`), then the namespace
//! locations: the location handles of the prefixes named by `overridePrefix`, else the
//! handles named by `nshdl` (unless `no_nslocs`). The handle's own prefix `HS_NAMESPACE` is
//! not consulted, as the reference's embedded proxy does not. The `10320/links` values, then
//! the location lists themselves, give the `Link` headers; the `10320/headers` values the
//! extra response headers.

use std::collections::HashMap;

use quick_xml::events::Event;

use super::reading::{java_double, java_switch};
use super::select::{java_text, DEFAULT_CHOOSE_BY};
use super::{methods, Location, LocationSet, Locations};
use crate::wire::{HandleValue, Ttl};

/// Includes deeper than this are not followed (the reference's limit).
const MAX_INCLUDE_DEPTH: usize = 20;

/// A handle whose values the gathering needs: resolve it (public values only, as the proxy
/// does) and [`provide`](LocationGather::provide) them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LocationNeed {
    /// The `10320/loc`, `10320/links` and `10320/headers` values of this handle (an
    /// included or namespace location handle).
    Locations(String),
    /// The `HS_NAMESPACE` values of this prefix handle (`0.NA/<prefix>`).
    Namespace(String),
}

impl LocationNeed {
    /// The handle to resolve.
    pub fn handle(&self) -> &str {
        match self {
            LocationNeed::Locations(h) | LocationNeed::Namespace(h) => h,
        }
    }

    /// The types the proxy asks for (a resolver may ask for them only).
    pub fn types(&self) -> &'static [&'static str] {
        match self {
            LocationNeed::Locations(_) => &["10320/loc", "10320/links", "10320/headers"],
            LocationNeed::Namespace(_) => &["HS_NAMESPACE"],
        }
    }
}

/// The TTL of a value the choice consulted, for the redirect's `Expires`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsultedTtl {
    /// The value's TTL.
    pub ttl: Ttl,
    /// True for a value of another handle (included, namespace), which the reference
    /// proxy caches for at most an hour.
    pub other_handle: bool,
}

impl ConsultedTtl {
    /// The TTL of a value consulted: of the handle itself, or (`other_handle`) of an
    /// included or namespace handle.
    pub fn new(ttl: Ttl, other_handle: bool) -> ConsultedTtl {
        ConsultedTtl { ttl, other_handle }
    }
}

/// A handle's locations being gathered (see the module documentation).
///
/// ```
/// use handle_resolver::wire::{HandleValue, LocationGather, LocationNeed};
/// let own = [HandleValue::new(1, "10320/loc",
///     r#"<locations include="20.500.1/shared"><location href="https://a.example/"/></locations>"#)];
/// let mut gather = LocationGather::new(&own);
/// let need = gather.next_need().unwrap();
/// assert_eq!(need, LocationNeed::Locations("20.500.1/shared".into()));
/// gather.provide(&need, Some(vec![HandleValue::new(1, "10320/loc",
///     r#"<locations><location href="https://b.example/"/></locations>"#)]));
/// assert_eq!(gather.next_need(), None);
/// let set = gather.finish();
/// let hrefs: Vec<_> = set.locations.iter().filter_map(|l| l.href()).collect();
/// assert_eq!(hrefs, ["https://a.example/", "https://b.example/"]);
/// ```
#[derive(Debug, Clone)]
pub struct LocationGather {
    values: Vec<HandleValue>,
    answers: HashMap<LocationNeed, Option<Vec<HandleValue>>>,
    /// The set of the last run of [`LocationGather::next_need`] that needed nothing more,
    /// which [`LocationGather::finish`] returns without running again (a run cost the
    /// gateway's warm redirect 3,900 of its 63,000 instructions, BENCHMARKS.md §18).
    complete: std::sync::OnceLock<LocationSet>,
}

/// The location values of one or more other handles (the reference's `HandleLocationInfo`).
#[derive(Debug, Clone, Default)]
struct Info {
    loc: Vec<Locations>,
    links: Vec<Locations>,
    headers: Vec<String>,
}

impl Info {
    fn merge(&mut self, other: Info) {
        self.loc.extend(other.loc);
        self.links.extend(other.links);
        self.headers.extend(other.headers);
    }

    fn is_empty(&self) -> bool {
        self.loc.is_empty() && self.links.is_empty() && self.headers.is_empty()
    }
}

/// The settings the `<locations>` attributes make, each from the first list that sets it.
#[derive(Debug, Default)]
struct Settings {
    no_legacy: Option<bool>,
    no_nslocs: Option<bool>,
    suppress_ns_headers: Option<bool>,
    suppress_ns_headers_if_local: Option<bool>,
    url_weight: Option<f64>,
    url_subtype_weight: Option<f64>,
    override_prefixes: Vec<String>,
}

impl Settings {
    fn adjust(&mut self, lists: &[Locations]) {
        for l in lists {
            let flag = |v: &mut Option<bool>, name: &str| {
                if v.is_none() {
                    *v = l.attribute(name).map(java_switch);
                }
            };
            flag(&mut self.no_nslocs, "no_nslocs");
            flag(&mut self.no_legacy, "no_legacy");
            flag(&mut self.suppress_ns_headers, "suppressNsHeaders");
            flag(
                &mut self.suppress_ns_headers_if_local,
                "suppressNsHeadersIfLocalHeaders",
            );
            let number = |v: &mut Option<f64>, name: &str| {
                if v.is_none() {
                    *v = l.attribute(name).map(|t| java_double(t).unwrap_or(0.0));
                }
            };
            number(&mut self.url_weight, "urlWeight");
            number(&mut self.url_subtype_weight, "urlSubtypeWeight");
            if let Some(p) = l.attribute("overridePrefix") {
                self.override_prefixes.push(p.to_owned());
            }
        }
    }
}

/// What one computation collects; a missing answer stops it with the need.
struct Run<'a> {
    gather: &'a LocationGather,
    /// When true, a handle not provided counts as one without location values.
    lenient: bool,
    ttls: Vec<ConsultedTtl>,
    /// Handles resolved in this computation (the reference's per-request cache: a handle's
    /// TTLs count once).
    seen: HashMap<LocationNeed, Option<Info>>,
}

/// The `<locs>` handles of an `HS_NAMESPACE` text (direct children of its root).
pub(super) fn namespace_locs(text: &str) -> Vec<String> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut depth = 0usize;
    let mut current: Option<String> = None;
    let mut out = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                if depth == 1 && e.name().as_ref() == b"locs" {
                    current = Some(String::new());
                }
                depth += 1;
            }
            Ok(Event::Empty(e)) => {
                if depth == 1 && e.name().as_ref() == b"locs" {
                    out.push(String::new());
                }
            }
            Ok(Event::Text(t)) => {
                if let (Some(c), Ok(t)) = (current.as_mut(), t.unescape()) {
                    c.push_str(&t);
                }
            }
            Ok(Event::End(_)) => {
                depth = depth.saturating_sub(1);
                if depth == 1 {
                    if let Some(c) = current.take() {
                        out.push(c.trim().to_owned());
                    }
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
    }
    out
}

impl Run<'_> {
    fn answer(&self, need: &LocationNeed) -> Result<Option<&[HandleValue]>, LocationNeed> {
        match self.gather.answers.get(need) {
            Some(v) => Ok(v.as_deref()),
            None if self.lenient => Ok(None),
            None => Err(need.clone()),
        }
    }

    /// The location values of one handle (`resolveLocations`).
    fn locations_of(&mut self, handle: &str) -> Result<Option<Info>, LocationNeed> {
        let need = LocationNeed::Locations(handle.to_owned());
        if let Some(info) = self.seen.get(&need) {
            return Ok(info.clone());
        }
        let values = self.answer(&need)?.map(<[HandleValue]>::to_vec);
        let mut info = Info::default();
        for v in values.iter().flatten() {
            let text = String::from_utf8_lossy(&v.data);
            let consulted = ConsultedTtl {
                ttl: v.ttl,
                other_handle: true,
            };
            if v.has_type("10320/loc") {
                if let Ok(l) = Locations::parse(&text) {
                    self.ttls.push(consulted);
                    info.loc.push(l);
                }
            } else if v.has_type("10320/links") {
                if let Ok(l) = Locations::parse(&text) {
                    self.ttls.push(consulted);
                    info.links.push(l);
                }
            } else if v.has_type("10320/headers") {
                self.ttls.push(consulted);
                info.headers.push(text.into_owned());
            }
        }
        let info = (!info.is_empty()).then_some(info);
        self.seen.insert(need, info.clone());
        Ok(info)
    }

    fn locations_of_all(&mut self, handles: &[String]) -> Result<Option<Info>, LocationNeed> {
        let mut all = Info::default();
        let mut found = false;
        for h in handles {
            if let Some(info) = self.locations_of(h)? {
                all.merge(info);
                found = true;
            }
        }
        Ok(found.then_some(all))
    }

    /// The location values of the `<locs>` handles of these prefixes' `HS_NAMESPACE`.
    fn via_namespaces(&mut self, prefixes: &[String]) -> Result<Option<Info>, LocationNeed> {
        let mut all = Info::default();
        let mut found = false;
        for p in prefixes {
            let need = LocationNeed::Namespace(p.clone());
            let Some(values) = self.answer(&need)?.map(<[HandleValue]>::to_vec) else {
                continue;
            };
            let mut locs = None;
            for v in values.iter().filter(|v| v.is_type("HS_NAMESPACE")) {
                self.ttls.push(ConsultedTtl {
                    ttl: v.ttl,
                    other_handle: true,
                });
                if locs.is_none() {
                    locs = Some(namespace_locs(&String::from_utf8_lossy(&v.data)));
                }
            }
            let Some(locs) = locs.filter(|l| !l.is_empty()) else {
                continue;
            };
            if let Some(info) = self.locations_of_all(&locs)? {
                all.merge(info);
                found = true;
            }
        }
        Ok(found.then_some(all))
    }

    /// `processIncludes`: the included lists' locations, links and headers, recursively.
    #[allow(clippy::too_many_arguments)]
    fn includes(
        &mut self,
        lists: &[Locations],
        locations: &mut Vec<Location>,
        links_from_locs: &mut Vec<Locations>,
        links: &mut Vec<Locations>,
        headers: &mut Vec<String>,
        settings: &mut Settings,
        depth: usize,
    ) -> Result<(), LocationNeed> {
        if depth > MAX_INCLUDE_DEPTH {
            return Ok(());
        }
        let mut combined = Info::default();
        let mut found = false;
        for l in lists {
            if !l.include_namespaces.is_empty() {
                if let Some(info) = self.via_namespaces(&l.include_namespaces)? {
                    combined.merge(info);
                    found = true;
                }
            }
            if !l.includes.is_empty() {
                if let Some(info) = self.locations_of_all(&l.includes)? {
                    combined.merge(info);
                    found = true;
                }
            }
        }
        if found {
            locations.extend(
                combined
                    .loc
                    .iter()
                    .flat_map(|l| l.locations.iter().cloned()),
            );
            settings.adjust(&combined.loc);
            self.includes(
                &combined.loc,
                locations,
                links_from_locs,
                links,
                headers,
                settings,
                depth + 1,
            )?;
            links_from_locs.extend(combined.loc);
            links.extend(combined.links);
            headers.extend(combined.headers);
        }
        Ok(())
    }

    fn run(&mut self) -> Result<LocationSet, LocationNeed> {
        let values = &self.gather.values;
        let mut own = Vec::new();
        let mut links = Vec::new();
        let mut headers = Vec::new();
        let mut invalid = Vec::new();
        let mut typed = false;
        for v in values {
            let text = String::from_utf8_lossy(&v.data);
            let consulted = ConsultedTtl {
                ttl: v.ttl,
                other_handle: false,
            };
            if v.has_type("10320/loc") {
                typed = true;
                self.ttls.push(consulted);
                match Locations::parse(&text) {
                    Ok(l) => own.push(l),
                    Err(e) => invalid.push(e),
                }
            } else if v.has_type("10320/links") {
                typed = true;
                self.ttls.push(consulted);
                match Locations::parse(&text) {
                    Ok(l) => links.push(l),
                    Err(e) => invalid.push(e),
                }
            } else if v.has_type("10320/headers") {
                typed = true;
                self.ttls.push(consulted);
                headers.push(text.into_owned());
            }
        }
        let mut links_from_locs = own.clone();
        let mut settings = Settings::default();
        settings.adjust(&own);
        let mut locations: Vec<Location> = own
            .iter()
            .flat_map(|l| l.locations.iter().cloned())
            .collect();
        self.includes(
            &own,
            &mut locations,
            &mut links_from_locs,
            &mut links,
            &mut headers,
            &mut settings,
            0,
        )?;
        let local_headers = !links.is_empty() || !headers.is_empty();
        let mut ns_lists = Vec::new();
        let mut ns_locations = Vec::new();
        if settings.no_nslocs != Some(true) {
            let info = if settings.override_prefixes.is_empty() {
                let nshdl: Vec<String> = own
                    .iter()
                    .filter_map(|l| l.attribute("nshdl").map(str::to_owned))
                    .collect();
                if nshdl.is_empty() {
                    None
                } else {
                    self.locations_of_all(&nshdl)?
                }
            } else {
                let prefixes = settings.override_prefixes.clone();
                self.via_namespaces(&prefixes)?
            };
            if let Some(info) = info {
                ns_locations.extend(info.loc.iter().flat_map(|l| l.locations.iter().cloned()));
                settings.adjust(&info.loc);
                let (mut ns_from_locs, mut ns_links, mut ns_headers) = (vec![], vec![], vec![]);
                self.includes(
                    &info.loc,
                    &mut ns_locations,
                    &mut ns_from_locs,
                    &mut ns_links,
                    &mut ns_headers,
                    &mut settings,
                    0,
                )?;
                let suppress = settings.suppress_ns_headers == Some(true)
                    || (local_headers && settings.suppress_ns_headers_if_local == Some(true));
                if !suppress {
                    links_from_locs.extend(info.loc.iter().cloned());
                    links.extend(info.links);
                    headers.extend(info.headers);
                    links_from_locs.extend(ns_from_locs);
                    links.extend(ns_links);
                    headers.extend(ns_headers);
                }
                ns_lists = info.loc;
            }
        }
        links.extend(links_from_locs);
        let legacy_only = !typed && ns_locations.is_empty();
        if legacy_only {
            let chosen = legacy_choice(values);
            if let Some(v) = chosen {
                self.ttls.push(ConsultedTtl {
                    ttl: v.ttl,
                    other_handle: false,
                });
            }
            locations = chosen.map(|v| legacy(v, 1.0)).into_iter().collect();
        } else {
            if settings.no_legacy != Some(true) {
                let url_weight =
                    settings
                        .url_weight
                        .unwrap_or(if own.is_empty() { 1.0 } else { 0.0 });
                let mut subtype_weight = settings.url_subtype_weight.unwrap_or(0.0);
                let plain_url = values.iter().any(|v| v.is_type("URL"));
                if !plain_url {
                    subtype_weight = url_weight;
                }
                for v in values.iter().filter(|v| v.has_type("URL")) {
                    self.ttls.push(ConsultedTtl {
                        ttl: v.ttl,
                        other_handle: false,
                    });
                    let weight = if plain_url && v.is_type("URL") {
                        url_weight
                    } else {
                        subtype_weight
                    };
                    locations.push(legacy(v, weight));
                }
            }
            locations.extend(ns_locations);
        }
        let set_attributes: Vec<Vec<(String, String)>> = own
            .iter()
            .chain(ns_lists.iter())
            .map(|l| l.attributes.clone())
            .collect();
        let first = |name: &str| {
            set_attributes
                .iter()
                .find_map(|a| super::attribute(a, name))
                .map(methods)
        };
        let choose_by = first("choose_by")
            .or_else(|| first("chooseby"))
            .unwrap_or_else(|| DEFAULT_CHOOSE_BY.iter().map(|m| m.to_string()).collect());
        let includes = own.iter().flat_map(|l| l.includes.clone()).collect();
        Ok(LocationSet {
            choose_by,
            locations,
            legacy_only,
            includes,
            set_attributes,
            links,
            headers,
            ttls: std::mem::take(&mut self.ttls),
            invalid,
        })
    }
}

/// The legacy-only choice: the first `URL` (or `0.TYPE/URL`) value in the server's order,
/// else the first subtype of either.
fn legacy_choice(values: &[HandleValue]) -> Option<&HandleValue> {
    values
        .iter()
        .find(|v| v.is_type("URL") || v.is_type("0.TYPE/URL"))
        .or_else(|| {
            values
                .iter()
                .find(|v| v.has_type("URL") || v.has_type("0.TYPE/URL"))
        })
}

/// A URL value as a legacy location of `weight`.
fn legacy(value: &HandleValue, weight: f64) -> Location {
    Location::new([
        ("href", String::from_utf8_lossy(&value.data).into_owned()),
        ("weight", java_text(weight)),
        ("mode", "legacy".to_owned()),
    ])
}

impl LocationGather {
    /// Starts from a handle's values (in the server's order).
    pub fn new(values: &[HandleValue]) -> LocationGather {
        LocationGather {
            values: values.to_vec(),
            answers: HashMap::new(),
            complete: std::sync::OnceLock::new(),
        }
    }

    /// The next handle whose values are needed, `None` when none is.
    pub fn next_need(&self) -> Option<LocationNeed> {
        match self.compute(false) {
            Ok(set) => {
                // A strict run that needed nothing: the lenient run of `finish` would find
                // the same set (it differs only in the answers it lacks).
                let _ = self.complete.set(set);
                None
            }
            Err(need) => Some(need),
        }
    }

    /// The values of `need`'s handle, `None` when it cannot be resolved (not found, an
    /// error): it then adds nothing.
    pub fn provide(&mut self, need: &LocationNeed, values: Option<Vec<HandleValue>>) {
        self.answers.insert(need.clone(), values);
        self.complete = std::sync::OnceLock::new();
    }

    /// The set, a handle not provided counting as one without location values.
    pub fn finish(mut self) -> LocationSet {
        if let Some(set) = self.complete.take() {
            return set;
        }
        self.compute(true).unwrap_or_else(|_| LocationSet {
            // Not reached: a lenient run needs nothing.
            choose_by: Vec::new(),
            locations: Vec::new(),
            legacy_only: true,
            includes: Vec::new(),
            set_attributes: Vec::new(),
            links: Vec::new(),
            headers: Vec::new(),
            ttls: Vec::new(),
            invalid: Vec::new(),
        })
    }

    fn compute(&self, lenient: bool) -> Result<LocationSet, LocationNeed> {
        Run {
            gather: self,
            lenient,
            ttls: Vec::new(),
            seen: HashMap::new(),
        }
        .run()
    }
}

#[cfg(test)]
#[path = "gather_tests.rs"]
mod tests;
