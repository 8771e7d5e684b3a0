//! Authentication: private-key files, challenges checked and answered, answers verified
//! (`auth::PrivateKey::from_bytes`, `from_reference_file_with_passphrase`,
//! `Challenge::verify`, `Authenticator::answer_with_salt`, `verify_answer`).
//!
//! Input: byte 0 the mode; `mode & 3` picks the decoder, `mode >> 2` an identity of
//! `captures-auth` (`keys/`, the README's secrets):
//! - 0: the rest is a key file for `PrivateKey::from_bytes` (PEM, DER PKCS#8 or the reference
//!   library's file);
//! - 1: the rest is a reference key file for `from_reference_file_with_passphrase`, with
//!   the passphrase of `fixtures/auth/dsa1024_privkey_encrypted.bin`;
//! - 2: `int2 n ‖ request (n bytes) ‖ challenge`, two whole messages: the challenge is
//!   checked against the request and answered as identity `AUTHS[(mode >> 2) % 8]`;
//! - 3: `int2 n ‖ challenge (n bytes) ‖ answer`, two whole messages: the answer is verified
//!   against the stored value `STORED[(mode >> 2) % 6]` for the challenge the message
//!   issued (its nonce, request digest, versions and session id).
//!
//! PBKDF2 costs a hash per iteration and the count is the input's: key files and HS_SECKEY
//! answers with more than 100 iterations (and at most `MAX_PBKDF2_ITERATIONS`, above which
//! they are refused before any work) are skipped, and the seeds use 16. For the same reason
//! `ForVersion` HS_SECKEY answers at 2.7 and later (PBKDF2, 10,000 iterations) are checked
//! but not signed.
//!
//! Properties: nothing panics, and
//! - key files: a reference file is read by its scheme word: 1 as the key encoding after it
//!   (a passphrase changes nothing), 0 and 2 to 4 need a passphrase (`NeedsPassphrase`; with
//!   one, 0, 2 and 3 are `EncryptedScheme`), others are `UnknownScheme`; a decrypted file
//!   has sane parameters; a key that reads has a public key that encodes and decodes to
//!   itself, and signs (with the hash of 2.11, or of 2.6 for a file of odd length) what
//!   that public key verifies, and only that;
//! - challenges: `Challenge::verify` accepts exactly the RC 402 challenges with a challenge
//!   body, the request's op code, a 16-byte nonce and a request digest (RD, else the 2.0
//!   body's MD5) equal to the digest of the request's header and body, computed here; an
//!   answer is given exactly when the check passes (so never when the digest differs), is
//!   op code 200 with the challenge's session id, the identity and its auth type, encodes
//!   and decodes to itself, and `verify_answer` accepts it against the identity's stored
//!   value (a forced MAC only at the versions whose layout it has);
//! - answers: `verify_answer` refuses an auth type that is not the stored value's type
//!   (`WrongType`); an answer it accepts is refused for another nonce, another request
//!   digest and another stored key of the same type (for an HS_PUBKEY value, where each
//!   check is a public-key operation, one of the three per input, by its length).
#![no_main]

use std::sync::OnceLock;

use bytes::Bytes;
use handle_resolver::auth::{
    verify_answer, Authenticator, Challenge, KeyFileError, PrivateKey, SecretKey, SecretKeyMac,
    VerifyError, MAX_PBKDF2_ITERATIONS, NONCE_LEN, PBKDF2_SALT_LEN,
};
use handle_resolver::wire::{verify_signature, HashAlgorithm};
use handle_resolver::wire::{
    Body, DigestAlgorithm, HandleValue, Limits, Message, OpCode, ProtocolVersion, PublicKey,
    Reader, RequestDigest, ResponseCode, SecretKeyProof,
};
use libfuzzer_sys::fuzz_target;
use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};

/// The passphrase of `fixtures/auth/dsa1024_privkey_encrypted.bin` (and of the seeds).
const PASSPHRASE: &str = "grüße-päss-ß-3";
/// The most PBKDF2 iterations run (see the module doc).
const MAX_ITERATIONS_RUN: u32 = 100;

fn pubkey(data: &'static [u8]) -> HandleValue {
    HandleValue::new(300, "HS_PUBKEY", data)
}

fn seckey(data: &'static str) -> HandleValue {
    HandleValue::new(300, "HS_SECKEY", data)
}

/// The stored values of `captures-auth`'s identities, each with another value of its type
/// (a wrong secret, another key) that must not verify the same answer.
fn stored() -> &'static [(HandleValue, HandleValue); 6] {
    static STORED: OnceLock<[(HandleValue, HandleValue); 6]> = OnceLock::new();
    STORED.get_or_init(|| {
        let rsa = pubkey(include_bytes!(
            "../../fixtures/reference/captures-auth/keys/rsa_pubkey.bin"
        ));
        let rsa_wrong = pubkey(include_bytes!(
            "../../fixtures/reference/captures-auth/keys/rsa_wrongkey_pubkey.bin"
        ));
        let dsa = pubkey(include_bytes!(
            "../../fixtures/reference/captures-auth/keys/dsa_pubkey.bin"
        ));
        let dsa1024 = pubkey(include_bytes!(
            "../../fixtures/reference/captures-auth/keys/dsa1024_pubkey.bin"
        ));
        [
            (
                seckey("public-test-secret-1"),
                seckey("public-WRONG-secret"),
            ),
            // The hashed form's key is the hex SHA-1 of the secret, not the secret.
            (
                seckey("e364736501d566a59b5ba29abebea20a7546be96"),
                seckey("public-hashed-password-2"),
            ),
            (seckey(PASSPHRASE), seckey("grusse-pass-ss-3")),
            (rsa, rsa_wrong),
            (dsa.clone(), dsa1024.clone()),
            (dsa1024, dsa),
        ]
    })
}

/// The identities that answer (mode 2), each with its index in [`stored`].
fn auths() -> &'static [(Authenticator, usize); 8] {
    static AUTHS: OnceLock<[(Authenticator, usize); 8]> = OnceLock::new();
    AUTHS.get_or_init(|| {
        let id = |s: &str| s.parse().expect("an identity");
        let key = |bytes: &[u8]| PrivateKey::from_bytes(bytes).expect("a captured key file");
        let secret = |mac| {
            Authenticator::secret_key(
                id("300:20.500.12345/USER-SECKEY"),
                SecretKey::new("public-test-secret-1"),
            )
            .with_secret_key_mac(mac)
        };
        [
            (secret(SecretKeyMac::ForVersion), 0),
            (
                Authenticator::secret_key(
                    id("301:20.500.12345/USER-SECKEY"),
                    SecretKey::hashed("public-hashed-password-2"),
                )
                .with_secret_key_mac(SecretKeyMac::HmacSha256),
                1,
            ),
            (
                Authenticator::secret_key(
                    id("302:20.500.12345/USER-SECKEY"),
                    SecretKey::new(PASSPHRASE),
                )
                .with_secret_key_mac(SecretKeyMac::Sha256),
                2,
            ),
            (secret(SecretKeyMac::HmacSha1), 0),
            (secret(SecretKeyMac::LegacyMd5), 0),
            (
                Authenticator::private_key(
                    id("300:20.500.12345/USER-RSA"),
                    key(include_bytes!(
                        "../../fixtures/reference/captures-auth/keys/rsa_privkey.bin"
                    )),
                ),
                3,
            ),
            (
                Authenticator::private_key(
                    id("300:20.500.12345/USER-DSA"),
                    key(include_bytes!(
                        "../../fixtures/reference/captures-auth/keys/dsa_priv.pem"
                    )),
                ),
                4,
            ),
            (
                Authenticator::private_key(
                    id("300:20.500.12345/USER-DSA1024"),
                    key(include_bytes!(
                        "../../fixtures/reference/captures-auth/keys/dsa1024_privkey.bin"
                    )),
                ),
                5,
            ),
        ]
    })
}

/// A key that reads: its public key round-trips, and it signs what that key verifies (with
/// the hash of 2.11 or, for odd `pick`, of 2.6: one signature per input, as signing costs).
fn check_key(key: &PrivateKey, pick: usize) {
    let public = key.public_key();
    let encoded = public.encode().expect("a key's public key encodes");
    assert_eq!(
        PublicKey::decode_bytes(&encoded).expect("and decodes"),
        public
    );
    let data = b"nonce and request digest";
    let version = if pick.is_multiple_of(2) {
        ProtocolVersion::V2_11
    } else {
        ProtocolVersion::new(2, 6)
    };
    let hash = key.hash_for_version(version);
    let name: &[u8] = match hash {
        HashAlgorithm::Sha256 => b"SHA-256",
        HashAlgorithm::Sha1 => b"SHA1",
        HashAlgorithm::Md5 => b"MD5",
    };
    let Ok(signature) = key.sign(hash, data) else {
        return;
    };
    verify_signature(&public, name, &signature, data).expect("its own signature verifies");
    assert!(verify_signature(&public, name, &signature, b"other data").is_err());
}

/// An error of the key encoding itself (not of the file's scheme or encryption).
fn encoding_error(e: &KeyFileError) -> bool {
    matches!(
        e,
        KeyFileError::Decode(_) | KeyFileError::UnsupportedKeyType(_) | KeyFileError::InvalidKey(_)
    )
}

/// `int4` at the front, if there are four bytes.
fn int4(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
}

fn key_file(file: &[u8]) {
    let got = PrivateKey::from_bytes(file);
    let trimmed = file.trim_ascii_start();
    if !trimmed.starts_with(b"-----BEGIN") && trimmed.first() != Some(&0x30) {
        // The reference library's file, read by its scheme word.
        match int4(file) {
            None => assert!(matches!(got, Err(KeyFileError::Decode(_))), "{got:?}"),
            // The key encoding after the word (read again only for a key: reading costs).
            Some(1) => match &got {
                Ok(key) => assert_eq!(
                    PrivateKey::from_reference_encoding(&file[4..])
                        .map(|k| k.public_key())
                        .as_ref(),
                    Ok(&key.public_key())
                ),
                Err(e) => assert!(encoding_error(e), "{e:?}"),
            },
            Some(s @ (0 | 2..=4)) => {
                assert_eq!(got.as_ref().err(), Some(&KeyFileError::NeedsPassphrase(s)))
            }
            Some(s) => assert_eq!(got.as_ref().err(), Some(&KeyFileError::UnknownScheme(s))),
        }
    }
    if let Ok(key) = got {
        check_key(&key, file.len());
    }
}

/// The PBKDF2 iteration count of a scheme-4 key file, if it gets that far.
fn key_file_iterations(file: &[u8]) -> Option<u32> {
    let mut r = Reader::new(Bytes::copy_from_slice(file));
    r.u32("scheme").ok()?;
    r.bytes("salt", 1024).ok()?;
    r.u32("iterations").ok()
}

fn key_file_with_passphrase(file: &[u8]) {
    let scheme = int4(file);
    let iterations = key_file_iterations(file);
    if scheme == Some(4)
        && iterations.is_some_and(|n| n > MAX_ITERATIONS_RUN && n <= MAX_PBKDF2_ITERATIONS)
    {
        return;
    }
    let got = PrivateKey::from_reference_file_with_passphrase(file, PASSPHRASE.as_bytes());
    match scheme {
        None => assert!(matches!(got, Err(KeyFileError::Decode(_))), "{got:?}"),
        Some(1) => match &got {
            Ok(key) => assert_eq!(
                PrivateKey::from_reference_file(file)
                    .map(|k| k.public_key())
                    .as_ref(),
                Ok(&key.public_key())
            ),
            Err(e) => assert!(encoding_error(e), "{e:?}"),
        },
        Some(s @ (0 | 2 | 3)) => {
            assert_eq!(got.as_ref().err(), Some(&KeyFileError::EncryptedScheme(s)))
        }
        Some(4) => {
            if got.is_ok() {
                let n = iterations.expect("a decrypted file has its iterations");
                assert!((1..=MAX_PBKDF2_ITERATIONS).contains(&n));
            }
        }
        Some(s) => assert_eq!(got.as_ref().err(), Some(&KeyFileError::UnknownScheme(s))),
    }
    if let Ok(key) = got {
        check_key(&key, file.len());
    }
}

/// `int2 n ‖ first (n bytes) ‖ second`, both decoded.
fn two_messages(rest: &[u8], limits: &Limits) -> Option<(Message, Message)> {
    let (n, rest) = rest.split_first_chunk::<2>()?;
    let n = usize::from(u16::from_be_bytes(*n));
    if n > rest.len() {
        return None;
    }
    let (a, b) = rest.split_at(n);
    let a = Message::decode(Bytes::copy_from_slice(a), limits).ok()?;
    let b = Message::decode(Bytes::copy_from_slice(b), limits).ok()?;
    Some((a, b))
}

/// The digest of `data` with `algorithm`, computed here.
fn digest(algorithm: DigestAlgorithm, data: &[u8]) -> Option<Vec<u8>> {
    Some(match algorithm {
        DigestAlgorithm::Md5 | DigestAlgorithm::LegacyMd5 => Md5::digest(data).to_vec(),
        DigestAlgorithm::Sha1 => Sha1::digest(data).to_vec(),
        DigestAlgorithm::Sha256 => Sha256::digest(data).to_vec(),
        DigestAlgorithm::Other(_) => return None,
    })
}

/// The request digest a challenge carries: RD's, else the 2.0 body's (MD5).
fn carried_digest(challenge: &Message) -> Option<RequestDigest> {
    let Body::Challenge(body) = &challenge.body else {
        return None;
    };
    challenge.request_digest.clone().or_else(|| {
        body.legacy_digest.clone().map(|digest| RequestDigest {
            algorithm: DigestAlgorithm::LegacyMd5,
            digest,
        })
    })
}

/// The smaller of a message's version and suggested version.
fn lower_version(m: &Message) -> ProtocolVersion {
    let (v, s) = (m.envelope.version, m.envelope.suggested);
    if v.at_least(s.major, s.minor) {
        s
    } else {
        v
    }
}

fn challenge(rest: &[u8], who: usize, limits: &Limits) {
    let Some((request, challenge)) = two_messages(rest, limits) else {
        return;
    };
    let checked = Challenge::verify(&challenge, &request);
    // The check, field by field.
    let expected = match &challenge.body {
        Body::Challenge(body)
            if challenge.header.response_code == ResponseCode::AuthenticationNeeded
                && challenge.header.op_code.code() == request.header.op_code.code()
                && body.nonce.len() == NONCE_LEN =>
        {
            let ours = request.header_and_body().ok();
            carried_digest(&challenge).filter(|d| {
                ours.as_ref()
                    .and_then(|hb| digest(d.algorithm, hb))
                    .is_some_and(|ours| ours == d.digest)
            })
        }
        _ => None,
    };
    let checked = match (checked, expected) {
        (Ok(c), Some(d)) => {
            assert_eq!(c.request_digest, d);
            let Body::Challenge(body) = &challenge.body else {
                unreachable!()
            };
            assert_eq!(c.nonce, body.nonce);
            assert_eq!(c.session_id, challenge.envelope.session_id);
            assert_eq!(c.version, challenge.envelope.version);
            assert_eq!(c.suggested, challenge.envelope.suggested);
            Some(c)
        }
        (Err(_), None) => None,
        (got, expected) => panic!("verify gave {got:?}, expected: {expected:?}"),
    };

    let who = who % auths().len();
    let (auth, stored_at) = &auths()[who];
    let pbkdf2 = who == 0 && lower_version(&challenge).at_least(2, 7);
    if pbkdf2 && checked.is_some() {
        return;
    }
    let salt = [0x55; PBKDF2_SALT_LEN];
    let answer = auth.answer_with_salt(&challenge, &request, 0x1234_5678, 1_795_537_759, salt);
    let (answer, checked) = match (answer, checked) {
        (Ok(a), Some(c)) => (a, c),
        (Err(_), None) => return,
        (Ok(_), None) => panic!("a challenge that does not check was answered"),
        (Err(e), Some(_)) => {
            // Signing may refuse (MD5 with DSA is refused, never offered here).
            panic!("a checked challenge was not answered: {e:?}")
        }
    };
    assert_eq!(answer.header.op_code, OpCode::ChallengeResponse);
    assert_eq!(answer.envelope.session_id, challenge.envelope.session_id);
    assert_eq!(answer.envelope.request_id, 0x1234_5678);
    let Body::ChallengeAnswer(body) = &answer.body else {
        panic!("an answer without an answer body")
    };
    assert_eq!(&body.auth_type[..], auth.auth_type());
    assert_eq!(body.identity.handle, auth.identity().handle);
    assert_eq!(body.identity.index, auth.identity().index);
    let encoded = answer.encode().expect("an answer encodes");
    let back = Message::decode(encoded, limits).expect("and decodes");
    assert_eq!(back.body, answer.body);
    // The server's check of our answer. A forced MAC has the layout of its versions only:
    // the bare MD5 below 2.1, a coded MAC from 2.1.
    let legacy = !checked.lower_version().at_least(2, 1);
    let layout_fits = match who {
        4 => legacy,
        1..=3 => !legacy,
        _ => true,
    };
    let verified = verify_answer(body, &checked, &stored()[*stored_at].0, limits);
    assert_eq!(verified.is_ok(), layout_fits, "{verified:?}");
}

/// True when an HS_SECKEY answer asks for more PBKDF2 iterations than are run here (but not
/// so many that they are refused at once).
fn too_slow(
    answer: &handle_resolver::wire::ChallengeAnswer,
    c: &Challenge,
    limits: &Limits,
) -> bool {
    let legacy = !c.lower_version().at_least(2, 1);
    matches!(
        SecretKeyProof::decode(&answer.signed_response, legacy, limits),
        Ok(SecretKeyProof::Pbkdf2 { iterations, .. })
            if iterations > MAX_ITERATIONS_RUN && iterations <= MAX_PBKDF2_ITERATIONS
    )
}

fn answer(rest: &[u8], which: usize, limits: &Limits) {
    let Some((challenge, answer)) = two_messages(rest, limits) else {
        return;
    };
    let (Body::Challenge(body), Some(digest), Body::ChallengeAnswer(answer)) =
        (&challenge.body, carried_digest(&challenge), &answer.body)
    else {
        return;
    };
    let issued = Challenge::issued(
        body.nonce.clone(),
        digest,
        challenge.envelope.version,
        challenge.envelope.suggested,
        challenge.envelope.session_id,
    );
    if too_slow(answer, &issued, limits) {
        return;
    }
    let (stored, wrong) = &stored()[which % stored().len()];
    let got = verify_answer(answer, &issued, stored, limits);
    let same_type = (&answer.auth_type[..] == b"HS_SECKEY" && stored.is_type("HS_SECKEY"))
        || (&answer.auth_type[..] == b"HS_PUBKEY" && stored.is_type("HS_PUBKEY"));
    if !same_type {
        assert!(matches!(got, Err(VerifyError::WrongType { .. })), "{got:?}");
        return;
    }
    if got.is_err() {
        return;
    }
    // Accepted: bound to the stored key, the nonce and the request digest. A public-key
    // check costs: for HS_PUBKEY one of the three per input (by the input's length).
    let pick = if stored.is_type("HS_PUBKEY") {
        Some(rest.len() % 3)
    } else {
        None
    };
    if pick.is_none_or(|p| p == 0) {
        assert!(
            verify_answer(answer, &issued, wrong, limits).is_err(),
            "an answer verified under another key"
        );
    }
    if pick.is_none_or(|p| p == 1) {
        let mut other_nonce = issued.clone();
        let mut nonce = other_nonce.nonce.to_vec();
        match nonce.first_mut() {
            Some(b) => *b ^= 1,
            None => nonce.push(0),
        }
        other_nonce.nonce = Bytes::from(nonce);
        assert!(
            verify_answer(answer, &other_nonce, stored, limits).is_err(),
            "an answer verified for another nonce"
        );
    }
    if pick.is_none_or(|p| p == 2) {
        let mut other_digest = issued.clone();
        let mut d = other_digest.request_digest.digest.to_vec();
        match d.last_mut() {
            Some(b) => *b ^= 1,
            None => d.push(0),
        }
        other_digest.request_digest.digest = Bytes::from(d);
        assert!(
            verify_answer(answer, &other_digest, stored, limits).is_err(),
            "an answer verified for another request"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let limits = Limits::default();
    let who = usize::from(mode >> 2);
    match mode & 3 {
        0 => key_file(rest),
        1 => key_file_with_passphrase(rest),
        2 => challenge(rest, who, &limits),
        _ => answer(rest, who, &limits),
    }
});
