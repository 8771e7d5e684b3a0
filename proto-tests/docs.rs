//! README.md and `docs/`: every file with Rust examples is compiled as doc tests, and every
//! file a document names exists.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.insert(0, root().join("README.md"));
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_document_with_rust_examples_is_compiled_as_doc_tests() {
    let lib = read(&root().join("src/lib.rs"));
    let mut with_rust = 0;
    for path in documents() {
        if !read(&path).contains("```rust") {
            continue;
        }
        with_rust += 1;
        let relative = path.strip_prefix(root()).expect("under the repository");
        let include = format!("include_str!(\"../{}\")", relative.display());
        assert!(
            lib.contains(&include),
            "{} has Rust examples but src/lib.rs has no #[doc = {include}]",
            relative.display()
        );
    }
    // README.md and docs/library.md at least: a check that found no file would pass for nothing.
    assert!(with_rust >= 2, "only {with_rust} files with Rust examples");
}

#[test]
fn every_repository_file_a_document_names_exists() {
    // `docs/NAME.md`, `gateway/README.md`, `BENCHMARKS.md`, ... as the documents write them
    // (in backquotes or as link targets).
    let mut named = 0;
    for path in documents() {
        let text = read(&path);
        for (i, _) in text.match_indices(".md") {
            let start = text[..i]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || "/_-.".contains(c)))
                .map_or(0, |s| s + 1);
            let name = &text[start..i + 3];
            // A path in the repository (`docs/x.md`, `fixtures/auth/README.md`), or one of
            // its top-level documents; not URLs (`//host/x.md`) nor `../shared/`.
            let is_path = name.contains('/') && !name.starts_with('/') && !name.starts_with('.');
            if !is_path && !["BENCHMARKS.md", "CHANGELOG.md"].contains(&name) {
                continue;
            }
            named += 1;
            assert!(
                root().join(name).is_file(),
                "{} names {name}, which does not exist",
                path.display()
            );
        }
    }
    assert!(named > 10, "only {named} file names found");
}
