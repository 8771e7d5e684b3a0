//! The facts of answering a challenge that are easy to miss, and bad input, each on
//! hand-built messages (the captured exchanges are replayed in `proto-tests/auth`).

use bytes::Bytes;
use md5::{Digest, Md5};
use sha1::Sha1;

use super::*;
use crate::wire::challenge::{mac_code, PublicKeyProof, SecretKeyProof};
use crate::wire::signature::{verify_signature, HashAlgorithm};
use crate::wire::{
    Body, ChallengeBody, DigestAlgorithm, ErrorBody, Limits, Message, OpFlags, ProtocolVersion,
    RequestDigest, ResponseCode,
};

fn keys_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference/captures-auth/keys")
}

fn seckey() -> Authenticator {
    Authenticator::secret_key(
        "300:20.500.12345/USER-SECKEY".parse().unwrap(),
        SecretKey::new("public-test-secret-1"),
    )
}

/// A PO-cleared resolution request at `version`, as sent.
fn request(version: ProtocolVersion) -> Message {
    let mut m = Message::resolution_request(
        "20.500.12345/PROTECTED",
        vec![],
        vec![],
        0x3000_0001,
        1_795_537_759,
    );
    m.envelope.version = version;
    m.envelope.suggested = version;
    m.envelope.raw_flags = [version.major, version.minor];
    m.header.flags.set(OpFlags::PO, false);
    m
}

/// The server's 402 to `req`, with its request digest (RD) for the version, session 77.
fn challenge_to(req: &Message, nonce: &[u8]) -> Message {
    let mut probe = req.clone();
    probe.header.flags.set(OpFlags::RD, true);
    let mut c = Message::response_to(
        &probe,
        ResponseCode::AuthenticationNeeded,
        Body::Challenge(ChallengeBody::new(Bytes::copy_from_slice(nonce))),
    );
    // The digest is of the request as sent (without RD).
    c.request_digest = RequestDigest::compute(
        DigestAlgorithm::for_version(req.envelope.version),
        &req.header_and_body().unwrap(),
    );
    c.envelope.session_id = 77;
    c.envelope.version = req.envelope.version;
    c.envelope.suggested = req.envelope.suggested;
    c
}

fn answer_body(m: &Message) -> &crate::wire::ChallengeAnswer {
    match &m.body {
        Body::ChallengeAnswer(b) => b,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_answer_echoes_the_session_id_and_has_no_handle_field() {
    let req = request(ProtocolVersion::V2_11);
    let ch = challenge_to(&req, &[5; 16]);
    let a = seckey()
        .answer(&ch, &req, 0x4000_0002, 1_795_537_760)
        .unwrap();
    assert_eq!(a.envelope.session_id, 77);
    assert_eq!(a.envelope.request_id, 0x4000_0002);
    assert_eq!(a.header.site_info_serial, 0xFFFF);
    let bytes = a.encode().unwrap();
    // Body right after the 20 + 24 header bytes: int4 9 "HS_SECKEY", then the identity
    // handle; no handle of the request (nor "/") comes first.
    assert_eq!(&bytes[44..48], &[0, 0, 0, 9]);
    assert_eq!(&bytes[48..57], b"HS_SECKEY");
    assert_eq!(&bytes[57..61], &[0, 0, 0, 24]);
    assert_eq!(&bytes[61..85], b"20.500.12345/USER-SECKEY");
    assert_eq!(&bytes[85..89], &300u32.to_be_bytes());
    let back = Message::decode(bytes, &Limits::default()).unwrap();
    assert_eq!(back.body, a.body);
}

#[test]
fn a_non_ascii_secret_is_utf8_encoded_twice_for_pbkdf2() {
    // README of captures-auth, identity seckey_nonascii: secret "grüße-päss-ß-3", UTF-8
    // 6772c3bcc39f652d70c3a473732dc39f2d33, PBKDF2 password bytes
    // 6772c383c2bcc383c29f652d70c383c2a473732dc383c29f2d33.
    let key = SecretKey::new("grüße-päss-ß-3");
    assert_eq!(
        hex::encode(key.expose()),
        "6772c3bcc39f652d70c3a473732dc39f2d33"
    );
    assert_eq!(
        hex::encode(&pbkdf2_password(key.expose())[..]),
        "6772c383c2bcc383c29f652d70c383c2a473732dc383c29f2d33"
    );
    // So the derived key differs from PBKDF2 over the plain UTF-8 bytes.
    let salt = [1u8; 16];
    let ours = pbkdf2_derive(key.expose(), &salt, 2, 160);
    let mut plain = [0u8; 20];
    pbkdf2::pbkdf2_hmac::<Sha1>(key.expose(), &salt, 2, &mut plain);
    assert_ne!(&ours[..], &plain[..]);
}

#[test]
fn the_hashed_form_is_the_lower_case_hex_sha1() {
    let k = SecretKey::hashed("public-hashed-password-2");
    assert_eq!(
        std::str::from_utf8(k.expose()).unwrap(),
        hex::encode(Sha1::digest(b"public-hashed-password-2"))
    );
    // README: e364736501d566a59b5ba29abebea20a7546be96.
    assert_eq!(k.expose(), b"e364736501d566a59b5ba29abebea20a7546be96");
}

#[test]
fn the_mac_follows_the_lower_of_message_and_suggested_version() {
    let nonce = [3u8; 16];
    for (version, suggested, code) in [
        (
            ProtocolVersion::V2_11,
            ProtocolVersion::V2_11,
            Some(mac_code::PBKDF2_HMAC_SHA1),
        ),
        (
            ProtocolVersion::new(2, 7),
            ProtocolVersion::V2_11,
            Some(mac_code::PBKDF2_HMAC_SHA1),
        ),
        (
            ProtocolVersion::new(2, 6),
            ProtocolVersion::new(2, 6),
            Some(mac_code::SHA1),
        ),
        // A 2.11 message that suggests 2.5: the lower version (2.5) chooses SHA-1.
        (
            ProtocolVersion::V2_11,
            ProtocolVersion::new(2, 5),
            Some(mac_code::SHA1),
        ),
        (
            ProtocolVersion::V2_1,
            ProtocolVersion::V2_1,
            Some(mac_code::SHA1),
        ),
    ] {
        let mut req = request(version);
        req.envelope.suggested = suggested;
        req.envelope.raw_flags = [suggested.major, suggested.minor];
        let mut ch = challenge_to(&req, &nonce);
        ch.envelope.suggested = suggested;
        let checked = Challenge::verify(&ch, &req).unwrap();
        let signed = seckey().sign(&checked, [0; 16]).unwrap();
        let proof = SecretKeyProof::decode(&signed, false, &Limits::default()).unwrap();
        assert_eq!(proof.code(), code, "{version} suggesting {suggested}");
        assert!(verify_secret_key_proof(
            &proof,
            &SecretKey::new("public-test-secret-1"),
            &checked.signed_data()
        ));
        if code == Some(mac_code::SHA1) {
            // SHA-1(key ‖ nonce ‖ digest ‖ key).
            let mut h = Sha1::new();
            h.update(b"public-test-secret-1");
            h.update(checked.signed_data());
            h.update(b"public-test-secret-1");
            assert_eq!(proof.mac().as_ref(), h.finalize().as_slice());
        }
    }
}

#[test]
fn a_2_0_challenge_carries_its_md5_digest_after_the_nonce_and_gets_a_bare_md5() {
    let v20 = ProtocolVersion::new(2, 0);
    let req = request(v20);
    let nonce = [8u8; 16];
    let digest = Md5::digest(req.header_and_body().unwrap());
    // 2.0 layout: int4 16 ‖ nonce ‖ int4 16 ‖ MD5 digest, no RD prefix.
    let mut ch = Message::response_to(
        &req,
        ResponseCode::AuthenticationNeeded,
        Body::Challenge(ChallengeBody {
            nonce: Bytes::copy_from_slice(&nonce),
            legacy_digest: Some(Bytes::copy_from_slice(&digest)),
        }),
    );
    ch.envelope.version = v20;
    ch.envelope.suggested = v20;
    let wire = ch.encode().unwrap();
    let back = Message::decode(wire, &Limits::default()).unwrap();
    let a = seckey().answer(&back, &req, 1, 2).unwrap();
    let signed = &answer_body(&a).signed_response;
    let mut h = Md5::new();
    h.update(b"public-test-secret-1");
    h.update(nonce);
    h.update(digest);
    h.update(b"public-test-secret-1");
    assert_eq!(signed.as_ref(), h.finalize().as_slice());
}

#[test]
fn a_forced_hmac_is_sent_with_its_code() {
    let req = request(ProtocolVersion::V2_11);
    let ch = challenge_to(&req, &[1; 16]);
    for (mac, code) in [
        (SecretKeyMac::HmacSha256, mac_code::HMAC_SHA256),
        (SecretKeyMac::HmacSha1, mac_code::HMAC_SHA1),
        (SecretKeyMac::Sha256, mac_code::SHA256),
        (SecretKeyMac::Md5, mac_code::MD5),
    ] {
        let a = seckey()
            .with_secret_key_mac(mac)
            .answer(&ch, &req, 1, 2)
            .unwrap();
        let proof =
            SecretKeyProof::decode(&answer_body(&a).signed_response, false, &Limits::default())
                .unwrap();
        assert_eq!(proof.code(), Some(code));
        let checked = Challenge::verify(&ch, &req).unwrap();
        assert!(verify_secret_key_proof(
            &proof,
            &SecretKey::new("public-test-secret-1"),
            &checked.signed_data()
        ));
        assert!(!verify_secret_key_proof(
            &proof,
            &SecretKey::new("public-WRONG-secret"),
            &checked.signed_data()
        ));
    }
}

#[test]
fn bad_challenges_are_never_signed() {
    let req = request(ProtocolVersion::V2_11);
    let good = challenge_to(&req, &[2; 16]);
    let auth = seckey();
    // Digest of another request.
    let mut other = req.clone();
    other.header.flags.set(OpFlags::PO, true);
    assert_eq!(
        auth.answer(&good, &other, 1, 2).unwrap_err(),
        AuthError::DigestMismatch
    );
    // Nonce of 15 and 17 bytes.
    for n in [15, 17] {
        let c = challenge_to(&req, &vec![2; n]);
        assert_eq!(
            auth.answer(&c, &req, 1, 2).unwrap_err(),
            AuthError::NonceLength(n)
        );
    }
    // No digest at all.
    let mut c = good.clone();
    c.request_digest = None;
    assert_eq!(
        auth.answer(&c, &req, 1, 2).unwrap_err(),
        AuthError::NoRequestDigest
    );
    // A digest algorithm nobody knows.
    let mut c = good.clone();
    c.request_digest = Some(RequestDigest {
        algorithm: DigestAlgorithm::Other(9),
        digest: Bytes::from_static(&[0; 32]),
    });
    assert_eq!(
        auth.answer(&c, &req, 1, 2).unwrap_err(),
        AuthError::UnknownDigestAlgorithm(9)
    );
    // Not a 402.
    let e = Message::response_to(
        &req,
        ResponseCode::AuthenticationFailed,
        Body::Error(ErrorBody::new("")),
    );
    assert_eq!(
        auth.answer(&e, &req, 1, 2).unwrap_err(),
        AuthError::NotAChallenge(403)
    );
    // A 402 to another operation.
    let mut c = good.clone();
    c.header.op_code = crate::wire::OpCode::DeleteHandle;
    assert!(matches!(
        auth.answer(&c, &req, 1, 2).unwrap_err(),
        AuthError::OtherRequest {
            field: "op code",
            ..
        }
    ));
    // And the good one is answered.
    assert!(auth.answer(&good, &req, 1, 2).is_ok());
}

fn rsa_key() -> PrivateKey {
    PrivateKey::from_file(keys_dir().join("rsa_privkey.bin")).unwrap()
}

fn dsa1024_key() -> PrivateKey {
    PrivateKey::from_file(keys_dir().join("dsa1024_privkey.bin")).unwrap()
}

#[test]
fn the_signature_hash_follows_the_version_and_the_key_type() {
    let cases = [
        (rsa_key(), ProtocolVersion::V2_11, &b"SHA-256"[..]),
        (rsa_key(), ProtocolVersion::new(2, 7), b"SHA-256"),
        (rsa_key(), ProtocolVersion::new(2, 6), b"SHA1"),
        (dsa1024_key(), ProtocolVersion::V2_11, b"SHA-256"),
        // The reference library keeps SHA1withDSA below 2.11.
        (dsa1024_key(), ProtocolVersion::V2_10, b"SHA1"),
        (dsa1024_key(), ProtocolVersion::V2_3, b"SHA1"),
    ];
    for (key, version, hash) in cases {
        let public = key.public_key();
        let auth = Authenticator::private_key("300:20.500.12345/USER".parse().unwrap(), key);
        let req = request(version);
        let ch = challenge_to(&req, &[4; 16]);
        let a = auth.answer(&ch, &req, 1, 2).unwrap();
        assert_eq!(&answer_body(&a).auth_type[..], b"HS_PUBKEY");
        let proof =
            PublicKeyProof::decode(&answer_body(&a).signed_response, &Limits::default()).unwrap();
        assert_eq!(&proof.hash_algorithm[..], hash, "{version}");
        let data = Challenge::verify(&ch, &req).unwrap().signed_data();
        assert_eq!(
            verify_signature(&public, &proof.hash_algorithm, &proof.signature, &data),
            Ok(())
        );
        let mut tampered = data.clone();
        tampered[0] ^= 1;
        assert!(
            verify_signature(&public, &proof.hash_algorithm, &proof.signature, &tampered).is_err()
        );
    }
    assert!(dsa1024_key().sign(HashAlgorithm::Md5, b"x").is_err());
}

#[test]
fn key_files_that_do_not_parse_are_typed_errors() {
    let good = std::fs::read(keys_dir().join("rsa_privkey.bin")).unwrap();
    // Every truncation fails, naming a field.
    for cut in [0, 3, 4, 10, 30, good.len() - 1] {
        let e = PrivateKey::from_reference_file(&good[..cut]).unwrap_err();
        assert!(matches!(e, KeyFileError::Decode(_)), "{cut}: {e:?}");
    }
    // A stray byte after the key.
    let mut long = good.clone();
    long.push(0);
    let KeyFileError::Decode(e) = PrivateKey::from_reference_file(&long).unwrap_err() else {
        panic!()
    };
    assert_eq!(e.field, "private_key");
    // Schemes: encrypted ones (without a passphrase, with one for the DES schemes),
    // unknown ones.
    for scheme in [0u32, 2, 3, 4] {
        let mut f = scheme.to_be_bytes().to_vec();
        f.extend_from_slice(&good[4..]);
        assert_eq!(
            PrivateKey::from_reference_file(&f).unwrap_err(),
            KeyFileError::NeedsPassphrase(scheme)
        );
        if scheme != 4 {
            assert_eq!(
                PrivateKey::from_reference_file_with_passphrase(&f, b"x").unwrap_err(),
                KeyFileError::EncryptedScheme(scheme)
            );
        }
    }
    assert_eq!(
        PrivateKey::from_reference_file(&[0, 0, 0, 9]).unwrap_err(),
        KeyFileError::UnknownScheme(9)
    );
    // int4 1 ‖ "EC_PRIV_KEY": a type the reference library never wrote.
    let mut ec = vec![0, 0, 0, 1, 0, 0, 0, 11];
    ec.extend_from_slice(b"EC_PRIV_KEY");
    assert_eq!(
        PrivateKey::from_reference_file(&ec).unwrap_err(),
        KeyFileError::UnsupportedKeyType("EC_PRIV_KEY".into())
    );
    // RSA components that do not belong together: the last byte of d changed.
    let rsa = match rsa_key() {
        PrivateKey::Rsa(k) => k,
        PrivateKey::Dsa(_) => unreachable!(),
    };
    use rsa::traits::PrivateKeyParts;
    let d = rsa.d().to_bytes_be();
    let at = good.windows(d.len()).position(|w| w == &d[..]).unwrap();
    let mut bad = good.clone();
    bad[at + d.len() - 1] ^= 1;
    assert_eq!(
        PrivateKey::from_reference_file(&bad).unwrap_err(),
        KeyFileError::InvalidKey("RSA")
    );
    // PEM that is not a key.
    assert!(matches!(
        PrivateKey::from_bytes(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
        Err(KeyFileError::Pkcs8(_))
    ));
    assert!(matches!(
        PrivateKey::from_file(keys_dir().join("no-such-file")),
        Err(KeyFileError::Io(_))
    ));
}

#[test]
fn secrets_stay_out_of_debug_output_and_errors() {
    let auth = seckey();
    let shown = format!("{auth:?}");
    assert!(!shown.contains("public-test-secret-1"));
    assert!(!shown.contains(&hex::encode("public-test-secret-1")));
    assert!(shown.contains("SecretKey(20 bytes)"));
    let key = rsa_key();
    let PrivateKey::Rsa(inner) = &key else {
        unreachable!()
    };
    use rsa::traits::PrivateKeyParts;
    let d = format!("{:x}", inner.d());
    let shown = format!(
        "{:?}",
        Authenticator::private_key("1:x/y".parse().unwrap(), key.clone())
    );
    assert!(shown.contains("PrivateKey(RSA-2048)"), "{shown}");
    assert!(!shown.contains(&d[..16]));
    assert!(!shown.to_lowercase().contains(&d[..16]));
}

#[test]
fn identities_parse_strictly() {
    assert_eq!(
        "300:0.NA/20.500.12345".parse::<Identity>().unwrap(),
        Identity::new(300, "0.NA/20.500.12345")
    );
    assert!(matches!(
        "x:0.NA/1".parse::<Identity>(),
        Err(IdentityError::Index(_))
    ));
    assert!(matches!(
        "-1:0.NA/1".parse::<Identity>(),
        Err(IdentityError::Index(_))
    ));
    assert_eq!("300:".parse::<Identity>(), Err(IdentityError::EmptyHandle));
    assert!(matches!(
        "0.NA/1".parse::<Identity>(),
        Err(IdentityError::Form(_))
    ));
}

/// `fixtures/auth/dsa1024_privkey_encrypted.bin`: the captures' dsa1024 key encrypted by the
/// JDK (`fixtures/auth/MakeEncryptedKey.java`: PBKDF2WithHmacSHA1 over the passphrase's UTF-8
/// bytes turned into chars, AES/CBC/PKCS5Padding) in the reference library's scheme-4 layout,
/// passphrase "grüße-päss-ß-3", salt 00..0f, IV f0 e0 .. 00.
#[test]
fn a_passphrase_encrypted_key_file_decrypts_with_its_passphrase_only() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/auth/dsa1024_privkey_encrypted.bin");
    let file = std::fs::read(&path).unwrap();
    assert_eq!(&file[..4], &[0, 0, 0, 4]);
    let key = PrivateKey::from_file_with_passphrase(&path, "grüße-päss-ß-3".as_bytes()).unwrap();
    assert_eq!(key.public_key(), dsa1024_key().public_key());
    assert_eq!(
        PrivateKey::from_file(&path).unwrap_err(),
        KeyFileError::NeedsPassphrase(4)
    );
    // Other passphrases.
    for wrong in [
        &b"gr\xc3\xbc\xc3\x9fe-p\xc3\xa4ss-\xc3\x9f-4"[..],
        b"",
        b"grusse-pass-ss-3",
    ] {
        assert_eq!(
            PrivateKey::from_reference_file_with_passphrase(&file, wrong).unwrap_err(),
            KeyFileError::WrongPassphrase
        );
    }
    // Without the byte-to-char step (PBKDF2 over the plain UTF-8 bytes) the JDK's file does
    // not decrypt: the step is what the JDK did.
    use cbc::cipher::{block_padding::Pkcs7, BlockDecryptMut, KeyIvInit};
    let salt: Vec<u8> = (0u8..16).collect();
    let mut plain_key = [0u8; 16];
    pbkdf2::pbkdf2_hmac::<Sha1>("grüße-päss-ß-3".as_bytes(), &salt, 10_000, &mut plain_key);
    let (iv, ct) = (&file[36..52], &file[56..]);
    let without_step = cbc::Decryptor::<aes::Aes128>::new_from_slices(&plain_key, iv)
        .unwrap()
        .decrypt_padded_vec_mut::<Pkcs7>(ct);
    assert!(without_step.map_or(true, |p| PrivateKey::from_reference_encoding(&p).is_err()));
    // Truncated: a typed decode error, not a panic.
    for cut in [8, 30, file.len() - 1] {
        assert!(matches!(
            PrivateKey::from_reference_file_with_passphrase(&file[..cut], b"x"),
            Err(KeyFileError::Decode(_))
        ));
    }
}

/// Found while writing the `auth` fuzz target, which signs with every key that reads: a DSA
/// key with q = 2 (p = 5, g = 4, x = 1, so y = 4 and y^q = 1 mod p: the `dsa` crate's checks
/// pass) read without complaint, and signing with it never returned (the crate's RFC 6979
/// nonce loop draws q.bits() / 8 = 0 bytes, forever). Such keys are refused when read, in the
/// reference library's file and in PKCS#8 alike, as is x outside 1..q.
#[test]
fn dsa_keys_whose_q_is_not_of_a_dsa_size_are_refused() {
    let reference = hex::decode(concat!(
        "00000001",
        "0000000c4453415f505249565f4b4559",
        "0000000101",
        "0000000105",
        "0000000102",
        "0000000104"
    ))
    .unwrap();
    let der =
        hex::decode("301e020100301406072a8648ce38040130090201050201020201040403020101").unwrap();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        <base64ct::Base64 as base64ct::Encoding>::encode_string(&der)
    );
    for (what, file) in [
        ("reference", reference),
        ("DER", der),
        ("PEM", pem.into_bytes()),
    ] {
        assert_eq!(
            PrivateKey::from_bytes(&file).unwrap_err(),
            KeyFileError::InvalidKey("DSA"),
            "{what}"
        );
    }
    // x = q and x = 0 with the dsa1024 key's p, q and g.
    let PrivateKey::Dsa(good) = dsa1024_key() else {
        unreachable!()
    };
    let c = good.verifying_key().components();
    let file = |x: &[u8]| {
        let mut f = vec![0, 0, 0, 1];
        for part in [
            &b"DSA_PRIV_KEY"[..],
            x,
            &c.p().to_bytes_be(),
            &c.q().to_bytes_be(),
            &c.g().to_bytes_be(),
        ] {
            f.extend_from_slice(&(part.len() as u32).to_be_bytes());
            f.extend_from_slice(part);
        }
        f
    };
    for x in [c.q().to_bytes_be(), vec![0]] {
        assert_eq!(
            PrivateKey::from_bytes(&file(&x)).unwrap_err(),
            KeyFileError::InvalidKey("DSA")
        );
    }
    assert!(PrivateKey::from_bytes(&file(&[1])).is_ok());
}
