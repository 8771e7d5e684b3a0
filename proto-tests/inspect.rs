//! The `inspect` example over the reference captures, through its binary: the JSON and text
//! views of the messages it decodes, UDP reassembly, TCP streams, signatures checked with
//! `--pubkey`, hex text input, and the reasons it gives for what does not decode.

use std::path::{Path, PathBuf};
use std::process::Command;

use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};
use serde_json::{json, Value as Json};

use crate::support::captures::reference_dir;
use crate::support::examples::example;

fn dir(set: &str, scenario: &str) -> PathBuf {
    reference_dir().join(set).join(scenario)
}

fn decoded_json(set: &str, scenario: &str) -> Vec<Json> {
    serde_json::from_str(&std::fs::read_to_string(dir(set, scenario).join("decoded.json")).unwrap())
        .unwrap()
}

/// The `.bin` files of a scenario whose names start with `prefix`, in name order.
fn bins(set: &str, scenario: &str, prefix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir(set, scenario))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".bin") && name.starts_with(prefix)
        })
        .collect();
    out.sort();
    out
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// What one run of `inspect` printed.
#[derive(Debug)]
struct Run {
    status: Option<i32>,
    stdout: String,
    /// The stderr lines, without their `error: ` prefix.
    errors: Vec<String>,
}

impl Run {
    /// The `--json` output: one object per message.
    fn json(&self) -> Vec<Json> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
            .collect()
    }

    /// The text view's messages: (source, size, text), from each `;; SOURCE (SIZE bytes)`
    /// line followed by the header line.
    fn texts(&self) -> Vec<(String, usize, String)> {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let starts: Vec<usize> = (0..lines.len())
            .filter(|&i| {
                lines
                    .get(i + 1)
                    .is_some_and(|l| l.starts_with(";; ->>HEADER<<-"))
            })
            .collect();
        starts
            .iter()
            .enumerate()
            .map(|(n, &i)| {
                let end = starts.get(n + 1).copied().unwrap_or(lines.len());
                let first = lines[i].strip_prefix(";; ").unwrap();
                let (source, size) = first.rsplit_once(" (").unwrap();
                let size = size.strip_suffix(" bytes)").unwrap().parse().unwrap();
                (source.to_string(), size, lines[i..end].join("\n"))
            })
            .collect()
    }

    /// No error, exit status 0.
    fn assert_clean(&self) {
        assert!(self.errors.is_empty(), "{:?}", self.errors);
        assert_eq!(self.status, Some(0));
    }
}

/// `inspect ARGS FILES` run in `cwd`, so that the files' labels are the names given.
fn inspect(cwd: &Path, args: &[&str], files: &[String]) -> Run {
    let out = Command::new(example("inspect"))
        .current_dir(cwd)
        .args(args)
        .args(files)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    Run {
        status: out.status.code(),
        stdout: String::from_utf8(out.stdout).unwrap(),
        errors: stderr
            .lines()
            .map(|l| {
                l.strip_prefix("error: ")
                    .unwrap_or_else(|| panic!("not an error line: {l}"))
                    .to_string()
            })
            .collect(),
    }
}

/// The names of `paths` (all in one scenario folder).
fn names(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| name(p)).collect()
}

fn key_file(name: &str) -> String {
    reference_dir()
        .join(format!("captures-dsa/keys/{name}.pubkey.bin"))
        .display()
        .to_string()
}

/// A fresh folder for files written by a test.
fn scratch() -> PathBuf {
    crate::support::examples::scratch("inspect")
}

/// The keys of a JSON object, sorted.
fn keys(j: &Json) -> Vec<&str> {
    let mut k: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}

/// `"rwr-"` (decoded.json) to `"1110"` (REST API): the same four bits.
fn bits_of_rw(rw: &str) -> String {
    rw.chars()
        .map(|c| if c == '-' { '0' } else { '1' })
        .collect()
}

/// A message of the JSON view is a response (a request has response code 0).
fn is_response(m: &Json) -> bool {
    m["header"]["response_code"] != 0
}

#[test]
fn udp_resolve_all_has_the_issue_header_and_rest_values() {
    let d = dir("captures", "udp_resolve_all");
    let files = names(&bins("captures", "udp_resolve_all", ""));
    let run = inspect(&d, &["--json"], &files);
    run.assert_clean();
    let messages = run.json();
    assert_eq!(messages.len(), 2);
    let expected = decoded_json("captures", "udp_resolve_all");

    let req = &messages[0];
    assert_eq!(
        req["body"],
        json!({"handle": expected[0]["handle"], "indexes": [], "types": []})
    );
    assert_eq!(req["credential"], Json::Null);

    let resp = &messages[1];
    assert_eq!(keys(resp), ["body", "credential", "envelope", "header"]);
    let h = &expected[1]["header"];
    assert_eq!(
        resp["header"],
        json!({
            "op_code": 1, "op_name": "RESOLUTION", "response_code": 1,
            "response_name": "SUCCESS", "flags": ["AT", "REC", "CA", "PO"],
            "site_info_serial": h["siteInfoSerial"], "recursion_count": h["recursionCount"],
            "expiration": h["expiration"],
        })
    );
    assert_eq!(resp["envelope"]["request_id"], h["requestId"]);
    assert_eq!(resp["envelope"]["version"], h["envelopeVersion"]);
    assert_eq!(resp["body"]["handle"], expected[1]["handle"]);
    let values = resp["body"]["values"].as_array().unwrap();
    let want = expected[1]["values"].as_array().unwrap();
    assert_eq!(values.len(), want.len());
    for (got, want) in values.iter().zip(want) {
        assert_eq!(
            keys(got),
            [
                "data",
                "index",
                "permissions",
                "references",
                "timestamp",
                "ttl",
                "type"
            ]
        );
        assert_eq!(got["index"], want["index"]);
        assert_eq!(got["type"], want["type"]);
        assert_eq!(got["ttl"], want["ttl"], "relative TTLs are numbers");
        assert_eq!(
            got["permissions"],
            json!(bits_of_rw(want["perms"].as_str().unwrap()))
        );
        assert_eq!(got["references"], json!([]));
        let ts = time::OffsetDateTime::parse(
            got["timestamp"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        assert_eq!(json!(ts.unix_timestamp()), want["timestamp"]);
        if let Some(text) = want.get("data") {
            assert_eq!(got["data"], json!({"format": "string", "value": text}));
        }
    }
    // HS_ADMIN is shown as an admin record.
    let admin = values.iter().find(|v| v["type"] == "HS_ADMIN").unwrap();
    assert_eq!(admin["data"]["format"], "admin");
    assert_eq!(admin["data"]["value"]["index"], 300);

    // --raw adds the data bytes.
    let run = inspect(&d, &["--json", "--raw"], &files);
    run.assert_clean();
    let raw = &run.json()[1];
    for (got, want) in raw["body"]["values"].as_array().unwrap().iter().zip(want) {
        let hex = match want.get("dataHex") {
            Some(h) => h.as_str().unwrap().to_owned(),
            None => hex::encode(want["data"].as_str().unwrap()),
        };
        assert_eq!(got["raw"], json!(hex));
    }
}

#[test]
fn udp_large_reassembles_from_shuffled_datagrams() {
    let d = dir("captures", "udp_large");
    let mut files = names(&bins("captures", "udp_large", ""));
    let request = files.remove(0);
    assert_eq!(files.len(), 14);
    let in_order = files.clone();
    let mut rng = StdRng::seed_from_u64(3);
    files.shuffle(&mut rng);
    files.push(files[5].clone()); // a duplicate is ignored
    files.insert(3, request);
    let run = inspect(&d, &[], &files);
    run.assert_clean();
    let texts = run.texts();
    assert_eq!(texts.len(), 2);
    // The request's file comes after the first fragment's: messages keep input order.
    assert!(!texts[0].2.contains("status: REQUEST"), "{}", texts[0].2);
    assert!(texts[1].2.contains("status: REQUEST"), "{}", texts[1].2);
    assert_eq!(texts[0].0, in_order.join(","));
    let run = inspect(&d, &["--json"], &files);
    run.assert_clean();
    let messages = run.json();
    assert!(is_response(&messages[0]));
    assert!(!is_response(&messages[1]));
    let expected = decoded_json("captures", "udp_large");
    let j = &messages[0];
    assert_eq!(j["body"]["values"].as_array().unwrap().len(), 42);
    assert_eq!(
        j["body"]["values"].as_array().unwrap().len(),
        expected[1]["values"].as_array().unwrap().len()
    );
    assert_eq!(j["envelope"]["sequence_number"], 0);

    // Without one fragment the message is reported as incomplete.
    let mut missing = names(&bins("captures", "udp_large", ""));
    missing.remove(7);
    let run = inspect(&d, &["--json"], &missing);
    assert_eq!(run.status, Some(2));
    let messages = run.json();
    assert_eq!(messages.len(), 1, "only the request");
    assert!(!is_response(&messages[0]));
    match &run.errors[..] {
        [e] => {
            assert!(e.contains("needs 14 fragments"), "{e}");
            let (_, got) = e.split_once("got sequence numbers [").unwrap();
            let (got, _) = got.split_once(']').unwrap();
            let got: Vec<u32> = got.split(", ").map(|n| n.parse().unwrap()).collect();
            assert_eq!(got.len(), 13);
            assert!(!got.contains(&6));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tcp_large_is_one_response_with_42_values() {
    let d = dir("captures", "tcp_large");
    let run = inspect(
        &d,
        &["--json"],
        &names(&bins("captures", "tcp_large", "tcp1")),
    );
    run.assert_clean();
    let messages = run.json();
    let responses: Vec<&Json> = messages.iter().filter(|m| is_response(m)).collect();
    assert_eq!(responses.len(), 1);
    assert_eq!(messages.len(), 2, "the request and the response");
    let j = responses[0];
    assert_eq!(j["body"]["values"].as_array().unwrap().len(), 42);
    assert_eq!(j["header"]["response_name"], "SUCCESS");
}

#[test]
fn tcp_stream_with_two_messages_gives_both() {
    let d = dir("captures", "raw_tcp_keepalive_two_requests");
    let c2s = names(&bins("captures", "raw_tcp_keepalive_two_requests", "tcp1"));
    let run = inspect(&d, &[], &c2s[..1]);
    run.assert_clean();
    let texts = run.texts();
    assert_eq!(texts.len(), 2);
    let first = texts[0].1;
    assert_eq!(texts[1].0, format!("{} @ {first}", c2s[0]));
    let total: usize = texts.iter().map(|t| t.1).sum();
    assert_eq!(
        total,
        std::fs::metadata(d.join(&c2s[0])).unwrap().len() as usize
    );
}

#[test]
fn dsa_certified_response_verifies_with_its_server_key_only() {
    let d = dir("captures-dsa", "udp_certify_v2_11");
    let files = names(&bins("captures-dsa", "udp_certify_v2_11", "02_s2c"));
    let with = |k: &str| {
        let run = inspect(&d, &["--json", "--pubkey", &key_file(k)], &files);
        run.assert_clean();
        run.json().remove(0)
    };
    let good = with("s1-127.0.0.11");
    assert_eq!(good["credential"]["signature_valid"], true);
    assert_eq!(good["credential"]["type"], "HS_SIGNED");
    assert_eq!(good["credential"]["digest_algorithm"], "SHA-256");
    assert_eq!(good["credential"].get("signature_error"), None);
    let bad = with("s0-127.0.0.10");
    assert_eq!(bad["credential"]["signature_valid"], false);
    assert!(bad["credential"]["signature_error"].is_string());
    // Without --pubkey there is no verdict.
    let run = inspect(&d, &["--json"], &files);
    run.assert_clean();
    let plain = run.json().remove(0);
    assert_eq!(plain["credential"].get("signature_valid"), None);
    // The text view says the same.
    let run = inspect(&d, &["--pubkey", &key_file("s1-127.0.0.11")], &files);
    run.assert_clean();
    assert!(run.stdout.contains("signature VALID"), "{}", run.stdout);
}

#[test]
fn garbage_is_reported_with_its_reason() {
    let d = dir("captures", "raw_udp_garbage");
    let files = names(&bins("captures", "raw_udp_garbage", ""));
    let run = inspect(&d, &["--json"], &files);
    assert_eq!(run.status, Some(2));
    // The server's error answer decodes; the garbage does not.
    let messages = run.json();
    assert_eq!(messages.len(), 1);
    assert!(is_response(&messages[0]));
    match &run.errors[..] {
        [e] => {
            assert!(
                e.starts_with(&format!("{}: message at byte 0: ", files[0])),
                "{e}"
            );
            assert!(e.contains("envelope.message_length"), "{e}");
        }
        other => panic!("{other:?}"),
    }

    let scratch = scratch();
    let short = |name: &str, bytes: &[u8]| {
        std::fs::write(scratch.join(name), bytes).unwrap();
        let run = inspect(&scratch, &["--json"], &[name.to_string()]);
        assert_eq!(run.status, Some(2));
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        run.errors
    };
    assert_eq!(short("empty.bin", b""), ["empty.bin: empty file"]);
    // 10 bytes: not even an envelope.
    match &short("ten.bin", &[2, 11, 0, 0, 0, 0, 0, 0, 0, 0])[..] {
        [e] => assert!(
            e.starts_with(
                "ten.bin: 10 bytes at byte 0 are not a whole message (the envelope needs 20 \
                 bytes and announces 0 more)"
            ),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&scratch);
    // The truncated captures are reported as such, not as fragments.
    for scenario in ["raw_udp_truncated_body", "raw_tcp_truncated_body"] {
        let files = names(&bins("captures", scenario, ""));
        let run = inspect(&dir("captures", scenario), &["--json"], &files[..1]);
        assert!(run.stdout.is_empty(), "{scenario}");
        assert_eq!(run.errors.len(), 1, "{scenario}: {:?}", run.errors);
    }
}

#[test]
fn hex_text_input_is_accepted() {
    let file = &bins("captures", "udp_resolve_all", "02")[0];
    let bin = std::fs::read(file).unwrap();
    let scratch = scratch();
    let text = format!("{}\n{}\n", hex::encode(&bin[..40]), hex::encode(&bin[40..]));
    std::fs::write(scratch.join("message.hex"), text).unwrap();
    std::fs::write(scratch.join("message.bin"), &bin).unwrap();
    // A binary message is never taken for hex: it starts with its version byte.
    let from_bin = inspect(&scratch, &["--json"], &["message.bin".into()]);
    from_bin.assert_clean();
    assert_eq!(from_bin.json().len(), 1);
    let from_hex = inspect(&scratch, &["--json"], &["message.hex".into()]);
    from_hex.assert_clean();
    assert_eq!(from_hex.json(), from_bin.json());
    // "abc": an odd number of digits is no hex, so its 3 bytes are read as they are;
    // "abcd" is hex for 2 bytes.
    std::fs::write(scratch.join("odd.hex"), "abc").unwrap();
    std::fs::write(scratch.join("even.hex"), "abcd\n").unwrap();
    let odd = inspect(&scratch, &[], &["odd.hex".into()]);
    assert!(
        odd.errors[0].starts_with("odd.hex: 3 bytes at byte 0 "),
        "{:?}",
        odd.errors
    );
    let even = inspect(&scratch, &[], &["even.hex".into()]);
    assert!(
        even.errors[0].starts_with("even.hex: 2 bytes at byte 0 "),
        "{:?}",
        even.errors
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn text_view_reads_like_dig() {
    let d = dir("captures", "udp_resolve_all");
    let files = names(&bins("captures", "udp_resolve_all", ""));
    let req = inspect(&d, &[], &files[..1]);
    req.assert_clean();
    let req = &req.stdout;
    assert!(req.contains("QUESTION SECTION"), "{req}");
    let resp = inspect(&d, &[], &files[1..2]);
    resp.assert_clean();
    let resp = &resp.stdout;
    assert!(
        resp.contains("opcode: RESOLUTION (1), status: SUCCESS (1)"),
        "{resp}"
    );
    assert!(resp.contains("flags: at rec ca po;"), "{resp}");
    assert!(
        resp.contains("1\tURL\t86400\thttp://example.org/hslab/1"),
        "{resp}"
    );
}

#[test]
fn binary_exits_quietly_on_a_closed_pipe_and_names_unreadable_files() {
    use std::process::{Command, Stdio};
    let bin = example("inspect");
    // 42 values as JSON, to a reader that has already gone (`inspect ... | head -0`).
    let files = bins("captures", "tcp_large", "");
    let mut child = Command::new(&bin)
        .arg("--json")
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");

    // A missing file: status 2 and `error: FILE: cannot read: ...`; the others still print.
    let missing = dir("captures", "tcp_large").join("no-such-file.bin");
    let out = Command::new(&bin)
        .arg(&missing)
        .args(&files)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(&format!("error: {}: cannot read: ", missing.display())),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(";; ANSWER SECTION:"));
}
