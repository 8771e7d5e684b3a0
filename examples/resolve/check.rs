//! `--check`: validate and normalize identifiers offline (no network at all). The handle
//! shown is the one `resolve` sends with the same options (a CORDRA id's suffix as written,
//! its CORDRA form under `--cordra`); `cordra_handle` gives a CORDRA id's CORDRA form.

use handle_resolver::ident::{Description, ParseOptions};
use handle_resolver::Identifier;

use crate::input::Item;
use crate::out::{self, Out};
use crate::render::{BAD_INPUT, OK};

/// Prints each identifier's description as it is read; returns 0 when all are valid, 2
/// otherwise.
pub fn run(
    items: impl IntoIterator<Item = Item>,
    options: ParseOptions,
    json: bool,
    o: &mut Out,
) -> std::io::Result<u8> {
    let mut status = OK;
    for item in items {
        let input = match item {
            Item::Id(input) => input,
            Item::Unreadable { why, .. } => {
                status = BAD_INPUT;
                out::error(why);
                continue;
            }
        };
        let input = &input;
        match Identifier::parse_with(input.trim(), options) {
            Ok(id) => print_description(&id.describe_with(input, options), json, o)?,
            Err(err) => {
                status = BAD_INPUT;
                out::error(format!("{input:?}: {err}"));
            }
        }
        o.done()?;
    }
    Ok(status)
}

fn print_description(d: &Description, json: bool, o: &mut Out) -> std::io::Result<()> {
    if json {
        return match serde_json::to_string(d) {
            Ok(line) => o.line(line),
            Err(e) => {
                out::error(format!("{}: cannot encode JSON: {e}", d.input));
                Ok(())
            }
        };
    }
    o.line(&d.input)?;
    o.line(format!("  kind: {}", d.kind))?;
    let fields = [
        ("handle", &d.handle),
        ("cordra_handle", &d.cordra_handle),
        ("prefix", &d.prefix),
        ("suffix", &d.suffix),
        ("query", &d.query),
        ("fragment", &d.fragment),
        ("hdl_uri", &d.hdl_uri),
        ("urn", &d.urn),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            o.line(format!("  {name}: {value}"))?;
        }
    }
    if let Some(namespace) = d.namespace {
        o.line(format!("  namespace: {namespace}"))?;
    }
    for url in &d.resolver_urls {
        o.line(format!("  resolver_url: {url}"))?;
    }
    for note in &d.notes {
        o.line(format!("  note: {note}"))?;
    }
    Ok(())
}
