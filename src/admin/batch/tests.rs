//! The parser against the reference's own logs: every `INVALID` line of the samples
//! (`fixtures/genericbatch/`, copied from the shared ground truth) comes from the parser alone.

use super::*;

fn fixture(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/genericbatch");
    std::fs::read_to_string(dir.join(name)).unwrap()
}

fn invalid_lines(batch: &Batch) -> Vec<String> {
    batch
        .entries
        .iter()
        .filter_map(|e| e.command.as_ref().err().map(|err| (e.n, &err.kind)))
        .map(|(n, kind)| {
            if kind.spaced() {
                format!("==>INVALID [{n}]: {kind}")
            } else {
                format!("==>INVALID[{n}]: {kind}")
            }
        })
        .collect()
}

/// Sample 05 (malformed lines, case, BOM, no final newline): the INVALID lines of the
/// reference's log and its line count, files read from the fixture folder.
#[test]
fn malformed_lines_are_invalid_as_the_reference_logs_them() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/genericbatch");
    let text = fixture("05-malformed-and-case.batch");
    let batch = parse(&text, &mut |p: &str| std::fs::read(dir.join(p)).ok());
    let log = fixture("05-malformed-and-case.log");
    let expected: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("==>INVALID"))
        .collect();
    assert_eq!(invalid_lines(&batch), expected);
    assert_eq!(batch.lines, 58);
    let ok: Vec<u32> = batch
        .entries
        .iter()
        .filter(|e| e.command.is_ok())
        .map(|e| e.n)
        .collect();
    assert_eq!(ok, [3, 12, 13, 14, 57, 58]);
}

/// Sample 04's AUTHENTICATE errors that need no file, with their `[n]`.
#[test]
fn authenticate_lines_parse_as_the_reference_reads_them() {
    let text = fixture("04-auth-failures.batch");
    let batch = parse(&text, &mut |_: &str| None);
    let got = invalid_lines(&batch);
    let log = fixture("04-auth-failures.log");
    for line in [
        "==>INVALID[18]: error in authentication: java.lang.Exception: Secret key without password",
        "==>INVALID[20]: error in authentication lines",
        "==>INVALID[21]: error in command line",
        "==>INVALID[22]: error in authentication: java.lang.NumberFormatException: For input string: \"three hundred\"",
        "==>INVALID[24]: error in authentication: java.util.NoSuchElementException",
        "==>INVALID[26]: error in authentication: java.util.NoSuchElementException",
    ] {
        assert!(log.contains(line), "{line}");
        assert!(got.iter().any(|g| g == line), "{line} not in {got:#?}");
    }
    assert_eq!(batch.lines, 35);
}

/// Every sample's `Batch File Lines`.
#[test]
fn line_counts_match_every_sample() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/genericbatch");
    for (name, lines) in [
        ("01-seckey-create", 9),
        ("02-pubkey-auth", 23),
        ("03-add-modify-remove-delete", 22),
        ("04-auth-failures", 35),
        ("05-malformed-and-case", 58),
        ("06-sessionsetup", 18),
        ("07-home-unhome", 19),
        ("08-bulk-create-200", 202),
        ("09-encrypted-rsa-key-first", 3),
        ("10-encrypted-dsa-key-first", 4),
        ("11-nonascii-secret-first", 3),
    ] {
        let text = fixture(&format!("{name}.batch"));
        let batch = parse(&text, &mut |p: &str| std::fs::read(dir.join(p)).ok());
        assert_eq!(batch.lines, lines, "{name}");
    }
}

#[test]
fn odd_input_never_panics() {
    for text in [
        "",
        "\r",
        "\n\n",
        "CREATE",
        "CREATE x\n1",
        "REMOVE ,:h",
        "HOME [::1]:1:tcp\n",
        "AUTHENTICATE ::::",
        "SESSIONSETUP\nOPTIONS:",
        "\u{feff}",
        "ADD h\n1 T 1 1111 ADMIN 1:111111111111:",
    ] {
        let _ = parse(text, &mut |_: &str| None);
    }
    let b = parse("REMOVE ,:h", &mut |_: &str| None);
    assert!(
        matches!(&b.entries[0].command, Ok(Command::Remove { indexes, .. }) if indexes.is_empty())
    );
}

/// Found by the `batch` fuzz target: an ADMIN or LIST handle longer than a handle can be was
/// encoded into a value that the wire decoder refuses. It is now the reference's `error admin
/// handle string` on its line; at the limit, the data decodes to the handle written.
#[test]
fn admin_and_list_handles_longer_than_a_handle_are_invalid() {
    use crate::ident::MAX_HANDLE_LENGTH;
    use crate::wire::{decode_vlist, AdminRecord, Limits};
    let long = "x".repeat(MAX_HANDLE_LENGTH + 1);
    let fits = "x".repeat(MAX_HANDLE_LENGTH);
    for (data, kind) in [
        (
            format!("ADMIN 300:111111111111:{long}"),
            ErrorKind::AdminHandle,
        ),
        (format!("LIST 1:a;300:{long};"), ErrorKind::ListHandle),
    ] {
        let text = format!("ADD 20.500.1/x\n100 HS_ADMIN 86400 1110 {data}\n");
        let batch = parse(&text, &mut |_: &str| None);
        let Err(e) = &batch.entries[0].command else {
            panic!("{:?}", batch.entries[0])
        };
        assert_eq!((e.line, &e.kind), (2, &kind));
        assert_eq!(e.kind.to_string(), "error admin handle string");
    }
    let text = format!(
        "ADD 20.500.1/x\n100 HS_ADMIN 86400 1110 ADMIN 300:111111111111:{fits}\n200 HS_VLIST 86400 1110 LIST 1:{fits};\n"
    );
    let batch = parse(&text, &mut |_: &str| None);
    let Ok(Command::Values { values, .. }) = &batch.entries[0].command else {
        panic!("{:?}", batch.entries[0])
    };
    let limits = Limits::default();
    let admin = AdminRecord::decode(&values[0].data, &limits).unwrap();
    assert_eq!(&admin.admin.handle[..], fits.as_bytes());
    let refs = decode_vlist(&values[1].data, &limits).unwrap();
    assert_eq!(&refs[0].handle[..], fits.as_bytes());
}

/// Each outcome's JSON (`admin batch --json`, Python's `BatchReport`): one rule, in the
/// library, for every outcome.
#[test]
fn each_outcome_has_one_json_form() {
    let report = |outcome| Report {
        seq: 1,
        line: 4,
        n: 3,
        op: "create",
        handle: "20.500.1/x".into(),
        outcome,
    };
    let success = report(Outcome::Success).to_json();
    assert_eq!(
        success,
        serde_json::json!({"line": 4, "n": 3, "op": "create", "handle": "20.500.1/x",
            "outcome": "success", "code": null, "message": null})
    );
    let refused = report(Outcome::Failure {
        code: Some(101),
        text: "Error(101): HANDLE ALREADY EXISTS".into(),
    })
    .to_json();
    assert_eq!(refused["outcome"], "failure");
    assert_eq!(refused["code"], 101);
    assert_eq!(refused["message"], "Error(101): HANDLE ALREADY EXISTS");
    let silent = report(Outcome::Failure {
        code: None,
        text: "no answer".into(),
    })
    .to_json();
    assert!(silent["code"].is_null());
    let batch = parse("FROBNICATE x\n", &mut |_: &str| None);
    let Err(e) = &batch.entries[0].command else {
        panic!("FROBNICATE is no command")
    };
    let invalid = report(Outcome::Invalid(e.kind.clone())).to_json();
    assert_eq!(invalid["outcome"], "invalid");
    assert_eq!(invalid["message"], "error in command line");
}

/// A file that is not UTF-8 (read as the reference reads it, each bad sequence as U+FFFD):
/// the first line it leaves no command says so, with the line and the byte; the others are
/// the reference's `error in command line`, and valid commands stay valid.
#[test]
fn a_file_that_is_not_utf8_is_said_so_once() {
    let bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\nDELETE 20.500.1/x\nab\xff\xfecd\n";
    let text = String::from_utf8_lossy(bytes);
    let batch = parse(&text, &mut |_: &str| None);
    let kinds: Vec<(u32, ErrorKind)> = batch
        .entries
        .iter()
        .filter_map(|e| e.command.as_ref().err())
        .map(|e| (e.line, e.kind.clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, ErrorKind::NotUtf8 { line: 1, byte: 0 }),
            (2, ErrorKind::CommandLine),
            (3, ErrorKind::CommandLine),
            (4, ErrorKind::CommandLine),
            (6, ErrorKind::CommandLine),
        ]
    );
    assert!(matches!(
        batch.entries[4].command,
        Ok(Command::Delete { .. })
    ));
    assert_eq!(
        ErrorKind::NotUtf8 { line: 1, byte: 0 }.to_string(),
        "error in command line (the file is not UTF-8 text: line 1 has a byte that is not \
         UTF-8 at byte 0)"
    );
    // A U+FFFD after valid text: its byte offset in the line.
    let batch = parse(
        &String::from_utf8_lossy(b"CREAT\xe9 x\n"),
        &mut |_: &str| None,
    );
    let Err(e) = &batch.entries[0].command else {
        panic!("{:?}", batch.entries[0])
    };
    assert_eq!(e.kind, ErrorKind::NotUtf8 { line: 1, byte: 5 });
}
