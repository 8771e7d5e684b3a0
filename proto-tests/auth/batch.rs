//! The reference's batch samples (`fixtures/genericbatch/`) run by `admin::batch::Runner`
//! against the loopback test server started from the samples' server state
//! (`server/handles.json`, case-insensitive, server administrator `300:0.NA/20.500.12345`),
//! in their order, each against the state its predecessors left: the log lines (in file order)
//! and the records left are the reference's, but for the differences listed in
//! [`DIFFERENCES`] (`docs/administration.md`, "Batch files").
//!
//! The samples name the lab server's port 2661: the copies fed in (the batch files and
//! `server/siteinfo.json`) name the test server's port instead, and the `0.NA/` records of the
//! starting state get the test server's own HS_SITE (`ReferenceStore::fill`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use handle_resolver::admin::batch::{parse, LogLine, Report, Runner};
use handle_resolver::testing::{ReferenceStore, Store, TestServer, TestServerConfig};
use handle_resolver::Resolver;
use serde_json::Value;

/// The samples, in run order.
const SAMPLES: [&str; 11] = [
    "01-seckey-create",
    "02-pubkey-auth",
    "03-add-modify-remove-delete",
    "04-auth-failures",
    "05-malformed-and-case",
    "06-sessionsetup",
    "07-home-unhome",
    "08-bulk-create-200",
    "09-encrypted-rsa-key-first",
    "10-encrypted-dsa-key-first",
    "11-nonascii-secret-first",
];

/// Every deliberate difference from the reference's log: (sample, the reference's line, ours).
/// `docs/administration.md`, "Batch files", says why:
///
/// - **Session quirk** (sample 02): the reference's client reuses USER-RSA's authenticated
///   session after `AUTHENTICATE PUBKEY:300:20.500.12345/USER-DSA`, so the reference's [16],
///   [17] and [20] acted as USER-RSA; ours act as USER-DSA, the identity the file names. USER-DSA
///   may only read GB-ADMIN's values (400, as the reference answers a missing permission) and
///   administers GB-DSA (success). Sample 10 then adds
///   an index that ours already added in 02 (201). (In sample 04 the reference's quirk changes
///   nothing visible: the non-ASCII identity it skipped is an administrator through GB-GROUP
///   as well.)
/// - **RSA exchange keys** (sample 06): the reference's server fails the client RSA exchange
///   session (`RSA/EBC/PKCS1`, its own bug); ours keeps the default session, so [3] succeeds.
const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "02-pubkey-auth",
        "==>SUCCESS[16]: modify values:20.500.12345/GB-ADMIN",
        "==>FAILURE[16]: modify values:20.500.12345/GB-ADMIN: Error(400): INVALID ADMIN",
    ),
    (
        "02-pubkey-auth",
        "==>FAILURE[17]: add values:20.500.12345/GB-DSA: Error(400): INVALID ADMIN",
        "==>SUCCESS[17]: add values:20.500.12345/GB-DSA",
    ),
    (
        "02-pubkey-auth",
        "==>FAILURE[20]: modify values:20.500.12345/GB-DSA: Error(400): INVALID ADMIN",
        "==>SUCCESS[20]: modify values:20.500.12345/GB-DSA",
    ),
    (
        "02-pubkey-auth",
        "Successes/Total Entries: 7/9",
        "Successes/Total Entries: 8/9",
    ),
    (
        "06-sessionsetup",
        "==>FAILURE[3]: create:20.500.12345/GB-SESS-RSA-CLIENT: Error setting up session",
        "==>SUCCESS[3]: create:20.500.12345/GB-SESS-RSA-CLIENT",
    ),
    (
        "06-sessionsetup",
        "Successes/Total Entries: 5/6",
        "Successes/Total Entries: 6/6",
    ),
    (
        "10-encrypted-dsa-key-first",
        "==>SUCCESS[3]: add values:20.500.12345/GB-DSA",
        "==>FAILURE[3]: add values:20.500.12345/GB-DSA: Error(201): VALUE ALREADY EXISTS: Index conflict for 2",
    ),
    (
        "10-encrypted-dsa-key-first",
        "Successes/Total Entries: 2/2",
        "Successes/Total Entries: 1/2",
    ),
];

/// How a record we leave differs from the reference's, by the differences above.
enum Change {
    /// Our value at this index: (type, UTF-8 data, ttl, permissions).
    Value(u32, &'static str, &'static str, i64, &'static str),
    /// The handle exists with us, not with the reference.
    Present,
}

/// GB-ADMIN's URL, which the reference's [16] of sample 02 changed as USER-RSA.
const GB_ADMIN_URL: Change = Change::Value(1, "URL", "https://example.org/gb/admin", 86400, "1110");

/// The records that differ because of [`DIFFERENCES`]: (sample, handle, change).
const RECORD_DIFFERENCES: &[(&str, &str, Change)] = &[
    ("02-pubkey-auth", "20.500.12345/GB-ADMIN", GB_ADMIN_URL),
    (
        "02-pubkey-auth",
        "20.500.12345/GB-DSA",
        Change::Value(
            1,
            "URL",
            "https://example.org/gb/dsa/modified-by-dsa-enc",
            120,
            "1111",
        ),
    ),
    (
        "02-pubkey-auth",
        "20.500.12345/GB-DSA",
        Change::Value(
            2,
            "URL",
            "https://example.org/gb/dsa/added-by-dsa",
            86400,
            "1110",
        ),
    ),
    (
        "03-add-modify-remove-delete",
        "20.500.12345/GB-ADMIN",
        GB_ADMIN_URL,
    ),
    ("04-auth-failures", "20.500.12345/GB-ADMIN", GB_ADMIN_URL),
    (
        "06-sessionsetup",
        "20.500.12345/GB-SESS-RSA-CLIENT",
        Change::Present,
    ),
    (
        "11-nonascii-secret-first",
        "20.500.12345/GB-ADMIN",
        GB_ADMIN_URL,
    ),
];

/// The reference's records with [`RECORD_DIFFERENCES`] applied.
fn expected_records(name: &str) -> Vec<Value> {
    let mut records = reference_records(name);
    for (sample, handle, change) in RECORD_DIFFERENCES {
        if *sample != name {
            continue;
        }
        let record = records
            .iter_mut()
            .find(|r| r["handle"] == *handle)
            .unwrap_or_else(|| panic!("{name}: listed record not read back: {handle}"));
        match change {
            Change::Present => {
                assert_eq!(record["status"], "absent", "{name}: {handle}");
                record["status"] = Value::from("present");
            }
            Change::Value(index, ..) => {
                let values = record["values"].as_array_mut().unwrap();
                values.retain(|v| v["index"] != *index);
                if let Change::Value(index, ty, data, ttl, perms) = change {
                    values.push(serde_json::json!({
                        "index": index,
                        "typeHex": hex::encode(ty),
                        "dataHex": hex::encode(data),
                        "ttlType": 0,
                        "ttl": ttl,
                        "permissions": perms,
                        "references": [],
                    }));
                    values.sort_by_key(|v| v["index"].as_u64());
                }
            }
        }
    }
    records
}

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/genericbatch")
}

/// A copy of the samples' folder in which the lab server's port is `port`.
fn copy_with_port(port: u16) -> PathBuf {
    let from = samples_dir();
    let to = std::env::temp_dir().join(format!(
        "handle-resolver-genericbatch-{}-{port}",
        std::process::id()
    ));
    copy_dir(&from, &to, port);
    to
}

fn copy_dir(from: &Path, to: &Path, port: u16) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target, port);
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let rewrite = name.ends_with(".batch") || name == "siteinfo.json";
        let bytes = if rewrite {
            let text = String::from_utf8(bytes).unwrap();
            text.replace("2661", &port.to_string()).into_bytes()
        } else {
            bytes
        };
        std::fs::write(target, bytes).unwrap();
    }
}

/// The reference's log without its time lines.
fn reference_log(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(samples_dir().join(format!("{name}.log"))).unwrap();
    text.lines()
        .filter(|l| {
            !l.starts_with("Start Time: ")
                && !l.starts_with("Finish Time: ")
                && !l.starts_with("This batch took ")
        })
        .map(str::to_string)
        .collect()
}

/// The reference's log with our deliberate differences applied.
fn expected_log(name: &str) -> Vec<String> {
    let mut lines = reference_log(name);
    for (sample, theirs, ours) in DIFFERENCES {
        if *sample != name {
            continue;
        }
        let at = lines
            .iter()
            .position(|l| l == theirs)
            .unwrap_or_else(|| panic!("{name}: listed difference not in the log: {theirs}"));
        lines[at] = ours.to_string();
    }
    lines
}

async fn start_server() -> TestServer {
    let store = Arc::new(Store::case_insensitive());
    store.add_server_admin(300, "0.NA/20.500.12345");
    let server = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    let text = std::fs::read_to_string(samples_dir().join("server/handles.json")).unwrap();
    let file = ReferenceStore::parse(&text).unwrap();
    file.fill(&store, Some(&server.site_value(1).data));
    server
}

/// One record as the samples' `records.json` describes it, timestamps aside.
fn record_of(store: &Store, handle: &str) -> Value {
    if !store.serves(handle) {
        return serde_json::json!({"handle": handle, "status": "error", "responseCode": 301});
    }
    let Some(stored) = store.get(handle) else {
        return serde_json::json!({"handle": handle, "status": "absent", "responseCode": 100});
    };
    let mut values: Vec<_> = stored.values.iter().collect();
    values.sort_by_key(|v| v.index);
    let values: Vec<Value> = values
        .iter()
        .map(|v| {
            let p = v.permissions.0;
            let bit = |m: u8| if p & m != 0 { '1' } else { '0' };
            serde_json::json!({
                "index": v.index,
                "typeHex": hex::encode(&v.type_name),
                "dataHex": hex::encode(&v.data),
                "ttlType": v.ttl.kind(),
                "ttl": v.ttl.value() as i32,
                "permissions": format!("{}{}{}{}", bit(0x08), bit(0x04), bit(0x02), bit(0x01)),
                "references": v.references.iter().map(|r| serde_json::json!({
                    "index": r.index, "handle": String::from_utf8_lossy(&r.handle)
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({"handle": handle, "status": "present", "values": values})
}

/// The reference's records in the shape of [`record_of`].
fn reference_records(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(samples_dir().join(format!("{name}.records.json"))).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["handles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let handle = h["handle"].as_str().unwrap();
            match h["status"].as_str().unwrap() {
                "present" => {
                    let values: Vec<Value> = h["values"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| {
                            serde_json::json!({
                                "index": v["index"],
                                "typeHex": v["typeHex"],
                                "dataHex": v["dataHex"],
                                "ttlType": v["ttlType"],
                                "ttl": v["ttl"],
                                "permissions": v["permissions"],
                                "references": v["references"],
                            })
                        })
                        .collect();
                    serde_json::json!({"handle": handle, "status": "present", "values": values})
                }
                status => serde_json::json!({
                    "handle": handle, "status": status, "responseCode": h["responseCode"]
                }),
            }
        })
        .collect()
}

/// Data that holds key material or the lab server's port, which differ by construction (the
/// samples' README: HS_SITE and HS_PUBKEY values and the DESC made from `siteinfo.json`
/// differ between two reference runs too): compared by presence only.
fn blank_key_material(records: &mut [Value]) {
    for r in records {
        let Some(values) = r.get_mut("values").and_then(Value::as_array_mut) else {
            continue;
        };
        for v in values {
            let t = v["typeHex"].as_str().unwrap_or_default();
            let data = v["dataHex"].as_str().unwrap_or_default();
            let site = t == hex::encode("HS_SITE");
            // The DESC loaded raw from siteinfo.json: JSON text naming the port and key.
            let site_json = data.starts_with(&hex::encode("{"));
            if site || t == hex::encode("HS_PUBKEY") || site_json {
                v["dataHex"] = Value::from("(key material)");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_samples_give_the_reference_logs_and_records() {
    let server = start_server().await;
    let dir = copy_with_port(server.addr().port());
    let root = server.addr();
    let mut failures = Vec::new();
    for name in SAMPLES {
        let text = std::fs::read_to_string(dir.join(format!("{name}.batch"))).unwrap();
        let batch = parse(&text, &mut |p: &str| std::fs::read(dir.join(p)).ok());
        let runner = Runner::new(move |me| {
            let mut b = Resolver::builder()
                .root_server(root)
                .loss_detection(false)
                .cache_size(0);
            if let Some(me) = me {
                b = b.authenticator(me);
            }
            b.build()
        })
        .concurrency(16)
        .base_dir(&dir);
        let mut reports: Vec<Report> = Vec::new();
        let summary = runner.run(&batch, |r| reports.push(r)).await;
        reports.sort_by_key(|r| r.seq);
        let mut got: Vec<String> = reports.iter().map(|r| LogLine(r).to_string()).collect();
        got.extend(summary.log_lines());
        let want = expected_log(name);
        if got != want {
            failures.push(format!("{name}: log differs\n{}", line_diff(&got, &want)));
        }
        let handles =
            std::fs::read_to_string(samples_dir().join(format!("{name}.handles"))).unwrap();
        let mut ours: Vec<Value> = handles
            .lines()
            .filter(|l| !l.is_empty())
            .map(|h| record_of(server.store(), h))
            .collect();
        let mut theirs = expected_records(name);
        blank_key_material(&mut ours);
        blank_key_material(&mut theirs);
        for (o, t) in ours.iter().zip(&theirs) {
            let present_only = t["status"] == "present" && t.get("values").is_none();
            if present_only && o["status"] == "present" {
                continue;
            }
            if o != t {
                failures.push(format!("{name}: {}", record_diff(o, t)));
            }
        }
        if ours.len() != theirs.len() {
            failures.push(format!(
                "{name}: {} records, reference {}",
                ours.len(),
                theirs.len()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The lines only one side has, with their positions.
fn line_diff(ours: &[String], want: &[String]) -> String {
    let mut out = Vec::new();
    for i in 0..ours.len().max(want.len()) {
        let (o, w) = (ours.get(i), want.get(i));
        if o != w {
            out.push(format!(
                "  {i}: ours     {}\n  {i}: expected {}",
                o.map_or("(none)", String::as_str),
                w.map_or("(none)", String::as_str)
            ));
        }
    }
    out.join("\n")
}

/// What differs between two records: the status, or the values by index.
fn record_diff(ours: &Value, theirs: &Value) -> String {
    let handle = &theirs["handle"];
    if ours["status"] != theirs["status"] {
        return format!(
            "{handle}: ours {}, reference {}",
            ours["status"], theirs["status"]
        );
    }
    let empty = Vec::new();
    let o = ours["values"].as_array().unwrap_or(&empty);
    let t = theirs["values"].as_array().unwrap_or(&empty);
    let mut out = vec![format!("{handle}: values differ")];
    for v in o {
        if !t.contains(v) {
            out.push(format!("  ours only:      {v}"));
        }
    }
    for v in t {
        if !o.contains(v) {
            out.push(format!("  reference only: {v}"));
        }
    }
    out.join("\n")
}

/// `admin` with `args` in `dir` (the samples' paths are relative to their folder).
async fn admin_in(dir: &Path, args: &[String]) -> std::process::Output {
    let bin = crate::support::examples::example("admin");
    let (dir, args) = (dir.to_path_buf(), args.to_vec());
    tokio::task::spawn_blocking(move || {
        crate::support::examples::command(&bin, &args)
            .current_dir(dir)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// `admin batch` as a user runs it: sample 01 into a log file in the reference's format
/// (exit 0), sample 04 with failures as JSON lines on stdout (exit 1), `--check` on sample 05
/// (exit 2, nothing sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_admin_batch_cli_writes_the_reference_log_and_says_whether_all_succeeded() {
    let server = start_server().await;
    let dir = copy_with_port(server.addr().port());
    let root = server.addr().to_string();

    let out = admin_in(
        &dir,
        &strings(&[
            "--root",
            &root,
            "batch",
            "01-seckey-create.batch",
            "ours.log",
            "--keep-order",
        ]),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let log = std::fs::read_to_string(dir.join("ours.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].starts_with("Start Time: "), "{log}");
    assert!(lines[lines.len() - 2].starts_with("Finish Time: "), "{log}");
    assert!(
        lines[lines.len() - 1].starts_with("This batch took ")
            && lines[lines.len() - 1].ends_with(" operations/second"),
        "{log}"
    );
    let middle: Vec<String> = lines[1..lines.len() - 2]
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(middle, reference_log("01-seckey-create"));

    let out = admin_in(
        &dir,
        &strings(&["--root", &root, "batch", "04-auth-failures.batch", "--json"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let steps: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v.get("outcome").is_some())
        .collect();
    let wrong_secret = steps
        .iter()
        .find(|v| v["handle"] == "20.500.12345/GB-WRONG-SECRET")
        .unwrap();
    assert_eq!(wrong_secret["outcome"], "failure");
    assert_eq!(wrong_secret["code"], 403);
    assert_eq!(wrong_secret["n"], 5);
    assert!(steps
        .iter()
        .any(|v| v["handle"] == "20.500.12345/GB-AUTH-OK" && v["outcome"] == "success"));

    let before = server.tcp_requests() + server.udp_requests();
    let out = admin_in(
        &dir,
        &strings(&[
            "--root",
            &root,
            "batch",
            "05-malformed-and-case.batch",
            "--check",
        ]),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let want: Vec<String> = reference_log("05-malformed-and-case")
        .into_iter()
        .filter(|l| l.starts_with("==>INVALID"))
        .collect();
    let got: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("==>INVALID"))
        .collect();
    assert_eq!(got, want);
    assert_eq!(server.tcp_requests() + server.udp_requests(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Ctrl-C (SIGINT) while sample 08's 200 creates run one at a time against a slow server:
/// exit 130, and the log holds every create that was sent, each a success, with its counts.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_batch_and_logs_what_was_sent() {
    let server = start_server().await;
    server.set_faults(handle_resolver::testing::Faults {
        delay: std::time::Duration::from_millis(50),
        ..Default::default()
    });
    let dir = copy_with_port(server.addr().port());
    let bin = crate::support::examples::example("admin");
    let root = server.addr().to_string();
    let args = strings(&[
        "--root",
        &root,
        "batch",
        "08-bulk-create-200.batch",
        "ours.log",
        "--concurrency",
        "1",
    ]);
    let mut child = crate::support::examples::command(&bin, &args)
        .current_dir(&dir)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Once the batch is under way (its first handle exists), interrupt it.
    let first = "20.500.12345/GB-BULK-0001";
    let mut waited = 0;
    while server.store().get(first).is_none() {
        assert!(waited < 3000, "the batch never created {first}");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("admin batch ended before it created {first}: {status}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        waited += 1;
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert_eq!(status.code(), Some(130));
    let log = std::fs::read_to_string(dir.join("ours.log")).unwrap();
    let successes: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("==>SUCCESS"))
        .collect();
    assert!(!log.contains("==>FAILURE"), "{log}");
    let created = (1..=200)
        .filter(|i| {
            server
                .store()
                .get(format!("20.500.12345/GB-BULK-{i:04}"))
                .is_some()
        })
        .count();
    assert!(created < 200, "the run was not stopped");
    assert_eq!(successes.len(), created, "{log}");
    assert!(
        log.contains(&format!("Successes/Total Entries: {created}/{created}")),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `admin batch FILE | head -1`: once its stdout is closed, the log cannot be written, so
/// no command starts after that (those in flight finish), and the exit status is 3, which
/// `admin batch --help` lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_log_stops_the_batch() {
    use std::io::BufRead;
    let server = start_server().await;
    server.set_faults(handle_resolver::testing::Faults {
        delay: std::time::Duration::from_millis(5),
        ..Default::default()
    });
    let dir = crate::support::examples::scratch("closed-log");
    // 2,000 CREATEs as benches/batch-file.sh writes them (the samples' USER-SECKEY).
    let mut text =
        String::from("AUTHENTICATE SECKEY:300:20.500.12345/USER-SECKEY\npublic-test-secret-1\n");
    for i in 0..2000 {
        text.push_str(&format!(
            "\nCREATE 20.500.12345/PIPE-{i}\n100 HS_ADMIN 86400 1110 ADMIN \
             300:111111111111:20.500.12345/USER-SECKEY\n1 URL 86400 1110 UTF8 https://example.org/{i}\n"
        ));
    }
    std::fs::write(dir.join("many.batch"), text).unwrap();
    let bin = crate::support::examples::example("admin");
    let root = server.addr().to_string();
    let args = strings(&["--root", &root, "batch", "many.batch"]);
    let (status, stderr) = tokio::task::spawn_blocking(move || {
        let mut child = crate::support::examples::command(&bin, &args)
            .current_dir(&dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Read the first line (`Start Time: ...`), then close the pipe, as `head -1` does.
        let mut first = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut first).unwrap();
        assert!(first.starts_with("Start Time: "), "{first}");
        drop(out);
        let done = child.wait_with_output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        (
            done.status,
            String::from_utf8_lossy(&done.stderr).into_owned(),
        )
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cannot write the log"), "{stderr}");
    assert!(stderr.contains("not started"), "{stderr}");
    let created = (0..2000)
        .filter(|i| {
            server
                .store()
                .get(format!("20.500.12345/PIPE-{i}"))
                .is_some()
        })
        .count();
    assert!(
        created < 2000,
        "every command ran: the closed log did not stop the run"
    );
}
