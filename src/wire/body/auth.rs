//! Bodies of authentication and sessions (PROTOCOL.md §10): the answer to a challenge
//! (OC_RESPONSE_TO_CHALLENGE, 200) and session setup (OC_SESSION_SETUP, 400), request and
//! response, laid out as the reference library 9.2 writes them (captures-auth).

use bytes::{BufMut, Bytes, BytesMut};

use super::lists::read_handle;
use crate::wire::error::{DecodeError, EncodeError};
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;
use crate::wire::value::ValueReference;
use crate::wire::writer::put_bytes;

/// Authentication type of a secret-key (HS_SECKEY) answer.
pub(crate) const HS_SECKEY: &[u8] = b"HS_SECKEY";
/// Authentication type of a public-key (HS_PUBKEY) answer.
pub(crate) const HS_PUBKEY: &[u8] = b"HS_PUBKEY";

/// Body of an OC_RESPONSE_TO_CHALLENGE request: `UTF8 authType ‖ UTF8 identity handle ‖ int4
/// identity index ‖ bytes signedResponse`. There is no handle field: the reference library's
/// object shows `/`, but nothing of it is on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChallengeAnswer {
    /// `HS_SECKEY` or `HS_PUBKEY`.
    pub auth_type: Bytes,
    /// Who answers: the handle and index of the identity's HS_SECKEY / HS_PUBKEY value.
    pub identity: ValueReference,
    /// The MAC or signature over `nonce ‖ request digest`, in the layout of its
    /// authentication type (see [`SecretKeyProof`](crate::wire::SecretKeyProof) and
    /// [`PublicKeyProof`](crate::wire::PublicKeyProof)).
    pub signed_response: Bytes,
}

impl ChallengeAnswer {
    /// Decodes the body; every field is bounded by `limits`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let auth_type = r.bytes("challenge_answer.auth_type", limits.max_array)?;
        let handle = read_handle(r, "challenge_answer.identity_handle", limits)?;
        let index = r.u32("challenge_answer.identity_index")?;
        let signed_response = r.bytes("challenge_answer.signed_response", limits.max_array)?;
        Ok(Self {
            auth_type,
            identity: ValueReference { handle, index },
            signed_response,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "challenge_answer.auth_type", &self.auth_type)?;
        put_bytes(
            out,
            "challenge_answer.identity_handle",
            &self.identity.handle,
        )?;
        out.put_u32(self.identity.index);
        put_bytes(
            out,
            "challenge_answer.signed_response",
            &self.signed_response,
        )
    }
}

/// Key exchange modes of a session setup request (reference `Common.KEY_EXCHANGE_*`).
pub mod key_exchange {
    /// 0: no session.
    pub const NONE: u16 = 0;
    /// 1: the client's public key encrypts the session key.
    pub const CIPHER_CLIENT: u16 = 1;
    /// 2: the server's public key encrypts the session key.
    pub const CIPHER_SERVER: u16 = 2;
    /// 3: the key at a handle value encrypts the session key.
    pub const CIPHER_HDL: u16 = 3;
    /// 4: Diffie-Hellman.
    pub const DH: u16 = 4;
}

/// What the reference library writes after a session setup body: its body length counts 4
/// bytes for the 2-byte mode, so two zero bytes trail the fields.
pub(crate) const SESSION_SETUP_TRAILER: &[u8] = &[0, 0];

/// Body of an OC_SESSION_SETUP request: `int2 mode ‖ int4 timeout ‖ UTF8 identity handle ‖
/// int4 identity index ‖` then, by mode, `bytes public key` (1, 4) or `UTF8 key handle ‖ int4
/// key index` (3) or nothing (2); then whatever trails (two zero bytes from the reference
/// library, kept so the body encodes back to the same bytes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionSetupRequest {
    /// Key exchange mode ([`key_exchange`]).
    pub key_exchange_mode: u16,
    /// Session timeout in seconds.
    pub timeout: u32,
    /// The identity the session is for (handle may be empty).
    pub identity: ValueReference,
    /// The client's public key (`DH_PUB_KEY` for mode 4), for modes 1 and 4.
    pub public_key: Option<Bytes>,
    /// The handle value holding the exchange key, for mode 3.
    pub exchange_key: Option<ValueReference>,
    /// Bytes after the fields (two zero bytes from the reference library).
    pub trailer: Bytes,
}

impl SessionSetupRequest {
    /// Decodes the body; the bytes after the mode's fields become the trailer.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let key_exchange_mode = r.u16("session_setup.key_exchange_mode")?;
        let timeout = r.u32("session_setup.timeout")?;
        let handle = read_handle(r, "session_setup.identity_handle", limits)?;
        let index = r.u32("session_setup.identity_index")?;
        let mut public_key = None;
        let mut exchange_key = None;
        match key_exchange_mode {
            key_exchange::CIPHER_CLIENT | key_exchange::DH => {
                public_key = Some(r.bytes("session_setup.public_key", limits.max_array)?);
            }
            key_exchange::CIPHER_HDL => {
                let handle = read_handle(r, "session_setup.exchange_key_handle", limits)?;
                let index = r.u32("session_setup.exchange_key_index")?;
                exchange_key = Some(ValueReference { handle, index });
            }
            _ => {}
        }
        Ok(Self {
            key_exchange_mode,
            timeout,
            identity: ValueReference { handle, index },
            public_key,
            exchange_key,
            trailer: r.rest(),
        })
    }

    /// Appends the body. A mode-1/4 request without a public key writes an empty key, a
    /// mode-3 request without a key reference an empty handle and index 0.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        out.put_u16(self.key_exchange_mode);
        out.put_u32(self.timeout);
        put_bytes(out, "session_setup.identity_handle", &self.identity.handle)?;
        out.put_u32(self.identity.index);
        match self.key_exchange_mode {
            key_exchange::CIPHER_CLIENT | key_exchange::DH => put_bytes(
                out,
                "session_setup.public_key",
                self.public_key.as_deref().unwrap_or_default(),
            )?,
            key_exchange::CIPHER_HDL => {
                let k = self.exchange_key.clone().unwrap_or(ValueReference {
                    handle: Bytes::new(),
                    index: 0,
                });
                put_bytes(out, "session_setup.exchange_key_handle", &k.handle)?;
                out.put_u32(k.index);
            }
            _ => {}
        }
        out.put_slice(&self.trailer);
        Ok(())
    }
}

/// Body of a successful OC_SESSION_SETUP response (after the request digest): `int2 mode ‖
/// bytes data` (for Diffie-Hellman: `int4 cipher (3 = AES) ‖ server DH_PUB_KEY`), then the
/// trailing bytes (two zero bytes from the reference server).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionSetupResponse {
    /// Key exchange mode, echoed.
    pub key_exchange_mode: u16,
    /// Mode-dependent data.
    pub data: Bytes,
    /// Bytes after the data.
    pub trailer: Bytes,
}

impl SessionSetupResponse {
    /// Decodes the body; the bytes after the data become the trailer.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let key_exchange_mode = r.u16("session_setup_response.key_exchange_mode")?;
        let data = r.bytes("session_setup_response.data", limits.max_array)?;
        Ok(Self {
            key_exchange_mode,
            data,
            trailer: r.rest(),
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        out.put_u16(self.key_exchange_mode);
        put_bytes(out, "session_setup_response.data", &self.data)?;
        out.put_slice(&self.trailer);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_answer_round_trips_and_rejects_truncation() {
        let a = ChallengeAnswer {
            auth_type: Bytes::from_static(HS_SECKEY),
            identity: ValueReference {
                handle: Bytes::from_static(b"20.500.12345/USER-SECKEY"),
                index: 300,
            },
            signed_response: Bytes::from_static(&[0x13, 1, 2, 3]),
        };
        let mut out = BytesMut::new();
        a.encode(&mut out).unwrap();
        // 4 + 9 (auth type) + 4 + 24 (handle) + 4 (index) + 4 + 4 (answer)
        assert_eq!(out.len(), 53);
        let bytes = out.freeze();
        let back =
            ChallengeAnswer::decode(&mut Reader::new(bytes.clone()), &Limits::default()).unwrap();
        assert_eq!(back, a);
        for cut in 0..bytes.len() {
            let mut r = Reader::new(bytes.slice(..cut));
            assert!(ChallengeAnswer::decode(&mut r, &Limits::default()).is_err());
        }
    }

    #[test]
    fn session_setup_modes_choose_their_fields() {
        for (mode, key, xk) in [
            (key_exchange::DH, Some(Bytes::from_static(b"k")), None),
            (key_exchange::CIPHER_CLIENT, Some(Bytes::new()), None),
            (
                key_exchange::CIPHER_HDL,
                None,
                Some(ValueReference {
                    handle: Bytes::from_static(b"0.NA/1"),
                    index: 300,
                }),
            ),
            (key_exchange::CIPHER_SERVER, None, None),
        ] {
            let req = SessionSetupRequest {
                key_exchange_mode: mode,
                timeout: 86_400,
                identity: ValueReference {
                    handle: Bytes::from_static(b"0.NA/1"),
                    index: 1,
                },
                public_key: key,
                exchange_key: xk,
                trailer: Bytes::from_static(SESSION_SETUP_TRAILER),
            };
            let mut out = BytesMut::new();
            req.encode(&mut out).unwrap();
            let back =
                SessionSetupRequest::decode(&mut Reader::new(out.freeze()), &Limits::default())
                    .unwrap();
            assert_eq!(back, req);
        }
    }
}
