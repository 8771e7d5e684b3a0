//! `resolve`: check, normalize and (later) resolve identifiers.
//!
//! ```sh
//! cargo run --example resolve -- --check 10.1045/april2006-paskin urn-3:HBS.Baker.TC:1923
//! cargo run --example resolve -- --check --json hdl://100.102/F58FB49EB1F848f0A606E84CEF294BE5
//! ```
//!
//! `--check` works offline: exit status 0 when every identifier is valid, 2 when any is not
//! (with `error: ...` on stderr naming the identifier, the byte position and the reason).

use std::process::ExitCode;

use clap::Parser;
use handle_resolver::ident::{Description, IdentError, Identifier, ParseOptions};

/// Check, normalize and resolve handles, CORDRA ids, hdl:/doi: URIs, resolver URLs and URNs.
#[derive(Debug, Parser)]
#[command(name = "resolve", version)]
struct Args {
    /// Only validate and normalize, without any network access.
    #[arg(long)]
    check: bool,
    /// Print one JSON object per identifier.
    #[arg(long)]
    json: bool,
    /// Require every identifier to be a CORDRA id.
    #[arg(long)]
    cordra: bool,
    /// Read URIs leniently: everything after the prefix's '/' is the local name.
    #[arg(long)]
    lenient: bool,
    /// Identifiers: PREFIX/SUFFIX, hdl:..., hdl://..., doi:..., http(s)://..., urn:..., urn-3:...
    #[arg(required = true, value_name = "ID")]
    ids: Vec<String>,
}

impl Args {
    fn parse_options(&self) -> ParseOptions {
        ParseOptions::default()
            .lenient(self.lenient)
            .cordra_only(self.cordra)
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.check {
        return run_check(&args);
    }
    eprintln!("network resolution not built yet; use --check");
    ExitCode::from(3)
}

/// Checks one identifier: the library does all the validation and normalization.
fn check_one(input: &str, options: ParseOptions) -> Result<Description, IdentError> {
    Identifier::parse_with(input, options).map(|id| id.describe(input))
}

/// `--check`: prints each identifier's description; exit 2 if any is invalid.
fn run_check(args: &Args) -> ExitCode {
    let options = args.parse_options();
    let mut failed = false;
    for input in &args.ids {
        match check_one(input, options) {
            Ok(description) => print_description(&description, args.json),
            Err(err) => {
                failed = true;
                eprintln!("{}", error_line(input, &err));
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// `error: "<identifier>": <reason> (at byte N)`.
fn error_line(input: &str, err: &IdentError) -> String {
    format!("error: {input:?}: {err}")
}

fn print_description(d: &Description, json: bool) {
    if json {
        match serde_json::to_string(d) {
            Ok(line) => println!("{line}"),
            Err(e) => eprintln!("error: cannot encode JSON: {e}"),
        }
        return;
    }
    println!("{}", d.input);
    println!("  kind: {}", d.kind);
    let fields = [
        ("handle", &d.handle),
        ("prefix", &d.prefix),
        ("suffix", &d.suffix),
        ("query", &d.query),
        ("fragment", &d.fragment),
        ("hdl_uri", &d.hdl_uri),
        ("urn", &d.urn),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            println!("  {name}: {value}");
        }
    }
    if let Some(namespace) = d.namespace {
        println!("  namespace: {namespace}");
    }
    for url in &d.resolver_urls {
        println!("  resolver_url: {url}");
    }
    for note in &d.notes {
        println!("  note: {note}");
    }
}
