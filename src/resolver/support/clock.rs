//! The wall clock the resolver reads (request expiration, response expiry check, absolute
//! TTLs), injectable so tests can replay captures recorded at another time.
//!
//! Durations (timeouts, hedging, cache lifetimes) use `tokio::time`, so tests can pause them.

use std::fmt::Debug;
use std::time::{SystemTime, UNIX_EPOCH};

/// Source of the current time in seconds since the Unix epoch.
pub trait Clock: Send + Sync + Debug + 'static {
    /// Seconds since 1970-01-01T00:00:00Z.
    fn unix_now(&self) -> u64;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn unix_now(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }
}

/// A clock stopped at a given time (tests, capture replay).
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub u64);

impl Clock for FixedClock {
    fn unix_now(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_is_after_2024_and_fixed_clock_is_fixed() {
        assert!(SystemClock.unix_now() > 1_700_000_000);
        assert_eq!(FixedClock(42).unix_now(), 42);
    }
}
