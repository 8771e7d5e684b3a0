//! The exchanges of one attempt: the request under the server's UDP limit, sent again at
//! once when presumed lost (early loss detection), the answers to the server's challenges
//! as the resolver's identity, and the setup of a session with the server.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::debug;

use crate::auth::DhKeyPair;
use crate::transport::{Exchanged, TransportError, TransportKind};
use crate::wire::{Message, OpCode, ProtocolVersion, ResponseCode, SessionKey};

use super::super::peers::Lease;
use super::attempt::Addressee;
use super::check::check_answer;
use super::Asker;

impl Asker {
    /// One exchange, and (with `answer`) the answers to the server's challenges (402) as the
    /// resolver's identity: at most [`MAX_CHALLENGE_ROUNDS`] (as the reference client), each
    /// answer in an exchange of its own, in the same session as the request; the last
    /// answer's outcome is the request's.
    pub(super) async fn exchange_answering(
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
        let (first, rtt) = loop {
            // A resend is the same request to the limit: its losses are one event.
            let permit = match to.kind {
                TransportKind::Udp => {
                    let p = to.peer.udp_permit().await;
                    let first = *first_taken.get_or_insert(p.taken());
                    Some(p.taken_at(first))
                }
                _ => None,
            };
            let sent = Instant::now();
            // The transport's loss timeout doubles with each resend (`udp_loss_backoff`).
            let detect = (detecting && resent < MAX_EARLY_RESENDS).then_some(resent);
            let result = self
                .exchange_once(to, request, session.clone(), detect)
                .await;
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
            answered.exchanged = Box::pin(self.exchange_once(to, &answer, session.clone(), None))
                .await
                .map_err(SendFailure::Transport)?;
            answered.challenged = true;
        }
        Ok(answered)
    }

    /// The session a request to `server` goes in (`peers/session.rs`), set up first when
    /// one is due: over `kind`, certified and checked like any answer. When the setup fails
    /// in any way (an error code, unsigned or a key we do not know, silence, a broken
    /// connection, a protocol before 2.7) the server is asked without sessions for a while,
    /// beginning with this request.
    pub(super) async fn open_session(&self, to: Addressee<'_>) -> Lease {
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
        #[cfg(feature = "http")]
        if matches!(kind, TransportKind::Http | TransportKind::Https) {
            let target = super::super::locate::http_target(&site.info, server, kind, to_admin)
                .ok_or(TransportError::Unsupported("no http interface"))?;
            return self.exchange.exchange_http(&target, request, options).await;
        }
        let _ = (site, server, to_admin);
        self.exchange.exchange(addr, kind, request, options).await
    }
}

/// An exchange and the answers to its challenges ([`Asker::exchange_answering`]).
pub(super) struct Answered {
    /// The last answer (the outcome of the request).
    pub(super) exchanged: Exchanged,
    /// Transmissions of the request itself (the sends of those presumed lost included).
    pub(super) transmissions: u32,
    /// Of them, the sends presumed lost and sent again under a new request id.
    pub(super) resent: u32,
    /// Round trip of the last exchange of the request (its first transmission to the
    /// answer): a sample when that exchange took one transmission.
    pub(super) rtt: Duration,
    /// True when a challenge was answered.
    pub(super) challenged: bool,
}

/// Why [`Asker::exchange_answering`] got no answer.
pub(super) enum SendFailure {
    /// An exchange failed.
    Transport(TransportError),
    /// A challenge could not be answered (its digest is not our request's, an unknown
    /// algorithm, a key that cannot sign).
    Authentication(String),
}

/// True when the answer is a challenge.
pub(super) fn challenged(answer: &Exchanged) -> bool {
    answer.message.response_code() == ResponseCode::AuthenticationNeeded
}

/// True for the codes of a server that no longer knows the session the request came in.
pub(super) fn session_lost(answer: &Exchanged) -> bool {
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
pub(super) fn authenticated_by(code: ResponseCode) -> bool {
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
