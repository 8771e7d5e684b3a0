//! One attempt: a request to one server at one address over one transport. It takes the
//! server's session when the request needs the identity, records the attempt in the
//! resolution's trace, runs the exchange (`send.rs`), checks the answer (`check.rs`) and
//! tells the server's RTT what it learned.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::transport::{ExchangeOptions, TransportKind};
use crate::wire::{OpFlags, ServerInfo, SessionKey};

use super::super::error::ResolveError;
use super::super::locate::Site;
use super::super::peers::{Lease, Peer};
use super::super::record::{Attempt, AttemptOutcome};
use super::super::settings::REQUEST_LIFETIME_SECS;
use super::super::support::trace::{Recorded, Trace};
use super::check::check_answer;
use super::request::{error_text, try_next_site, Answer, RequestSpec};
use super::send::{authenticated_by, challenged, session_lost, SendFailure};
use super::Asker;

impl Asker {
    /// One exchange with one server over one transport, recorded in the trace and in what
    /// the resolver knows of the server (its RTT); the answer counts only when it passes the checks and is not a "try the next
    /// site" code.
    pub(super) async fn attempt(
        &self,
        site: &Site,
        server: &ServerInfo,
        peer: &Peer,
        addr: SocketAddr,
        kind: TransportKind,
        spec: &RequestSpec,
        trace: &Trace,
    ) -> Result<Answer, ResolveError> {
        let request = spec.to_message(site, self.request_expiration());
        // Administration goes in a session with the server when it can (`peers/session.rs`;
        // the setup, if one is due, comes first); a resolution that clears public-only goes
        // in the server's authenticated session if there is one, else without: if the
        // server challenges it, it is sent again in a session (as the reference client
        // does) rather than answered outside.
        let to = Addressee {
            site,
            server,
            peer,
            addr,
            kind,
            to_admin: spec.to_admin_interface(),
        };
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
        let mut result = self
            .exchange_answering(to, &request, lease.key(), !defer)
            .await;
        if defer && result.as_ref().is_ok_and(|r| challenged(&r.exchanged)) {
            lease = Box::pin(self.open_session(to)).await;
            result = Box::pin(self.exchange_answering(to, &request, lease.key(), true)).await;
        }
        if lease.key().is_some() && result.as_ref().is_ok_and(|r| session_lost(&r.exchanged)) {
            // The server no longer knows the session (restarted, expired): once more in a
            // new one.
            Box::pin(lease.lost()).await;
            lease = Box::pin(self.open_session(to)).await;
            result = Box::pin(self.exchange_answering(to, &request, lease.key(), true)).await;
        }
        record.in_session(lease.key().map(|k| k.session_id()));
        let answered_at = Instant::now();
        let rtt = answered_at.saturating_duration_since(record.started);
        let answered = match result {
            Ok(r) => r,
            Err(SendFailure::Transport(error)) => {
                record.finish(AttemptOutcome::Failed(error.to_string()), rtt, 0);
                peer.rtt.record_failure();
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
        let certified = match check_answer(&request, &response, server, addr, self.clock.unix_now())
        {
            Ok(c) => c,
            Err(e) => {
                record.finish(AttemptOutcome::Rejected(e.to_string()), rtt, transmissions);
                peer.rtt.record_failure();
                return Err(e);
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
        u32::try_from(self.clock.unix_now().saturating_add(REQUEST_LIFETIME_SECS))
            .unwrap_or(u32::MAX)
    }
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
