//! RFC 2169 URN resolution through the real HTTP stack (`NetTransport::fetch`) against a
//! loopback HTTP server with canned answers, the library call and `resolve urn:…` as a user
//! runs it: URL lists, the N2L fallback, and a typed error for every bad answer.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use handle_resolver::wire::UriListError;
use handle_resolver::UrnService;
use handle_resolver::{Resolver, UrnError};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::examples::example;

/// What the canned server answers to one request target (`/uri-res/N2Ls?urn:...`).
#[derive(Clone)]
enum Canned {
    /// Status, headers, body.
    Reply(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Reads the request and never answers.
    Silence,
}

fn list(urls: &[&str]) -> Canned {
    let mut body = String::from("# a comment line\r\n");
    for url in urls {
        body.push_str(url);
        body.push_str("\r\n");
    }
    Canned::Reply(
        200,
        vec![("Content-Type", "text/uri-list".into())],
        body.into_bytes(),
    )
}

fn typed(status: u16, content_type: &str, body: &str) -> Canned {
    Canned::Reply(
        status,
        vec![("Content-Type", content_type.into())],
        body.as_bytes().to_vec(),
    )
}

/// An HTTP/1.1 server on 127.0.0.1 answering each request target from `routes` (404 for
/// the rest), one request per connection.
async fn canned_server(routes: HashMap<String, Canned>) -> SocketAddr {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let routes = Arc::new(routes);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let routes = routes.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let target = head.split(' ').nth(1).unwrap_or("/").to_string();
                let canned = routes
                    .get(&target)
                    .cloned()
                    .unwrap_or_else(|| typed(404, "text/plain", "not found"));
                let (status, headers, body) = match canned {
                    Canned::Reply(s, h, b) => (s, h, b),
                    Canned::Silence => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    }
                };
                let mut out = format!("HTTP/1.1 {status} X\r\n");
                for (name, value) in headers {
                    out.push_str(&format!("{name}: {value}\r\n"));
                }
                out.push_str(&format!(
                    "Content-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                ));
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&body);
                let _ = socket.write_all(&bytes).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    addr
}

const REPORT: &str = "urn:fdc:example.org:2024:report-7";
const BAKER: &str = "urn:urn-3:hbs.baker.tc:1923";

fn n2ls(urn: &str) -> String {
    format!("/uri-res/N2Ls?{urn}")
}

fn n2l(urn: &str) -> String {
    format!("/uri-res/N2L?{urn}")
}

/// The routes of the tests: two URNs with lists, one only through N2L, and one bad answer
/// of each kind (named by the ResourceId of `urn:fdc:example.org:2024:<name>`).
fn routes() -> HashMap<String, Canned> {
    let fdc = |name: &str| format!("urn:fdc:example.org:2024:{name}");
    let mut r = HashMap::new();
    r.insert(
        n2ls(REPORT),
        list(&[
            "https://example.org/reports/7.pdf",
            "https://mirror.example.net/reports/7.pdf",
        ]),
    );
    r.insert(n2ls(BAKER), list(&["https://baker.example.edu/tc/1923"]));
    r.insert(
        n2ls(&fdc("n2l-only")),
        typed(501, "text/plain", "N2Ls not here"),
    );
    r.insert(
        n2l(&fdc("n2l-only")),
        Canned::Reply(302, vec![("Location", "/objects/9".into())], Vec::new()),
    );
    r.insert(
        n2ls(&fdc("html")),
        typed(200, "text/html", "<html>hello</html>"),
    );
    r.insert(
        n2ls(&fdc("garbage")),
        typed(200, "text/uri-list", "http://ok.example/\r\nnot a url\r\n"),
    );
    r.insert(
        n2ls(&fdc("no-location")),
        Canned::Reply(303, Vec::new(), Vec::new()),
    );
    r.insert(n2ls(&fdc("broken")), typed(503, "text/plain", "later"));
    r.insert(
        n2ls(&fdc("huge")),
        typed(200, "text/uri-list", &"http://a.example/x\r\n".repeat(4000)),
    );
    r.insert(n2ls(&fdc("silent")), Canned::Silence);
    r
}

fn resolver(addr: SocketAddr, timeout: Duration) -> Resolver {
    Resolver::builder()
        .urn_resolver(format!("http://{addr}"))
        .timeout(timeout)
        .build()
        .unwrap()
}

#[tokio::test]
async fn urns_resolve_over_http_on_loopback() {
    let addr = canned_server(routes()).await;
    let r = resolver(addr, Duration::from_secs(5));
    let a = r
        .resolve_urn("URN:FDC:Example.ORG:2024:report-7")
        .await
        .unwrap();
    assert_eq!(
        a.urls,
        [
            "https://example.org/reports/7.pdf",
            "https://mirror.example.net/reports/7.pdf"
        ]
    );
    assert_eq!(a.resolver, format!("http://{addr}{}", n2ls(REPORT)));
    let a = r.resolve_urn("urn-3:HBS.Baker.TC:1923").await.unwrap();
    assert_eq!(a.urls, ["https://baker.example.edu/tc/1923"]);
    // 501 to N2Ls, then N2L's redirect (relative, made absolute, not followed).
    let a = r
        .resolve_urn("urn:fdc:example.org:2024:n2l-only")
        .await
        .unwrap();
    assert_eq!(a.urls, [format!("http://{addr}/objects/9")]);
    assert_eq!(a.service, UrnService::N2L);
    // 404 to both: not found, response code 100.
    let e = r
        .resolve_urn("urn:fdc:example.org:2024:unknown")
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e:?}");
    assert_eq!(e.response_code(), 100);
}

#[tokio::test]
async fn bad_answers_over_http_are_typed_errors() {
    let addr = canned_server(routes()).await;
    let r = resolver(addr, Duration::from_millis(1500));
    let urn = |name: &str| format!("urn:fdc:example.org:2024:{name}");
    let err = |name: &'static str| {
        let r = r.clone();
        let urn = urn(name);
        async move { r.resolve_urn(urn.as_str()).await.unwrap_err() }
    };
    assert!(matches!(
        err("html").await,
        UrnError::ContentType { got: Some(t), .. } if t == "text/html"
    ));
    assert!(matches!(
        err("garbage").await,
        UrnError::UriList {
            error: UriListError::BadByte {
                line: 2,
                column: 3,
                byte: b' '
            },
            ..
        }
    ));
    assert!(matches!(
        err("no-location").await,
        UrnError::NoLocation { status: 303, .. }
    ));
    assert!(matches!(
        err("broken").await,
        UrnError::Status { status: 503, .. }
    ));
    assert!(matches!(
        err("huge").await,
        UrnError::BodyTooLarge { limit: 65_536, .. }
    ));
    let started = std::time::Instant::now();
    assert!(matches!(err("silent").await, UrnError::Timeout { .. }));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the deadline holds"
    );
    // Nobody listening.
    let closed = {
        let l = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        l.local_addr().unwrap()
    };
    let e = resolver(closed, Duration::from_secs(2))
        .resolve_urn(REPORT)
        .await
        .unwrap_err();
    assert!(matches!(&e, UrnError::Transport { .. }), "{e:?}");
    assert_eq!(e.response_code(), 2);
}

async fn run(bin: &Path, args: Vec<String>) -> Output {
    let bin = bin.to_path_buf();
    tokio::task::spawn_blocking(move || Command::new(bin).args(args).output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_cli_resolves_urns() {
    let bin = example("resolve");
    let addr = canned_server(routes()).await;
    let resolver_url = format!("http://{addr}");
    let args = |list: &[&str]| -> Vec<String> {
        // (--server on loopback: nothing may go elsewhere, URN or not.)
        let mut v = vec![
            "--server".to_string(),
            "127.0.0.1:9".to_string(),
            "--urn-resolver".to_string(),
            resolver_url.clone(),
        ];
        v.extend(list.iter().map(|s| s.to_string()));
        v
    };

    // Text: one URL a line, in order, each URN under its input (several identifiers), the
    // URNs in input order (--keep-order).
    let out = run(
        &bin,
        args(&[
            "--keep-order",
            "urn:fdc:example.org:2024:report-7",
            "urn-3:HBS.Baker.TC:1923",
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
        String::from_utf8_lossy(&out.stdout),
        ";; urn:fdc:example.org:2024:report-7\nhttps://example.org/reports/7.pdf\nhttps://mirror.example.net/reports/7.pdf\n;; urn-3:HBS.Baker.TC:1923\nhttps://baker.example.edu/tc/1923\n"
    );
    // One URN alone: its URLs alone.
    let out = run(&bin, args(&["urn-3:HBS.Baker.TC:1923"])).await;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "https://baker.example.edu/tc/1923\n"
    );

    // JSON: 1, 100 (exit 1), 2 (exit 3); the worst status wins.
    let out = run(
        &bin,
        args(&[
            "--json",
            "--keep-order",
            "URN:FDC:example.org:2024:report-7",
            "urn:fdc:example.org:2024:unknown",
            "urn:fdc:example.org:2024:broken",
        ]),
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    let docs: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 3);
    assert_eq!(docs[0]["urn"], REPORT);
    assert_eq!(docs[0]["input"], "URN:FDC:example.org:2024:report-7");
    assert_eq!(docs[0]["responseCode"], 1);
    assert_eq!(
        docs[0]["urls"][1],
        "https://mirror.example.net/reports/7.pdf"
    );
    assert_eq!(
        docs[0]["resolver"],
        format!("{resolver_url}{}", n2ls(REPORT))
    );
    assert_eq!(docs[1]["responseCode"], 100);
    assert_eq!(docs[1]["urls"], Value::Array(Vec::new()));
    assert_eq!(
        docs[1]["resolver"],
        format!("{resolver_url}/uri-res/N2L?urn:fdc:example.org:2024:unknown")
    );
    assert_eq!(docs[2]["responseCode"], 2);
    assert!(docs[2]["message"].as_str().unwrap().contains("HTTP 503"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: urn:fdc:example.org:2024:unknown: "),
        "{stderr}"
    );

    // From stdin, in one stream with the rest: TSV lines carry the input.
    let mut a = args(&["--format", "tsv", "--keep-order", "-"]);
    let bin2 = bin.clone();
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = Command::new(bin2)
            .args(std::mem::take(&mut a))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(
                b"# URNs\nurn:fdc:example.org:2024:report-7\nurn:fdc:example.org:2024:unknown\n",
            )
            .unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(
        lines[1],
        format!("urn:fdc:example.org:2024:report-7\t{REPORT}\t1\tURL\thttps://example.org/reports/7.pdf")
    );
    assert!(
        lines[3].starts_with(
            "urn:fdc:example.org:2024:unknown\turn:fdc:example.org:2024:unknown\t100\t\t"
        ),
        "{text}"
    );

    // Not found alone: exit 1. A bad resolver URL: exit 2, nothing sent.
    let out = run(&bin, args(&["urn:fdc:example.org:2024:unknown"])).await;
    assert_eq!(out.status.code(), Some(1));
    let out = run(
        &bin,
        vec![
            "--server".into(),
            "127.0.0.1:9".into(),
            "--urn-resolver".into(),
            "ftp://127.0.0.1/".into(),
            REPORT.into(),
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must start with http://"));
}

/// The test server's own HTTP side serves the URNs of the JSON handle file.
#[tokio::test]
async fn the_test_server_resolves_the_urns_of_its_handle_file() {
    use handle_resolver::testing::{StoreFile, TestServer, TestServerConfig};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/testserver/handles.json"
    ))
    .unwrap();
    let file = StoreFile::parse(&text).unwrap();
    let mut config = TestServerConfig::new(std::sync::Arc::new(file.new_store()));
    config.http = true;
    config.urns = file.urns().unwrap();
    let server = TestServer::start(config).await.unwrap();
    let http = server.http_addr().unwrap();
    let r = resolver(http, Duration::from_secs(5));
    let answer = r
        .resolve_urn("URN:FDC:example.com:20010527:img089322-038")
        .await
        .unwrap();
    assert_eq!(answer.urls, ["https://example.com/img/089322-038"]);
    assert!(answer
        .resolver
        .starts_with(&format!("http://{http}/uri-res/N2Ls?")));
    let e = r
        .resolve_urn("urn:fdc:example.com:2001:nothing")
        .await
        .unwrap_err();
    assert_eq!(e.response_code(), 100, "{e}");
    assert!(server.http_requests() >= 2);
}
