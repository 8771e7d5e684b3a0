//! What the cache hands out ([`Record`]): the values of a kept answer, shared by every
//! request that uses them, with the location set they make on their own.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use handle_resolver::wire::{HandleValue, LocationGather, LocationSet};

use super::ttl;

/// Values as the cache hands them out: as the server sent them, and how long ago.
///
/// A record from the cache shares the values it keeps (an `Arc`, no copy a request), and
/// with them their `10320/loc` location set when it needs no other handle, worked out once
/// for every request that uses the record ([`Record::own_locations`]): on a warm redirect that
/// took 4,900 of 48,800 instructions, and the copy of the values 1,100 more (BENCHMARKS.md §18).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Record {
    kept: Arc<Kept>,
    /// The time since they were fetched (zero for a fresh resolution).
    pub age: Duration,
}

/// What a record shares with the others made from the same kept answer.
#[derive(Debug)]
pub(crate) struct Kept {
    pub(super) values: Vec<HandleValue>,
    /// The location set of `values` alone (`None` inside: they name other handles).
    locations: OnceLock<Option<LocationSet>>,
}

impl Kept {
    pub(crate) fn new(values: Vec<HandleValue>) -> Arc<Kept> {
        Arc::new(Kept {
            values,
            locations: OnceLock::new(),
        })
    }
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        self.age == other.age && self.kept.values == other.kept.values
    }
}

impl Eq for Record {}

impl Record {
    /// A record of the kept answer `kept`, fetched `age` ago.
    pub(super) fn shared(kept: Arc<Kept>, age: Duration) -> Record {
        Record { kept, age }
    }

    /// Values fetched just now.
    pub fn fresh(values: Vec<HandleValue>) -> Record {
        Record {
            kept: Kept::new(values),
            age: Duration::ZERO,
        }
    }

    /// The values (TTLs as sent: what the pages and the REST API show).
    pub fn values(&self) -> &[HandleValue] {
        &self.kept.values
    }

    /// The values, owned (copied when another record shares them).
    pub fn into_values(self) -> Vec<HandleValue> {
        match Arc::try_unwrap(self.kept) {
            Ok(kept) => kept.values,
            Err(shared) => shared.values.clone(),
        }
    }

    /// The values with their relative TTLs counted down by the age (for `Expires`).
    pub fn aged_values(&self) -> Vec<HandleValue> {
        ttl::aged(&self.kept.values, self.age)
    }

    /// The location set of the values when they name no other handle (no `include`, no
    /// namespace to consult), with their TTLs as sent (count them down by [`Record::age`]):
    /// made the first time a request asks, then shared by every record of the same kept
    /// answer. `None` when gathering needs other handles' values.
    pub fn own_locations(&self) -> Option<&LocationSet> {
        self.kept
            .locations
            .get_or_init(|| {
                let gather = LocationGather::new(&self.kept.values);
                gather.next_need().is_none().then(|| gather.finish())
            })
            .as_ref()
    }
}

/// What the location set a record may come to keep ([`Record::own_locations`], made after
/// the entry was weighed) takes for one of its values: the set is counted ahead, for every
/// value that can make locations, as 1,024 bytes and 16 per byte of its data. A counting
/// allocator measured 472 bytes for the set of one `URL` value (allowed: 1,024 and more) and
/// 2,220 for a `URL` and a two-location `10320/loc` (allowed: 2,048 and 16 per byte of the
/// two values' data, some 80 bytes at the least).
pub(super) fn location_allowance(v: &HandleValue) -> usize {
    if v.has_type("URL") || v.has_type("10320/loc") {
        v.data.len().saturating_mul(16).saturating_add(1024)
    } else {
        0
    }
}
