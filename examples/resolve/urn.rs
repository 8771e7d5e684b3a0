//! `resolve urn:fdc:… urn-3:…`: URNs resolve over HTTP (RFC 2169), not through the Handle
//! System: `N2Ls` at the URN's resolver (the ProviderId of `urn:fdc`, the HUL resolver for
//! `urn-3`, or `--urn-resolver URL` for both), `N2L` as the fallback. They come in the same
//! stream as handles (command line and stdin; `bulk.rs` sends each URN here) and print in each
//! output format (`report.rs`).
//!
//! ```sh
//! resolve --urn-resolver http://127.0.0.1:8000 urn:fdc:example.org:2024:report-7
//! resolve --urn-resolver http://127.0.0.1:8000 --json urn-3:HBS.Baker.TC:1923
//! ```
//!
//! Text: one URL a line, in the resolver's order of preference. `--json`: one document per
//! URN, `{"urn": …, "responseCode": 1 | 100 | 2, "urls": [...], "resolver": "<URL asked>"}`
//! plus `input` (100 when the resolver does not know the URN; 2 for any other failure, with
//! `message`). Exit status from the table in `render.rs`: 0 resolved, 1 not found, 2 bad
//! input, 3 network or protocol.

use handle_resolver::Identifier;
use handle_resolver::{BuildError, Resolver, UrnAnswer, UrnError};
use serde_json::{json, Value as Json};

use crate::render::Outcome;
use crate::Args;

/// The resolver of the run's URNs (the `--urn-resolver`, the deadline); nothing is sent
/// until a URN comes.
pub fn resolver(args: &Args) -> Result<Resolver, BuildError> {
    let mut builder = Resolver::builder().timeout(args.timeout);
    if let Some(url) = &args.urn_resolver {
        builder = builder.urn_resolver(url.as_str());
    }
    builder.build()
}

/// True for a URN the URN path takes (`urn:fdc:…`, `urn:urn-3:…`, `urn-3:…`); with
/// `--cordra` none (the handle path refuses them as not CORDRA ids).
pub fn is_urn(id: &Identifier, cordra: bool) -> bool {
    !cordra && matches!(id, Identifier::Urn(_))
}

/// Its row of the exit status table.
pub fn outcome(result: &Result<UrnAnswer, UrnError>) -> Outcome {
    match result {
        Ok(_) => Outcome::Resolved,
        Err(e) if e.is_not_found() => Outcome::NotFound,
        Err(e) if e.is_input_error() => Outcome::Invalid,
        Err(_) => Outcome::Failed,
    }
}

/// The URN as sent (canonical), or the input when it does not parse.
pub fn canonical(input: &str) -> String {
    Identifier::parse(input.trim())
        .ok()
        .and_then(|id| id.as_urn().map(|u| u.canonical()))
        .unwrap_or_else(|| input.to_string())
}

/// The JSON document of one URN.
pub fn json_document(input: &str, result: &Result<UrnAnswer, UrnError>) -> Json {
    let mut doc = match result {
        Ok(answer) => json!(answer),
        Err(e) => e.to_json(&canonical(input)),
    };
    doc["input"] = json!(input);
    doc
}
