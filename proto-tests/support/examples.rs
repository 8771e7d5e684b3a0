//! The example binaries the CLI tests run (`resolve`, `admin`, `inspect`).
//!
//! `cargo test --all-features` builds every example before it runs the tests, into
//! `target/<profile>/examples/`, next to the `deps/` folder of this test binary. A binary
//! that is not there is a failure with the command that builds it, never a skipped test.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The path of the example binary `name`; panics when it has not been built.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the path of the running test binary");
    // target/<profile>/deps/proto-<hash> -> target/<profile>/examples/<name>
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary runs from target/<profile>/deps/");
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "example binary `{name}` not found at {}: build it with `cargo build --examples \
         --all-features` (`cargo test --all-features` builds it before running the tests)",
        path.display()
    );
    path
}

/// The binary with `args`, without the environment variables it reads (its root, server
/// and secret: the tests set them where they test them).
pub fn command<S: AsRef<OsStr>>(bin: &Path, args: &[S]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .env_remove("HANDLE_RESOLVER_ROOT")
        .env_remove("HANDLE_RESOLVER_SERVER")
        .env_remove("HANDLE_RESOLVER_SECRET");
    c
}

/// A fresh directory under the system's temporary one for a test's files, named after
/// `what`, the process and a random number.
pub fn scratch(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "handle-resolver-{what}-{}-{:x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a run wrote on stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A run's exit status (a run killed by a signal has none: a failure).
pub fn status(o: &Output) -> i32 {
    o.status.code().unwrap()
}

/// Runs the binary with `args` ([`command`]) off the test's runtime.
// Its callers are the tests of the `testing` feature.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub async fn run(bin: &Path, args: Vec<String>) -> Output {
    let bin = bin.to_path_buf();
    tokio::task::spawn_blocking(move || command(&bin, &args).output().unwrap())
        .await
        .unwrap()
}

/// Runs the binary with `input` on stdin.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub async fn run_stdin(bin: &Path, args: Vec<String>, input: impl Into<Vec<u8>>) -> Output {
    let input: Vec<u8> = input.into();
    let bin = bin.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut child = command(&bin, &args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        out
    })
    .await
    .unwrap()
}

/// The test server with the sample store (`fixtures/testserver/handles.json`) the CLI tests
/// resolve against, its site values pointing at itself.
#[cfg(feature = "testing")]
pub async fn sample_server() -> handle_resolver::testing::TestServer {
    use handle_resolver::testing::{StoreFile, TestServer, TestServerConfig};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/testserver/handles.json");
    let file = StoreFile::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let store = std::sync::Arc::new(file.new_store());
    let server = TestServer::start(TestServerConfig::new(store.clone()))
        .await
        .unwrap();
    file.fill(&store, &server.site_value(1).data).unwrap();
    server
}
