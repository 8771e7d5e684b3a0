//! HS_ALIAS as the reference's proxy follows it (Handle.Net 9.2.0, `HDLProxy.doResolution`):
//! up to 20 hops to the final handle, a longer chain or a loop being "Alias chain too
//! long"; the expiry of the answer is that of the alias values followed.

use handle_resolver::wire::{ConsultedTtl, HandleValue};

use crate::cache::{ttl, LookupError, Record};
use crate::upstream::Lookup;

/// The most HS_ALIAS hops followed; one more is "Alias chain too long".
pub const MAX_HOPS: usize = 20;

/// Where an alias chain ends.
#[derive(Debug)]
#[non_exhaustive]
pub enum AliasEnd {
    /// The final handle (no HS_ALIAS value) and its values.
    Final {
        /// The final handle, as named by the last alias.
        handle: String,
        /// Its values.
        record: Record,
        /// The TTLs of the alias values followed (counted down by their records' age).
        ttls: Vec<ConsultedTtl>,
    },
    /// More than [`MAX_HOPS`] hops (a loop too), `handle` the last one reached.
    TooLong {
        /// The last handle resolved, which names one more alias.
        handle: String,
    },
    /// A handle of the chain cannot be resolved.
    Failed {
        /// The handle that cannot be resolved.
        handle: String,
        /// Why.
        error: LookupError,
    },
}

/// The target of the first HS_ALIAS value, when there is one.
pub fn alias_target(values: &[HandleValue]) -> Option<(String, &HandleValue)> {
    values
        .iter()
        .find(|v| v.is_type("HS_ALIAS"))
        .map(|v| (String::from_utf8_lossy(&v.data).trim().to_owned(), v))
}

/// Follows the aliases of `first` (the values of the handle asked for).
pub async fn follow(lookup: &Lookup<'_>, first: Record) -> AliasEnd {
    let mut ttls = Vec::new();
    let mut current = first;
    let mut handle = String::new();
    for hop in 0..=MAX_HOPS {
        let Some((target, value)) = alias_target(current.values()) else {
            return AliasEnd::Final {
                handle,
                record: current,
                ttls,
            };
        };
        if hop == MAX_HOPS {
            break;
        }
        ttls.push(ConsultedTtl::new(
            ttl::aged_ttl(value.ttl, current.age),
            false,
        ));
        match lookup.values(&target, &[], &[]).await {
            Ok(v) => current = v,
            Err(error) => {
                return AliasEnd::Failed {
                    handle: target,
                    error,
                }
            }
        }
        handle = target;
    }
    AliasEnd::TooLong { handle }
}
