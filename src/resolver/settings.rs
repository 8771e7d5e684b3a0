//! [`Settings`]: what a [`ResolverBuilder`](super::ResolverBuilder) fixes for the resolver's
//! lifetime, the [`TransportPreference`], and the procedure's bounds.

use std::time::Duration;

use crate::transport::TransportKind;
use crate::wire::Limits;

use super::urn::UrnSettings;

/// Which transport to try first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TransportPreference {
    /// UDP, then TCP on the same server when UDP times out, is not offered or is too small.
    #[default]
    Udp,
    /// TCP only.
    Tcp,
}

impl TransportPreference {
    /// The transports to try on one server, in order.
    pub(crate) fn kinds(self) -> &'static [TransportKind] {
        match self {
            TransportPreference::Udp => &[TransportKind::Udp, TransportKind::Tcp],
            TransportPreference::Tcp => &[TransportKind::Tcp],
        }
    }
}

/// Most referrals (302/303) and service-handle hops in one resolution (the reference client's
/// limit).
pub const MAX_REFERRALS: u32 = 40;
/// Deepest HS_SERV chain followed.
pub const MAX_SERVICE_DEPTH: usize = 20;
/// Longest HS_ALIAS chain followed.
pub const MAX_ALIAS_DEPTH: usize = 10;
/// Request expiration: now + 12 h, like the reference client.
pub(crate) const REQUEST_LIFETIME_SECS: u64 = 43_200;
/// Least time between two automatic root refreshes of one resolver (default).
pub const DEFAULT_ROOT_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// Settings fixed when the resolver is built (the defaults of
/// [`ResolverBuilder::new`](super::ResolverBuilder::new)).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Transport order.
    pub(crate) transport: TransportPreference,
    /// Certify every resolution (a query cannot turn it off).
    pub(crate) certify: bool,
    /// Default authoritative flag of a query.
    pub(crate) authoritative: bool,
    /// Default public-only flag of a query.
    pub(crate) public_only: bool,
    /// Overall deadline of one call.
    pub(crate) timeout: Duration,
    /// Lower bound of the hedge delay.
    pub(crate) hedge_min: Duration,
    /// Upper bound of the hedge delay.
    pub(crate) hedge_max: Duration,
    /// Most attempts running at once for one request.
    pub(crate) max_parallel: usize,
    /// Follow HS_ALIAS values.
    pub(crate) follow_aliases: bool,
    /// The CORDRA profile: CORDRA identifiers only, sent in their CORDRA form.
    pub(crate) strict_cordra: bool,
    /// Ask for a request digest (RD) and check it.
    pub(crate) request_digest: bool,
    /// Decode limits.
    pub(crate) limits: Limits,
    /// Least time between two automatic root refreshes.
    pub(crate) root_refresh_interval: Duration,
    /// Where URNs are resolved (RFC 2169).
    pub(crate) urn: UrnSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            transport: TransportPreference::Udp,
            certify: false,
            authoritative: false,
            public_only: true,
            timeout: Duration::from_secs(10),
            hedge_min: Duration::from_millis(50),
            hedge_max: Duration::from_millis(500),
            max_parallel: 3,
            follow_aliases: false,
            strict_cordra: false,
            request_digest: false,
            limits: Limits::default(),
            root_refresh_interval: DEFAULT_ROOT_REFRESH_INTERVAL,
            urn: UrnSettings::default(),
        }
    }
}
