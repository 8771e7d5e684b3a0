//! The identifier layer through the public API, and `resolve --check` as a user runs it.

use std::process::Command;

use handle_resolver::ident::{CordraId, ErrorKind, IdentifierKind, ParseOptions, Urn};
use handle_resolver::{Handle, Identifier};

use crate::support::examples::example;

/// Every example from the specifications, with the kind and normalized handle or URN expected.
const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "hdl://100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "cordra",
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
    ),
    (
        "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "cordra",
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
    ),
    (
        "http://hdl.handle.net/100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "cordra",
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
    ),
    (
        "http://arrow.resolver.au.gov:2641/hdl/100.102/F58FB49EB1F848f0A606E84CEF294BE5",
        "cordra",
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
    ),
    (
        "10.1045/april2006-paskin",
        "handle",
        "10.1045/april2006-paskin",
    ),
    ("20.500.12345/1", "handle", "20.500.12345/1"),
    (
        "urn:fdc:example.com:2002:A572007",
        "urn",
        "urn:fdc:example.com:2002:A572007",
    ),
    (
        "urn:fdc:example.net:200406:ivr:51089",
        "urn",
        "urn:fdc:example.net:200406:ivr:51089",
    ),
    (
        "urn:fdc:example.org:20010527:img089322-038",
        "urn",
        "urn:fdc:example.org:20010527:img089322-038",
    ),
    ("urn:urn-3:HUL.OIS:Home", "urn", "urn:urn-3:hul.ois:home"),
    (
        "urn-3:HBS.Baker.TC:1923",
        "urn",
        "urn:urn-3:hbs.baker.tc:1923",
    ),
];

#[test]
fn specification_examples_through_the_public_api() {
    for &(input, kind, normalized) in EXAMPLES {
        let id = Identifier::parse(input).unwrap();
        assert_eq!(id.kind().as_str(), kind, "{input}");
        let d = id.describe(input);
        assert_eq!(
            d.handle,
            id.to_handle().ok().map(|h| h.normalized().to_string()),
            "{input}: the handle as sent"
        );
        let got = d.cordra_handle.or(d.handle).or(d.urn).unwrap();
        assert_eq!(got, normalized, "{input}");
        assert!(!d.resolver_urls.is_empty(), "{input}");
    }
}

#[test]
fn handles_feed_the_wire_and_the_resolver() {
    let h: Handle = "20.500.12345/ABC".parse().unwrap();
    assert_eq!(h.as_bytes(), b"20.500.12345/ABC");
    assert_eq!(h.prefix_handle().as_bytes(), b"0.NA/20.500.12345");
    assert_eq!(h.parents().collect::<Vec<_>>(), ["20.500", "20"]);
    let prefix_handle = h.prefix_handle();
    assert_eq!(
        prefix_handle.parent_prefix_handle().unwrap().as_str(),
        "0.NA/20.500"
    );
    let id = CordraId::mint("20.500.12345").unwrap();
    let sent = id.to_handle();
    assert!(!sent.as_str().contains('?'));
    assert_eq!(sent.prefix(), "20.500.12345");
}

#[test]
fn urns_are_reported_but_not_resolvable_as_handles() {
    let id = Identifier::parse("urn:fdc:example.com:2002:A572007").unwrap();
    assert_eq!(id.kind(), IdentifierKind::Urn);
    assert_eq!(
        id.to_handle().unwrap_err().kind(),
        ErrorKind::UrnIsNotAHandle
    );
    let urn: Urn = "URN:FDC:EXAMPLE.COM:2002:A572007".parse().unwrap();
    assert_eq!(id.as_urn(), Some(&urn));
}

#[test]
fn cordra_only_and_lenient_options() {
    let cordra = ParseOptions::default().cordra_only(true);
    assert!(Identifier::parse_with("10.1045/april2006-paskin", cordra).is_err());
    let lenient = ParseOptions::default().lenient(true);
    let id = Identifier::parse_with("https://doi.org/10.1000/a/b", lenient).unwrap();
    assert_eq!(id.to_handle().unwrap().suffix(), "a/b");
}

#[test]
fn resolve_check_cli() {
    let bin = example("resolve");
    let inputs: Vec<&str> = EXAMPLES.iter().map(|e| e.0).collect();
    let out = Command::new(&bin)
        .args(["--check", "--json"])
        .args(&inputs)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), EXAMPLES.len());
    for (line, &(input, kind, _)) in lines.iter().zip(EXAMPLES) {
        assert_eq!(line["input"], input);
        assert_eq!(line["kind"], kind);
    }

    let out = Command::new(&bin)
        .args([
            "--check",
            "--cordra",
            "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
            "100.102/F58FB49EB1F848f0A606E84CEF294BE",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.trim(),
        "error: \"100.102/F58FB49EB1F848f0A606E84CEF294BE\": suffix has 31 hex digits, a CORDRA id needs 32 (at byte 8)"
    );
}

#[test]
fn resolve_check_reads_pasted_urls_and_refuses_overlong_handles() {
    let bin = example("resolve");
    let pasted = [
        (
            "https://doi.org/10.1093/nar/gkaa1100",
            "10.1093/nar/gkaa1100",
        ),
        (
            "https://hdl.handle.net/api/handles/20.500.1/1",
            "20.500.1/1",
        ),
        ("doi.org/10.1000/x", "10.1000/x"),
        (
            "https://hdl.handle.net/20.500.1/a/b?noredirect",
            "20.500.1/a/b",
        ),
    ];
    let out = Command::new(&bin)
        .args(["--check", "--json"])
        .args(pasted.iter().map(|p| p.0))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let handles: Vec<String> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["handle"].to_string())
        .collect();
    let expected: Vec<String> = pasted.iter().map(|p| format!("{:?}", p.1)).collect();
    assert_eq!(handles, expected);

    // One byte over the wire limit: refused offline, exit 2.
    let long = format!(
        "20.500.1/{}",
        "x".repeat(handle_resolver::ident::MAX_HANDLE_LENGTH - 8)
    );
    let out = Command::new(&bin)
        .args(["--check", &long])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("the handle is 2049 bytes long; the protocol carries at most 2048"),
        "{stderr}"
    );
}

/// `resolve --check --json` shows the handle as `resolve` sends it: a CORDRA GUID's suffix
/// as written (its CORDRA form in `cordra_handle`), and the CORDRA form under `--cordra`;
/// `resolve` then asks the server for exactly that handle.
#[cfg(feature = "testing")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_check_shows_the_handle_as_resolve_sends_it() {
    use crate::support::examples::{command, sample_server};
    let bin = example("resolve");
    let input = "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5";
    let check = |extra: &[&str]| {
        let out = command(
            &bin,
            &[&["--check", "--json"][..], extra, &[input]].concat(),
        )
        .output()
        .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let doc = check(&[]);
    assert_eq!(doc["kind"], "cordra");
    assert_eq!(doc["handle"], "100.102/F58FB49EB1F848f0A606E84CEF294BE5");
    assert_eq!(doc["suffix"], "F58FB49EB1F848f0A606E84CEF294BE5");
    assert_eq!(
        doc["cordra_handle"],
        "100.102/F58FB49EB1F848F0A606E84CEF294BE5"
    );
    assert_eq!(
        doc["hdl_uri"],
        "hdl:100.102/F58FB49EB1F848f0A606E84CEF294BE5"
    );
    assert_eq!(
        doc["resolver_urls"][0],
        "https://hdl.handle.net/100.102/F58FB49EB1F848f0A606E84CEF294BE5"
    );
    let doc = check(&["--cordra"]);
    assert_eq!(doc["handle"], "100.102/F58FB49EB1F848F0A606E84CEF294BE5");
    // The text form names both.
    let out = command(&bin, &["--check", input]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("  handle: 100.102/F58FB49EB1F848f0A606E84CEF294BE5\n")
            && text.contains("  cordra_handle: 100.102/F58FB49EB1F848F0A606E84CEF294BE5\n"),
        "{text}"
    );
    // What --check shows is what resolve asks the server for: the handle in its trace.
    let server = sample_server().await;
    let addr = server.addr().to_string();
    for (extra, sent) in [
        (&[][..], "100.102/F58FB49EB1F848f0A606E84CEF294BE5"),
        (
            &["--cordra"][..],
            "100.102/F58FB49EB1F848F0A606E84CEF294BE5",
        ),
    ] {
        let a: Vec<String> = [
            &["--server", addr.as_str(), "--json", "--trace"][..],
            extra,
            &[input],
        ]
        .concat()
        .iter()
        .map(|s| s.to_string())
        .collect();
        let out = crate::support::examples::run(&bin, a).await;
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["trace"][0]["handle"], sent, "{doc}");
        assert_eq!(check(extra)["handle"], sent);
    }
}
