//! [`SiteLocator`]: which sites to ask about a handle, and the whole procedure for one
//! request (PROTOCOL.md §11.5): [`SiteLocator::request`] finds the sites
//! ([`SiteLocator::sites_for`]: the fixed server, the root, or the prefix's service), asks
//! them through the [`Asker`], follows referrals, and refreshes the root when an answer says
//! it is out of date.
//!
//! - **Service lookup** (`service.rs`, §11.5 step 2, §5.3, §7.2): the prefix handle
//!   `0.NA/<PREFIX>` asked at the root for HS_SITE, HS_SITE.6, HS_SERV, HS_NAMESPACE; HS_SERV
//!   service handles followed recursively (depth ≤ 20, loops detected on the current
//!   [`Path`]); cached by the values' TTLs; concurrent lookups of one prefix share one.
//! - **Referrals** (`referral.rs`): 302 (service) and 303 (prefix) answers followed (≤ 40
//!   with the service hops, loops detected), each one referral deeper.
//! - **Root** (`root.rs`): the root sites (built in, from a file, or refreshed) and their
//!   refresh (§11.4), verified against the trust root when there is one.
//! - **Sites** (`sites.rs`): [`Site`], a decoded HS_SITE value as the procedure uses it.
//!
//! The locator reaches servers only through its [`Asker`]. A service lookup is itself a
//! request, made through [`SiteLocator::request`] again (for the prefix handle, then for the
//! service handles it names): the procedure is recursive, and its boxes are in
//! `service.rs` and `root.rs`, off the path of a request whose sites are known.

mod referral;
mod root;
mod service;
mod sites;

use std::sync::Arc;

use tracing::info;

use crate::ident::Handle;
use crate::wire::{Limits, ResponseCode};

use super::ask::{Answer, Asker, RequestSpec};
use super::error::ResolveError;
use super::settings::Settings;
use super::support::cache::ServiceCache;
use super::support::trace::Trace;

pub(crate) use root::{sites_of, Root, RootSites};
#[cfg(feature = "http")]
pub(crate) use sites::http_target;
pub(crate) use sites::{interface_addr, query_addr, text_of, SiteKind};
pub use sites::{server_record, Site};

/// Finds the sites for a request and runs the procedure for it.
pub(crate) struct SiteLocator {
    asker: Asker,
    /// The root sites and their refresh.
    root: Root,
    /// `--server`: every request goes to this one site, without service lookup.
    fixed: Option<Arc<Vec<Site>>>,
    /// Service information by prefix, and the lookups in flight.
    services: service::Services,
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

    /// How many service handles deep it is.
    fn depth(&self) -> usize {
        self.services.len()
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
            services: service::Services::new(services),
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
    async fn from_sites(
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
}
