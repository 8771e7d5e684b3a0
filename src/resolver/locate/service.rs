//! Service lookup (PROTOCOL.md §11.5 step 2, §5.3, §7.2): the sites of a handle's prefix.
//! The prefix handle `0.NA/<PREFIX>` is asked at the root for HS_SITE, HS_SITE.6, HS_SERV and
//! HS_NAMESPACE; the HS_SERV service handles it names are resolved for their sites in turn
//! (depth ≤ [`MAX_SERVICE_DEPTH`], loops detected on the current [`Path`]). The sites are
//! cached for the shortest TTL of the values they came from; concurrent lookups of one prefix
//! (and resolutions of one service handle) share one.

use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::time::Instant;
use tracing::{debug, debug_span, Instrument};

use crate::ident::Handle;
use crate::root::root_handle;
use crate::wire::{HandleValue, OpFlags, ReferralBody};

use super::super::ask::RequestSpec;
use super::super::error::ResolveError;
use super::super::settings::MAX_SERVICE_DEPTH;
use super::super::support::cache::{value_ttl, ServiceCache};
use super::super::support::flight::Flights;
use super::super::support::trace::{SharedOutcome, Trace};
use super::sites::{extend_unique, text_of, Site, SiteKind};
use super::{Path, SiteLocator};

/// The service cache and the lookups in flight.
#[derive(Debug)]
pub(super) struct Services {
    cache: ServiceCache,
    prefix_lookups: Flights<LookupKey, SharedOutcome<Arc<Vec<Site>>>, Arc<Trace>>,
    service_lookups: Flights<LookupKey, SharedOutcome<Arc<Collected>>, Arc<Trace>>,
}

impl Services {
    pub(super) fn new(cache: ServiceCache) -> Self {
        Self {
            cache,
            prefix_lookups: Flights::default(),
            service_lookups: Flights::default(),
        }
    }

    /// Forgets every cached service.
    pub(super) fn clear(&self) {
        self.cache.clear();
    }

    /// Forgets the service of one prefix handle.
    pub(super) fn forget(&self, prefix_handle: &Handle) {
        self.cache.forget(prefix_handle);
    }

    /// The cached outcome of a service lookup, if any (an empty entry is a cached "not
    /// found").
    pub(super) fn cached(
        &self,
        prefix_handle: &Handle,
        certify: bool,
    ) -> Option<Result<Arc<Vec<Site>>, ResolveError>> {
        let sites = self.cache.get(prefix_handle, certify)?;
        Some(if sites.is_empty() {
            Err(ResolveError::ServiceNotFound {
                prefix_handle: prefix_handle.to_string(),
            })
        } else {
            Ok(sites)
        })
    }
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
    root_refresh: bool,
}

impl LookupKey {
    fn new(kind: Option<SiteKind>, handle: &Handle, certify: bool, path: &Path) -> Self {
        Self {
            kind,
            handle: handle.as_str().to_ascii_uppercase(),
            certify,
            path: path
                .services
                .iter()
                .map(|p| p.as_str().to_ascii_uppercase())
                .collect(),
            root_refresh: path.root_refresh,
        }
    }
}

/// Sites collected from values, and until when they may be cached (`None`: not at all).
#[derive(Debug, Clone)]
pub(super) struct Collected {
    pub(super) sites: Vec<Site>,
    until: Option<Instant>,
}

/// The earlier of two expiries (`None`, "not cacheable", wins).
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    Some(a?.min(b?))
}

impl SiteLocator {
    /// Looks up the service sites of a prefix handle (cached by its values' TTLs).
    /// Concurrent lookups of the same prefix handle share one.
    ///
    /// Boxed, as are [`SiteLocator::service_sites`] and [`SiteLocator::refresh_root`]: the
    /// procedure is recursive (a service lookup, a service handle or a root refresh sends
    /// requests of its own through [`SiteLocator::request`]), and a recursive future needs a
    /// box in the cycle. The boxes are here, off the path of a request whose sites are
    /// known.
    pub(super) fn lookup_service<'a>(
        self: &'a Arc<Self>,
        prefix_handle: &'a Handle,
        certify: bool,
        trace: &'a Trace,
        path: &'a Path,
    ) -> BoxFuture<'a, Result<Arc<Vec<Site>>, ResolveError>> {
        let key = LookupKey::new(None, prefix_handle, certify, path);
        let this = self.clone();
        let (handle, owned_path) = (prefix_handle.clone(), path.clone());
        let span = debug_span!("shared_service_lookup", prefix_handle = %prefix_handle);
        trace
            .share(
                &self.services.prefix_lookups,
                key,
                || trace.for_shared_work(prefix_handle),
                move |trace| {
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
                    prefix_handle: prefix_handle.to_string(),
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
    pub(super) async fn collect_sites(
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
                    handle: trace.origin().to_string(),
                    at: at.to_string(),
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
                    handle: trace.origin().to_string(),
                    limit: MAX_SERVICE_DEPTH as u32,
                });
            }
            trace.count_referral()?;
            let sub_path = path.then(target);
            let key = LookupKey::new(Some(kind), target, certify, &sub_path);
            let span = debug_span!("shared_service_handle", service = %target);
            let this = self.clone();
            let owned = target.clone();
            trace
                .share(
                    &self.services.service_lookups,
                    key,
                    || trace.for_shared_work(target),
                    move |trace| {
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

    /// The sites a referral (302 service, 303 prefix) points to: its values, else its
    /// referral handle's.
    pub(super) async fn referral_sites(
        self: &Arc<Self>,
        body: &ReferralBody,
        kind: SiteKind,
        certify: bool,
        trace: &Trace,
        path: &Path,
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
        if path.contains(&target) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_handles_compare_case_insensitively_in_the_whole_handle() {
        let h = |s: &str| Handle::parse(s).unwrap();
        let path = Path::default().then(&h("0.SERV/x")).then(&h("31.S/abc"));
        assert!(path.contains(&h("31.s/ABC")));
        assert!(path.contains(&h("0.serv/X")));
        assert!(!path.contains(&h("31.S/abd")));
        assert_eq!(
            LookupKey::new(Some(SiteKind::Service), &h("31.S/abc"), false, &path),
            LookupKey::new(Some(SiteKind::Service), &h("31.s/ABC"), false, &path)
        );
        let shorter = Path::default().then(&h("0.SERV/x"));
        assert_ne!(
            LookupKey::new(None, &h("0.NA/31.S"), false, &path),
            LookupKey::new(None, &h("0.NA/31.S"), false, &shorter)
        );
        // A root refresh's lookups are never merged with others.
        assert_ne!(
            LookupKey::new(None, &h("0.NA/31.S"), false, &Path::root_refresh()),
            LookupKey::new(None, &h("0.NA/31.S"), false, &Path::default())
        );
    }
}
