//! [`Resolver`]: the front. Each call makes its one [`Deadline`] (the resolver's timeout
//! from when it starts), checks the identifier, starts a [`Resolution`] under that deadline
//! and hands back what it found. [`ResolverBuilder`](super::ResolverBuilder) (`builder.rs`) sets it up.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::stream::{self, BoxStream, Stream, StreamExt};

use crate::ident::Handle;
use crate::root::root_handle;
use crate::transport::{Exchange, TransportKind};
use crate::wire::{Body, HandleValue, LocationRequest, Message};

use super::ask::{Answer, RequestSpec};
use super::error::ResolveError;
use super::locate::Path;
use super::query::Query;
use super::record::{Attempt, HandleRecord};
use super::resolution::{Resolution, Shared};
use super::settings::Settings;
use super::site::{query_addr, Site};
use super::support::deadline::Deadline;
use super::support::trace::Trace;
use super::target::{Resolvable, Target};

/// An asynchronous handle resolver. Cheap to clone (one `Arc`); clones share the caches, the
/// RTT table and the transport.
///
/// Every call runs under one deadline, set when it starts
/// ([`ResolverBuilder::timeout`](crate::ResolverBuilder::timeout) from then, 10 s by
/// default), and is cancellation-safe: dropping its future cancels every request it has in
/// flight, except work it shares with other callers (an identical query, a service lookup,
/// a root refresh), which goes on for them, to the deadline of the call that started it,
/// and stops when the last of them goes away; a call that joined it ends at its own
/// deadline. A root refresh set off in the background (a root site announcing newer site
/// information) runs to its own deadline.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use handle_resolver::{Query, Resolver};
///
/// let resolver = Resolver::builder().build()?;
/// let record = resolver.resolve("10.1045/april2006-paskin").await?;
/// for url in record.urls() {
///     println!("{url}");
/// }
/// let emails = resolver
///     .resolve_with("20.500.12345/1", &Query::new().types(["EMAIL"]))
///     .await?;
/// # let _ = emails;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Resolver {
    shared: Arc<Shared>,
}

/// One server's answer in [`Resolver::resolve_all_sites`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SiteAnswer {
    /// The site's description (or first address).
    pub site: String,
    /// The server asked: its UDP query address, else its TCP one, else its HTTP one; `None`
    /// for a server with no interface that takes queries (it cannot be asked).
    pub server: Option<SocketAddr>,
    /// True when the site's hash picks this server for the handle.
    pub responsible: bool,
    /// The values, or why there are none.
    pub result: Result<Vec<HandleValue>, ResolveError>,
}

impl Resolver {
    pub(crate) fn from_shared(shared: Shared) -> Self {
        Self {
            shared: Arc::new(shared),
        }
    }

    /// The resolver's settings.
    pub(crate) fn settings(&self) -> &Settings {
        &self.shared.settings
    }

    /// The transport (also for HTTP GETs: RFC 2169 URN resolution).
    pub(crate) fn exchange(&self) -> &dyn Exchange {
        self.shared.locator.asker().exchange()
    }

    /// Sends one request (e.g. administration) by the whole procedure (sites, referrals,
    /// root refresh) under the resolver's deadline; the final answer, checked, whatever its
    /// response code.
    pub(crate) async fn request(&self, spec: &RequestSpec) -> Result<Answer, ResolveError> {
        let trace = self.trace(&spec.handle);
        let path = Path::default();
        let work = self.shared.locator.request(spec, &trace, &path);
        let work = std::pin::pin!(work);
        let out = trace.run(work).await;
        out.map_err(|(e, _)| e)
    }

    /// Sends one request to `sites` (not to the sites of its handle's prefix), under the
    /// resolver's deadline: administration of a given site (home / unhome a prefix).
    pub(crate) async fn request_at(
        &self,
        spec: &RequestSpec,
        sites: Arc<Vec<Site>>,
    ) -> Result<Answer, ResolveError> {
        let trace = self.trace(&spec.handle);
        let path = Path::default();
        let work = self.shared.locator.from_sites(spec, sites, &trace, &path);
        let work = std::pin::pin!(work);
        let out = trace.run(work).await;
        out.map_err(|(e, _)| e)
    }

    /// Resolves every value of `id` (a handle, any identifier text, or a parsed identifier),
    /// with the resolver's settings.
    pub async fn resolve<T: Resolvable + ?Sized>(
        &self,
        id: &T,
    ) -> Result<HandleRecord, ResolveError> {
        self.resolve_with(id, &Query::new()).await
    }

    /// Resolves `id` with the filters and flags of `query` (its unset flags are the
    /// resolver's).
    pub async fn resolve_with<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> Result<HandleRecord, ResolveError> {
        let deadline = self.deadline();
        match self.target(id) {
            Ok(target) => Resolution::new(&self.shared, target.handle, query, deadline)
                .run()
                .await
                .map_err(|(e, _)| e),
            Err(e) => Err(e),
        }
    }

    /// The URL the handle.net proxy would redirect to for `id` and `request`: the handle
    /// resolved, its HS_ALIAS values followed first (at most 20 hops, as the proxy), then one
    /// location of its `10320/loc` and `URL` values chosen as the proxy chooses
    /// ([`HandleRecord::select_location`]). `Ok(None)` when the handle has no location.
    ///
    /// ```no_run
    /// # async fn demo(resolver: handle_resolver::Resolver) -> Result<(), handle_resolver::ResolveError> {
    /// use handle_resolver::wire::LocationRequest;
    ///
    /// let request = LocationRequest::new().locatt("view:json");
    /// if let Some(url) = resolver.locate("10.1000/182", &request).await? {
    ///     println!("{url}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn locate<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        request: &LocationRequest,
    ) -> Result<Option<String>, ResolveError> {
        let record = self
            .resolve_with(id, &Query::new().follow_aliases(true))
            .await?;
        Ok(record.select_location(request))
    }

    /// Like [`Resolver::resolve_with`], also returning every attempt made (also on failure,
    /// and at the deadline those still running).
    pub async fn resolve_traced<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> (Result<HandleRecord, ResolveError>, Vec<Attempt>) {
        let deadline = self.deadline();
        let target = match self.target(id) {
            Ok(target) => target,
            Err(e) => return (Err(e), Vec::new()),
        };
        match Resolution::new(&self.shared, target.handle, query, deadline)
            .run()
            .await
        {
            Ok(record) => {
                let attempts = record.attempts.clone();
                (Ok(record), attempts)
            }
            Err((e, attempts)) => (Err(e), attempts),
        }
    }

    /// Resolves many identifiers, at most `concurrency` at once, yielding `(input, outcome)`
    /// in completion order. Read it with [`ResolveMany::next`] (or as a
    /// [`futures::Stream`]).
    ///
    /// ```no_run
    /// # async fn demo(resolver: handle_resolver::Resolver) {
    /// let mut results = resolver.resolve_many(["10.1045/a", "10.1045/b"], 16);
    /// while let Some((id, outcome)) = results.next().await {
    ///     println!("{id}: {:?}", outcome.map(|r| r.urls()));
    /// }
    /// # }
    /// ```
    pub fn resolve_many<I, S>(&self, ids: I, concurrency: usize) -> ResolveMany<S>
    where
        I: IntoIterator<Item = S>,
        I::IntoIter: Send + 'static,
        S: Resolvable + Send + Sync + 'static,
    {
        let this = self.clone();
        let inner = stream::iter(ids)
            .map(move |id| {
                let r = this.clone();
                async move {
                    let out = r.resolve(&id).await;
                    (id, out)
                }
            })
            .buffer_unordered(concurrency.max(1))
            .boxed();
        ResolveMany { inner }
    }

    /// Asks every server of every site of the handle's service (a mirror-drift check),
    /// without hedging, caching or referrals.
    pub async fn resolve_all_sites<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> Result<Vec<SiteAnswer>, ResolveError> {
        let target = self.target(id)?;
        let settings = &self.shared.settings;
        let locator = &self.shared.locator;
        let trace = self.trace(&target.handle);
        let asked = query.asked(settings);
        let spec = RequestSpec::resolution(target.handle.clone(), &asked, settings.request_digest);
        let path = Path::default();
        let work = async {
            let sites = locator
                .sites_for(&target.handle, asked.certify, &trace, &path)
                .await?;
            let mut asks = Vec::new();
            for site in sites.iter() {
                let hashed = site
                    .server_for(target.handle.as_bytes())
                    .map(|s| s.server_id);
                for server in &site.info.servers {
                    let (spec, trace) = (&spec, &trace);
                    asks.push(async move {
                        let addr = [TransportKind::Udp, TransportKind::Tcp, TransportKind::Http]
                            .into_iter()
                            .find_map(|kind| query_addr(server, kind));
                        let result = locator
                            .asker()
                            .ask_server(site, server, spec, trace)
                            .await
                            .and_then(|a| a.into_values(spec.handle.clone()).map(|(_, v)| v));
                        SiteAnswer {
                            site: site.label(),
                            server: addr,
                            responsible: hashed == Some(server.server_id),
                            result,
                        }
                    });
                }
            }
            Ok(futures::future::join_all(asks).await)
        };
        let work = std::pin::pin!(work);
        let out = trace.run(work).await;
        out.map_err(|(e, _)| e)
    }

    /// Low-level: sends the message `request` to `server` as it is (UDP then TCP, as
    /// configured; the transport chooses the request id) and returns the raw answer, under
    /// the resolver's deadline. No checks, no referrals, no cache.
    pub async fn send_message(
        &self,
        server: SocketAddr,
        request: &Message,
    ) -> Result<Message, ResolveError> {
        let asked = match &request.body {
            Body::ResolutionRequest(r) => Handle::parse_bytes(&r.handle).ok(),
            _ => None,
        };
        let work = self.shared.locator.asker().exchange_raw(server, request);
        let timed_out = |after| ResolveError::Timeout {
            handle: asked,
            server: Some(server),
            after,
        };
        self.deadline().run(work, timed_out).await
    }

    /// Re-reads the root service information: the HS_SITE / HS_SERV values of `0.NA/0.NA` at
    /// the current root sites (asked with CT when `certify`, verified with the current root
    /// keys), which replace the root sites. Returns how many root sites there are now.
    ///
    /// With `certify` false this takes the root's keys on trust from its own answer, which is
    /// how a root given as a bare `HOST:PORT` gets the keys that certified resolution needs.
    pub async fn refresh_root(&self, certify: bool) -> Result<usize, ResolveError> {
        let trace = self.trace(root_handle());
        let locator = &self.shared.locator;
        let work = async { locator.refresh_root(certify, &trace).await };
        let work = std::pin::pin!(work);
        let out = trace.run(work).await;
        out.map_err(|(e, _)| e)?;
        Ok(locator.root_sites().len())
    }

    /// The smoothed round-trip time the resolver holds for a server (by its query address,
    /// decayed while unused; failures raise it), `None` while unknown. Site choice and hedge
    /// delays follow it.
    pub fn server_rtt(&self, server: SocketAddr) -> Option<Duration> {
        self.shared.locator.asker().srtt(server)
    }

    /// The current root sites.
    pub fn root_sites(&self) -> Vec<Site> {
        self.shared.locator.root_sites().to_vec()
    }

    /// Forgets every cached answer and service.
    pub fn clear_cache(&self) {
        self.shared.answers.clear();
        self.shared.locator.clear_cache();
    }

    /// The one deadline of a call starting now: the resolver's timeout from now.
    fn deadline(&self) -> Deadline {
        Deadline::start(self.shared.settings.timeout)
    }

    /// The bookkeeping of a call about `handle` starting now, with its deadline.
    fn trace(&self, handle: &Handle) -> Trace {
        Trace::new(handle.clone(), self.deadline())
    }

    /// The handle to resolve, or why there is none (nothing is sent then).
    fn target<T: Resolvable + ?Sized>(&self, id: &T) -> Result<Target, ResolveError> {
        let mut target = id.to_target()?;
        if self.shared.settings.strict_cordra {
            // The CORDRA profile: its ids only, in their CORDRA form. Otherwise the handle
            // goes out as written (handles are case sensitive).
            match target.cordra.clone() {
                Some(cordra) => target.handle = cordra,
                None => {
                    return Err(ResolveError::NotCordra {
                        input: target.input,
                    })
                }
            }
        }
        Ok(target)
    }
}

/// The results of [`Resolver::resolve_many`], in completion order: read them with
/// [`ResolveMany::next`], or use it as a [`Stream`].
#[must_use = "a ResolveMany does nothing until it is read"]
pub struct ResolveMany<S> {
    inner: BoxStream<'static, (S, Result<HandleRecord, ResolveError>)>,
}

impl<S> ResolveMany<S> {
    /// The next identifier resolved, with its outcome; `None` when every one has been.
    pub async fn next(&mut self) -> Option<(S, Result<HandleRecord, ResolveError>)> {
        self.inner.next().await
    }
}

impl<S> Stream for ResolveMany<S> {
    type Item = (S, Result<HandleRecord, ResolveError>);

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<S> std::fmt::Debug for ResolveMany<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolveMany").finish_non_exhaustive()
    }
}

#[cfg(all(test, feature = "testing"))]
#[path = "resolver_tests.rs"]
mod tests;
