//! The `inspect` example over the reference captures. The example's modules
//! (`examples/inspect/{input,render,text}.rs`) are included here by path, so the tests run
//! the same code as the binary without building it.

#[allow(dead_code)]
#[path = "../examples/inspect/input.rs"]
mod input;
#[allow(dead_code)]
#[path = "../examples/inspect/render.rs"]
mod render;
#[allow(dead_code)]
#[path = "../examples/inspect/text.rs"]
mod text;

use std::path::{Path, PathBuf};

use bytes::Bytes;
use handle_resolver::wire::{Limits, PublicKey};
use rand::{rngs::StdRng, seq::SliceRandom, SeedableRng};
use serde_json::{json, Value as Json};

use crate::support::captures::reference_dir;
use input::{decode_files, from_hex_text, read_input, InspectError, Outcome};
use render::{message_json, Options};

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

fn decode(paths: &[PathBuf]) -> Outcome {
    let inputs = paths
        .iter()
        .map(|p| (name(p), read_input(p).unwrap()))
        .collect();
    decode_files(inputs, &Limits::default())
}

fn key(name: &str) -> PublicKey {
    let p = reference_dir().join(format!("captures-dsa/keys/{name}.pubkey.bin"));
    PublicKey::decode_bytes(&read_input(&p).unwrap()).unwrap()
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

#[test]
fn udp_resolve_all_has_the_issue_header_and_rest_values() {
    let files = bins("captures", "udp_resolve_all", "");
    let out = decode(&files);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.messages.len(), 2);
    let expected = decoded_json("captures", "udp_resolve_all");
    let opts = Options::default();

    let req = message_json(&out.messages[0].message, &opts);
    assert_eq!(
        req["body"],
        json!({"handle": expected[0]["handle"], "indexes": [], "types": []})
    );
    assert_eq!(req["credential"], Json::Null);

    let resp = message_json(&out.messages[1].message, &opts);
    assert_eq!(keys(&resp), ["body", "credential", "envelope", "header"]);
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
    let raw = message_json(
        &out.messages[1].message,
        &Options {
            raw: true,
            pubkey: None,
        },
    );
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
    let mut files = bins("captures", "udp_large", "");
    let request = files.remove(0);
    assert_eq!(files.len(), 14);
    let in_order: Vec<String> = files.iter().map(|p| name(p)).collect();
    let mut rng = StdRng::seed_from_u64(3);
    files.shuffle(&mut rng);
    files.push(files[5].clone()); // a duplicate is ignored
    files.insert(3, request);
    let out = decode(&files);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.messages.len(), 2);
    // The request's file comes after the first fragment's: messages keep input order.
    assert!(out.messages[0].message.is_response());
    assert!(!out.messages[1].message.is_response());
    let resp = &out.messages[0];
    assert_eq!(resp.source, in_order.join(","));
    let expected = decoded_json("captures", "udp_large");
    let j = message_json(&resp.message, &Options::default());
    assert_eq!(j["body"]["values"].as_array().unwrap().len(), 42);
    assert_eq!(
        j["body"]["values"].as_array().unwrap().len(),
        expected[1]["values"].as_array().unwrap().len()
    );
    assert_eq!(j["envelope"]["sequence_number"], 0);

    // Without one fragment the message is reported as incomplete.
    let mut missing = bins("captures", "udp_large", "");
    missing.remove(7);
    let out = decode(&missing);
    assert_eq!(out.messages.len(), 1, "only the request");
    match &out.errors[..] {
        [InspectError::Incomplete { needed, got, .. }] => {
            assert_eq!(*needed, 14);
            assert_eq!(got.len(), 13);
            assert!(!got.contains(&6));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tcp_large_is_one_response_with_42_values() {
    let out = decode(&bins("captures", "tcp_large", "tcp1"));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let responses: Vec<_> = out
        .messages
        .iter()
        .filter(|d| d.message.is_response())
        .collect();
    assert_eq!(responses.len(), 1);
    assert_eq!(out.messages.len(), 2, "the request and the response");
    let j = message_json(&responses[0].message, &Options::default());
    assert_eq!(j["body"]["values"].as_array().unwrap().len(), 42);
    assert_eq!(j["header"]["response_name"], "SUCCESS");
}

#[test]
fn tcp_stream_with_two_messages_gives_both() {
    let c2s = bins("captures", "raw_tcp_keepalive_two_requests", "tcp1");
    let out = decode(&c2s[..1]);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.messages.len(), 2);
    let first = out.messages[0].size;
    assert_eq!(
        out.messages[1].source,
        format!("{} @ {first}", name(&c2s[0]))
    );
    let total: usize = out.messages.iter().map(|d| d.size).sum();
    assert_eq!(total, std::fs::metadata(&c2s[0]).unwrap().len() as usize);
}

#[test]
fn dsa_certified_response_verifies_with_its_server_key_only() {
    let files = bins("captures-dsa", "udp_certify_v2_11", "02_s2c");
    let out = decode(&files);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let msg = &out.messages[0].message;
    let with = |k: &str| {
        message_json(
            msg,
            &Options {
                raw: false,
                pubkey: Some(key(k)),
            },
        )
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
    let plain = message_json(msg, &Options::default());
    assert_eq!(plain["credential"].get("signature_valid"), None);
    // The text view says the same.
    let opts = Options {
        raw: false,
        pubkey: Some(key("s1-127.0.0.11")),
    };
    let t = text::message_text(msg, "x", 0, &opts);
    assert!(t.contains("signature VALID"), "{t}");
}

#[test]
fn garbage_is_reported_with_its_reason() {
    let files = bins("captures", "raw_udp_garbage", "");
    let out = decode(&files);
    // The server's error answer decodes; the garbage does not.
    assert_eq!(out.messages.len(), 1);
    assert!(out.messages[0].message.is_response());
    match &out.errors[..] {
        [e @ InspectError::Decode { file, at: 0, error }] => {
            assert_eq!(file, &name(&files[0]));
            assert_eq!(error.field, "envelope.message_length");
            assert!(e.to_string().contains("envelope.message_length"), "{e}");
        }
        other => panic!("{other:?}"),
    }

    let short = |bytes: &'static [u8]| {
        decode_files(
            vec![("f".to_owned(), Bytes::from_static(bytes))],
            &Limits::default(),
        )
    };
    assert!(matches!(
        &short(b"").errors[..],
        [InspectError::Empty { .. }]
    ));
    // 10 bytes: not even an envelope.
    assert!(matches!(
        &short(&[2, 11, 0, 0, 0, 0, 0, 0, 0, 0]).errors[..],
        [InspectError::Trailing {
            count: 10,
            announced: 0,
            ..
        }]
    ));
    // The truncated captures are reported as such, not as fragments.
    for scenario in ["raw_udp_truncated_body", "raw_tcp_truncated_body"] {
        let files = bins("captures", scenario, "");
        let out = decode(&files[..1]);
        assert!(out.messages.is_empty(), "{scenario}");
        assert_eq!(out.errors.len(), 1, "{scenario}: {:?}", out.errors);
    }
}

#[test]
fn hex_text_input_is_accepted() {
    let file = &bins("captures", "udp_resolve_all", "02")[0];
    let bin = std::fs::read(file).unwrap();
    let text = format!("{}\n{}\n", hex::encode(&bin[..40]), hex::encode(&bin[40..]));
    assert_eq!(from_hex_text(text.as_bytes()).unwrap(), bin);
    // A binary message is never taken for hex: it starts with its version byte.
    assert_eq!(from_hex_text(&bin), None);
    assert_eq!(from_hex_text(b"abc"), None, "odd number of digits");
}

#[test]
fn text_view_reads_like_dig() {
    let out = decode(&bins("captures", "udp_resolve_all", ""));
    let opts = Options::default();
    let req = text::message_text(&out.messages[0].message, "q", 0, &opts);
    assert!(req.contains("QUESTION SECTION"), "{req}");
    let resp = text::message_text(&out.messages[1].message, "a", 0, &opts);
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

/// The `inspect` example built next to this test binary (absent when only this target was
/// built: the binary checks are skipped then).
fn inspect_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe
        .parent()?
        .parent()?
        .join("examples")
        .join(format!("inspect{}", std::env::consts::EXE_SUFFIX));
    path.exists().then_some(path)
}

#[test]
fn binary_exits_quietly_on_a_closed_pipe_and_names_unreadable_files() {
    use std::process::{Command, Stdio};
    let Some(bin) = inspect_binary() else {
        eprintln!("inspect example not built; skipping the binary checks");
        return;
    };
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
