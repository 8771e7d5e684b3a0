//! `admin keygen` and `admin convert-key` as a user runs them (standard input closed, so
//! nothing can be asked on a terminal): the files they write, read back by the library;
//! their refusals (exit 2, nothing written); and a generated key, its public file stored as
//! an HS_PUBKEY value on the loopback test server, authenticating `resolve --key-file` in
//! each private format.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use handle_resolver::auth::{KeyFormat, KeyMaterial};
use handle_resolver::wire::PublicKey;

use crate::support::examples::{command, example};

const PASSPHRASE: &str = "correct horse battery";

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = command(&example("admin"), args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdin(Stdio::null()).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn status(o: &Output) -> i32 {
    o.status.code().unwrap()
}

/// A fresh directory, with the passphrase in `pass` (with a newline, which is not part of
/// it).
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "handle-resolver-keys-cli-{}-{:x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pass"), format!("{PASSPHRASE}\n")).unwrap();
    dir
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).to_string_lossy().into_owned()
}

fn read(path: &str, passphrase: Option<&str>) -> KeyMaterial {
    let bytes = std::fs::read(path).unwrap();
    KeyMaterial::read(&bytes, None, passphrase.map(str::as_bytes))
        .unwrap()
        .key
}

#[test]
fn keygen_writes_the_reference_files() {
    let dir = scratch();
    let (pass, priv_bin, pub_bin) = (p(&dir, "pass"), p(&dir, "priv.bin"), p(&dir, "pub.bin"));
    let o = run(
        &["keygen", "--passphrase-file", &pass, &priv_bin, &pub_bin],
        &[],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let file = std::fs::read(&priv_bin).unwrap();
    assert_eq!(&file[..4], &[0, 0, 0, 4], "scheme 4: encrypted");
    let key = read(&priv_bin, Some(PASSPHRASE));
    let public = PublicKey::decode(&std::fs::read(&pub_bin).unwrap()).unwrap();
    assert_eq!(key.public_key(), public);
    assert_eq!(
        public
            .to_rsa()
            .map(|k| rsa::traits::PublicKeyParts::size(&k)),
        Ok(256)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&priv_bin).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // The files exist: nothing is replaced without --force.
    let o = run(&["keygen", "--no-passphrase", &priv_bin, &pub_bin], &[]);
    assert_eq!(status(&o), 2);
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&priv_bin).unwrap(), file);

    // DSA, the reference's default size, unencrypted; the passphrase from a variable.
    let (d_bin, d_pub) = (p(&dir, "d.bin"), p(&dir, "d.pub"));
    let o = run(
        &[
            "keygen",
            "--alg",
            "DSA",
            "--bits",
            "1024",
            "--no-passphrase",
            &d_bin,
            &d_pub,
        ],
        &[],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(&std::fs::read(&d_bin).unwrap()[..4], &[0, 0, 0, 1]);
    let PublicKey::Dsa(dsa) = read(&d_pub, None).public_key() else {
        panic!("not DSA")
    };
    assert_eq!(dsa.q.len(), 21, "q of 160 bits, with Java's sign byte");
    let (e_bin, e_pub) = (p(&dir, "e.bin"), p(&dir, "e.pub"));
    let o = run(
        &[
            "keygen",
            "--alg",
            "dsa",
            "--bits",
            "2048/256",
            "--passphrase-env",
            "KEYGEN_PASS",
            &e_bin,
            &e_pub,
        ],
        &[("KEYGEN_PASS", PASSPHRASE)],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(
        read(&e_bin, Some(PASSPHRASE)).public_key(),
        read(&e_pub, None).public_key()
    );

    // Refused, nothing written: no passphrase option and no terminal to ask on; a size
    // DSA does not have; an empty passphrase variable.
    let (x_bin, x_pub) = (p(&dir, "x.bin"), p(&dir, "x.pub"));
    for (args, env, says) in [
        (vec!["keygen", &x_bin, &x_pub], vec![], "no terminal"),
        (
            vec![
                "keygen",
                "--alg",
                "dsa",
                "--bits",
                "2048/160",
                "--no-passphrase",
                &x_bin,
                &x_pub,
            ],
            vec![],
            "L/N",
        ),
        (
            vec!["keygen", "--passphrase-env", "KEYGEN_EMPTY", &x_bin, &x_pub],
            vec![("KEYGEN_EMPTY", "")],
            "KEYGEN_EMPTY",
        ),
    ] {
        let o = run(&args, &env);
        assert_eq!(status(&o), 2, "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!Path::new(&x_bin).exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn convert_key_goes_through_every_format() {
    let dir = scratch();
    let pass = p(&dir, "pass");
    let env = [("KEY_PASS", PASSPHRASE)];
    let (priv_bin, pub_bin) = (p(&dir, "priv.bin"), p(&dir, "pub.bin"));
    let o = run(
        &[
            "keygen",
            "--alg",
            "dsa",
            "--passphrase-file",
            &pass,
            &priv_bin,
            &pub_bin,
        ],
        &[],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let original = read(&priv_bin, Some(PASSPHRASE));
    let numbers = |k: &KeyMaterial| match k {
        KeyMaterial::Private(k) => k.to_reference_encoding().unwrap().to_vec(),
        other => panic!("{other:?}"),
    };

    // reference (encrypted) -> PKCS#8 (encrypted) -> JWK -> reference (unencrypted).
    let pem = p(&dir, "key.pem");
    let o = run(
        &[
            "convert-key",
            "--to",
            "pkcs8-pem",
            "--in-passphrase-env",
            "KEY_PASS",
            "--out-passphrase-file",
            &pass,
            &priv_bin,
            &pem,
        ],
        &env,
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(reference, private, encrypted) ->"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_to_string(&pem)
        .unwrap()
        .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"));
    assert_eq!(numbers(&read(&pem, Some(PASSPHRASE))), numbers(&original));
    let jwk = p(&dir, "key.jwk");
    let o = run(
        &[
            "convert-key",
            "--to",
            "jwk",
            "--in-passphrase-file",
            &pass,
            &pem,
            &jwk,
        ],
        &[],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&jwk).unwrap()).unwrap();
    assert_eq!(doc["kty"], "DSA");
    assert!(doc.get("x").is_some() && doc.get("y").is_none());
    let back = p(&dir, "back.bin");
    let o = run(
        &[
            "convert-key",
            "--from",
            "jwk",
            "--to",
            "reference",
            "--no-passphrase",
            &jwk,
            &back,
        ],
        &[],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(&std::fs::read(&back).unwrap()[..4], &[0, 0, 0, 1]);
    assert_eq!(numbers(&read(&back, None)), numbers(&original));

    // Public outputs, to standard output: the reference's public file is keygen's PUBFILE.
    for (to, expected) in [
        ("reference", std::fs::read(&pub_bin).unwrap()),
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
        let o = run(&["convert-key", "--public", "--to", to, &back, "-"], &[]);
        assert_eq!(status(&o), 0, "{to}: {}", stderr(&o));
        assert_eq!(o.stdout, expected, "{to}");
    }

    // Refusals: an encrypted input without its passphrase, or with a wrong one; a
    // passphrase for JWK output; a public key to PKCS#8; the input is no SPKI.
    let out = p(&dir, "out");
    let wrong = p(&dir, "wrong");
    std::fs::write(&wrong, "wrong\n").unwrap();
    for (args, says) in [
        (
            vec!["convert-key", "--to", "jwk", &priv_bin, &out],
            "needs a passphrase",
        ),
        (
            vec![
                "convert-key",
                "--to",
                "jwk",
                "--in-passphrase-file",
                &wrong,
                &pem,
                &out,
            ],
            "does not decrypt",
        ),
        (
            vec![
                "convert-key",
                "--to",
                "jwk",
                "--out-passphrase-file",
                &pass,
                &back,
                &out,
            ],
            "never encrypted",
        ),
        (
            vec![
                "convert-key",
                "--to",
                "pkcs8-pem",
                "--no-passphrase",
                &pub_bin,
                &out,
            ],
            "public key only",
        ),
        (
            vec![
                "convert-key",
                "--from",
                "spki-pem",
                "--to",
                "jwk",
                &back,
                &out,
            ],
            "SubjectPublicKeyInfo",
        ),
        (
            vec!["convert-key", "--to", "pkcs8-pem", &back, &out],
            "no terminal",
        ),
        (
            vec!["convert-key", "--to", "der", &back, &out],
            "unknown key format",
        ),
    ] {
        let o = run(&args, &[]);
        assert_eq!(status(&o), 2, "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(!Path::new(&out).exists(), "{args:?}");
    }
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
    let pass = p(&dir, "pass");
    let (priv_bin, pub_bin) = (p(&dir, "priv.bin"), p(&dir, "pub.bin"));
    let o = run(
        &["keygen", "--passphrase-file", &pass, &priv_bin, &pub_bin],
        &[],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let (pem, jwk) = (p(&dir, "key.pem"), p(&dir, "key.jwk"));
    for (to, out, passphrase) in [
        ("pkcs8-pem", &pem, "--out-passphrase-file"),
        ("jwk", &jwk, ""),
    ] {
        let mut args = vec!["convert-key", "--to", to, "--in-passphrase-file", &pass];
        if !passphrase.is_empty() {
            args.extend([passphrase, pass.as_str()]);
        }
        args.extend([priv_bin.as_str(), out.as_str()]);
        let o = run(&args, &[]);
        assert_eq!(status(&o), 0, "{}", stderr(&o));
    }

    let public = Base64::encode_string(&std::fs::read(&pub_bin).unwrap());
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
    let hidden = |key_file: &str, encrypted: bool| {
        let mut args = vec![
            "--server",
            &addr,
            "--auth",
            "300:20.500.12345/KEYGEN-USER",
            "--key-file",
            key_file,
        ];
        if encrypted {
            args.extend(["--key-passphrase-env", "KEY_PASS"]);
        }
        args.extend(["--json", "20.500.12345/KEYGEN-PROTECTED"]);
        let mut c = command(&resolve, &args);
        c.env("KEY_PASS", PASSPHRASE).stdin(Stdio::null());
        async move {
            let o = tokio::task::spawn_blocking(move || c.output().unwrap())
                .await
                .unwrap();
            assert_eq!(status(&o), 0, "{}", stderr(&o));
            let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            doc["values"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| v["data"]["value"] == "hidden@example.org")
        }
    };
    for (key_file, encrypted) in [(&priv_bin, true), (&pem, true), (&jwk, false)] {
        assert!(hidden(key_file, encrypted).await, "{key_file}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
