//! Session setup (op code 400, PROTOCOL.md §10; captures-auth `session_*`) with
//! Diffie-Hellman, as the reference library's default session tracker does it:
//!
//! - the client sends key exchange mode 4 and its `DH_PUB_KEY` (`y ‖ p ‖ g` over the 1024-bit
//!   MODP group 2 of RFC 2409, g = 2), certified (CT) with RD, for its identity;
//! - the server answers, signed, `int4 cipher (3 = AES) ‖ its DH_PUB_KEY` and a session id in
//!   the envelope;
//! - both take the shared secret `y_peer^x mod p` as big-endian bytes, strip leading zero
//!   bytes while more than 32 remain, and keep the first 32: the session key
//!   ([`crate::wire::SessionKey`]).
//!
//! Sans-IO: messages in and out; the exponentiation is constant-time (`crypto-bigint`).
//! Checking the server's signature on the answer is the caller's (the resolver checks every
//! certified answer against the server's key before it counts).

use bytes::{BufMut, Bytes, BytesMut};
use crypto_bigint::modular::runtime_mod::{DynResidue, DynResidueParams};
use crypto_bigint::{Encoding, U1024};
use thiserror::Error;
use zeroize::{Zeroize, Zeroizing};

use super::answer::Identity;
use crate::wire::body::{key_exchange, SESSION_SETUP_TRAILER};
use crate::wire::session::SESSION_KEY_LEN;
use crate::wire::{
    Body, Message, OpCode, OpFlags, PublicKey, Reader, ResponseCode, SessionKey,
    SessionSetupRequest, ValueReference,
};

/// The prime of the 1024-bit MODP group 2 (RFC 2409 §6.2), big-endian.
pub const DH_GROUP2_PRIME: [u8; 128] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
    0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
    0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
    0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
    0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
    0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
    0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
    0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
];
/// The generator of group 2.
pub const DH_GENERATOR: u8 = 2;
/// Bytes of a fresh private exponent: 256 bits (the reference draws 160; more costs nothing
/// that matters and is never weaker).
pub const DH_SECRET_LEN: usize = 32;
/// Session encryption algorithm code for AES (the reference's `ENCRYPT_ALG_AES`).
pub const CIPHER_AES: u32 = 3;
/// The session lifetime the reference client asks for (seconds).
pub const SESSION_TIMEOUT_SECS: u32 = 86_400;

/// Why a session could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The server answered with an error code (e.g. 2 or 504: it does not do sessions).
    #[error("the server refused the session: {0}")]
    Refused(ResponseCode),
    /// The answer is not a session setup answer.
    #[error("the answer is not a session setup answer (op code {0})")]
    NotSetup(u32),
    /// The answer chose another key exchange than Diffie-Hellman.
    #[error("the server answered with key exchange mode {0}, not Diffie-Hellman (4)")]
    Mode(u16),
    /// The answer names a session cipher other than AES.
    #[error("the server chose session cipher {0}, not AES (3)")]
    Cipher(u32),
    /// The answer's data field does not decode; the text names the field.
    #[error("session setup answer: {0}")]
    Data(String),
    /// The server's key is not over group 2 with generator 2.
    #[error("the server's Diffie-Hellman key is not over the 1024-bit group 2")]
    Group,
    /// The server's public value is outside 2..p-2.
    #[error("the server's Diffie-Hellman public value is out of range")]
    PeerValue,
    /// The server assigned session id 0.
    #[error("the server assigned no session id")]
    NoSessionId,
}

/// A Diffie-Hellman key pair over group 2: the private exponent (zeroized on drop, never
/// printed) and the public value.
pub struct DhKeyPair {
    x: Zeroizing<[u8; 128]>,
    y: U1024,
}

impl std::fmt::Debug for DhKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DhKeyPair").finish_non_exhaustive()
    }
}

fn params() -> DynResidueParams<{ U1024::LIMBS }> {
    DynResidueParams::new(&U1024::from_be_bytes(DH_GROUP2_PRIME))
}

/// `base^x mod p`, in constant time for a given exponent length.
fn mod_pow(base: &U1024, x: &[u8; 128]) -> U1024 {
    let mut exponent = U1024::from_be_bytes(*x);
    let r = DynResidue::new(base, params()).pow(&exponent).retrieve();
    exponent.zeroize();
    r
}

/// A number as Java's `BigInteger.toByteArray` writes it (what the reference puts in a
/// `DH_PUB_KEY`): big-endian, no leading zero bytes but one when the top bit is set.
fn java_bytes(be: &[u8]) -> Bytes {
    let first = be
        .iter()
        .position(|b| *b != 0)
        .unwrap_or(be.len().saturating_sub(1));
    let digits = be.get(first..).unwrap_or_default();
    let mut out = BytesMut::with_capacity(digits.len() + 1);
    if digits.first().is_some_and(|b| b & 0x80 != 0) {
        out.put_u8(0);
    }
    out.put_slice(digits);
    out.freeze()
}

/// A non-negative big-endian number of at most 128 significant bytes, left-padded to 128.
fn padded(be: &[u8]) -> Option<[u8; 128]> {
    let first = be.iter().position(|b| *b != 0).unwrap_or(be.len());
    let digits = be.get(first..)?;
    let mut out = [0u8; 128];
    let start = 128usize.checked_sub(digits.len())?;
    out.get_mut(start..)?.copy_from_slice(digits);
    Some(out)
}

/// True when `p` and `g` (big-endian, any leading zeros) are group 2's prime and generator.
fn is_group2(p: &[u8], g: &[u8]) -> bool {
    padded(p) == Some(DH_GROUP2_PRIME)
        && padded(g).is_some_and(|g| g[127] == DH_GENERATOR && g[..127].iter().all(|b| *b == 0))
}

impl DhKeyPair {
    /// A fresh key pair (a 256-bit private exponent from the operating system's generator).
    pub fn generate() -> Self {
        let mut x = Zeroizing::new([0u8; 128]);
        let secret: Zeroizing<[u8; DH_SECRET_LEN]> = Zeroizing::new(rand::random());
        x[128 - DH_SECRET_LEN..].copy_from_slice(&secret[..]);
        // x ≥ 2: a zero or one exponent would give away the shared secret.
        x[127] |= 2;
        Self::from_exponent(x)
    }

    /// The pair of a given private exponent (big-endian, at most 128 bytes, at least 2):
    /// what reproduces a captured exchange.
    pub fn from_secret(x: &[u8]) -> Option<Self> {
        let x = Zeroizing::new(padded(x)?);
        let at_least_2 = x[..127].iter().any(|b| *b != 0) || x[127] >= 2;
        at_least_2.then(|| Self::from_exponent(x))
    }

    fn from_exponent(x: Zeroizing<[u8; 128]>) -> Self {
        let y = mod_pow(&U1024::from_u8(DH_GENERATOR), &x);
        Self { x, y }
    }

    /// The public key as it travels (`DH_PUB_KEY`, in the reference's byte layout).
    pub fn public_key(&self) -> PublicKey {
        PublicKey::Dh {
            options: 0,
            y: java_bytes(&self.y.to_be_bytes()),
            p: java_bytes(&DH_GROUP2_PRIME),
            g: Bytes::from_static(&[DH_GENERATOR]),
        }
    }

    /// The session key agreed with a peer's public value `peer_y` (big-endian, any leading
    /// zeros): `peer_y^x mod p` as 128 big-endian bytes, leading zero bytes stripped while
    /// more than 32 remain, the first 32 kept.
    pub fn agree(&self, peer_y: &[u8]) -> Result<Zeroizing<[u8; SESSION_KEY_LEN]>, SessionError> {
        let peer = padded(peer_y).ok_or(SessionError::PeerValue)?;
        let peer = U1024::from_be_bytes(peer);
        let p = U1024::from_be_bytes(DH_GROUP2_PRIME);
        // 2 ≤ y ≤ p - 2: 0, 1 and p - 1 would force the shared secret.
        if peer < U1024::from_u8(2) || peer > p.wrapping_sub(&U1024::from_u8(2)) {
            return Err(SessionError::PeerValue);
        }
        let mut secret = mod_pow(&peer, &self.x);
        let shared = Zeroizing::new(secret.to_be_bytes());
        secret.zeroize();
        let skip = shared
            .iter()
            .take(128 - SESSION_KEY_LEN)
            .take_while(|b| **b == 0)
            .count();
        let mut key = Zeroizing::new([0u8; SESSION_KEY_LEN]);
        key.copy_from_slice(&shared[skip..skip + SESSION_KEY_LEN]);
        Ok(key)
    }

    /// The session setup request for `identity` (mode 4, this pair's public key, the
    /// reference's timeout and trailer), certified and asking for the request digest so the
    /// answer can be tied to it. Version fields and request id are the caller's.
    pub fn setup_request(&self, identity: &Identity, expiration: u32) -> Message {
        let public_key = self.public_key().encode().unwrap_or_default();
        let body = Body::SessionSetupRequest(Box::new(SessionSetupRequest {
            key_exchange_mode: key_exchange::DH,
            timeout: SESSION_TIMEOUT_SECS,
            identity: ValueReference {
                handle: identity.handle.clone(),
                index: identity.index,
            },
            public_key: Some(public_key),
            exchange_key: None,
            trailer: Bytes::from_static(SESSION_SETUP_TRAILER),
        }));
        let mut m = Message::request(body, OpCode::SessionSetup, 0, expiration);
        m.header.flags = OpFlags::CT | OpFlags::REC | OpFlags::CA | OpFlags::PO | OpFlags::RD;
        m
    }

    /// The session an answer to [`setup_request`](Self::setup_request) opens: success, op
    /// code 400, Diffie-Hellman with AES, the server's key over group 2, a session id. The
    /// server's signature and the request digest are checked by whoever received it.
    pub fn accept(&self, answer: &Message) -> Result<SessionKey, SessionError> {
        if answer.header.op_code != OpCode::SessionSetup {
            return Err(SessionError::NotSetup(answer.header.op_code.code()));
        }
        let code = answer.response_code();
        if code != ResponseCode::Success {
            return Err(SessionError::Refused(code));
        }
        let Body::SessionSetupResponse(body) = &answer.body else {
            return Err(SessionError::Data(
                "body is not a session setup answer".into(),
            ));
        };
        if body.key_exchange_mode != key_exchange::DH {
            return Err(SessionError::Mode(body.key_exchange_mode));
        }
        let mut r = Reader::new(body.data.clone());
        let cipher = r
            .u32("session_setup_response.cipher")
            .map_err(|e| SessionError::Data(e.to_string()))?;
        if cipher != CIPHER_AES {
            return Err(SessionError::Cipher(cipher));
        }
        let key =
            PublicKey::decode_bytes(&r.rest()).map_err(|e| SessionError::Data(e.to_string()))?;
        let PublicKey::Dh { y, p, g, .. } = key else {
            return Err(SessionError::Data(
                "session_setup_response.key is not a DH_PUB_KEY".into(),
            ));
        };
        if !is_group2(&p, &g) {
            return Err(SessionError::Group);
        }
        if answer.envelope.session_id == 0 {
            return Err(SessionError::NoSessionId);
        }
        let key = self.agree(&y)?;
        Ok(SessionKey::new(answer.envelope.session_id, key))
    }
}

/// The server's side of a setup request: its answer data (`int4 AES ‖ the server pair's
/// DH_PUB_KEY`) and the session key, for a request whose client key is over group 2.
pub fn answer_setup(
    request: &SessionSetupRequest,
    server: &DhKeyPair,
) -> Result<(Bytes, Zeroizing<[u8; SESSION_KEY_LEN]>), SessionError> {
    if request.key_exchange_mode != key_exchange::DH {
        return Err(SessionError::Mode(request.key_exchange_mode));
    }
    let blob = request
        .public_key
        .as_ref()
        .ok_or_else(|| SessionError::Data("session_setup.public_key missing".into()))?;
    let PublicKey::Dh { y, p, g, .. } =
        PublicKey::decode_bytes(blob).map_err(|e| SessionError::Data(e.to_string()))?
    else {
        return Err(SessionError::Data(
            "session_setup.public_key is not a DH_PUB_KEY".into(),
        ));
    };
    if !is_group2(&p, &g) {
        return Err(SessionError::Group);
    }
    let key = server.agree(&y)?;
    let public = server
        .public_key()
        .encode()
        .map_err(|e| SessionError::Data(e.to_string()))?;
    let mut data = BytesMut::with_capacity(4 + public.len());
    data.put_u32(CIPHER_AES);
    data.put_slice(&public);
    Ok((data.freeze(), key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::SessionSetupResponse;

    fn p_minus(n: u8) -> Vec<u8> {
        let mut p = DH_GROUP2_PRIME.to_vec();
        // The prime ends in 0xFF: subtracting a small n does not borrow.
        p[127] -= n;
        p
    }

    #[test]
    fn public_values_that_force_the_secret_are_refused() {
        let pair = DhKeyPair::generate();
        for bad in [
            vec![],
            vec![0],
            vec![1],
            vec![0, 0, 1],
            p_minus(1),
            p_minus(0),
            vec![0xFF; 129],
        ] {
            assert_eq!(
                pair.agree(&bad).unwrap_err(),
                SessionError::PeerValue,
                "{bad:?}"
            );
        }
        assert!(pair.agree(&[2]).is_ok());
        assert!(pair.agree(&p_minus(2)).is_ok());
    }

    #[test]
    fn both_sides_agree_and_the_key_skips_leading_zeros() {
        let a = DhKeyPair::generate();
        let b = DhKeyPair::generate();
        let ya = a.public_key();
        let yb = b.public_key();
        let (PublicKey::Dh { y: ya, .. }, PublicKey::Dh { y: yb, .. }) = (ya, yb) else {
            panic!("not DH keys")
        };
        assert_eq!(*a.agree(&yb).unwrap(), *b.agree(&ya).unwrap());
        // Exponents 0 and 1 are refused (they would give the secret away).
        assert!(DhKeyPair::from_secret(&[0]).is_none());
        assert!(DhKeyPair::from_secret(&[0, 1]).is_none());
        assert!(DhKeyPair::from_secret(&[1, 0]).is_some());
        // The key rule: with y = 2 and x = 2, the shared secret is 2^2 = 4, one significant
        // byte: leading zeros are stripped only while more than 32 bytes remain, so the key
        // is 31 zero bytes and then 4.
        let two = DhKeyPair::from_secret(&[2]).unwrap();
        let mut want = [0u8; 32];
        want[31] = 4;
        assert_eq!(*two.agree(&[2]).unwrap(), want);
    }

    #[test]
    fn setup_answers_are_checked_field_by_field() {
        let client = DhKeyPair::generate();
        let request = client.setup_request(&Identity::new(300, "0.NA/1"), 0);
        let answer = |mode: u16, data: Bytes, code: ResponseCode, sid: u32| {
            let mut m = Message::response_to(
                &request,
                code,
                Body::SessionSetupResponse(SessionSetupResponse {
                    key_exchange_mode: mode,
                    data,
                    trailer: Bytes::new(),
                }),
            );
            m.envelope.session_id = sid;
            m
        };
        let server = DhKeyPair::generate();
        let Body::SessionSetupRequest(body) = &request.body else {
            panic!("not a setup request")
        };
        let (good, _) = answer_setup(body, &server).unwrap();
        assert!(client
            .accept(&answer(4, good.clone(), ResponseCode::Success, 5))
            .is_ok());
        assert_eq!(
            client
                .accept(&answer(4, good.clone(), ResponseCode::Success, 0))
                .unwrap_err(),
            SessionError::NoSessionId
        );
        assert_eq!(
            client
                .accept(&answer(2, good.clone(), ResponseCode::Success, 5))
                .unwrap_err(),
            SessionError::Mode(2)
        );
        let mut des = good.to_vec();
        des[3] = 1;
        assert_eq!(
            client
                .accept(&answer(4, Bytes::from(des), ResponseCode::Success, 5))
                .unwrap_err(),
            SessionError::Cipher(1)
        );
        for cut in 0..good.len() {
            assert!(client
                .accept(&answer(4, good.slice(..cut), ResponseCode::Success, 5))
                .is_err());
        }
        // A key over another group (g = 5).
        let mut other = server.public_key();
        if let PublicKey::Dh { g, .. } = &mut other {
            *g = Bytes::from_static(&[5]);
        }
        let mut data = BytesMut::new();
        data.put_u32(CIPHER_AES);
        data.put_slice(&other.encode().unwrap());
        assert_eq!(
            client
                .accept(&answer(4, data.freeze(), ResponseCode::Success, 5))
                .unwrap_err(),
            SessionError::Group
        );
        let refused = Message::response_to(
            &request,
            ResponseCode::InvalidSessionSetupRequest,
            Body::Error(crate::wire::ErrorBody::default()),
        );
        assert_eq!(
            client.accept(&refused).unwrap_err(),
            SessionError::Refused(ResponseCode::InvalidSessionSetupRequest)
        );
    }

    #[test]
    fn the_private_exponent_is_not_printed() {
        let pair = DhKeyPair::from_secret(&[0x42; 32]).unwrap();
        assert_eq!(format!("{pair:?}"), "DhKeyPair { .. }");
    }
}
