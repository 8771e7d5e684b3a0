//! The batch file parser (`admin::batch::parse`), the reference's `hdl-genericbatch` format.
//!
//! Input: a mode byte, then the text of a batch file (bytes that are not UTF-8 are replaced,
//! as the CLI reads a file). Mode bit 0: `FILE` values can be read, and a file's bytes are its
//! path as written (so that a siteinfo JSON written as the path reaches the HS_SITE
//! conversion); without it no file can be read.
//!
//! Properties, checked against the text split into lines independently of the parser (LF, CR
//! and CRLF end a line, as `BufferedReader.readLine`):
//! - parsing never panics;
//! - every entry's line, every `INVALID`'s line and every HOME / UNHOME NA line is a line of
//!   the input, an error's line at or after its command's line; `Batch::lines` counts no more
//!   lines than the input has;
//! - the entries go in file order: line numbers and the reference's `[n]` never go down, a
//!   new line is a new `[n]` and the same line the same `[n]`, `[n]` never exceeds the line
//!   number nor `Batch::lines`;
//! - a command that parses is the command its line names (first word, case-insensitive) about
//!   the handle its line names (non-empty for CREATE, ADD, MODIFY, DELETE, REMOVE); an error
//!   `error in command line` is on a line naming no command; CREATE / ADD / MODIFY take the
//!   lines right after theirs, one value each, up to an empty line or the end, and each value
//!   has the index, type, TTL, permissions and data of its line (ADMIN and LIST data decode
//!   to the administrator and references written); NA lines are the lines after the HOME /
//!   UNHOME line, trimmed, `0.NA/` handles exactly when they parse;
//! - no allocation beyond what the input justifies: the parse's peak heap use (a counting
//!   global allocator) stays under a bound linear in the input's length and lines, so that a
//!   large number in the input (an index, a count, a `[n]`) never sizes a buffer.
//!
//! No writer of batch files exists to re-serialise what parses: the field checks above take
//! its place.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use handle_resolver::admin::batch::{parse, Command, Entry, ErrorKind, Operation};
use handle_resolver::wire::{decode_vlist, AdminRecord, Limits, Permissions, Ttl};
use libfuzzer_sys::fuzz_target;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = IN_USE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call goes to `System` unchanged; only counters are updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Counted as the new block beside the old one, as a moving realloc holds both.
            grew(new_size);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The lines as `BufferedReader.readLine` gives them.
fn physical_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find(['\r', '\n']) {
            None => {
                out.push(rest);
                rest = "";
            }
            Some(i) => {
                out.push(&rest[..i]);
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = &rest[i + skip..];
            }
        }
    }
    out
}

/// Java's `String.trim()`.
fn jtrim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

/// The command word of a main-loop line (upper-cased) and the rest (trimmed), as FORMAT.md
/// describes the split: at the first blank, unless the line starts with one.
fn split_command(line: &str) -> (String, &str) {
    match line.find(' ') {
        Some(i) if i >= 1 => (jtrim(&line[..i]).to_uppercase(), jtrim(&line[i + 1..])),
        _ => (jtrim(line).to_uppercase(), ""),
    }
}

const COMMANDS: [&str; 9] = [
    "AUTHENTICATE",
    "CREATE",
    "ADD",
    "MODIFY",
    "DELETE",
    "REMOVE",
    "HOME",
    "UNHOME",
    "SESSIONSETUP",
];

/// One value line against the value parsed from it.
fn check_value(line: &str, v: &handle_resolver::wire::HandleValue, files: bool) {
    let tokens: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
    assert!(tokens.len() >= 5, "a value from {line:?}");
    assert_eq!(
        v.index,
        tokens[0].parse::<i32>().unwrap() as u32,
        "{line:?}"
    );
    assert_eq!(&v.type_name[..], tokens[1].as_bytes(), "{line:?}");
    assert_eq!(v.ttl, Ttl::Relative(tokens[2].parse().unwrap()), "{line:?}");
    // adminRead adminWrite publicRead publicWrite: bits 0x08, 0x04, 0x02, 0x01 of the
    // permission byte (PROTOCOL.md, "Permission byte"), each set by a '1' in its place.
    let bits: u8 = tokens[3]
        .chars()
        .zip([0x08, 0x04, 0x02, 0x01])
        .filter(|(c, _)| *c == '1')
        .map(|(_, bit)| bit)
        .sum();
    assert_eq!(v.permissions, Permissions(bits), "{line:?}");
    // The data: the rest of the line after the kind token.
    let kind_at = {
        let mut at = 0;
        for t in &tokens[..4] {
            at = line[at..].find(t).unwrap() + at + t.len();
        }
        line[at..].find(tokens[4]).unwrap() + at + tokens[4].len()
    };
    let rest = jtrim(&line[kind_at..]);
    let limits = Limits::default();
    match tokens[4].to_uppercase().as_str() {
        "UTF8" => assert_eq!(&v.data[..], rest.as_bytes(), "{line:?}"),
        "ADMIN" => {
            let record = AdminRecord::decode(&v.data, &limits).expect("ADMIN data decodes");
            let (idx, after) = rest.split_once(':').unwrap();
            let (_, handle) = after.split_once(':').unwrap();
            assert_eq!(
                record.admin.index,
                jtrim(idx).parse::<i32>().unwrap() as u32
            );
            assert_eq!(
                &record.admin.handle[..],
                jtrim(handle).as_bytes(),
                "{line:?}"
            );
        }
        "LIST" => {
            let refs = decode_vlist(&v.data, &limits).expect("LIST data decodes");
            let written: Vec<&str> = rest.split(';').filter(|e| !e.is_empty()).collect();
            assert_eq!(refs.len(), written.len(), "{line:?}");
            for (r, w) in refs.iter().zip(written) {
                let (idx, handle) = w.split_once(':').unwrap();
                assert_eq!(r.index, jtrim(idx).parse::<i32>().unwrap() as u32);
                assert_eq!(&r.handle[..], jtrim(handle).as_bytes());
                assert!(!r.handle.is_empty());
            }
        }
        "FILE" => {
            assert!(files, "a FILE value without files: {line:?}");
            if &v.type_name[..] != b"HS_SITE" {
                assert_eq!(&v.data[..], rest.as_bytes(), "{line:?}");
            }
        }
        other => panic!("a value of kind {other:?}: {line:?}"),
    }
}

/// The checks on one entry, against the input's lines.
fn check_entry(e: &Entry, lines: &[&str], files: bool) {
    let total = lines.len() as u32;
    assert!(e.line >= 1 && e.line <= total, "line {} of {total}", e.line);
    assert!(e.n >= 1 && e.n <= e.line, "[{}] at line {}", e.n, e.line);
    let text = lines[e.line as usize - 1];
    let (word, rest) = split_command(text);
    let command = match &e.command {
        Err(err) => {
            assert!(
                err.line >= e.line && err.line <= total,
                "error at line {} for the command at {} of {total}",
                err.line,
                e.line
            );
            if err.kind == ErrorKind::CommandLine {
                assert!(!COMMANDS.contains(&word.as_str()), "{text:?}");
            } else {
                assert!(COMMANDS.contains(&word.as_str()), "{text:?}: {}", err.kind);
            }
            return;
        }
        Ok(c) => c,
    };
    match command {
        Command::Values { op, handle, values } => {
            let want = match op {
                Operation::Create => "CREATE",
                Operation::Add => "ADD",
                Operation::Modify => "MODIFY",
            };
            assert_eq!(word, want);
            assert_eq!(handle, rest);
            assert!(!handle.is_empty());
            assert!(!values.is_empty());
            let first = e.line as usize;
            for (i, v) in values.iter().enumerate() {
                let line = lines.get(first + i).expect("a value line in the input");
                assert!(!line.is_empty());
                check_value(line, v, files);
            }
            // The block ends at an empty line or the end.
            assert!(lines.get(first + values.len()).is_none_or(|l| l.is_empty()));
        }
        Command::Delete { handle } => {
            assert_eq!(word, "DELETE");
            assert_eq!(handle, rest);
            assert!(!handle.is_empty());
        }
        Command::Remove { handle, indexes } => {
            assert_eq!(word, "REMOVE");
            assert!(!handle.is_empty());
            let (list, after) = rest.split_once(':').expect("a colon after the indexes");
            assert_eq!(handle, jtrim(after));
            // Each index takes a digit at least.
            assert!(indexes.len() <= list.len());
        }
        Command::Home { home, prefixes, .. } => {
            assert_eq!(word, if *home { "HOME" } else { "UNHOME" });
            for (k, (at, na)) in prefixes.iter().enumerate() {
                assert_eq!(*at, e.line + 1 + k as u32, "NA lines follow the HOME line");
                assert!(*at <= total);
                let line = jtrim(lines[*at as usize - 1]);
                assert!(!line.is_empty());
                let is_na = line
                    .get(..5)
                    .is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"));
                match na {
                    Ok(h) => assert!(is_na && h == line, "{line:?}"),
                    Err(_) => assert!(!is_na, "{line:?}"),
                }
            }
        }
        Command::Authenticate { .. } => assert_eq!(word, "AUTHENTICATE"),
        Command::SessionSetup(_) => assert_eq!(word, "SESSIONSETUP"),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    let files = mode & 1 == 1;
    let mut read = |path: &str| files.then(|| path.as_bytes().to_vec());

    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let batch = parse(&text, &mut read);
    let peak = PEAK.load(Ordering::Relaxed) - before;

    let lines = physical_lines(&text);
    let total = lines.len();
    // Linear in the input: a few entries' worth per line (the entries' Vec doubles), and a
    // fixed factor per byte for the strings, value data and the JSON of a siteinfo file.
    let bound = 4 * std::mem::size_of::<Entry>() * (total + 1) + 256 * text.len() + 64 * 1024;
    assert!(
        peak <= bound,
        "peak heap {peak} bytes for {} bytes, {total} lines",
        text.len()
    );

    assert!(batch.lines as usize <= total);
    assert!(batch.entries.len() <= total);
    let mut previous: Option<(u32, u32)> = None;
    for e in &batch.entries {
        assert!(e.n <= batch.lines);
        if let Some((line, n)) = previous {
            assert!(
                e.line >= line && e.n >= n,
                "({line}, [{n}]) then ({}, [{}])",
                e.line,
                e.n
            );
            assert_eq!(e.line == line, e.n == n, "one [n] per command line");
        }
        previous = Some((e.line, e.n));
        check_entry(e, &lines, files);
    }
});
