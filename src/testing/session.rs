//! The test server's sessions, with the reference server's rules as the captures show them
//! (captures-auth `session_*`, PROTOCOL.md §10):
//!
//! - a session setup (op code 400, Diffie-Hellman, mode 4) gets a session id from the same
//!   counter as challenges, the server's DH key and AES in a signed answer;
//! - a request with the session id and an `HS_MAC` credential must verify under the session
//!   key (else 505 SESSION_MESSAGE_REJECTED); an unknown or expired session is 500
//!   SESSION_TIMEOUT; an encrypted request is decrypted first;
//! - a challenge to a request in a session carries the session's id, and once its answer
//!   verifies the session is authenticated as that identity: later requests in it are not
//!   challenged (their permissions are still checked);
//! - an answer in a session that carries a value the public may not read is encrypted;
//! - each session keeps the last [`COUNTER_WINDOW`] session counters it accepted, as the
//!   reference's `SessionInfo` does: a counter already in that window, or one at or below
//!   its oldest (lowest) once the window is full, is answered 505 SESSION_MESSAGE_REJECTED
//!   (`Duplicate session counter N in session S`, or `... too old ...`) and not executed.
//!
//! Not done: an encrypted request that comes in several UDP datagrams (administration goes
//! over TCP, and a resolution request carries no values, so none is encrypted).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;

use crate::auth::{answer_setup, DhKeyPair};
use crate::wire::credential::HS_MAC;
use crate::wire::{carries_restricted_values, open_message};
use crate::wire::{
    Body, Envelope, ErrorBody, Limits, Message, Reader, ResponseCode, SessionKey,
    SessionSetupResponse, ValueReference,
};

/// Most sessions held at once; the oldest goes first.
const MAX_SESSIONS: usize = 4096;
/// Longest a session lives, whatever the client asked.
const MAX_SESSION_LIFETIME: Duration = Duration::from_secs(86_400);
/// How many of a session's latest counters the server remembers (the reference's 200).
pub(crate) const COUNTER_WINDOW: usize = 200;

/// One open session.
pub(crate) struct ServerSession {
    key: SessionKey,
    authenticated: Mutex<Option<ValueReference>>,
    expires: Instant,
    /// The last [`COUNTER_WINDOW`] counters accepted (the highest ones: the lowest leaves
    /// first).
    counters: Mutex<std::collections::BTreeSet<u32>>,
}

impl ServerSession {
    /// The identity a challenge answered in this session proved, if any.
    pub(crate) fn authenticated(&self) -> Option<ValueReference> {
        self.authenticated.lock().clone()
    }

    /// The session id.
    pub(crate) fn id(&self) -> u32 {
        self.key.session_id()
    }

    /// Takes `counter` into the window, or why not: seen already, or too old (at or below
    /// the lowest of a full window).
    fn accept_counter(&self, counter: u32) -> Result<(), String> {
        let mut seen = self.counters.lock();
        let id = self.id();
        if seen.contains(&counter) {
            return Err(format!(
                "Duplicate session counter {counter} in session {id}"
            ));
        }
        if seen.len() >= COUNTER_WINDOW && seen.first().is_some_and(|&low| counter <= low) {
            return Err(format!("Session counter {counter} too old in session {id}"));
        }
        seen.insert(counter);
        if seen.len() > COUNTER_WINDOW {
            seen.pop_first();
        }
        Ok(())
    }
}

/// The sessions a server holds.
#[derive(Default)]
pub(crate) struct ServerSessions {
    table: Mutex<HashMap<u32, Arc<ServerSession>>>,
    /// Session setups answered (for tests).
    setups: std::sync::atomic::AtomicU64,
    /// Answers encrypted (for tests).
    encrypted: std::sync::atomic::AtomicU64,
    /// Encrypted requests opened (for tests).
    opened: std::sync::atomic::AtomicU64,
}

/// How a request stands towards the sessions.
pub(crate) enum InSession {
    /// Not sent in a session.
    No,
    /// MACed in this session, and the MAC verifies.
    Verified(Arc<ServerSession>),
    /// Claims a session and fails: answer with this code and message.
    Rejected(ResponseCode, String),
}

impl ServerSessions {
    /// Session setups answered so far.
    pub(crate) fn setups(&self) -> u64 {
        self.setups.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Answers encrypted so far.
    pub(crate) fn encrypted(&self) -> u64 {
        self.encrypted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Encrypted requests opened so far.
    pub(crate) fn opened(&self) -> u64 {
        self.opened.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Forgets every session (as a server restart would).
    pub(crate) fn clear(&self) {
        self.table.lock().clear();
    }

    fn get(&self, id: u32) -> Option<Arc<ServerSession>> {
        let mut t = self.table.lock();
        let s = t.get(&id)?.clone();
        if Instant::now() >= s.expires {
            t.remove(&id);
            return None;
        }
        Some(s)
    }

    /// Decodes a request frame (envelope ‖ message), decrypting it with its session's key
    /// when the envelope has EC.
    pub(crate) fn decode(&self, frame: Bytes, limits: &Limits) -> Result<Message, String> {
        let mut r = Reader::new(frame);
        let envelope = Envelope::decode(&mut r).map_err(|e| e.to_string())?;
        let session = if envelope.encrypted {
            self.get(envelope.session_id)
        } else {
            None
        };
        let m = open_message(session.as_ref().map(|s| &s.key), envelope, r.rest(), limits)
            .map_err(|e| e.to_string())?;
        if envelope.encrypted {
            self.opened
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(m)
    }

    /// Where `request` stands: a MACed request must verify in a live session.
    pub(crate) fn check(&self, request: &Message) -> InSession {
        let maced = request
            .credential
            .as_deref()
            .is_some_and(|c| c.credential_type.as_ref() == HS_MAC);
        if !maced {
            return InSession::No;
        }
        let Some(session) = self.get(request.envelope.session_id) else {
            return InSession::Rejected(ResponseCode::SessionTimeout, String::new());
        };
        if !session.key.verify_mac(request) {
            return InSession::Rejected(
                ResponseCode::SessionMessageRejected,
                "Message authentication failed".into(),
            );
        }
        // The counter travels in the MAC credential's signer index.
        let counter = request.credential.as_deref().map_or(0, |c| c.signer.index);
        match session.accept_counter(counter) {
            Ok(()) => InSession::Verified(session),
            Err(why) => InSession::Rejected(ResponseCode::SessionMessageRejected, why),
        }
    }

    /// The session an answer to a challenge came in (it carries the session id, no MAC): the
    /// answer to the challenged request is encrypted in it, as the reference server does.
    pub(crate) fn of_answer(&self, request: &Message) -> Option<Arc<ServerSession>> {
        match request.body {
            Body::ChallengeAnswer(_) => self.get(request.envelope.session_id),
            _ => None,
        }
    }

    /// Marks session `id` (if it is one) as authenticated as `identity`.
    pub(crate) fn authenticate(&self, id: u32, identity: ValueReference) {
        if let Some(s) = self.get(id) {
            *s.authenticated.lock() = Some(identity);
        }
    }

    /// The answer to a session setup request, the session opened under `id`.
    pub(crate) fn setup(&self, request: &Message, id: u32) -> Message {
        let Body::SessionSetupRequest(body) = &request.body else {
            return refuse(request, "not a session setup request");
        };
        let server = DhKeyPair::generate();
        let (data, key) = match answer_setup(body, &server) {
            Ok(x) => x,
            Err(e) => return refuse(request, &e.to_string()),
        };
        let lifetime = Duration::from_secs(u64::from(body.timeout)).min(MAX_SESSION_LIFETIME);
        let session = Arc::new(ServerSession {
            key: SessionKey::new(id, key),
            authenticated: Mutex::new(None),
            expires: Instant::now() + lifetime,
            counters: Mutex::default(),
        });
        {
            let mut t = self.table.lock();
            let now = Instant::now();
            t.retain(|_, s| s.expires > now);
            if t.len() >= MAX_SESSIONS {
                if let Some(oldest) = t.iter().min_by_key(|(_, s)| s.expires).map(|(k, _)| *k) {
                    t.remove(&oldest);
                }
            }
            t.insert(id, session);
        }
        self.setups
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut m = Message::response_to(
            request,
            ResponseCode::Success,
            Body::SessionSetupResponse(SessionSetupResponse {
                key_exchange_mode: body.key_exchange_mode,
                data,
                trailer: Bytes::from_static(crate::wire::body::SESSION_SETUP_TRAILER),
            }),
        );
        m.envelope.session_id = id;
        m
    }
}

fn refuse(request: &Message, text: &str) -> Message {
    Message::response_to(
        request,
        ResponseCode::InvalidSessionSetupRequest,
        Body::Error(ErrorBody::new(Bytes::copy_from_slice(text.as_bytes()))),
    )
}

/// Encrypts the answer in `out` under `session` when it is one message that carries a value
/// the public may not read (a list of handles, several messages, carries none).
pub(crate) fn encrypt_answer(
    sessions: &ServerSessions,
    session: &ServerSession,
    out: &mut BytesMut,
    limits: &Limits,
) {
    let Ok(m) = Message::decode(Bytes::copy_from_slice(out), limits) else {
        return;
    };
    if !carries_restricted_values(&m) {
        return;
    }
    match session.key.seal_answer(&m, &rand::random()) {
        Ok(sealed) => {
            out.clear();
            out.extend_from_slice(&sealed);
            sessions
                .encrypted
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Err(e) => tracing::debug!(error = %e, "answer left unencrypted"),
    }
}
