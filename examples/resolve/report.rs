//! One finished identifier in each output format: text (`;; INPUT` headers and in-line
//! failures in bulk runs), JSON (with `input`), TSV, `--short`; its notes and errors on
//! stderr; its row of the exit status table.

use handle_resolver::{Attempt, HandleRecord, ResolveError, UrnAnswer, UrnError};
use serde_json::json;

use crate::out::{self, Out};
use crate::render::{self, Context, Outcome};
use crate::{tsv, urn, Args, Format};

/// One identifier resolved (or failed): the normalized handle asked for (the input itself
/// when it does not parse), the outcome and every request sent.
pub struct Resolution {
    /// The handle asked for.
    pub asked: String,
    /// Values, or why none.
    pub result: Result<HandleRecord, ResolveError>,
    /// Every request sent.
    pub attempts: Vec<Attempt>,
}

/// How one identifier ended.
pub enum Finished {
    /// It was resolved, or failed.
    Resolved(Box<Resolution>),
    /// A URN, resolved over HTTP (RFC 2169), or why not.
    Urn(Box<Result<UrnAnswer, UrnError>>),
    /// A stdin line that is not an identifier's text (not UTF-8, too long).
    Unreadable {
        /// Why, with its line number.
        why: String,
    },
}

impl Finished {
    /// Its row of the exit status table.
    pub fn outcome(&self) -> Outcome {
        match self {
            Finished::Resolved(r) => match &r.result {
                Ok(_) => Outcome::Resolved,
                Err(e) => Outcome::of(e),
            },
            Finished::Urn(result) => urn::outcome(result),
            Finished::Unreadable { .. } => Outcome::Invalid,
        }
    }
}

/// Writes what one identifier gives in `args`' format to `o`, then its notes and its error
/// line to stderr (`bulk`: several identifiers, so each result carries its input).
pub fn write(
    input: &str,
    finished: &Finished,
    args: &Args,
    ctx: &Context,
    bulk: bool,
    o: &mut Out,
) -> std::io::Result<()> {
    let (asked, result, attempts) = match finished {
        Finished::Resolved(r) => (r.asked.as_str(), &r.result, r.attempts.as_slice()),
        Finished::Unreadable { why } => {
            unreadable(input, why, args, bulk, o)?;
            o.done()?;
            if !args.quiet {
                out::error(why);
            }
            return Ok(());
        }
        Finished::Urn(result) => return write_urn(input, result, args, bulk, o),
    };
    match args.format() {
        _ if args.short => short(input, result, attempts, args, bulk, o)?,
        Format::Json => {
            let mut doc = render::json_document(asked, result, attempts, ctx, args.trace, args.raw);
            doc["input"] = json!(input);
            o.line(doc)?;
        }
        Format::Tsv => match result {
            Ok(rec) => {
                for v in &rec.values {
                    let value = if args.raw {
                        hex::encode(&v.data)
                    } else {
                        v.typed()
                            .as_text()
                            .map_or_else(|| render::display_data(v), str::to_string)
                    };
                    o.line(tsv::line(input, &rec.handle, 1, &v.type_str(), &value))?;
                }
            }
            Err(e) => o.line(tsv::line(
                input,
                asked,
                render::response_code(e),
                "",
                &render::reason(e, attempts, ctx),
            ))?,
        },
        Format::Text => {
            if args.trace || bulk {
                o.line(format!(";; {input}"))?;
            }
            if args.trace {
                for line in render::attempts_text(attempts) {
                    o.line(line)?;
                }
            }
            match result {
                Ok(rec) => {
                    for line in render::record_text(rec, args.raw) {
                        o.line(line)?;
                    }
                }
                Err(e) if bulk => {
                    o.line(format!(";; error: {}", render::reason(e, attempts, ctx)))?
                }
                Err(_) => {}
            }
        }
    }
    // On a terminal, this identifier's lines show before its notes and errors on stderr.
    o.done()?;
    if args.quiet {
        return Ok(());
    }
    if let Ok(rec) = result {
        if !args.follow_aliases {
            for alias in rec.values.iter().filter(|v| v.type_str() == "HS_ALIAS") {
                out::note(format!(
                    "{input}: an alias of {} (--follow-aliases follows it)",
                    String::from_utf8_lossy(&alias.data)
                ));
            }
        }
    }
    if let Err(e) = result {
        out::error(render::error_line(input, e, attempts, ctx));
    }
    Ok(())
}

/// `--short`: the URL values; with several identifiers `INPUT<TAB>URL`, and `INPUT<TAB>`
/// alone for one without any (or that failed).
fn short(
    input: &str,
    result: &Result<HandleRecord, ResolveError>,
    attempts: &[Attempt],
    args: &Args,
    bulk: bool,
    o: &mut Out,
) -> std::io::Result<()> {
    let urls = result.as_ref().map(HandleRecord::urls).unwrap_or_default();
    if bulk {
        if urls.is_empty() {
            o.line(format!("{}\t", tsv::field(input)))?;
        }
        for url in urls {
            o.line(format!("{}\t{}", tsv::field(input), tsv::field(&url)))?;
        }
        return Ok(());
    }
    if args.trace {
        o.line(format!(";; {input}"))?;
        for line in render::attempts_text(attempts) {
            o.line(line)?;
        }
    }
    if result.is_ok() && urls.is_empty() && !args.quiet {
        o.done()?;
        out::note(format!("{input}: no URL values"));
    }
    for url in urls {
        o.line(url)?;
    }
    Ok(())
}

/// An unreadable stdin line, in line with the results.
fn unreadable(input: &str, why: &str, args: &Args, bulk: bool, o: &mut Out) -> std::io::Result<()> {
    let code = Outcome::Invalid.row();
    let code = match code.code {
        render::Code::Fixed(c) => c,
        _ => 2,
    };
    match args.format() {
        _ if args.short => o.line(format!("{}\t", tsv::field(input))),
        Format::Json => o.line(json!({
            "input": input,
            "handle": input,
            "responseCode": code,
            "message": why,
        })),
        Format::Tsv => o.line(tsv::line(input, input, code, "", why)),
        Format::Text if bulk => o.line(format!(";; {input}\n;; error: {why}")),
        Format::Text => Ok(()),
    }
}

/// A URN's outcome: its URLs in the resolver's order of preference.
fn write_urn(
    input: &str,
    result: &Result<UrnAnswer, UrnError>,
    args: &Args,
    bulk: bool,
    o: &mut Out,
) -> std::io::Result<()> {
    let urls: &[String] = result.as_ref().map_or(&[], |a| a.urls.as_slice());
    match args.format() {
        _ if args.short && bulk => {
            if urls.is_empty() {
                o.line(format!("{}\t", tsv::field(input)))?;
            }
            for url in urls {
                o.line(format!("{}\t{}", tsv::field(input), tsv::field(url)))?;
            }
        }
        Format::Json if !args.short => o.line(urn::json_document(input, result))?,
        Format::Tsv if !args.short => match result {
            Ok(answer) => {
                for url in urls {
                    o.line(tsv::line(input, &answer.urn, 1, "URL", url))?;
                }
            }
            Err(e) => o.line(tsv::line(
                input,
                &urn::canonical(input),
                e.response_code(),
                "",
                &e.to_string(),
            ))?,
        },
        _ => {
            if bulk {
                o.line(format!(";; {input}"))?;
            }
            for url in urls {
                o.line(url)?;
            }
            if let (Err(e), true) = (result, bulk) {
                o.line(format!(";; error: {e}"))?;
            }
        }
    }
    o.done()?;
    if let (Err(e), false) = (result, args.quiet) {
        out::error(format!("{input}: {e}"));
    }
    Ok(())
}
