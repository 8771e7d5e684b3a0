//! The server's side of a challenge, sans-IO: check an answer against the identity's stored
//! key value (what a handle server, or this crate's test server, does on op code 200).

use thiserror::Error;

use super::answer::Challenge;
use super::secret::{verify_secret_key_proof, SecretKey};
use crate::wire::body::{HS_PUBKEY, HS_SECKEY};
use crate::wire::signature::{verify_signature, SignatureError};
use crate::wire::{
    ChallengeAnswer, DecodeError, HandleValue, Limits, PublicKey, PublicKeyProof, SecretKeyProof,
};

/// Why an answer does not authenticate its identity (a server answers 403
/// AUTHENTICATION_FAILED to each).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The answer's authentication type does not match the stored value's type.
    #[error("answer of type {answer:?} for a {stored:?} value")]
    WrongType {
        /// The answer's `authType`.
        answer: String,
        /// The stored value's type.
        stored: String,
    },
    /// The `signedResponse` does not parse.
    #[error(transparent)]
    Malformed(#[from] DecodeError),
    /// The stored HS_PUBKEY value is not a usable key, or the signature does not verify.
    #[error(transparent)]
    Signature(#[from] SignatureError),
    /// The MAC is not the MAC of the stored secret.
    #[error("the MAC does not match the stored secret")]
    Mismatch,
}

/// Checks `answer` to `challenge` against `stored`, the identity's HS_SECKEY or HS_PUBKEY
/// value (at the index the answer names). HS_SECKEY: any MAC form the reference server knows
/// (the bare MD5 when the challenge's lower version is below 2.1); HS_PUBKEY: the signature
/// over `nonce ‖ request digest` with the hash it names. The caller has already checked that
/// the identity may do what the request asks (the reference server answers 400
/// INVALID_ADMIN before it looks at the answer).
pub fn verify_answer(
    answer: &ChallengeAnswer,
    challenge: &Challenge,
    stored: &HandleValue,
    limits: &Limits,
) -> Result<(), VerifyError> {
    let data = challenge.signed_data();
    let wrong_type = || VerifyError::WrongType {
        answer: String::from_utf8_lossy(&answer.auth_type).into_owned(),
        stored: stored.type_str().into_owned(),
    };
    if answer.auth_type.as_ref() == HS_SECKEY && stored.is_type("HS_SECKEY") {
        let legacy = !challenge.lower_version().at_least(2, 1);
        let proof = SecretKeyProof::decode(&answer.signed_response, legacy, limits)?;
        let key = SecretKey::new(&stored.data);
        if verify_secret_key_proof(&proof, &key, &data) {
            Ok(())
        } else {
            Err(VerifyError::Mismatch)
        }
    } else if answer.auth_type.as_ref() == HS_PUBKEY && stored.is_type("HS_PUBKEY") {
        let proof = PublicKeyProof::decode(&answer.signed_response, limits)?;
        let key = PublicKey::decode_bytes(&stored.data)?;
        verify_signature(&key, &proof.hash_algorithm, &proof.signature, &data)?;
        Ok(())
    } else {
        Err(wrong_type())
    }
}
