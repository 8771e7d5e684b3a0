//! [`SiteLocator`]: which sites to ask about a handle, and the whole procedure for one
//! request (PROTOCOL.md §11.5): [`SiteLocator::request`] finds the sites
//! ([`SiteLocator::sites_for`]: the fixed server, the root, or the prefix's service), asks
//! them through the [`Asker`], follows referrals, and refreshes the root when an answer says
//! it is out of date.
//!
//! - **Service lookup** (here, §11.5 step 2, §5.3, §7.2): the prefix handle `0.NA/<PREFIX>`
//!   asked at the root for HS_SITE, HS_SITE.6, HS_SERV, HS_NAMESPACE; HS_SERV service handles
//!   followed recursively (depth ≤ 20, loops detected on the current [`Path`]); cached by
//!   the values' TTLs (`services.rs`); concurrent lookups of one prefix share one.
//! - **Referrals** (`referral.rs`): 302 (service) and 303 (prefix) answers followed (≤ 40
//!   with the service hops, loops detected), each one referral deeper.
//! - **Root** (`root.rs`): the root sites (built in, from a file, or refreshed) and their
//!   refresh (§11.4), verified against the trust root when there is one.
//!
//! The locator reaches servers only through its [`Asker`]. A service lookup is itself a
//! request, made through [`SiteLocator::request`] again (for the prefix handle, then for the
//! service handles it names): the procedure is recursive, and its boxes are in the lookup
//! below and in `root.rs`, off the path of a request whose sites are known.

mod referral;
mod root;
mod services;

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::time::Instant;
use tracing::{debug, debug_span, info, Instrument};

use crate::ident::Handle;
use crate::root::root_handle;
use crate::wire::{HandleValue, Limits, OpFlags, ResponseCode};

use super::ask::{Answer, Asker, RequestSpec};
use super::error::ResolveError;
use super::settings::Settings;
use super::settings::MAX_SERVICE_DEPTH;
use super::support::cache::value_ttl;
use super::support::cache::ServiceCache;
use super::support::trace::Trace;

use super::site::{extend_unique, text_of, Site, SiteKind};
use services::{earliest, Collected, LookupKey};

pub(crate) use root::{sites_of, Root, RootSites};

/// Finds the sites for a request and runs the procedure for it.
pub(crate) struct SiteLocator {
    asker: Asker,
    /// The root sites and their refresh.
    root: Root,
    /// `--server`: every request goes to this one site, without service lookup.
    fixed: Option<Arc<Vec<Site>>>,
    /// Service information by prefix, and the lookups in flight.
    services: services::Services,
    /// Decode limits of site values.
    limits: Limits,
}

impl std::fmt::Debug for SiteLocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteLocator")
            .field("root_sites", &self.root_sites().len())
            .field(
                "fixed",
                &self.fixed.as_ref().and_then(|s| s.first()).map(Site::label),
            )
            .field("asker", &self.asker)
            .finish_non_exhaustive()
    }
}

/// What a request is made for: the service handles it serves, in order (none for a
/// resolution's own request, or an administration request), and whether it is part of a
/// root refresh.
#[derive(Debug, Clone, Default)]
pub(crate) struct Path {
    services: Vec<Handle>,
    root_refresh: bool,
}

impl Path {
    /// The path of a root refresh's requests.
    pub(crate) fn root_refresh() -> Self {
        Self {
            services: Vec::new(),
            root_refresh: true,
        }
    }

    /// This path, one service handle deeper.
    fn then(&self, service: &Handle) -> Self {
        let mut deeper = self.clone();
        deeper.services.push(service.clone());
        deeper
    }

    /// True when `service` is on the path (compared ASCII case-insensitively in the whole
    /// handle, as the reference client does).
    fn contains(&self, service: &Handle) -> bool {
        self.services
            .iter()
            .any(|p| p.as_str().eq_ignore_ascii_case(service.as_str()))
    }

    /// How many service handles deep it is (a root refresh counts as one, as the root
    /// handle it starts from).
    fn depth(&self) -> usize {
        self.services.len() + usize::from(self.root_refresh)
    }

    /// True for a root refresh's requests.
    fn in_root_refresh(&self) -> bool {
        self.root_refresh
    }
}

impl SiteLocator {
    pub(crate) fn new(
        settings: &Settings,
        asker: Asker,
        root: Vec<Site>,
        fixed: Option<Site>,
        services: ServiceCache,
    ) -> Self {
        Self {
            asker,
            root: Root::new(settings, root),
            fixed: fixed.map(|s| Arc::new(vec![s])),
            services: services::Services::new(services),
            limits: settings.limits,
        }
    }

    /// The asker the locator asks through.
    pub(crate) fn asker(&self) -> &Asker {
        &self.asker
    }

    /// The current root sites.
    pub(crate) fn root_sites(&self) -> RootSites {
        self.root.sites()
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
    /// `path` says what the request is made for: the service handles it serves (none for a
    /// resolution's own request), and whether it is part of a root refresh, which never
    /// triggers a refresh, as it would wait for the refresh it is part of.
    pub(crate) async fn request(
        self: &Arc<Self>,
        spec: &RequestSpec,
        trace: &Trace,
        path: &Path,
    ) -> Result<Answer, ResolveError> {
        loop {
            let sites = self
                .sites_for(&spec.handle, spec.certify(), trace, path)
                .await?;
            let answer = self.from_sites(spec, sites, trace, path).await?;
            // A fixed server is all a resolver asks: its root is never used, so nothing
            // refreshes it (the built-in root would be the global one).
            if path.in_root_refresh() || self.fixed.is_some() {
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
        path: &Path,
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        if let Some(sites) = &self.fixed {
            return Ok(sites.clone());
        }
        if handle.is_global() {
            return Ok(self.root_sites());
        }
        let prefix_handle = handle.prefix_handle();
        if let Some(found) = self.services.cached(&prefix_handle, certify) {
            return found;
        }
        self.lookup_service(&prefix_handle, certify, trace, path)
            .await
    }

    /// Asks `sites` and follows the referrals of the answers (≤ the referral budget, loops
    /// detected); returns the first answer that is not a referral.
    pub(crate) async fn from_sites(
        self: &Arc<Self>,
        spec: &RequestSpec,
        sites: Arc<Vec<Site>>,
        trace: &Trace,
        path: &Path,
    ) -> Result<Answer, ResolveError> {
        let answer = self.asker.race(spec, &sites, trace).await?;
        match answer.code() {
            ResponseCode::ServiceReferral | ResponseCode::PrefixReferral => {
                // Boxed: referrals are rare, and a request's future need not carry the
                // state of their walk (see `follow_referrals`).
                Box::pin(self.follow_referrals(spec, sites, answer, trace, path)).await
            }
            _ => Ok(answer),
        }
    }

    /// Looks up the service sites of a prefix handle (cached by its values' TTLs).
    /// Concurrent lookups of the same prefix handle share one.
    ///
    /// Boxed, as are [`SiteLocator::service_sites`] and [`SiteLocator::refresh_root`]: the
    /// procedure is recursive (a service lookup, a service handle or a root refresh sends
    /// requests of its own through [`SiteLocator::request`]), and a recursive future needs a
    /// box in the cycle. The boxes are here, off the path of a request whose sites are
    /// known.
    fn lookup_service<'a>(
        self: &'a Arc<Self>,
        prefix_handle: &'a Handle,
        certify: bool,
        trace: &'a Trace,
        path: &'a Path,
    ) -> BoxFuture<'a, Result<Arc<Vec<Site>>, ResolveError>> {
        let key = LookupKey::new(None, prefix_handle, certify, path);
        trace
            .share(
                &self.services.prefix_lookups,
                key,
                || trace.for_shared_work(prefix_handle),
                move |trace| {
                    let this = self.clone();
                    let (handle, owned_path) = (prefix_handle.clone(), path.clone());
                    let span = debug_span!("shared_service_lookup", prefix_handle = %handle);
                    async move {
                        // A lookup that ended just before this one started may have filled
                        // the cache.
                        match this.services.cached(&handle, certify) {
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

    /// The service lookup itself (no cache read, no sharing).
    async fn lookup_service_now(
        self: &Arc<Self>,
        prefix_handle: &Handle,
        certify: bool,
        trace: &Trace,
        path: &Path,
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        let mut spec = RequestSpec::prefix_lookup(prefix_handle.clone(), certify);
        loop {
            let answer = self.request(&spec, trace, path).await?;
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
                self.services.cache.put_not_found(prefix_handle, certify);
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: prefix_handle.clone(),
                });
            }
            let sites = Arc::new(collected.sites);
            if let Some(until) = collected.until {
                let ttl = until.saturating_duration_since(Instant::now());
                self.services
                    .cache
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
        path: &Path,
    ) -> Result<Collected, ResolveError> {
        let now = Instant::now();
        let now_unix = self.asker.clock().unix_now();
        let cap = self.services.cache.config().max_ttl;
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
                Err(error) => {
                    debug!(service = %text, %error, "HS_SERV value is not a handle");
                    first_error
                        .get_or_insert(ResolveError::InvalidServiceHandle { value: text, error });
                    continue;
                }
            };
            if target == *root_handle() {
                contributed(v);
                found.extend(self.root_sites().iter().cloned());
                continue;
            }
            if path.contains(&target) {
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
                    handle: trace.origin().clone(),
                    at: Some(at),
                });
            }
        }
        for n in nested {
            until = earliest(until, n);
        }
        if first_error.is_some() || loop_at.is_some() {
            until = earliest(until, Some(now + self.services.cache.config().negative_ttl));
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
        path: &'a Path,
    ) -> BoxFuture<'a, Result<Arc<Collected>, ResolveError>> {
        async move {
            if path.depth() >= MAX_SERVICE_DEPTH {
                return Err(ResolveError::TooManyReferrals {
                    handle: trace.origin().clone(),
                    limit: MAX_SERVICE_DEPTH as u32,
                });
            }
            trace.count_referral()?;
            let sub_path = path.then(target);
            let key = LookupKey::new(Some(kind), target, certify, &sub_path);
            trace
                .share(
                    &self.services.service_lookups,
                    key,
                    || trace.for_shared_work(target),
                    |trace| {
                        let span = debug_span!("shared_service_handle", service = %target);
                        let (this, owned) = (self.clone(), target.clone());
                        let sub_path = sub_path.clone();
                        async move {
                            let spec = RequestSpec::service_lookup(owned.clone(), kind, certify);
                            let answer = this.request(&spec, &trace, &sub_path).await?;
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
}
