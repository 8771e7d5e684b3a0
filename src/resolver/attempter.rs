//! [`Attempter`]: asks sites for one request. It picks the server each site's hash names for
//! the handle, races the sites hedged in SRTT order, runs the one UDP → TCP fallback rule on
//! a server (PROTOCOL.md §8.4), keeps the SRTT table, and checks every answer (op code,
//! expiry, request digest, signature; §9.1) before it counts.
//!
//! Verbs: [`Attempter::ask`] asks a list of sites (the race); [`Attempter::ask_server`] asks
//! one server, UDP then TCP; `attempt` is one exchange over one transport.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::StdRng;
use tokio::time::Instant;

use tracing::debug;

use crate::auth::DhKeyPair;
use crate::transport::{Exchange, ExchangeOptions, Exchanged, TransportError, TransportKind};
use crate::wire::signature::check_credential_type;
use crate::wire::{
    verify_message, Message, OpCode, OpFlags, ProtocolVersion, ResponseCode, ServerInfo, SessionKey,
};

use super::clock::Clock;
use super::error::{ProtocolViolation, ResolveError, SignatureFailure};
use super::health::{Admission, Health};
use super::hedging::race;
use super::limiter::Limiter;
use super::record::{Attempt, AttemptOutcome};
use super::request::{error_text, try_next_site, Answer, RequestSpec};
use super::session::{Lease, Sessions};
use super::settings::{Settings, REQUEST_LIFETIME_SECS};
use super::sites::{interface_addr, Site};
use super::srtt::{order_sites, srtt_key, SrttTable};
use super::trace::{Recorded, Trace};

/// Asks sites and servers; holds what it learns about them (SRTT).
pub(crate) struct Attempter {
    exchange: Arc<dyn Exchange>,
    options: ExchangeOptions,
    transports: Box<[TransportKind]>,
    hedge_min: Duration,
    hedge_max: Duration,
    max_parallel: usize,
    clock: Arc<dyn Clock>,
    srtt: SrttTable,
    health: Health,
    limiter: Limiter,
    /// Who the resolver is when a server challenges (402).
    auth: Option<Arc<crate::auth::Authenticator>>,
    /// Sessions with servers, for requests that need the identity.
    sessions: Sessions,
    rng: Mutex<StdRng>,
}

impl std::fmt::Debug for Attempter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attempter")
            .field("transports", &self.transports)
            .field("max_parallel", &self.max_parallel)
            .finish_non_exhaustive()
    }
}

impl Attempter {
    pub(crate) fn new(
        settings: &Settings,
        exchange: Arc<dyn Exchange>,
        options: ExchangeOptions,
        clock: Arc<dyn Clock>,
        rng: StdRng,
    ) -> Self {
        Self {
            exchange,
            options,
            transports: settings.transports.clone().into_boxed_slice(),
            hedge_min: settings.hedge_min,
            hedge_max: settings.hedge_max,
            max_parallel: settings.max_parallel,
            clock,
            srtt: SrttTable::new(),
            health: Health::new(),
            limiter: Limiter::new(),
            auth: settings.authenticator.clone(),
            sessions: Sessions::new(settings.sessions && settings.authenticator.is_some()),
            rng: Mutex::new(rng),
        }
    }

    /// The transport (also for HTTP GETs: RFC 2169 URN resolution).
    pub(crate) fn exchange(&self) -> &dyn Exchange {
        &*self.exchange
    }

    /// The wall clock (request expiry, absolute TTLs).
    pub(crate) fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The SRTT of a server (by query address), `None` while unknown.
    pub(crate) fn srtt(&self, server: SocketAddr) -> Option<Duration> {
        self.srtt.srtt(server)
    }

    /// Asks `sites` (primary sites only for AT requests), hedged in SRTT order: the first
    /// acceptable answer wins and the attempts still running are cancelled; when none
    /// comes, the most telling failure is returned.
    pub(crate) async fn ask(
        &self,
        spec: &RequestSpec,
        sites: &[Site],
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        // One candidate (every `--server` request, every single-site service): nothing to
        // order or hedge, so it is asked directly. Kept because it pays: through the race
        // (its task set, timers, site order, hedge delays) a resolution against one server
        // took 27-29 % more client instructions (callgrind, `loadgen --server ...
        // --client-threads 0`, C = 1 and 256) and loadgen's UDP rate at C = 256 fell to
        // 0.81 (BENCHMARKS.md §2).
        if let [site] = sites {
            if !spec.authoritative() || site.is_primary() {
                return self
                    .ask_site(site, spec, trace)
                    .await
                    .map_err(|e| summarize(spec.handle.as_str(), vec![e]));
            }
        }
        let handle = spec.handle.as_bytes();
        let ordered = order_sites(
            &self.srtt,
            sites,
            handle,
            spec.authoritative(),
            &mut *self.rng.lock(),
        );
        let delays: Vec<Duration> = ordered
            .iter()
            .map(|s| {
                let server = s.server_for(handle).map(srtt_key);
                self.srtt
                    .hedge_delay(server, self.hedge_min, self.hedge_max)
            })
            .collect();
        let result = race(
            ordered.len(),
            self.max_parallel,
            |i| self.ask_site(&ordered[i], spec, trace),
            |i| delays.get(i).copied().unwrap_or(self.hedge_max),
        )
        .await;
        result.map(|(_, answer)| answer).map_err(|errors| {
            summarize(
                spec.handle.as_str(),
                errors.into_iter().map(|(_, e)| e).collect(),
            )
        })
    }

    /// Asks the server of `site` its hash picks for the handle.
    async fn ask_site(
        &self,
        site: &Site,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let server = site
            .server_for(spec.handle.as_bytes())
            .ok_or(ResolveError::Protocol {
                sites_asked: 1,
                server: SocketAddr::from(([0, 0, 0, 0], 0)),
                violation: ProtocolViolation::NoUsableServer,
            })?;
        self.ask_server(site, server, spec, trace).await
    }

    /// Asks one server of `site`. A server with an address of the other family too (the
    /// site's `alt_addr` attributes) is asked at both, as RFC 8305 races them: the family
    /// that answered last time (IPv6 when none has yet) first, the other
    /// [`HAPPY_EYEBALLS_DELAY`] later or as soon as the first fails; the first answer wins
    /// and the other attempt is cancelled.
    pub(crate) async fn ask_server(
        &self,
        site: &Site,
        server: &ServerInfo,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let alt = site
            .info
            .alt_addr(server.server_id)
            .filter(|a| a.is_ipv6() != server.address.is_ipv6());
        let Some(alt) = alt else {
            return self.ask_address(site, server, spec, trace).await;
        };
        let mut other = server.clone();
        other.address = alt;
        let key = srtt_key(server);
        let v6_first = self.health.prefers_ipv6(key).unwrap_or(true);
        let candidates = if server.address.is_ipv6() == v6_first {
            [server, &other]
        } else {
            [&other, server]
        };
        let result = race(
            2,
            2,
            |i| self.ask_address(site, candidates[i], spec, trace),
            |_| HAPPY_EYEBALLS_DELAY,
        )
        .await;
        match result {
            Ok((i, answer)) => {
                self.health
                    .answered_over(key, candidates[i].address.is_ipv6());
                Ok(answer)
            }
            Err(errors) => Err(errors
                .into_iter()
                .map(|(_, e)| e)
                .min_by_key(telling)
                .unwrap_or(ResolveError::Protocol {
                    sites_asked: 1,
                    server: key,
                    violation: ProtocolViolation::NoUsableServer,
                })),
        }
    }

    /// Asks one server at one address: the transports in order (those it learned to fail
    /// last), the next on the same server when one fails in a way the next may not
    /// ([`moves_on`]); at once an error when the server's breaker is open ([`Health`]).
    async fn ask_address(
        &self,
        site: &Site,
        server: &ServerInfo,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let key = srtt_key(server);
        if let Admission::Open(retry_in) = self.health.admit(key) {
            return Err(ResolveError::ServerUnavailable {
                server: key,
                retry_in,
                sites_asked: 1,
            });
        }
        let mut kinds = self.health.transports(key, &self.transports);
        let admin = spec.is_admin();
        if admin {
            // Administration never over UDP (the sites' UDP interfaces are query-only).
            kinds.to_mut().retain(|k| *k != TransportKind::Udp);
        }
        let unusable = SocketAddr::new(server.address, 0);
        self.over_transports(
            &kinds,
            Some(key),
            |kind| interface_addr(server, kind, admin),
            unusable,
            |addr, kind| self.attempt(site, server, addr, kind, spec, trace),
        )
        .await
    }

    /// Sends `request` to `server` as it is (UDP then TCP, as configured) and returns the
    /// raw answer: no checks, no trace, no SRTT, nothing learned.
    pub(crate) async fn exchange_raw(
        &self,
        server: SocketAddr,
        request: &Message,
    ) -> Result<Message, ResolveError> {
        self.over_transports(
            &self.transports,
            None,
            |kind| matches!(kind, TransportKind::Udp | TransportKind::Tcp).then_some(server),
            server,
            |addr, kind| async move {
                // Sent once as given: no early loss detection (its `PresumedLost` would end
                // the exchange with nothing to send it again).
                let options = self.exchange_options(None, None);
                self.exchange
                    .exchange(addr, kind, request, &options)
                    .await
                    .map(|e| e.message)
                    .map_err(|error| ResolveError::Transport {
                        sites_asked: 1,
                        server: addr,
                        kind,
                        error,
                    })
            },
        )
        .await
    }

    /// Runs `attempt` over `kinds` of one server, in order, moving on only when
    /// [`moves_on`] says so. `addr_of` gives the server's address for a transport (`None`:
    /// not offered); `unusable` names the server when none is offered. With `learn` (the
    /// server's key), every silence or refusal and every answer is told to [`Health`].
    async fn over_transports<T, Fut>(
        &self,
        kinds: &[TransportKind],
        learn: Option<SocketAddr>,
        addr_of: impl Fn(TransportKind) -> Option<SocketAddr>,
        unusable: SocketAddr,
        attempt: impl Fn(SocketAddr, TransportKind) -> Fut,
    ) -> Result<T, ResolveError>
    where
        Fut: Future<Output = Result<T, ResolveError>>,
    {
        let mut last = None;
        let mut silent: Vec<TransportKind> = Vec::new();
        for &kind in kinds {
            let Some(addr) = addr_of(kind) else {
                continue;
            };
            let result = attempt(addr, kind).await;
            if let Some(key) = learn {
                match &result {
                    Err(e) if is_silence(e) => {
                        self.health.failed(key);
                        silent.push(kind);
                    }
                    Err(ResolveError::Transport { .. }) => {}
                    // An answer, even a failing one, is a sign of life.
                    _ => self.health.answered(key, &silent),
                }
            }
            match result {
                Ok(answer) => return Ok(answer),
                Err(e) if moves_on(kind, &e) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or(ResolveError::Protocol {
            sites_asked: 1,
            server: unusable,
            violation: ProtocolViolation::NoUsableServer,
        }))
    }

    /// One exchange with one server over one transport, recorded in the trace and the SRTT
    /// table; the answer counts only when it passes the checks and is not a "try the next
    /// site" code.
    async fn attempt(
        &self,
        site: &Site,
        server: &ServerInfo,
        addr: SocketAddr,
        kind: TransportKind,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let request = spec.to_message(site, self.request_expiration());
        let key = srtt_key(server);
        // Administration goes in a session with the server when it can (session.rs; the
        // setup, if one is due, comes first); a resolution that clears public-only goes in
        // the server's authenticated session if there is one, else without: if the server
        // challenges it, it is sent again in a session (as the reference client does)
        // rather than answered outside.
        let to = Peer {
            site,
            server,
            addr,
            kind,
            key,
            admin: spec.is_admin(),
        };
        let public_only = spec.flags.contains(OpFlags::PO);
        // The session setups and the second sends below are boxed: they happen only with an
        // identity, and inline they would make every attempt's future (held by each request
        // in flight) about 1 KB larger.
        let mut lease = match &self.auth {
            Some(_) if spec.is_admin() => Box::pin(self.lease(to)).await,
            Some(_) if !public_only => self.sessions.current(key),
            _ => Lease::Without,
        };
        let defer = self.auth.is_some()
            && !public_only
            && !spec.is_admin()
            && lease.key().is_none()
            && self.sessions.may_open(key);
        let mut record = Recorded::start(
            trace,
            Attempt {
                handle: spec.handle.clone(),
                server: addr,
                transport: kind,
                number: 0,
                rtt: Duration::ZERO,
                transmissions: 0,
                outcome: AttemptOutcome::Cancelled,
                url: None,
                session: None,
            },
        );
        let mut result = self.send_answering(to, &request, lease.key(), !defer).await;
        if defer && result.as_ref().is_ok_and(|r| challenged(&r.exchanged)) {
            lease = Box::pin(self.lease(to)).await;
            result = Box::pin(self.send_answering(to, &request, lease.key(), true)).await;
        }
        if lease.key().is_some() && result.as_ref().is_ok_and(|r| session_lost(&r.exchanged)) {
            // The server no longer knows the session (restarted, expired): once more in a
            // new one.
            Box::pin(lease.lost()).await;
            lease = Box::pin(self.lease(to)).await;
            result = Box::pin(self.send_answering(to, &request, lease.key(), true)).await;
        }
        record.in_session(lease.key().map(|k| k.session_id()));
        let answered_at = Instant::now();
        let rtt = answered_at.saturating_duration_since(record.started);
        let answered = match result {
            Ok(r) => r,
            Err(SendFailure::Transport(error)) => {
                record.finish(AttemptOutcome::Failed(error.to_string()), rtt, 0);
                self.srtt.record_failure(key);
                return Err(ResolveError::Transport {
                    sites_asked: 1,
                    server: addr,
                    kind,
                    error,
                });
            }
            Err(SendFailure::Authentication(reason)) => {
                let e = ResolveError::Authentication {
                    server: addr,
                    reason,
                };
                record.finish(AttemptOutcome::Rejected(e.to_string()), rtt, 0);
                return Err(e);
            }
        };
        let transmissions = answered.transmissions;
        // The request's own round trip (not the session setup, the waits for the session or
        // the answers to challenges, nor the sends presumed lost before the last one): what
        // the SRTT table learns.
        let answered_rtt = answered.rtt;
        let sampled_transmissions = transmissions.saturating_sub(answered.resent);
        let response = answered.exchanged.message;
        let continued = answered.exchanged.continued;
        if answered.challenged && authenticated_by(response.response_code()) {
            lease.authenticated();
        }
        drop(lease);
        let certified = match self.check(&request, &response, server, addr) {
            Ok(c) => c,
            Err(e) => {
                record.finish(AttemptOutcome::Rejected(e.to_string()), rtt, transmissions);
                self.srtt.record_failure(key);
                return Err(e);
            }
        };
        let code = response.response_code();
        record.finish(AttemptOutcome::Response(code), rtt, transmissions);
        if try_next_site(code) {
            // Busy, not responsible, failing: as useless as silence for site choice, so it is
            // penalised (a quick "busy" must not put the server first in line).
            self.srtt.record_failure(key);
            return Err(ResolveError::Server {
                sites_asked: 1,
                server: addr,
                code,
                message: error_text(&response),
            });
        }
        let first_wait = self.options.udp_retransmit.first().copied();
        self.srtt.record_answer(
            key,
            answered_rtt,
            sampled_transmissions,
            first_wait.unwrap_or_default(),
            answered_at,
        );
        Ok(Answer {
            msg: response,
            server: addr,
            kind,
            site: site.clone(),
            certified,
            continued,
        })
    }

    /// One exchange, and (with `answer`) the answers to the server's challenges (402) as the
    /// resolver's identity: at most [`MAX_CHALLENGE_ROUNDS`] (as the reference client), each
    /// answer in an exchange of its own, in the same session as the request; the last
    /// answer's outcome is the request's.
    async fn send_answering(
        &self,
        to: Peer<'_>,
        request: &Message,
        session: Option<Arc<SessionKey>>,
        answer: bool,
    ) -> Result<Answered, SendFailure> {
        // UDP waits for a place under the server's limit (the wait is not part of the RTT).
        // A query presumed lost by the transport (no answer within the server's loss
        // timeout: `ExchangeOptions::udp_loss_detection`) is sent again at once, under the
        // limit again, at most `MAX_EARLY_RESENDS` times; the last transmission waits out the
        // retransmission schedule. Administration requests are never sent again this way.
        let key = to.key;
        let detecting = to.kind == TransportKind::Udp
            && self.options.udp_loss_detection
            && matches!(
                request.header.op_code,
                OpCode::Resolution | OpCode::GetSiteInfo
            );
        let mut resent = 0u32;
        let mut first_taken = None;
        let (first, rtt) = loop {
            // A resend is the same request to the limit: its losses are one event.
            let permit = match to.kind {
                TransportKind::Udp => {
                    let p = self.limiter.acquire(key).await;
                    let first = *first_taken.get_or_insert(p.taken());
                    Some(p.taken_at(first))
                }
                _ => None,
            };
            let sent = Instant::now();
            // The transport's loss timeout doubles with each resend (`udp_loss_backoff`).
            let detect = (detecting && resent < MAX_EARLY_RESENDS).then_some(resent);
            let result = self.send(to, request, session.clone(), detect).await;
            let rtt = sent.elapsed();
            if let Some(permit) = permit {
                match &result {
                    Ok(e) => permit.answered(rtt, e.transmissions),
                    Err(TransportError::Timeout | TransportError::PresumedLost) => permit.lost(),
                    Err(_) => drop(permit),
                }
            }
            match result {
                Err(TransportError::PresumedLost) if detect.is_some() => resent += 1,
                // A resend has a request id of its own: its RTT is the last exchange's,
                // unambiguous unless the transport retransmitted it.
                other => break (other, rtt),
            }
        };
        let first = first.map_err(SendFailure::Transport)?;
        let mut answered = Answered {
            transmissions: first.transmissions.saturating_add(resent),
            resent,
            exchanged: first,
            rtt,
            challenged: false,
        };
        let Some(auth) = self.auth.as_ref().filter(|_| answer) else {
            return Ok(answered);
        };
        let mut rounds = 0;
        while answered.exchanged.message.response_code() == ResponseCode::AuthenticationNeeded
            && rounds < MAX_CHALLENGE_ROUNDS
        {
            rounds += 1;
            let challenge = &answered.exchanged.message;
            let answer = auth
                .answer(challenge, request, 0, request.header.expiration)
                .map_err(|e| SendFailure::Authentication(e.to_string()))?;
            // Boxed, as in `attempt`: inline, the answer and this send would make every
            // request's future about 600 bytes larger.
            answered.exchanged = Box::pin(self.send(to, &answer, session.clone(), None))
                .await
                .map_err(SendFailure::Transport)?;
            answered.challenged = true;
        }
        Ok(answered)
    }

    /// The session a request to `server` goes in ([`Sessions::lease`]), set up first when
    /// one is due: over `kind`, certified and checked like any answer. When the setup fails
    /// in any way (an error code, unsigned or a key we do not know, silence, a broken
    /// connection, a protocol before 2.7) the server is asked without sessions for a while,
    /// beginning with this request.
    async fn lease(&self, to: Peer<'_>) -> Lease {
        let Peer {
            site,
            server,
            addr,
            kind,
            ..
        } = to;
        let lease = self.sessions.lease(to.key).await;
        let (Lease::Setup(_), Some(auth)) = (&lease, &self.auth) else {
            return lease;
        };
        if !site.request_version().at_least(2, 7) {
            // Before 2.7 the session MAC is another keyed hash (PROTOCOL.md §9.4); no session.
            return lease.refused();
        }
        let pair = DhKeyPair::generate();
        let mut setup = pair.setup_request(auth.identity(), self.request_expiration());
        setup.header.site_info_serial = site.request_serial;
        setup.envelope.version = site.request_version();
        setup.envelope.suggested = ProtocolVersion::V2_11;
        let opened = match self.send(to, &setup, None, None).await {
            Ok(e) => self
                .check(&setup, &e.message, server, addr)
                .map_err(|e| e.to_string())
                .and_then(|_| pair.accept(&e.message).map_err(|e| e.to_string())),
            Err(e) => Err(format!("{kind}: {e}")),
        };
        match opened {
            Ok(key) => {
                debug!(%addr, session = key.session_id(), "session opened");
                lease.opened(key)
            }
            Err(reason) => {
                debug!(%addr, %reason, "no session with this server; challenges without one");
                lease.refused()
            }
        }
    }

    /// One exchange over `kind`: HTTP(S) with what the site record says about the server's
    /// interface, the others by address.
    async fn send(
        &self,
        to: Peer<'_>,
        request: &Message,
        session: Option<Arc<SessionKey>>,
        loss_detection: Option<u32>,
    ) -> Result<crate::transport::Exchanged, TransportError> {
        let Peer {
            site,
            server,
            addr,
            kind,
            admin,
            ..
        } = to;
        let options = self.exchange_options(session, loss_detection);
        let options = &*options;
        #[cfg(feature = "http")]
        if matches!(kind, TransportKind::Http | TransportKind::Https) {
            let target = super::sites::http_target(&site.info, server, kind, admin)
                .ok_or(TransportError::Unsupported("no http interface"))?;
            return self.exchange.exchange_http(&target, request, options).await;
        }
        let _ = (site, server, admin);
        self.exchange.exchange(addr, kind, request, options).await
    }

    /// The exchange options of one request: the resolver's, in `session` (`None`: outside
    /// any), with early loss detection when `loss_detection` gives the number of times the
    /// request was presumed lost before (the caller resends what is presumed lost), without
    /// when `None`.
    fn exchange_options(
        &self,
        session: Option<Arc<SessionKey>>,
        loss_detection: Option<u32>,
    ) -> std::borrow::Cow<'_, ExchangeOptions> {
        let (detect, backoff) = (loss_detection.is_some(), loss_detection.unwrap_or(0));
        if session.is_none()
            && detect == self.options.udp_loss_detection
            && backoff == self.options.udp_loss_backoff
        {
            std::borrow::Cow::Borrowed(&self.options)
        } else {
            std::borrow::Cow::Owned(ExchangeOptions {
                session,
                udp_loss_detection: detect,
                udp_loss_backoff: backoff,
                ..self.options.clone()
            })
        }
    }

    /// Request expiration: now + 12 h (saturating at the largest `u32`).
    fn request_expiration(&self) -> u32 {
        u32::try_from(self.clock.unix_now().saturating_add(REQUEST_LIFETIME_SECS))
            .unwrap_or(u32::MAX)
    }

    /// Checks an answer: op code, expiry, request digest when asked, signature when asked.
    /// Returns whether the signature was verified.
    fn check(
        &self,
        request: &Message,
        response: &Message,
        server: &ServerInfo,
        addr: SocketAddr,
    ) -> Result<bool, ResolveError> {
        let protocol = |violation| ResolveError::Protocol {
            sites_asked: 1,
            server: addr,
            violation,
        };
        if response.header.op_code != request.header.op_code {
            return Err(protocol(ProtocolViolation::OpCodeMismatch {
                expected: request.header.op_code.code(),
                got: response.header.op_code.code(),
            }));
        }
        let expiration = response.header.expiration;
        let now = self.clock.unix_now();
        if expiration != 0 && u64::from(expiration) < now {
            return Err(protocol(ProtocolViolation::Expired { expiration, now }));
        }
        if request.header.flags.contains(OpFlags::RD) {
            let digest = response
                .request_digest
                .as_ref()
                .ok_or_else(|| protocol(ProtocolViolation::DigestMissing))?;
            let covered = request
                .header_and_body()
                .map_err(|_| protocol(ProtocolViolation::DigestMismatch))?;
            if !digest.matches(&covered) {
                return Err(protocol(ProtocolViolation::DigestMismatch));
            }
        }
        if !request.header.flags.contains(OpFlags::CT) {
            return Ok(false);
        }
        let signature = |failure| ResolveError::Signature {
            sites_asked: 1,
            server: addr,
            failure,
        };
        let credential = response
            .credential
            .as_ref()
            .ok_or_else(|| signature(SignatureFailure::Unsigned))?;
        if check_credential_type(&credential.credential_type).is_err() {
            return Err(signature(SignatureFailure::UnsupportedCredential(
                String::from_utf8_lossy(&credential.credential_type).into_owned(),
            )));
        }
        let key = match server.public_key() {
            Ok(Some(k)) => k,
            Ok(None) => return Err(signature(SignatureFailure::NoServerKey(addr))),
            Err(e) => return Err(signature(SignatureFailure::BadKey(e.to_string()))),
        };
        verify_message(response, &key).map_err(|e| signature(SignatureFailure::Invalid(e)))?;
        Ok(true)
    }
}

/// Who an exchange goes to: the server of a site, at one address, over one transport.
#[derive(Clone, Copy)]
struct Peer<'a> {
    site: &'a Site,
    server: &'a ServerInfo,
    addr: SocketAddr,
    kind: TransportKind,
    /// The server's key in the per-server tables ([`srtt_key`]).
    key: SocketAddr,
    /// An administration request: HTTP goes to an admin interface (the answers to its
    /// challenges and its session setup too); anything else to a query interface.
    admin: bool,
}

/// An exchange and the answers to its challenges ([`Attempter::send_answering`]).
struct Answered {
    /// The last answer (the outcome of the request).
    exchanged: Exchanged,
    /// Transmissions of the request itself (the sends of those presumed lost included).
    transmissions: u32,
    /// Of them, the sends presumed lost and sent again under a new request id.
    resent: u32,
    /// Round trip of the last exchange of the request (its first transmission to the
    /// answer): a sample when that exchange took one transmission.
    rtt: Duration,
    /// True when a challenge was answered.
    challenged: bool,
}

/// Why [`Attempter::send_answering`] got no answer.
enum SendFailure {
    /// An exchange failed.
    Transport(TransportError),
    /// A challenge could not be answered (its digest is not our request's, an unknown
    /// algorithm, a key that cannot sign).
    Authentication(String),
}

/// True when the answer is a challenge.
fn challenged(answer: &Exchanged) -> bool {
    answer.message.response_code() == ResponseCode::AuthenticationNeeded
}

/// True for the codes of a server that no longer knows the session the request came in.
fn session_lost(answer: &Exchanged) -> bool {
    matches!(
        answer.message.response_code(),
        ResponseCode::SessionTimeout
            | ResponseCode::SessionFailed
            | ResponseCode::InvalidSessionKey
            | ResponseCode::SessionMessageRejected
    )
}

/// True for the outcomes of a request whose challenge answer the server accepted: success,
/// and the codes the reference server gives only after it checked the answer (captures-auth:
/// a value at a taken index, 201; no such value, 200). A 100, 400 or 401 comes before the
/// answer is looked at, so it proves nothing.
fn authenticated_by(code: ResponseCode) -> bool {
    matches!(
        code,
        ResponseCode::Success | ResponseCode::ValueAlreadyExists | ResponseCode::ValuesNotFound
    )
}

/// Most times one query presumed lost is sent again at once
/// ([`ExchangeOptions::udp_loss_detection`]); the transmission after the last of them
/// waits out the retransmission schedule.
pub const MAX_EARLY_RESENDS: u32 = 4;

/// Most challenges answered for one request (the reference client's limit).
pub const MAX_CHALLENGE_ROUNDS: u32 = 2;

/// How long the first address family of a server has before the other is tried too (the
/// reference client's 300 ms; RFC 8305 recommends 250 ms).
pub const HAPPY_EYEBALLS_DELAY: Duration = Duration::from_millis(300);

/// Silence or refusal: no sign that the server is there (what [`Health`] counts).
fn is_silence(error: &ResolveError) -> bool {
    matches!(
        error,
        ResolveError::Transport {
            error: TransportError::Timeout | TransportError::Io(..) | TransportError::Closed,
            ..
        }
    )
}

/// The one fallback rule (PROTOCOL.md §8.4): the next transport of the order is tried on the
/// same server when a UDP attempt got no answer in time, its request is too big for
/// datagrams, its UDP side is saturated or its UDP port is closed (ICMP port unreachable,
/// learned on Linux); or when a connection (TCP, HTTP) timed out, was
/// refused or reset, or closed early, as where a network blocks a port; or when the
/// transport cannot do it (HTTP without the feature). Anything else (an answer, a bad
/// answer, a failed TLS pin) stands.
fn moves_on(kind: TransportKind, error: &ResolveError) -> bool {
    let ResolveError::Transport { error, .. } = error else {
        return false;
    };
    match kind {
        // A refused UDP port (ICMP port unreachable) is learned like a silence (`is_silence`).
        TransportKind::Udp => matches!(
            error,
            TransportError::Timeout
                | TransportError::TooLargeForUdp
                | TransportError::Busy
                | TransportError::Io(std::io::ErrorKind::ConnectionRefused, _)
        ),
        TransportKind::Rest => false,
        TransportKind::Tcp | TransportKind::Http | TransportKind::Https => matches!(
            error,
            TransportError::Timeout
                | TransportError::Io(..)
                | TransportError::Closed
                | TransportError::Unsupported(_)
        ),
    }
}

/// The error reported when every site failed: 301 everywhere → prefix not served; otherwise
/// the most telling failure ([`telling`]; the first of equals), noting how many sites were
/// asked.
fn summarize(handle: &str, errors: Vec<ResolveError>) -> ResolveError {
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
            | TransportError::RequestIdMismatch { .. }
            | TransportError::Http(_)
            | TransportError::TooManyMessages { .. }
            | TransportError::BodyTooLarge { .. }
            | TransportError::Tls(_)
            | TransportError::Session(_) => 3,
            TransportError::Timeout | TransportError::PresumedLost => 4,
            TransportError::Busy | TransportError::TooLargeForUdp | TransportError::Encode(_) => 5,
            TransportError::Io(..) => 6,
            TransportError::Unsupported(_) => 7,
        },
        // Not asked: less telling than any failure of a server that was.
        ResolveError::ServerUnavailable { .. } => 8,
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
