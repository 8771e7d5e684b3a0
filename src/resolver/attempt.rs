//! One attempt at one site: the server the hash picks, UDP then TCP on that server
//! (PROTOCOL.md §8.4), and the checks every answer must pass (expiry, request digest,
//! signature; §9.1) before it counts.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;
use tracing::debug;

use crate::transport::{TransportError, TransportKind};
use crate::wire::signature::check_credential_type;
use crate::wire::{
    verify_message, Body, Message, OpFlags, ProtocolVersion, ResponseCode, ServerInfo,
};

use super::error::{ProtocolViolation, ResolveError, SignatureFailure};
use super::record::{Hop, HopOutcome};
use super::selection::srtt_key;
use super::sites::{query_addr, Site};
use super::state::{Ctx, Inner};

/// What to send (the parts that do not depend on the site).
#[derive(Debug, Clone)]
pub struct RequestSpec {
    /// The handle asked for, as text.
    pub handle: String,
    /// Index filter.
    pub indexes: Vec<u32>,
    /// Type filter.
    pub types: Vec<Bytes>,
    /// Op flags.
    pub flags: OpFlags,
    /// RecursionCount header field (1 for prefix lookups, like the reference client).
    pub recursion_count: u8,
}

impl RequestSpec {
    /// True when CT is set.
    pub fn certify(&self) -> bool {
        self.flags.contains(OpFlags::CT)
    }
}

/// An acceptable answer from one server.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The response.
    pub msg: Message,
    /// The server that sent it.
    pub server: SocketAddr,
    /// Over which transport.
    pub kind: TransportKind,
    /// The site it belongs to.
    pub site: Site,
    /// True when its signature was verified.
    pub certified: bool,
}

impl Answer {
    /// The response code as the reference library reads it: a 303 in a message below
    /// version 2.5 is SERVER_BACKUP (PROTOCOL.md §3.1).
    pub fn code(&self) -> ResponseCode {
        self.msg.response_code()
    }

    /// The error text of an error body (empty otherwise).
    pub fn error_text(&self) -> String {
        match &self.msg.body {
            Body::Error(e) => String::from_utf8_lossy(&e.message).into_owned(),
            _ => String::new(),
        }
    }
}

/// Response codes after which the next site is tried.
pub fn try_next_site(code: ResponseCode) -> bool {
    matches!(
        code,
        ResponseCode::ServerNotResponsible
            | ResponseCode::ServerBusy
            | ResponseCode::ServerBackup
            | ResponseCode::Error
    )
}

/// Records an attempt as running while it runs, and as cancelled when dropped before it
/// finished.
struct HopGuard<'a> {
    ctx: &'a Ctx,
    token: u64,
    open: bool,
    started: Instant,
}

impl<'a> HopGuard<'a> {
    /// Records `hop` as running (the hop itself is kept in the trace, not copied).
    fn start(ctx: &'a Ctx, hop: Hop) -> Self {
        let started = Instant::now();
        let token = ctx.start_hop(hop, started);
        Self {
            ctx,
            token,
            open: true,
            started,
        }
    }
}

impl HopGuard<'_> {
    /// Records how the attempt ended, `rtt` after it started, after `transmissions`
    /// transmissions.
    fn finish(&mut self, outcome: HopOutcome, rtt: Duration, transmissions: u32) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        self.ctx.end_hop(self.token, |hop| {
            hop.rtt = rtt;
            hop.transmissions = transmissions;
            debug!(
                server = %hop.server,
                transport = ?hop.transport,
                attempt = hop.attempt,
                rtt_ms = rtt.as_secs_f64() * 1000.0,
                transmissions,
                outcome = ?outcome,
                handle = %hop.handle,
                "attempt"
            );
            hop.outcome = outcome;
        });
    }
}

impl Drop for HopGuard<'_> {
    fn drop(&mut self) {
        let rtt = self.started.elapsed();
        self.finish(HopOutcome::Cancelled, rtt, 0);
    }
}

impl Inner {
    /// Builds the request for `site`: the site's version (≤ 2.11), suggesting 2.11, its serial,
    /// a fresh request id, expiration now + 12 h.
    pub(crate) fn build_request(&self, site: &Site, spec: &RequestSpec) -> Message {
        let mut m = Message::resolution_request(
            Bytes::from(spec.handle.clone()),
            spec.indexes.clone(),
            spec.types.clone(),
            self.request_id(),
            self.request_expiration(),
        );
        m.header.flags = spec.flags;
        m.header.site_info_serial = site.request_serial;
        m.header.recursion_count = spec.recursion_count;
        m.envelope.version = site.request_version();
        m.envelope.suggested = ProtocolVersion::V2_11;
        m
    }

    /// Asks `site` (the server its hash picks for the handle): UDP first when preferred and
    /// offered, TCP on the same server when UDP times out, is busy or the request does not fit.
    pub(crate) async fn ask_site(
        &self,
        site: &Site,
        spec: &RequestSpec,
        ctx: &Ctx,
    ) -> Result<Answer, ResolveError> {
        let server =
            site.server_for(spec.handle.as_bytes())
                .ok_or_else(|| ResolveError::Protocol {
                    sites_asked: 1,
                    server: unspecified(),
                    violation: ProtocolViolation::NoUsableServer,
                })?;
        self.ask_on(site, server, spec, ctx).await
    }

    /// Asks one given server of `site`: UDP then TCP, as [`Inner::ask_site`] does.
    pub(crate) async fn ask_on(
        &self,
        site: &Site,
        server: &ServerInfo,
        spec: &RequestSpec,
        ctx: &Ctx,
    ) -> Result<Answer, ResolveError> {
        let mut last = None;
        for &kind in self.config.transport.kinds() {
            let Some(addr) = query_addr(server, kind) else {
                continue;
            };
            match self.ask_server(site, server, addr, kind, spec, ctx).await {
                Ok(answer) => return Ok(answer),
                Err(e) => {
                    let fallback = kind == TransportKind::Udp
                        && matches!(&e, ResolveError::Transport { error, .. } if udp_falls_back(error));
                    if !fallback {
                        return Err(e);
                    }
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or(ResolveError::Protocol {
            sites_asked: 1,
            server: SocketAddr::new(server.address, 0),
            violation: ProtocolViolation::NoUsableServer,
        }))
    }

    async fn ask_server(
        &self,
        site: &Site,
        server: &ServerInfo,
        addr: SocketAddr,
        kind: TransportKind,
        spec: &RequestSpec,
        ctx: &Ctx,
    ) -> Result<Answer, ResolveError> {
        let request = self.build_request(site, spec);
        let mut guard = HopGuard::start(
            ctx,
            Hop {
                handle: spec.handle.clone(),
                server: addr,
                transport: kind,
                attempt: ctx.next_attempt(),
                rtt: Duration::ZERO,
                transmissions: 0,
                outcome: HopOutcome::Cancelled,
            },
        );
        let result = self
            .exchange
            .exchange(addr, kind, &request, &self.options)
            .await;
        // One clock read for the trace and the SRTT.
        let answered_at = Instant::now();
        let rtt = answered_at.saturating_duration_since(guard.started);
        let (response, transmissions) = match result {
            Ok(r) => (r.message, r.transmissions),
            Err(error) => {
                guard.finish(HopOutcome::Failed(error.to_string()), rtt, 0);
                self.srtt.record_failure(srtt_key(server));
                return Err(ResolveError::Transport {
                    sites_asked: 1,
                    server: addr,
                    kind,
                    error,
                });
            }
        };
        let certified = match self.check_response(&request, &response, server, addr) {
            Ok(c) => c,
            Err(e) => {
                guard.finish(HopOutcome::Rejected(e.to_string()), rtt, transmissions);
                self.srtt.record_failure(srtt_key(server));
                return Err(e);
            }
        };
        let code = response.response_code();
        if try_next_site(code) {
            // Busy, not responsible, failing: as useless as silence for site choice, so it is
            // penalised (a quick "busy" must not put the server first in line).
            self.srtt.record_failure(srtt_key(server));
        } else {
            let first_wait = self.options.udp_retransmit.first().copied();
            self.srtt.record_answer(
                srtt_key(server),
                rtt,
                transmissions,
                first_wait.unwrap_or_default(),
                answered_at,
            );
        }
        guard.finish(HopOutcome::Response(code), rtt, transmissions);
        let answer = Answer {
            msg: response,
            server: addr,
            kind,
            site: site.clone(),
            certified,
        };
        if try_next_site(code) {
            return Err(ResolveError::Server {
                sites_asked: 1,
                server: addr,
                code,
                message: answer.error_text(),
            });
        }
        Ok(answer)
    }

    /// Checks an answer: op code, expiry, request digest when asked, signature when asked.
    /// Returns whether the signature was verified.
    fn check_response(
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

/// True when a UDP failure sends the request over TCP to the same server (PROTOCOL.md §8.4):
/// no answer in time, too big for a datagram, or the UDP side is saturated.
pub(crate) fn udp_falls_back(error: &TransportError) -> bool {
    matches!(
        error,
        TransportError::Timeout | TransportError::TooLargeForUdp | TransportError::Busy
    )
}

fn unspecified() -> SocketAddr {
    SocketAddr::from(([0, 0, 0, 0], 0))
}
