//! The resolution procedure for one request (PROTOCOL.md §11.5): find the sites, ask them
//! hedged in SRTT order, follow 302/303 referrals (≤ 40 in all, loops detected), and on 300
//! refresh the root once and start over (the refresh itself is in `refresh`).

use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::FutureExt;
use tracing::{debug, info};

use crate::transport::TransportError;
use crate::wire::{Body, OpFlags, ResponseCode};

use super::attempt::{Answer, RequestSpec};
use super::bootstrap::ROOT_HANDLE;
use super::error::{ProtocolViolation, ResolveError};
use super::hedging::race;
use super::selection::{order_sites, srtt_key};
use super::service::{is_prefix_query, prefix_handle, SiteKind};
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
        // One candidate: nothing to order or hedge, so ask it directly (what the race would
        // do with one candidate, without its machinery).
        if let [site] = sites {
            if !authoritative || site.is_primary() {
                return self
                    .ask_site(site, spec, ctx)
                    .await
                    .map_err(|e| summarize(&spec.handle, vec![e]));
            }
        }
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
        let answer = self.race_sites(spec, &sites, ctx).await?;
        if !matches!(
            answer.code(),
            ResponseCode::ServiceReferral | ResponseCode::PrefixReferral
        ) {
            return Ok(answer);
        }
        // Most requests get no referral: their future does not carry the referral walk's
        // state (it is boxed, and made only when a referral comes).
        self.follow_referrals(spec, sites, answer, ctx, path).await
    }

    /// Follows the referral in `answer` (from `sites`) and those after it.
    fn follow_referrals<'a>(
        &'a self,
        spec: &'a RequestSpec,
        sites: Arc<Vec<Site>>,
        answer: Answer,
        ctx: &'a Ctx,
        path: &'a [String],
    ) -> BoxFuture<'a, Result<Answer, ResolveError>> {
        async move {
            let mut seen = HashSet::new();
            let mut sites = sites;
            let mut answer = answer;
            // Copied only when a referral changes it (here, at the first one).
            let mut spec = std::borrow::Cow::Borrowed(spec);
            loop {
                let kind = match answer.code() {
                    ResponseCode::ServiceReferral => SiteKind::Service,
                    ResponseCode::PrefixReferral => {
                        if !is_prefix_query(&spec.handle) {
                            return Err(ResolveError::Protocol {
                                sites_asked: 1,
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
                        sites_asked: 1,
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
                if seen.is_empty() {
                    seen.insert(sites_key(&sites));
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
                // The same request again, one referral deeper (§5.3).
                let deeper = spec.to_mut();
                deeper.recursion_count = deeper.recursion_count.saturating_add(1);
                answer = self.race_sites(&spec, &sites, ctx).await?;
            }
        }
        .boxed()
    }

    /// The whole procedure for one request: sites for its handle, referrals, and one root
    /// refresh on 300 (out-of-date site information).
    ///
    /// Work done for a root refresh (its `path` starts with the root handle) never triggers
    /// a refresh: it would wait for the very refresh it is part of.
    pub(crate) fn fetch<'a>(
        &'a self,
        spec: RequestSpec,
        ctx: &'a Ctx,
        path: &'a [String],
    ) -> BoxFuture<'a, Result<Answer, ResolveError>> {
        async move { self.fetch_inline(&spec, ctx, path).await }.boxed()
    }

    /// [`Inner::fetch`] without the box, for callers outside the recursion (a resolution's
    /// own request): the nested lookups it starts go through the boxed [`Inner::fetch`].
    pub(crate) async fn fetch_inline(
        &self,
        spec: &RequestSpec,
        ctx: &Ctx,
        path: &[String],
    ) -> Result<Answer, ResolveError> {
        {
            let in_refresh = path.first().is_some_and(|p| p == ROOT_HANDLE);
            loop {
                let sites = match &self.fixed {
                    // `--server`: no lookup (and no boxed future for one).
                    Some(sites) => sites.clone(),
                    None => {
                        self.sites_for(&spec.handle, spec.certify(), ctx, path)
                            .await?
                    }
                };
                let answer = self.ask(spec, sites, ctx, path).await?;
                if in_refresh {
                    return Ok(answer);
                }
                if answer.code() == ResponseCode::OutOfDateSiteInfo && ctx.claim_refresh() {
                    info!(server = %answer.server, "site information out of date; refreshing the root");
                    // Boxed: rare, and large enough to double every request's state.
                    Box::pin(self.refresh_root_limited(spec.certify(), ctx)).await?;
                    if let Some(p) = prefix_handle(&spec.handle) {
                        self.caches.forget_service(&p);
                    }
                    continue;
                }
                self.note_site_serial(&answer, spec.certify(), ctx);
                return Ok(answer);
            }
        }
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

/// The error reported when every site failed: 301 everywhere → prefix not served; otherwise
/// the most telling failure ([`telling`]; the first of equals), noting how many sites were
/// asked.
pub(crate) fn summarize(handle: &str, errors: Vec<ResolveError>) -> ResolveError {
    let asked = errors.len();
    let all_301 = errors.iter().all(|e| {
        matches!(
            e,
            ResolveError::Server {
                code: ResponseCode::ServerNotResponsible,
                ..
            }
        )
    });
    if all_301 && asked > 0 {
        return ResolveError::PrefixNotServed {
            handle: handle.to_string(),
        };
    }
    match errors.into_iter().min_by_key(telling) {
        Some(e) => e.with_sites_asked(asked),
        None => ResolveError::ServiceNotFound {
            prefix_handle: handle.to_string(),
        },
    }
}

/// How telling one site's failure is (lower is more): the server's own answer, then an
/// answer that was not acceptable, then one the transport could not take, then silence,
/// then a transport that could not even send; a 301 ("not this site") last, as other sites
/// may serve the prefix.
fn telling(e: &ResolveError) -> u8 {
    match e {
        ResolveError::Server {
            code: ResponseCode::ServerNotResponsible,
            ..
        } => 9,
        ResolveError::Server { .. } => 0,
        ResolveError::Signature { .. } => 1,
        ResolveError::Protocol { .. } => 2,
        ResolveError::Transport { error, .. } => match error {
            TransportError::Decode(_)
            | TransportError::Closed
            | TransportError::RequestIdMismatch { .. } => 3,
            TransportError::Timeout => 4,
            TransportError::Busy | TransportError::TooLargeForUdp | TransportError::Encode(_) => 5,
            TransportError::Io(..) => 6,
        },
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;
    use std::net::SocketAddr;

    fn at(n: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, n], 2641))
    }

    fn transport(n: u8, error: TransportError) -> ResolveError {
        ResolveError::Transport {
            server: at(n),
            kind: crate::transport::TransportKind::Udp,
            error,
            sites_asked: 1,
        }
    }

    fn refused(n: u8) -> ResolveError {
        transport(
            n,
            TransportError::Io(ErrorKind::ConnectionRefused, "Connection refused".into()),
        )
    }

    fn server(n: u8, code: ResponseCode) -> ResolveError {
        ResolveError::Server {
            server: at(n),
            code,
            message: String::new(),
            sites_asked: 1,
        }
    }

    #[test]
    fn a_timeout_is_more_telling_than_a_refused_connection() {
        for errors in [
            vec![
                transport(1, TransportError::Timeout),
                refused(2),
                refused(3),
            ],
            vec![
                refused(2),
                refused(3),
                transport(1, TransportError::Timeout),
            ],
        ] {
            let e = summarize("1/x", errors);
            assert!(
                matches!(
                    &e,
                    ResolveError::Transport {
                        error: TransportError::Timeout,
                        sites_asked: 3,
                        ..
                    }
                ),
                "{e:?}"
            );
            assert_eq!(
                e.to_string(),
                "udp exchange with 127.0.0.1:2641 failed: timed out (3 sites asked)"
            );
        }
    }

    #[test]
    fn a_servers_answer_is_more_telling_than_silence_or_a_301() {
        let errors = vec![
            refused(1),
            server(2, ResponseCode::ServerNotResponsible),
            transport(3, TransportError::Timeout),
            server(4, ResponseCode::ServerBusy),
        ];
        let e = summarize("1/x", errors);
        assert_eq!(
            e.to_string(),
            "127.0.0.4:2641 answered SERVER_TOO_BUSY (3) (4 sites asked)"
        );
        // A 301 beside silence: the silence is reported (another site may serve the prefix).
        let e = summarize(
            "1/x",
            vec![
                server(2, ResponseCode::ServerNotResponsible),
                transport(3, TransportError::Timeout),
            ],
        );
        assert!(
            matches!(&e, ResolveError::Transport { server, .. } if *server == at(3)),
            "{e:?}"
        );
    }

    #[test]
    fn one_site_or_all_301_or_none() {
        let e = summarize("1/x", vec![refused(1)]);
        assert_eq!(
            e.to_string(),
            "udp exchange with 127.0.0.1:2641 failed: connection refused"
        );
        let e = summarize(
            "1/x",
            vec![
                server(1, ResponseCode::ServerNotResponsible),
                server(2, ResponseCode::ServerNotResponsible),
            ],
        );
        assert!(matches!(e, ResolveError::PrefixNotServed { .. }), "{e:?}");
        let e = summarize("1/x", Vec::new());
        assert!(matches!(e, ResolveError::ServiceNotFound { .. }), "{e:?}");
    }
}
