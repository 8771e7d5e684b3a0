//! The `resolve` example's bulk runs, exit status table, `--demo` and conventions, against
//! the loopback test server (and, for `--demo`, the test network it starts itself).

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use handle_resolver::testing::Faults;
use serde_json::Value;

use super::cli::{args, command, run, run_stdin, server, stderr};
use crate::support::examples::example;

fn docs(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Each outcome of the table: its `responseCode` in JSON and in TSV, and its exit status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_outcome_has_its_response_code_and_exit_status() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent = silent.local_addr().unwrap().to_string();
    // (what, options, identifier, responseCode, exit status, text in the message)
    type Case<'a> = (&'a str, &'a [&'a str], &'a str, u64, i32, &'a str);
    let cases: [Case; 7] = [
        ("resolved", &["--root", &root], "20.500.1/1", 1, 0, ""),
        (
            "not found",
            &["--root", &root],
            "20.500.1/nothere",
            100,
            1,
            "handle not found (100)",
        ),
        (
            "no matching values",
            &["--root", &root, "--type", "NOPE"],
            "20.500.1/1",
            200,
            1,
            "no values of the --type/--index asked for (200)",
        ),
        (
            "unknown prefix",
            &["--root", &root],
            "20.999/x",
            100,
            1,
            "unknown prefix: 0.NA/20.999 not found",
        ),
        (
            "301 from --server",
            &["--server", &root],
            "20.999/x",
            301,
            1,
            "prefix not served by this server (301)",
        ),
        (
            "timeout",
            &["--server", &silent, "--timeout", "0.3"],
            "20.500.1/1",
            2,
            3,
            "no answer within 0.3 s",
        ),
        (
            "invalid identifier",
            &["--root", &root],
            "20.500.1/",
            2,
            2,
            "the suffix after '/' is empty",
        ),
    ];
    for (what, options, id, code, exit, message) in cases {
        let mut a = args(options);
        a.extend(args(&["--json", id]));
        let out = run(&bin, a).await;
        assert_eq!(out.status.code(), Some(exit), "{what}: {}", stderr(&out));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["responseCode"], code, "{what}: {doc}");
        assert_eq!(doc["input"], id, "{what}");
        if code != 1 {
            let text = doc["message"].as_str().unwrap();
            assert!(text.contains(message), "{what}: {text}");
        }
        // The same code in the TSV's third column.
        let mut a = args(options);
        a.extend(args(&["--format", "tsv", id]));
        let out = run(&bin, a).await;
        assert_eq!(out.status.code(), Some(exit), "{what}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("input\thandle\tresponseCode\ttype\tvalue")
        );
        for line in lines {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 5, "{what}: {line}");
            assert_eq!(fields[0], id);
            assert_eq!(fields[2], code.to_string(), "{what}: {line}");
        }
    }
    // A usage error: 2, no output.
    let out = run(&bin, args(&["--root", &root, "--bogus", "20.500.1/1"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    // Several identifiers: the highest status wins.
    let out = run(
        &bin,
        args(&[
            "--root",
            &root,
            "20.500.1/1",
            "20.999/x",
            "20.500.1/nothere",
        ]),
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // --help prints the table.
    let out = run(&bin, args(&["--help"])).await;
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Exit status") && help.contains("130"),
        "{help}"
    );
}

/// One bulk input with every kind of line; each format carries the input of each result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_results_carry_their_input_and_keep_order_on_request() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();
    let mut input = String::from("\u{feff}# identifiers\n");
    let mut expected = Vec::new();
    for i in 0..300 {
        let id = match i % 5 {
            0 => "20.500.1/1".to_string(),
            1 => format!("20.500.1/missing-{i}"),
            2 => format!("hdl:20.500.1/missing-{i}"),
            3 => format!("bad-{i}/"),
            _ => "20.500.2/1".to_string(),
        };
        input.push_str(&format!("{id}\n\n"));
        expected.push(id);
    }
    // --keep-order: the documents come in input order, whatever order they finish in.
    let out = run_stdin(
        &bin,
        args(&[
            "--root",
            &root,
            "--json",
            "--keep-order",
            "--concurrency",
            "8",
            "-",
        ]),
        input.clone(),
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let got: Vec<String> = docs(&out.stdout)
        .iter()
        .map(|d| d["input"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, expected);
    assert!(
        stderr(&out).contains("summary: 120 resolved, 120 not found, 60 invalid, 0 failed in "),
        "{}",
        stderr(&out)
    );
    // Without it: the same results, in completion order.
    let out = run_stdin(
        &bin,
        args(&["--root", &root, "--json", "--concurrency", "8", "-"]),
        input.clone(),
    )
    .await;
    let mut got: Vec<String> = docs(&out.stdout)
        .iter()
        .map(|d| d["input"].as_str().unwrap().to_string())
        .collect();
    got.sort();
    let mut sorted = expected.clone();
    sorted.sort();
    assert_eq!(got, sorted);
    // TSV: one line per value (20.500.1/1 has 3 public values, 20.500.2/1 one), one per
    // failure; the handle column is the handle asked, normalized from the input.
    let out = run_stdin(
        &bin,
        args(&["--root", &root, "--format", "tsv", "--keep-order", "-"]),
        input.clone(),
    )
    .await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 60 * 3 + 60 + 60 + 60 + 60, "{text}");
    assert!(rows.iter().all(|r| r.len() == 5));
    let hdl = rows
        .iter()
        .find(|r| r[0] == "hdl:20.500.1/missing-2")
        .unwrap();
    assert_eq!(hdl[1..4], ["20.500.1/missing-2", "100", ""]);
    let url = rows
        .iter()
        .find(|r| r[0] == "20.500.1/1" && r[3] == "URL")
        .unwrap();
    assert_eq!(url[4], "https://example.org/landing/1");
    // Text: each identifier under `;; INPUT`, failures in line.
    let out = run_stdin(&bin, args(&["--root", &root, "--keep-order", "-"]), input).await;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.starts_with(";; 20.500.1/1\n20.500.1/1  (from "),
        "{text}"
    );
    assert!(
        text.contains(";; 20.500.1/missing-1\n;; error: handle not found (100) at "),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with(";; error: ")).count(),
        180
    );
}

/// Runs a bulk of slow resolutions with stdout into a file and stdin left open, sends
/// `signal` once some results are on disk, and checks what the run left.
fn interrupt(bin: &std::path::Path, root: &str, signal: &str, keep_order: bool) {
    let path = std::env::temp_dir().join(format!(
        "resolve-interrupt-{}-{signal}.jsonl",
        std::process::id()
    ));
    let file = std::fs::File::create(&path).unwrap();
    let mut a = args(&["--root", root, "--json", "--concurrency", "4", "-"]);
    if keep_order {
        a.push("--keep-order".into());
    }
    let mut child = command(bin, &a)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(file))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines: String = (0..2000).map(|i| format!("20.500.1/slow-{i}\n")).collect();
    stdin.write_all(lines.as_bytes()).unwrap();
    // stdin stays open: the run is still reading when the signal comes. Its output goes to
    // a file, so lines appear only through the once-a-second flush.
    let started = Instant::now();
    while std::fs::read_to_string(&path).unwrap().lines().count() < 8 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no output flushed within 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{signal}: {err}");
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let written = docs(text.as_bytes());
    assert!(text.ends_with('\n'), "no cut line");
    assert!(
        written.len() >= 8 && written.len() < 2000,
        "{}",
        written.len()
    );
    assert!(written.iter().all(|d| d["responseCode"] == 100));
    // Every finished result was written: the summary counts exactly the documents.
    let summary = err
        .lines()
        .find(|l| l.starts_with("summary (interrupted): "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        summary.starts_with(&format!(
            "summary (interrupted): 0 resolved, {} not found, 0 invalid, 0 failed, ",
            written.len()
        )),
        "{summary} vs {} documents",
        written.len()
    );
    assert!(summary.contains(" unfinished in "), "{summary}");
    if keep_order {
        let inputs: Vec<String> = written
            .iter()
            .map(|d| d["input"].as_str().unwrap().to_string())
            .collect();
        let expected: Vec<String> = (0..written.len())
            .map(|i| format!("20.500.1/slow-{i}"))
            .collect();
        assert_eq!(inputs, expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_and_sigterm_stop_sending_and_keep_every_finished_result() {
    let bin = example("resolve");
    let server = server().await;
    server.set_faults(Faults {
        delay: Duration::from_millis(100),
        ..Faults::default()
    });
    let root = server.addr().to_string();
    tokio::task::spawn_blocking(move || {
        interrupt(&bin, &root, "-INT", false);
        interrupt(&bin, &root, "-TERM", true);
    })
    .await
    .unwrap();
}

/// Runs `resolve` over `input` with stdin left open and stdout into a file, waits until
/// `lines` results are on disk, stops it with SIGINT, and returns the documents written and
/// the summary line.
fn stop_after(
    bin: &std::path::Path,
    a: &[String],
    input: &str,
    lines: usize,
) -> (Vec<Value>, String) {
    let path = std::env::temp_dir().join(format!(
        "resolve-stop-{}-{:x}.jsonl",
        std::process::id(),
        rand::random::<u64>()
    ));
    let file = std::fs::File::create(&path).unwrap();
    let mut child = command(bin, a)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(file))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let started = Instant::now();
    while std::fs::read_to_string(&path).unwrap().lines().count() < lines
        && started.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert!(status.success());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let summary = err
        .lines()
        .find(|l| l.starts_with("summary (interrupted): "))
        .unwrap_or_else(|| panic!("{err}"))
        .to_string();
    (docs(text.as_bytes()), summary)
}

/// Ctrl-C while one identifier hangs and the ones after it have finished: with --keep-order
/// the output stops before the unfinished one (a prefix of the input to resume from), and
/// the summary counts what was not written and says where to resume; in completion order,
/// everything finished is written and the summary names the first unfinished identifier.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_leaves_a_prefix_to_resume_from_and_counts_the_unfinished() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();
    // A URN resolver that takes connections and never answers: the URN hangs.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let urn_resolver = format!("http://{}", silent.local_addr().unwrap());
    let mut input = String::from("# ids\n");
    for i in 0..20 {
        input.push_str(&format!("20.500.1/before-{i}\n"));
    }
    input.push_str("urn:fdc:example.org:2024:hang\n");
    for i in 0..200 {
        input.push_str(&format!("20.500.1/after-{i}\n"));
    }
    let a = |keep_order: bool| {
        let mut a = args(&[
            "--root",
            &root,
            "--urn-resolver",
            &urn_resolver,
            "--timeout",
            "60",
            "--json",
            "--concurrency",
            "8",
            "-",
        ]);
        if keep_order {
            a.push("--keep-order".into());
        }
        a
    };
    let (keep, any) = (a(true), a(false));
    let (bin2, input2) = (bin.clone(), input.clone());
    let ((ordered, ordered_summary), (unordered, unordered_summary)) =
        tokio::task::spawn_blocking(move || {
            (
                stop_after(&bin2, &keep, &input2, 20),
                stop_after(&bin2, &any, &input2, 220),
            )
        })
        .await
        .unwrap();
    drop(silent);
    // --keep-order: the 20 before the URN, none after it though the 7 started after it had
    // finished; the URN and those 7 are unfinished.
    let inputs: Vec<&str> = ordered
        .iter()
        .map(|d| d["input"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..20).map(|i| format!("20.500.1/before-{i}")).collect();
    assert_eq!(inputs, expected);
    assert!(
        ordered_summary.starts_with(
            "summary (interrupted): 0 resolved, 20 not found, 0 invalid, 0 failed, 8 unfinished in "
        ),
        "{ordered_summary}"
    );
    assert!(
        ordered_summary.ends_with(
            " s; resume from identifier 21 (stdin line 22: urn:fdc:example.org:2024:hang)"
        ),
        "{ordered_summary}"
    );
    // Completion order: every handle written, the URN alone unfinished.
    assert_eq!(unordered.len(), 220);
    assert!(unordered
        .iter()
        .all(|d| d["input"] != "urn:fdc:example.org:2024:hang"));
    assert!(
        unordered_summary.starts_with(
            "summary (interrupted): 0 resolved, 220 not found, 0 invalid, 0 failed, 1 unfinished in "
        ),
        "{unordered_summary}"
    );
    assert!(
        unordered_summary.contains(
            " s; first unfinished: identifier 21 (stdin line 22: urn:fdc:example.org:2024:hang); \
             results are in completion order"
        ),
        "{unordered_summary}"
    );
}

/// `--quiet`: stderr holds the summary alone; the failures are in the output all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_keeps_stderr_to_the_summary() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();
    let input = "20.500.1/1\n20.500.1/nothere\nbad/\n20.500.1/alias\n";
    let mut input = input.as_bytes().to_vec();
    // A line that is not UTF-8 too.
    input.extend_from_slice(b"\xff\xfe\n");
    let loud = run_stdin(
        &bin,
        args(&["--root", &root, "--format", "tsv", "--keep-order", "-"]),
        input.clone(),
    )
    .await;
    let quiet = run_stdin(
        &bin,
        args(&[
            "--root",
            &root,
            "--format",
            "tsv",
            "--keep-order",
            "--quiet",
            "-",
        ]),
        input,
    )
    .await;
    assert_eq!(loud.status.code(), Some(2), "{}", stderr(&loud));
    assert_eq!(quiet.status.code(), Some(2), "{}", stderr(&quiet));
    let loud_err = stderr(&loud);
    assert!(
        loud_err.contains("error: 20.500.1/nothere: handle not found"),
        "{loud_err}"
    );
    assert!(
        loud_err.contains("note: 20.500.1/alias: an alias"),
        "{loud_err}"
    );
    let quiet_err = stderr(&quiet);
    let lines: Vec<&str> = quiet_err.lines().collect();
    assert_eq!(lines.len(), 1, "{quiet_err}");
    assert!(
        lines[0].starts_with("summary: 2 resolved, 1 not found, 2 invalid, 0 failed in "),
        "{quiet_err}"
    );
    // The same output, failures and their reasons included.
    assert_eq!(loud.stdout, quiet.stdout);
    let text = String::from_utf8_lossy(&quiet.stdout);
    assert!(
        text.contains("20.500.1/nothere\t20.500.1/nothere\t100\t\thandle not found (100)"),
        "{text}"
    );
    assert!(text.contains("not UTF-8"), "{text}");
}

/// `--demo`: root → prefix handle → HS_SERV → site → the hashed server of a 3-server site.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_resolves_through_the_whole_procedure() {
    let bin = example("resolve");
    let out = run(&bin, args(&["--demo", "--json"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["input"], "20.500.1/demo");
    assert_eq!(doc["values"][0]["type"], "URL");
    assert_eq!(
        doc["values"][0]["data"]["value"],
        "https://example.org/demo"
    );
    let trace = doc["trace"].as_array().unwrap();
    let handles: Vec<&str> = trace
        .iter()
        .map(|a| a["handle"].as_str().unwrap())
        .collect();
    assert_eq!(handles[..2], ["0.NA/20.500.1", "0.SERV/20.500.1"], "{doc}");
    assert!(handles[2..].iter().all(|h| *h == "20.500.1/demo"), "{doc}");
    let root = trace[0]["server"].as_str().unwrap();
    assert_eq!(
        trace[1]["server"], root,
        "the service handle is at the root"
    );
    let last = trace.last().unwrap();
    assert_eq!(last["responseCode"], 1);
    assert_ne!(last["server"], root, "the handle is at a site's server");
    // The server that answered is the one the stderr notes say the hash picks.
    let err = stderr(&out);
    let picked: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split("the hash of 20.500.1/demo picks ").nth(1))
        .collect();
    assert_eq!(picked.len(), 2, "{err}");
    assert!(picked.contains(&last["server"].as_str().unwrap()), "{err}");
    // Text: the trace and the values.
    let out = run(
        &bin,
        args(&["--demo", "--follow-aliases", "20.500.1/alias"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(";;   #1  0.NA/20.500.1"), "{text}");
    assert!(
        text.contains("alias chain: 20.500.1/alias -> 20.500.1/demo"),
        "{text}"
    );
}

/// Environment variables, completions, option messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_completions_and_option_messages() {
    let bin = example("resolve");
    let server = server().await;
    let root = server.addr().to_string();
    let with_env = |vars: Vec<(&'static str, String)>, a: Vec<String>| {
        let bin = bin.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = command(&bin, &a);
            for (k, v) in vars {
                c.env(k, v);
            }
            c.output().unwrap()
        })
    };
    // HANDLE_RESOLVER_ROOT is the root.
    let out = with_env(
        vec![("HANDLE_RESOLVER_ROOT", root.clone())],
        args(&["--short", "20.500.1/1"]),
    )
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "https://example.org/landing/1\n"
    );
    // HANDLE_RESOLVER_SERVER too; an option on the command line wins over either.
    let out = with_env(
        vec![("HANDLE_RESOLVER_SERVER", root.clone())],
        args(&["--json", "20.999/x"]),
    )
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"responseCode\":301"));
    let out = with_env(
        vec![("HANDLE_RESOLVER_ROOT", "127.0.0.1:9".into())],
        args(&["--server", &root, "--short", "20.500.1/1"]),
    )
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = with_env(
        vec![
            ("HANDLE_RESOLVER_ROOT", root.clone()),
            ("HANDLE_RESOLVER_SERVER", root.clone()),
        ],
        args(&["20.500.1/1"]),
    )
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("both set"), "{}", stderr(&out));
    // --demo ignores a root from the environment.
    let out = with_env(
        vec![("HANDLE_RESOLVER_ROOT", "127.0.0.1:9".into())],
        args(&["--demo", "--short"]),
    )
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // An out-of-range --timeout names the maximum.
    let out = run(
        &bin,
        args(&["--root", &root, "--timeout", "90000", "20.500.1/1"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("at most 86400 seconds"),
        "{}",
        stderr(&out)
    );
    // A bad port is a syntax error that says what an address looks like.
    let out = run(&bin, args(&["--server", "127.0.0.1:http", "20.500.1/1"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the port defaults to 2641"),
        "{}",
        stderr(&out)
    );
    // Completions for each shell.
    for (shell, marker) in [
        ("bash", "_resolve()"),
        ("zsh", "#compdef resolve"),
        ("fish", "complete -c resolve"),
    ] {
        let out = run(&bin, args(&["--completions", shell])).await;
        assert_eq!(out.status.code(), Some(0));
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(
            script.contains(marker) && script.contains("keep-order"),
            "{shell}: {script}"
        );
    }
}
