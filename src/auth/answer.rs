//! The identity, its credentials, and the answer to a challenge.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;
use rand::RngCore;

use super::error::{AuthError, IdentityError};
use super::keys::PrivateKey;
use super::secret::{compute, SecretKey, SecretKeyMac, PBKDF2_SALT_LEN};
use crate::wire::body::{HS_PUBKEY, HS_SECKEY};
use crate::wire::signature::HashAlgorithm;
use crate::wire::{
    Body, ChallengeAnswer, DigestAlgorithm, Envelope, Header, Message, OpCode, OpFlags,
    ProtocolVersion, PublicKeyProof, RequestDigest, ResponseCode, ValueReference,
};

/// Length of the nonce of a challenge (reference `Common.CHALLENGE_NONCE_SIZE`).
pub const NONCE_LEN: usize = 16;

/// Who authenticates: the handle and index of the value that holds the identity's key
/// (an HS_SECKEY or HS_PUBKEY value), written `INDEX:HANDLE` as the reference tools do.
///
/// ```
/// use handle_resolver::auth::Identity;
///
/// let id: Identity = "300:20.500.12345/USER-SECKEY".parse()?;
/// assert_eq!(id.index, 300);
/// assert_eq!(&id.handle[..], b"20.500.12345/USER-SECKEY");
/// assert_eq!(id.to_string(), "300:20.500.12345/USER-SECKEY");
/// assert!("20.500.12345/USER-SECKEY".parse::<Identity>().is_err());
/// # Ok::<(), handle_resolver::auth::IdentityError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// The identity's handle.
    pub handle: Bytes,
    /// The index of its key value.
    pub index: u32,
}

impl Identity {
    /// An identity from its parts.
    pub fn new(index: u32, handle: impl Into<Bytes>) -> Self {
        Self {
            handle: handle.into(),
            index,
        }
    }
}

impl FromStr for Identity {
    type Err = IdentityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (index, handle) = s
            .split_once(':')
            .ok_or_else(|| IdentityError::Form(s.to_string()))?;
        let index: u32 = index
            .trim()
            .parse()
            .map_err(|_| IdentityError::Index(index.to_string()))?;
        if handle.is_empty() {
            return Err(IdentityError::EmptyHandle);
        }
        Ok(Self::new(index, Bytes::copy_from_slice(handle.as_bytes())))
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}",
            self.index,
            String::from_utf8_lossy(&self.handle)
        )
    }
}

/// What proves the identity: a secret key (HS_SECKEY) or a private key (HS_PUBKEY).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Credentials {
    /// A shared secret.
    SecretKey(SecretKey),
    /// A private RSA or DSA key (boxed: the key types are large).
    PrivateKey(Box<PrivateKey>),
}

/// A challenge checked against the request it answers: the nonce and the request digest to
/// sign, and the versions that choose the algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// The server's 16-byte nonce.
    pub nonce: Bytes,
    /// The digest of our request, as the server computed it (checked equal to ours).
    pub request_digest: RequestDigest,
    /// The challenge's message version.
    pub version: ProtocolVersion,
    /// The challenge's suggested version.
    pub suggested: ProtocolVersion,
    /// The session id the server assigned; the answer echoes it.
    pub session_id: u32,
}

impl Challenge {
    /// A challenge as a server issues it (the server side: [`super::verify_answer`]).
    pub fn issued(
        nonce: impl Into<Bytes>,
        request_digest: RequestDigest,
        version: ProtocolVersion,
        suggested: ProtocolVersion,
        session_id: u32,
    ) -> Self {
        Self {
            nonce: nonce.into(),
            request_digest,
            version,
            suggested,
            session_id,
        }
    }

    /// Checks that `challenge` is a 402 to `request` (same op code, a 16-byte nonce, a
    /// request digest of a known algorithm) and that its request digest is the
    /// digest of `request`'s header and body as sent ([`Message::header_and_body`]). Only
    /// a challenge that passes is ever signed.
    pub fn verify(challenge: &Message, request: &Message) -> Result<Self, AuthError> {
        let rc = challenge.header.response_code;
        let Body::Challenge(body) = &challenge.body else {
            return Err(AuthError::NotAChallenge(rc.code()));
        };
        if rc != ResponseCode::AuthenticationNeeded {
            return Err(AuthError::NotAChallenge(rc.code()));
        }
        // The request id is not compared: a transport may give the request another id than
        // the message it was handed (the reference compares the digest only).
        let (ours, theirs) = (
            request.header.op_code.code(),
            challenge.header.op_code.code(),
        );
        if ours != theirs {
            return Err(AuthError::OtherRequest {
                field: "op code",
                ours,
                theirs,
            });
        }
        if body.nonce.len() != NONCE_LEN {
            return Err(AuthError::NonceLength(body.nonce.len()));
        }
        let request_digest = match (&challenge.request_digest, &body.legacy_digest) {
            (Some(d), _) => d.clone(),
            (None, Some(d)) => RequestDigest {
                algorithm: DigestAlgorithm::LegacyMd5,
                digest: d.clone(),
            },
            (None, None) => return Err(AuthError::NoRequestDigest),
        };
        if let DigestAlgorithm::Other(code) = request_digest.algorithm {
            return Err(AuthError::UnknownDigestAlgorithm(code));
        }
        if !request_digest.matches(&request.header_and_body()?) {
            return Err(AuthError::DigestMismatch);
        }
        Ok(Self {
            nonce: body.nonce.clone(),
            request_digest,
            version: challenge.envelope.version,
            suggested: challenge.envelope.suggested,
            session_id: challenge.envelope.session_id,
        })
    }

    /// The bytes that are MACed or signed: `nonce ‖ request digest`, no length prefixes.
    pub fn signed_data(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.nonce.len() + self.request_digest.digest.len());
        out.extend_from_slice(&self.nonce);
        out.extend_from_slice(&self.request_digest.digest);
        out
    }

    /// The smaller of the message and suggested versions: what chooses the HS_SECKEY MAC.
    pub fn lower_version(&self) -> ProtocolVersion {
        let (v, s) = (self.version, self.suggested);
        if v.at_least(s.major, s.minor) {
            s
        } else {
            v
        }
    }
}

/// Answers challenges as one identity (sans-IO: challenge and request in, answer out).
///
/// ```
/// use handle_resolver::auth::{Authenticator, Identity, SecretKey};
/// use handle_resolver::wire::{Body, ChallengeBody, Message, OpCode, OpFlags, ResponseCode};
///
/// let auth = Authenticator::secret_key(
///     "300:20.500.12345/USER-SECKEY".parse::<Identity>()?,
///     SecretKey::new("public-test-secret-1"),
/// );
/// // Our request (PO cleared: it asks for non-public values) and the server's 402, whose
/// // request digest (RD) is the digest of our request.
/// let mut request = Message::resolution_request("20.500.12345/PROTECTED", vec![], vec![], 7, 1_795_537_759);
/// request.header.flags.set(OpFlags::PO, false);
/// request.header.flags.set(OpFlags::RD, true);
/// let mut challenge = Message::response_to(
///     &request,
///     ResponseCode::AuthenticationNeeded,
///     Body::Challenge(ChallengeBody::new(vec![9u8; 16])),
/// );
/// challenge.envelope.session_id = 4;
///
/// let answer = auth.answer(&challenge, &request, 8, request.header.expiration)?;
/// assert_eq!(answer.header.op_code, OpCode::ChallengeResponse);
/// assert_eq!(answer.envelope.session_id, 4); // the server's session id, echoed
/// let Body::ChallengeAnswer(body) = &answer.body else { unreachable!() };
/// assert_eq!(&body.auth_type[..], b"HS_SECKEY");
/// assert_eq!(body.signed_response[0], 0x22); // PBKDF2-HMAC-SHA1 at 2.11
///
/// // A challenge whose digest is not our request's is never answered.
/// let mut other = request.clone();
/// other.header.expiration += 1;
/// assert!(auth.answer(&challenge, &other, 8, 0).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Authenticator {
    identity: Identity,
    credentials: Credentials,
    secret_key_mac: SecretKeyMac,
}

impl Authenticator {
    /// Authenticates with a secret key (HS_SECKEY).
    pub fn secret_key(identity: Identity, key: SecretKey) -> Self {
        Self::new(identity, Credentials::SecretKey(key))
    }

    /// Authenticates with a private key (HS_PUBKEY).
    pub fn private_key(identity: Identity, key: PrivateKey) -> Self {
        Self::new(identity, Credentials::PrivateKey(Box::new(key)))
    }

    /// Authenticates with the given credentials.
    pub fn new(identity: Identity, credentials: Credentials) -> Self {
        Self {
            identity,
            credentials,
            secret_key_mac: SecretKeyMac::ForVersion,
        }
    }

    /// Uses `mac` for HS_SECKEY answers instead of the one the challenge's version calls for
    /// (the reference server checks every form it knows).
    pub fn with_secret_key_mac(mut self, mac: SecretKeyMac) -> Self {
        self.secret_key_mac = mac;
        self
    }

    /// The identity.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// `HS_SECKEY` or `HS_PUBKEY`.
    pub fn auth_type(&self) -> &'static [u8] {
        match self.credentials {
            Credentials::SecretKey(_) => HS_SECKEY,
            Credentials::PrivateKey(_) => HS_PUBKEY,
        }
    }

    /// The `signedResponse` for a checked challenge. `salt` is used by the PBKDF2 form only
    /// (the reference client draws 16 random bytes); given the captured salt, the result is
    /// the captured answer byte for byte.
    pub fn sign(
        &self,
        challenge: &Challenge,
        salt: [u8; PBKDF2_SALT_LEN],
    ) -> Result<Bytes, AuthError> {
        let data = challenge.signed_data();
        match &self.credentials {
            Credentials::SecretKey(key) => {
                let mac = match self.secret_key_mac {
                    SecretKeyMac::ForVersion => {
                        SecretKeyMac::for_version(challenge.lower_version())
                    }
                    forced => forced,
                };
                Ok(compute(mac, key, &data, salt).encode()?)
            }
            Credentials::PrivateKey(key) => {
                let hash = key.hash_for_version(challenge.version);
                let signature = key.sign(hash, &data).map_err(AuthError::Sign)?;
                let hash_algorithm: &'static [u8] = match hash {
                    HashAlgorithm::Sha256 => b"SHA-256",
                    HashAlgorithm::Sha1 => b"SHA1",
                    HashAlgorithm::Md5 => b"MD5",
                };
                Ok(PublicKeyProof {
                    hash_algorithm: Bytes::from_static(hash_algorithm),
                    signature: signature.into(),
                }
                .encode()?)
            }
        }
    }

    /// Checks `challenge` against `request` ([`Challenge::verify`]) and builds the answer
    /// message (op code 200) with a fresh random salt. `request_id` is the answer's own (a
    /// new random id, as the reference client draws), `expiration` its expiration time
    /// (the reference client: now + 12 h, so usually the request's).
    pub fn answer(
        &self,
        challenge: &Message,
        request: &Message,
        request_id: u32,
        expiration: u32,
    ) -> Result<Message, AuthError> {
        let mut salt = [0u8; PBKDF2_SALT_LEN];
        rand::rngs::OsRng.fill_bytes(&mut salt);
        self.answer_with_salt(challenge, request, request_id, expiration, salt)
    }

    /// [`Authenticator::answer`] with a given PBKDF2 salt (for reproducible answers).
    pub fn answer_with_salt(
        &self,
        challenge: &Message,
        request: &Message,
        request_id: u32,
        expiration: u32,
        salt: [u8; PBKDF2_SALT_LEN],
    ) -> Result<Message, AuthError> {
        let checked = Challenge::verify(challenge, request)?;
        let signed_response = self.sign(&checked, salt)?;
        let body = ChallengeAnswer {
            auth_type: Bytes::from_static(self.auth_type()),
            identity: ValueReference {
                handle: self.identity.handle.clone(),
                index: self.identity.index,
            },
            signed_response,
        };
        Ok(answer_message(
            &checked, request, body, request_id, expiration,
        ))
    }
}

/// The flags an answer takes from the request it answers (the reference library's
/// `takeValuesFrom`): CT, CA, AT, ENC, PO, DNR and RD. REC is always set (a request's
/// default); OVRW, MINT, CN and KC are not carried over.
const CARRIED_FLAGS: [OpFlags; 7] = [
    OpFlags::CT,
    OpFlags::CA,
    OpFlags::AT,
    OpFlags::ENC,
    OpFlags::PO,
    OpFlags::DNR,
    OpFlags::RD,
];

/// The answer message as the reference client builds it (captures-auth): op code 200, the
/// challenge's session id, the request's versions, carried flags (`CARRIED_FLAGS`) and
/// recursion count, site serial -1 (0xFFFF), no credential.
pub fn answer_message(
    challenge: &Challenge,
    request: &Message,
    body: ChallengeAnswer,
    request_id: u32,
    expiration: u32,
) -> Message {
    let mut envelope = Envelope::new(
        request.envelope.version,
        request.envelope.suggested,
        request_id,
    );
    envelope.session_id = challenge.session_id;
    let mut flags = OpFlags::REC;
    for f in CARRIED_FLAGS {
        if request.header.flags.contains(f) {
            flags = flags.with(f);
        }
    }
    Message {
        envelope,
        header: Header {
            op_code: OpCode::ChallengeResponse,
            response_code: ResponseCode::Reserved,
            flags,
            site_info_serial: 0xFFFF,
            recursion_count: request.header.recursion_count,
            reserved: 0,
            expiration,
            body_length: 0,
        },
        request_digest: None,
        body: Body::ChallengeAnswer(Box::new(body)),
        credential: None,
        signed_bytes: Bytes::new(),
    }
}
