//! The `resolve` example against the loopback test server serving
//! `fixtures/testserver/handles.json`: output shapes and exit statuses.

use std::io::Write;
use std::process::{Output, Stdio};
use std::sync::Arc;

use handle_resolver::testing::{TestServer, TestServerConfig};
use serde_json::Value;

use crate::support::examples::example;
pub(super) use crate::support::examples::{command, run, run_stdin};

pub(super) use crate::support::examples::sample_server as server;

pub(super) fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_cli_output_and_exit_statuses() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();

    // JSON in the REST API shape, with the trace.
    let out = run(
        &bin,
        args(&["--root", &root, "--json", "--trace", "20.500.1/1"]),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["responseCode"], 1);
    assert_eq!(doc["handle"], "20.500.1/1");
    let values = doc["values"].as_array().unwrap();
    assert_eq!(values.len(), 3, "the non-public value is left out");
    assert_eq!(values[0]["type"], "URL");
    assert_eq!(values[0]["data"]["format"], "string");
    assert_eq!(values[0]["data"]["value"], "https://example.org/landing/1");
    let trace = doc["trace"].as_array().unwrap();
    assert_eq!(trace[0]["handle"], "0.NA/20.500.1");
    assert_eq!(trace[1]["handle"], "20.500.1/1");
    assert_eq!(trace[1]["responseCode"], 1);
    assert_eq!(trace[1]["outcome"], "SUCCESS (1)");

    // Not found: 1, with the code in JSON and a message on stderr.
    let out = run(&bin, args(&["--root", &root, "--json", "20.500.1/nothere"])).await;
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["responseCode"], 100);
    // stderr names the identifier, the reason and the server that said so.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: 20.500.1/nothere: handle not found (100) at {root} udp"
        )),
        "{err}"
    );

    // Bad input: 2, nothing sent.
    let before = server.udp_requests();
    let out = run(&bin, args(&["--root", &root, "20.500.1/"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(server.udp_requests(), before);

    // Nobody listening: 3.
    let out = run(
        &bin,
        args(&["--server", "127.0.0.1:9", "--timeout", "0.5", "20.500.1/1"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(3));

    // --short, TCP, certified (root keys from the root itself), aliases.
    let out = run(
        &bin,
        args(&[
            "--root",
            &root,
            "--short",
            "--transport",
            "tcp",
            "--certify",
            "--follow-aliases",
            "20.500.1/alias",
        ]),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "https://example.org/landing/1"
    );

    // Mixed bulk input: the worst status wins.
    let out = run(
        &bin,
        args(&[
            "--root",
            &root,
            "--concurrency",
            "3",
            "20.500.1/1",
            "20.500.1/mirrors",
            "20.500.1/nothere",
        ]),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("https://example.org/landing/1") && text.contains("mirror-1.example.net")
    );

    // --all-sites: one site, one server, agreeing with itself.
    let out = run(
        &bin,
        args(&["--root", &root, "--all-sites", "--json", "20.500.1/1"]),
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["drift"], false);
    assert_eq!(doc["servers"].as_array().unwrap().len(), 1);
}

pub(super) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_cli_bulk_stdin_pipes_and_worst_status() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();

    // 1,000 lines from stdin (blank lines skipped), in flight 64 at a time: one JSON document
    // per identifier, in completion order; not-found lines make the status 1.
    let mut input = String::new();
    for i in 0..1000 {
        input.push_str(if i % 4 == 0 {
            "20.500.1/nothere\n\n"
        } else {
            "20.500.1/1\n"
        });
    }
    let out = run_stdin(
        &bin,
        args(&["--root", &root, "--json", "--concurrency", "64", "-"]),
        input.clone(),
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let docs: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 1000);
    let found = docs.iter().filter(|d| d["responseCode"] == 1).count();
    let missing = docs.iter().filter(|d| d["responseCode"] == 100).count();
    assert_eq!((found, missing), (750, 250));
    // Each document carries its input; one error line per failure, then the summary.
    assert!(docs.iter().all(|d| d["input"] == d["handle"]));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 251, "{err}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("error: ")).count(),
        250
    );
    assert!(
        lines[250].starts_with("summary: 750 resolved, 250 not found, 0 invalid, 0 failed in "),
        "{err}"
    );

    // One invalid identifier among them: bad input (2) outranks not found (1).
    let out = run_stdin(
        &bin,
        args(&["--root", &root, "--short", "-", "20.500.1/"]),
        input.clone(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // INPUT<TAB>URL for each URL; INPUT<TAB> alone for the failures, in line.
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let with_url = text
        .lines()
        .filter(|l| *l == "20.500.1/1\thttps://example.org/landing/1")
        .count();
    let without: Vec<&str> = text.lines().filter(|l| l.ends_with('\t')).collect();
    assert_eq!(with_url, 750, "{text}");
    assert_eq!(without.len(), 251, "{text}");
    assert!(without.contains(&"20.500.1/\t"));
    assert!(
        stderr(&out).contains(r#"error: "20.500.1/": the suffix after '/' is empty (at byte 9)"#)
    );

    // A line that is not UTF-8 is bad input, reported with its line number; the rest resolve.
    let out = run_stdin(
        &bin,
        args(&["--root", &root, "--short", "-"]),
        b"20.500.1/1\n20.500.1/\xff\n".to_vec(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        vec![
            "20.500.1/1\thttps://example.org/landing/1",
            "20.500.1/\u{fffd}\t"
        ]
    );
    assert!(stderr(&out).starts_with("error: stdin line 2: not UTF-8"));
    assert!(stderr(&out).contains("summary: 1 resolved, 0 not found, 1 invalid, 0 failed"));

    // A reader that stops early (`| head -1`): a quiet exit, no panic, no broken-pipe noise.
    let bin2 = bin.clone();
    let root2 = root.clone();
    let out = tokio::task::spawn_blocking(move || {
        let mut child = command(&bin2, &args(&["--root", &root2, "-"]))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before anything is written
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all("20.500.1/1\n".repeat(2000).as_bytes())
            .unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_cli_chains_loops_timeouts_and_options() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();

    // The HS_SERV chain: prefix handle, service handle, then the handle.
    let out = run(&bin, args(&["--root", &root, "--trace", "20.500.2/1"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let hops: Vec<&str> = text.lines().filter(|l| l.starts_with(";;   #")).collect();
    assert_eq!(hops.len(), 3, "{text}");
    // Aligned columns: the server starts at the same place on every hop line.
    let at: Vec<usize> = hops.iter().map(|l| l.find("127.0.0.1:").unwrap()).collect();
    assert!(at.iter().all(|&c| c == at[0]), "{text}");
    assert!(hops[1].contains(" 0.SERV/test ") && hops[2].contains(" 20.500.2/1 "));
    assert!(text.contains("https://example.org/served-via-hs-serv"));

    // An alias loop is a failure (3) that shows the chain.
    let out = run(
        &bin,
        args(&["--root", &root, "--follow-aliases", "20.500.1/loop-a"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("alias loop: 20.500.1/loop-a -> 20.500.1/loop-b"));

    // JSON names the handle asked for (normalized from any input form) and, after following
    // aliases, the handle the values belong to with the chain.
    let out = run(
        &bin,
        args(&[
            "--root",
            &root,
            "--json",
            "--follow-aliases",
            "hdl:20.500.1/alias",
            "https://hdl.handle.net/20.500.1/nope",
        ]),
    )
    .await;
    let docs: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let alias = docs.iter().find(|d| d["responseCode"] == 1).unwrap();
    assert_eq!(alias["handle"], "20.500.1/1");
    assert_eq!(
        alias["aliases"],
        serde_json::json!(["20.500.1/alias", "20.500.1/1"])
    );
    let missing = docs.iter().find(|d| d["responseCode"] == 100).unwrap();
    assert_eq!(missing["handle"], "20.500.1/nope");

    // --raw in JSON adds the data's hex; text columns follow the longest type.
    let out = run(
        &bin,
        args(&[
            "--root",
            &root,
            "--json",
            "--raw",
            "--index",
            "1",
            "20.500.1/1",
        ]),
    )
    .await;
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["values"][0]["raw"],
        hex::encode("https://example.org/landing/1")
    );
    let out = run(&bin, args(&["--root", &root, "20.500.1/mirrors"])).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let columns: Vec<usize> = text
        .lines()
        .skip(1)
        .take(3)
        .map(|l| l.find("https://").unwrap())
        .collect();
    assert_eq!(columns.len(), 3, "{text}");
    assert!(columns.iter().all(|&c| c == columns[0]), "{text}");

    // --all-sites: the one server agrees with itself, on a missing handle too (status 1, no drift).
    let out = run(
        &bin,
        args(&["--root", &root, "--all-sites", "20.500.1/nothere"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(!stderr(&out).contains("differently"), "{}", stderr(&out));

    // A server that never answers: 3 once the deadline passes, naming the server.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let out = run(
        &bin,
        args(&["--server", &addr, "--timeout", "0.3", "20.500.1/1"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: 20.500.1/1: ") && err.contains(&addr),
        "{err}"
    );

    // Option mistakes are bad input (2) and send nothing.
    let bad_root_file = std::env::temp_dir()
        .join(format!("resolve-cli-bad-root-{}", std::process::id()))
        .to_string_lossy()
        .into_owned();
    std::fs::write(&bad_root_file, "20.500.1/1\n").unwrap();
    let before = server.udp_requests();
    for bad in [
        &["--root", &root, "--short", "--json", "20.500.1/1"][..],
        &["--root", &root, "--server", &root, "20.500.1/1"],
        &["--root", &root, "--concurrency", "0", "20.500.1/1"],
        &["--root", &root, "--timeout", "-1", "20.500.1/1"],
        &["--root", &root, "--bogus", "20.500.1/1"],
        &["--server", "127.0.0.1:port", "20.500.1/1"],
        &["--server", "127.0.0.1", "--timeout", "86401", "20.500.1/1"],
        &["--demo", "--root", &root, "20.500.1/1"],
        &[
            "--proxy",
            "http://127.0.0.1:9",
            "--root",
            &root,
            "20.500.1/1",
        ],
        &["--format", "tsv", "--trace", "--root", &root, "20.500.1/1"],
        &["--server", &root, "--certify", "20.500.1/1"],
        &["--root", &bad_root_file, "20.500.1/1"],
    ] {
        let out = run(&bin, args(bad)).await;
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            stderr(&out).starts_with("error: "),
            "{bad:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(server.udp_requests(), before);
    let out = run(&bin, args(&["--root", &bad_root_file, "20.500.1/1"])).await;
    assert!(
        stderr(&out).starts_with(&format!("error: --root {bad_root_file}: ")),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_file(&bad_root_file);
}

/// `--json` prints each value as `wire::json` encodes it (the REST API shape: unusual
/// permissions, an absolute TTL as an RFC 3339 instant, references, no zero timestamp), and
/// that JSON reads back to the value the server holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_cli_json_values_are_the_codec_s() {
    use handle_resolver::wire::{json, HandleValue, Limits, Permissions, Ttl, ValueReference};
    let bin = example("resolve");
    let mut odd = HandleValue::new(8, "URL", "http://example.org/absolute-ttl");
    odd.ttl = Ttl::Absolute(1_893_456_000);
    odd.timestamp = 1_767_225_600;
    odd.permissions = Permissions(0x0F);
    odd.references.push(ValueReference {
        handle: bytes::Bytes::from_static(b"20.500.1/1"),
        index: 1,
    });
    let plain = HandleValue::new(9, "DESC", "timestamp 0");
    let store = Arc::new(handle_resolver::testing::Store::new());
    store.insert("20.500.1/rest", vec![odd.clone(), plain.clone()]);
    let server = TestServer::start(TestServerConfig::new(store))
        .await
        .unwrap();
    let addr = server.addr().to_string();
    let out = run(&bin, args(&["--server", &addr, "--json", "20.500.1/rest"])).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let values = doc["values"].as_array().unwrap();
    assert_eq!(values[0]["ttl"], "2030-01-01T00:00:00Z");
    assert_eq!(values[0]["permissions"], "1111");
    assert_eq!(values[0]["references"][0]["handle"], "20.500.1/1");
    assert!(values[1].get("timestamp").is_none());
    for (got, want) in values.iter().zip([&odd, &plain]) {
        assert_eq!(got, &json::value_to_json(want));
        assert_eq!(
            &json::value_from_json(got, &Limits::default()).unwrap(),
            want
        );
    }
}

/// `resolve --completions bash | head -1`: the script goes to a reader that has gone; a quiet
/// end, not clap_complete's panic on the failed write.
#[test]
fn completions_end_quietly_on_a_closed_stdout() {
    let bin = example("resolve");
    let mut child = command(&bin, &args(&["--completions", "bash"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

/// `testserver` started in a folder without the repository's files serves its built-in
/// sample handles, and `resolve` resolves through it as its own root.
#[test]
fn testserver_serves_its_sample_handles_from_any_folder() {
    use std::io::BufRead;
    let (testserver, resolve) = (example("testserver"), example("resolve"));
    let dir = crate::support::examples::scratch("testserver-cwd");
    let mut child = command(&testserver, &args(&["--port", "0"]))
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    let read = std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut banner);
    // The server runs until killed; stop it before any assertion can fail.
    let addr = banner
        .split(" on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string);
    let out = addr.as_ref().map(|addr| {
        command(&resolve, &args(&["--root", addr, "--short", "20.500.1/1"]))
            .output()
            .unwrap()
    });
    child.kill().unwrap();
    let stopped = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(read.is_ok(), "{read:?}");
    assert!(
        banner.starts_with(
            "serving 11 handles from fixtures/testserver/handles.json (built in) on 127.0.0.1:"
        ),
        "{banner}{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    let out = out.unwrap_or_else(|| panic!("no address in {banner:?}"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "https://example.org/landing/1\n"
    );
}
