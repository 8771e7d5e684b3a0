//! Request handling, whatever side a request came in on: the server's shared [`State`]
//! (store, identities and sessions, faults, sockets, counters), the answer to one request,
//! and the `Backend` the HTTP side serves through.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use parking_lot::{Mutex, RwLock};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

use crate::testing::admin::AuthState;
use crate::testing::faults::{FaultState, Faults};
use crate::testing::key::TestKey;
use crate::testing::respond::{Responder, SiteRole};
use crate::testing::session::{encrypt_answer, InSession};
use crate::testing::store::Store;
use crate::testing::uri_res::Urns;
use crate::wire::{
    Body, ErrorBody, InterfaceType, Limits, Message, OpCode, Protocol, Reassembler, ResponseCode,
};

pub(crate) struct State {
    pub(crate) store: Arc<Store>,
    pub(crate) auth: AuthState,
    pub(crate) key: TestKey,
    pub(crate) limits: Limits,
    pub(crate) addr: SocketAddr,
    /// The HTTP listener's address, when there is one.
    pub(crate) http_addr: Option<SocketAddr>,
    /// The HTTPS listener's address, when there is one.
    pub(crate) https_addr: Option<SocketAddr>,
    /// How the server's own record lists the HTTP and HTTPS sides (`None`: not at all).
    pub(crate) http_kind: Option<InterfaceType>,
    pub(crate) server_id: u32,
    pub(crate) faults: FaultState,
    pub(crate) urns: RwLock<Urns>,
    pub(crate) role: RwLock<Arc<SiteRole>>,
    pub(crate) udp: Arc<UdpSocket>,
    pub(crate) spoof: Arc<UdpSocket>,
    /// Fragmented requests being collected, one reassembler per client address: two clients
    /// that happen to use the same request id must not mix their fragments.
    pub(crate) reassemblers: Mutex<HashMap<SocketAddr, Reassembler>>,
    pub(crate) udp_requests: AtomicU64,
    pub(crate) udp_dropped: AtomicU64,
    pub(crate) tcp_requests: AtomicU64,
    pub(crate) http_requests: AtomicU64,
    /// Answers held back by the `delay` fault (UDP and TCP) now, and the most at once.
    pub(crate) delayed: Held,
    /// Cancelled when the server is dropped: stops the tasks spawned per TCP connection and
    /// per delayed answer too, so a dropped server is silent at once.
    pub(crate) stop: CancellationToken,
}

/// A count of requests being held, and the most held at once.
#[derive(Debug, Default)]
pub(crate) struct Held {
    now: AtomicU64,
    most: AtomicU64,
}

impl Held {
    /// One more held until the guard is dropped.
    pub(crate) fn hold(&self) -> Holding<'_> {
        let now = self.now.fetch_add(1, Ordering::Relaxed) + 1;
        self.most.fetch_max(now, Ordering::Relaxed);
        Holding(self)
    }

    /// The most held at once since the last reset.
    pub(crate) fn most(&self) -> u64 {
        self.most.load(Ordering::Relaxed)
    }

    /// Forgets the most (those held now count again from here).
    pub(crate) fn reset(&self) {
        self.most
            .store(self.now.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// One request held ([`Held::hold`]).
pub(crate) struct Holding<'a>(&'a Held);

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::Relaxed);
    }
}

impl State {
    pub(crate) fn role(&self) -> Arc<SiteRole> {
        self.role.read().clone()
    }

    /// Writes the answer to `request` into `out` (UDP, TCP and HTTP alike); in a session,
    /// checks its MAC first and encrypts an answer with non-public values.
    pub(crate) fn respond(&self, request: &Message, out: &mut BytesMut) {
        let session = match self.auth.sessions.check(request) {
            InSession::No => None,
            InSession::Verified(s) if self.faults.refuse_session_message() => {
                let counter = request.credential.as_deref().map_or(0, |c| c.signer.index);
                let why = format!("Duplicate session counter {counter} in session {}", s.id());
                out.clear();
                let body = Body::Error(ErrorBody::new(Bytes::from(why.into_bytes())));
                let answer =
                    Message::response_to(request, ResponseCode::SessionMessageRejected, body);
                if let Ok(b) = answer.encode() {
                    out.extend_from_slice(&b);
                }
                return;
            }
            InSession::Verified(s) => Some(s),
            InSession::Rejected(code, why) => {
                out.clear();
                let body = Body::Error(ErrorBody::new(bytes::Bytes::from(why.into_bytes())));
                let answer = Message::response_to(request, code, body);
                if let Ok(b) = answer.encode() {
                    out.extend_from_slice(&b);
                }
                return;
            }
        };
        let role = self.role();
        Responder {
            store: &self.store,
            role: &role,
            key: &self.key,
            auth: &self.auth,
            limits: &self.limits,
            session: session.as_deref(),
        }
        .respond(request, out);
        if let Some(s) = session.or_else(|| self.auth.sessions.of_answer(request)) {
            encrypt_answer(&self.auth.sessions, &s, out, &self.limits);
        }
    }

    /// Why a native request over HTTP (HTTPS when `secure`) is refused, as the reference
    /// refuses it, or `None` when it is taken. The reference source: `NativeServlet`
    /// (net.handle.server.servletcontainer.servlets) takes the kinds of request its server's
    /// own record lists the HTTP interface for (for HTTP and HTTPS alike) and the HTTPS
    /// interface for (for HTTPS), and asks `Interface.canProcessMsg` (net.handle.hdllib)
    /// for the text; the answer is an error of code 4 (PROTOCOL_ERROR) to the request, sent
    /// with HTTP status 200 as every native answer.
    pub(crate) fn http_refusal(&self, request: &Message, secure: bool) -> Option<&'static str> {
        let role = self.role();
        let own = role.site.servers.get(role.index)?;
        let (mut query, mut admin) = (false, false);
        for i in &own.interfaces {
            let counts = i.protocol == Protocol::Http || (secure && i.protocol == Protocol::Https);
            query |= counts && i.kind.allows_query();
            admin |= counts && i.kind.allows_admin();
        }
        match request.header.op_code {
            OpCode::GetNextTxnId
            | OpCode::HomeNa
            | OpCode::UnhomeNa
            | OpCode::ListHomedNas
            | OpCode::BackupServer
            | OpCode::CreateHandle
            | OpCode::DeleteHandle
            | OpCode::AddValue
            | OpCode::RemoveValue
            | OpCode::ModifyValue
            | OpCode::ListHandles
            | OpCode::RetrieveTxnLog
            | OpCode::DumpHandles
                if !admin =>
            {
                Some("Received admin request on non-admin interface")
            }
            OpCode::Resolution if !query => Some("Received query request on non-query interface"),
            _ => None,
        }
    }

    /// Decodes a request frame (envelope ‖ message), decrypted when it is encrypted in a
    /// session.
    pub(crate) fn decode_request(&self, frame: Bytes) -> Result<Message, String> {
        self.auth.sessions.decode(frame, &self.limits)
    }
}

impl crate::testing::http::Backend for State {
    fn count(&self) {
        self.http_requests.fetch_add(1, Ordering::Relaxed);
    }

    fn faults(&self) -> Option<Faults> {
        self.faults.current()
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    fn respond(&self, request: &Message, out: &mut BytesMut) {
        State::respond(self, request, out);
    }

    fn decode(&self, frame: Bytes) -> Result<Message, String> {
        self.decode_request(frame)
    }

    fn refuse(&self, request: &Message, secure: bool, out: &mut BytesMut) -> bool {
        let Some(why) = self.http_refusal(request, secure) else {
            return false;
        };
        out.clear();
        let body = Body::Error(ErrorBody::new(Bytes::from_static(why.as_bytes())));
        let mut answer = Message::response_to(request, ResponseCode::ProtocolError, body);
        answer.header.site_info_serial = self.role().site.serial;
        if let Ok(b) = answer.encode() {
            out.extend_from_slice(&b);
        }
        true
    }

    fn rest(&self, target: &str) -> crate::testing::http_reply::HttpReply {
        crate::testing::rest::respond_or_throttle(&self.store, &self.faults, target)
    }

    fn rest_write(
        &self,
        write: &crate::testing::rest_write::RestWrite<'_>,
    ) -> crate::testing::http_reply::HttpReply {
        crate::testing::rest_write::respond(&self.store, &self.limits, write)
    }

    fn uri_res(&self, target: &str) -> crate::testing::http_reply::HttpReply {
        crate::testing::uri_res::respond(&self.urns.read(), target)
    }

    fn stop(&self) -> CancellationToken {
        self.stop.clone()
    }
}
