//! The root file's trust chain, offline: through the public API and `resolve --check-root`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use handle_resolver::root::read_bootstrap_handles;
use handle_resolver::trust::{verify_records, TrustErrorKind, TrustRoot};
use handle_resolver::wire::Limits;
use serde_json::Value;

use crate::support::examples::example;

/// The reference client's root file (Handle.Net 9.2.0, lastUpdate 2019-07-26).
fn reference_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference/root-files/bootstrap_handles")
}

/// Its `lastUpdate`, in seconds: inside every validity period it states.
const LAST_UPDATE: u64 = 1_564_164_940;

/// The file with the URL of `0.GHR/20` (value 1) one character off.
fn tampered_file() -> String {
    let text = std::fs::read_to_string(reference_file()).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let values = doc["handles"]["0.GHR/20"]["values"].as_array_mut().unwrap();
    let url = values.iter_mut().find(|v| v["index"] == 1).unwrap();
    assert_eq!(
        url["data"]["value"],
        "https://132.151.3.122:8444/nf/notifications"
    );
    url["data"]["value"] = "https://132.151.3.123:8444/nf/notifications".into();
    serde_json::to_string_pretty(&doc).unwrap()
}

#[test]
fn the_2019_root_file_verifies_through_the_public_api() {
    let file = read_bootstrap_handles(
        &std::fs::read(reference_file()).unwrap(),
        &Limits::default(),
    )
    .unwrap();
    let v = verify_records(&file.handles, &TrustRoot::global(), LAST_UPDATE);
    assert!(v.all_verified(), "{:?}", v.errors().collect::<Vec<_>>());
    assert_eq!(v.verified().count(), file.handles.len());

    let changed = read_bootstrap_handles(tampered_file().as_bytes(), &Limits::default()).unwrap();
    let v = verify_records(&changed.handles, &TrustRoot::global(), LAST_UPDATE);
    let errors: Vec<_> = v.errors().collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = errors[0];
    assert_eq!((e.handle.as_str(), e.index), ("0.GHR/20", Some(1)));
    assert!(matches!(
        e.kind,
        TrustErrorKind::DigestMismatch { signature: 400, .. }
    ));
}

fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin).args(args).output().unwrap()
}

#[test]
fn resolve_check_root_cli() {
    let bin = example("resolve");
    let file = reference_file();
    let file = file.to_str().unwrap();

    // At the file's lastUpdate, every record verifies.
    let out = run(&bin, &["--check-root", file, "--at", "file"]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 11);
    assert!(lines.iter().all(|l| l.contains(": verified (")), "{stdout}");
    assert!(lines[0].starts_with("0.0/0.0: verified ("), "{stdout}");
    // The same instant written out, or in seconds.
    for at in ["2019-07-26T18:15:40Z", "1564164940"] {
        assert_eq!(
            run(&bin, &["--check-root", file, "--at", at]).status.code(),
            Some(0)
        );
    }

    // Today its signatures have expired: each record says so, exit 1.
    let out = run(&bin, &["--check-root", file, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let docs: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(docs.len(), 11);
    for d in &docs {
        assert_eq!(d["verified"], false);
        assert!(d["reason"].as_str().unwrap().contains("expired at"), "{d}");
    }

    // One character changed: only its record fails, naming the value.
    let dir = std::env::temp_dir().join(format!("check-root-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let changed = dir.join("bootstrap_handles");
    std::fs::write(&changed, tampered_file()).unwrap();
    let out = run(
        &bin,
        &["--check-root", changed.to_str().unwrap(), "--at", "file"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.contains(": verified ("))
        .collect();
    assert_eq!(
        failed,
        [
            "0.GHR/20: NOT verified: value 1 (URL): its SHA-256 digest differs from the one \
          signed in value 400"
        ]
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("1 of 11 records not verified"), "{stderr}");

    // Bad input: no such file, not a root file, a bad time.
    let out = run(&bin, &["--check-root", "/nonexistent/bootstrap_handles"]);
    assert_eq!(out.status.code(), Some(2));
    let not_root = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = run(&bin, &["--check-root", not_root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&bin, &["--check-root", file, "--at", "yesterday"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--at"));
}
