//! What the service lookup (the loop in `mod.rs`) keeps: the cache of the sites of each
//! prefix, the lookups in flight and their keys, and, while it walks, a [`Frame`] for each
//! handle whose values it reads: the sites they give and how long those may be cached.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::ident::Handle;
use crate::wire::{HandleValue, Limits};

use super::super::error::ResolveError;
use super::super::site::{extend_unique, Site, SiteKind};
use super::super::support::cache::{value_ttl, ServiceCache};
use super::super::support::flight::Flights;
use super::super::support::trace::{SharedOutcome, Trace};
use super::Path;

/// The service cache and the lookups in flight.
#[derive(Debug)]
pub(super) struct Services {
    pub(super) cache: ServiceCache,
    pub(super) lookups: Flights<LookupKey, SharedOutcome<Arc<Vec<Site>>>, Arc<Trace>>,
}

impl Services {
    /// Nothing cached yet in `cache`, no lookup in flight.
    pub(super) fn new(cache: ServiceCache) -> Self {
        Self {
            cache,
            lookups: Flights::new(),
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
                prefix_handle: prefix_handle.clone(),
            })
        } else {
            Ok(sites)
        })
    }
}

/// Key of a shared service lookup: the prefix handle looked up, and the service-handle path
/// it is looked up on (lookups on different paths are never merged, so a chain that comes
/// back to itself meets its loop check instead of waiting for itself). Service handles are
/// told apart ASCII case-insensitively, in the whole handle, as the reference client does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct LookupKey {
    handle: String,
    certify: bool,
    path: Vec<String>,
    root_refresh: bool,
}

impl LookupKey {
    pub(super) fn new(handle: &Handle, certify: bool, path: &Path) -> Self {
        Self {
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
    pub(super) until: Option<Instant>,
}

/// The earlier of two expiries (`None`, "not cacheable", wins).
pub(super) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    Some(a?.min(b?))
}

/// When a walk started, and the cache's bounds: what every [`Frame`] of it dates by.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dating {
    pub(super) now: Instant,
    pub(super) now_unix: u64,
    pub(super) max_ttl: Duration,
    pub(super) negative_ttl: Duration,
}

/// One handle's values in a walk of service handles: the sites its site values give, the
/// service handles (HS_SERV values) still to follow, in order, and what following them gave.
pub(super) struct Frame {
    /// The service handles still to follow (the next last).
    services: Vec<HandleValue>,
    /// The service handles above this one (loop check, depth).
    pub(super) path: Path,
    /// The value of the frame below that led here (`None` for the values walked first).
    via: Option<HandleValue>,
    /// Every site found, in order, repeats included (dropped once, at the end).
    found: Vec<Site>,
    /// Until when the sites may be cached: the earliest expiry of every value that
    /// contributed (site values that decode, service handles followed, and, through their
    /// frames, the values of those).
    until: Option<Instant>,
    /// A service handle skipped as already on the path.
    loop_at: Option<Handle>,
    /// The first service handle that gave no sites, and why.
    first_error: Option<ResolveError>,
}

impl Frame {
    /// The frame of `values` (walked for the site types of `kind`) on `path`, reached
    /// through `via`.
    pub(super) fn new(
        values: &[HandleValue],
        kind: SiteKind,
        path: Path,
        via: Option<HandleValue>,
        dating: Dating,
        limits: &Limits,
    ) -> Self {
        let mut frame = Self {
            services: values
                .iter()
                .filter(|v| v.is_type(kind.serv_type()))
                .rev()
                .cloned()
                .collect(),
            path,
            via,
            found: Vec::new(),
            until: Some(dating.now + dating.max_ttl),
            loop_at: None,
            first_error: None,
        };
        for v in values
            .iter()
            .filter(|v| kind.site_types().iter().any(|t| v.is_type(t)))
        {
            if let Some(site) = Site::from_value(v, limits) {
                frame.contributed(v, dating);
                frame.found.push(site);
            }
        }
        frame
    }

    /// The next service handle to follow.
    pub(super) fn next_service(&mut self) -> Option<HandleValue> {
        self.services.pop()
    }

    /// `v` gave sites: its expiry counts.
    pub(super) fn contributed(&mut self, v: &HandleValue, dating: Dating) {
        let ttl = value_ttl(v, dating.now_unix, dating.max_ttl);
        self.until = earliest(self.until, ttl.map(|t| dating.now + t));
    }

    /// Sites found (the root's, for a service handle naming the root).
    pub(super) fn found(&mut self, sites: impl IntoIterator<Item = Site>) {
        self.found.extend(sites);
    }

    /// A service handle skipped: already on the path.
    pub(super) fn looped(&mut self, at: Handle) {
        self.loop_at = Some(at);
    }

    /// A service handle that gave no sites.
    pub(super) fn failed(&mut self, error: ResolveError) {
        self.first_error.get_or_insert(error);
    }

    /// What a frame above this one (reached through one of this frame's values) came to.
    pub(super) fn followed(&mut self, above: Frame, origin: &Handle, dating: Dating) {
        let via = above.via.clone();
        match above.finish(origin, dating) {
            Ok(more) => {
                if let Some(v) = via {
                    self.contributed(&v, dating);
                }
                self.until = earliest(self.until, more.until);
                self.found.extend(more.sites);
            }
            Err(e) => self.failed(e),
        }
    }

    /// The sites of this frame (repeats dropped) and until when they may be cached. A
    /// service handle that was skipped or failed keeps the result no longer than the
    /// negative TTL; when no site is left at all, the result is its error (or a referral
    /// loop, naming `origin`).
    pub(super) fn finish(self, origin: &Handle, dating: Dating) -> Result<Collected, ResolveError> {
        let mut sites = Vec::new();
        extend_unique(&mut sites, self.found);
        if sites.is_empty() {
            if let Some(e) = self.first_error {
                return Err(e);
            }
            if let Some(at) = self.loop_at {
                return Err(ResolveError::ReferralLoop {
                    handle: origin.clone(),
                    at: Some(at),
                });
            }
        }
        let mut until = self.until;
        if self.first_error.is_some() || self.loop_at.is_some() {
            until = earliest(until, Some(dating.now + dating.negative_ttl));
        }
        Ok(Collected { sites, until })
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
            LookupKey::new(&h("0.NA/31.S"), false, &path),
            LookupKey::new(&h("0.na/31.s"), false, &path)
        );
        let shorter = Path::default().then(&h("0.SERV/x"));
        assert_ne!(
            LookupKey::new(&h("0.NA/31.S"), false, &path),
            LookupKey::new(&h("0.NA/31.S"), false, &shorter)
        );
        // A root refresh's lookups are never merged with others.
        assert_ne!(
            LookupKey::new(&h("0.NA/31.S"), false, &Path::root_refresh()),
            LookupKey::new(&h("0.NA/31.S"), false, &Path::default())
        );
    }
}
