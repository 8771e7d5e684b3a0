//! The `resolve` example against the loopback test server serving
//! `fixtures/testserver/handles.json`: output shapes and exit statuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use handle_resolver::testing::{StoreFile, TestServer, TestServerConfig};
use serde_json::Value;

/// The `resolve` example built next to this test binary (absent when only this target was
/// built: the checks are skipped then).
fn resolve_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe
        .parent()?
        .parent()?
        .join("examples")
        .join(format!("resolve{}", std::env::consts::EXE_SUFFIX));
    path.exists().then_some(path)
}

async fn server() -> TestServer {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/testserver/handles.json");
    let file = StoreFile::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let store = Arc::new(file.new_store());
    let server = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    file.fill(&store, &server.site_value(1).data).unwrap();
    server
}

async fn run(bin: &Path, args: Vec<String>) -> Output {
    let bin = bin.to_path_buf();
    tokio::task::spawn_blocking(move || Command::new(bin).args(args).output().unwrap())
        .await
        .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_cli_output_and_exit_statuses() {
    let Some(bin) = resolve_binary() else {
        eprintln!("resolve example not built; skipping the CLI checks");
        return;
    };
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
    assert_eq!(trace[1]["outcome"], 1);

    // Not found: 1, with the code in JSON and a message on stderr.
    let out = run(&bin, args(&["--root", &root, "--json", "20.500.1/nothere"])).await;
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["responseCode"], 100);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found"));

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
