//! [`Settings`]: what a [`ResolverBuilder`](super::ResolverBuilder) fixes for the resolver's
//! lifetime, the [`TransportPreference`], and the procedure's bounds.

use std::time::Duration;

use crate::transport::TransportKind;
use crate::wire::Limits;

/// Which transports to use on a server, in which order (each is used only when the server's
/// site record offers it; the next is tried when one fails in a way the next may not:
/// silence, a refused or reset connection, a request too large for UDP).
/// [`ResolverBuilder::transport_order`](crate::ResolverBuilder::transport_order) sets any
/// other order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TransportPreference {
    /// UDP, then TCP, then the native protocol over HTTP, then HTTPS (the reference client's
    /// order, PROTOCOL.md §8.4; HTTP(S) with the `http` feature).
    #[default]
    Udp,
    /// TCP only.
    Tcp,
    /// The native protocol over HTTP, then HTTPS, only (feature `http`).
    Http,
}

impl TransportPreference {
    /// Its name, as [`FromStr`](std::str::FromStr) reads it: `udp`, `tcp` or `http`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportPreference::Udp => "udp",
            TransportPreference::Tcp => "tcp",
            TransportPreference::Http => "http",
        }
    }

    /// The transports to try on one server, in order.
    pub(crate) fn kinds(self) -> &'static [TransportKind] {
        use TransportKind::{Http, Https, Tcp, Udp};
        match self {
            TransportPreference::Udp => &[Udp, Tcp, Http, Https],
            TransportPreference::Tcp => &[Tcp],
            TransportPreference::Http => &[Http, Https],
        }
    }
}

/// A name that is not `udp`, `tcp` or `http`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transport {0:?}: \"udp\" (then TCP, then HTTP), \"tcp\" or \"http\"")]
pub struct UnknownTransport(pub String);

impl std::str::FromStr for TransportPreference {
    type Err = UnknownTransport;

    /// `udp`, `tcp` or `http` (ASCII case ignored), as `resolve --transport` and Python's
    /// `transport=` take them.
    ///
    /// ```
    /// use handle_resolver::TransportPreference;
    ///
    /// assert_eq!("tcp".parse(), Ok(TransportPreference::Tcp));
    /// assert!("quic".parse::<TransportPreference>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            TransportPreference::Udp,
            TransportPreference::Tcp,
            TransportPreference::Http,
        ]
        .into_iter()
        .find(|t| t.as_str().eq_ignore_ascii_case(s))
        .ok_or_else(|| UnknownTransport(s.to_string()))
    }
}

/// `kinds` without repeats, and without HTTP(S) when the `http` feature is off.
pub(crate) fn usable(kinds: &[TransportKind]) -> Vec<TransportKind> {
    let mut out: Vec<TransportKind> = Vec::with_capacity(kinds.len());
    for &kind in kinds {
        let built =
            cfg!(feature = "http") || matches!(kind, TransportKind::Udp | TransportKind::Tcp);
        if built && !out.contains(&kind) {
            out.push(kind);
        }
    }
    out
}

/// Most referrals (302/303) and service-handle hops in one resolution (the reference client's
/// limit).
pub(crate) const MAX_REFERRALS: u32 = 40;
/// Deepest HS_SERV chain followed.
pub(crate) const MAX_SERVICE_DEPTH: usize = 20;
/// Most HS_ALIAS hops followed: the handle.net proxy's 20 (it answers a longer chain as
/// too long).
pub(crate) const MAX_ALIAS_DEPTH: usize = 20;
/// Request expiration: now + 12 h, like the reference client.
pub(crate) const REQUEST_LIFETIME_SECS: u64 = 43_200;
/// With a trust root, root information older than this is refreshed (in the background, on
/// the next request), as the reference client does.
pub(crate) const ROOT_MAX_AGE: Duration = Duration::from_secs(23 * 3600);
/// Least time between two automatic root refreshes of one resolver (default).
pub(crate) const DEFAULT_ROOT_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// Settings fixed when the resolver is built (the defaults of
/// [`ResolverBuilder::new`](super::ResolverBuilder::new)).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Transport order (no kind twice).
    pub(crate) transports: Vec<TransportKind>,
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
    /// The key(s) a refreshed root must chain up to (`None`: refreshes are not verified).
    pub(crate) trust_root: Option<crate::trust::TrustRoot>,
    /// Where a verified refresh writes the root records.
    pub(crate) persist_root: Option<std::path::PathBuf>,
    /// Who the resolver is when a server challenges.
    pub(crate) authenticator: Option<std::sync::Arc<crate::auth::Authenticator>>,
    /// Requests that need the identity go in sessions with servers.
    pub(crate) sessions: bool,
    /// Requests in flight in one session at most.
    pub(crate) session_window: usize,
    /// Requests in flight to one server at most, any transport (`None`: no bound).
    pub(crate) max_in_flight_per_server: Option<usize>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            transports: usable(TransportPreference::Udp.kinds()),
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
            trust_root: None,
            persist_root: None,
            authenticator: None,
            sessions: true,
            session_window: super::peers::DEFAULT_SESSION_WINDOW,
            max_in_flight_per_server: None,
        }
    }
}

/// The HUL resolver asked for `urn-3` URNs unless another is set (Harvard's name resolution
/// service).
pub(crate) const DEFAULT_URN3_RESOLVER_URL: &str = "http://nrs.harvard.edu";

/// Where URNs are resolved (part of the resolver's `Settings`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UrnSettings {
    /// Asked for every URN when set (`--urn-resolver`).
    pub(crate) resolver: Option<String>,
    /// Asked for `urn-3` URNs otherwise.
    pub(crate) urn3_resolver: String,
    /// Most bytes of an answer.
    pub(crate) max_body: usize,
}

impl Default for UrnSettings {
    fn default() -> Self {
        Self {
            resolver: None,
            urn3_resolver: DEFAULT_URN3_RESOLVER_URL.to_string(),
            max_body: crate::wire::uri_list::MAX_URI_LIST_BYTES,
        }
    }
}
