//! The `admin` walk-through of `docs/administration.md` run as written,
//! line by line with `sh`, against the bundled test server's data
//! (`fixtures/testserver/handles.json`: the prefix administrator `0.NA/20.500.1` with its
//! secret `300` and its RSA key `301`, and their files), only the port put in: create, read a non-public value, add, modify,
//! remove, list, delete, under the reference's permission rules.

use std::path::Path;

use crate::support::examples::{example, sample_server};

/// The first `sh` block after `marker` in `docs/administration.md`.
fn readme_block(marker: &str) -> String {
    let readme = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/administration.md"),
    )
    .unwrap();
    let from = readme.find(marker).expect("the README's marker");
    let rest = &readme[from..];
    let start = rest.find("```sh\n").expect("an sh block after the marker") + "```sh\n".len();
    let end = rest[start..].find("```").expect("the block's end") + start;
    rest[start..end].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_admin_walkthrough_runs_as_written() {
    let block = readme_block("the walk-through below is run as written");
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
        "created 20.500.1/new (4 values)",
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
