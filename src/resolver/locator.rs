//! [`SiteLocator`]: which sites to ask about a handle, and the whole procedure for one
//! request (PROTOCOL.md §11.5).
//!
//! - **Root**: the root sites (built in, from a file, or refreshed), `0.NA/0.NA`.
//! - **Service lookup** (§11.5 step 2, §5.3, §7.2): the prefix handle `0.NA/<PREFIX>` asked
//!   at the root for HS_SITE, HS_SITE.6, HS_SERV, HS_NAMESPACE; HS_SERV service handles
//!   followed recursively (depth ≤ [`MAX_SERVICE_DEPTH`], loops detected on the current
//!   path); cached by the values' TTLs; concurrent lookups of one prefix share one.
//! - **Referrals**: 302 (service) and 303 (prefix) answers followed (≤ [`MAX_REFERRALS`](super::MAX_REFERRALS)
//!   with the service hops, loops detected), each one referral deeper.
//! - **Root refresh** (§11.4): `0.NA/0.NA` re-read at the current root sites, whose values
//!   replace them. Three triggers: the caller ([`Resolver::refresh_root`](super::Resolver::refresh_root));
//!   an answer 300, once per resolution before it starts over; a root site announcing a
//!   larger site serial than the one sent, once per resolution, in the background.
//!   Concurrent refreshes share one; the automatic ones start at most one refresh per
//!   interval, so a root that keeps announcing a serial its own `0.NA/0.NA` does not carry
//!   cannot cause a storm.
//!
//! The locator reaches servers only through its [`Attempter`].

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;
use tracing::{debug, debug_span, info, info_span, Instrument};

use futures::future::BoxFuture;
use futures::FutureExt;

use crate::ident::Handle;
use crate::trust::TrustRoot;
use crate::wire::{Body, HandleValue, Limits, OpFlags, ReferralBody, ResponseCode};

use super::attempter::Attempter;
use super::bootstrap::ROOT_HANDLE;
use super::cache::{value_ttl, ServiceCache};
use super::error::{ProtocolViolation, ResolveError};
use super::flight::Flights;
use super::request::{Answer, RequestSpec};
use super::settings::{Settings, MAX_SERVICE_DEPTH, ROOT_MAX_AGE};
use super::sites::{extend_unique, text_of, Site, SiteKind, UNKNOWN_SERIAL};
use super::trace::{SharedOutcome, Trace};

/// `0.NA/0.NA` as a handle.
pub(crate) fn root_handle() -> &'static Handle {
    static ROOT: LazyLock<Handle> = LazyLock::new(|| Handle::from_checked_parts("0.NA", "0.NA"));
    &ROOT
}

/// Key of a shared service lookup: what is looked up, and the service-handle path it is
/// looked up on (lookups on different paths are never merged, so a chain that comes back to
/// itself meets its loop check instead of waiting for itself). Service handles are told
/// apart ASCII case-insensitively, in the whole handle, as the reference client does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct LookupKey {
    /// `None` for a prefix handle lookup, the site kind for a service handle.
    kind: Option<SiteKind>,
    handle: String,
    certify: bool,
    path: Vec<String>,
}

impl LookupKey {
    fn new(kind: Option<SiteKind>, handle: &Handle, certify: bool, path: &[Handle]) -> Self {
        Self {
            kind,
            handle: handle.as_str().to_ascii_uppercase(),
            certify,
            path: path
                .iter()
                .map(|p| p.as_str().to_ascii_uppercase())
                .collect(),
        }
    }
}

/// True when `target` is one of the service handles on `path` (ASCII case-insensitively).
fn on_path(path: &[Handle], target: &Handle) -> bool {
    path.iter()
        .any(|p| p.as_str().eq_ignore_ascii_case(target.as_str()))
}

/// Sites collected from values, and until when they may be cached (`None`: not at all).
#[derive(Debug, Clone)]
struct Collected {
    sites: Vec<Site>,
    until: Option<Instant>,
}

/// The earlier of two expiries (`None`, "not cacheable", wins).
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    Some(a?.min(b?))
}

/// Finds the sites for a request and runs the procedure for it.
pub(crate) struct SiteLocator {
    attempter: Attempter,
    /// The current root sites.
    root: RwLock<Arc<Vec<Site>>>,
    /// `--server`: every request goes to this one site, without service lookup.
    fixed: Option<Arc<Vec<Site>>>,
    services: ServiceCache,
    limits: Limits,
    /// Deadline of a root refresh run in the background.
    timeout: Duration,
    refresh_interval: Duration,
    /// When the last automatic root refresh started (rate limit).
    refreshed_at: Mutex<Option<Instant>>,
    prefix_lookups: Flights<LookupKey, SharedOutcome<Arc<Vec<Site>>>, Arc<Trace>>,
    service_lookups: Flights<LookupKey, SharedOutcome<Arc<Collected>>, Arc<Trace>>,
    refreshes: Flights<bool, SharedOutcome<()>, Arc<Trace>>,
    /// The key(s) the root's records must chain up to for a refresh to be taken.
    trust: Option<TrustRoot>,
    /// Where a verified refresh writes the root records (`bootstrap_handles` format).
    persist: Option<PathBuf>,
    /// When the root sites were last read from the network (`None`: never, they come from
    /// a file or the built-in data).
    root_read_at: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for SiteLocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteLocator")
            .field("root_sites", &self.root_sites().len())
            .field(
                "fixed",
                &self.fixed.as_ref().and_then(|s| s.first()).map(Site::label),
            )
            .field("services", &self.services)
            .field("attempter", &self.attempter)
            .finish()
    }
}

impl SiteLocator {
    pub(crate) fn new(
        settings: &Settings,
        attempter: Attempter,
        root: Vec<Site>,
        fixed: Option<Site>,
        services: ServiceCache,
    ) -> Self {
        Self {
            attempter,
            root: RwLock::new(Arc::new(root)),
            fixed: fixed.map(|s| Arc::new(vec![s])),
            services,
            limits: settings.limits,
            timeout: settings.timeout,
            refresh_interval: settings.root_refresh_interval,
            refreshed_at: Mutex::new(None),
            prefix_lookups: Flights::default(),
            service_lookups: Flights::default(),
            refreshes: Flights::default(),
            trust: settings.trust_root.clone(),
            persist: settings.persist_root.clone(),
            root_read_at: Mutex::new(None),
        }
    }

    /// Every value of `name`, asked at the current root sites (the records of a verified
    /// refresh).
    async fn read_root_record(
        self: &Arc<Self>,
        name: String,
        certify: bool,
        trace: &Trace,
    ) -> Result<Vec<HandleValue>, ResolveError> {
        let handle = Handle::parse(&name).map_err(ResolveError::InvalidIdentifier)?;
        let mut spec = RequestSpec::service_lookup(handle.clone(), SiteKind::Service, certify);
        spec.types = Vec::new();
        spec.flags.set(OpFlags::PO, true);
        let path = [root_handle().clone()];
        let answer = self.ask(&spec, self.root_sites(), trace, &path).await?;
        answer.into_values(handle).map(|(_, values)| values)
    }

    /// With a trust root, a root older than `ROOT_MAX_AGE` (or never read from the
    /// network: the built-in data, a file) is refreshed in the background, as the reference
    /// client does, at most once per refresh interval.
    fn refresh_if_old(self: &Arc<Self>, certify: bool) {
        if self.trust.is_none() {
            return;
        }
        let read_at = *self.root_read_at.lock();
        let old = !read_at.is_some_and(|t| t.elapsed() < ROOT_MAX_AGE);
        if old {
            self.spawn_refresh(certify, "the root information is old");
        }
    }

    /// The attempter the locator asks through.
    pub(crate) fn attempter(&self) -> &Attempter {
        &self.attempter
    }

    /// The current root sites.
    pub(crate) fn root_sites(&self) -> Arc<Vec<Site>> {
        self.root.read().clone()
    }

    /// Forgets every cached service.
    pub(crate) fn clear_cache(&self) {
        self.services.clear();
    }

    /// The whole procedure for one request: the sites for its handle, the answer of the
    /// first of them to answer, the referrals it leads to, and one root refresh on 300
    /// (out-of-date site information) before starting over. Returns the final answer (any
    /// code but 302/303). With a fixed server no answer triggers a root refresh.
    ///
    /// `path` lists the service handles this request is made for (empty for a resolution's
    /// own request); work done for a root refresh (its path starts with the root handle)
    /// never triggers a refresh, as it would wait for the refresh it is part of.
    pub(crate) async fn send(
        self: &Arc<Self>,
        spec: &RequestSpec,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Answer, ResolveError> {
        let in_refresh = path.first().is_some_and(|p| p == root_handle());
        loop {
            let sites = self
                .sites_for(&spec.handle, spec.certify(), trace, path)
                .await?;
            let answer = self.ask(spec, sites, trace, path).await?;
            // A fixed server is all a resolver asks: its root is never used, so nothing
            // refreshes it (the built-in root would be the global one).
            if in_refresh || self.fixed.is_some() {
                return Ok(answer);
            }
            if answer.code() == ResponseCode::OutOfDateSiteInfo && trace.claim_refresh() {
                info!(server = %answer.server, "site information out of date; refreshing the root");
                // Boxed: rare, and a request's future need not carry it.
                Box::pin(self.refresh_root_limited(spec.certify(), trace)).await?;
                self.services.forget(&spec.handle.prefix_handle());
                continue;
            }
            self.note_site_serial(&answer, spec.certify(), trace);
            self.refresh_if_old(spec.certify());
            return Ok(answer);
        }
    }

    /// The sites to ask about `handle`: the fixed server's, the root's for a handle of the
    /// global service, else those of its prefix's service.
    pub(crate) async fn sites_for(
        self: &Arc<Self>,
        handle: &Handle,
        certify: bool,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        if let Some(sites) = &self.fixed {
            return Ok(sites.clone());
        }
        if handle.is_global() {
            return Ok(self.root_sites());
        }
        let prefix_handle = handle.prefix_handle();
        if let Some(found) = self.cached_service(&prefix_handle, certify) {
            return found;
        }
        self.lookup_service(&prefix_handle, certify, trace, path)
            .await
    }

    /// Asks `sites` and follows the referrals of the answers (≤ the referral budget, loops
    /// detected); returns the first answer that is not a referral.
    async fn ask(
        self: &Arc<Self>,
        spec: &RequestSpec,
        sites: Arc<Vec<Site>>,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Answer, ResolveError> {
        let answer = self.attempter.ask(spec, &sites, trace).await?;
        match answer.code() {
            ResponseCode::ServiceReferral | ResponseCode::PrefixReferral => {
                // Boxed: referrals are rare, and a request's future need not carry the
                // state of their walk (see `follow_referrals`).
                Box::pin(self.follow_referrals(spec, sites, answer, trace, path)).await
            }
            _ => Ok(answer),
        }
    }

    /// Follows the referral in `answer` (from `sites`) and those after it.
    async fn follow_referrals(
        self: &Arc<Self>,
        spec: &RequestSpec,
        mut sites: Arc<Vec<Site>>,
        mut answer: Answer,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Answer, ResolveError> {
        // The sites asked so far (filled at the first referral).
        let mut seen = Vec::new();
        let mut spec = std::borrow::Cow::Borrowed(spec);
        loop {
            let kind = match answer.code() {
                ResponseCode::ServiceReferral => SiteKind::Service,
                ResponseCode::PrefixReferral if spec.handle.is_prefix_handle() => SiteKind::Prefix,
                ResponseCode::PrefixReferral => {
                    return Err(ResolveError::Protocol {
                        sites_asked: 1,
                        server: answer.server,
                        violation: ProtocolViolation::UnexpectedPrefixReferral,
                    })
                }
                _ => return Ok(answer),
            };
            let Body::Referral(body) = &answer.msg.body else {
                return Err(ResolveError::Protocol {
                    sites_asked: 1,
                    server: answer.server,
                    violation: ProtocolViolation::UnexpectedBody {
                        code: answer.code(),
                    },
                });
            };
            trace.count_referral()?;
            let referred = self
                .referral_sites(body, kind, spec.certify(), trace, path)
                .await?;
            let at = text_of(&body.referral_handle);
            debug!(handle = %spec.handle, referral = %at, sites = referred.len(), code = %answer.code(), "referral");
            if referred.is_empty() {
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: if at.is_empty() {
                        spec.handle.to_string()
                    } else {
                        at
                    },
                });
            }
            if seen.is_empty() {
                seen.push(sites_key(&sites));
            }
            let key = sites_key(&referred);
            if seen.contains(&key) {
                return Err(ResolveError::ReferralLoop {
                    handle: spec.handle.to_string(),
                    at: if at.is_empty() {
                        "(referral sites)".into()
                    } else {
                        at
                    },
                });
            }
            seen.push(key);
            sites = Arc::new(referred);
            // The same request again, one referral deeper (§5.3).
            let deeper = spec.to_mut();
            deeper.recursion_count = deeper.recursion_count.saturating_add(1);
            answer = self.attempter.ask(&spec, &sites, trace).await?;
        }
    }

    /// Looks up the service sites of a prefix handle (cached by its values' TTLs).
    /// Concurrent lookups of the same prefix handle share one.
    ///
    /// Boxed, as are [`SiteLocator::service_sites`] and [`SiteLocator::refresh_root`]: the
    /// procedure is recursive (a service lookup, a service handle or a root refresh sends
    /// requests of its own through [`SiteLocator::send`]), and a recursive future needs a
    /// box in the cycle. The boxes are here, off the path of a request whose sites are
    /// known.
    fn lookup_service<'a>(
        self: &'a Arc<Self>,
        prefix_handle: &'a Handle,
        certify: bool,
        trace: &'a Trace,
        path: &'a [Handle],
    ) -> BoxFuture<'a, Result<Arc<Vec<Site>>, ResolveError>> {
        let key = LookupKey::new(None, prefix_handle, certify, path);
        let this = self.clone();
        let (handle, owned_path) = (prefix_handle.clone(), path.to_vec());
        let span = debug_span!("shared_service_lookup", prefix_handle = %prefix_handle);
        trace
            .share(
                &self.prefix_lookups,
                key,
                || trace.for_shared_work(prefix_handle),
                move |trace| {
                    async move {
                        // A lookup that ended just before this one started may have filled
                        // the cache.
                        match this.cached_service(&handle, certify) {
                            Some(out) => out,
                            None => {
                                this.lookup_service_now(&handle, certify, &trace, &owned_path)
                                    .await
                            }
                        }
                    }
                    .instrument(span)
                },
            )
            .boxed()
    }

    /// The cached outcome of a service lookup, if any (an empty entry is a cached "not
    /// found").
    fn cached_service(
        &self,
        prefix_handle: &Handle,
        certify: bool,
    ) -> Option<Result<Arc<Vec<Site>>, ResolveError>> {
        let sites = self.services.get(prefix_handle, certify)?;
        Some(if sites.is_empty() {
            Err(ResolveError::ServiceNotFound {
                prefix_handle: prefix_handle.to_string(),
            })
        } else {
            Ok(sites)
        })
    }

    /// The service lookup itself (no cache read, no sharing).
    async fn lookup_service_now(
        self: &Arc<Self>,
        prefix_handle: &Handle,
        certify: bool,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        let mut spec = RequestSpec::prefix_lookup(prefix_handle.clone(), certify);
        loop {
            let answer = self.send(&spec, trace, path).await?;
            let values = match answer.into_values(prefix_handle.clone()) {
                Ok((_, values)) => values,
                Err(ResolveError::NotFound { .. } | ResolveError::NoMatchingValues { .. }) => {
                    Vec::new()
                }
                Err(e) => return Err(e),
            };
            let collected = self
                .collect_sites(&values, SiteKind::Service, certify, trace, path)
                .await?;
            if collected.sites.is_empty() {
                // Like the reference client: once more with AT, in case the prefix is new.
                if !spec.authoritative() {
                    spec.flags = spec.flags | OpFlags::AT;
                    continue;
                }
                // Known not to exist: kept as briefly as a "handle not found", so a stream of
                // handles under an unknown prefix does not ask the root twice per handle.
                self.services.put_not_found(prefix_handle, certify);
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: prefix_handle.to_string(),
                });
            }
            let sites = Arc::new(collected.sites);
            if let Some(until) = collected.until {
                let ttl = until.saturating_duration_since(Instant::now());
                self.services
                    .put(prefix_handle, certify, sites.clone(), ttl);
            }
            return Ok(sites);
        }
    }

    /// Sites from values: the site values of `kind` directly, plus the sites of every service
    /// handle, resolved recursively. A service handle already on `path` is skipped; when that
    /// leaves no site at all, the result is a referral loop.
    ///
    /// Also how long the result may be cached: until the earliest expiry of every value that
    /// contributed (site values that decode, service handles followed, and, recursively, the
    /// values of those service handles). When a service handle was skipped or failed, the
    /// partial result is kept no longer than the negative TTL.
    async fn collect_sites(
        self: &Arc<Self>,
        values: &[HandleValue],
        kind: SiteKind,
        certify: bool,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Collected, ResolveError> {
        let now = Instant::now();
        let now_unix = self.attempter.clock().unix_now();
        let cap = self.services.config().max_ttl;
        let mut until = Some(now + cap);
        let mut contributed = |v: &HandleValue| {
            until = earliest(until, value_ttl(v, now_unix, cap).map(|t| now + t));
        };
        // Every site found, in order, repeats included (dropped once, at the end).
        let mut found = Vec::new();
        for v in values
            .iter()
            .filter(|v| kind.site_types().iter().any(|t| v.is_type(t)))
        {
            if let Some(site) = Site::from_value(v, &self.limits) {
                contributed(v);
                found.push(site);
            }
        }
        let mut loop_at = None;
        let mut first_error = None;
        let mut nested = Vec::new();
        for v in values.iter().filter(|v| v.is_type(kind.serv_type())) {
            let text = text_of(&v.data);
            let target = match Handle::parse(text.trim()) {
                Ok(h) => h,
                Err(e) => {
                    debug!(service = %text, error = %e, "HS_SERV value is not a handle");
                    first_error.get_or_insert(ResolveError::ServiceNotFound {
                        prefix_handle: text.trim().to_string(),
                    });
                    continue;
                }
            };
            if target == *root_handle() {
                contributed(v);
                found.extend(self.root_sites().iter().cloned());
                continue;
            }
            if on_path(path, &target) {
                debug!(service = %target, "service handle already on the path; skipped");
                loop_at = Some(target);
                continue;
            }
            match self
                .service_sites(&target, kind, certify, trace, path)
                .await
            {
                Ok(more) => {
                    contributed(v);
                    nested.push(more.until);
                    found.extend(more.sites.iter().cloned());
                }
                Err(e) => {
                    debug!(service = %target, error = %e, "service handle gave no sites");
                    first_error.get_or_insert(e);
                }
            }
        }
        let mut sites = Vec::new();
        extend_unique(&mut sites, found);
        if sites.is_empty() {
            if let Some(e) = first_error {
                return Err(e);
            }
            if let Some(at) = loop_at {
                return Err(ResolveError::ReferralLoop {
                    handle: trace.origin().to_string(),
                    at: at.to_string(),
                });
            }
        }
        for n in nested {
            until = earliest(until, n);
        }
        if first_error.is_some() || loop_at.is_some() {
            until = earliest(until, Some(now + self.services.config().negative_ttl));
        }
        Ok(Collected { sites, until })
    }

    /// Resolves service handle `target` for the site types of `kind` and collects its sites.
    /// Concurrent resolutions of the same service handle (on the same path) share one.
    /// Boxed: see [`SiteLocator::lookup_service`].
    fn service_sites<'a>(
        self: &'a Arc<Self>,
        target: &'a Handle,
        kind: SiteKind,
        certify: bool,
        trace: &'a Trace,
        path: &'a [Handle],
    ) -> BoxFuture<'a, Result<Arc<Collected>, ResolveError>> {
        async move {
            if path.len() >= MAX_SERVICE_DEPTH {
                return Err(ResolveError::TooManyReferrals {
                    handle: trace.origin().to_string(),
                    limit: MAX_SERVICE_DEPTH as u32,
                });
            }
            trace.count_referral()?;
            let mut sub_path = path.to_vec();
            sub_path.push(target.clone());
            let key = LookupKey::new(Some(kind), target, certify, &sub_path);
            let span = debug_span!("shared_service_handle", service = %target);
            let this = self.clone();
            let owned = target.clone();
            trace
                .share(
                    &self.service_lookups,
                    key,
                    || trace.for_shared_work(target),
                    move |trace| {
                        async move {
                            let spec = RequestSpec::service_lookup(owned.clone(), kind, certify);
                            let answer = this.send(&spec, &trace, &sub_path).await?;
                            let (_, values) = answer.into_values(owned)?;
                            this.collect_sites(&values, kind, certify, &trace, &sub_path)
                                .await
                                .map(Arc::new)
                        }
                        .instrument(span)
                    },
                )
                .await
        }
        .boxed()
    }

    /// The sites a referral (302 service, 303 prefix) points to: its values, else its
    /// referral handle's.
    async fn referral_sites(
        self: &Arc<Self>,
        body: &ReferralBody,
        kind: SiteKind,
        certify: bool,
        trace: &Trace,
        path: &[Handle],
    ) -> Result<Vec<Site>, ResolveError> {
        let values = body.values.as_deref().unwrap_or_default();
        let sites = self
            .collect_sites(values, kind, certify, trace, path)
            .await?
            .sites;
        if !sites.is_empty() || body.referral_handle.is_empty() {
            return Ok(sites);
        }
        let text = text_of(&body.referral_handle);
        let target = Handle::parse(text.trim()).map_err(|_| ResolveError::ServiceNotFound {
            prefix_handle: text.trim().to_string(),
        })?;
        if kind == SiteKind::Service && target == *root_handle() {
            return Ok(self.root_sites().to_vec());
        }
        if on_path(path, &target) {
            return Err(ResolveError::ReferralLoop {
                handle: trace.origin().to_string(),
                at: target.to_string(),
            });
        }
        let collected = self
            .service_sites(&target, kind, certify, trace, path)
            .await?;
        Ok(collected.sites.clone())
    }

    /// Refreshes the root now (joining a refresh in flight with the same certify flag).
    /// Boxed: see [`SiteLocator::lookup_service`].
    pub(crate) fn refresh_root<'a>(
        self: &'a Arc<Self>,
        certify: bool,
        trace: &'a Trace,
    ) -> BoxFuture<'a, Result<(), ResolveError>> {
        let this = self.clone();
        trace
            .share(
                &self.refreshes,
                certify,
                || Trace::new(root_handle().clone()),
                move |trace| async move { this.refresh_root_now(certify, &trace).await },
            )
            .boxed()
    }

    /// An automatic refresh: joins one in flight, else starts one when the rate limit allows.
    async fn refresh_root_limited(
        self: &Arc<Self>,
        certify: bool,
        trace: &Trace,
    ) -> Result<(), ResolveError> {
        let certify = self.auto_refresh_certify(certify);
        if let Some((flight, shared)) = self.refreshes.join(&certify) {
            return trace.wait_for(flight, shared).await;
        }
        if !self.claim_root_refresh() {
            debug!("root refreshed recently; not again yet");
            return Ok(());
        }
        self.refresh_root(certify, trace).await
    }

    /// Whether an automatic refresh asks with CT: always when the current root sites carry
    /// keys (PROTOCOL.md §11.4: the new root information is checked against the current root
    /// keys), whatever the request that triggered it. The root sites are shared by every
    /// caller, so an unsigned refresh started by a plain resolution would otherwise hand
    /// unverified keys to later certified ones. Without any root key (a bare `HOST:PORT`
    /// root) a certified refresh could not succeed, so the request's own flag is kept.
    fn auto_refresh_certify(&self, certify: bool) -> bool {
        certify
            || self
                .root_sites()
                .iter()
                .flat_map(|s| s.info.servers.iter())
                .any(|server| !server.public_key.is_empty())
    }

    /// Takes the rate limiter's slot: true when no automatic refresh started within the
    /// interval (and records this one).
    fn claim_root_refresh(&self) -> bool {
        let now = Instant::now();
        let mut last = self.refreshed_at.lock();
        if last.is_some_and(|t| now.saturating_duration_since(t) < self.refresh_interval) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// Looks at the site serial of an answer: when a root site announces a larger serial than
    /// the one sent, the root is refreshed in the background (once per resolution, rate
    /// limited), within the resolver's deadline.
    fn note_site_serial(self: &Arc<Self>, answer: &Answer, certify: bool, trace: &Trace) {
        let sent = answer.site.request_serial;
        let announced = answer.msg.header.site_info_serial;
        if sent == UNKNOWN_SERIAL || announced == UNKNOWN_SERIAL || announced <= sent {
            return;
        }
        let id = answer.site.identity();
        if !self.root_sites().iter().any(|s| s.identity() == id) || !trace.claim_refresh() {
            return;
        }
        debug!(
            sent,
            announced, "root site announces newer site information"
        );
        self.spawn_refresh(certify, "a root site announces newer site information");
    }

    /// Starts an automatic root refresh in the background (unless one is in flight or one
    /// started within the refresh interval).
    fn spawn_refresh(self: &Arc<Self>, certify: bool, why: &'static str) {
        let certify = self.auto_refresh_certify(certify);
        if self.refreshes.join(&certify).is_some() || !self.claim_root_refresh() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        info!(why, "refreshing the root");
        let (this, deadline) = (self.clone(), self.timeout);
        let work = async move {
            let trace = Trace::new(root_handle().clone());
            match tokio::time::timeout(deadline, this.refresh_root(certify, &trace)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => info!(error = %e, "root refresh failed"),
                Err(_) => info!(?deadline, "root refresh timed out"),
            }
        };
        runtime.spawn(work.instrument(info_span!("root_refresh")));
    }

    /// Re-reads the root service information from `0.NA/0.NA` at the current root sites;
    /// with a trust root, only what verifies (`root_refresh.rs`).
    async fn refresh_root_now(
        self: &Arc<Self>,
        certify: bool,
        trace: &Trace,
    ) -> Result<(), ResolveError> {
        if let Some(trust) = &self.trust {
            let now = self.attempter.clock().unix_now();
            let read = |name: String| self.read_root_record(name, certify, trace);
            let (sites, records) =
                super::root_refresh::verified_root_sites(read, trust, now, self.limits).await?;
            if sites.is_empty() {
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: ROOT_HANDLE.to_string(),
                });
            }
            info!(
                sites = sites.len(),
                "root service information refreshed and verified"
            );
            *self.root.write() = Arc::new(sites);
            *self.root_read_at.lock() = Some(Instant::now());
            if let Some(path) = &self.persist {
                let now = self.attempter.clock().unix_now();
                if let Err(e) = super::root_refresh::persist(path, &records, now) {
                    info!(path = %path.display(), error = %e, "could not write the root records");
                }
            }
            return Ok(());
        }
        let root = root_handle().clone();
        let spec = RequestSpec::service_lookup(root.clone(), SiteKind::Service, certify);
        let path = [root.clone()];
        let answer = self.ask(&spec, self.root_sites(), trace, &path).await?;
        let (_, values) = answer.into_values(root)?;
        let sites = self
            .collect_sites(&values, SiteKind::Service, certify, trace, &path)
            .await?
            .sites;
        if sites.is_empty() {
            return Err(ResolveError::ServiceNotFound {
                prefix_handle: ROOT_HANDLE.to_string(),
            });
        }
        info!(sites = sites.len(), "root service information refreshed");
        *self.root.write() = Arc::new(sites);
        *self.root_read_at.lock() = Some(Instant::now());
        Ok(())
    }
}

/// Identity of a list of sites (for referral-loop detection).
fn sites_key(sites: &[Site]) -> Vec<Vec<(std::net::IpAddr, Vec<u32>)>> {
    let mut ids: Vec<_> = sites.iter().map(Site::identity).collect();
    ids.sort();
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_handles_compare_case_insensitively_in_the_whole_handle() {
        let h = |s: &str| Handle::parse(s).unwrap();
        let path = [h("0.SERV/x"), h("31.S/abc")];
        assert!(on_path(&path, &h("31.s/ABC")));
        assert!(on_path(&path, &h("0.serv/X")));
        assert!(!on_path(&path, &h("31.S/abd")));
        assert_eq!(
            LookupKey::new(Some(SiteKind::Service), &h("31.S/abc"), false, &path),
            LookupKey::new(Some(SiteKind::Service), &h("31.s/ABC"), false, &path[..])
        );
        assert_ne!(
            LookupKey::new(None, &h("0.NA/31.S"), false, &path),
            LookupKey::new(None, &h("0.NA/31.S"), false, &path[..1])
        );
        assert_eq!(root_handle().as_str(), ROOT_HANDLE);
    }
}
