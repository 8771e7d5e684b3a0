//! The `resolve` example's parts, through its binary: the stdin reader (byte order mark,
//! blank and comment lines, lines that are not UTF-8 or too long), the TSV fields, and the
//! exit status table (in `--help` and in the README). `HOST[:PORT]` addresses and `--auth`
//! key files are the library's (`addr`, `auth::KeySource`), tested there.

use std::process::Output;

use crate::support::examples::example;

use crate::support::examples::command;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// One row of the exit status table as `--help` prints it: exit status, what happened, and
/// the `responseCode` as the README writes it (a number, "the server's code" or "none").
#[derive(Debug, PartialEq, Eq)]
struct HelpRow {
    exit: u8,
    what: String,
    code: String,
}

/// The exit status table of `resolve --help`.
fn help_table() -> Vec<HelpRow> {
    let out = command(&example("resolve"), &["--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = String::from_utf8(out.stdout).unwrap();
    let start = help
        .find("Exit status (with several identifiers the highest wins):\n")
        .unwrap_or_else(|| panic!("no exit status table in --help:\n{help}"));
    help[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|line| {
            // "  EEE  WHAT (padded to 55) CODE"
            let (exit, rest) = line.trim_start().split_once("  ").unwrap();
            let rest = rest.trim_end();
            let (what, code) = if let Some(w) = rest.strip_suffix("the server's code") {
                (w, "the server's code".to_string())
            } else if let Some(w) = rest.strip_suffix("no document") {
                (w, "none".to_string())
            } else {
                let (w, n) = rest.rsplit_once(" responseCode ").unwrap();
                (w, n.to_string())
            };
            HelpRow {
                exit: exit.parse().unwrap(),
                what: what.trim().to_string(),
                code,
            }
        })
        .collect()
}

#[test]
fn the_exit_status_table_is_one_table_in_code_help_and_readme() {
    // Every outcome has its own row, in the enum's order: `examples/resolve/render.rs`
    // asserts that at compile time (`Outcome::row` indexes the table by it).
    let table = help_table();
    assert_eq!(table.len(), 12, "{table:?}");
    // Exit statuses grow with severity: success, not found, bad input, failure, interrupted.
    let exits: Vec<u8> = table.iter().map(|r| r.exit).collect();
    assert_eq!(exits, vec![0, 1, 1, 1, 1, 1, 1, 2, 3, 3, 2, 130]);
    assert_eq!(table[0].what, "resolved");
    assert_eq!(table[0].code, "1");
    assert_eq!(table[11].what, "interrupted by Ctrl-C or SIGTERM");
    // docs/resolve.md holds the same rows.
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/resolve.md")).unwrap();
    for r in &table {
        let row = format!("| {} | {} | {} |", r.what, r.code, r.exit);
        assert!(doc.contains(&row), "docs/resolve.md lacks the row {row}");
    }
}

/// Against the loopback test server: the reader's items and the TSV fields as the binary
/// prints them.
#[cfg(feature = "testing")]
mod with_server {

    use std::process::Output;

    use handle_resolver::testing::TestServer;
    use handle_resolver::wire::HandleValue;
    use serde_json::Value;

    use super::{example, stderr};

    /// `input::MAX_LINE` of the example: the longest stdin line read as an identifier.
    const MAX_LINE: usize = 64 * 1024;

    use crate::support::examples::sample_server as server;

    /// `resolve --server SERVER ARGS -` with `input` on stdin.
    async fn run_stdin(server: &TestServer, args: &[&str], input: &[u8]) -> Output {
        let mut all = vec!["--server".to_string(), server.addr().to_string()];
        all.extend(args.iter().map(|s| s.to_string()));
        all.push("-".into());
        crate::support::examples::run_stdin(&example("resolve"), all, input).await
    }

    /// The JSON documents of a `--json --keep-order` run, one per item read, in input order.
    async fn documents(server: &TestServer, input: &[u8]) -> Vec<Value> {
        let out = run_stdin(server, &["--json", "--keep-order"], input).await;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
            .collect()
    }

    fn inputs(docs: &[Value]) -> Vec<&str> {
        docs.iter().map(|d| d["input"].as_str().unwrap()).collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn input_drops_the_bom_skips_blank_and_comment_lines_and_trims() {
        let server = server().await;
        let got = documents(&server, b"\xEF\xBB\xBF20.500.1/1\r\n\n   \n# a comment\n  #indented comment\n\t20.500.1/2 \n20.500.1/3").await;
        assert_eq!(inputs(&got), ["20.500.1/1", "20.500.1/2", "20.500.1/3"]);
        // A BOM is only dropped at the start of the input.
        let got = documents(&server, b"20.500.1/1\n\xEF\xBB\xBF20.500.1/2\n").await;
        assert_eq!(inputs(&got)[1], "\u{feff}20.500.1/2");
        assert!(documents(&server, b"").await.is_empty());
        assert!(documents(&server, b"\n\n#\n").await.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn input_reports_lines_that_are_not_utf8_or_too_long_in_line_with_their_number() {
        let server = server().await;
        let mut long = b"20.500.1/".to_vec();
        long.resize(MAX_LINE + 10, b'x');
        let mut bytes = b"20.500.1/1\n20.500.1/\xff\n".to_vec();
        bytes.extend_from_slice(&long);
        bytes.extend_from_slice(b"\n20.500.1/4\n");
        let got = documents(&server, &bytes).await;
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0]["input"], "20.500.1/1");
        assert_eq!(got[1]["input"], "20.500.1/\u{fffd}");
        assert_eq!(
            got[1]["message"],
            "stdin line 2: not UTF-8 (invalid byte at 9)"
        );
        assert_eq!(got[1]["responseCode"], 2);
        let text = got[2]["input"].as_str().unwrap();
        assert_eq!(text.chars().count(), 200, "the text shown is cut");
        assert_eq!(
            got[2]["message"],
            format!("stdin line 3: longer than {MAX_LINE} bytes")
        );
        // The rest of the long line was read and dropped, not taken for the next line.
        assert_eq!(got[3]["input"], "20.500.1/4");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tsv_fields_escape_what_would_split_a_record() {
        let server = server().await;
        server.store().insert(
            "20.500.1/tsv",
            vec![
                HandleValue::new(1, "URL", "plain text"),
                HandleValue::new(2, "X\tTYPE", "a\tb\nc\rd\\e"),
            ],
        );
        let out = run_stdin(
            &server,
            &["--format", "tsv", "--keep-order"],
            b"20.500.1/tsv\nin\tput\n",
        )
        .await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "input\thandle\tresponseCode\ttype\tvalue");
        assert_eq!(lines[1], "20.500.1/tsv\t20.500.1/tsv\t1\tURL\tplain text");
        assert_eq!(
            lines[2],
            "20.500.1/tsv\t20.500.1/tsv\t1\tX\\tTYPE\ta\\tb\\nc\\rd\\\\e"
        );
        // A failure: the input escaped, an empty type, the reason as the value.
        assert!(lines[3].starts_with("in\\tput\tin\\tput\t2\t\t"), "{text}");
        for line in &lines {
            assert_eq!(line.split('\t').count(), 5, "{line}");
        }
    }
}
