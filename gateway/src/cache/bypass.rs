//! Who may bypass the cache (a client in `bypass_from`, or one carrying `bypass_token`), and
//! how often a bypass may reach the upstream (`bypass_per_second`, all clients together, a
//! GCRA limiter from the `governor` crate).

use std::net::IpAddr;
use std::num::NonZeroU32;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use ipnet::IpNet;

use crate::config::{CacheSettings, Secret};

/// The request header that carries the bypass token.
pub const TOKEN_HEADER: &str = "X-Bypass-Token";

/// The bypass rules and their rate limit.
pub struct Bypass {
    from: Vec<IpNet>,
    token: Option<Secret>,
    limiter: DefaultDirectRateLimiter,
}

impl std::fmt::Debug for Bypass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bypass")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Bypass {
    /// The rules of `settings`.
    pub fn new(settings: &CacheSettings) -> Bypass {
        let n = NonZeroU32::new(settings.bypass_per_second).unwrap_or(NonZeroU32::MIN);
        Bypass {
            from: settings.bypass_from.clone(),
            token: settings.bypass_token.clone(),
            limiter: RateLimiter::direct(Quota::per_second(n)),
        }
    }

    /// True when a request from `client`, carrying `token` (the `X-Bypass-Token` header), may
    /// bypass the cache.
    pub fn trusts(&self, client: IpAddr, token: Option<&str>) -> bool {
        let client = match client {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(client, IpAddr::V4),
            v4 => v4,
        };
        self.from.iter().any(|net| net.contains(&client))
            || matches!((&self.token, token), (Some(secret), Some(given)) if secret.matches(given.trim()))
    }

    /// True when one more bypass may query the upstream now (and counts it).
    pub fn admit(&self) -> bool {
        self.limiter.check().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_tokens_and_the_limit() {
        let settings = CacheSettings {
            bypass_from: vec!["127.0.0.0/8".parse().unwrap()],
            bypass_token: Some(Secret::new("t0k")),
            bypass_per_second: 2,
            ..CacheSettings::default()
        };
        let b = Bypass::new(&settings);
        assert!(b.trusts("127.0.0.9".parse().unwrap(), None));
        assert!(b.trusts("::ffff:127.0.0.1".parse().unwrap(), None));
        assert!(!b.trusts("192.0.2.1".parse().unwrap(), None));
        assert!(!b.trusts("192.0.2.1".parse().unwrap(), Some("t0")));
        assert!(b.trusts("192.0.2.1".parse().unwrap(), Some("t0k")));
        assert!(b.admit() && b.admit());
        assert!(
            !b.admit(),
            "a third query within the second is over the limit"
        );
    }
}
