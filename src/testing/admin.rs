//! The test server's authentication and administration, with the rules and codes the
//! reference server shows (captures-auth, PROTOCOL.md §10):
//!
//! - a request that needs authentication (a PO-cleared resolution reaching a non-public
//!   value, any admin request) gets a 402: RD set with the request digest, a nonce, a
//!   server-assigned session id, and the request's flags without OVRW and MINT; a create of
//!   an existing handle (without OVRW) gets 101 at once, unchallenged;
//! - the answer (op code 200) is matched to its challenge by session id (60 s at most, as the
//!   reference's `max_auth_time`); then, in the reference server's order: 100 for a handle
//!   that does not exist (delete, add, modify, remove), 400 INVALID_ADMIN when the identity
//!   is in no HS_ADMIN value that decides or lacks the permission (the reference's
//!   `authenticateUser` answers 400 for both), 403 when its key value is missing or the
//!   answer does not verify ([`crate::auth::verify_answer`]). What decides: the prefix
//!   handle's HS_ADMIN values for a create and a list (`0.NA/<prefix>`, as the reference's
//!   `getNAAdminValues`, called from its create and list alone), the handle's own for every
//!   other change; a server administrator may do anything;
//! - then the original request is answered, with the answer's request id: the resolution
//!   with every value; create (MINT appends a random lower-case UUID; OVRW replaces) with the
//!   created handle; add (201 "Index conflict for N"; with OVRW a value at a taken index
//!   replaces the one there, which also needs the modify permission), modify and remove (200
//!   for a missing index), delete; list handles in messages of at most 50 handles, CN on all but the last;
//!   home / unhome (300 / 301) by a server administrator only (400 otherwise);
//! - a change to a handle whose prefix the server does not serve gets 301 ("That prefix
//!   doesn't live here") before any challenge, as from the reference server.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use parking_lot::Mutex;

use super::session::ServerSessions;
use super::store::Store;
use crate::auth::{verify_answer, Challenge};
use crate::wire::{
    AdminPermissions, AdminRecord, Body, ChallengeAnswer, ChallengeBody, DigestAlgorithm,
    ErrorBody, HandleValue, Limits, Message, OpCode, OpFlags, RequestDigest, ResolutionResponse,
    ResponseCode, ValueReference,
};

/// How long a challenge waits for its answer (the reference's `max_auth_time` default).
pub(crate) const MAX_AUTH_TIME: Duration = Duration::from_secs(60);
/// Challenges remembered at once; the oldest goes first.
const MAX_PENDING: usize = 4096;
/// Handles in one list-handles message.
pub(crate) const LIST_CHUNK: usize = 50;

struct Pending {
    request: Message,
    challenge: Challenge,
    at: Instant,
}

/// The challenges a server has issued and not yet seen answered.
pub(crate) struct AuthState {
    pending: Mutex<HashMap<u32, Pending>>,
    next_session: AtomicU32,
    /// Open sessions (their ids come from the same counter as challenges').
    pub(crate) sessions: ServerSessions,
    /// Challenges issued (for tests).
    issued: std::sync::atomic::AtomicU64,
}

impl AuthState {
    pub(crate) fn new() -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            next_session: AtomicU32::new(1),
            sessions: ServerSessions::default(),
            issued: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Challenges issued so far.
    pub(crate) fn issued(&self) -> u64 {
        self.issued.load(Ordering::Relaxed)
    }

    /// A new session id (for a challenge or a session).
    pub(crate) fn next_id(&self) -> u32 {
        self.next_session.fetch_add(1, Ordering::Relaxed).max(1)
    }

    /// The 402 to `request`, remembered under the id of the session it came in, or a new one.
    pub(crate) fn challenge(&self, request: &Message, in_session: Option<u32>) -> Message {
        self.issued.fetch_add(1, Ordering::Relaxed);
        let session = in_session.unwrap_or_else(|| self.next_id());
        let nonce: [u8; 16] = rand::random();
        let digest = request.header_and_body().ok().and_then(|hb| {
            RequestDigest::compute(DigestAlgorithm::for_version(request.envelope.version), &hb)
        });
        let mut m = Message::response_to(
            request,
            ResponseCode::AuthenticationNeeded,
            Body::Challenge(ChallengeBody::new(Bytes::copy_from_slice(&nonce))),
        );
        m.header.flags = m
            .header
            .flags
            .without(OpFlags::OW)
            .without(OpFlags::MINT)
            .with(OpFlags::RD);
        m.request_digest = digest.clone();
        m.envelope.session_id = session;
        if let Some(d) = digest {
            let challenge = Challenge::issued(
                Bytes::copy_from_slice(&nonce),
                d,
                m.envelope.version,
                m.envelope.suggested,
                session,
            );
            let now = Instant::now();
            let mut pending = self.pending.lock();
            pending.retain(|_, p| now.duration_since(p.at) <= MAX_AUTH_TIME);
            if pending.len() >= MAX_PENDING {
                if let Some(oldest) = pending.iter().min_by_key(|(_, p)| p.at).map(|(k, _)| *k) {
                    pending.remove(&oldest);
                }
            }
            pending.insert(
                session,
                Pending {
                    request: request.clone(),
                    challenge,
                    at: now,
                },
            );
        }
        m
    }

    fn take(&self, session: u32) -> Option<Pending> {
        let p = self.pending.lock().remove(&session)?;
        (p.at.elapsed() <= MAX_AUTH_TIME).then_some(p)
    }
}

/// The answer to an admin request before any challenge: 101 for a create of an existing
/// handle without OVRW (the reference answers it at once), else `None` (challenge it).
pub(crate) fn precheck(store: &Store, request: &Message) -> Option<Message> {
    let changed = match &request.body {
        Body::CreateHandleRequest { handle, .. }
        | Body::DeleteHandleRequest { handle }
        | Body::AddValueRequest { handle, .. }
        | Body::ModifyValueRequest { handle, .. }
        | Body::RemoveValueRequest { handle, .. } => Some(handle),
        _ => None,
    };
    if let Some(handle) = changed {
        if !store.serves(handle) {
            return Some(Message::response_to(
                request,
                ResponseCode::ServerNotResponsible,
                Body::Error(ErrorBody::new(&b"That prefix doesn't live here"[..])),
            ));
        }
    }
    if let Body::CreateHandleRequest { handle, .. } = &request.body {
        let overwrite = request.header.flags.contains(OpFlags::OW);
        let mint = request.header.flags.contains(OpFlags::MINT);
        if !overwrite && !mint && store.get(handle).is_some() {
            return Some(Message::response_to(
                request,
                ResponseCode::HandleAlreadyExists,
                Body::Error(ErrorBody::default()),
            ));
        }
    }
    None
}

/// True for the requests this server challenges before it acts.
pub(crate) fn is_admin(op: OpCode) -> bool {
    matches!(
        op,
        OpCode::CreateHandle
            | OpCode::DeleteHandle
            | OpCode::AddValue
            | OpCode::ModifyValue
            | OpCode::RemoveValue
            | OpCode::ListHandles
            | OpCode::HomeNa
            | OpCode::UnhomeNa
    )
}

/// The answers to an op code 200: one message, or several for a list of handles.
pub(crate) fn answer(
    auth: &AuthState,
    store: &Store,
    limits: &Limits,
    answer_msg: &Message,
    answer: &ChallengeAnswer,
) -> Vec<Message> {
    let Some(pending) = auth.take(answer_msg.envelope.session_id) else {
        return vec![reply(
            answer_msg,
            answer_msg,
            ResponseCode::AuthenTimeout,
            Body::Error(ErrorBody::new(
                &b"No challenge pending for this session"[..],
            )),
        )];
    };
    let request = &pending.request;
    let fail = |code| {
        vec![reply(
            request,
            answer_msg,
            code,
            Body::Error(ErrorBody::default()),
        )]
    };
    if let Err(code) = authorize(store, limits, request, &answer.identity) {
        return fail(code);
    }
    let key_value = store.get(&answer.identity.handle).and_then(|h| {
        h.values
            .iter()
            .find(|v| v.index == answer.identity.index)
            .cloned()
    });
    let verified = key_value
        .map(|v| verify_answer(answer, &pending.challenge, &v, limits).is_ok())
        .unwrap_or(false);
    if !verified {
        return fail(ResponseCode::AuthenticationFailed);
    }
    // A challenge issued in a session authenticates the session.
    auth.sessions
        .authenticate(answer_msg.envelope.session_id, answer.identity.clone());
    perform(store, request, answer_msg)
}

/// The answers to `request` sent in a session authenticated as `identity`: no challenge, the
/// same permission checks.
pub(crate) fn perform_as(
    store: &Store,
    limits: &Limits,
    request: &Message,
    identity: &ValueReference,
) -> Vec<Message> {
    if let Err(code) = authorize(store, limits, request, identity) {
        return vec![Message::response_to(
            request,
            code,
            Body::Error(ErrorBody::default()),
        )];
    }
    perform(store, request, request)
}

/// The reference server's checks before it looks at an answer: 100 when the handle does not
/// exist, 400 when the identity is in no HS_ADMIN value that decides or lacks the permission.
fn authorize(
    store: &Store,
    limits: &Limits,
    request: &Message,
    identity: &ValueReference,
) -> Result<(), ResponseCode> {
    let server_admin = store.is_server_admin(identity.index, &identity.handle);
    if let Body::HomePrefixRequest { .. } = &request.body {
        // The reference server: only its server administrators home and unhome.
        return if server_admin {
            Ok(())
        } else {
            Err(ResponseCode::InvalidAdmin)
        };
    }
    let (admin_handles, needed) =
        requirements(store, request).ok_or(ResponseCode::HandleNotFound)?;
    if server_admin {
        return Ok(());
    }
    let granted =
        permissions(store, limits, &admin_handles, identity).ok_or(ResponseCode::InvalidAdmin)?;
    if granted.contains(needed) {
        Ok(())
    } else {
        Err(ResponseCode::InvalidAdmin)
    }
}

/// The handles whose HS_ADMIN values decide, and the permission the request needs; `None`
/// when the handle the request changes does not exist.
fn requirements(store: &Store, request: &Message) -> Option<(Vec<Bytes>, u16)> {
    let prefix_handle = |h: &[u8]| -> Bytes {
        let prefix = h.split(|b| *b == b'/').next().unwrap_or(h);
        let mut p = b"0.NA/".to_vec();
        p.extend_from_slice(prefix);
        Bytes::from(p)
    };
    // A change to an existing handle: its own HS_ADMIN values decide, not its prefix's.
    let existing = |h: &Bytes, perm: u16| -> Option<(Vec<Bytes>, u16)> {
        store.get(h)?;
        Some((vec![h.clone()], perm))
    };
    let values_perm = |values: &[HandleValue], plain: u16, admin: u16| {
        if values.iter().any(|v| v.is_type("HS_ADMIN")) {
            plain | admin
        } else {
            plain
        }
    };
    match &request.body {
        Body::ResolutionRequest(r) => Some((vec![r.handle.clone()], AdminPermissions::READ_VALUE)),
        Body::CreateHandleRequest { handle, .. } => {
            Some((vec![prefix_handle(handle)], AdminPermissions::ADD_HANDLE))
        }
        Body::DeleteHandleRequest { handle } => existing(handle, AdminPermissions::DELETE_HANDLE),
        Body::AddValueRequest { handle, values } => {
            let mut needed = values_perm(
                values,
                AdminPermissions::ADD_VALUE,
                AdminPermissions::ADD_ADMIN,
            );
            // Overwriting a value also modifies it.
            let replaces = request.header.flags.contains(OpFlags::OW)
                && store.get(handle).is_some_and(|h| {
                    h.values
                        .iter()
                        .any(|c| values.iter().any(|v| v.index == c.index))
                });
            if replaces {
                needed |= values_perm(
                    values,
                    AdminPermissions::MODIFY_VALUE,
                    AdminPermissions::MODIFY_ADMIN,
                );
            }
            existing(handle, needed)
        }
        Body::ModifyValueRequest { handle, values } => existing(
            handle,
            values_perm(
                values,
                AdminPermissions::MODIFY_VALUE,
                AdminPermissions::MODIFY_ADMIN,
            ),
        ),
        Body::RemoveValueRequest { handle, .. } => existing(handle, AdminPermissions::REMOVE_VALUE),
        Body::ListHandlesRequest { handle } => {
            Some((vec![handle.clone()], AdminPermissions::LIST_HANDLES))
        }
        _ => None,
    }
}

/// The permissions `identity` holds through the HS_ADMIN values of `handles`; `None` when it
/// is in none of them.
fn permissions(
    store: &Store,
    limits: &Limits,
    handles: &[Bytes],
    identity: &crate::wire::ValueReference,
) -> Option<AdminPermissions> {
    let who = store.normalize(&identity.handle);
    let mut granted: Option<u16> = None;
    for h in handles {
        let Some(stored) = store.get(h) else { continue };
        for v in stored.values.iter().filter(|v| v.is_type("HS_ADMIN")) {
            let Ok(rec) = AdminRecord::decode(&v.data, limits) else {
                continue;
            };
            let named =
                rec.admin.index == identity.index && store.normalize(&rec.admin.handle) == who;
            if named || in_group(store, limits, &rec.admin, identity, 0) {
                granted = Some(granted.unwrap_or(0) | rec.permissions.0);
            }
        }
    }
    granted.map(AdminPermissions)
}

/// True when `group` names an HS_VLIST value that lists `identity`, directly or through
/// other HS_VLIST values (as the reference server follows admin groups; at most 16 deep).
fn in_group(
    store: &Store,
    limits: &Limits,
    group: &crate::wire::ValueReference,
    identity: &crate::wire::ValueReference,
    depth: usize,
) -> bool {
    if depth >= 16 {
        return false;
    }
    let Some(stored) = store.get(&group.handle) else {
        return false;
    };
    let Some(list) = stored
        .values
        .iter()
        .find(|v| v.index == group.index && v.is_type("HS_VLIST"))
    else {
        return false;
    };
    let Ok(members) = crate::wire::decode_vlist(&list.data, limits) else {
        return false;
    };
    let who = store.normalize(&identity.handle);
    members.iter().any(|m| {
        (m.index == identity.index && store.normalize(&m.handle) == who)
            || in_group(store, limits, m, identity, depth + 1)
    })
}

fn now_seconds() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX))
}

fn stamped(values: &[HandleValue]) -> Vec<HandleValue> {
    let now = now_seconds();
    values
        .iter()
        .cloned()
        .map(|mut v| {
            v.timestamp = now;
            v
        })
        .collect()
}

/// Carries out the authenticated request.
fn perform(store: &Store, request: &Message, answer_msg: &Message) -> Vec<Message> {
    let one = |code, body| vec![reply(request, answer_msg, code, body)];
    let ok = || one(ResponseCode::Success, Body::Success);
    let stored_values = |h: &Bytes| store.get(h).map(|s| s.values.clone()).unwrap_or_default();
    match &request.body {
        Body::ResolutionRequest(r) => {
            let values: Vec<HandleValue> = stored_values(&r.handle)
                .into_iter()
                .filter(|v| {
                    (r.indexes.is_empty() && r.types.is_empty())
                        || super::store::value_matches(v, &r.indexes, &r.types)
                })
                .collect();
            if store.get(&r.handle).is_none() {
                return one(
                    ResponseCode::HandleNotFound,
                    Body::Error(ErrorBody::default()),
                );
            }
            if values.is_empty() {
                return one(
                    ResponseCode::ValuesNotFound,
                    Body::Error(ErrorBody::default()),
                );
            }
            one(
                ResponseCode::Success,
                Body::ResolutionResponse(ResolutionResponse {
                    handle: r.handle.clone(),
                    values,
                }),
            )
        }
        Body::CreateHandleRequest { handle, values } => {
            let mut handle = handle.clone();
            if request.header.flags.contains(OpFlags::MINT) {
                let mut h = handle.to_vec();
                h.extend_from_slice(uuid::Uuid::new_v4().hyphenated().to_string().as_bytes());
                handle = Bytes::from(h);
            }
            if !request.header.flags.contains(OpFlags::OW) && store.get(&handle).is_some() {
                return one(
                    ResponseCode::HandleAlreadyExists,
                    Body::Error(ErrorBody::default()),
                );
            }
            store.insert(&handle, stamped(values));
            one(ResponseCode::Success, Body::CreateHandleResponse { handle })
        }
        Body::DeleteHandleRequest { handle } => {
            if store.remove(handle) {
                ok()
            } else {
                one(
                    ResponseCode::HandleNotFound,
                    Body::Error(ErrorBody::default()),
                )
            }
        }
        Body::AddValueRequest { handle, values } => {
            let mut current = stored_values(handle);
            if request.header.flags.contains(OpFlags::OW) {
                // Overwrite (the REST API's PUT with `index`): a value at a taken index
                // replaces the one there.
                current.retain(|c| !values.iter().any(|v| v.index == c.index));
            } else if let Some(v) = values
                .iter()
                .find(|v| current.iter().any(|c| c.index == v.index))
            {
                let text = format!("Index conflict for {}", v.index);
                return one(
                    ResponseCode::ValueAlreadyExists,
                    Body::Error(ErrorBody::new(text.into_bytes())),
                );
            }
            current.extend(stamped(values));
            store.insert(handle, current);
            ok()
        }
        Body::ModifyValueRequest { handle, values } => {
            let mut current = stored_values(handle);
            for v in stamped(values) {
                match current.iter_mut().find(|c| c.index == v.index) {
                    Some(slot) => *slot = v,
                    None => {
                        return one(
                            ResponseCode::ValuesNotFound,
                            Body::Error(ErrorBody::default()),
                        )
                    }
                }
            }
            store.insert(handle, current);
            ok()
        }
        Body::RemoveValueRequest { handle, indexes } => {
            let mut current = stored_values(handle);
            if indexes
                .iter()
                .any(|i| !current.iter().any(|c| c.index == *i))
            {
                return one(
                    ResponseCode::ValuesNotFound,
                    Body::Error(ErrorBody::default()),
                );
            }
            current.retain(|c| !indexes.contains(&c.index));
            store.insert(handle, current);
            ok()
        }
        Body::ListHandlesRequest { handle } => {
            let prefix = handle
                .strip_prefix(b"0.NA/".as_slice())
                .or_else(|| handle.strip_prefix(b"0.na/".as_slice()))
                .unwrap_or(handle);
            let handles = store.handles_under(prefix);
            let chunks: Vec<&[Bytes]> = if handles.is_empty() {
                vec![&[]]
            } else {
                handles.chunks(LIST_CHUNK).collect()
            };
            let last = chunks.len() - 1;
            chunks
                .into_iter()
                .enumerate()
                .map(|(i, chunk)| {
                    let mut m = reply(
                        request,
                        answer_msg,
                        ResponseCode::Success,
                        Body::ListHandlesResponse {
                            handles: chunk.to_vec(),
                        },
                    );
                    m.header.flags.set(OpFlags::CN, i < last);
                    m
                })
                .collect()
        }
        Body::HomePrefixRequest { handle } => {
            // `0.NA/<prefix>`; anything else names no prefix.
            let prefix = match handle.get(..5) {
                Some(p) if p.eq_ignore_ascii_case(b"0.NA/") => handle.slice(5..),
                _ => {
                    return one(
                        ResponseCode::InvalidValue,
                        Body::Error(ErrorBody::new(&b"Not a prefix handle"[..])),
                    )
                }
            };
            if request.header.op_code == OpCode::UnhomeNa {
                store.unhome_prefix(&prefix);
            } else {
                store.home_prefix(&prefix);
            }
            ok()
        }
        _ => one(
            ResponseCode::OperationNotSupported,
            Body::Error(ErrorBody::default()),
        ),
    }
}

/// A response to the original `request`, sent under the answer's request and session ids.
fn reply(request: &Message, answer_msg: &Message, code: ResponseCode, body: Body) -> Message {
    let mut m = Message::response_to(request, code, body);
    m.envelope.request_id = answer_msg.envelope.request_id;
    m.envelope.session_id = answer_msg.envelope.session_id;
    m
}
