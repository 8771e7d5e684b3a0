//! [`Resolution`]: one call, from the handle to the record. It owns the target handle, the
//! query (with the resolver's settings filled in), **the deadline**, the HS_ALIAS chain and
//! the trace; it reads and fills the answer cache, shares identical queries in flight, and
//! asks its [`Upstream`] for each handle of the chain: the native procedure (the
//! [`SiteLocator`]) or a handle proxy's REST API.

use std::sync::Arc;

use tracing::{info_span, Instrument};

use crate::ident::Handle;
use crate::wire::HandleValue;

use super::ask::RequestSpec;
use super::error::ResolveError;
use super::locate::{Path, SiteLocator};
use super::query::{Asked, Query};
use super::record::{Attempt, HandleRecord, Source};
use super::settings::{Settings, MAX_ALIAS_DEPTH};
use super::site::text_of;
use super::support::cache::{AnswerCache, CachedAnswer, RecordKey};
use super::support::deadline::Deadline;
use super::support::flight::Flights;
use super::support::trace::{SharedOutcome, Trace};

/// What every call of one resolver (and its clones) shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) settings: Settings,
    /// The native procedure (also for administration, root refreshes, the mirror check).
    pub(crate) locator: Arc<SiteLocator>,
    /// Where resolutions are answered from.
    upstream: Upstream,
    pub(crate) answers: AnswerCache,
    /// Identical queries in flight (answer cache on, not authoritative) share one request.
    flights: Flights<RecordKey, SharedOutcome<HandleRecord>, Arc<Trace>>,
}

impl Shared {
    pub(crate) fn new(
        settings: Settings,
        locator: Arc<SiteLocator>,
        upstream: Upstream,
        answers: AnswerCache,
    ) -> Self {
        Self {
            flights: Flights::new(),
            settings,
            locator,
            upstream,
            answers,
        }
    }
}

/// Where a resolution's answers come from. Both share the resolution's deadline, answer
/// cache and single flight.
#[derive(Debug)]
pub(crate) enum Upstream {
    /// The native procedure: the locator's sites, servers and referrals.
    Native,
    /// A handle proxy's REST API (`ResolverBuilder::proxy`).
    Proxy(super::proxy::Proxy),
}

impl Upstream {
    /// Resolves one request: the handle as the answer spells it, the values and where they
    /// came from.
    async fn resolve(
        &self,
        locator: &Arc<SiteLocator>,
        spec: RequestSpec,
        trace: &Trace,
    ) -> Result<(String, Vec<HandleValue>, Source), ResolveError> {
        match self {
            Upstream::Native => native(locator, spec, trace).await,
            Upstream::Proxy(proxy) => proxy.resolve(&spec, trace).await,
        }
    }
}

/// One resolution: a call of [`Resolver::resolve_with`](super::Resolver::resolve_with).
pub(crate) struct Resolution<'a> {
    shared: &'a Arc<Shared>,
    asked: Asked,
    /// HS_ALIAS values are followed.
    follow: bool,
    /// The attempts made, and the handle asked for (its origin).
    trace: Trace,
}

impl<'a> Resolution<'a> {
    /// A resolution of `handle` asking `query`, ending at the call's `deadline`.
    pub(crate) fn new(
        shared: &'a Arc<Shared>,
        handle: Handle,
        query: &Query,
        deadline: Deadline,
    ) -> Self {
        let asked = query.asked(&shared.settings);
        Self {
            shared,
            asked,
            follow: query.follows_aliases(&shared.settings),
            trace: Trace::new(handle, deadline),
        }
    }

    /// Runs the resolution under the call's deadline. Returns the record, with every
    /// attempt made in it, or the error and every attempt made (at the deadline, also those
    /// still running).
    pub(crate) async fn run(self) -> Result<HandleRecord, (ResolveError, Vec<Attempt>)> {
        let span = info_span!("resolve", handle = %self.trace.origin());
        let work = std::pin::pin!(self.follow_aliases().instrument(span));
        match self.trace.run(work).await {
            Ok(mut record) => {
                record.attempts = self.trace.take_attempts();
                Ok(record)
            }
            Err((e, Some(attempts))) => Err((e, attempts)),
            Err((e, None)) => Err((e, self.trace.take_attempts())),
        }
    }

    /// Resolves the handle, following HS_ALIAS values when configured (≤
    /// [`MAX_ALIAS_DEPTH`], loops detected).
    async fn follow_aliases(&self) -> Result<HandleRecord, ResolveError> {
        let follow = self.follow;
        let asked_alias = self.asked.includes_aliases();
        // With a type filter, HS_ALIAS is asked for too (and taken out of the record again).
        let asked = if follow && !asked_alias {
            let mut with_alias = self.asked.clone();
            with_alias.types.push("HS_ALIAS".into());
            std::borrow::Cow::Owned(with_alias)
        } else {
            std::borrow::Cow::Borrowed(&self.asked)
        };
        // The chain followed, from the handle asked for: it starts at the first alias.
        let mut chain: Vec<Handle> = Vec::new();
        let origin = self.trace.origin();
        let mut current = std::borrow::Cow::Borrowed(origin);
        loop {
            let mut record = self.resolve_step(&current, &asked).await?;
            let alias = follow
                .then(|| record.values.iter().find(|v| v.is_type("HS_ALIAS")))
                .flatten()
                .map(|v| text_of(&v.data).trim().to_string());
            let Some(next) = alias else {
                if follow && !asked_alias {
                    record.values.retain(|v| !v.is_type("HS_ALIAS"));
                }
                record.aliases = chain.iter().map(Handle::to_string).collect();
                return Ok(record);
            };
            if chain.is_empty() {
                chain.push(origin.clone());
            }
            let parsed = Handle::parse(&next).map_err(|error| ResolveError::InvalidAlias {
                handle: current.clone().into_owned(),
                error,
            })?;
            // The chain with the next handle, as a loop or an overlong chain reports it.
            let with_next = |chain: &[Handle]| {
                let mut chain = chain.to_vec();
                chain.push(parsed.clone());
                chain
            };
            if chain.contains(&parsed) {
                return Err(ResolveError::AliasLoop {
                    chain: with_next(&chain),
                });
            }
            if chain.len() > MAX_ALIAS_DEPTH {
                return Err(ResolveError::TooManyAliases {
                    limit: MAX_ALIAS_DEPTH,
                    chain: with_next(&chain),
                });
            }
            chain.push(parsed.clone());
            current = std::borrow::Cow::Owned(parsed);
        }
    }

    /// Resolves one handle of the chain: from the answer cache, else over the network,
    /// sharing the request with identical queries in flight. Authoritative queries bypass
    /// both the cache and the sharing; with the cache off every call sends its own request
    /// (handing one answer to several callers is caching by another name).
    async fn resolve_step(
        &self,
        handle: &Handle,
        asked: &Asked,
    ) -> Result<HandleRecord, ResolveError> {
        let shared = self.shared;
        let key = shared
            .answers
            .is_on()
            .then(|| RecordKey::new(handle, asked));
        let key = match key {
            Some(key) if !asked.authoritative => key,
            // Not shared: the request runs in this resolution's own bookkeeping, whose
            // errors name the handle first asked for; this step's name its own.
            key => {
                return resolve_one(shared, handle, asked, key, &self.trace)
                    .await
                    .map_err(|e| e.for_step(self.trace.origin(), handle));
            }
        };
        if let Some(found) = cached(&shared.answers, &key, handle) {
            return found;
        }
        self.trace
            .share(
                &shared.flights,
                key.clone(),
                || self.trace.for_shared_request(handle),
                |trace| {
                    let (in_flight, key) = (shared.clone(), key.clone());
                    let (handle, asked) = (handle.clone(), asked.clone());
                    async move {
                        // A flight that ended just before this one started may have filled
                        // the cache.
                        match cached(&in_flight.answers, &key, &handle) {
                            Some(found) => found,
                            None => {
                                let key = Some(key);
                                resolve_one(&in_flight, &handle, &asked, key, &trace).await
                            }
                        }
                    }
                },
            )
            .await
    }
}

/// The cached outcome for `key`, if any.
fn cached(
    answers: &AnswerCache,
    key: &RecordKey,
    handle: &Handle,
) -> Option<Result<HandleRecord, ResolveError>> {
    match answers.get(key)? {
        CachedAnswer::Found {
            handle,
            values,
            source,
        } => Some(Ok(record(handle, values, source, true))),
        CachedAnswer::NotFound => Some(Err(ResolveError::NotFound {
            handle: handle.clone(),
        })),
    }
}

/// Resolves one handle at the upstream and caches the outcome under `key` (`None`: the
/// answer cache is off).
async fn resolve_one(
    shared: &Arc<Shared>,
    handle: &Handle,
    asked: &Asked,
    key: Option<RecordKey>,
    trace: &Trace,
) -> Result<HandleRecord, ResolveError> {
    let spec = RequestSpec::resolution(handle.clone(), asked, shared.settings.request_digest);
    let outcome = shared.upstream.resolve(&shared.locator, spec, trace).await;
    let (answered, values, source) = match outcome {
        Ok(v) => v,
        Err(e) => {
            if let (ResolveError::NotFound { .. }, Some(key)) = (&e, key) {
                shared.answers.put_not_found(key);
            }
            return Err(e);
        }
    };
    if let Some(key) = key {
        let now = shared.locator.asker().clock().unix_now();
        shared
            .answers
            .put_found(key, answered.clone(), values.clone(), source.clone(), now);
    }
    Ok(record(answered, values, source, false))
}

/// Resolves one request by the native procedure: the handle as the server spelled it, the
/// values and where they came from.
async fn native(
    locator: &Arc<SiteLocator>,
    spec: RequestSpec,
    trace: &Trace,
) -> Result<(String, Vec<HandleValue>, Source), ResolveError> {
    let answer = locator.request(&spec, trace, &Path::default()).await?;
    let source = Source {
        server: Some(answer.server),
        transport: answer.kind,
        site_serial: answer.msg.header.site_info_serial,
        site: Some(answer.site.clone()),
        certified: answer.certified,
        // Servers set AT on every response (PROTOCOL.md §14.4): only the site says whether
        // the answer came from a primary.
        authoritative: answer.site.is_primary()
            && answer.msg.header.flags.contains(crate::wire::OpFlags::AT),
        protocol_version: answer.msg.envelope.version,
        url: None,
    };
    let (answered, values) = answer.into_values(spec.handle)?;
    Ok((answered, values, source))
}

/// A record of one step (its alias chain and attempts are the resolution's, filled in
/// later).
fn record(
    handle: String,
    values: Vec<HandleValue>,
    source: Source,
    from_cache: bool,
) -> HandleRecord {
    HandleRecord {
        handle,
        values,
        source,
        from_cache,
        aliases: Vec::new(),
        attempts: Vec::new(),
    }
}
