//! Key files made and converted (`auth::KeyMaterial`, `PrivateKey::generate`): every pair of
//! formats both ways, encrypted and not, RSA and DSA, for the reference's own test keys
//! (`fixtures/reference/captures-auth/keys/`) and for keys generated here; a key we write
//! answers an HS_PUBKEY challenge that the server side accepts with the public file as the
//! stored value; bad files are typed errors. The CLI (`admin keygen`, `admin convert-key`)
//! is in `keys/cli.rs`.

mod cli;
mod props;

use std::sync::OnceLock;

use bytes::Bytes;
use handle_resolver::auth::{
    verify_answer, Authenticator, Challenge, KeyFileError, KeyFormat, KeyMaterial, KeySpec,
    PrivateKey, VerifyError,
};
use handle_resolver::wire::json::{value_from_json, value_to_json};
use handle_resolver::wire::{
    ChallengeAnswer, DigestAlgorithm, HandleValue, Limits, Message, ProtocolVersion, RequestDigest,
    TypedValue, ValueReference,
};

const PASSPHRASE: &[u8] = "grüße-päss-ß-3".as_bytes();

/// The reference's test keys: `<name>_privkey.bin` (hdllib), `<name>_priv.pem`, ...
const FIXTURES: [&str; 4] = ["rsa", "rsa_wrongkey", "dsa", "dsa1024"];

fn keys_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference/captures-auth/keys")
}

fn fixture(file: &str) -> Vec<u8> {
    std::fs::read(keys_dir().join(file)).unwrap()
}

fn fixture_key(name: &str) -> PrivateKey {
    PrivateKey::from_reference_file(&fixture(&format!("{name}_privkey.bin"))).unwrap()
}

/// Keys generated once for the whole test binary: RSA-2048, DSA 1024/160 (the reference's
/// default size) and DSA 2048/256.
fn generated() -> &'static [PrivateKey] {
    static KEYS: OnceLock<Vec<PrivateKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        [
            KeySpec::DEFAULT_RSA,
            KeySpec::dsa(1024, None).unwrap(),
            KeySpec::dsa(2048, Some(256)).unwrap(),
        ]
        .into_iter()
        .map(|spec| PrivateKey::generate(spec).unwrap())
        .collect()
    })
}

/// Every key the tests convert.
fn all_keys() -> Vec<PrivateKey> {
    FIXTURES
        .iter()
        .map(|n| fixture_key(n))
        .chain(generated().iter().cloned())
        .collect()
}

/// The private numbers of a key, all of them: the same encoding means the same key.
fn numbers(k: &PrivateKey) -> Vec<u8> {
    k.to_reference_encoding().unwrap().to_vec()
}

fn private(m: &KeyMaterial) -> &PrivateKey {
    match m {
        KeyMaterial::Private(k) => k,
        other => panic!("not private: {other:?}"),
    }
}

/// The private outputs: each format that holds a private key, encrypted where it can be.
const PRIVATE_OUTPUTS: [(KeyFormat, bool); 5] = [
    (KeyFormat::Reference, false),
    (KeyFormat::Reference, true),
    (KeyFormat::Pkcs8Pem, false),
    (KeyFormat::Pkcs8Pem, true),
    (KeyFormat::Jwk, false),
];

/// The public outputs.
const PUBLIC_OUTPUTS: [KeyFormat; 3] = [KeyFormat::Reference, KeyFormat::SpkiPem, KeyFormat::Jwk];

fn written(key: &KeyMaterial, format: KeyFormat, encrypted: bool) -> Vec<u8> {
    let passphrase = encrypted.then_some(PASSPHRASE);
    key.write(format, passphrase).unwrap().to_vec()
}

/// Reads `file` as detected, checks the format and encryption found, and gives the key.
fn read_back(file: &[u8], format: KeyFormat, encrypted: bool) -> KeyMaterial {
    let passphrase = encrypted.then_some(PASSPHRASE);
    let read = KeyMaterial::read(file, None, passphrase).unwrap();
    assert_eq!(read.format, format);
    assert_eq!(read.encrypted, encrypted, "{format}");
    // The format given instead of detected reads the same.
    let given = KeyMaterial::read(file, Some(format), passphrase).unwrap();
    assert_eq!(given.key.public_key(), read.key.public_key());
    read.key
}

#[test]
fn every_private_format_converts_to_every_format_and_back() {
    for key in all_keys() {
        let original = KeyMaterial::Private(key.clone());
        for (from, from_encrypted) in PRIVATE_OUTPUTS {
            let input = written(&original, from, from_encrypted);
            let read = read_back(&input, from, from_encrypted);
            assert_eq!(numbers(private(&read)), numbers(&key), "{key:?} {from}");
            for (to, to_encrypted) in PRIVATE_OUTPUTS {
                let out = written(&read, to, to_encrypted);
                let back = read_back(&out, to, to_encrypted);
                assert_eq!(
                    numbers(private(&back)),
                    numbers(&key),
                    "{key:?} {from} -> {to}"
                );
            }
            for to in PUBLIC_OUTPUTS {
                let out = written(&read.to_public(), to, false);
                let back = read_back(&out, to, false);
                assert!(!back.is_private());
                assert_eq!(
                    back.public_key(),
                    key.public_key(),
                    "{key:?} {from} -> {to}"
                );
            }
            // SPKI from the private key itself is its public key.
            let spki = written(&read, KeyFormat::SpkiPem, false);
            assert_eq!(spki, written(&read.to_public(), KeyFormat::SpkiPem, false));
        }
    }
}

#[test]
fn every_public_format_converts_to_every_public_format() {
    for key in all_keys() {
        let public = KeyMaterial::Public(key.public_key());
        let reference = written(&public, KeyFormat::Reference, false);
        assert_eq!(reference, key.public_key().encode().unwrap().to_vec());
        for from in PUBLIC_OUTPUTS {
            let read = read_back(&written(&public, from, false), from, false);
            for to in PUBLIC_OUTPUTS {
                let back = read_back(&written(&read, to, false), to, false);
                assert_eq!(
                    back.public_key(),
                    key.public_key(),
                    "{key:?} {from} -> {to}"
                );
            }
            // A public key has no PKCS#8 form, and takes no passphrase.
            assert_eq!(
                read.write(KeyFormat::Pkcs8Pem, None).unwrap_err(),
                KeyFileError::NotPrivate("pkcs8-pem")
            );
            assert!(matches!(
                read.write(KeyFormat::Reference, Some(b"x")),
                Err(KeyFileError::NotEncryptable(_))
            ));
        }
    }
}

/// `keys/identities.json` lists every key's numbers in hex, read from the JDK's key
/// objects: the JWK members carry exactly those.
#[test]
fn the_reference_keys_convert_to_the_numbers_the_jdk_lists() {
    let doc: serde_json::Value = serde_json::from_slice(&fixture("identities.json")).unwrap();
    for name in FIXTURES {
        let listed = &doc["identities"][name]["key"]["componentsHex"];
        let jwk = written(
            &KeyMaterial::Private(fixture_key(name)),
            KeyFormat::Jwk,
            false,
        );
        let jwk: serde_json::Value = serde_json::from_slice(&jwk).unwrap();
        let members: &[&str] = if name.starts_with("rsa") {
            &["n", "e", "d", "p", "q", "dp", "dq", "qi"]
        } else {
            &["x", "p", "q", "g"]
        };
        for m in members {
            let b64 = jwk[m].as_str().unwrap();
            let bytes =
                <base64ct::Base64UrlUnpadded as base64ct::Encoding>::decode_vec(b64).unwrap();
            let hex_key = if *m == "qi" { "qinv" } else { m };
            let expected = listed[hex_key]
                .as_str()
                .unwrap_or_else(|| panic!("{name} {m}"));
            // Java's `BigInteger.toString(16)`: no leading zeros, maybe an odd length.
            assert_eq!(
                hex::encode(&bytes).trim_start_matches('0'),
                expected.trim_start_matches('0'),
                "{name} {m}"
            );
        }
    }
}

/// The reference's own files: the private key through PKCS#8 (encrypted or not) and JWK
/// back to the reference's file gives the file byte for byte; the JDK's PEM files read to
/// the same key; the public PEM gives the public file.
#[test]
fn the_reference_files_convert_and_come_back_byte_for_byte() {
    for name in FIXTURES {
        let bin = fixture(&format!("{name}_privkey.bin"));
        let key = read_back(&bin, KeyFormat::Reference, false);
        for (via, encrypted) in [
            (KeyFormat::Pkcs8Pem, false),
            (KeyFormat::Pkcs8Pem, true),
            (KeyFormat::Jwk, false),
            (KeyFormat::Reference, true),
        ] {
            let middle = read_back(&written(&key, via, encrypted), via, encrypted);
            assert_eq!(
                written(&middle, KeyFormat::Reference, false),
                bin,
                "{name} {via}"
            );
        }
        let pem = read_back(
            &fixture(&format!("{name}_priv.pem")),
            KeyFormat::Pkcs8Pem,
            false,
        );
        assert_eq!(written(&pem, KeyFormat::Reference, false), bin, "{name}");
        let spki = read_back(
            &fixture(&format!("{name}_pub.pem")),
            KeyFormat::SpkiPem,
            false,
        );
        assert_eq!(
            written(&spki, KeyFormat::Reference, false),
            fixture(&format!("{name}_pubkey.bin"))
        );
    }
}

/// The public file is an HS_PUBKEY value's data as is: it decodes as one, and the REST
/// API's JSON of the value (format `key`) gives the same bytes back.
#[test]
fn the_public_file_is_an_hs_pubkey_value() {
    for key in all_keys() {
        let file = written(
            &KeyMaterial::Private(key.clone()).to_public(),
            KeyFormat::Reference,
            false,
        );
        let value = HandleValue::new(300, "HS_PUBKEY", file.clone());
        let TypedValue::PubKey(decoded) = value.try_typed().unwrap() else {
            panic!("{key:?}")
        };
        assert_eq!(decoded, key.public_key());
        let json = value_to_json(&value);
        assert_eq!(json["data"]["format"], "key", "{json}");
        let back = value_from_json(&json, &Limits::default()).unwrap();
        assert_eq!(back.data, Bytes::from(file));
    }
}

/// A 402 to a resolution request at `version`, as a server issues it.
fn challenge(version: ProtocolVersion) -> Challenge {
    let mut request = Message::resolution_request("20.500.12345/PROTECTED", vec![], vec![], 7, 0);
    request.envelope.version = version;
    request.envelope.suggested = version;
    let digest = RequestDigest::compute(
        DigestAlgorithm::for_version(version),
        &request.header_and_body().unwrap(),
    )
    .unwrap();
    Challenge::issued(Bytes::from_static(&[9; 16]), digest, version, version, 0)
}

fn answer(key: PrivateKey, challenge: &Challenge) -> ChallengeAnswer {
    let me = Authenticator::private_key("300:20.500.12345/USER-NEW".parse().unwrap(), key);
    ChallengeAnswer {
        auth_type: Bytes::from_static(b"HS_PUBKEY"),
        identity: ValueReference {
            handle: Bytes::from_static(b"20.500.12345/USER-NEW"),
            index: 300,
        },
        signed_response: me.sign(challenge, [0; 16]).unwrap(),
    }
}

/// A key written to each private format and read back answers challenges (SHA-256, and
/// SHA-1 where the protocol version asks for it) that the server side accepts against the
/// public file stored as the HS_PUBKEY value; another key's answer is refused.
#[test]
fn a_written_key_answers_a_challenge_the_verifier_accepts() {
    let limits = Limits::default();
    for key in generated().iter().chain([&fixture_key("dsa")]) {
        let material = KeyMaterial::Private(key.clone());
        let public = written(&material.to_public(), KeyFormat::Reference, false);
        let stored = HandleValue::new(300, "HS_PUBKEY", public);
        for (format, encrypted) in PRIVATE_OUTPUTS {
            let file = written(&material, format, encrypted);
            let read = read_back(&file, format, encrypted);
            for version in [
                ProtocolVersion::V2_11,
                ProtocolVersion::V2_10,
                ProtocolVersion::new(2, 6),
            ] {
                let ch = challenge(version);
                let a = answer(private(&read).clone(), &ch);
                assert_eq!(
                    verify_answer(&a, &ch, &stored, &limits),
                    Ok(()),
                    "{key:?} {format} {version}"
                );
            }
        }
        let other = fixture_key("rsa_wrongkey");
        let ch = challenge(ProtocolVersion::V2_11);
        assert!(matches!(
            verify_answer(&answer(other, &ch), &ch, &stored, &limits),
            Err(VerifyError::Signature(_))
        ));
    }
}

#[test]
fn wrong_passphrases_are_typed_errors() {
    let key = KeyMaterial::Private(fixture_key("dsa1024"));
    let reference = written(&key, KeyFormat::Reference, true);
    let pkcs8 = written(&key, KeyFormat::Pkcs8Pem, true);
    for (file, needs) in [
        (&reference, KeyFileError::NeedsPassphrase(4)),
        (&pkcs8, KeyFileError::Pkcs8NeedsPassphrase),
    ] {
        assert_eq!(KeyMaterial::read(file, None, None).unwrap_err(), needs);
        for wrong in [&b"wrong"[..], b"", "grüße-päss-ß-4".as_bytes()] {
            assert_eq!(
                KeyMaterial::read(file, None, Some(wrong)).unwrap_err(),
                KeyFileError::WrongPassphrase
            );
        }
    }
    // A passphrase for an unencrypted file is not needed, and said so.
    let plain = written(&key, KeyFormat::Pkcs8Pem, false);
    let read = KeyMaterial::read(&plain, None, Some(b"unused")).unwrap();
    assert!(!read.encrypted);
    // Outputs that are never encrypted refuse a passphrase rather than drop it.
    for format in [KeyFormat::Jwk, KeyFormat::SpkiPem] {
        assert_eq!(
            key.write(format, Some(b"x")).unwrap_err(),
            KeyFileError::NotEncryptable(format.name())
        );
    }
}

/// Every truncation of every format is a typed error (no panic), of the kind its format
/// reads with.
#[test]
fn truncated_files_are_typed_errors() {
    let key = KeyMaterial::Private(fixture_key("dsa1024"));
    let rsa = KeyMaterial::Private(fixture_key("rsa"));
    let public = key.to_public();
    let files: Vec<(KeyFormat, Vec<u8>, bool)> = [
        (&key, KeyFormat::Reference, false),
        (&key, KeyFormat::Reference, true),
        (&public, KeyFormat::Reference, false),
        (&rsa, KeyFormat::Pkcs8Pem, false),
        (&key, KeyFormat::Pkcs8Pem, true),
        (&rsa, KeyFormat::SpkiPem, false),
        (&rsa, KeyFormat::Jwk, false),
        (&public, KeyFormat::Jwk, false),
    ]
    .into_iter()
    .map(|(k, format, encrypted)| (format, written(k, format, encrypted), encrypted))
    .collect();
    for (format, file, encrypted) in files {
        let passphrase = encrypted.then_some(PASSPHRASE);
        // Encrypted PKCS#8 costs a key derivation per read: fewer cuts.
        let step = if encrypted && format == KeyFormat::Pkcs8Pem {
            97
        } else {
            7
        };
        // The last byte of a PEM or JWK is its newline; the one before ends the document.
        let whole = file.len() - usize::from(format != KeyFormat::Reference) - 1;
        for cut in (0..=whole).step_by(step).chain([whole]) {
            let e = KeyMaterial::read(&file[..cut], Some(format), passphrase)
                .map(|_| ())
                .unwrap_err();
            let expected = matches!(
                (format, &e),
                (
                    KeyFormat::Reference,
                    KeyFileError::Decode(_) | KeyFileError::WrongPassphrase
                ) | (
                    KeyFormat::Pkcs8Pem,
                    KeyFileError::Pkcs8(_) | KeyFileError::WrongPassphrase
                ) | (KeyFormat::SpkiPem, KeyFileError::Spki(_))
                    | (KeyFormat::Jwk, KeyFileError::Jwk(_))
            );
            assert!(expected, "{format} cut at {cut} of {}: {e:?}", file.len());
        }
    }
    assert_eq!(
        KeyMaterial::read(b"", None, None).unwrap_err(),
        KeyFileError::UnknownFormat
    );
    assert_eq!(
        KeyMaterial::read(&vec![b'{'; 70_000], None, None).unwrap_err(),
        KeyFileError::TooLarge(70_000)
    );
}

/// JWKs that are not keys of the reference's form name what is wrong; a DSA q that is no
/// DSA size is refused before any arithmetic.
#[test]
fn bad_jwks_name_the_member() {
    let read = |text: &str| {
        KeyMaterial::read(text.as_bytes(), None, None)
            .map(|_| ())
            .unwrap_err()
    };
    assert_eq!(
        read(r#"{"kty": "RSA", "n": "AQAB", "d": "AQAB"}"#),
        KeyFileError::Jwk("no member \"e\"".into())
    );
    assert_eq!(
        read(r#"{"kty": "EC", "x": "AQAB"}"#),
        KeyFileError::Jwk("kty \"EC\": RSA or DSA".into())
    );
    assert_eq!(
        read(r#"{"kty": "DSA", "x": "AQ", "p": "Bw", "q": "Aw", "g": "Ag"}"#),
        KeyFileError::InvalidKey("DSA")
    );
    assert!(matches!(
        read(r#"{"kty": "RSA", "n": "!!", "e": "AQAB"}"#),
        KeyFileError::Jwk(_)
    ));
    assert!(matches!(read(r#"{"kty": 5}"#), KeyFileError::Jwk(_)));
    // dp that is not the key's.
    let good = written(
        &KeyMaterial::Private(fixture_key("rsa")),
        KeyFormat::Jwk,
        false,
    );
    let mut doc: serde_json::Value = serde_json::from_slice(&good).unwrap();
    doc["dp"] = "AQAB".into();
    assert_eq!(read(&doc.to_string()), KeyFileError::InvalidKey("RSA"));
    // Without p and q (nor dp, dq, qi) the primes are recovered from n, e and d.
    for m in ["p", "q", "dp", "dq", "qi"] {
        doc.as_object_mut().unwrap().remove(m);
    }
    let key = KeyMaterial::read(doc.to_string().as_bytes(), None, None).unwrap();
    assert_eq!(numbers(private(&key.key)), numbers(&fixture_key("rsa")));
}

/// Encrypted PKCS#8 that asks for more work than a key file needs is refused before any is
/// done (the files are built, not encrypted: the refusal comes first).
#[test]
fn costly_pkcs8_encryption_parameters_are_refused_unread() {
    use handle_resolver::auth::MAX_PKCS8_PBKDF2_ITERATIONS;
    use pkcs8::der::{Encode, EncodePem};
    use pkcs8::pkcs5::{pbes2, scrypt};
    let (salt, iv) = ([1u8; 16], [2u8; 16]);
    let pem = |params: pbes2::Parameters<'_>| {
        let info = pkcs8::EncryptedPrivateKeyInfo {
            encryption_algorithm: params.into(),
            encrypted_data: &[0; 32],
        };
        assert!(info.to_der().is_ok());
        info.to_pem(pkcs8::LineEnding::LF).unwrap()
    };
    let many =
        pbes2::Parameters::pbkdf2_sha256_aes256cbc(MAX_PKCS8_PBKDF2_ITERATIONS + 1, &salt, &iv)
            .unwrap();
    let scrypt_params = scrypt::Params::new(22, 8, 1, 32).unwrap();
    let big = pbes2::Parameters::scrypt_aes256cbc(scrypt_params, &salt, &iv).unwrap();
    for (params, what) in [(many, "PBKDF2 iteration count"), (big, "scrypt cost")] {
        assert_eq!(
            KeyMaterial::read(pem(params).as_bytes(), None, Some(b"x")).unwrap_err(),
            KeyFileError::EncryptionParameters(what)
        );
    }
}
