//! `resolve urn:fdc:… urn-3:…`: URNs resolve over HTTP (RFC 2169), not through the Handle
//! System: `N2Ls` at the URN's resolver (the ProviderId of `urn:fdc`, the HUL resolver for
//! `urn-3`, or `--urn-resolver URL` for both), `N2L` as the fallback.
//!
//! ```sh
//! resolve --urn-resolver http://127.0.0.1:8000 urn:fdc:example.org:2024:report-7
//! resolve --urn-resolver http://127.0.0.1:8000 --json urn-3:HBS.Baker.TC:1923
//! ```
//!
//! Text: one URL a line, in the resolver's order of preference. `--json`: one document per
//! URN, `{"urn": …, "responseCode": 1 | 100 | 2, "urls": [...], "resolver": "<URL asked>"}`
//! (100 when the resolver does not know the URN; 2 for any other failure, with `message`).
//! Exit status as for handles: 0 resolved, 1 not found, 2 bad input, 3 network or protocol.

use futures::StreamExt;
use handle_resolver::ident::Identifier;
use handle_resolver::{Resolver, UrnAnswer, UrnError};
use serde_json::json;

use crate::out::{self, Out};
use crate::render::{BAD_INPUT, NETWORK, NOT_FOUND, OK};
use crate::Args;

/// Takes the URNs (`urn:fdc:…`, `urn:urn-3:…`, `urn-3:…`) out of the identifiers, in order;
/// the rest stay (handles, and text that is no valid identifier, reported on the handle path;
/// with `--cordra` URNs too, which that path refuses as not CORDRA ids).
pub fn take_urns(args: &mut Args) -> Vec<String> {
    if args.cordra {
        return Vec::new();
    }
    let (urns, rest) = std::mem::take(&mut args.ids)
        .into_iter()
        .partition(|id| matches!(Identifier::parse(id.trim()), Ok(Identifier::Urn(_))));
    args.ids = rest;
    urns
}

/// Resolves `urns` in order and prints each outcome; returns the exit status (0 when there
/// are none).
pub async fn run(args: &Args, urns: &[String], o: &mut Out) -> std::io::Result<u8> {
    if urns.is_empty() {
        return Ok(OK);
    }
    let mut builder = Resolver::builder().timeout(args.timeout);
    if let Some(url) = &args.urn_resolver {
        builder = builder.urn_resolver(url.as_str());
    }
    let resolver = match builder.build() {
        Ok(r) => r,
        Err(e) => {
            out::error(e);
            return Ok(BAD_INPUT);
        }
    };
    let mut results = futures::stream::iter(urns)
        .map(|input| {
            let resolver = &resolver;
            async move { (input, resolver.resolve_urn(input.as_str()).await) }
        })
        .buffered(args.concurrency as usize);
    let mut status = OK;
    while let Some((input, result)) = results.next().await {
        status = status.max(report(input, &result, args.json, o)?);
        o.done()?;
    }
    Ok(status)
}

/// Prints one outcome; returns its exit status.
fn report(
    input: &str,
    result: &Result<UrnAnswer, UrnError>,
    json: bool,
    o: &mut Out,
) -> std::io::Result<u8> {
    match result {
        Ok(answer) if json => o.line(json!(answer))?,
        Ok(answer) => {
            for url in &answer.urls {
                o.line(url)?;
            }
        }
        Err(e) if json => {
            let urn = Identifier::parse(input.trim())
                .ok()
                .and_then(|id| id.as_urn().map(|u| u.canonical()))
                .unwrap_or_else(|| input.to_string());
            o.line(json!({
                "urn": urn,
                "responseCode": e.response_code(),
                "urls": [],
                "resolver": e.url(),
                "message": e.to_string(),
            }))?;
        }
        Err(_) => {}
    }
    Ok(match result {
        Ok(_) => OK,
        Err(e) => {
            o.done()?;
            out::error(format!("{input}: {e}"));
            if e.is_not_found() {
                NOT_FOUND
            } else if e.is_input_error() {
                BAD_INPUT
            } else {
                NETWORK
            }
        }
    })
}
