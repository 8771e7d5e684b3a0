//! The README's `admin` walk-through ("Authentication and administration") run as written,
//! line by line with `sh`, against the bundled test server's data
//! (`fixtures/testserver/handles.json`: the prefix administrator `300:0.NA/20.500.1` and its
//! secret file), only the port put in: create, read a non-public value, add, modify,
//! remove, list, delete, under the reference's permission rules.

use std::path::Path;

use crate::support::examples::{example, sample_server};

/// The first `sh` block after `marker` in the README.
fn readme_block(marker: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let from = readme.find(marker).expect("the README's marker");
    let rest = &readme[from..];
    let start = rest.find("```sh\n").expect("an sh block after the marker") + "```sh\n".len();
    let end = rest[start..].find("```").expect("the block's end") + start;
    rest[start..end].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_admin_walkthrough_runs_as_written() {
    let block = readme_block("Against the bundled test server");
    let server = sample_server().await;
    let script = block.replace("127.0.0.1:26451", &server.addr().to_string());
    let examples = example("admin").parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        examples.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .args(["-e", "-c", &script])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("PATH", path)
            .env_remove("HANDLE_RESOLVER_ROOT")
            .env_remove("HANDLE_RESOLVER_SERVER")
            .env_remove("HANDLE_RESOLVER_SECRET")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for line in [
        "created 20.500.1/new (3 values)",
        "for its administrators only",
        "20.500.1/new: 2 values added",
        "20.500.1/new: 1 value modified",
        "20.500.1/new: 2 values removed",
        "deleted 20.500.1/new",
    ] {
        assert!(stdout.contains(line), "{line:?} not in:\n{stdout}");
    }
    assert!(server.store().get("20.500.1/new").is_none());
}

/// `admin home` / `admin unhome` (HOME_NA / UNHOME_NA at every server of the site, a server
/// administrator's requests), and `admin` reading `HANDLE_RESOLVER_ROOT` as `resolve` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_homes_and_unhomes_prefixes_and_reads_the_root_from_the_environment() {
    use crate::support::examples::{command, status, stderr};
    let admin = example("admin");
    let server = sample_server().await;
    let addr = server.addr().to_string();
    let secret = format!(
        "{}/fixtures/testserver/admin.secret",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = |args: Vec<String>, root_env: Option<String>| {
        let admin = admin.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let mut c = command(&admin, &args);
                if let Some(root) = root_env {
                    c.env("HANDLE_RESOLVER_ROOT", root);
                }
                c.output().unwrap()
            })
            .await
            .unwrap()
        }
    };
    let auth = |rest: &[&str]| {
        let mut a: Vec<String> = [
            "--server",
            &addr,
            "--auth",
            "300:0.NA/20.500.1",
            "--secret-file",
            &secret,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(rest.iter().map(|s| s.to_string()));
        a
    };
    // The prefix administrator is no server administrator: refused (exit 1), nothing homed.
    let o = run(auth(&["home", &addr, "20.500.77"]), None).await;
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    // The sample store homes its own prefixes: 20.500.77 is not among them.
    assert!(!server.store().serves("20.500.77/x"));
    server.store().add_server_admin(300, "0.NA/20.500.1");
    let o = run(auth(&["home", &addr, "20.500.77", "0.NA/20.500.1"]), None).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("homed 0.NA/20.500.77 at 1 server"), "{out}");
    assert!(server.store().serves("20.500.77/x"));
    let o = run(auth(&["unhome", &addr, "20.500.77"]), None).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(!server.store().serves("20.500.77/x"));
    // HANDLE_RESOLVER_ROOT gives --root.
    let list: Vec<String> = [
        "--auth",
        "300:0.NA/20.500.1",
        "--secret-file",
        &secret,
        "list",
        "20.500.1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run(list, Some(addr.clone())).await;
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("20.500.1/1"));
}
