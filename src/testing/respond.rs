//! How the test server answers one decoded request: the resolution rules of the store, the
//! hash rule of its site, site information, signing. Output is the encoded answer
//! (envelope ‖ message) written into a reusable buffer.

use bytes::{BufMut, Bytes, BytesMut};

use super::admin::{self, AuthState};
use super::key::{sign_encoded, TestKey};
use super::patch::{patch_u32, REQUEST_ID_AT};
use super::session::ServerSession;
use super::store::{Lookup, Store};
use crate::wire::{
    Body, DigestAlgorithm, Envelope, ErrorBody, Header, Limits, Message, OpCode, OpFlags,
    ProtocolVersion, RequestDigest, ResponseCode, SiteInfo, SiteInfoResponse, ENVELOPE_LEN,
    HEADER_LEN,
};

/// The site a server belongs to and its place in it.
#[derive(Debug, Clone)]
pub(crate) struct SiteRole {
    pub(crate) site: SiteInfo,
    pub(crate) index: usize,
    /// `site` encoded (the GetSiteInfo answer and the HS_SITE value data).
    pub(crate) record: Bytes,
}

/// Everything needed to answer, borrowed from the server state.
pub(crate) struct Responder<'a> {
    pub(crate) store: &'a Store,
    pub(crate) role: &'a SiteRole,
    pub(crate) key: &'a TestKey,
    pub(crate) auth: &'a AuthState,
    pub(crate) limits: &'a Limits,
    /// The session the request came in, its MAC verified.
    pub(crate) session: Option<&'a ServerSession>,
}

impl Responder<'_> {
    /// Writes the answer to `request` into `out` (cleared first).
    pub(crate) fn respond(&self, request: &Message, out: &mut BytesMut) {
        out.clear();
        match (&request.header.op_code, &request.body) {
            (OpCode::Resolution, Body::ResolutionRequest(r)) => {
                let site = &self.role.site;
                if site.servers.len() > 1
                    && site.server_index_for(&r.handle) != Some(self.role.index)
                {
                    self.generic(
                        request,
                        ResponseCode::ServerNotResponsible,
                        Body::Error(ErrorBody::new(&b"Wrong server for this handle (hash)"[..])),
                        out,
                    );
                    return;
                }
                let public_only = request.header.flags.contains(OpFlags::PO);
                match self
                    .store
                    .lookup(&r.handle, &r.indexes, &r.types, public_only)
                {
                    Lookup::NotHomed => self.generic(
                        request,
                        ResponseCode::ServerNotResponsible,
                        Body::Error(ErrorBody::new(&b"That prefix doesn't live here"[..])),
                        out,
                    ),
                    Lookup::Referral(referral) => {
                        self.generic(request, referral.code, Body::Referral(referral.body), out)
                    }
                    Lookup::NotFound => self.generic(
                        request,
                        ResponseCode::HandleNotFound,
                        Body::Error(ErrorBody::default()),
                        out,
                    ),
                    Lookup::NoValues => self.generic(
                        request,
                        ResponseCode::ValuesNotFound,
                        Body::Error(ErrorBody::default()),
                        out,
                    ),
                    Lookup::AuthenticationNeeded => {
                        if self.authenticated(request, out) {
                            return;
                        }
                    }
                    Lookup::AllPublic(stored) => {
                        self.success(request, &r.handle, &stored.public_encoded, out)
                    }
                    Lookup::Selected(encoded) => self.success(request, &r.handle, &encoded, out),
                    Lookup::Raw(answer) => {
                        out.put_slice(&answer);
                        // Envelope bytes 8..12: request id; header bytes 16..20: expiration.
                        if patch_u32(out, REQUEST_ID_AT, request.envelope.request_id)
                            && patch_u32(out, ENVELOPE_LEN + 16, request.header.expiration)
                        {
                            // A recorded answer keeps its own credential: no re-signing.
                            return;
                        }
                        out.clear();
                        self.generic(
                            request,
                            ResponseCode::Error,
                            Body::Error(ErrorBody::new(
                                &b"Recorded answer too short for an envelope and a header"[..],
                            )),
                            out,
                        );
                    }
                }
            }
            (OpCode::ChallengeResponse, Body::ChallengeAnswer(answer)) => {
                let answers = admin::answer(self.auth, self.store, self.limits, request, answer);
                self.messages(answers, out);
                return;
            }
            (op, _) if admin::is_admin(*op) => match admin::precheck(self.store, request) {
                Some(m) => self.message(m, out),
                None => {
                    if self.authenticated(request, out) {
                        return;
                    }
                }
            },
            (OpCode::SessionSetup, _) => {
                let id = self.auth.next_id();
                self.message(self.auth.sessions.setup(request, id), out);
            }
            (OpCode::GetSiteInfo, _) => self.generic(
                request,
                ResponseCode::Success,
                Body::SiteInfoResponse(SiteInfoResponse {
                    record: self.role.record.clone(),
                }),
                out,
            ),
            _ => self.generic(
                request,
                ResponseCode::OperationNotSupported,
                Body::Error(ErrorBody::new(
                    &b"Operation not supported by the test server"[..],
                )),
                out,
            ),
        }
        if request.header.flags.contains(OpFlags::CT) {
            if let Err(e) = sign_encoded(out, self.key) {
                tracing::debug!(error = %e, "answer left unsigned");
            }
        }
    }

    /// A request that needs an identity: carried out when it came in a session that proved
    /// one (true: the answers are written and signed), challenged (in its session, if any)
    /// otherwise (false: the challenge is written, to be signed like any answer).
    fn authenticated(&self, request: &Message, out: &mut BytesMut) -> bool {
        match self.session.and_then(ServerSession::authenticated) {
            Some(identity) => {
                let answers = admin::perform_as(self.store, self.limits, request, &identity);
                self.messages(answers, out);
                true
            }
            None => {
                let challenge = self
                    .auth
                    .challenge(request, self.session.map(ServerSession::id));
                self.message(challenge, out);
                false
            }
        }
    }

    /// Answers to one request (several for a list of handles), each signed on its own when
    /// the request asked for it.
    fn messages(&self, answers: Vec<Message>, out: &mut BytesMut) {
        let mut one = BytesMut::new();
        for m in answers {
            one.clear();
            let certify = m.header.flags.contains(OpFlags::CT);
            self.message(m, &mut one);
            if certify {
                if let Err(e) = sign_encoded(&mut one, self.key) {
                    tracing::debug!(error = %e, "answer left unsigned");
                }
            }
            out.put_slice(&one);
        }
    }

    /// The hot path: a successful resolution written field by field, values copied from their
    /// pre-encoded bytes (`values` = `int4 count ‖ values`).
    fn success(&self, request: &Message, handle: &[u8], values: &[u8], out: &mut BytesMut) {
        let digest = request_digest_for(request);
        let digest_len = digest.as_ref().map_or(0, RequestDigest::encoded_len);
        let body_len = digest_len + 4 + handle.len() + values.len();
        let message_len = HEADER_LEN + body_len + 4;
        out.reserve(ENVELOPE_LEN + message_len);
        let mut envelope = response_envelope(request);
        envelope.message_length = message_len as u32;
        envelope.encode(out);
        let mut header = response_header(request, ResponseCode::Success, self.role.site.serial);
        header.body_length = body_len as u32;
        header.encode(out);
        if let Some(d) = digest {
            if d.encode(out).is_err() {
                tracing::debug!("request digest left out");
            }
        }
        out.put_u32(handle.len() as u32);
        out.put_slice(handle);
        out.put_slice(values);
        out.put_u32(0);
    }

    /// Any other answer, through the wire codec.
    fn generic(&self, request: &Message, code: ResponseCode, body: Body, out: &mut BytesMut) {
        self.message(Message::response_to(request, code, body), out);
    }

    /// Appends `m` with the server's site serial (several messages follow each other in
    /// `out`, as a TCP stream carries a list of handles).
    fn message(&self, mut m: Message, out: &mut BytesMut) {
        m.header.site_info_serial = self.role.site.serial;
        match m.encode() {
            Ok(b) => out.put_slice(&b),
            Err(e) => tracing::debug!(error = %e, "answer does not encode"),
        }
    }
}

/// The reference server's answer to an undecodable request (PROTOCOL.md §14.10): op code 0,
/// request id 0xFFFFFFFF, envelope 2.3, response code 4 with a text.
pub(crate) fn protocol_error(text: &str, out: &mut BytesMut) {
    out.clear();
    let mut m = Message::request(
        Body::Error(ErrorBody::new(Bytes::copy_from_slice(text.as_bytes()))),
        OpCode::Reserved,
        u32::MAX,
        0,
    );
    m.envelope = Envelope::new(ProtocolVersion::V2_3, ProtocolVersion::V2_11, u32::MAX);
    m.header.response_code = ResponseCode::ProtocolError;
    if let Ok(b) = m.encode() {
        out.put_slice(&b);
    }
}

/// As `Message::response_to`: the request's version, suggesting 2.11, same session and id.
fn response_envelope(request: &Message) -> Envelope {
    let mut e = Envelope::new(
        request.envelope.version,
        ProtocolVersion::V2_11,
        request.envelope.request_id,
    );
    e.session_id = request.envelope.session_id;
    e
}

/// As `Message::response_to`, with the server's own site serial.
fn response_header(request: &Message, code: ResponseCode, serial: u16) -> Header {
    Header {
        op_code: request.header.op_code,
        response_code: code,
        flags: request
            .header
            .flags
            .without(OpFlags::CN)
            .without(OpFlags::KC)
            .with(OpFlags::AT),
        site_info_serial: serial,
        recursion_count: request.header.recursion_count,
        reserved: 0,
        expiration: request.header.expiration,
        body_length: 0,
    }
}

fn request_digest_for(request: &Message) -> Option<RequestDigest> {
    if !request.header.flags.contains(OpFlags::RD) {
        return None;
    }
    let alg = DigestAlgorithm::for_version(request.envelope.version);
    let hb = request.header_and_body().ok()?;
    RequestDigest::compute(alg, &hb)
}
