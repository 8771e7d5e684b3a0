//! Service lookup (PROTOCOL.md §11.5 step 2, §5.3, §7.2): the prefix handle `0.NA/<PREFIX>`
//! asked at the root for [HS_SITE, HS_SITE.6, HS_SERV, HS_NAMESPACE]; HS_SERV service handles
//! followed recursively (depth ≤ 20, loops detected on the current path); referral bodies
//! turned into sites.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::time::Instant;
use tracing::{debug, debug_span, Instrument};

use crate::wire::{Body, HandleValue, OpFlags, ReferralBody, ResponseCode};

use super::attempt::RequestSpec;
use super::bootstrap::ROOT_HANDLE;
use super::cache::value_ttl;
use super::error::ResolveError;
use super::sites::{extend_unique, Site};
use super::state::{Ctx, Inner, ServiceFlightKey, MAX_SERVICE_DEPTH};

/// Sites collected from values, and until when they may be cached (`None`: not at all).
#[derive(Debug, Clone)]
pub(crate) struct Collected {
    pub(crate) sites: Vec<Site>,
    pub(crate) until: Option<Instant>,
}

/// The earlier of two expiries (`None`, "not cacheable", wins).
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    Some(a?.min(b?))
}

/// Types asked for in a prefix-handle lookup.
pub const SERVICE_LOOKUP_TYPES: [&str; 4] = ["HS_SITE", "HS_SITE.6", "HS_SERV", "HS_NAMESPACE"];

/// Which family of site values to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteKind {
    /// HS_SITE, HS_SITE.6 and HS_SERV (service information of a handle's prefix).
    Service,
    /// HS_SITE.PREFIX, HS_NA_DELEGATE and HS_SERV.PREFIX (derived-prefix referral).
    Prefix,
}

impl SiteKind {
    fn site_types(self) -> &'static [&'static str] {
        match self {
            SiteKind::Service => &["HS_SITE", "HS_SITE.6"],
            SiteKind::Prefix => &["HS_SITE.PREFIX", "HS_NA_DELEGATE"],
        }
    }

    fn serv_type(self) -> &'static str {
        match self {
            SiteKind::Service => "HS_SERV",
            SiteKind::Prefix => "HS_SERV.PREFIX",
        }
    }

    /// Types asked for when resolving a service handle of this kind.
    pub fn lookup_types(self) -> Vec<Bytes> {
        let mut t: Vec<Bytes> = self
            .site_types()
            .iter()
            .map(|s| Bytes::from_static(s.as_bytes()))
            .collect();
        t.push(Bytes::from_static(self.serv_type().as_bytes()));
        t
    }
}

/// True for handles that go straight to the global sites: under `0.`, `0/...`, or without `/`.
pub fn is_global(handle: &str) -> bool {
    handle.starts_with("0.") || handle.starts_with("0/") || !handle.contains('/')
}

/// True when a 303 prefix referral applies to a request for `handle` (`0.NA/...` or no `/`).
pub fn is_prefix_query(handle: &str) -> bool {
    handle
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"))
        || !handle.contains('/')
}

/// `0.NA/<PREFIX>` for a handle `PREFIX/suffix` (ASCII upper-cased prefix).
pub fn prefix_handle(handle: &str) -> Option<String> {
    let (prefix, _) = handle.split_once('/')?;
    Some(format!("0.NA/{}", prefix.to_ascii_uppercase()))
}

/// The flags of a service request: REC | CA | PO, plus CT when certifying.
pub(crate) fn service_flags(certify: bool) -> OpFlags {
    let f = OpFlags::REC | OpFlags::CA | OpFlags::PO;
    if certify {
        f | OpFlags::CT
    } else {
        f
    }
}

impl Inner {
    /// The sites to ask about `handle`.
    pub(crate) fn sites_for<'a>(
        &'a self,
        handle: &'a str,
        certify: bool,
        ctx: &'a Ctx,
        path: &'a [String],
    ) -> BoxFuture<'a, Result<Arc<Vec<Site>>, ResolveError>> {
        async move {
            if let Some(sites) = &self.fixed {
                return Ok(sites.clone());
            }
            match prefix_handle(handle) {
                Some(ph) if !is_global(handle) => {
                    self.lookup_service(&ph, certify, ctx, path).await
                }
                _ => Ok(self.root_sites()),
            }
        }
        .boxed()
    }

    /// The service sites of a prefix handle (cached by its values' TTLs). Concurrent lookups
    /// of the same prefix handle share one.
    pub(crate) async fn lookup_service(
        &self,
        prefix_handle: &str,
        certify: bool,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        if let Some(out) = self.cached_service(prefix_handle, certify) {
            return out;
        }
        let Some(this) = self.me.upgrade() else {
            return self
                .lookup_service_now(prefix_handle, certify, ctx, path)
                .await;
        };
        let key = ServiceFlightKey::new(None, prefix_handle, certify, path);
        let (handle, path) = (prefix_handle.to_string(), path.to_vec());
        let (flight, shared, started) = self.flights.services.join_or_start(
            key,
            || Arc::new(ctx.for_flight(prefix_handle)),
            move |ctx| {
                async move {
                    let out = match this.cached_service(&handle, certify) {
                        Some(out) => out,
                        None => this.lookup_service_now(&handle, certify, &ctx, &path).await,
                    };
                    (out, ctx.hops())
                }
                .instrument(debug_span!("shared_service_lookup", prefix_handle))
                .boxed()
            },
        );
        if !started {
            debug!(prefix_handle, "joining a service lookup in flight");
        }
        ctx.wait_for(flight, shared).await
    }

    /// The cached outcome of a service lookup, if any (an empty entry is a cached "not
    /// found").
    fn cached_service(
        &self,
        prefix_handle: &str,
        certify: bool,
    ) -> Option<Result<Arc<Vec<Site>>, ResolveError>> {
        let sites = self.caches.get_service(prefix_handle, certify)?;
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
        &self,
        prefix_handle: &str,
        certify: bool,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        let mut spec = RequestSpec {
            handle: prefix_handle.to_string(),
            indexes: Vec::new(),
            types: SERVICE_LOOKUP_TYPES
                .iter()
                .map(|t| Bytes::from_static(t.as_bytes()))
                .collect(),
            flags: service_flags(certify),
            recursion_count: 1,
        };
        let not_found = || ResolveError::ServiceNotFound {
            prefix_handle: prefix_handle.to_string(),
        };
        let mut retried = false;
        loop {
            let answer = self.fetch(spec.clone(), ctx, path).await?;
            let code = answer.code();
            let values = match (&answer.msg.body, code) {
                (Body::ResolutionResponse(r), ResponseCode::Success) => r.values.clone(),
                (_, ResponseCode::HandleNotFound | ResponseCode::ValuesNotFound) => Vec::new(),
                _ => return Err(final_error(&answer.msg, answer.server, prefix_handle)),
            };
            let collected = self
                .collect_sites(&values, SiteKind::Service, certify, ctx, path)
                .await?;
            if collected.sites.is_empty() {
                // Like the reference client: once more with AT, in case the prefix is new.
                if !retried && !spec.flags.contains(OpFlags::AT) {
                    retried = true;
                    spec.flags = spec.flags | OpFlags::AT;
                    continue;
                }
                // Known not to exist: kept as briefly as a "handle not found", so a stream of
                // handles under an unknown prefix does not ask the root twice per handle.
                self.caches.put_service_not_found(prefix_handle, certify);
                return Err(not_found());
            }
            let sites = Arc::new(collected.sites);
            if let Some(until) = collected.until {
                let ttl = until.saturating_duration_since(Instant::now());
                self.caches
                    .put_service(prefix_handle, certify, sites.clone(), ttl);
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
    pub(crate) fn collect_sites<'a>(
        &'a self,
        values: &'a [HandleValue],
        kind: SiteKind,
        certify: bool,
        ctx: &'a Ctx,
        path: &'a [String],
    ) -> BoxFuture<'a, Result<Collected, ResolveError>> {
        async move {
            let now = Instant::now();
            let now_unix = self.clock.unix_now();
            let cap = self.caches.config().max_ttl;
            let mut until = Some(now + cap);
            let mut contributed = |v: &HandleValue| {
                until = earliest(until, value_ttl(v, now_unix, cap).map(|t| now + t));
            };
            let mut sites = Vec::new();
            for v in values
                .iter()
                .filter(|v| kind.site_types().iter().any(|t| v.is_type(t)))
            {
                if let Some(site) = Site::from_value(v, &self.config.limits) {
                    contributed(v);
                    extend_unique(&mut sites, [site]);
                }
            }
            let mut loop_at = None;
            let mut first_error = None;
            let mut nested = Vec::new();
            for v in values.iter().filter(|v| v.is_type(kind.serv_type())) {
                let target = String::from_utf8_lossy(&v.data).trim().to_string();
                if target.eq_ignore_ascii_case(ROOT_HANDLE) {
                    contributed(v);
                    extend_unique(&mut sites, self.root_sites().iter().cloned());
                    continue;
                }
                if path.iter().any(|p| p.eq_ignore_ascii_case(&target)) {
                    debug!(service = %target, "service handle already on the path; skipped");
                    loop_at = Some(target);
                    continue;
                }
                match self.service_sites(&target, kind, certify, ctx, path).await {
                    Ok(more) => {
                        contributed(v);
                        nested.push(more.until);
                        extend_unique(&mut sites, more.sites.iter().cloned());
                    }
                    Err(e) => {
                        debug!(service = %target, error = %e, "service handle gave no sites");
                        first_error.get_or_insert(e);
                    }
                }
            }
            if sites.is_empty() {
                if let Some(e) = first_error {
                    return Err(e);
                }
                if let Some(at) = loop_at {
                    return Err(ResolveError::ReferralLoop {
                        handle: ctx.origin.clone(),
                        at,
                    });
                }
            }
            for n in nested {
                until = earliest(until, n);
            }
            if first_error.is_some() || loop_at.is_some() {
                until = earliest(until, Some(now + self.caches.config().negative_ttl));
            }
            Ok(Collected { sites, until })
        }
        .boxed()
    }

    /// Resolves service handle `target` for the site types of `kind` and collects its sites.
    /// Concurrent resolutions of the same service handle (on the same path) share one.
    async fn service_sites(
        &self,
        target: &str,
        kind: SiteKind,
        certify: bool,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Arc<Collected>, ResolveError> {
        if path.len() >= MAX_SERVICE_DEPTH {
            return Err(ResolveError::TooManyReferrals {
                handle: ctx.origin.clone(),
                limit: MAX_SERVICE_DEPTH as u32,
            });
        }
        ctx.count_referral()?;
        let mut sub_path = path.to_vec();
        sub_path.push(target.to_string());
        let Some(this) = self.me.upgrade() else {
            return self
                .service_sites_now(target, kind, certify, ctx, &sub_path)
                .await
                .map(Arc::new);
        };
        let key = ServiceFlightKey::new(Some(kind), target, certify, &sub_path);
        let span = debug_span!("shared_service_handle", service = target);
        let flight_ctx = || Arc::new(ctx.for_flight(target));
        let target = target.to_string();
        let (flight, shared, _) =
            self.flights
                .service_handles
                .join_or_start(key, flight_ctx, move |ctx| {
                    async move {
                        let out = this
                            .service_sites_now(&target, kind, certify, &ctx, &sub_path)
                            .await
                            .map(Arc::new);
                        (out, ctx.hops())
                    }
                    .instrument(span)
                    .boxed()
                });
        ctx.wait_for(flight, shared).await
    }

    /// The service handle resolution itself (`sub_path` ends with `target`).
    async fn service_sites_now(
        &self,
        target: &str,
        kind: SiteKind,
        certify: bool,
        ctx: &Ctx,
        sub_path: &[String],
    ) -> Result<Collected, ResolveError> {
        let spec = RequestSpec {
            handle: target.to_string(),
            indexes: Vec::new(),
            types: kind.lookup_types(),
            flags: service_flags(certify),
            recursion_count: 0,
        };
        let answer = self.fetch(spec, ctx, sub_path).await?;
        let values = match (&answer.msg.body, answer.code()) {
            (Body::ResolutionResponse(r), ResponseCode::Success) => r.values.clone(),
            _ => return Err(final_error(&answer.msg, answer.server, target)),
        };
        self.collect_sites(&values, kind, certify, ctx, sub_path)
            .await
    }

    /// The sites a referral (302 service, 303 prefix) points to.
    pub(crate) async fn referral_sites(
        &self,
        body: &ReferralBody,
        kind: SiteKind,
        certify: bool,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Vec<Site>, ResolveError> {
        let values = body.values.clone().unwrap_or_default();
        let sites = self
            .collect_sites(&values, kind, certify, ctx, path)
            .await?
            .sites;
        if !sites.is_empty() || body.referral_handle.is_empty() {
            return Ok(sites);
        }
        let target = String::from_utf8_lossy(&body.referral_handle)
            .trim()
            .to_string();
        if kind == SiteKind::Service && target.eq_ignore_ascii_case(ROOT_HANDLE) {
            return Ok(self.root_sites().to_vec());
        }
        if path.iter().any(|p| p.eq_ignore_ascii_case(&target)) {
            return Err(ResolveError::ReferralLoop {
                handle: ctx.origin.clone(),
                at: target,
            });
        }
        let collected = self
            .service_sites(&target, kind, certify, ctx, path)
            .await?;
        Ok(collected.sites.clone())
    }
}

/// The typed error for a final answer that is not a success.
pub(crate) fn final_error(
    msg: &crate::wire::Message,
    server: std::net::SocketAddr,
    handle: &str,
) -> ResolveError {
    let handle = handle.to_string();
    match msg.response_code() {
        ResponseCode::HandleNotFound => ResolveError::NotFound { handle },
        ResponseCode::ValuesNotFound => ResolveError::NoMatchingValues { handle },
        ResponseCode::AuthenticationNeeded => ResolveError::AuthenticationNeeded { handle },
        ResponseCode::ServerNotResponsible => ResolveError::PrefixNotServed { handle },
        code => ResolveError::Server {
            sites_asked: 1,
            server,
            code,
            message: match &msg.body {
                Body::Error(e) => String::from_utf8_lossy(&e.message).into_owned(),
                _ => String::new(),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_and_prefix_rules() {
        assert!(is_global("0.NA/10.1045"));
        assert!(is_global("0/abc"));
        assert!(is_global("10.1045"));
        assert!(!is_global("10.1045/abc"));
        assert!(!is_global("0a/b"));
        assert!(is_prefix_query("0.na/10.1045"));
        assert!(is_prefix_query("10.1045"));
        assert!(!is_prefix_query("10.1045/x"));
        assert_eq!(
            prefix_handle("20.500.abc/ABC/d").as_deref(),
            Some("0.NA/20.500.ABC")
        );
        assert_eq!(prefix_handle("nope"), None);
    }

    #[test]
    fn lookup_types_per_kind() {
        assert_eq!(
            SiteKind::Service.lookup_types(),
            vec!["HS_SITE", "HS_SITE.6", "HS_SERV"]
        );
        assert_eq!(
            SiteKind::Prefix.lookup_types(),
            vec!["HS_SITE.PREFIX", "HS_NA_DELEGATE", "HS_SERV.PREFIX"]
        );
    }
}
