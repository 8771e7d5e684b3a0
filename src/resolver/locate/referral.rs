//! Referrals (PROTOCOL.md §5.3): a 302 (service referral) or 303 (prefix referral) answer
//! sends the same request, one referral deeper, to the sites it names (its values, else its
//! referral handle's), at most as often as the resolution's referral budget allows, with
//! loops detected.

use std::sync::Arc;

use tracing::debug;

use crate::ident::Handle;
use crate::root::root_handle;
use crate::wire::{Body, ReferralBody, ResponseCode};

use super::super::ask::{Answer, RequestSpec};
use super::super::error::{ProtocolViolation, ResolveError};
use super::super::site::{text_of, Site, SiteKind};
use super::super::support::trace::Trace;
use super::{Path, SiteLocator};

impl SiteLocator {
    /// Follows the referral in `answer` (from `sites`) and those after it.
    pub(super) async fn follow_referrals(
        self: &Arc<Self>,
        spec: &RequestSpec,
        mut sites: Arc<Vec<Site>>,
        mut answer: Answer,
        trace: &Trace,
        path: &Path,
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
                        server: Some(answer.server),
                        violation: ProtocolViolation::UnexpectedPrefixReferral,
                    })
                }
                _ => return Ok(answer),
            };
            let Body::Referral(body) = &answer.msg.body else {
                return Err(ResolveError::Protocol {
                    sites_asked: 1,
                    server: Some(answer.server),
                    violation: ProtocolViolation::UnexpectedBody {
                        code: answer.code(),
                    },
                });
            };
            trace.count_referral()?;
            let referred = self
                .referral_sites(body, kind, spec.certify(), trace, path)
                .await?;
            // The referral's handle, to name it (its values may have given the sites).
            let at = Handle::parse(text_of(&body.referral_handle).trim()).ok();
            debug!(handle = %spec.handle, referral = ?at, sites = referred.len(), code = %answer.code(), "referral");
            if referred.is_empty() {
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: at.unwrap_or_else(|| spec.handle.clone()),
                });
            }
            if seen.is_empty() {
                seen.push(sites_key(&sites));
            }
            let key = sites_key(&referred);
            if seen.contains(&key) {
                return Err(ResolveError::ReferralLoop {
                    handle: spec.handle.clone(),
                    at,
                });
            }
            seen.push(key);
            sites = Arc::new(referred);
            // The same request again, one referral deeper (§5.3).
            let deeper = spec.to_mut();
            deeper.recursion_count = deeper.recursion_count.saturating_add(1);
            answer = self.asker.race(&spec, &sites, trace).await?;
        }
    }

    /// The sites a referral (302 service, 303 prefix) points to: its values, else its
    /// referral handle's.
    async fn referral_sites(
        self: &Arc<Self>,
        body: &ReferralBody,
        kind: SiteKind,
        certify: bool,
        trace: &Trace,
        path: &Path,
    ) -> Result<Vec<Site>, ResolveError> {
        let values = body.values.as_deref().unwrap_or_default();
        let sites = self.walk(values, kind, certify, trace, path).await?.sites;
        if !sites.is_empty() || body.referral_handle.is_empty() {
            return Ok(sites);
        }
        let text = text_of(&body.referral_handle);
        let target = Handle::parse(text.trim())
            .map_err(|error| ResolveError::InvalidServiceHandle { value: text, error })?;
        if kind == SiteKind::Service && target == *root_handle() {
            return Ok(self.root_sites().to_vec());
        }
        if path.contains(&target) {
            return Err(ResolveError::ReferralLoop {
                handle: trace.origin().clone(),
                at: Some(target),
            });
        }
        // The referral handle's values, walked as a service handle's.
        let values = self
            .read_service(&target, kind, certify, trace, path)
            .await?;
        let deeper = path.then(&target);
        Ok(self
            .walk(&values, kind, certify, trace, &deeper)
            .await?
            .sites)
    }
}

/// Identity of a list of sites (for referral-loop detection).
fn sites_key(sites: &[Site]) -> Vec<Vec<(std::net::IpAddr, Vec<u32>)>> {
    let mut ids: Vec<_> = sites.iter().map(Site::identity).collect();
    ids.sort();
    ids
}
