//! How long a record may be kept (its values' smallest TTL), and its values as seen some time
//! after they were fetched (relative TTLs counted down), for the `Expires` of an answer from
//! the cache.

use std::time::Duration;

use handle_resolver::wire::{HandleValue, Ttl};

use crate::redirect::MAX_TTL_SECONDS;

/// How long `values`, fetched when the clock read `now_unix` (seconds since the epoch), may
/// be kept: the smallest of their TTLs, relative ones from the fetch, absolute ones as they
/// are (one in the past: zero), none beyond [`MAX_TTL_SECONDS`] (the cap of the redirect's
/// `Expires`). A TTL of a kind other than relative or absolute, a negative one or zero:
/// zero, i.e. not kept. No values: `None` (the caller decides, as for "not found").
///
/// ```
/// use std::time::Duration;
/// use handle_gateway::cache::ttl::lifetime;
/// use handle_resolver::wire::{HandleValue, Ttl};
/// let mut a = HandleValue::new(1, "URL", "https://a.example/");
/// a.ttl = Ttl::Relative(600);
/// let mut b = HandleValue::new(2, "EMAIL", "x@a.example");
/// b.ttl = Ttl::Absolute(1_000_300);
/// assert_eq!(lifetime(&[a.clone()], 1_000_000), Some(Duration::from_secs(600)));
/// assert_eq!(lifetime(&[a, b], 1_000_000), Some(Duration::from_secs(300)));
/// ```
pub fn lifetime(values: &[HandleValue], now_unix: u64) -> Option<Duration> {
    let cap = Duration::from_secs(MAX_TTL_SECONDS);
    values
        .iter()
        .map(|v| match v.ttl {
            Ttl::Relative(s) => Duration::from_secs(u64::try_from(s).unwrap_or(0)),
            Ttl::Absolute(t) => Duration::from_secs(u64::from(t).saturating_sub(now_unix)),
            _ => Duration::ZERO,
        })
        .map(|d| d.min(cap))
        .min()
}

/// `values` as they stand `age` after they were fetched: each relative TTL less the whole
/// seconds of `age` (so that an answer's `Expires`, computed from now, falls where it fell
/// when they were fetched), absolute and other TTLs as they are.
///
/// ```
/// use std::time::Duration;
/// use handle_gateway::cache::ttl::aged;
/// use handle_resolver::wire::{HandleValue, Ttl};
/// let mut v = HandleValue::new(1, "URL", "https://a.example/");
/// v.ttl = Ttl::Relative(600);
/// let later = aged(&[v], Duration::from_millis(100_900));
/// assert_eq!(later[0].ttl, Ttl::Relative(500));
/// ```
pub fn aged(values: &[HandleValue], age: Duration) -> Vec<HandleValue> {
    values
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v.ttl = aged_ttl(v.ttl, age);
            v
        })
        .collect()
}

/// One TTL as it stands `age` after it was read (see [`aged`]).
pub fn aged_ttl(ttl: Ttl, age: Duration) -> Ttl {
    match ttl {
        Ttl::Relative(s) => {
            Ttl::Relative(s.saturating_sub(i32::try_from(age.as_secs()).unwrap_or(i32::MAX)))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(ttl: Ttl) -> HandleValue {
        let mut v = HandleValue::new(1, "URL", "https://a.example/");
        v.ttl = ttl;
        v
    }

    #[test]
    fn lifetimes() {
        let now = 1_800_000_000;
        let l = |t| lifetime(&[value(t)], now).map(|d| d.as_secs());
        assert_eq!(l(Ttl::Relative(0)), Some(0));
        assert_eq!(l(Ttl::Relative(-5)), Some(0));
        assert_eq!(l(Ttl::Relative(i32::MAX)), Some(MAX_TTL_SECONDS));
        assert_eq!(l(Ttl::Absolute(now as u32 - 1)), Some(0));
        assert_eq!(l(Ttl::Absolute(now as u32 + 7)), Some(7));
        assert_eq!(l(Ttl::Other { kind: 2, value: 60 }), Some(0));
        assert_eq!(lifetime(&[], now), None);
    }

    #[test]
    fn ageing_counts_relative_ttls_down_only() {
        let v = [
            value(Ttl::Relative(10)),
            value(Ttl::Absolute(5)),
            value(Ttl::Relative(i32::MIN)),
        ];
        let a = aged(&v, Duration::from_secs(30));
        assert_eq!(a[0].ttl, Ttl::Relative(-20));
        assert_eq!(a[1].ttl, Ttl::Absolute(5));
        assert_eq!(a[2].ttl, Ttl::Relative(i32::MIN));
        assert_eq!(aged(&v, Duration::ZERO), v.to_vec());
    }
}
