//! The per-client rate limit (a keyed GCRA limiter from `governor`): over it, `429 Too Many
//! Requests` with `Retry-After` in whole seconds, rounded up.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::RateLimit;

/// The limiter of every client's requests.
#[derive(Debug)]
pub struct ClientLimiter {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    clock: DefaultClock,
}

impl ClientLimiter {
    /// A limiter of `limit` per client (`None` when the rate is 0).
    pub fn new(limit: RateLimit) -> Option<ClientLimiter> {
        let rate = NonZeroU32::new(limit.per_second)?;
        let burst = NonZeroU32::new(limit.burst).unwrap_or(rate);
        Some(ClientLimiter {
            limiter: RateLimiter::keyed(Quota::per_second(rate).allow_burst(burst)),
            clock: DefaultClock::default(),
        })
    }

    /// `Ok` when `client` may send a request now, else the time to wait.
    pub fn check(&self, client: IpAddr) -> Result<(), Duration> {
        self.limiter
            .check_key(&client)
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// Forgets the clients whose state is back to full (called now and then, so that the
    /// table does not grow with every address ever seen).
    pub fn forget_idle(&self) {
        self.limiter.retain_recent();
    }
}

/// A wait as `Retry-After` seconds: rounded up, at least 1.
pub fn retry_after(wait: Duration) -> u64 {
    let s = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    s.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_the_burst_waits() {
        let l = ClientLimiter::new(RateLimit {
            per_second: 1,
            burst: 2,
        })
        .unwrap();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(l.check(a).is_ok() && l.check(a).is_ok());
        let wait = l.check(a).unwrap_err();
        assert_eq!(retry_after(wait), 1);
        assert!(l.check("192.0.2.2".parse().unwrap()).is_ok());
        assert_eq!(retry_after(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after(Duration::ZERO), 1);
        l.forget_idle();
    }
}
