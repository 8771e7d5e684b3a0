//! The written files against what the reference library and the JDK wrote for the same keys
//! (`fixtures/reference/captures-auth/keys/`, `fixtures/auth/`), byte for byte. Round trips
//! between every pair of formats, generated keys and the CLI are in `proto-tests/keys`.

use std::path::{Path, PathBuf};

use super::*;
use pkcs8::der::Decode;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn keys(name: &str) -> Vec<u8> {
    std::fs::read(fixture("reference/captures-auth/keys").join(name)).unwrap()
}

const KEYS: [&str; 4] = ["rsa", "rsa_wrongkey", "dsa", "dsa1024"];

fn private(name: &str) -> PrivateKey {
    PrivateKey::from_reference_file(&keys(&format!("{name}_privkey.bin"))).unwrap()
}

#[test]
fn the_reference_files_are_written_back_byte_for_byte() {
    for name in KEYS {
        let key = private(name);
        let file = key.to_reference_file(None).unwrap();
        assert_eq!(*file, keys(&format!("{name}_privkey.bin")), "{name}");
        // Written as a reference file, a private key is the private file; its public part
        // is the public file.
        let material = KeyMaterial::Private(key);
        assert_eq!(*material.write(KeyFormat::Reference, None).unwrap(), *file);
        let public = material
            .to_public()
            .write(KeyFormat::Reference, None)
            .unwrap();
        assert_eq!(*public, keys(&format!("{name}_pubkey.bin")), "{name}");
    }
}

/// `fixtures/auth/dsa1024_privkey_encrypted.bin` was made by the JDK in the layout of
/// `Util.encrypt(…, ENCRYPT_PBKDF2_AES_CBC_PKCS5)` with salt 00..0f, IV f0 e0 .. 00 and the
/// passphrase "grüße-päss-ß-3" (`fixtures/auth/README.md`); with the same salt and IV our
/// writer gives the same bytes, so the layout, the byte-to-char step of the passphrase and
/// the padding are the reference's.
#[test]
fn scheme_4_is_written_as_the_jdk_wrote_it() {
    let expected = std::fs::read(fixture("auth/dsa1024_privkey_encrypted.bin")).unwrap();
    let salt: Vec<u8> = (0u8..16).collect();
    let iv: [u8; 16] = core::array::from_fn(|i| 0xf0u8.wrapping_sub(0x10 * i as u8));
    let encoding = private("dsa1024").to_reference_encoding().unwrap();
    let file = reference::encrypt(&encoding, "grüße-päss-ß-3".as_bytes(), &salt, &iv);
    assert_eq!(file, expected);
    // A random salt and IV each time; our reader takes the file back.
    let key = private("dsa1024");
    let (a, b) = (
        key.to_reference_file(Some(b"pass")).unwrap(),
        key.to_reference_file(Some(b"pass")).unwrap(),
    );
    assert_ne!(a, b);
    assert_eq!(&a[..4], &[0, 0, 0, 4]);
    let back = PrivateKey::from_reference_file_with_passphrase(&a, b"pass").unwrap();
    assert_eq!(back.public_key(), key.public_key());
}

/// The captures' `*_priv.pem` (PKCS#8) and `*_pub.pem` (SubjectPublicKeyInfo) were written
/// by the JDK for the same keys: DER is canonical, so ours are the same files.
#[test]
fn pem_files_are_the_jdks() {
    for name in KEYS {
        let key = KeyMaterial::Private(private(name));
        let pem = key.write(KeyFormat::Pkcs8Pem, None).unwrap();
        assert_eq!(*pem, keys(&format!("{name}_priv.pem")), "{name}");
        let spki = key.write(KeyFormat::SpkiPem, None).unwrap();
        assert_eq!(*spki, keys(&format!("{name}_pub.pem")), "{name}");
    }
}

#[test]
fn jwk_members_are_the_references() {
    let names = |text: &[u8]| -> Vec<String> {
        let text = std::str::from_utf8(text).unwrap();
        text.lines()
            .filter_map(|l| l.trim().strip_prefix('"'))
            .map(|l| l.split('"').next().unwrap().to_string())
            .collect()
    };
    let rsa = KeyMaterial::Private(private("rsa"));
    let jwk = rsa.write(KeyFormat::Jwk, None).unwrap();
    assert_eq!(
        names(&jwk),
        ["kty", "n", "e", "d", "p", "q", "dp", "dq", "qi"]
    );
    // e = 65537: AQAB, the magnitude without a sign byte.
    let doc: serde_json::Value = serde_json::from_slice(&jwk).unwrap();
    assert_eq!(doc["e"], "AQAB");
    assert_eq!(doc["kty"], "RSA");
    let dsa = KeyMaterial::Private(private("dsa"));
    let jwk = dsa.write(KeyFormat::Jwk, None).unwrap();
    assert_eq!(names(&jwk), ["kty", "x", "p", "q", "g"]);
    let public = KeyMaterial::Public(dsa.public_key());
    let jwk: serde_json::Value =
        serde_json::from_slice(&public.write(KeyFormat::Jwk, None).unwrap()).unwrap();
    let mut members: Vec<_> = jwk.as_object().unwrap().keys().cloned().collect();
    members.sort();
    assert_eq!(members, ["g", "kty", "p", "q", "y"]);
    assert_eq!(jwk["kty"], "DSA");
}

#[test]
fn formats_are_detected_and_named() {
    let cases: [(&[u8], Option<KeyFormat>); 11] = [
        (&keys("rsa_privkey.bin"), Some(KeyFormat::Reference)),
        (&keys("rsa_pubkey.bin"), Some(KeyFormat::Reference)),
        (&keys("rsa_priv.pem"), Some(KeyFormat::Pkcs8Pem)),
        (&keys("rsa_pub.pem"), Some(KeyFormat::SpkiPem)),
        (b"  {\"kty\": \"RSA\"}", Some(KeyFormat::Jwk)),
        (
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----\r\n",
            Some(KeyFormat::Pkcs8Pem),
        ),
        (b"-----BEGIN RSA PRIVATE KEY-----\n", None),
        (&[0x30, 0x82, 1, 2], None),
        (&[0, 0, 1], None),
        (&[0, 0, 0, 5, 1], None),
        (b"root:x:0:0", None),
    ];
    for (bytes, format) in cases {
        assert_eq!(KeyFormat::detect(bytes), format, "{:?}", &bytes[..3]);
    }
    for f in KeyFormat::ALL {
        assert_eq!(f.name().parse::<KeyFormat>(), Ok(f));
        assert_eq!(f.to_string().to_uppercase().parse::<KeyFormat>(), Ok(f));
    }
    assert!("der".parse::<KeyFormat>().is_err());
}

#[test]
fn key_sizes_outside_the_list_are_refused() {
    assert_eq!(KeySpec::rsa(2048), Ok(KeySpec::DEFAULT_RSA));
    assert_eq!(KeySpec::dsa(2048, None), Ok(KeySpec::DEFAULT_DSA));
    assert_eq!(
        KeySpec::dsa(1024, None),
        Ok(KeySpec::Dsa { l: 1024, n: 160 })
    );
    assert_eq!(
        KeySpec::dsa(3072, None),
        Ok(KeySpec::Dsa { l: 3072, n: 256 })
    );
    for bits in [0, 512, 1024, 2047, 8192] {
        assert!(matches!(
            KeySpec::rsa(bits),
            Err(KeyFileError::KeySize { .. })
        ));
        assert!(PrivateKey::generate(KeySpec::Rsa { bits }).is_err());
    }
    for (l, n) in [(1024, 224), (2048, 160), (4096, 256), (3072, 224)] {
        assert!(KeySpec::dsa(l, Some(n)).is_err());
        assert!(PrivateKey::generate(KeySpec::Dsa { l, n }).is_err());
    }
}

#[test]
fn an_rsa_jwk_without_primes_and_with_a_zero_is_refused_not_a_panic() {
    // n = 0 and d = 0, n = 0 alone, d = 0 alone ("AA" is the byte 0; "Dw" is 15; "AQAB" is
    // 65537): the rsa crate's prime recovery would subtract past zero on each.
    for (n, d) in [("AA", "AA"), ("AA", "BQ"), ("Dw", "AA")] {
        let jwk = format!(r#"{{"kty":"RSA","n":"{n}","e":"AQAB","d":"{d}"}}"#);
        for read in [
            KeyMaterial::read(jwk.as_bytes(), None, None).map(|_| ()),
            PrivateKey::from_key_file(jwk.as_bytes(), None).map(|_| ()),
        ] {
            assert_eq!(read, Err(KeyFileError::InvalidKey("RSA")), "{jwk}");
        }
    }
}

#[test]
fn a_passphrase_for_a_key_file_that_is_not_encrypted_is_refused() {
    let key = private("rsa");
    let material = KeyMaterial::Private(key.clone());
    let jwk = material.write(KeyFormat::Jwk, None).unwrap();
    let pem = material.write(KeyFormat::Pkcs8Pem, None).unwrap();
    let reference = material.write(KeyFormat::Reference, None).unwrap();
    for file in [&jwk[..], &pem[..], &reference[..]] {
        assert_eq!(
            PrivateKey::from_key_file(file, Some(b"x")).map(|_| ()),
            Err(KeyFileError::NotEncrypted)
        );
        assert_eq!(
            PrivateKey::from_key_file(file, None).unwrap().public_key(),
            key.public_key()
        );
    }
    let encrypted = material.write(KeyFormat::Reference, Some(b"x")).unwrap();
    assert_eq!(
        PrivateKey::from_key_file(&encrypted, Some(b"x"))
            .unwrap()
            .public_key(),
        key.public_key()
    );
}

/// `fixtures/auth/convert-key/`: the captures' keys written as the reference's
/// `hdl-convert-key -f pem` writes them (CRLF, Base64 lines of 76 characters), plain and
/// `-crypt` (`PBEWithSHA1AndDESede`), by OpenSSL and the JDK (`make.sh` there says how).
fn convert_key(name: &str) -> Vec<u8> {
    std::fs::read(fixture("auth/convert-key").join(name)).unwrap()
}

/// The passphrases of `make.sh`.
const PASS: &str = "grüße-päss-ß-3";
const PASS_ASTRAL: &str = "schlüssel-🔑";
const PASS_ASCII: &str = "public-test-passphrase";

#[test]
fn pem_as_the_reference_writes_it_reads_to_the_key_it_was_made_from() {
    for name in ["rsa", "dsa", "dsa1024"] {
        let key = private(name);
        let der = key.to_pkcs8_der().unwrap();
        let file = convert_key(&format!("{name}_priv.pem"));
        assert!(file.windows(2).any(|w| w == b"\r\n"), "{name}: CRLF");
        // Every reader of a user's key file: convert-key's, --key-file's and key_file='s.
        let read = KeyMaterial::read(&file, None, None).unwrap();
        assert_eq!((read.format, read.encrypted), (KeyFormat::Pkcs8Pem, false));
        assert_eq!(
            *private_of(&read.key).to_pkcs8_der().unwrap(),
            *der,
            "{name}"
        );
        let from_key_file = PrivateKey::from_key_file(&file, None).unwrap();
        assert_eq!(*from_key_file.to_pkcs8_der().unwrap(), *der, "{name}");
        let text = std::str::from_utf8(&file).unwrap();
        assert_eq!(
            *PrivateKey::from_pkcs8_pem(text)
                .unwrap()
                .to_pkcs8_der()
                .unwrap(),
            *der
        );
        // The public key: SubjectPublicKeyInfo in the same layout.
        let public =
            KeyMaterial::read(&convert_key(&format!("{name}_pub.pem")), None, None).unwrap();
        assert_eq!(public.format, KeyFormat::SpkiPem);
        assert!(!public.key.is_private());
        assert_eq!(public.key.public_key(), key.public_key(), "{name}");
    }
}

fn private_of(key: &KeyMaterial) -> &PrivateKey {
    match key {
        KeyMaterial::Private(k) => k,
        KeyMaterial::Public(_) => panic!("a public key"),
    }
}

#[test]
fn pem_line_widths_and_line_ends_are_read_laxly() {
    let key = private("dsa1024");
    let der = key.to_pkcs8_der().unwrap();
    let pem = KeyMaterial::Private(key.clone())
        .write(KeyFormat::Pkcs8Pem, None)
        .unwrap();
    let text = std::str::from_utf8(&pem).unwrap();
    let base64: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    for width in [4, 60, 64, 72, 76, 100, base64.len()] {
        for eol in ["\n", "\r\n", "\r"] {
            let mut file = format!("-----BEGIN PRIVATE KEY-----{eol}");
            for line in base64.as_bytes().chunks(width) {
                file.push_str(std::str::from_utf8(line).unwrap());
                file.push_str(eol);
            }
            file.push_str("-----END PRIVATE KEY-----");
            file.push_str(eol);
            let read = PrivateKey::from_key_file(file.as_bytes(), None)
                .unwrap_or_else(|e| panic!("width {width}, {eol:?}: {e}"));
            assert_eq!(*read.to_pkcs8_der().unwrap(), *der);
        }
    }
    // Lines of unequal widths are still refused, with the PEM decoder's reason.
    let ragged = text.replacen('\n', "\nA\n", 3);
    assert!(matches!(
        PrivateKey::from_key_file(ragged.as_bytes(), None),
        Err(KeyFileError::Pkcs8(_))
    ));
}

#[test]
fn pbe_with_sha1_and_desede_reads_with_its_passphrase() {
    let cases = [
        ("rsa_priv_3des.pem", "rsa", PASS),
        ("dsa_priv_3des.pem", "dsa", PASS),
        ("dsa1024_priv_3des.pem", "dsa1024", PASS),
        // A character beyond the BMP: its UTF-16 surrogate pair, as OpenSSL takes it.
        ("dsa1024_priv_3des_astral.pem", "dsa1024", PASS_ASTRAL),
        // The JDK's own PBEWithSHA1AndDESede, a 16-byte salt as KeyConverter's.
        ("rsa_priv_3des_jdk.pem", "rsa", PASS_ASCII),
        ("dsa1024_priv_3des_jdk.pem", "dsa1024", PASS_ASCII),
    ];
    for (file, name, pass) in cases {
        let der = private(name).to_pkcs8_der().unwrap();
        let bytes = convert_key(file);
        let read = KeyMaterial::read(&bytes, None, Some(pass.as_bytes())).unwrap();
        assert_eq!((read.format, read.encrypted), (KeyFormat::Pkcs8Pem, true));
        assert_eq!(
            *private_of(&read.key).to_pkcs8_der().unwrap(),
            *der,
            "{file}"
        );
        let key = PrivateKey::from_key_file(&bytes, Some(pass.as_bytes())).unwrap();
        assert_eq!(*key.to_pkcs8_der().unwrap(), *der, "{file}");
        // Never without its passphrase, never with another.
        assert_eq!(
            PrivateKey::from_key_file(&bytes, None).map(|_| ()),
            Err(KeyFileError::Pkcs8NeedsPassphrase),
            "{file}"
        );
        assert_eq!(
            KeyMaterial::read(&bytes, None, Some(b"wrong")).map(|_| ()),
            Err(KeyFileError::WrongPassphrase),
            "{file}"
        );
    }
}

/// RFC 7292 B.1: the passphrase as a BMPString, big-endian UTF-16 and two zero bytes.
#[test]
fn the_pkcs12_passphrase_is_big_endian_utf16_with_a_zero_pair() {
    assert_eq!(*legacy::bmp_password(b"ab"), [0, b'a', 0, b'b', 0, 0]);
    assert_eq!(*legacy::bmp_password(b""), [0, 0]);
    assert_eq!(*legacy::bmp_password("ß".as_bytes()), [0, 0xdf, 0, 0]);
    assert_eq!(
        *legacy::bmp_password("🔑".as_bytes()),
        [0xd8, 0x3d, 0xdd, 0x11, 0, 0]
    );
    // Not UTF-8: one byte a character, as OpenSSL falls back to.
    assert_eq!(
        *legacy::bmp_password(&[0xff, b'a']),
        [0, 0xff, 0, b'a', 0, 0]
    );
}

#[test]
fn the_legacy_form_is_written_on_request_only() {
    let key = KeyMaterial::Private(private("dsa1024"));
    let legacy = Pkcs8Encryption::LegacyPkcs12TripleDes;
    let pem = key
        .write_with(KeyFormat::Pkcs8Pem, Some(PASS_ASCII.as_bytes()), legacy)
        .unwrap();
    let text = std::str::from_utf8(&pem).unwrap();
    let (label, der) = pem::decode(text).unwrap();
    assert_eq!(label, "ENCRYPTED PRIVATE KEY");
    let read = legacy::read(&der).unwrap().expect("PBEWithSHA1AndDESede");
    assert_eq!(
        *read
            .decrypt(PASS_ASCII.as_bytes())
            .unwrap()
            .to_pkcs8_der()
            .unwrap(),
        *private("dsa1024").to_pkcs8_der().unwrap()
    );
    // The default stays PBES2: not the legacy scheme.
    let default = key
        .write(KeyFormat::Pkcs8Pem, Some(PASS_ASCII.as_bytes()))
        .unwrap();
    let (_, der) = pem::decode(std::str::from_utf8(&default).unwrap()).unwrap();
    assert!(legacy::read(&der).unwrap().is_none());
    // Asked for where it does not apply, or for a passphrase the reference cannot take: an
    // error, never a file written otherwise.
    for (format, passphrase) in [
        (KeyFormat::Pkcs8Pem, None),
        (KeyFormat::Reference, Some(PASS_ASCII)),
        (KeyFormat::Jwk, Some(PASS_ASCII)),
        (KeyFormat::Pkcs8Pem, Some(PASS)),
    ] {
        assert!(matches!(
            key.write_with(format, passphrase.map(str::as_bytes), legacy),
            Err(KeyFileError::Unsupported(_))
        ));
    }
    assert!(key
        .to_public()
        .write_with(KeyFormat::Pkcs8Pem, Some(b"x"), legacy)
        .is_err());
}

/// The same key, salt and iterations give the file OpenSSL's `pkcs8 -v1 PBE-SHA1-3DES`
/// gave: `dsa1024_priv_3des.pem`'s salt and count, re-encrypted, are its own bytes.
#[test]
fn the_legacy_writer_gives_openssls_bytes() {
    for (file, name, pass) in [
        ("dsa1024_priv_3des.pem", "dsa1024", PASS),
        ("rsa_priv_3des_jdk.pem", "rsa", PASS_ASCII),
    ] {
        let text = String::from_utf8(convert_key(file)).unwrap();
        let (_, der) = pem::decode(&text).unwrap();
        let info = ::pkcs12::pbe_params::EncryptedPrivateKeyInfo::from_der(&der).unwrap();
        let params: ::pkcs12::pbe_params::Pkcs12PbeParams = info
            .encryption_algorithm
            .parameters
            .unwrap()
            .decode_as()
            .unwrap();
        let again = legacy::encrypt_with(
            &private(name).to_pkcs8_der().unwrap(),
            pass.as_bytes(),
            params.salt.as_bytes(),
            params.iterations as u32,
        )
        .unwrap();
        assert_eq!(again, *der, "{file}");
    }
}

/// What a user's key file that is none says: not a key file, and which formats are read;
/// a missing one names no I/O kind but "no such file"; an encrypted one without its
/// passphrase says so in a way callers ask for (`needs_passphrase`).
#[test]
fn key_files_that_are_none_say_what_is_read() {
    let passwd = b"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/sh\n";
    for passphrase in [None, Some(&b"x"[..])] {
        let e = PrivateKey::from_key_file(passwd, passphrase).unwrap_err();
        assert_eq!(e, KeyFileError::NotAPrivateKeyFile);
        let said = e.to_string();
        assert!(said.starts_with("not a private key file: "), "{said}");
        for format in ["reference", "PKCS#8", "PEM", "DER", "JWK"] {
            assert!(said.contains(format), "{said}");
        }
    }
    assert_eq!(KeyFormat::detect(passwd), None);
    assert_eq!(
        KeyMaterial::read(passwd, None, None).map(|_| ()),
        Err(KeyFileError::UnknownFormat)
    );
    // The reference's public file is a key file, but no private one.
    assert_eq!(
        PrivateKey::from_key_file(&keys("rsa_pubkey.bin"), None).map(|_| ()),
        Err(KeyFileError::NotPrivate("a key file"))
    );
    let missing = fixture("auth/no-such-key-file");
    let e = PrivateKey::from_file(&missing).unwrap_err();
    assert_eq!(e, KeyFileError::Io("no such file".into()));
    assert_eq!(e.to_string(), "cannot read the key file: no such file");
    // Encrypted, no passphrase: typed, for the caller to name its option.
    let encrypted = [
        convert_key("rsa_priv_3des.pem"),
        KeyMaterial::Private(private("dsa1024"))
            .write(KeyFormat::Reference, Some(b"x"))
            .unwrap()
            .to_vec(),
    ];
    for file in encrypted {
        let e = PrivateKey::from_key_file(&file, None).unwrap_err();
        assert!(e.needs_passphrase(), "{e:?}");
    }
    assert!(!KeyFileError::NotAPrivateKeyFile.needs_passphrase());
}

/// A `PBEWithSHA1AndDESede` file with any byte changed, or cut anywhere, is a typed error or
/// a key, never a panic; an iteration count over the bound, or not positive, is refused
/// before any key derivation.
#[test]
fn mutated_legacy_files_are_typed_errors() {
    let key = private("dsa1024");
    let pkcs8 = key.to_pkcs8_der().unwrap();
    let der = legacy::encrypt_with(&pkcs8, b"pass", &[7; 8], 1).unwrap();
    let try_read = |bytes: &[u8]| {
        if let Ok(Some(file)) = legacy::read(bytes) {
            let _ = file.decrypt(b"pass");
        }
    };
    for at in 0..der.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut changed = der.clone();
            changed[at] ^= flip;
            try_read(&changed);
        }
        try_read(&der[..at]);
    }
    let read = legacy::read(&der).unwrap().unwrap();
    assert_eq!(
        *read.decrypt(b"pass").unwrap().to_pkcs8_der().unwrap(),
        *pkcs8
    );
    // The parameters written by hand around 8 bytes of "ciphertext": no derivation runs.
    let with_count = |iterations: i32| {
        use ::pkcs12::pbe_params::{EncryptedPrivateKeyInfo, Pkcs12PbeParams};
        use pkcs8::der::asn1::OctetString;
        use pkcs8::der::{Any, Encode};
        let params = Pkcs12PbeParams {
            salt: OctetString::new([7u8; 8]).unwrap(),
            iterations,
        };
        EncryptedPrivateKeyInfo {
            encryption_algorithm: pkcs8::spki::AlgorithmIdentifierOwned {
                oid: legacy::OID,
                parameters: Some(Any::encode_from(&params).unwrap()),
            },
            encrypted_data: OctetString::new([0u8; 8]).unwrap(),
        }
        .to_der()
        .unwrap()
    };
    let too_many = i32::try_from(MAX_PKCS8_PBKDF2_ITERATIONS + 1).unwrap();
    for iterations in [too_many, i32::MAX, 0, -1] {
        assert!(
            matches!(
                legacy::read(&with_count(iterations)).map(|_| ()),
                Err(KeyFileError::EncryptionParameters(_))
            ),
            "{iterations}"
        );
    }
    assert!(legacy::read(&with_count(1)).unwrap().is_some());
}
