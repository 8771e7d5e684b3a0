//! What service lookup (in `mod.rs`) keeps: the cache of the sites of each prefix, the
//! lookups in flight and their keys, and the sites a lookup collects with how long they may
//! be cached.

use std::sync::Arc;

use tokio::time::Instant;

use crate::ident::Handle;

use super::super::error::ResolveError;
use super::super::site::{Site, SiteKind};
use super::super::support::cache::ServiceCache;
use super::super::support::flight::Flights;
use super::super::support::trace::{SharedOutcome, Trace};
use super::Path;

/// The service cache and the lookups in flight.
#[derive(Debug)]
pub(super) struct Services {
    pub(super) cache: ServiceCache,
    pub(super) prefix_lookups: Flights<LookupKey, SharedOutcome<Arc<Vec<Site>>>, Arc<Trace>>,
    pub(super) service_lookups: Flights<LookupKey, SharedOutcome<Arc<Collected>>, Arc<Trace>>,
}

impl Services {
    /// Nothing cached yet in `cache`, no lookup in flight.
    pub(super) fn new(cache: ServiceCache) -> Self {
        Self {
            cache,
            prefix_lookups: Flights::new(),
            service_lookups: Flights::new(),
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

/// Key of a shared service lookup: what is looked up, and the service-handle path it is
/// looked up on (lookups on different paths are never merged, so a chain that comes back to
/// itself meets its loop check instead of waiting for itself). Service handles are told
/// apart ASCII case-insensitively, in the whole handle, as the reference client does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct LookupKey {
    /// `None` for a prefix handle lookup, the site kind for a service handle.
    kind: Option<SiteKind>,
    handle: String,
    certify: bool,
    path: Vec<String>,
    root_refresh: bool,
}

impl LookupKey {
    pub(super) fn new(kind: Option<SiteKind>, handle: &Handle, certify: bool, path: &Path) -> Self {
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
    pub(super) until: Option<Instant>,
}

/// The earlier of two expiries (`None`, "not cacheable", wins).
pub(super) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    Some(a?.min(b?))
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
