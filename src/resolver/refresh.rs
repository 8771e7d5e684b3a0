//! Root refresh (PROTOCOL.md §11.4): `0.NA/0.NA` re-read at the current root sites, whose
//! HS_SITE / HS_SERV values replace the root sites.
//!
//! Three triggers: the caller ([`crate::resolver::Resolver::refresh_root`]); an answer 300
//! (out-of-date site information), once per resolution before it starts over; and a root site
//! answering with a larger SiteInfoSerialNumber than the one sent, once per resolution, in the
//! background (the answer in hand is good; only later requests need the new sites).
//! Concurrent refreshes share one. The two automatic triggers start at most one refresh per
//! [`DEFAULT_ROOT_REFRESH_INTERVAL`] (configurable) per resolver, so a root that keeps
//! announcing a serial its own `0.NA/0.NA` does not carry cannot cause a storm.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use tokio::time::Instant;
use tracing::{debug, info, info_span, Instrument};

use crate::wire::{Body, ResponseCode};

use super::attempt::{Answer, RequestSpec};
use super::bootstrap::ROOT_HANDLE;
use super::error::ResolveError;
use super::service::{final_error, service_flags, SiteKind};
use super::sites::{Site, UNKNOWN_SERIAL};
use super::state::{Ctx, Inner};

/// Least time between two automatic root refreshes of one resolver (default).
pub const DEFAULT_ROOT_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

impl Inner {
    /// Refreshes the root now (joining a refresh in flight with the same certify flag).
    pub(crate) async fn refresh_root(&self, certify: bool, ctx: &Ctx) -> Result<(), ResolveError> {
        let Some(this) = self.me.upgrade() else {
            return self.refresh_root_now(certify, ctx).await;
        };
        let (flight, shared, _) = self.flights.refresh.join_or_start(
            certify,
            || Arc::new(Ctx::new(ROOT_HANDLE)),
            move |ctx| {
                async move {
                    let out = this.refresh_root_now(certify, &ctx).await;
                    (out, ctx.hops())
                }
                .boxed()
            },
        );
        ctx.wait_for(flight, shared).await
    }

    /// An automatic refresh: joins one in flight, else starts one when the rate limit allows.
    /// Returns whether a refresh ran.
    pub(crate) async fn refresh_root_limited(
        &self,
        certify: bool,
        ctx: &Ctx,
    ) -> Result<bool, ResolveError> {
        let certify = self.auto_refresh_certify(certify);
        if let Some((flight, shared)) = self.flights.refresh.join(&certify) {
            return ctx.wait_for(flight, shared).await.map(|()| true);
        }
        if !self.claim_root_refresh() {
            debug!("root refreshed recently; not again yet");
            return Ok(false);
        }
        self.refresh_root(certify, ctx).await.map(|()| true)
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
        let mut last = match self.root_refreshed_at.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let interval = self.config.root_refresh_interval;
        if last.is_some_and(|t| now.saturating_duration_since(t) < interval) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// True when `site` is one of the current root sites.
    fn is_root_site(&self, site: &Site) -> bool {
        let id = site.identity();
        self.root_sites().iter().any(|s| s.identity() == id)
    }

    /// Looks at the site serial of an answer: when a root site announces a larger serial than
    /// the one sent, the root is refreshed in the background (once per resolution, rate
    /// limited). The refresh ends within the resolver's deadline.
    pub(crate) fn note_site_serial(&self, answer: &Answer, certify: bool, ctx: &Ctx) {
        let sent = answer.site.request_serial;
        let announced = answer.msg.header.site_info_serial;
        if sent == UNKNOWN_SERIAL || announced == UNKNOWN_SERIAL || announced <= sent {
            return;
        }
        if !self.is_root_site(&answer.site) || !ctx.claim_refresh() {
            return;
        }
        let certify = self.auto_refresh_certify(certify);
        if self.flights.refresh.join(&certify).is_some() || !self.claim_root_refresh() {
            debug!(
                sent,
                announced, "newer root site information announced; refresh in flight or recent"
            );
            return;
        }
        let (Some(this), Ok(runtime)) = (self.me.upgrade(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        info!(server = %answer.server, sent, announced, "root site announces newer site information; refreshing the root");
        let deadline = self.config.timeout;
        let work = async move {
            let ctx = Ctx::new(ROOT_HANDLE);
            match tokio::time::timeout(deadline, this.refresh_root(certify, &ctx)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => info!(error = %e, "root refresh failed"),
                Err(_) => info!(?deadline, "root refresh timed out"),
            }
        };
        runtime.spawn(work.instrument(info_span!("root_refresh")));
    }

    /// Re-reads the root service information from `0.NA/0.NA` at the current root sites.
    async fn refresh_root_now(&self, certify: bool, ctx: &Ctx) -> Result<(), ResolveError> {
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
            _ => return Err(final_error(&answer.msg, answer.server, ROOT_HANDLE)),
        };
        let sites = self
            .collect_sites(&values, SiteKind::Service, certify, ctx, &path)
            .await?
            .sites;
        if sites.is_empty() {
            return Err(ResolveError::ServiceNotFound {
                prefix_handle: ROOT_HANDLE.to_string(),
            });
        }
        info!(sites = sites.len(), "root service information refreshed");
        self.set_root_sites(sites);
        Ok(())
    }
}
