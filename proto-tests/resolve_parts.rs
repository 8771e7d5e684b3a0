//! The `resolve` example's parts that need no network: its input reader, TSV fields,
//! `HOST[:PORT]` addresses and the exit status table (with the README's copy of it). The
//! files are included by path, so the tests run the binary's own code.

#[allow(dead_code)]
#[path = "../examples/resolve/addr.rs"]
mod addr;
// `--auth`: its own tests (the secret file's trailing newline) run here.
#[allow(dead_code)]
#[path = "../examples/resolve/auth.rs"]
mod auth;
#[allow(dead_code)]
#[path = "../examples/resolve/input.rs"]
mod input;
#[allow(dead_code)]
#[path = "../examples/resolve/render.rs"]
mod render;
#[allow(dead_code)]
#[path = "../examples/resolve/tsv.rs"]
mod tsv;

use std::io::Cursor;
use std::net::SocketAddr;

use addr::{host_port, AddrError};
use input::{Item, Lines, MAX_LINE};
use render::{Code, Outcome, EXIT_TABLE};

fn items(bytes: &[u8]) -> Vec<Item> {
    let mut lines = Lines::new(Cursor::new(bytes.to_vec()));
    let mut out = Vec::new();
    while let Some(item) = lines.next_item().unwrap() {
        out.push(item);
    }
    out
}

fn id(s: &str) -> Item {
    Item::Id(s.to_string())
}

#[test]
fn input_drops_the_bom_skips_blank_and_comment_lines_and_trims() {
    let got = items(b"\xEF\xBB\xBF20.500.1/1\r\n\n   \n# a comment\n  #indented comment\n\t20.500.1/2 \n20.500.1/3");
    assert_eq!(
        got,
        vec![id("20.500.1/1"), id("20.500.1/2"), id("20.500.1/3")]
    );
    // A BOM is only dropped at the start of the input.
    let got = items(b"20.500.1/1\n\xEF\xBB\xBF20.500.1/2\n");
    assert_eq!(got[1], id("\u{feff}20.500.1/2"));
    assert!(items(b"").is_empty());
    assert!(items(b"\n\n#\n").is_empty());
}

#[test]
fn input_reports_lines_that_are_not_utf8_or_too_long_in_line_with_their_number() {
    let mut long = b"20.500.1/".to_vec();
    long.resize(MAX_LINE + 10, b'x');
    let mut bytes = b"20.500.1/1\n20.500.1/\xff\n".to_vec();
    bytes.extend_from_slice(&long);
    bytes.extend_from_slice(b"\n20.500.1/4\n");
    let got = items(&bytes);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0], id("20.500.1/1"));
    match &got[1] {
        Item::Unreadable { text, why } => {
            assert_eq!(text, "20.500.1/\u{fffd}");
            assert_eq!(why, "stdin line 2: not UTF-8 (invalid byte at 9)");
        }
        other => panic!("{other:?}"),
    }
    match &got[2] {
        Item::Unreadable { text, why } => {
            assert_eq!(text.chars().count(), 200, "the text shown is cut");
            assert_eq!(why, &format!("stdin line 3: longer than {MAX_LINE} bytes"));
        }
        other => panic!("{other:?}"),
    }
    // The rest of the long line was read and dropped, not taken for the next line.
    assert_eq!(got[3], id("20.500.1/4"));
}

#[test]
fn tsv_fields_escape_what_would_split_a_record() {
    assert_eq!(tsv::field("plain text"), "plain text");
    assert_eq!(tsv::field("a\tb\nc\rd\\e"), "a\\tb\\nc\\rd\\\\e");
    let line = tsv::line("in\tput", "20.500.1/1", 1, "URL", "x\ny");
    assert_eq!(line, "in\\tput\t20.500.1/1\t1\tURL\tx\\ny");
    assert_eq!(line.split('\t').count(), 5);
    assert_eq!(tsv::HEADER.split('\t').count(), 5);
}

#[test]
fn addresses_default_to_port_2641_and_tell_a_typo_from_a_failed_lookup() {
    let no_lookup = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> {
        panic!("no name is looked up for an IP address")
    };
    let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
    assert_eq!(
        host_port("127.0.0.1", no_lookup),
        Ok(addr("127.0.0.1:2641"))
    );
    assert_eq!(
        host_port("127.0.0.1:26451", no_lookup),
        Ok(addr("127.0.0.1:26451"))
    );
    assert_eq!(host_port("::1", no_lookup), Ok(addr("[::1]:2641")));
    assert_eq!(host_port("[::1]", no_lookup), Ok(addr("[::1]:2641")));
    assert_eq!(host_port("[::1]:9", no_lookup), Ok(addr("[::1]:9")));
    // A host name is looked up with the default port, or the one given.
    let seen = std::cell::RefCell::new(Vec::new());
    let lookup = |host: &str, port: u16| {
        seen.borrow_mut().push((host.to_string(), port));
        Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
    };
    assert_eq!(host_port("hdl.example", lookup), Ok(addr("127.0.0.1:2641")));
    assert_eq!(
        host_port("hdl.example:8000", lookup),
        Ok(addr("127.0.0.1:8000"))
    );
    assert_eq!(
        *seen.borrow(),
        vec![
            ("hdl.example".to_string(), 2641),
            ("hdl.example".to_string(), 8000)
        ]
    );
    // Typos are syntax errors, found without any lookup.
    for bad in [
        "",
        "host:port",
        "host:70000",
        "[::1",
        "[nope]",
        "a b",
        "http://x/",
    ] {
        match host_port(bad, no_lookup) {
            Err(AddrError::Syntax(_)) => {}
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    let e = host_port("host:port", no_lookup).unwrap_err().to_string();
    assert!(e.contains("port \"port\" is not a number 0-65535"), "{e}");
    assert!(e.contains("the port defaults to 2641"), "{e}");
    // A name that does not resolve says so, with the resolver's reason.
    let failing = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> {
        Err(std::io::Error::other("Name or service not known"))
    };
    let e = host_port("no-such-host.example", failing).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot look up the host name \"no-such-host.example\": Name or service not known"
    );
    let empty = |_: &str, _: u16| -> std::io::Result<Vec<SocketAddr>> { Ok(Vec::new()) };
    assert!(matches!(
        host_port("h.example", empty),
        Err(AddrError::Lookup { .. })
    ));
}

/// The table rows as the README writes them.
fn readme_row(r: &render::StatusRow) -> String {
    let code = match r.code {
        Code::Fixed(c) => c.to_string(),
        Code::Server => "the server's code".to_string(),
        Code::Absent => "none".to_string(),
    };
    format!("| {} | {code} | {} |", r.what, r.exit)
}

#[test]
fn the_exit_status_table_is_one_table_in_code_help_and_readme() {
    // Every outcome has its own row, in the enum's order (Outcome::row indexes by it).
    let all = [
        Outcome::Resolved,
        Outcome::NotFound,
        Outcome::NoValues,
        Outcome::UnknownPrefix,
        Outcome::NotServed,
        Outcome::AuthenticationNeeded,
        Outcome::AuthenticationFailed,
        Outcome::Invalid,
        Outcome::Failed,
        Outcome::OtherCode,
        Outcome::Usage,
        Outcome::Interrupted,
    ];
    assert_eq!(all.len(), EXIT_TABLE.len());
    for (i, o) in all.iter().enumerate() {
        assert_eq!(EXIT_TABLE[i].outcome, *o);
        assert_eq!(o.row().outcome, *o);
    }
    // Exit statuses grow with severity: success, not found, bad input, failure, interrupted.
    let exits: Vec<u8> = EXIT_TABLE.iter().map(|r| r.exit).collect();
    assert_eq!(exits, vec![0, 1, 1, 1, 1, 1, 1, 2, 3, 3, 2, 130]);
    // The README holds the same rows.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for r in &EXIT_TABLE {
        let row = readme_row(r);
        assert!(readme.contains(&row), "README.md lacks the row {row}");
    }
    // `--help` prints every row.
    let help = render::exit_table_text();
    for r in &EXIT_TABLE {
        assert!(help.contains(r.what), "{help}");
    }
}
