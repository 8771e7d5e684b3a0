//! Every captured challenge answered again (captures-auth `auth.json`): the challenge checks
//! out against the captured request; with the captured salt, our HS_SECKEY answer — the whole
//! message, given the captured request id and expiration — is the captured one byte for byte;
//! so is our RSA answer; DSA answers (random `k` in the reference) are checked by verifying
//! the captured one and ours with the identity's public key. Keys are read both from the
//! reference library's key files and from PKCS#8 PEM, and must agree with the published
//! public keys.

use std::collections::BTreeSet;
use std::path::PathBuf;

use bytes::Bytes;
use handle_resolver::auth::{
    pbkdf2_derive, pbkdf2_password, verify_answer, verify_secret_key_proof, AuthError,
    Authenticator, Challenge, Identity, PrivateKey, SecretKey, VerifyError,
};
use handle_resolver::wire::json::values_from_json;
use handle_resolver::wire::verify_signature;
use handle_resolver::wire::{
    Body, HandleValue, Limits, Message, PublicKey, PublicKeyProof, SecretKeyProof,
};
use serde_json::Value;

use super::captures::auth_dir;
use crate::support::captures::{scenario, Scenario};

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap_or_else(|| panic!("not hex: {v}"))).unwrap()
}

fn identities() -> Value {
    let text = std::fs::read_to_string(auth_dir().join("keys/identities.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["identities"].clone()
}

fn key_path(rel: &Value) -> PathBuf {
    auth_dir().join(rel.as_str().unwrap())
}

/// The captured message `label` of a scenario, decrypted with the session key its
/// `decoded.json` entry publishes when it is encrypted.
fn message(sc: &Scenario, label: &str) -> Message {
    let frame = sc
        .message(label)
        .unwrap_or_else(|| panic!("{label}"))
        .frame();
    let entry = sc
        .decoded
        .iter()
        .find(|e| e["file"] == label)
        .unwrap_or_else(|| panic!("{label} not in decoded.json"));
    if entry["envelope"]["EC_encrypted"].as_bool() == Some(true) {
        let key = unhex(&entry["encryption"]["sessionKeyHex"]);
        Message::decode_encrypted(frame, &key, &Limits::default()).unwrap()
    } else {
        Message::decode(frame, &Limits::default()).unwrap()
    }
}

/// The authenticator of a captured identity, and for key identities the public key.
fn authenticator(name: &str) -> (Authenticator, Option<PublicKey>) {
    let ids = identities();
    let id = &ids[name];
    let identity = Identity::new(
        id["index"].as_u64().unwrap() as u32,
        Bytes::from(id["handle"].as_str().unwrap().to_string()),
    );
    match id["authType"].as_str().unwrap() {
        "HS_SECKEY" => {
            let secret = id["secretUtf8"].as_str().unwrap();
            let key = if id["hashedOption"].as_bool().unwrap() {
                SecretKey::hashed(secret)
            } else {
                SecretKey::new(secret)
            };
            assert_eq!(
                key.expose(),
                &unhex(&id["macKeyHex"])[..],
                "{name}: MAC key"
            );
            assert_eq!(
                &pbkdf2_password(key.expose())[..],
                &unhex(&id["pbkdf2PasswordBytesHex"])[..],
                "{name}: PBKDF2 password bytes"
            );
            (Authenticator::secret_key(identity, key), None)
        }
        "HS_PUBKEY" => {
            let k = &id["key"];
            let from_file = PrivateKey::from_file(key_path(&k["privateKeyFile_hdllib"])).unwrap();
            let from_pem = PrivateKey::from_file(key_path(&k["privateKeyFile_pkcs8_pem"])).unwrap();
            let published = std::fs::read(key_path(&k["publicKeyFile_hdllib"])).unwrap();
            assert_eq!(
                hex::encode(&published),
                k["publicKeyHdllibHex"].as_str().unwrap(),
                "{name}"
            );
            // Both readings give the key whose public half is the published HS_PUBKEY data.
            assert_eq!(
                from_file.public_key().encode().unwrap(),
                published,
                "{name}"
            );
            assert_eq!(from_pem.public_key().encode().unwrap(), published, "{name}");
            let public = PublicKey::decode(&published).unwrap();
            (
                Authenticator::private_key(identity, from_file),
                Some(public),
            )
        }
        other => panic!("{name}: auth type {other}"),
    }
}

/// Checks one exchange; returns the identity name it used (None without an answer).
fn check_exchange(sc: &Scenario, ex: &Value) -> Option<String> {
    let ctx = format!("{} {}", sc.name, ex["challengeFile"]);
    let request = message(sc, ex["originalRequestFile"].as_str().unwrap());
    let challenge = message(sc, ex["challengeFile"].as_str().unwrap());
    // The challenge ties to our request: nonce, digest, the bytes to sign.
    let checked = Challenge::verify(&challenge, &request).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(
        hex::encode(&checked.nonce),
        ex["nonceHex"].as_str().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        hex::encode(&checked.request_digest.digest),
        ex["requestDigestHex"].as_str().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        hex::encode(request.header_and_body().unwrap()),
        ex["requestDigestInputHex"].as_str().unwrap(),
        "{ctx}: digest input"
    );
    assert_eq!(
        hex::encode(checked.signed_data()),
        ex["signedOrMacedBytesHex"].as_str().unwrap(),
        "{ctx}"
    );
    assert_eq!(
        checked.session_id,
        ex["challengeSessionId"].as_u64().unwrap() as u32
    );
    // Not our request: refused before anything is signed.
    let mut other = request.clone();
    other.signed_bytes = Bytes::new();
    other.header.expiration ^= 1;
    assert_eq!(
        Challenge::verify(&challenge, &other),
        Err(AuthError::DigestMismatch),
        "{ctx}"
    );

    let answer_file = ex["answerFile"].as_str()?;
    let captured = message(sc, answer_file);
    let captured_bytes = sc.message(answer_file).unwrap().frame();
    let recompute = &ex["recompute"];
    let name = recompute["clientIdentity"].as_str().unwrap().to_string();
    let (auth, public) = authenticator(&name);
    let Body::ChallengeAnswer(captured_body) = &captured.body else {
        panic!("{ctx}: answer body {:?}", captured.body);
    };
    assert_eq!(
        hex::encode(&captured_body.signed_response),
        ex["answerSignedResponseHex"].as_str().unwrap(),
        "{ctx}"
    );
    let salt: [u8; 16] = match recompute.get("saltHex") {
        Some(s) => unhex(s).try_into().unwrap(),
        None => [0; 16],
    };
    let ours = auth
        .answer_with_salt(
            &challenge,
            &request,
            captured.request_id(),
            captured.header.expiration,
            salt,
        )
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let ours_bytes = ours.encode().unwrap();
    match &public {
        None => {
            // HS_SECKEY: every intermediate value, then the whole message byte for byte.
            let key = match auth.credentials() {
                handle_resolver::auth::Credentials::SecretKey(k) => k,
                _ => unreachable!(),
            };
            let derived = pbkdf2_derive(
                key.expose(),
                &salt,
                recompute["iterations"].as_u64().unwrap() as u32,
                recompute["keyLengthBits"].as_u64().unwrap() as u32,
            );
            assert_eq!(
                hex::encode(&derived[..]),
                recompute["derivedKeyHex"].as_str().unwrap(),
                "{ctx}"
            );
            assert_eq!(
                hex::encode(auth.sign(&checked, salt).unwrap()),
                recompute["recomputedSignedResponseHex"].as_str().unwrap(),
                "{ctx}"
            );
            assert_eq!(ours_bytes, captured_bytes, "{ctx}: answer message");
            let proof =
                SecretKeyProof::decode(&captured_body.signed_response, false, &Limits::default())
                    .unwrap();
            assert!(
                verify_secret_key_proof(&proof, key, &checked.signed_data()),
                "{ctx}"
            );
        }
        Some(public) => {
            let proof =
                PublicKeyProof::decode(&captured_body.signed_response, &Limits::default()).unwrap();
            assert_eq!(
                std::str::from_utf8(&proof.hash_algorithm).unwrap(),
                recompute["hashAlgorithmId"].as_str().unwrap(),
                "{ctx}"
            );
            // The captured signature verifies with the identity's public key; so does ours.
            let data = checked.signed_data();
            let verifies = verify_signature(public, &proof.hash_algorithm, &proof.signature, &data);
            assert_eq!(verifies, Ok(()), "{ctx}: captured signature");
            if name == "rsa_wrongkey" {
                // The key the server holds for 300:20.500.12345/USER-RSA does not verify it:
                // the 403 AUTHENTICATION_FAILED that followed.
                let (_, stored) = authenticator("rsa");
                let stored = stored.unwrap();
                assert!(
                    verify_signature(&stored, &proof.hash_algorithm, &proof.signature, &data)
                        .is_err()
                );
            }
            let Body::ChallengeAnswer(our_body) = &ours.body else {
                unreachable!()
            };
            let our_proof =
                PublicKeyProof::decode(&our_body.signed_response, &Limits::default()).unwrap();
            assert_eq!(our_proof.hash_algorithm, proof.hash_algorithm, "{ctx}");
            assert_eq!(
                verify_signature(
                    public,
                    &our_proof.hash_algorithm,
                    &our_proof.signature,
                    &data
                ),
                Ok(()),
                "{ctx}: our signature"
            );
            if matches!(public, PublicKey::Rsa(_)) {
                // PKCS#1 v1.5 is deterministic: the captured answer, byte for byte.
                assert_eq!(
                    hex::encode(&our_proof.signature),
                    recompute["recomputedSignatureHex"].as_str().unwrap(),
                    "{ctx}"
                );
                assert_eq!(ours_bytes, captured_bytes, "{ctx}: answer message");
            } else {
                // DSA: everything but the signature is the captured message.
                let mut same = ours.clone();
                same.body = captured.body.clone();
                assert_eq!(
                    same.encode().unwrap(),
                    captured_bytes,
                    "{ctx}: answer message"
                );
                assert_eq!(
                    hex::encode(&proof.signature),
                    recompute["signatureHex"].as_str().unwrap()
                );
            }
        }
    }
    Some(name)
}

#[test]
fn every_captured_challenge_is_answered_as_the_reference_did() {
    let mut dirs: Vec<String> = std::fs::read_dir(auth_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("auth.json").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut identities_used = BTreeSet::new();
    let (mut challenges, mut answers) = (0, 0);
    for name in &dirs {
        let sc = scenario("captures-auth", name);
        let text = std::fs::read_to_string(sc.dir.join("auth.json")).unwrap();
        let auth: Value = serde_json::from_str(&text).unwrap();
        for ex in auth["exchanges"].as_array().unwrap() {
            challenges += 1;
            if let Some(id) = check_exchange(&sc, ex) {
                answers += 1;
                identities_used.insert(id);
            }
        }
    }
    // Every answering identity of the README's table appears (`none` never answers).
    let expected: BTreeSet<String> = [
        "dsa",
        "dsa1024",
        "ghost",
        "norights",
        "rsa",
        "rsa_wrongkey",
        "seckey",
        "seckey_hashed",
        "seckey_nonascii",
        "seckey_wrong",
        "unknown",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(identities_used, expected);
    assert!(
        challenges > answers && answers >= 45,
        "{challenges} challenges, {answers} answers"
    );
}

/// The value the server stores for an identity (`handles.json`, the state when the run
/// started), or `None` when the identity's handle or index does not exist.
fn stored_value(handle: &[u8], index: u32) -> Option<HandleValue> {
    let text = std::fs::read_to_string(auth_dir().join("handles.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let record = doc.get(std::str::from_utf8(handle).unwrap())?;
    let values = values_from_json(&record["values"], &Limits::default()).unwrap();
    values.into_iter().find(|v| v.index == index)
}

/// The server's side: every captured answer checked against the identity's stored value
/// agrees with what the reference server answered (1, 403, or 400 for a valid answer from
/// an identity without rights).
#[test]
fn every_captured_answer_verifies_as_the_reference_server_decided() {
    let mut outcomes = BTreeSet::new();
    for entry in std::fs::read_dir(auth_dir()).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("auth.json").is_file() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let sc = scenario("captures-auth", &name);
        let auth: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("auth.json")).unwrap()).unwrap();
        for ex in auth["exchanges"].as_array().unwrap() {
            let Some(answer_file) = ex["answerFile"].as_str() else {
                continue;
            };
            let request = message(&sc, ex["originalRequestFile"].as_str().unwrap());
            let challenge = message(&sc, ex["challengeFile"].as_str().unwrap());
            let checked = Challenge::verify(&challenge, &request).unwrap();
            let answer = message(&sc, answer_file);
            let Body::ChallengeAnswer(body) = &answer.body else {
                panic!("{name}")
            };
            let code = ex["finalResponseCode"].as_u64().unwrap();
            let who = recompute_name(ex);
            let result = stored_value(&body.identity.handle, body.identity.index)
                .map(|v| verify_answer(body, &checked, &v, &Limits::default()));
            match (who.as_str(), code, &result) {
                // Authenticated: the operation's own outcome followed (1, or 100, 200, 201
                // for the admin error cases); or valid but without rights (norights).
                (_, c, Some(Ok(()))) if c != 400 && c != 403 => {}
                ("norights", 400, Some(Ok(()))) => {}
                ("seckey_wrong", 403, Some(Err(VerifyError::Mismatch))) => {}
                ("rsa_wrongkey", 403, Some(Err(VerifyError::Signature(_)))) => {}
                // No such identity: nothing to verify against.
                ("ghost", 403, None) | ("unknown", 400, None) => {}
                other => panic!("{name} {answer_file}: {other:?}"),
            }
            outcomes.insert((who, code));
        }
    }
    assert!(outcomes.len() >= 11, "{outcomes:?}");
}

fn recompute_name(ex: &Value) -> String {
    ex["recompute"]["clientIdentity"]
        .as_str()
        .unwrap()
        .to_string()
}
