//! The root: its sites (built in, from a root file, or refreshed), and their refresh
//! (PROTOCOL.md §11.4): `0.NA/0.NA` re-read at the current root sites, whose values replace
//! them. Three triggers: the caller ([`Resolver::refresh_root`](crate::Resolver::refresh_root));
//! an answer 300, once per resolution before it starts over; a root site announcing a larger
//! site serial than the one sent, once per resolution, in the background. With a trust root
//! the root is also refreshed, in the background, when it is older than 23 hours.
//! Concurrent refreshes share one; the automatic ones start at most one refresh per
//! interval, so a root that keeps announcing a serial its own `0.NA/0.NA` does not carry
//! cannot cause a storm.
//!
//! With a trust root (the global one for the built-in root) the new root information is
//! taken only when its records verify (`crate::trust`): `0.0/0.0`, `0.NA/0.NA` and the
//! service handles its HS_SERV values name are read whole at the current root sites, their
//! HS_SIGNATURE and HS_CERT chains checked up to the trust root, and the sites of the records
//! that verify replace the root sites at once; a root record that fails leaves the old root
//! in place and says why. Optionally the verified records are written to a file in the
//! reference client's `bootstrap_handles` format.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;
use tracing::{debug, info, info_span, Instrument};

use crate::ident::Handle;
use crate::root::{root_handle, BootstrapHandles, ROOT_HANDLE};
use crate::trust::{verify_records, TrustRoot, TRUST_ROOT_HANDLE};
use crate::wire::{HandleValue, Limits, OpFlags, SiteInfo};

use super::super::ask::{Answer, RequestSpec};
use super::super::error::ResolveError;
use super::super::settings::{Settings, ROOT_MAX_AGE};
use super::super::site::{text_of, Site, SiteKind, UNKNOWN_SERIAL};
use super::super::support::deadline::Deadline;
use super::super::support::flight::Flights;
use super::super::support::trace::{SharedOutcome, Trace};
use super::{Path, SiteLocator};

/// Most service handles read for one refresh (the global root names about a dozen).
const MAX_ROOT_SERVICES: usize = 64;

/// The current root sites (shared: a refresh replaces the list, never changes it).
pub(crate) type RootSites = Arc<Vec<Site>>;

/// The root sites and what their refresh needs.
pub(crate) struct Root {
    /// The current root sites.
    sites: RwLock<RootSites>,
    /// When the root sites were last read from the network (`None`: never, they come from
    /// a file or the built-in data).
    read_at: Mutex<Option<Instant>>,
    /// When the last automatic refresh started (rate limit).
    refreshed_at: Mutex<Option<Instant>>,
    /// Least time between two automatic refreshes.
    interval: Duration,
    /// How long a refresh run in the background may take (its own call's deadline).
    timeout: Duration,
    /// Refreshes in flight (by their certify flag).
    refreshes: Flights<bool, SharedOutcome<()>, Arc<Trace>>,
    /// The key(s) the root's records must chain up to for a refresh to be taken.
    trust: Option<TrustRoot>,
    /// Where a verified refresh writes the root records (`bootstrap_handles` format).
    persist: Option<PathBuf>,
    limits: Limits,
}

impl Root {
    pub(crate) fn new(settings: &Settings, sites: Vec<Site>) -> Self {
        Self {
            sites: RwLock::new(Arc::new(sites)),
            read_at: Mutex::new(None),
            refreshed_at: Mutex::new(None),
            interval: settings.root_refresh_interval,
            timeout: settings.timeout,
            refreshes: Flights::new(),
            trust: settings.trust_root.clone(),
            persist: settings.persist_root.clone(),
            limits: settings.limits,
        }
    }

    /// The current root sites.
    pub(crate) fn sites(&self) -> RootSites {
        self.sites.read().clone()
    }

    /// New root sites, read from the network now.
    fn replace(&self, sites: Vec<Site>) {
        *self.sites.write() = Arc::new(sites);
        *self.read_at.lock() = Some(Instant::now());
    }
}

/// The resolver's sites of root files' sites (which the readers give each once).
pub(crate) fn sites_of(infos: Vec<SiteInfo>) -> Vec<Site> {
    infos.into_iter().map(Site::new).collect()
}

impl SiteLocator {
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
        let path = Path::root_refresh();
        let answer = self
            .from_sites(&spec, self.root_sites(), trace, &path)
            .await?;
        answer.into_values(handle).map(|(_, values)| values)
    }

    /// With a trust root, a root older than `ROOT_MAX_AGE` (or never read from the
    /// network: the built-in data, a file) is refreshed in the background, as the reference
    /// client does, at most once per refresh interval.
    pub(super) fn refresh_if_old(self: &Arc<Self>, certify: bool) {
        if self.root.trust.is_none() {
            return;
        }
        let read_at = *self.root.read_at.lock();
        let old = !read_at.is_some_and(|t| t.elapsed() < ROOT_MAX_AGE);
        if old {
            self.spawn_refresh(certify, "the root information is old");
        }
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
                &self.root.refreshes,
                certify,
                || Trace::new(root_handle().clone(), trace.deadline()),
                move |trace| {
                    let this = this.clone();
                    async move { this.refresh_root_now(certify, &trace).await }
                },
            )
            .boxed()
    }

    /// An automatic refresh: joins one in flight, else starts one when the rate limit allows.
    pub(super) async fn refresh_root_limited(
        self: &Arc<Self>,
        certify: bool,
        trace: &Trace,
    ) -> Result<(), ResolveError> {
        let certify = self.auto_refresh_certify(certify);
        if let Some((flight, shared)) = self.root.refreshes.join(&certify) {
            match trace.wait_for(flight, shared).await {
                // The refresh ended at the deadline of the call that started it; this one
                // has time left, and goes on as the rate limit says.
                Err(ResolveError::Timeout { .. }) if !trace.deadline().passed() => {}
                out => return out,
            }
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
        let mut last = self.root.refreshed_at.lock();
        if last.is_some_and(|t| now.saturating_duration_since(t) < self.root.interval) {
            return false;
        }
        *last = Some(now);
        true
    }

    /// Looks at the site serial of an answer: when a root site announces a larger serial than
    /// the one sent, the root is refreshed in the background (once per resolution, rate
    /// limited), within the resolver's deadline.
    pub(super) fn note_site_serial(
        self: &Arc<Self>,
        answer: &Answer,
        certify: bool,
        trace: &Trace,
    ) {
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
        if self.root.refreshes.join(&certify).is_some() || !self.claim_root_refresh() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        info!(why, "refreshing the root");
        let (this, window) = (self.clone(), self.root.timeout);
        let work = async move {
            // A call of its own, with its own deadline.
            let trace = Trace::new(root_handle().clone(), Deadline::start(window));
            let work = std::pin::pin!(this.refresh_root(certify, &trace));
            if let Err((e, _)) = trace.run(work).await {
                info!(error = %e, "root refresh failed");
            }
        };
        runtime.spawn(work.instrument(info_span!("root_refresh")));
    }

    /// Re-reads the root service information from `0.NA/0.NA` at the current root sites;
    /// with a trust root, only what verifies ([`verified_root_sites`], below).
    async fn refresh_root_now(
        self: &Arc<Self>,
        certify: bool,
        trace: &Trace,
    ) -> Result<(), ResolveError> {
        if let Some(trust) = &self.root.trust {
            let now = self.asker.clock().unix_now();
            let read = |name: String| self.read_root_record(name, certify, trace);
            let (sites, records) = verified_root_sites(read, trust, now, self.root.limits).await?;
            if sites.is_empty() {
                return Err(ResolveError::ServiceNotFound {
                    prefix_handle: root_handle().clone(),
                });
            }
            info!(
                sites = sites.len(),
                "root service information refreshed and verified"
            );
            self.root.replace(sites);
            if let Some(path) = &self.root.persist {
                let now = self.asker.clock().unix_now();
                if let Err(e) = persist(path, records, now) {
                    info!(path = %path.display(), error = %e, "could not write the root records");
                }
            }
            return Ok(());
        }
        let root = root_handle().clone();
        let spec = RequestSpec::service_lookup(root.clone(), SiteKind::Service, certify);
        let path = Path::root_refresh();
        let answer = self
            .from_sites(&spec, self.root_sites(), trace, &path)
            .await?;
        let (_, values) = answer.into_values(root)?;
        let sites = self
            .walk(&values, SiteKind::Service, certify, trace, &path)
            .await?
            .sites;
        if sites.is_empty() {
            return Err(ResolveError::ServiceNotFound {
                prefix_handle: root_handle().clone(),
            });
        }
        info!(sites = sites.len(), "root service information refreshed");
        self.root.replace(sites);
        Ok(())
    }
}

/// Reads the root records whole with `read` (every value of a handle, at the current root
/// sites), verifies them against `trust` at `now` (seconds since the epoch), and returns the
/// sites of those that verify, with the verified records.
async fn verified_root_sites<R, F>(
    read: R,
    trust: &TrustRoot,
    now: u64,
    limits: Limits,
) -> Result<(Vec<Site>, BTreeMap<String, Vec<HandleValue>>), ResolveError>
where
    R: Fn(String) -> F,
    F: Future<Output = Result<Vec<HandleValue>, ResolveError>>,
{
    let mut records: BTreeMap<String, Vec<HandleValue>> = BTreeMap::new();
    for name in [TRUST_ROOT_HANDLE, ROOT_HANDLE] {
        records.insert(name.to_string(), read(name.to_string()).await?);
    }
    let services: Vec<String> = records
        .get(ROOT_HANDLE)
        .map(|values| {
            values
                .iter()
                .filter(|v| v.is_type(SiteKind::Service.serv_type()))
                .map(|v| text_of(&v.data).trim().to_string())
                .take(MAX_ROOT_SERVICES)
                .collect()
        })
        .unwrap_or_default();
    for service in services {
        if records.contains_key(&service) {
            continue;
        }
        // A service handle that cannot be read is left out (as one that does not verify).
        match read(service.clone()).await {
            Ok(values) => {
                records.insert(service, values);
            }
            Err(e) => info!(%service, error = %e, "root service handle not read; left out"),
        }
    }
    let verification = verify_records(&records, trust, now);
    if let Some(Err(e)) = verification.get(ROOT_HANDLE) {
        return Err(ResolveError::UntrustedRoot { error: e.clone() });
    }
    let mut sites = Vec::new();
    let mut verified = BTreeMap::new();
    for (handle, outcome) in verification.iter() {
        match outcome {
            Ok(_) => {
                let Some(values) = records.remove(handle) else {
                    continue;
                };
                if handle == ROOT_HANDLE || !handle.eq_ignore_ascii_case(TRUST_ROOT_HANDLE) {
                    sites.extend(
                        values
                            .iter()
                            .filter(|v| SiteKind::Service.site_types().iter().any(|t| v.is_type(t)))
                            .filter_map(|v| Site::from_value(v, &limits)),
                    );
                }
                verified.insert(handle.to_string(), values);
            }
            Err(e) => info!(%handle, error = %e, "root record does not verify; left out"),
        }
    }
    Ok((sites, verified))
}

/// Writes `records` to `path` in the reference client's `bootstrap_handles` format (written
/// to a temporary file beside it, then renamed over it).
fn persist(
    path: &std::path::Path,
    records: BTreeMap<String, Vec<HandleValue>>,
    now_unix: u64,
) -> std::io::Result<()> {
    let file = BootstrapHandles::new(Some(now_unix.saturating_mul(1000)), records);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, file.to_json())?;
    std::fs::rename(&tmp, path)
}
