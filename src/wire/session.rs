//! What a session (PROTOCOL.md §10; captures-auth `session_*`) does to each message, once its
//! setup has agreed on a key: [`SessionKey`].
//!
//! - A request in the session carries the session id in its envelope and an `HS_MAC`
//!   credential: `HMAC-SHA256(session key, major ‖ minor ‖ suggested major ‖ suggested minor ‖
//!   int4 session id ‖ int4 request id ‖ int4 session counter ‖ header ‖ body)`, the counter
//!   (one more for every request) in the credential's signer index. The layout of the MACed
//!   bytes is the one server signatures use ([`signed_data`]).
//! - A message that carries a value the public may not read is encrypted (envelope EC,
//!   [`super::encryption`]); the MAC is over the plaintext and travels inside the ciphertext.
//! - The answer to a challenge carries the session id but no MAC (as the reference sends it).
//!
//! Sans-IO like the rest of `wire`: the transport calls [`SessionKey::seal`] once it has
//! chosen the request id, and [`SessionKey::open`] on what comes back.

use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use super::body::Body;
use super::credential::{Credential, HS_MAC};
use super::encryption::{CryptError, SESSION_IV_LEN};
use super::envelope::Envelope;
use super::limits::Limits;
use super::message::Message;
use super::signature::signed_data;

/// Digest algorithm name of a session MAC credential.
pub const SESSION_MAC_DIGEST: &[u8] = b"HMAC-SHA256";
/// Length of a session key (what the Diffie-Hellman setup yields; AES uses its first 16 bytes).
pub const SESSION_KEY_LEN: usize = 32;

/// The key and id of an open session, and its request counter. Cheap to share (`Arc`): the
/// counter is atomic. The key is zeroized when the value is dropped and never printed.
pub struct SessionKey {
    session_id: u32,
    key: Zeroizing<[u8; SESSION_KEY_LEN]>,
    counter: AtomicU32,
}

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionKey")
            .field("session_id", &self.session_id)
            .field("counter", &self.counter.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl SessionKey {
    /// The session `session_id` (the server's number) with `key`; the first request will
    /// carry counter 1, as the reference client's does.
    pub fn new(session_id: u32, key: Zeroizing<[u8; SESSION_KEY_LEN]>) -> Self {
        Self {
            session_id,
            key,
            counter: AtomicU32::new(0),
        }
    }

    /// The server's number for the session (envelope `SessionId`).
    pub fn session_id(&self) -> u32 {
        self.session_id
    }

    /// The counter the next sealed request takes (1, 2, ...).
    fn next_counter(&self) -> u32 {
        self.counter
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1)
            .max(1)
    }

    /// HMAC-SHA256 over what the MAC of `message` as sent with `request_id` and `counter`
    /// covers (its own envelope's versions and this session's id), ready to finish or verify.
    fn keyed(
        &self,
        message: &Message,
        request_id: u32,
        counter: u32,
    ) -> Result<Hmac<Sha256>, CryptError> {
        let covered = signed_data(
            message.envelope.version,
            message.envelope.suggested,
            self.session_id,
            request_id,
            counter,
            &message.header_and_body()?,
        );
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key[..])
            .map_err(|_| CryptError::KeyLength(SESSION_KEY_LEN))?;
        mac.update(&covered);
        Ok(mac)
    }

    /// The MAC of `message` as sent with `request_id` and `counter`.
    pub fn mac(
        &self,
        message: &Message,
        request_id: u32,
        counter: u32,
    ) -> Result<[u8; 32], CryptError> {
        Ok(self
            .keyed(message, request_id, counter)?
            .finalize()
            .into_bytes()
            .into())
    }

    /// True when `message` (as decoded: its own request id, its header and body as received)
    /// carries an `HS_MAC` credential of this session that verifies (checked in constant time).
    pub fn verify_mac(&self, message: &Message) -> bool {
        let Some(c) = message.credential.as_deref() else {
            return false;
        };
        if c.credential_type.as_ref() != HS_MAC
            || c.digest_algorithm.as_ref() != SESSION_MAC_DIGEST
            || message.envelope.session_id != self.session_id
        {
            return false;
        }
        self.keyed(message, message.envelope.request_id, c.signer.index)
            .is_ok_and(|mac| mac.verify_slice(&c.signature).is_ok())
    }

    /// Encodes `request` for the wire in this session with `request_id`: session id in the
    /// envelope, a MAC credential with the next counter, encrypted under a fresh random IV
    /// when it carries a value the public may not read (or asks for encryption with EC). The
    /// answer to a challenge is only given the session id (the reference sends it unMACed).
    pub fn seal(&self, request: &Message, request_id: u32) -> Result<Bytes, CryptError> {
        let iv: [u8; SESSION_IV_LEN] = rand::random();
        // An answer to a challenge carries no MAC and takes no counter.
        let counter = match request.body {
            Body::ChallengeAnswer(_) => 0,
            _ => self.next_counter(),
        };
        self.seal_with(request, request_id, counter, &iv)
    }

    /// [`seal`](Self::seal) with a given counter and IV (what reproduces a captured message).
    pub fn seal_with(
        &self,
        request: &Message,
        request_id: u32,
        counter: u32,
        iv: &[u8; SESSION_IV_LEN],
    ) -> Result<Bytes, CryptError> {
        let mut m = request.clone();
        m.envelope.session_id = self.session_id;
        m.envelope.request_id = request_id;
        m.signed_bytes = Bytes::new();
        if !matches!(m.body, Body::ChallengeAnswer(_)) {
            let mac = self.mac(&m, request_id, counter)?;
            m.credential = Some(Box::new(Credential::new(
                HS_MAC,
                SESSION_MAC_DIGEST,
                Bytes::copy_from_slice(&mac),
                counter,
            )));
        }
        self.encode(&m, iv)
    }

    /// Encodes a message of this session: encrypted under `iv` when it carries a value the
    /// public may not read or asks for encryption (EC), else as it is.
    fn encode(&self, m: &Message, iv: &[u8; SESSION_IV_LEN]) -> Result<Bytes, CryptError> {
        if m.envelope.encrypted || carries_restricted_values(m) {
            let mut m = m.clone();
            m.envelope.encrypted = true;
            return m.encode_encrypted(&self.key[..], iv);
        }
        Ok(m.encode()?)
    }

    /// Encodes a server's answer in this session: encrypted under `iv` when it carries a value
    /// the public may not read, else as it is (the reference server does not MAC answers).
    pub fn seal_answer(
        &self,
        answer: &Message,
        iv: &[u8; SESSION_IV_LEN],
    ) -> Result<Bytes, CryptError> {
        self.encode(answer, iv)
    }

    /// Decodes a message of this session from its envelope and the bytes after it:
    /// decrypted first when the envelope has EC. A plain message decodes as any other.
    pub fn open(
        &self,
        envelope: Envelope,
        payload: Bytes,
        limits: &Limits,
    ) -> Result<Message, CryptError> {
        open_message(Some(self), envelope, payload, limits)
    }
}

/// Decodes a message from its envelope and the bytes after it, decrypting with `session`
/// when the envelope has EC. An encrypted message without a session is
/// [`CryptError::NoSession`].
pub fn open_message(
    session: Option<&SessionKey>,
    envelope: Envelope,
    payload: Bytes,
    limits: &Limits,
) -> Result<Message, CryptError> {
    if !envelope.encrypted {
        return Ok(Message::decode_parts(envelope, payload, limits)?);
    }
    let session = session.ok_or(CryptError::NoSession)?;
    Message::decode_encrypted_parts(envelope, payload, &session.key[..], limits)
}

/// True when the body carries a handle value the public may not read (what the reference
/// encrypts inside a session).
pub fn carries_restricted_values(message: &Message) -> bool {
    message
        .body
        .values()
        .iter()
        .any(|v| !v.permissions.public_read())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ChallengeAnswer, Reader, ValueReference};

    fn session() -> SessionKey {
        SessionKey::new(51, Zeroizing::new([7; SESSION_KEY_LEN]))
    }

    fn sealed(s: &SessionKey, m: &Message, id: u32) -> Message {
        let wire = s.seal(m, id).unwrap();
        let mut r = Reader::new(wire);
        let env = Envelope::decode(&mut r).unwrap();
        s.open(env, r.rest(), &Limits::default()).unwrap()
    }

    #[test]
    fn each_request_takes_the_next_counter_and_an_answer_none() {
        let s = session();
        let m = Message::resolution_request("0.NA/1", vec![], vec![], 0, 0);
        let answer = Message::request(
            Body::ChallengeAnswer(Box::new(ChallengeAnswer {
                auth_type: Bytes::from_static(b"HS_SECKEY"),
                identity: ValueReference {
                    handle: Bytes::from_static(b"0.NA/1"),
                    index: 300,
                },
                signed_response: Bytes::from_static(&[1, 2, 3]),
            })),
            crate::wire::OpCode::ChallengeResponse,
            0,
            0,
        );
        let counters: Vec<Option<u32>> = [&m, &answer, &m, &m]
            .iter()
            .enumerate()
            .map(|(i, msg)| {
                let back = sealed(&s, msg, 100 + i as u32);
                assert_eq!(back.envelope.session_id, 51);
                assert_eq!(back.envelope.request_id, 100 + i as u32);
                back.credential.map(|c| c.signer.index)
            })
            .collect();
        assert_eq!(counters, [Some(1), None, Some(2), Some(3)]);
        // The MAC verifies, and not once the request id is changed.
        let mut back = sealed(&s, &m, 7);
        assert!(s.verify_mac(&back));
        back.envelope.request_id = 8;
        assert!(!s.verify_mac(&back));
    }

    /// Found by the `session` fuzz target: an add-value request of version 45.59 whose
    /// envelope says "suggested = message version" (suggested major 0). Sealing it sets EC,
    /// and the envelope used to be rewritten with suggested major 45 & 0x1F = 13, so the
    /// receiver's MAC input (over the suggested version) differed from the sender's.
    #[test]
    fn a_message_sealed_again_verifies_whatever_its_versions() {
        let wire = hex::decode(concat!(
            "2d3b00ffffffff35136959750000000000000051000000660000000000000080000100006b05bbb8",
            "00000035000000000000000142cc84582a234895090f2a2348990000000000000013695975000000",
            "000000005100090f2a234899000000000000000000"
        ))
        .unwrap();
        let m = Message::decode(Bytes::from(wire), &Limits::default()).unwrap();
        assert_eq!(m.envelope.suggested, m.envelope.version);
        let s = session();
        let back = sealed(&s, &m, m.envelope.request_id);
        assert!(back.envelope.encrypted, "a value the public may not read");
        assert_eq!(back.envelope.suggested, m.envelope.suggested);
        assert_eq!(back.body, m.body);
        assert!(s.verify_mac(&back));
    }

    #[test]
    fn only_messages_with_restricted_values_are_encrypted() {
        let s = session();
        let mut secret = crate::wire::HandleValue::new(2, "EMAIL", "a@b");
        secret.permissions = crate::wire::Permissions(crate::wire::Permissions::ADMIN_READ);
        let public = crate::wire::HandleValue::new(1, "URL", "https://example.org/");
        let create = |values| {
            Message::request(
                Body::CreateHandleRequest {
                    handle: Bytes::from_static(b"0.NA/1"),
                    values,
                },
                crate::wire::OpCode::CreateHandle,
                0,
                0,
            )
        };
        let plain = s.seal(&create(vec![public.clone()]), 1).unwrap();
        let hidden = s.seal(&create(vec![public, secret]), 2).unwrap();
        assert_eq!(plain[2] & 0x40, 0);
        assert_ne!(hidden[2] & 0x40, 0);
        assert!(!hidden.windows(3).any(|w| w == b"a@b"));
        let mut r = Reader::new(hidden);
        let env = Envelope::decode(&mut r).unwrap();
        assert!(open_message(None, env, r.rest(), &Limits::default()).is_err());
    }
}
