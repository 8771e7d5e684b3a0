//! The resolution procedure for one request (PROTOCOL.md §11.5): find the sites, ask them
//! hedged in SRTT order, follow 302/303 referrals (≤ 40 in all, loops detected), and on 300
//! refresh the root once and start over.

use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use tracing::{debug, info};

use crate::wire::{Body, OpFlags, ResponseCode};

use super::attempt::{Answer, RequestSpec};
use super::bootstrap::ROOT_HANDLE;
use super::error::{ProtocolViolation, ResolveError};
use super::hedging::race;
use super::selection::{order_sites, srtt_key};
use super::service::{is_prefix_query, prefix_handle, service_flags, SiteKind};
use super::sites::Site;
use super::state::{Ctx, Inner};

impl Inner {
    /// Asks the sites (hedged, in SRTT order; primary sites only for AT requests). The first
    /// acceptable answer wins; when none comes, the most telling failure is returned.
    pub(crate) async fn race_sites(
        &self,
        spec: &RequestSpec,
        sites: &[Site],
        ctx: &Ctx,
    ) -> Result<Answer, ResolveError> {
        let handle = spec.handle.as_bytes();
        let authoritative = spec.flags.contains(OpFlags::AT);
        let ordered =
            self.with_rng(|rng| order_sites(&self.srtt, sites, handle, authoritative, rng));
        let delays: Vec<_> = ordered
            .iter()
            .map(|s| {
                let server = s.server_for(handle).map(srtt_key);
                self.srtt
                    .hedge_delay(server, self.config.hedge_min, self.config.hedge_max)
            })
            .collect();
        let result = race(
            ordered.len(),
            self.config.max_parallel,
            |i| self.ask_site(&ordered[i], spec, ctx),
            |i| delays.get(i).copied().unwrap_or(self.config.hedge_max),
        )
        .await;
        match result {
            Ok((_, answer)) => Ok(answer),
            Err(errors) => Err(summarize(
                &spec.handle,
                errors.into_iter().map(|(_, e)| e).collect(),
            )),
        }
    }

    /// Asks `sites`, following referrals, and returns the final answer (any code but 302/303).
    pub(crate) async fn ask(
        &self,
        spec: &RequestSpec,
        sites: Arc<Vec<Site>>,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Answer, ResolveError> {
        let mut seen = HashSet::new();
        seen.insert(sites_key(&sites));
        let mut sites = sites;
        loop {
            let answer = self.race_sites(spec, &sites, ctx).await?;
            let kind = match answer.code() {
                ResponseCode::ServiceReferral => SiteKind::Service,
                ResponseCode::PrefixReferral => {
                    if !is_prefix_query(&spec.handle) {
                        return Err(ResolveError::Protocol {
                            server: answer.server,
                            violation: ProtocolViolation::UnexpectedPrefixReferral,
                        });
                    }
                    SiteKind::Prefix
                }
                _ => return Ok(answer),
            };
            let Body::Referral(body) = &answer.msg.body else {
                return Err(ResolveError::Protocol {
                    server: answer.server,
                    violation: ProtocolViolation::UnexpectedBody {
                        code: answer.code(),
                    },
                });
            };
            ctx.count_referral()?;
            let referred = self
                .referral_sites(body, kind, spec.certify(), ctx, path)
                .await?;
            let at = String::from_utf8_lossy(&body.referral_handle).into_owned();
            debug!(handle = %spec.handle, referral = %at, sites = referred.len(), code = %answer.code(), "referral");
            if referred.is_empty() {
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: if at.is_empty() {
                        spec.handle.clone()
                    } else {
                        at
                    },
                });
            }
            if !seen.insert(sites_key(&referred)) {
                return Err(ResolveError::ReferralLoop {
                    handle: spec.handle.clone(),
                    at: if at.is_empty() {
                        "(referral sites)".into()
                    } else {
                        at
                    },
                });
            }
            sites = Arc::new(referred);
        }
    }

    /// The whole procedure for one request: sites for its handle, referrals, and one root
    /// refresh on 300 (out-of-date site information).
    pub(crate) fn fetch<'a>(
        &'a self,
        spec: RequestSpec,
        ctx: &'a Ctx,
        path: &'a [String],
    ) -> BoxFuture<'a, Result<Answer, ResolveError>> {
        async move {
            loop {
                let sites = self.sites_for(&spec.handle, spec.certify(), ctx, path).await?;
                let answer = self.ask(&spec, sites, ctx, path).await?;
                if answer.code() == ResponseCode::OutOfDateSiteInfo && ctx.claim_refresh() {
                    info!(server = %answer.server, "site information out of date; refreshing the root");
                    self.refresh_root(spec.certify(), ctx).await?;
                    if let Some(p) = prefix_handle(&spec.handle) {
                        self.caches.forget_service(&p);
                    }
                    continue;
                }
                return Ok(answer);
            }
        }
        .boxed()
    }

    /// Re-reads the root service information from `0.NA/0.NA` at the current root sites.
    pub(crate) async fn refresh_root(&self, certify: bool, ctx: &Ctx) -> Result<(), ResolveError> {
        let spec = RequestSpec {
            handle: ROOT_HANDLE.to_string(),
            indexes: Vec::new(),
            types: SiteKind::Service.lookup_types(),
            flags: service_flags(certify),
            recursion_count: 0,
        };
        let path = [ROOT_HANDLE.to_string()];
        let answer = self.ask(&spec, self.root_sites(), ctx, &path).await?;
        let values = match (&answer.msg.body, answer.code()) {
            (Body::ResolutionResponse(r), ResponseCode::Success) => r.values.clone(),
            _ => {
                return Err(super::service::final_error(
                    &answer.msg,
                    answer.server,
                    ROOT_HANDLE,
                ))
            }
        };
        let sites = self
            .collect_sites(&values, SiteKind::Service, certify, ctx, &path)
            .await?;
        if sites.is_empty() {
            return Err(ResolveError::ServiceNotFound {
                prefix_handle: ROOT_HANDLE.to_string(),
            });
        }
        info!(sites = sites.len(), "root service information refreshed");
        self.set_root_sites(sites);
        Ok(())
    }

    /// The request for a resolution of `handle` with these filters and flags.
    pub(crate) fn resolution_spec(
        &self,
        handle: &str,
        types: &[String],
        indexes: &[u32],
        certify: bool,
        authoritative: bool,
        public_only: bool,
    ) -> RequestSpec {
        let mut flags = OpFlags::REC | OpFlags::CA;
        flags.set(OpFlags::PO, public_only);
        flags.set(OpFlags::CT, certify);
        flags.set(OpFlags::AT, authoritative);
        flags.set(OpFlags::RD, self.config.request_digest);
        RequestSpec {
            handle: handle.to_string(),
            indexes: indexes.to_vec(),
            types: types.iter().map(|t| Bytes::from(t.clone())).collect(),
            flags,
            recursion_count: 0,
        }
    }
}

/// Identity of a list of sites (for referral-loop detection).
fn sites_key(sites: &[Site]) -> Vec<Vec<(std::net::IpAddr, Vec<u32>)>> {
    let mut ids: Vec<_> = sites.iter().map(Site::identity).collect();
    ids.sort();
    ids
}

/// The error reported when every site failed: 301 everywhere → prefix not served; otherwise the
/// first failure that is not a transport failure, else the last transport failure.
pub(crate) fn summarize(handle: &str, errors: Vec<ResolveError>) -> ResolveError {
    if errors.is_empty() {
        return ResolveError::ServiceNotFound {
            prefix_handle: handle.to_string(),
        };
    }
    let all_301 = errors.iter().all(|e| {
        matches!(
            e,
            ResolveError::Server {
                code: ResponseCode::ServerNotResponsible,
                ..
            }
        )
    });
    if all_301 {
        return ResolveError::PrefixNotServed {
            handle: handle.to_string(),
        };
    }
    let mut last_transport = None;
    for e in errors {
        match e {
            ResolveError::Transport { .. } => last_transport = Some(e),
            ResolveError::Server {
                code: ResponseCode::ServerNotResponsible,
                ..
            } => {}
            other => return other,
        }
    }
    last_transport.unwrap_or(ResolveError::PrefixNotServed {
        handle: handle.to_string(),
    })
}
