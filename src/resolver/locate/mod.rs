//! [`SiteLocator`]: which sites to ask about a handle, and the whole procedure for one
//! request (PROTOCOL.md §11.5). Read top down: [`SiteLocator::request`] finds the sites
//! ([`SiteLocator::sites_for`]: the fixed server, the root, or the prefix's service), asks
//! them through the [`Asker`] ([`SiteLocator::from_sites`], following referrals), and
//! refreshes the root when an answer says it is out of date.
//!
//! - **Service lookup** (here, §11.5 step 2, §5.3, §7.2), a loop: the prefix handle
//!   `0.NA/<PREFIX>` asked at the root for HS_SITE, HS_SITE.6, HS_SERV, HS_NAMESPACE; then
//!   the service handles its HS_SERV values name, one after the other, each asked at its
//!   own sites (the root's, for the `0.` handles they are) and its values walked in turn
//!   (depth ≤ 20, loops detected on the current [`Path`]), until every site is found.
//!   Every handle is asked through the same [`Asker`] as any request, by
//!   [`SiteLocator::from_sites`]: the lookup never starts a request of the locator's own.
//!   Cached by the values' TTLs; concurrent lookups of one prefix share one (`services.rs`).
//! - **Referrals** (`referral.rs`): 302 (service) and 303 (prefix) answers followed (≤ 40
//!   with the service hops, loops detected), each one referral deeper.
//! - **Root** (`root.rs`): the root sites (built in, from a file, or refreshed) and their
//!   refresh (§11.4), verified against the trust root when there is one.
//!
//! Rare paths come back through here and are boxed, off the path of a request whose sites
//! are known: a service handle under a prefix outside `0.` (its prefix is looked up first),
//! a referral naming a service handle, a root refresh.

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
use super::support::cache::ServiceCache;
use super::support::trace::Trace;

use super::site::{text_of, Site, SiteKind};
use services::{Collected, Dating, Frame, LookupKey};

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
        // A fixed server is all a resolver asks: its root is never used, so nothing
        // refreshes it (the built-in root would be the global one).
        let may_refresh = !path.in_root_refresh() && self.fixed.is_none();
        loop {
            let out_of_date = match self
                .sites_for(&spec.handle, spec.certify(), trace, path)
                .await
            {
                Ok(sites) => {
                    let answer = self.from_sites(spec, sites, trace, path).await?;
                    if !may_refresh {
                        return Ok(answer);
                    }
                    if answer.code() != ResponseCode::OutOfDateSiteInfo || !trace.claim_refresh() {
                        self.noted(&answer, spec.certify(), trace, path);
                        return Ok(answer);
                    }
                    answer.server.to_string()
                }
                // The service lookup was told its site information is out of date.
                Err(ResolveError::Server {
                    code: ResponseCode::OutOfDateSiteInfo,
                    server,
                    ..
                }) if may_refresh && trace.claim_refresh() => {
                    server.map(|s| s.to_string()).unwrap_or_default()
                }
                Err(e) => return Err(e),
            };
            info!(server = %out_of_date, "site information out of date; refreshing the root");
            // Boxed: rare, and a request's future need not carry it.
            Box::pin(self.refresh_root_limited(spec.certify(), trace)).await?;
            self.services.forget(&spec.handle.prefix_handle());
        }
    }

    /// What an answer tells of the root: a root site announcing newer site information, a
    /// root grown old (neither within a root refresh, nor with a fixed server).
    fn noted(self: &Arc<Self>, answer: &Answer, certify: bool, trace: &Trace, path: &Path) {
        if path.in_root_refresh() || self.fixed.is_some() {
            return;
        }
        self.note_site_serial(answer, certify, trace);
        self.refresh_if_old(certify);
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
    /// Boxed, as are [`SiteLocator::walk`] and [`SiteLocator::refresh_root`]: rare paths
    /// come back here (a service handle under a prefix outside `0.`, a referral naming a
    /// service handle, a root refresh), and a future that can contain itself needs a box.
    /// The boxes are here, off the path of a request whose sites are known.
    fn lookup_service<'a>(
        self: &'a Arc<Self>,
        prefix_handle: &'a Handle,
        certify: bool,
        trace: &'a Trace,
        path: &'a Path,
    ) -> BoxFuture<'a, Result<Arc<Vec<Site>>, ResolveError>> {
        let key = LookupKey::new(prefix_handle, certify, path);
        trace
            .share(
                &self.services.lookups,
                key,
                || trace.for_shared_work(prefix_handle),
                move |trace| {
                    let this = self.clone();
                    let (handle, path) = (prefix_handle.clone(), path.clone());
                    let span = debug_span!("shared_service_lookup", prefix_handle = %handle);
                    async move {
                        // A lookup that ended just before this one started may have filled
                        // the cache.
                        match this.services.cached(&handle, certify) {
                            Some(out) => out,
                            None => {
                                this.lookup_service_now(&handle, certify, &trace, &path)
                                    .await
                            }
                        }
                    }
                    .instrument(span)
                },
            )
            .boxed()
    }

    /// The service lookup itself (no cache read, no sharing): the prefix handle asked, its
    /// values walked ([`SiteLocator::walk`]), the sites cached.
    async fn lookup_service_now(
        self: &Arc<Self>,
        prefix_handle: &Handle,
        certify: bool,
        trace: &Trace,
        path: &Path,
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        let mut spec = RequestSpec::prefix_lookup(prefix_handle.clone(), certify);
        loop {
            let values = match self.read(&spec, trace, path).await {
                Ok(values) => values,
                Err(ResolveError::NotFound { .. } | ResolveError::NoMatchingValues { .. }) => {
                    Vec::new()
                }
                Err(e) => return Err(e),
            };
            let collected = self
                .walk(&values, SiteKind::Service, certify, trace, path)
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

    /// Sites from `values` (on `path`), a loop: the site values of `kind` directly, then
    /// the service handles their HS_SERV values name, one after the other, each asked
    /// ([`SiteLocator::read_service`]) and its values walked in turn before the next (depth
    /// first, in value order, as the reference client does). A service handle already on the
    /// path is skipped; when that leaves no site at all, the result is a referral loop.
    ///
    /// Also how long the result may be cached: until the earliest expiry of every value that
    /// contributed (site values that decode, service handles followed, and the values of
    /// those). When a service handle was skipped or failed, the partial result is kept no
    /// longer than the negative TTL.
    fn walk<'a>(
        self: &'a Arc<Self>,
        values: &'a [HandleValue],
        kind: SiteKind,
        certify: bool,
        trace: &'a Trace,
        path: &'a Path,
    ) -> BoxFuture<'a, Result<Collected, ResolveError>> {
        async move {
            let config = self.services.cache.config();
            let dating = Dating {
                now: Instant::now(),
                now_unix: self.asker.clock().unix_now(),
                max_ttl: config.max_ttl,
                negative_ttl: config.negative_ttl,
            };
            let origin = trace.origin();
            let first = Frame::new(values, kind, path.clone(), None, dating, &self.limits);
            let mut frames = vec![first];
            while let Some(top) = frames.last_mut() {
                let Some(v) = top.next_service() else {
                    // This frame's service handles are all followed: what it found goes to
                    // the frame below, or is the result.
                    let Some(done) = frames.pop() else { break };
                    match frames.last_mut() {
                        Some(below) => below.followed(done, origin, dating),
                        None => return done.finish(origin, dating),
                    }
                    continue;
                };
                let text = text_of(&v.data);
                let target = match Handle::parse(text.trim()) {
                    Ok(h) => h,
                    Err(error) => {
                        debug!(service = %text, %error, "HS_SERV value is not a handle");
                        top.failed(ResolveError::InvalidServiceHandle { value: text, error });
                        continue;
                    }
                };
                if target == *root_handle() {
                    top.contributed(&v, dating);
                    top.found(self.root_sites().iter().cloned());
                    continue;
                }
                if top.path.contains(&target) {
                    debug!(service = %target, "service handle already on the path; skipped");
                    top.looped(target);
                    continue;
                }
                let above = top.path.then(&target);
                match self
                    .read_service(&target, kind, certify, trace, &top.path)
                    .await
                {
                    Ok(values) => {
                        let frame = Frame::new(&values, kind, above, Some(v), dating, &self.limits);
                        frames.push(frame);
                    }
                    Err(e) => {
                        debug!(service = %target, error = %e, "service handle gave no sites");
                        top.failed(e);
                    }
                }
            }
            // Not reached: the loop returns when the first frame is done.
            Ok(Collected {
                sites: Vec::new(),
                until: None,
            })
        }
        .boxed()
    }

    /// The values of service handle `target` (for the site types of `kind`), met on `path`:
    /// one service hop deeper (≤ [`MAX_SERVICE_DEPTH`], counted in the referral budget).
    async fn read_service(
        self: &Arc<Self>,
        target: &Handle,
        kind: SiteKind,
        certify: bool,
        trace: &Trace,
        path: &Path,
    ) -> Result<Vec<HandleValue>, ResolveError> {
        if path.depth() >= MAX_SERVICE_DEPTH {
            return Err(ResolveError::TooManyReferrals {
                handle: trace.origin().clone(),
                limit: MAX_SERVICE_DEPTH as u32,
            });
        }
        trace.count_referral()?;
        let spec = RequestSpec::service_lookup(target.clone(), kind, certify);
        self.read(&spec, trace, &path.then(target)).await
    }

    /// The values of one handle a lookup asks for: asked at its sites (the root's, for the
    /// `0.` handles of the lookup) through the asker, referrals followed; what the answer
    /// tells of the root is noted.
    async fn read(
        self: &Arc<Self>,
        spec: &RequestSpec,
        trace: &Trace,
        path: &Path,
    ) -> Result<Vec<HandleValue>, ResolveError> {
        let sites = self
            .sites_for(&spec.handle, spec.certify(), trace, path)
            .await?;
        let answer = self.from_sites(spec, sites, trace, path).await?;
        self.noted(&answer, spec.certify(), trace, path);
        answer
            .into_values(spec.handle.clone())
            .map(|(_, values)| values)
    }
}

#[cfg(test)]
mod tests {
    /// The service lookup is a loop that asks through the asker: nothing under `locate/`
    /// goes back through the whole procedure for a request (`SiteLocator::request`).
    #[test]
    fn nothing_under_locate_sends_through_the_whole_procedure() {
        for (file, text) in [
            ("mod.rs", include_str!("mod.rs")),
            ("services.rs", include_str!("services.rs")),
            ("referral.rs", include_str!("referral.rs")),
            ("root.rs", include_str!("root.rs")),
        ] {
            // Everything before this module's tests (whose own text names the call).
            let code = text.split("#[cfg(test)]").next().unwrap_or(text);
            assert!(!code.contains(".request("), "locate/{file} calls request()");
        }
    }
}
