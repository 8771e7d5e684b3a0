//! `admin keygen` and `admin convert-key` as a user runs them (standard input closed, so
//! nothing can be asked on a terminal): the files they write, read back by the library;
//! their refusals (exit 2, nothing written); and a generated key, its public file stored as
//! an HS_PUBKEY value on the loopback test server, authenticating `resolve --key-file` in
//! each private format.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use handle_resolver::auth::{KeyFormat, KeyMaterial};
use handle_resolver::wire::PublicKey;

use crate::support::examples::{command, example, status, stderr};

const PASSPHRASE: &str = "correct horse battery";

/// A fresh directory, with the passphrase in `pass` (and a newline, which is not part of it)
/// and a wrong one in `wrong`.
fn scratch() -> PathBuf {
    let dir = crate::support::examples::scratch("keys-cli");
    std::fs::write(dir.join("pass"), format!("{PASSPHRASE}\n")).unwrap();
    std::fs::write(dir.join("wrong"), "wrong\n").unwrap();
    dir
}

/// The words of `line`, each `@name` replaced by the path of `name` in `dir`.
fn words(line: &str, dir: &Path) -> Vec<String> {
    line.split_whitespace()
        .map(|w| match w.strip_prefix('@') {
            Some(name) => file(dir, name),
            None => w.to_string(),
        })
        .collect()
}

/// Runs `admin` with the words of `line` (see [`words`]), stdin closed, `env` set.
fn admin(line: &str, dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = command(&example("admin"), &words(line, dir));
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(Stdio::null()).output().unwrap()
}

/// [`admin`], which must succeed.
fn ok(line: &str, dir: &Path, env: &[(&str, &str)]) -> Output {
    let o = admin(line, dir, env);
    assert_eq!(status(&o), 0, "{line}: {}", stderr(&o));
    o
}

/// [`admin`], which must exit 2 saying `says`, and write no `out`.
fn refused(line: &str, dir: &Path, env: &[(&str, &str)], says: &str) {
    let o = admin(line, dir, env);
    assert_eq!(status(&o), 2, "{line}");
    assert!(stderr(&o).contains(says), "{line}: {}", stderr(&o));
    assert!(!dir.join("out").exists(), "{line}");
}

fn file(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

fn bytes(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

fn read(dir: &Path, name: &str, passphrase: Option<&str>) -> KeyMaterial {
    KeyMaterial::read(&bytes(dir, name), None, passphrase.map(str::as_bytes))
        .unwrap()
        .key
}

/// All the private numbers of a key.
fn numbers(k: &KeyMaterial) -> Vec<u8> {
    match k {
        KeyMaterial::Private(k) => k.to_reference_encoding().unwrap().to_vec(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn keygen_writes_the_reference_files() {
    let dir = scratch();
    ok(
        "keygen --passphrase-file @pass @priv.bin @pub.bin",
        &dir,
        &[],
    );
    let private = bytes(&dir, "priv.bin");
    assert_eq!(&private[..4], &[0, 0, 0, 4], "scheme 4: encrypted");
    let key = read(&dir, "priv.bin", Some(PASSPHRASE));
    let public = PublicKey::decode(&bytes(&dir, "pub.bin")).unwrap();
    assert_eq!(key.public_key(), public);
    let modulus = public.to_rsa().unwrap();
    assert_eq!(rsa::traits::PublicKeyParts::size(&modulus), 256, "RSA-2048");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("priv.bin"))
            .unwrap()
            .permissions();
        assert_eq!(mode.mode() & 0o777, 0o600);
    }

    // The files exist: nothing is replaced without --force.
    let o = admin("keygen --no-passphrase @priv.bin @pub.bin", &dir, &[]);
    assert_eq!(status(&o), 2);
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    assert_eq!(bytes(&dir, "priv.bin"), private);
    // With --force a world-readable file is replaced by a new private one (renamed over it,
    // not written in place), and nothing is left beside it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let old = dir.join("old.bin");
        std::fs::write(&old, b"old").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        ok(
            "keygen --alg dsa --bits 1024 --no-passphrase --force @old.bin @old.pub",
            &dir,
            &[],
        );
        assert_eq!(&bytes(&dir, "old.bin")[..4], &[0, 0, 0, 1]);
        let mode = std::fs::metadata(&old).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".new-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    // DSA of the reference's default size, unencrypted.
    ok(
        "keygen --alg DSA --bits 1024 --no-passphrase @d.bin @d.pub",
        &dir,
        &[],
    );
    assert_eq!(&bytes(&dir, "d.bin")[..4], &[0, 0, 0, 1]);
    let PublicKey::Dsa(dsa) = read(&dir, "d.pub", None).public_key() else {
        panic!("not DSA")
    };
    assert_eq!(dsa.q.len(), 21, "q of 160 bits, with Java's sign byte");
    // L/N given, the passphrase from a variable.
    let env = [("KEYGEN_PASS", PASSPHRASE)];
    let line = "keygen --alg dsa --bits 2048/256 --passphrase-env KEYGEN_PASS @e.bin @e.pub";
    ok(line, &dir, &env);
    let e = read(&dir, "e.bin", Some(PASSPHRASE));
    assert_eq!(e.public_key(), read(&dir, "e.pub", None).public_key());

    // Refused, nothing written: no passphrase option and no terminal to ask on; a size DSA
    // does not have; an empty passphrase variable.
    refused("keygen @out @out.pub", &dir, &[], "no terminal");
    let line = "keygen --alg dsa --bits 2048/160 --no-passphrase @out @out.pub";
    refused(line, &dir, &[], "L/N");
    let line = "keygen --passphrase-env KEYGEN_EMPTY @out @out.pub";
    refused(line, &dir, &[("KEYGEN_EMPTY", "")], "KEYGEN_EMPTY");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_key_goes_through_every_format() {
    let dir = scratch();
    ok(
        "keygen --alg dsa --passphrase-file @pass @priv.bin @pub.bin",
        &dir,
        &[],
    );
    let original = read(&dir, "priv.bin", Some(PASSPHRASE));

    // reference (encrypted) -> PKCS#8 (encrypted) -> JWK -> reference (unencrypted).
    let env = [("KEY_PASS", PASSPHRASE)];
    let o = ok(
        "convert-key --to pkcs8-pem --in-passphrase-env KEY_PASS --out-passphrase-file @pass \
         @priv.bin @key.pem",
        &dir,
        &env,
    );
    let said = stderr(&o);
    assert!(
        said.contains("(reference, private, encrypted) ->"),
        "{said}"
    );
    let pem = String::from_utf8(bytes(&dir, "key.pem")).unwrap();
    assert!(pem.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"));
    assert_eq!(
        numbers(&read(&dir, "key.pem", Some(PASSPHRASE))),
        numbers(&original)
    );
    ok(
        "convert-key --to jwk --in-passphrase-file @pass @key.pem @key.jwk",
        &dir,
        &[],
    );
    let doc: serde_json::Value = serde_json::from_slice(&bytes(&dir, "key.jwk")).unwrap();
    assert_eq!(doc["kty"], "DSA");
    assert!(doc.get("x").is_some() && doc.get("y").is_none());
    let line = "convert-key --from jwk --to reference --no-passphrase @key.jwk @back.bin";
    ok(line, &dir, &[]);
    assert_eq!(&bytes(&dir, "back.bin")[..4], &[0, 0, 0, 1]);
    assert_eq!(numbers(&read(&dir, "back.bin", None)), numbers(&original));

    // Public outputs, on standard output: the reference's public file is keygen's PUBFILE.
    for (to, expected) in [
        ("reference", bytes(&dir, "pub.bin")),
        (
            "spki-pem",
            original.write(KeyFormat::SpkiPem, None).unwrap().to_vec(),
        ),
        (
            "jwk",
            original
                .to_public()
                .write(KeyFormat::Jwk, None)
                .unwrap()
                .to_vec(),
        ),
    ] {
        let o = ok(
            &format!("convert-key --public --to {to} @back.bin -"),
            &dir,
            &[],
        );
        assert_eq!(o.stdout, expected, "{to}");
    }

    // Refusals: an encrypted input without its passphrase, or with a wrong one; a
    // passphrase for JWK output; a public key to PKCS#8; the input is no SPKI; no terminal
    // to ask for the output's passphrase; a format there is not.
    for (line, says) in [
        ("--to jwk @priv.bin @out", "needs a passphrase"),
        (
            "--to jwk --in-passphrase-file @wrong @key.pem @out",
            "does not decrypt",
        ),
        (
            "--to jwk --out-passphrase-file @pass @back.bin @out",
            "never encrypted",
        ),
        (
            "--to pkcs8-pem --no-passphrase @pub.bin @out",
            "public key only",
        ),
        (
            "--from spki-pem --to jwk @back.bin @out",
            "SubjectPublicKeyInfo",
        ),
        ("--to pkcs8-pem @back.bin @out", "no terminal"),
        ("--to der @back.bin @out", "unknown key format"),
    ] {
        refused(&format!("convert-key {line}"), &dir, &[], says);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The reference's `hdl-convert-key` files (`fixtures/auth/convert-key`: CRLF, 76-column
/// PEM, plain and `PBEWithSHA1AndDESede`, private and public) convert to the reference's
/// own files of the same keys, byte for byte; a key written with `--legacy-encryption` is
/// read back by OpenSSL (which must be installed: `.ci/run` installs it; a missing
/// `openssl` fails this test).
#[test]
fn convert_key_reads_and_writes_the_references_pem() {
    let dir = scratch();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let made = |name: &str| root.join("auth/convert-key").join(name);
    let captured =
        |name: &str| std::fs::read(root.join("reference/captures-auth/keys").join(name)).unwrap();
    let shown = |p: PathBuf| p.to_string_lossy().into_owned();
    let env = [("KEY_PASS", "grüße-päss-ß-3")];
    for (input, expected) in [
        ("rsa_priv.pem", "rsa_privkey.bin"),
        ("dsa_priv.pem", "dsa_privkey.bin"),
        ("dsa1024_priv_3des.pem", "dsa1024_privkey.bin"),
        ("rsa_priv_3des.pem", "rsa_privkey.bin"),
        ("rsa_pub.pem", "rsa_pubkey.bin"),
        ("dsa_pub.pem", "dsa_pubkey.bin"),
    ] {
        let pass = if input.contains("3des") {
            "--in-passphrase-env KEY_PASS "
        } else {
            ""
        };
        let line = format!(
            "convert-key --to reference --no-passphrase {pass}{} @out.bin",
            shown(made(input))
        );
        ok(&line, &dir, &env);
        assert_eq!(bytes(&dir, "out.bin"), captured(expected), "{input}");
        std::fs::remove_file(dir.join("out.bin")).unwrap();
    }

    // The legacy form, written on request, read back by OpenSSL to the same PKCS#8.
    let key = shown(made("rsa_priv.pem"));
    let o = ok(
        &format!(
            "convert-key --to pkcs8-pem --legacy-encryption --out-passphrase-file @pass \
             {key} @legacy.pem"
        ),
        &dir,
        &[],
    );
    assert!(
        stderr(&o).contains("PBEWithSHA1AndDESede"),
        "{}",
        stderr(&o)
    );
    let openssl = |args: &[&str]| {
        let o = std::process::Command::new("openssl")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("openssl must be installed for this test (.ci/run installs it)");
        assert!(o.status.success(), "openssl {args:?}: {}", stderr(&o));
        o.stdout
    };
    let legacy = file(&dir, "legacy.pem");
    let parsed = String::from_utf8(openssl(&["asn1parse", "-in", &legacy])).unwrap();
    assert!(
        parsed.contains("pbeWithSHA1And3-KeyTripleDES-CBC"),
        "{parsed}"
    );
    let pass = format!("file:{}", file(&dir, "pass"));
    // OpenSSL writes the decrypted PrivateKeyInfo as PEM (its DER output is PKCS#1 for RSA),
    // 64 columns and LF: the text our writer gives for the key.
    let decrypted = openssl(&["pkcs8", "-in", &legacy, "-passin", &pass]);
    let original = KeyMaterial::read(&std::fs::read(made("rsa_priv.pem")).unwrap(), None, None)
        .unwrap()
        .key;
    let KeyMaterial::Private(original) = original else {
        panic!("a private key")
    };
    let text = String::from_utf8(decrypted).unwrap();
    assert!(text.starts_with("-----BEGIN PRIVATE KEY-----\n"), "{text}");
    assert_eq!(text, *original.to_pkcs8_pem(None).unwrap());

    // Where it does not apply, and a passphrase the reference's JDK cannot take.
    for (line, env, says) in [
        (
            "--to reference --legacy-encryption --out-passphrase-file @pass",
            &[][..],
            "--legacy-encryption encrypts a private key written as pkcs8-pem",
        ),
        (
            "--to pkcs8-pem --public --legacy-encryption",
            &[][..],
            "--legacy-encryption",
        ),
        (
            "--to pkcs8-pem --legacy-encryption --out-passphrase-env KEY_PASS",
            &env[..],
            "not ASCII",
        ),
    ] {
        refused(&format!("convert-key {line} {key} @out"), &dir, env, says);
    }
    let o = admin(
        &format!("convert-key --to pkcs8-pem --legacy-encryption --no-passphrase {key} @out"),
        &dir,
        &[],
    );
    assert_eq!(status(&o), 2, "clap refuses the pair");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// keygen's PUBFILE stored as is in an HS_PUBKEY value; the private key, in the reference's
/// file and converted to encrypted PKCS#8 and to JWK, answers the server's challenge for
/// `resolve --key-file`, which then sees the record's admin-only value.
#[cfg(feature = "testing")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_key_authenticates_with_the_test_server() {
    use base64ct::{Base64, Encoding};
    use handle_resolver::testing::{Store, TestServer, TestServerConfig};
    use handle_resolver::wire::json::values_from_json;
    use handle_resolver::wire::Limits;

    let dir = scratch();
    ok(
        "keygen --passphrase-file @pass @priv.bin @pub.bin",
        &dir,
        &[],
    );
    let line = "convert-key --to pkcs8-pem --in-passphrase-file @pass --out-passphrase-file @pass";
    ok(&format!("{line} @priv.bin @key.pem"), &dir, &[]);
    let line = "convert-key --to jwk --in-passphrase-file @pass @priv.bin @key.jwk";
    ok(line, &dir, &[]);
    // The reference's forms: PBEWithSHA1AndDESede, and plain PEM rewrapped as its
    // hdl-convert-key writes it (CRLF, 76 columns).
    let line = "convert-key --to pkcs8-pem --legacy-encryption --in-passphrase-file @pass \
                --out-passphrase-file @pass";
    ok(&format!("{line} @priv.bin @key3des.pem"), &dir, &[]);
    let line = "convert-key --to pkcs8-pem --in-passphrase-file @pass --no-passphrase";
    ok(&format!("{line} @priv.bin @plain.pem"), &dir, &[]);
    let plain = String::from_utf8(bytes(&dir, "plain.pem")).unwrap();
    let base64: String = plain.lines().filter(|l| !l.starts_with("-----")).collect();
    let mut crlf76 = String::from("-----BEGIN PRIVATE KEY-----\r\n");
    for chunk in base64.as_bytes().chunks(76) {
        crlf76.push_str(std::str::from_utf8(chunk).unwrap());
        crlf76.push_str("\r\n");
    }
    crlf76.push_str("-----END PRIVATE KEY-----\r\n");
    std::fs::write(dir.join("crlf76.pem"), crlf76).unwrap();

    let public = Base64::encode_string(&bytes(&dir, "pub.bin"));
    let user = format!(
        r#"[{{"index": 300, "type": "HS_PUBKEY", "data": {{"format": "base64", "value": "{public}"}}}}]"#
    );
    let protected = r#"[
        {"index": 1, "type": "URL", "data": "https://example.org/"},
        {"index": 2, "type": "EMAIL", "data": {"format": "string", "value": "hidden@example.org"},
         "permissions": "1100"},
        {"index": 100, "type": "HS_ADMIN", "data": {"format": "admin", "value":
            {"handle": "20.500.12345/KEYGEN-USER", "index": 300, "permissions": "111111111111"}}}]"#;
    let store = std::sync::Arc::new(Store::case_insensitive());
    for (handle, values) in [
        ("20.500.12345/KEYGEN-USER", user.as_str()),
        ("20.500.12345/KEYGEN-PROTECTED", protected),
    ] {
        let values: serde_json::Value = serde_json::from_str(values).unwrap();
        store.insert(
            handle,
            values_from_json(&values, &Limits::default()).unwrap(),
        );
    }
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let addr = server.addr().to_string();

    let resolve = example("resolve");
    // Without the key the value is not there; with it, in each format, it is.
    for (key_file, encrypted) in [
        ("", false),
        ("priv.bin", true),
        ("key.pem", true),
        ("key3des.pem", true),
        ("crlf76.pem", false),
        ("key.jwk", false),
    ] {
        let mut args = words(&format!("--server {addr}"), &dir);
        if !key_file.is_empty() {
            let auth = "--auth 300:20.500.12345/KEYGEN-USER --key-file";
            args.extend(words(&format!("{auth} @{key_file}"), &dir));
        }
        if encrypted {
            args.extend(["--key-passphrase-env".into(), "KEY_PASS".into()]);
        }
        args.extend(["--json".into(), "20.500.12345/KEYGEN-PROTECTED".into()]);
        let mut c = command(&resolve, &args);
        c.env("KEY_PASS", PASSPHRASE).stdin(Stdio::null());
        let o = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        assert_eq!(status(&o), 0, "{key_file}: {}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let values = doc["values"].as_array().unwrap();
        let hidden = values
            .iter()
            .any(|v| v["data"]["value"] == "hidden@example.org");
        assert_eq!(hidden, !key_file.is_empty(), "{key_file}: {doc}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `--key-file` says of a file that is no key, of a missing file, and of an encrypted
/// key without its passphrase, in `admin` and `resolve` alike (the key is read before
/// anything is sent: the server named is never asked).
#[test]
fn key_file_messages_name_the_file_and_what_to_do() {
    let dir = scratch();
    std::fs::write(dir.join("passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    ok(
        "keygen --passphrase-file @pass @priv.bin @pub.bin",
        &dir,
        &[],
    );
    let legacy = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/auth/convert-key/rsa_priv_3des.pem")
        .to_string_lossy()
        .into_owned();
    let cases = [
        (
            file(&dir, "passwd"),
            "not a usable private key: not a private key file: the formats read are the \
             reference's private key file (hdl-keygen's), PKCS#8 (PEM, encrypted or not, or \
             DER) and a private JWK",
        ),
        (file(&dir, "missing.pem"), "cannot read it: no such file"),
        (
            file(&dir, "priv.bin"),
            "key file is encrypted (scheme 4) and needs a passphrase: name the environment \
             variable that holds it with --key-passphrase-env VAR",
        ),
        (
            legacy,
            "the PKCS#8 key file is encrypted and needs a passphrase: name the environment \
             variable that holds it with --key-passphrase-env VAR",
        ),
    ];
    let me = "--server 127.0.0.1:9 --auth 300:20.500.12345/USER";
    for (key, says) in cases {
        let expected = format!("--key-file {key}: {says}");
        for (bin, rest) in [
            ("admin", "delete 20.500.12345/X"),
            ("resolve", "20.500.12345/X"),
        ] {
            let line = format!("{me} --key-file {key} {rest}");
            let o = command(&example(bin), &words(&line, &dir))
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(status(&o), 2, "{bin} {line}: {}", stderr(&o));
            assert!(
                stderr(&o).contains(&expected),
                "{bin}: {}\nexpected: {expected}",
                stderr(&o)
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
