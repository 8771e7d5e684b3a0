//! One attempt: a request to one server at one address over one transport. It takes the
//! server's session when the request needs the identity, records the attempt in the
//! resolution's trace, runs its exchanges (the request under the server's UDP limit, sent
//! again at once when presumed lost; the answers to the server's challenges; the setup of a
//! session), checks the answer (`check.rs`) and tells the server's RTT what it learned.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::debug;

use crate::auth::{AuthError, DhKeyPair};
use crate::transport::{ExchangeOptions, Exchanged, TransportError, TransportKind};
use crate::wire::{
    Message, OpCode, OpFlags, ProtocolVersion, ResponseCode, ServerInfo, SessionKey,
};

use super::super::error::ResolveError;
use super::super::peers::{Lease, Peer};
use super::super::record::{Attempt, AttemptOutcome, Rejection};
use super::super::settings::REQUEST_LIFETIME_SECS;
use super::super::site::Site;
use super::super::support::trace::{Recorded, Trace};
use super::check::check_answer;
use super::request::{error_text, try_next_site, Answer, RequestSpec};
use super::Asker;

impl Asker {
    /// One exchange with one server over one transport (`to`), recorded in the trace and in
    /// what the resolver knows of the server (its RTT); the answer counts only when it passes
    /// the checks and is not a "try the next site" code.
    pub(super) async fn attempt(
        &self,
        to: Addressee<'_>,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let Addressee {
            site,
            server,
            peer,
            addr,
            kind,
            ..
        } = to;
        // One reading of the wall clock an attempt: the request's expiration and the
        // answer's expiry check (an answer is checked against the time its request went out,
        // at most a deadline earlier): callgrind counts 1 `SystemTime::now` per resolution
        // instead of 2 (about 30 instructions and a vDSO call fewer, BENCHMARKS §12).
        let unix_now = self.clock.unix_now();
        let request = spec.to_message(site, expiration_from(unix_now));
        // Administration goes in a session with the server when it can (`peers/session.rs`;
        // the setup, if one is due, comes first); a resolution that clears public-only goes
        // in the server's authenticated session if there is one, else without: if the
        // server challenges it, it is sent again in a session (as the reference client
        // does) rather than answered outside.
        let public_only = spec.flags.contains(OpFlags::PO);
        // The session setups and the second sends below are boxed: they happen only with an
        // identity, and inline they would make every attempt's future (held by each request
        // in flight) about 1 KB larger.
        let mut lease = match &self.auth {
            Some(_) if spec.session_first() => Box::pin(self.open_session(to)).await,
            Some(_) if !public_only => peer.session.current(),
            _ => Lease::Without,
        };
        let defer = self.auth.is_some()
            && !public_only
            && !spec.session_first()
            && lease.key().is_none()
            && peer.session.may_open();
        let mut record = Recorded::start(
            trace,
            Attempt {
                handle: spec.handle.clone(),
                server: Some(addr),
                transport: kind,
                number: 0,
                rtt: Duration::ZERO,
                transmissions: 0,
                outcome: AttemptOutcome::Cancelled,
                url: None,
                session: None,
            },
        );
        // In a session (or one that may come), a place in its window first
        // (`peers/session.rs`): held until the attempt ends.
        let _in_window = match lease.key().is_some() || defer {
            true => peer.session.admit().await,
            false => None,
        };
        // Given up on before any outcome (the call's deadline, the caller gone) after half
        // the call's window, the request counts as the server's silence; an outcome is told
        // by `over_transports`.
        let awaiting = peer
            .health
            .awaiting(record.started, trace.deadline().window());
        let mut result = self
            .exchange_answering(to, &request, lease.key(), !defer)
            .await;
        if defer && result.as_ref().is_ok_and(|r| challenged(&r.exchanged)) {
            lease = Box::pin(self.open_session(to)).await;
            result = Box::pin(self.exchange_answering(to, &request, lease.key(), true)).await;
        }
        if lease.key().is_some() && result.as_ref().is_ok_and(|r| counter_refused(&r.exchanged)) {
            // 505: the server refused the message's session counter (seen already, or below
            // its window) and did not execute it: once more, sealed with a fresh counter in
            // the same session; a second 505 is the answer.
            debug!(server = %addr, "session counter refused (505): sent again, sealed anew");
            result = Box::pin(self.exchange_answering(to, &request, lease.key(), true)).await;
        } else if lease.key().is_some() && result.as_ref().is_ok_and(|r| session_lost(&r.exchanged))
        {
            // The server no longer knows the session (restarted, expired): once more in a
            // new one.
            Box::pin(lease.lost()).await;
            lease = Box::pin(self.open_session(to)).await;
            result = Box::pin(self.exchange_answering(to, &request, lease.key(), true)).await;
        }
        awaiting.settled();
        record.in_session(lease.key().map(|k| k.session_id()));
        // When the last answer came (read where it came: one clock reading fewer), or now.
        let answered_at = match &result {
            Ok(r) => r.ended,
            Err(_) => Instant::now(),
        };
        let rtt = answered_at.saturating_duration_since(record.started);
        let answered = match result {
            Ok(r) => r,
            Err(SendFailure::Transport(error)) => {
                record.finish(AttemptOutcome::Failed(error.clone()), rtt, 0);
                peer.rtt.record_failure();
                return Err(ResolveError::Transport {
                    sites_asked: 1,
                    server: addr,
                    kind,
                    error,
                });
            }
            Err(SendFailure::Authentication(error)) => {
                let rejection = Rejection::Authentication(error);
                record.finish(AttemptOutcome::Rejected(rejection.clone()), rtt, 0);
                return Err(rejection.into_error(addr, kind));
            }
        };
        let transmissions = answered.transmissions;
        // The request's own round trip (not the session setup, the waits for the session or
        // the answers to challenges, nor the sends presumed lost before the last one): what
        // the server's RTT learns, unless the transport estimated it from the same round trip
        // (UDP), whose estimate is taken instead.
        let answered_rtt = answered.rtt;
        let transport_srtt = answered.exchanged.srtt;
        let sampled_transmissions = transmissions.saturating_sub(answered.resent);
        let response = answered.exchanged.message;
        let continued = answered.exchanged.continued;
        if answered.challenged && authenticated_by(response.response_code()) {
            lease.authenticated();
        }
        drop(lease);
        let certified = match check_answer(&request, &response, server, addr, unix_now) {
            Ok(c) => c,
            Err(rejection) => {
                let outcome = AttemptOutcome::Rejected(rejection.clone());
                record.finish(outcome, rtt, transmissions);
                peer.rtt.record_failure();
                return Err(rejection.into_error(addr, kind));
            }
        };
        let code = response.response_code();
        record.finish(AttemptOutcome::Response(code), rtt, transmissions);
        if try_next_site(code) {
            // Busy, not responsible, failing: as useless as silence for site choice, so it is
            // penalised (a quick "busy" must not put the server first in line).
            peer.rtt.record_failure();
            return Err(ResolveError::Server {
                sites_asked: 1,
                server: Some(addr),
                code,
                message: error_text(&response),
            });
        }
        let first_wait = self.options.udp_retransmit.first().copied();
        peer.rtt.record_answer(
            answered_rtt,
            transport_srtt,
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

    /// The exchange options of one request: the resolver's, in `session` (`None`: outside
    /// any), with early loss detection when `loss_detection` gives the number of times the
    /// request was presumed lost before (the caller resends what is presumed lost), without
    /// when `None`.
    pub(super) fn exchange_options(
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
    pub(super) fn request_expiration(&self) -> u32 {
        expiration_from(self.clock.unix_now())
    }
}

/// The expiration of a request made at `unix_now`: 12 h later (saturating at the largest
/// `u32`).
fn expiration_from(unix_now: u64) -> u32 {
    u32::try_from(unix_now.saturating_add(REQUEST_LIFETIME_SECS)).unwrap_or(u32::MAX)
}

/// Who an exchange goes to: the server of a site (and its entry in the table), at one
/// address, over one transport.
#[derive(Clone, Copy)]
pub(super) struct Addressee<'a> {
    pub(super) site: &'a Site,
    pub(super) server: &'a ServerInfo,
    pub(super) peer: &'a Peer,
    pub(super) addr: SocketAddr,
    pub(super) kind: TransportKind,
    /// To an admin interface (administration: its challenges and session setup too), else
    /// to a query interface.
    pub(super) to_admin: bool,
}

impl Asker {
    /// One exchange, and (with `answer`) the answers to the server's challenges (402) as the
    /// resolver's identity: at most [`MAX_CHALLENGE_ROUNDS`] (as the reference client), each
    /// answer in an exchange of its own, in the same session as the request; the last
    /// answer's outcome is the request's.
    async fn exchange_answering(
        &self,
        to: Addressee<'_>,
        request: &Message,
        session: Option<Arc<SessionKey>>,
        answer: bool,
    ) -> Result<Answered, SendFailure> {
        // UDP waits for a place under the server's limit (the wait is not part of the RTT).
        // A query presumed lost by the transport (no answer within the server's loss
        // timeout: `ExchangeOptions::udp_loss_detection`) is sent again at once, under the
        // limit again, at most `MAX_EARLY_RESENDS` times; the last transmission waits out the
        // retransmission schedule. Administration requests are never sent again this way.
        let detecting = to.kind == TransportKind::Udp
            && self.options.udp_loss_detection
            && matches!(
                request.header.op_code,
                OpCode::Resolution | OpCode::GetSiteInfo
            );
        let mut resent = 0u32;
        let mut first_taken = None;
        let first = loop {
            // A resend is the same request to the limit: its losses are one event. The
            // request goes out as the place is taken: the permit's clock reading is its send
            // time. (With the answer's time below read once, two clock readings fewer per
            // request: about 150 instructions of the 24,000 of a resolution, BENCHMARKS §11.)
            let (permit, sent) = match to.kind {
                TransportKind::Udp => {
                    let p = to.peer.udp_permit().await;
                    let sent = p.taken();
                    let first = *first_taken.get_or_insert(sent);
                    (Some(p.taken_at(first)), sent)
                }
                _ => (None, Instant::now()),
            };
            // The transport's loss timeout doubles with each resend (`udp_loss_backoff`).
            let detect = (detecting && resent < MAX_EARLY_RESENDS).then_some(resent);
            let result = self
                .exchange_once(to, request, session.clone(), detect)
                .await;
            let ended = Instant::now();
            let rtt = ended.saturating_duration_since(sent);
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
                other => break (other, rtt, ended),
            }
        };
        let (first, rtt, ended) = first;
        let first = first.map_err(SendFailure::Transport)?;
        let mut answered = Answered {
            transmissions: first.transmissions.saturating_add(resent),
            resent,
            exchanged: first,
            rtt,
            ended,
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
                .map_err(SendFailure::Authentication)?;
            // Boxed, as in `attempt`: inline, the answer and this send would make every
            // request's future about 600 bytes larger.
            answered.exchanged = Box::pin(self.exchange_once(to, &answer, session.clone(), None))
                .await
                .map_err(SendFailure::Transport)?;
            answered.ended = Instant::now();
            answered.challenged = true;
        }
        Ok(answered)
    }

    /// The session a request to `server` goes in (`peers/session.rs`), set up first when
    /// one is due: over `kind`, certified and checked like any answer. When the setup fails
    /// in any way (an error code, unsigned or a key we do not know, silence, a broken
    /// connection, a protocol before 2.7) the server is asked without sessions for a while,
    /// beginning with this request.
    async fn open_session(&self, to: Addressee<'_>) -> Lease {
        let Addressee {
            site,
            server,
            addr,
            kind,
            ..
        } = to;
        let lease = to.peer.session.lease().await;
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
        let opened = match self.exchange_once(to, &setup, None, None).await {
            Ok(e) => check_answer(&setup, &e.message, server, addr, self.clock.unix_now())
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
    async fn exchange_once(
        &self,
        to: Addressee<'_>,
        request: &Message,
        session: Option<Arc<SessionKey>>,
        loss_detection: Option<u32>,
    ) -> Result<crate::transport::Exchanged, TransportError> {
        let Addressee {
            site,
            server,
            addr,
            kind,
            to_admin,
            ..
        } = to;
        let options = self.exchange_options(session, loss_detection);
        let options = &*options;
        if matches!(kind, TransportKind::Http | TransportKind::Https) {
            let target = super::super::site::http_target(&site.info, server, kind, to_admin)
                .ok_or(TransportError::Unsupported("no http interface"))?;
            return self.exchange.exchange_http(&target, request, options).await;
        }
        self.exchange.exchange(addr, kind, request, options).await
    }
}

/// An exchange and the answers to its challenges ([`Asker::exchange_answering`]).
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
    /// When the last answer came (after any challenge rounds).
    ended: Instant,
    /// True when a challenge was answered.
    challenged: bool,
}

/// Why [`Asker::exchange_answering`] got no answer.
enum SendFailure {
    /// An exchange failed.
    Transport(TransportError),
    /// A challenge could not be answered (its digest is not our request's, an unknown
    /// algorithm, a key that cannot sign).
    Authentication(AuthError),
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
    )
}

/// True for 505 SESSION_MESSAGE_REJECTED: the message was refused, unexecuted, for its
/// session counter (or its MAC); the session itself lives on.
fn counter_refused(answer: &Exchanged) -> bool {
    answer.message.response_code() == ResponseCode::SessionMessageRejected
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
const MAX_EARLY_RESENDS: u32 = 4;

/// Most challenges answered for one request (the reference client's limit).
const MAX_CHALLENGE_ROUNDS: u32 = 2;
