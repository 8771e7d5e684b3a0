//! The `admin` example and `resolve --auth` as a user runs them, against the loopback test
//! server holding the captures-auth records and identities: create, add, modify, remove,
//! reading a non-public value with a secret file and with a key file, list, delete; the
//! refusals (exit 1) and bad input (exit 2, nothing sent).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::captures::auth_dir;
use super::loopback::server;

use crate::support::examples::{example, status, stderr};

const HANDLE: &str = "20.500.12345/CLI-MADE";

/// Runs `bin` with `args`, without the environment's root, server or secret.
async fn run(bin: &Path, args: &[&str]) -> Output {
    crate::support::examples::run(bin, args.iter().map(|a| a.to_string()).collect()).await
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A fresh directory for this test's files.
fn scratch() -> PathBuf {
    crate::support::examples::scratch("admin-cli")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// The (index, data) of each value `resolve --json` printed.
fn values(o: &Output) -> Vec<(u64, String)> {
    let doc: Value = serde_json::from_str(stdout(o).trim()).unwrap();
    doc["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["index"].as_u64().unwrap(),
                v["data"]["value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_cli_and_resolve_auth_run_the_whole_flow() {
    let (admin, resolve) = (example("admin"), example("resolve"));
    let server = server().await;
    let addr = server.addr().to_string();
    let dir = scratch();
    // The identities and keys of captures-auth/keys/identities.json; the secret file ends
    // in a newline, which is not part of the secret.
    let secret = write(&dir, "seckey", "public-test-secret-1\n");
    let wrong = write(&dir, "wrong", "public-WRONG-secret\n");
    let rsa_key = auth_dir().join("keys/rsa_privkey.bin");
    let rsa_key = rsa_key.to_str().unwrap();
    let me = ["--server", &addr, "--auth", "300:20.500.12345/USER-SECKEY"];
    let as_me = |rest: &[&str]| -> Vec<String> {
        me.iter()
            .chain(["--secret-file", secret.as_str()].iter())
            .chain(rest.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let go = |bin: &Path, a: Vec<String>| {
        let bin = bin.to_path_buf();
        async move {
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            run(&bin, &refs).await
        }
    };

    // create: a bare array; index 2 is readable by its admins only ("1100"), and both
    // USER-SECKEY:300 and USER-RSA:300 administer it.
    let admin_of = |index: u32, who: &str| {
        format!(
            r#"{{"index": {index}, "type": "HS_ADMIN", "data": {{"format": "admin",
                "value": {{"handle": "{who}", "index": 300, "permissions": "111111111111"}}}}}}"#
        )
    };
    let create = write(
        &dir,
        "create.json",
        &format!(
            r#"[{{"index": 1, "type": "URL", "data": {{"format": "string", "value": "https://example.org/v1"}}}},
               {{"index": 2, "type": "EMAIL", "data": {{"format": "string", "value": "hidden@example.org"}},
                 "permissions": "1100"}},
               {}, {}]"#,
            admin_of(100, "20.500.12345/USER-SECKEY"),
            admin_of(101, "20.500.12345/USER-RSA")
        ),
    );
    let o = go(&admin, as_me(&["create", HANDLE, "--values", &create])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), format!("created {HANDLE} (4 values)"));
    assert!(server.store().get(HANDLE.as_bytes()).is_some());
    let o = go(&admin, as_me(&["create", HANDLE, "--values", &create])).await;
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));

    // add: the PUT body shape {"values": [...]}; again at the same index is refused.
    let add = write(
        &dir,
        "add.json",
        r#"{"values": [{"index": 3, "type": "DESC", "data": {"format": "string", "value": "added"}}]}"#,
    );
    let o = go(&admin, as_me(&["add", HANDLE, "--values", &add])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let o = go(&admin, as_me(&["add", HANDLE, "--values", &add])).await;
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("a value exists"), "{}", stderr(&o));

    let modify = write(
        &dir,
        "modify.json",
        r#"[{"index": 1, "type": "URL", "data": {"format": "string", "value": "https://example.org/v2"}}]"#,
    );
    let o = go(&admin, as_me(&["modify", HANDLE, "--values", &modify])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let o = go(&admin, as_me(&["remove", HANDLE, "3"])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let o = go(&admin, as_me(&["remove", HANDLE, "99"])).await;
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("no such values"), "{}", stderr(&o));

    // Without an identity the non-public value is not there; with the secret file, and
    // with the RSA key file of the other admin, it is.
    let o = go(
        &resolve,
        vec![
            "--server".into(),
            addr.clone(),
            "--json".into(),
            HANDLE.into(),
        ],
    )
    .await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let public: Vec<u64> = values(&o).iter().map(|v| v.0).collect();
    assert!(!public.contains(&2), "{public:?}");
    let o = go(&resolve, as_me(&["--json", HANDLE])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let all = values(&o);
    let indexes: Vec<u64> = all.iter().map(|v| v.0).collect();
    assert_eq!(indexes, [1, 2, 100, 101]);
    assert_eq!(all[0].1, "https://example.org/v2");
    assert_eq!(all[1].1, "hidden@example.org");
    let with_key: Vec<String> = [
        "--server",
        &addr,
        "--auth",
        "300:20.500.12345/USER-RSA",
        "--key-file",
        rsa_key,
        "--json",
        HANDLE,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = go(&resolve, with_key).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(values(&o)[1], (2, "hidden@example.org".to_string()));

    // The secret key from the environment (the variable's newline stripped too).
    let mut c = crate::support::examples::command(
        &resolve,
        &[
            "--server",
            &addr,
            "--auth",
            "300:20.500.12345/USER-SECKEY",
            "--json",
            HANDLE,
        ],
    );
    c.env("HANDLE_RESOLVER_SECRET", "public-test-secret-1\n");
    let o = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(values(&o)[1], (2, "hidden@example.org".to_string()));

    // list: every handle under the prefix, ours among them, one a line.
    let o = go(&admin, as_me(&["list", "20.500.12345"])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let listed: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    let expected: Vec<String> = server
        .store()
        .handles_under("20.500.12345")
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect();
    assert_eq!(listed, expected);
    assert!(listed.iter().any(|h| h == HANDLE));

    // A wrong secret: refused, and the handle is still there.
    let mut wrong_args: Vec<String> = me.iter().map(|s| s.to_string()).collect();
    wrong_args.extend([
        "--secret-file".into(),
        wrong.clone(),
        "delete".into(),
        HANDLE.into(),
    ]);
    let o = go(&admin, wrong_args).await;
    assert_eq!(status(&o), 1);
    // The message names the identity and says that the server refused its key.
    assert!(
        stderr(&o).contains(&format!(
            "error: {HANDLE}: authentication failed (AUTHENTICATION_FAILED (403)): the server \
             refused the secret key of 300:20.500.12345/USER-SECKEY (a wrong secret, or \
             20.500.12345/USER-SECKEY holds no HS_SECKEY at index 300)"
        )),
        "{}",
        stderr(&o)
    );
    assert!(server.store().get(HANDLE.as_bytes()).is_some());
    // A private key that is not the identity's: the signature is refused, and said so.
    let o = go(
        &admin,
        [&me[..], &["--key-file", rsa_key, "remove", HANDLE, "1"]]
            .concat()
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
    .await;
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "the server refused the signature of 300:20.500.12345/USER-SECKEY's private key (a \
             wrong key file, or 20.500.12345/USER-SECKEY holds no matching HS_PUBKEY at index 300)"
        ),
        "{}",
        stderr(&o)
    );
    // The same wrong secret to `resolve`: refused (exit 1), the server's code in the JSON.
    let wrong_resolve: Vec<String> = [
        "--server",
        addr.as_str(),
        "--auth",
        "300:20.500.12345/USER-SECKEY",
        "--secret-file",
        wrong.as_str(),
        "--json",
        HANDLE,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = go(&resolve, wrong_resolve).await;
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\"responseCode\":403"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        stderr(&o).contains(
            "AUTHENTICATION_FAILED (403): the server refused the secret key of \
             300:20.500.12345/USER-SECKEY (a wrong secret"
        ),
        "{}",
        stderr(&o)
    );

    let o = go(&admin, as_me(&["delete", HANDLE])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(server.store().get(HANDLE.as_bytes()).is_none());
    let o = go(&admin, as_me(&["delete", HANDLE])).await;
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_come_from_the_command_line_and_bad_input_sends_nothing() {
    let (admin, resolve) = (example("admin"), example("resolve"));
    let server = server().await;
    let addr = server.addr().to_string();
    let dir = scratch();
    let me = ["--server", &addr, "--auth", "300:20.500.12345/USER-SECKEY"];
    // No option takes a secret as its value: clap rejects them (usage error, exit 2).
    for bin in [&admin, &resolve] {
        for option in ["--secret", "--secret-key", "--password", "--passphrase"] {
            let mut a: Vec<&str> = me.to_vec();
            a.extend([option, "public-test-secret-1", "delete", HANDLE]);
            let o = run(bin, &a).await;
            assert_eq!(status(&o), 2, "{option}");
            assert!(
                stderr(&o).contains("unexpected argument"),
                "{option}: {}",
                stderr(&o)
            );
        }
    }
    let not_a_key = write(&dir, "not-a-key", "this is not a key\n");
    let bad_json = write(&dir, "bad.json", r#"{"values": [{"index": "one"}]}"#);
    let values_ok = write(&dir, "ok.json", "[]");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            [&me[..], &["--key-file", &not_a_key, "delete", HANDLE]].concat(),
            "not a usable private key",
        ),
        (
            [
                &me[..],
                &["--key-file", "/nonexistent/key", "list", "20.500.12345"],
            ]
            .concat(),
            "--key-file /nonexistent/key",
        ),
        // --auth without a key, and no HANDLE_RESOLVER_SECRET.
        (
            [&me[..], &["delete", HANDLE]].concat(),
            "HANDLE_RESOLVER_SECRET",
        ),
        (
            vec![
                "--server",
                &addr,
                "--auth",
                "USER-SECKEY",
                "--secret-file",
                &not_a_key,
                "delete",
                HANDLE,
            ],
            "not INDEX:HANDLE",
        ),
        (
            [
                &me[..],
                &[
                    "--secret-file",
                    &not_a_key,
                    "create",
                    HANDLE,
                    "--values",
                    &bad_json,
                ],
            ]
            .concat(),
            "index",
        ),
        (
            [
                &me[..],
                &[
                    "--secret-file",
                    &not_a_key,
                    "create",
                    "no-slash",
                    "--values",
                    &values_ok,
                ],
            ]
            .concat(),
            "no-slash",
        ),
    ];
    for (a, text) in cases {
        let o = run(&admin, &a).await;
        assert_eq!(status(&o), 2, "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(text), "{a:?}: {}", stderr(&o));
    }
    // The same key-file error from resolve.
    let o = run(
        &resolve,
        &[
            &me[..],
            &["--key-file", &not_a_key, "20.500.12345/PROTECTED"],
        ]
        .concat(),
    )
    .await;
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a usable private key"),
        "{}",
        stderr(&o)
    );
    // Nothing of it reached the server.
    assert_eq!(server.udp_requests() + server.tcp_requests(), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `admin list PREFIX | head -1`: a reader that has gone before anything is written. The
/// run ends as it would have (status 0), without a panic or a broken-pipe message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_ends_quietly_on_a_closed_stdout() {
    use std::process::Stdio;
    let admin = example("admin");
    let server = server().await;
    let addr = server.addr().to_string();
    let dir = scratch();
    let secret = write(&dir, "seckey", "public-test-secret-1\n");
    let a = [
        "--server",
        &addr,
        "--auth",
        "300:20.500.12345/USER-SECKEY",
        "--secret-file",
        &secret,
        "list",
        "20.500.12345",
    ]
    .map(String::from);
    let o = tokio::task::spawn_blocking(move || {
        let mut child = crate::support::examples::command(&admin, &a)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the list arrives
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    // The list was asked for and answered: the handles exist to be printed.
    assert!(server.tcp_requests() > 0);
    assert!(!server.store().handles_under("20.500.12345").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `admin home` and `admin unhome` as a server administrator, against the loopback server:
/// the prefix is homed (the server then serves it and no other), then unhomed; refused for
/// an identity that is no server administrator, and bad input sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_homes_and_unhomes_prefixes_at_the_site_of_the_server() {
    let (admin, resolve) = (example("admin"), example("resolve"));
    let server = server().await;
    server
        .store()
        .add_server_admin(300, "20.500.12345/USER-SECKEY");
    let addr = server.addr().to_string();
    let dir = scratch();
    let secret = write(&dir, "seckey", "public-test-secret-1\n");
    let as_admin = |rest: &[&str]| -> Vec<String> {
        [
            "--server",
            addr.as_str(),
            "--auth",
            "300:20.500.12345/USER-SECKEY",
            "--secret-file",
            secret.as_str(),
        ]
        .iter()
        .chain(rest.iter())
        .map(|s| s.to_string())
        .collect()
    };
    let go = |bin: &Path, a: Vec<String>| {
        let bin = bin.to_path_buf();
        async move {
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            run(&bin, &refs).await
        }
    };
    // Bad input first: nothing may reach the server.
    let bad: Vec<(Vec<String>, &str)> = vec![
        (as_admin(&["home", "20.500.77/x"]), "not a prefix"),
        (as_admin(&["home", ""]), "not a prefix"),
        (
            [
                "--root",
                addr.as_str(),
                "--auth",
                "300:20.500.12345/USER-SECKEY",
                "--secret-file",
                secret.as_str(),
                "home",
                "20.500.77",
            ]
            .map(String::from)
            .to_vec(),
            "home needs --server HOST[:PORT]",
        ),
        (
            [
                "--server",
                &format!("http://{addr}"),
                "--auth",
                "300:20.500.12345/USER-SECKEY",
                "--secret-file",
                secret.as_str(),
                "unhome",
                "20.500.77",
            ]
            .map(|s| s.to_string())
            .to_vec(),
            "not its HTTP interface",
        ),
    ];
    for (a, text) in bad {
        let o = go(&admin, a.clone()).await;
        assert_eq!(status(&o), 2, "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(text), "{a:?}: {}", stderr(&o));
    }
    assert_eq!(server.udp_requests() + server.tcp_requests(), 0);

    // home: the prefix given bare; the server then serves it, and no other prefix.
    assert!(server.store().serves("20.500.12345/x"));
    let o = go(&admin, as_admin(&["home", "20.500.77"])).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        format!("homed 0.NA/20.500.77 at the site of {addr} (1 server)")
    );
    assert!(server.store().serves("20.500.77/x"));
    assert!(!server.store().serves("20.500.12345/x"));
    let o = go(
        &resolve,
        [
            "--server",
            addr.as_str(),
            "--json",
            "20.500.12345/PROTECTED",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("\"responseCode\":301"),
        "{}",
        stdout(&o)
    );

    // Not a server administrator: refused, and the prefix stays homed.
    let rsa_key = auth_dir().join("keys/rsa_privkey.bin");
    let o = go(
        &admin,
        [
            "--server",
            addr.as_str(),
            "--auth",
            "300:20.500.12345/USER-RSA",
            "--key-file",
            rsa_key.to_str().unwrap(),
            "unhome",
            "20.500.77",
        ]
        .map(String::from)
        .to_vec(),
    )
    .await;
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("not permitted"), "{}", stderr(&o));
    assert!(!server.store().serves("20.500.12345/x"));

    // unhome, the prefix handle given, and --server from HANDLE_RESOLVER_SERVER: every
    // prefix is served again.
    let mut c = crate::support::examples::command(
        &admin,
        &[
            "--auth",
            "300:20.500.12345/USER-SECKEY",
            "--secret-file",
            secret.as_str(),
            "unhome",
            "0.NA/20.500.77",
        ],
    );
    c.env("HANDLE_RESOLVER_SERVER", &addr);
    let o = tokio::task::spawn_blocking(move || c.output().unwrap())
        .await
        .unwrap();
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        format!("unhomed 0.NA/20.500.77 at the site of {addr} (1 server)")
    );
    assert!(server.store().serves("20.500.12345/x"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `admin` takes its root and server from HANDLE_RESOLVER_ROOT and HANDLE_RESOLVER_SERVER as
/// `resolve` does: an option on the command line wins, both variables at once are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_honours_the_root_and_server_of_the_environment() {
    let admin = example("admin");
    // The sample server is its own root: `list` finds 0.NA/20.500.1 there, and is asked to
    // authenticate (no identity given), which shows the request reached it.
    let server = crate::support::examples::sample_server().await;
    let addr = server.addr().to_string();
    let with_env = |vars: Vec<(&'static str, String)>, a: &[&str]| {
        let mut c = crate::support::examples::command(&admin, a);
        for (k, v) in vars {
            c.env(k, v);
        }
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    // Only a binary that reads the variables may be given them without --root or --server:
    // one that did not would go to the global root.
    let help = with_env(vec![], &["--help"]).await.unwrap();
    let help = stdout(&help);
    assert!(
        help.contains("[env: HANDLE_RESOLVER_ROOT=]")
            && help.contains("[env: HANDLE_RESOLVER_SERVER=]"),
        "{help}"
    );
    let asked = "0.NA/20.500.1: the server asks for authentication";
    let o = with_env(
        vec![("HANDLE_RESOLVER_ROOT", addr.clone())],
        &["--timeout", "5", "list", "20.500.1"],
    )
    .await
    .unwrap();
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(asked), "{}", stderr(&o));
    let tcp = server.tcp_requests();
    assert!(tcp > 0);
    // HANDLE_RESOLVER_SERVER too.
    let o = with_env(
        vec![("HANDLE_RESOLVER_SERVER", addr.clone())],
        &["--timeout", "5", "list", "20.500.1"],
    )
    .await
    .unwrap();
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(asked), "{}", stderr(&o));
    assert!(server.tcp_requests() > tcp);
    // The command line wins over the environment, before or after the subcommand.
    for a in [
        [
            "--server",
            addr.as_str(),
            "--timeout",
            "5",
            "list",
            "20.500.1",
        ],
        [
            "--timeout",
            "5",
            "list",
            "20.500.1",
            "--root",
            addr.as_str(),
        ],
    ] {
        let o = with_env(
            vec![
                ("HANDLE_RESOLVER_ROOT", "127.0.0.1:9".into()),
                ("HANDLE_RESOLVER_SERVER", "127.0.0.1:9".into()),
            ],
            &a,
        )
        .await
        .unwrap();
        assert_eq!(status(&o), 1, "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(asked), "{a:?}: {}", stderr(&o));
    }
    // Both variables and neither option: refused, nothing sent.
    let before = server.udp_requests() + server.tcp_requests();
    let o = with_env(
        vec![
            ("HANDLE_RESOLVER_ROOT", addr.clone()),
            ("HANDLE_RESOLVER_SERVER", addr.clone()),
        ],
        &["list", "20.500.1"],
    )
    .await
    .unwrap();
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("both set"), "{}", stderr(&o));
    assert_eq!(server.udp_requests() + server.tcp_requests(), before);
    // Both options on the command line: a usage error.
    let o = with_env(
        vec![],
        &[
            "--root",
            addr.as_str(),
            "list",
            "20.500.1",
            "--server",
            addr.as_str(),
        ],
    )
    .await
    .unwrap();
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--root and --server cannot be used together"),
        "{}",
        stderr(&o)
    );
}

/// `admin batch` on a binary file: the first line it cannot read says that the file is not
/// UTF-8 (the line and the byte), once; the other lines keep the reference's text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_file_that_is_not_utf8_is_said_so_once() {
    let admin = example("admin");
    let dir = scratch();
    let path = dir.join("binary.batch");
    // A PNG header and some bytes: 3 lines the reference reads as commands, none valid.
    let mut bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\xf4\n".to_vec();
    bytes.extend((0u8..=255).cycle().take(2000));
    std::fs::write(&path, &bytes).unwrap();
    let path = path.to_string_lossy().into_owned();
    let o = run(&admin, &["batch", "--check", &path]).await;
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    let log = stdout(&o);
    let invalid: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("==>INVALID"))
        .collect();
    assert!(invalid.len() > 3, "{log}");
    assert_eq!(
        invalid[0],
        "==>INVALID[1]: error in command line (the file is not UTF-8 text: line 1 has a byte \
         that is not UTF-8 at byte 0)"
    );
    assert_eq!(
        log.lines().filter(|l| l.contains("UTF-8")).count(),
        1,
        "{log}"
    );
    assert!(
        invalid[1..]
            .iter()
            .all(|l| l.ends_with("]: error in command line")),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
