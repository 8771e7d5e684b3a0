//! Service lookup (PROTOCOL.md §11.5 step 2, §5.3, §7.2): the prefix handle `0.NA/<PREFIX>`
//! asked at the root for [HS_SITE, HS_SITE.6, HS_SERV, HS_NAMESPACE]; HS_SERV service handles
//! followed recursively (depth ≤ 20, loops detected on the current path); referral bodies
//! turned into sites.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use tracing::debug;

use crate::wire::{Body, HandleValue, OpFlags, ReferralBody, ResponseCode};

use super::attempt::RequestSpec;
use super::bootstrap::ROOT_HANDLE;
use super::cache::values_ttl;
use super::error::ResolveError;
use super::sites::{extend_unique, Site};
use super::state::{Ctx, Inner, MAX_SERVICE_DEPTH};

/// Types asked for in a prefix-handle lookup.
pub const SERVICE_LOOKUP_TYPES: [&str; 4] = ["HS_SITE", "HS_SITE.6", "HS_SERV", "HS_NAMESPACE"];

/// Which family of site values to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
            if let Some(site) = &self.fixed {
                return Ok(Arc::new(vec![site.clone()]));
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

    /// The service sites of a prefix handle (cached by its values' TTLs).
    pub(crate) async fn lookup_service(
        &self,
        prefix_handle: &str,
        certify: bool,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Arc<Vec<Site>>, ResolveError> {
        if let Some(sites) = self.caches.get_service(prefix_handle, certify) {
            return Ok(sites);
        }
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
            let sites = self
                .collect_sites(&values, SiteKind::Service, certify, ctx, path)
                .await?;
            if sites.is_empty() {
                // Like the reference client: once more with AT, in case the prefix is new.
                if !retried && !spec.flags.contains(OpFlags::AT) {
                    retried = true;
                    spec.flags = spec.flags | OpFlags::AT;
                    continue;
                }
                return Err(not_found());
            }
            let sites = Arc::new(sites);
            let service_values: Vec<HandleValue> = values
                .into_iter()
                .filter(|v| {
                    SiteKind::Service.site_types().iter().any(|t| v.is_type(t))
                        || v.is_type("HS_SERV")
                })
                .collect();
            if let Some(ttl) = values_ttl(
                &service_values,
                self.clock.unix_now(),
                self.caches.config().max_ttl,
            ) {
                self.caches
                    .put_service(prefix_handle, certify, sites.clone(), ttl);
            }
            return Ok(sites);
        }
    }

    /// Sites from values: the site values of `kind` directly, plus the sites of every service
    /// handle, resolved recursively. A service handle already on `path` is skipped; when that
    /// leaves no site at all, the result is a referral loop.
    pub(crate) fn collect_sites<'a>(
        &'a self,
        values: &'a [HandleValue],
        kind: SiteKind,
        certify: bool,
        ctx: &'a Ctx,
        path: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Site>, ResolveError>> {
        async move {
            let mut sites = Vec::new();
            extend_unique(
                &mut sites,
                values
                    .iter()
                    .filter(|v| kind.site_types().iter().any(|t| v.is_type(t)))
                    .filter_map(|v| Site::from_value(v, &self.config.limits)),
            );
            let mut loop_at = None;
            let mut first_error = None;
            for v in values.iter().filter(|v| v.is_type(kind.serv_type())) {
                let target = String::from_utf8_lossy(&v.data).trim().to_string();
                if target.eq_ignore_ascii_case(ROOT_HANDLE) {
                    extend_unique(&mut sites, self.root_sites().iter().cloned());
                    continue;
                }
                if path.iter().any(|p| p.eq_ignore_ascii_case(&target)) {
                    debug!(service = %target, "service handle already on the path; skipped");
                    loop_at = Some(target);
                    continue;
                }
                match self.service_sites(&target, kind, certify, ctx, path).await {
                    Ok(more) => extend_unique(&mut sites, more),
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
            Ok(sites)
        }
        .boxed()
    }

    /// Resolves service handle `target` for the site types of `kind` and collects its sites.
    async fn service_sites(
        &self,
        target: &str,
        kind: SiteKind,
        certify: bool,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Vec<Site>, ResolveError> {
        if path.len() >= MAX_SERVICE_DEPTH {
            return Err(ResolveError::TooManyReferrals {
                handle: ctx.origin.clone(),
                limit: MAX_SERVICE_DEPTH as u32,
            });
        }
        ctx.count_referral()?;
        let mut sub_path = path.to_vec();
        sub_path.push(target.to_string());
        let spec = RequestSpec {
            handle: target.to_string(),
            indexes: Vec::new(),
            types: kind.lookup_types(),
            flags: service_flags(certify),
            recursion_count: 0,
        };
        let answer = self.fetch(spec, ctx, &sub_path).await?;
        let values = match (&answer.msg.body, answer.code()) {
            (Body::ResolutionResponse(r), ResponseCode::Success) => r.values.clone(),
            _ => return Err(final_error(&answer.msg, answer.server, target)),
        };
        self.collect_sites(&values, kind, certify, ctx, &sub_path)
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
            .await?;
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
        self.service_sites(&target, kind, certify, ctx, path).await
    }
}

/// The typed error for a final answer that is not a success.
pub(crate) fn final_error(
    msg: &crate::wire::Message,
    server: std::net::SocketAddr,
    handle: &str,
) -> ResolveError {
    let handle = handle.to_string();
    match msg.header.response_code {
        ResponseCode::HandleNotFound => ResolveError::NotFound { handle },
        ResponseCode::ValuesNotFound => ResolveError::NoMatchingValues { handle },
        ResponseCode::AuthenticationNeeded => ResolveError::AuthenticationNeeded { handle },
        ResponseCode::ServerNotResponsible => ResolveError::PrefixNotServed { handle },
        code => ResolveError::Server {
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
