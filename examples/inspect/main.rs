//! `inspect`: decodes captured Handle System messages and prints them like `dig`, or as JSON.
//!
//! ```text
//! cargo run --example inspect -- [--json] [--raw] [--pubkey FILE] FILE...
//! ```
//!
//! The FILEs are the datagrams of one UDP message (reassembled, any order) and/or files of
//! whole messages (a datagram, a message, a TCP stream); see `--help` for how they are told
//! apart. Exit status: 0 when every file decodes, 2 otherwise (the reasons on stderr).
//!
//! The logic lives in the sibling modules; `proto-tests/inspect.rs` tests it through this binary.

mod input;
mod render;
mod text;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use handle_resolver::wire::{Limits, PublicKey};

use input::{decode_files, read_input, InspectError, DETECTION_RULES};
use render::{message_json, Options};

/// Decode captured Handle System messages (RFC 3652) and print them.
#[derive(Debug, Parser)]
#[command(name = "inspect", after_help = DETECTION_RULES)]
struct Args {
    /// One JSON object per message (one per line) instead of the text view.
    #[arg(long)]
    json: bool,
    /// Add the hex of every value's data bytes (`"raw"` in JSON).
    #[arg(long)]
    raw: bool,
    /// An HS_PUBKEY blob: check each signed message's signature with it.
    #[arg(long, value_name = "FILE")]
    pubkey: Option<PathBuf>,
    /// Message files: one UDP message's datagrams, or files of whole messages; `-` is stdin.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Reads an HS_PUBKEY blob (binary or hex text).
fn load_pubkey(path: &Path) -> Result<PublicKey, InspectError> {
    let blob = read_input(path)?;
    PublicKey::decode_bytes(&blob).map_err(|e| InspectError::PublicKey {
        file: path.display().to_string(),
        reason: e.to_string(),
    })
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut errors: Vec<InspectError> = Vec::new();
    let pubkey = match args.pubkey.as_deref().map(load_pubkey).transpose() {
        Ok(k) => k,
        Err(e) => {
            report(e);
            return ExitCode::from(2);
        }
    };
    let opts = Options {
        raw: args.raw,
        pubkey,
    };
    let mut inputs = Vec::new();
    for path in &args.files {
        match read_input(path) {
            Ok(data) => inputs.push((path.display().to_string(), data)),
            Err(e) => errors.push(e),
        }
    }
    let outcome = decode_files(inputs, &Limits::default());
    errors.extend(outcome.errors);
    // One locked, buffered stdout; a reader that went away (`inspect ... | head`) ends the
    // output quietly instead of panicking.
    let written = (|| -> std::io::Result<()> {
        let mut out = BufWriter::new(std::io::stdout().lock());
        for (i, d) in outcome.messages.iter().enumerate() {
            if args.json {
                writeln!(out, "{}", message_json(&d.message, &opts))?;
            } else {
                if i > 0 {
                    writeln!(out)?;
                }
                write!(
                    out,
                    "{}",
                    text::message_text(&d.message, &d.source, d.size, &opts)
                )?;
            }
        }
        out.flush()
    })();
    if let Err(e) = written {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            report(format!("cannot write to stdout: {e}"));
            return ExitCode::from(2);
        }
    }
    for e in &errors {
        report(e);
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

/// `error: <what failed>` on stderr (never panics, even when stderr is closed).
fn report(message: impl std::fmt::Display) {
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("error: {message}\n").as_bytes());
}
