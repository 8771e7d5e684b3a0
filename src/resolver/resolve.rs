//! [`Resolver`]: the public entry points (`resolve`, `resolve_with`, `resolve_many`,
//! `resolve_all_sites`, `query`), the cache around them and HS_ALIAS following.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};
use tracing::{info_span, Instrument};

use crate::transport::TransportKind;
use crate::wire::{Body, HandleValue, Message, ResponseCode};

use super::attempt::{try_next_site, udp_falls_back, Answer};
use super::builder::ResolverBuilder;
use super::cache::{CachedAnswer, RecordKey};
use super::error::{ProtocolViolation, ResolveError};
use super::flight::Role;
use super::record::{HandleRecord, Hop, Query, Source};
use super::service::final_error;
use super::sites::query_addr;
use super::state::{Ctx, Inner, MAX_ALIAS_DEPTH};
use super::target::{Resolvable, Target};

/// An asynchronous handle resolver. Cheap to clone (one `Arc`); clones share the caches, the
/// RTT table and the transport.
#[derive(Clone, Debug)]
pub struct Resolver {
    pub(crate) inner: Arc<Inner>,
}

/// One server's answer in [`Resolver::resolve_all_sites`].
#[derive(Debug, Clone)]
pub struct SiteAnswer {
    /// The site's description (or first address).
    pub site: String,
    /// The server asked.
    pub server: SocketAddr,
    /// True when the site's hash picks this server for the handle.
    pub responsible: bool,
    /// The values, or why there are none.
    pub result: Result<Vec<HandleValue>, ResolveError>,
}

impl Resolver {
    /// A builder with the defaults (built-in root, UDP then TCP, 10 s deadline, ...).
    pub fn builder() -> ResolverBuilder {
        ResolverBuilder::new()
    }

    /// The query `resolve` uses: all values, with the builder's certify, authoritative and
    /// public-only settings.
    pub fn default_query(&self) -> Query {
        let c = &self.inner.config;
        Query {
            types: Vec::new(),
            indexes: Vec::new(),
            certify: c.certify,
            authoritative: c.authoritative,
            public_only: c.public_only,
        }
    }

    /// Resolves every value of `id` (a handle, any identifier text, or a parsed identifier).
    pub async fn resolve<T: Resolvable + ?Sized>(
        &self,
        id: &T,
    ) -> Result<HandleRecord, ResolveError> {
        // The query is made inside `run` (no wrapper future around it: every level of
        // nesting is one more copy of the whole resolution's state when it starts).
        self.run(id, QueryRef::Default, false).await.0
    }

    /// Resolves `id` with filters and flags.
    pub async fn resolve_with<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> Result<HandleRecord, ResolveError> {
        self.run(id, QueryRef::Given(query), false).await.0
    }

    /// Like [`Resolver::resolve_with`], also returning every attempt made (also on failure).
    pub async fn resolve_traced<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> (Result<HandleRecord, ResolveError>, Vec<Hop>) {
        self.run(id, QueryRef::Given(query), true).await
    }

    /// One resolution; the attempts go into the record and, when `trace`, are also returned
    /// (else the returned list is empty after a success, saving a copy).
    async fn run<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: QueryRef<'_>,
        trace: bool,
    ) -> (Result<HandleRecord, ResolveError>, Vec<Hop>) {
        let default;
        let query = match query {
            QueryRef::Given(q) => q,
            QueryRef::Default => {
                default = self.default_query();
                &default
            }
        };
        let target = match self.target(id) {
            Ok(t) => t,
            Err(e) => return (Err(e), Vec::new()),
        };
        // The context keeps the handle's text (no copy); the work borrows it from there.
        let ctx = Arc::new(Ctx::owning(target.handle));
        let handle = ctx.origin.as_str();
        let span = info_span!("resolve", handle = %handle);
        let deadline = self.inner.config.timeout;
        // Pinned here, not owned by the timeout: at the deadline the work (and its attempts
        // in progress) must still exist while the trace is read.
        let work = std::pin::pin!(self
            .inner
            .resolve_chain(handle, query, &ctx)
            .instrument(span));
        let result = match tokio::time::timeout(deadline, work).await {
            Ok(r) => r,
            // The trace is taken while the work still runs, so attempts in progress (also
            // in shared work) are listed as they stood at the deadline.
            Err(_) => return (Err(timeout(handle, deadline)), ctx.hops_at_deadline()),
        };
        // The work has ended: its attempts are taken out of the bookkeeping. (A caller that
        // shared a query this one ran has been handed its copy already; one still reading it
        // at its own deadline sees only what it would have missed anyway.)
        let hops = ctx.take_hops();
        match result {
            Ok(mut r) if trace => {
                r.hops = hops.clone();
                (Ok(r), hops)
            }
            Ok(mut r) => {
                r.hops = hops;
                (Ok(r), Vec::new())
            }
            Err(e) => (Err(e), hops),
        }
    }

    /// Resolves many identifiers, at most `concurrency` at once, yielding `(input, outcome)`
    /// in completion order.
    pub fn resolve_many<I, S>(
        &self,
        ids: I,
        concurrency: usize,
    ) -> BoxStream<'static, (S, Result<HandleRecord, ResolveError>)>
    where
        I: IntoIterator<Item = S>,
        I::IntoIter: Send + 'static,
        S: Resolvable + Send + Sync + 'static,
    {
        let this = self.clone();
        stream::iter(ids)
            .map(move |id| {
                let r = this.clone();
                async move {
                    let out = r.resolve(&id).await;
                    (id, out)
                }
            })
            .buffer_unordered(concurrency.max(1))
            .boxed()
    }

    /// Asks every server of every site of the handle's service (a mirror-drift check),
    /// without hedging, caching or referrals.
    pub async fn resolve_all_sites<T: Resolvable + ?Sized>(
        &self,
        id: &T,
        query: &Query,
    ) -> Result<Vec<SiteAnswer>, ResolveError> {
        let target = self.target(id)?;
        let inner = &self.inner;
        let ctx = Ctx::new(&target.handle);
        let deadline = inner.config.timeout;
        let work = async {
            let sites = inner
                .sites_for(&target.handle, query.certify, &ctx, &[])
                .await?;
            let spec = inner.resolution_spec(
                &target.handle,
                &query.types,
                &query.indexes,
                query.certify,
                query.authoritative,
                query.public_only,
            );
            let mut asks = Vec::new();
            for site in sites.iter() {
                let hashed = site
                    .server_for(target.handle.as_bytes())
                    .map(|s| s.server_id);
                for server in &site.info.servers {
                    let (site, spec, ctx) = (site.clone(), &spec, &ctx);
                    asks.push(async move {
                        let addr = query_addr(server, TransportKind::Udp)
                            .or_else(|| query_addr(server, TransportKind::Tcp))
                            .unwrap_or_else(|| SocketAddr::new(server.address, 0));
                        let result = inner
                            .ask_on(&site, server, spec, ctx)
                            .await
                            .and_then(|a| answer_values(&a, &spec.handle).map(|(_, v)| v));
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
        match tokio::time::timeout(deadline, work).await {
            Ok(r) => r,
            Err(_) => Err(timeout(&target.handle, deadline)),
        }
    }

    /// Low-level: sends `request` to `server` (UDP then TCP, as configured) and returns the
    /// raw answer, under the overall deadline. No checks, no referrals, no cache.
    pub async fn query(
        &self,
        server: SocketAddr,
        request: &Message,
    ) -> Result<Message, ResolveError> {
        let inner = &self.inner;
        let work = async {
            let mut last = None;
            for &kind in inner.config.transport.kinds() {
                match inner
                    .exchange
                    .exchange(server, kind, request, &inner.options)
                    .await
                {
                    Ok(e) => return Ok(e.message),
                    Err(error) => {
                        let fallback = udp_falls_back(&error);
                        last = Some(ResolveError::Transport {
                            sites_asked: 1,
                            server,
                            kind,
                            error,
                        });
                        if !fallback {
                            break;
                        }
                    }
                }
            }
            Err(last.unwrap_or(ResolveError::Protocol {
                sites_asked: 1,
                server,
                violation: ProtocolViolation::NoUsableServer,
            }))
        };
        let deadline = inner.config.timeout;
        match tokio::time::timeout(deadline, work).await {
            Ok(r) => r,
            Err(_) => {
                let handle = match &request.body {
                    Body::ResolutionRequest(r) => String::from_utf8_lossy(&r.handle).into_owned(),
                    _ => format!("request to {server}"),
                };
                Err(timeout(&handle, deadline))
            }
        }
    }

    /// Re-reads the root service information: the HS_SITE / HS_SERV values of `0.NA/0.NA` at
    /// the current root sites (asked with CT when `certify`, verified with the current root
    /// keys), which replace the root sites. Returns how many root sites there are now.
    ///
    /// With `certify` false this takes the root's keys on trust from its own answer, which is
    /// how a root given as a bare `HOST:PORT` gets the keys that certified resolution needs.
    pub async fn refresh_root(&self, certify: bool) -> Result<usize, ResolveError> {
        let ctx = Ctx::new(super::bootstrap::ROOT_HANDLE);
        let deadline = self.inner.config.timeout;
        match tokio::time::timeout(deadline, self.inner.refresh_root(certify, &ctx)).await {
            Ok(r) => r.map(|()| self.inner.root_sites().len()),
            Err(_) => Err(timeout(super::bootstrap::ROOT_HANDLE, deadline)),
        }
    }

    /// The smoothed round-trip time the resolver holds for a server (by its query address,
    /// decayed while unused; failures raise it), `None` while unknown. Site choice and hedge
    /// delays follow it.
    pub fn server_rtt(&self, server: SocketAddr) -> Option<std::time::Duration> {
        self.inner.srtt.srtt(server)
    }

    /// The current root sites.
    pub fn root_sites(&self) -> Vec<super::sites::Site> {
        self.inner.root_sites().to_vec()
    }

    /// Forgets every cached answer and service.
    pub fn clear_cache(&self) {
        self.inner.caches.clear();
    }

    fn target<T: Resolvable + ?Sized>(&self, id: &T) -> Result<Target, ResolveError> {
        let target = id.to_target()?;
        if self.inner.config.strict_cordra && !target.cordra {
            return Err(ResolveError::NotCordra {
                input: target.input,
            });
        }
        Ok(target)
    }
}

/// The query of a call: given, or the resolver's default (made inside the call).
#[derive(Clone, Copy)]
enum QueryRef<'a> {
    Given(&'a Query),
    Default,
}

/// The error for a call that ran past its deadline.
fn timeout(handle: &str, after: std::time::Duration) -> ResolveError {
    ResolveError::Timeout {
        handle: handle.to_string(),
        after,
    }
}

/// The handle and values of a final answer, or the typed error it stands for.
pub(crate) fn answer_values(
    answer: &Answer,
    handle: &str,
) -> Result<(String, Vec<HandleValue>), ResolveError> {
    match (&answer.msg.body, answer.code()) {
        (Body::ResolutionResponse(r), ResponseCode::Success) => {
            Ok((text_of(&r.handle), r.values.clone()))
        }
        (_, ResponseCode::Success) => Err(ResolveError::Protocol {
            sites_asked: 1,
            server: answer.server,
            violation: ProtocolViolation::UnexpectedBody {
                code: answer.code(),
            },
        }),
        _ => Err(final_error(&answer.msg, answer.server, handle)),
    }
}

/// Bytes from a server as text: UTF-8 as is (checked at SIMD speed), anything else with
/// U+FFFD for the invalid sequences.
pub(crate) fn text_of(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// Like [`answer_values`], moving the values out of the answer instead of copying them, and
/// taking `asked` (the text of the handle in the request) as the answer's handle when the
/// server echoed it byte for byte.
fn take_answer_values(
    answer: &mut Answer,
    handle: &str,
    asked: String,
) -> Result<(String, Vec<HandleValue>), ResolveError> {
    let code = answer.code();
    if let (Body::ResolutionResponse(r), ResponseCode::Success) = (&mut answer.msg.body, code) {
        let answered = if r.handle[..] == *asked.as_bytes() {
            asked
        } else {
            text_of(&r.handle)
        };
        return Ok((answered, std::mem::take(&mut r.values)));
    }
    answer_values(answer, handle)
}

impl Inner {
    /// Resolves `handle`, following HS_ALIAS values when configured (≤ 10, loops detected).
    pub(crate) async fn resolve_chain(
        &self,
        handle: &str,
        query: &Query,
        ctx: &Arc<Ctx>,
    ) -> Result<HandleRecord, ResolveError> {
        let follow = self.config.follow_aliases;
        let mut query = query.clone();
        let asked_alias = query
            .types
            .iter()
            .any(|t| t.eq_ignore_ascii_case("HS_ALIAS"));
        if follow && !query.types.is_empty() && !asked_alias {
            query.types.push("HS_ALIAS".into());
        }
        // Both only grow once an alias is followed.
        let mut chain: Vec<String> = Vec::new();
        let mut current = std::borrow::Cow::Borrowed(handle);
        loop {
            let mut record = self.resolve_one(&current, &query, ctx).await?;
            let alias = follow
                .then(|| record.values.iter().find(|v| v.is_type("HS_ALIAS")))
                .flatten()
                .map(|v| String::from_utf8_lossy(&v.data).trim().to_string());
            let Some(next) = alias else {
                if follow && !asked_alias && !query.types.is_empty() {
                    record.values.retain(|v| !v.is_type("HS_ALIAS"));
                }
                if chain.len() > 1 {
                    record.aliases = chain;
                }
                return Ok(record);
            };
            if chain.is_empty() {
                chain.push(handle.to_string());
            }
            let seen = chain
                .iter()
                .any(|h| super::cache::cache_handle(h) == super::cache::cache_handle(&next));
            chain.push(next.clone());
            if seen {
                return Err(ResolveError::AliasLoop { chain });
            }
            if chain.len() > MAX_ALIAS_DEPTH + 1 {
                return Err(ResolveError::TooManyAliases {
                    limit: MAX_ALIAS_DEPTH,
                    chain,
                });
            }
            current = std::borrow::Cow::Owned(next);
        }
    }

    /// Resolves one handle: cache, then the network; caches the outcome. Concurrent
    /// identical queries (same cache key) share one network resolution, run by the first of
    /// them; authoritative queries bypass both the cache and the sharing.
    ///
    /// With the answer cache off (capacity 0) every call sends its own request: handing one
    /// in-flight answer to several callers is caching by another name, and a caller who
    /// turned the cache off asks for fresh answers (and pays no key or table work for
    /// sharing it does not want).
    async fn resolve_one(
        &self,
        handle: &str,
        query: &Query,
        ctx: &Arc<Ctx>,
    ) -> Result<HandleRecord, ResolveError> {
        // The bookkeeping is the whole resolution's (it names the handle first asked for);
        // errors of this step, also handed to the callers sharing it, name this step's.
        if self.caches.config().capacity == 0 {
            return self
                .resolve_network(handle, query, None, ctx)
                .await
                .map_err(|e| e.for_step(&ctx.origin, handle));
        }
        let key = RecordKey::new(
            handle,
            &query.types,
            &query.indexes,
            query.certify,
            query.public_only,
        );
        if query.authoritative {
            return self.resolve_network(handle, query, Some(key), ctx).await;
        }
        // Bounded: each turn either ends or follows a leader that went away before it had
        // an outcome (cancelled or timed out; the leader's own deadline ends that).
        loop {
            if let Some(out) = self.cached(&key, handle) {
                return out;
            }
            // The attempts this resolution made before (of earlier aliases) are not the
            // shared work's: followers get only those made from here on.
            let skip = ctx.finished();
            match self
                .flights
                .records
                .join_or_lead(key.clone(), || (ctx.clone(), skip))
            {
                Role::Lead(leader) => {
                    let out = self
                        .resolve_network(handle, query, Some(key), ctx)
                        .await
                        .map_err(|e| e.for_step(&ctx.origin, handle));
                    leader.finish(|| (out.clone(), ctx.hops_since(skip)));
                    return out;
                }
                Role::Follow(follower, (shared, skip)) => {
                    // Boxed: waiting for another caller is the rare case.
                    if let Some(out) = Box::pin(ctx.follow(follower, shared, skip)).await {
                        return out;
                    }
                }
            }
        }
    }

    /// The cached outcome for `key`, if any.
    fn cached(&self, key: &RecordKey, handle: &str) -> Option<Result<HandleRecord, ResolveError>> {
        match self.caches.get(key)? {
            CachedAnswer::Found {
                handle,
                values,
                source,
            } => Some(Ok(HandleRecord {
                handle,
                values,
                source,
                from_cache: true,
                aliases: Vec::new(),
                hops: Vec::new(),
            })),
            CachedAnswer::NotFound => Some(Err(ResolveError::NotFound {
                handle: handle.to_string(),
            })),
        }
    }

    /// Resolves one handle over the network and caches the outcome (under `key`; `None`:
    /// the answer cache is off).
    async fn resolve_network(
        &self,
        handle: &str,
        query: &Query,
        key: Option<RecordKey>,
        ctx: &Ctx,
    ) -> Result<HandleRecord, ResolveError> {
        let spec = self.resolution_spec(
            handle,
            &query.types,
            &query.indexes,
            query.certify,
            query.authoritative,
            query.public_only,
        );
        let mut answer = self.fetch_inline(&spec, ctx, &[]).await?;
        if try_next_site(answer.code()) {
            return Err(final_error(&answer.msg, answer.server, handle));
        }
        // The text of the handle asked for is reused for the record when the server echoes it.
        let (answered, values) = match take_answer_values(&mut answer, handle, spec.handle) {
            Ok(v) => v,
            Err(e) => {
                if let (ResolveError::NotFound { .. }, Some(key)) = (&e, key) {
                    self.caches.put_not_found(key);
                }
                return Err(e);
            }
        };
        let source = Source {
            server: answer.server,
            transport: answer.kind,
            site_serial: answer.msg.header.site_info_serial,
            site_description: answer.site.description(),
            certified: answer.certified,
            // Servers set AT on every response (PROTOCOL.md §14.4): only the site says
            // whether the answer came from a primary.
            authoritative: answer.site.is_primary()
                && answer.msg.header.flags.contains(crate::wire::OpFlags::AT),
            protocol_version: answer.msg.envelope.version,
        };
        if let Some(key) = key {
            self.caches.put_found(
                key,
                answered.clone(),
                values.clone(),
                source.clone(),
                self.clock.unix_now(),
            );
        }
        Ok(HandleRecord {
            handle: answered,
            values,
            source,
            from_cache: false,
            aliases: Vec::new(),
            hops: Vec::new(),
        })
    }
}
