//! A handle's locations gathered with the handles its `10320/loc` values name (`include`,
//! `includeNamespace`, `nshdl`, `overridePrefix`): the library's sans-IO
//! [`LocationGather`] asks, this module resolves.

use std::collections::HashSet;
use std::time::Duration;

use handle_resolver::wire::{ConsultedTtl, HandleValue, LocationGather, LocationSet};

use crate::cache::{ttl, Record};
use crate::upstream::Lookup;

/// At most this many other handles are resolved for one request (the reference follows
/// includes 20 deep; this bounds a list that names very many).
pub const MAX_LOOKUPS: usize = 64;

/// A record's location set, and how old the TTLs it lists are: [`Located::set`] for the
/// locations, [`Located::aged_ttls`] for `Expires` (a kept set's own `ttls` are as the
/// values were sent).
#[derive(Debug)]
#[non_exhaustive]
pub enum Located<'r> {
    /// The record's own set (its values name no other handle), kept with it by the cache:
    /// its TTLs as sent, read `age` ago.
    Kept {
        /// The set.
        set: &'r LocationSet,
        /// The record's age.
        age: Duration,
    },
    /// Gathered for this request with the handles the values name, TTLs counted down.
    Gathered(LocationSet),
}

impl Located<'_> {
    /// The locations, choice settings, links and headers (not its TTLs: see
    /// [`Located::aged_ttls`]).
    pub fn set(&self) -> &LocationSet {
        match self {
            Located::Kept { set, .. } => set,
            Located::Gathered(set) => set,
        }
    }

    /// The TTLs of the values consulted, as they stand now (for `Expires`).
    pub fn aged_ttls(&self) -> impl Iterator<Item = ConsultedTtl> + '_ {
        let age = match self {
            Located::Kept { age, .. } => *age,
            Located::Gathered(_) => Duration::ZERO,
        };
        self.set()
            .ttls
            .iter()
            .map(move |t| ConsultedTtl::new(ttl::aged_ttl(t.ttl, age), t.other_handle))
    }
}

/// The location set of `record`: the one the cache keeps with it when its values name no
/// other handle, else gathered with every handle they name ([`gather`]).
pub async fn locate<'r>(lookup: &Lookup<'_>, record: &'r Record) -> Located<'r> {
    match record.own_locations() {
        Some(set) => Located::Kept {
            set,
            age: record.age,
        },
        None => Located::Gathered(gather(lookup, &record.aged_values()).await),
    }
}

/// The location set of `values` with every handle it names resolved (a handle that cannot
/// be resolved adds nothing, as with the reference). `values`, and those of the other
/// handles, with their relative TTLs counted down by their age in the cache
/// ([`crate::cache::Record::aged_values`]), so that the set's TTLs say what remains.
pub async fn gather(lookup: &Lookup<'_>, values: &[HandleValue]) -> LocationSet {
    let mut gather = LocationGather::new(values);
    let mut asked = HashSet::new();
    while let Some(need) = gather.next_need() {
        if asked.len() >= MAX_LOOKUPS || !asked.insert(need.clone()) {
            break;
        }
        let types: Vec<String> = need.types().iter().map(|t| t.to_string()).collect();
        let found = lookup
            .values(need.handle(), &types, &[])
            .await
            .ok()
            .map(|r| r.aged_values());
        gather.provide(&need, found);
    }
    gather.finish()
}

/// True when the proxy redirects for these values: one has a `URL` or `10320/loc` type
/// (or a subtype of either; the reference's `Location.canRedirect`).
pub fn can_redirect(values: &[HandleValue]) -> bool {
    values
        .iter()
        .any(|v| v.has_type("URL") || v.has_type("10320/loc"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_types() {
        let v = |t: &str| HandleValue::new(1, t.to_owned(), "x");
        assert!(can_redirect(&[v("URL.pdf")]));
        assert!(can_redirect(&[v("10320/loc")]));
        assert!(!can_redirect(&[
            v("0.TYPE/URL"),
            v("10320/links"),
            v("URLX")
        ]));
    }
}
