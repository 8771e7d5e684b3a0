//! The example binaries the CLI tests run (`resolve`, `admin`, `inspect`).
//!
//! `cargo test --all-features` builds every example before it runs the tests, into
//! `target/<profile>/examples/`, next to the `deps/` folder of this test binary. A binary
//! that is not there is a failure with the command that builds it, never a skipped test.

use std::path::PathBuf;

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
