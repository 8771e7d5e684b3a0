//! `resolve`: check, normalize and resolve identifiers, like `dig` for handles.
//!
//! ```sh
//! cargo run --example resolve -- 10.1045/april2006-paskin
//! cargo run --example resolve -- --root 127.0.0.1:2641 --trace 20.500.1/1
//! cargo run --example resolve -- --json --type URL hdl:20.500.1/1
//! cargo run --example resolve -- --check 10.1045/april2006-paskin urn-3:HBS.Baker.TC:1923
//! cargo run --example resolve -- --check-root fixtures/reference/root-files/bootstrap_handles --at file
//! ```
//!
//! `--check` works offline. Exit status: 0 all resolved (or valid), 1 some not found / no
//! values, 2 bad input, 3 network, timeout or protocol failure; with several identifiers the
//! highest wins. Messages on stderr say what failed and where.

mod check;
mod check_root;
mod out;
mod render;
mod urn;

use std::io::BufRead;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use futures::StreamExt;
use handle_resolver::ident::{Identifier, ParseOptions};
use handle_resolver::resolver::{SiteAnswer, TransportPreference};
use handle_resolver::wire::{HandleValue, ResponseCode};
use handle_resolver::{
    Attempt, BuildError, HandleRecord, Query, ResolveError, Resolver, ResolverBuilder,
};
use serde_json::json;

use out::Out;
use render::{Context, SiteRow, BAD_INPUT, NETWORK, NOT_FOUND, OK};

const AFTER_HELP: &str = "\
Examples:
  resolve --root 127.0.0.1:2641 20.500.1/1             resolve through a local root
  resolve --server 127.0.0.1:2641 --json 20.500.1/1    ask one server; REST API JSON
  resolve --root 127.0.0.1:2641 --short - < ids.txt    bulk: one identifier per line
  resolve --check --cordra 20.500.123/0123456789abcdef0123456789abcdef

Without --root or --server, requests go to the global Handle System root servers.
--type and --index select values matching any of the types OR any of the indexes (the
protocol's rule). Results of several identifiers print as they complete.

Exit status: 0 all resolved (or valid), 1 some not found or without values, 2 bad input
(invalid identifier or option), 3 network, timeout or protocol failure. With several
identifiers the highest status wins. Errors go to stderr as `error: <id>: <reason>`.";

/// Check, normalize and resolve handles, CORDRA ids, hdl:/doi: URIs, resolver URLs and URNs.
#[derive(Debug, Parser)]
#[command(name = "resolve", version, after_help = AFTER_HELP)]
struct Args {
    /// Identifiers (PREFIX/SUFFIX, hdl:..., doi:..., http(s)://..., urn:...); `-` reads one
    /// per line from stdin.
    #[arg(required_unless_present = "check_root", value_name = "ID")]
    ids: Vec<String>,

    #[command(flatten)]
    root_file: check_root::CheckRootArgs,

    /// Only validate and normalize, without any network access.
    #[arg(long, help_heading = "Input")]
    check: bool,
    /// The CORDRA profile: require every identifier to be a CORDRA id, read resolver URLs
    /// strictly by its URI profile, and send the suffix in upper case.
    #[arg(long, help_heading = "Input")]
    cordra: bool,
    /// Read URIs leniently: everything after the prefix's '/' is the local name.
    #[arg(long, help_heading = "Input")]
    lenient: bool,

    /// Only values of this type (repeatable; `URL`, `EMAIL`, `HS_SITE`, ...).
    #[arg(long = "type", value_name = "TYPE", help_heading = "Query")]
    types: Vec<String>,
    /// Only the value with this index (repeatable).
    #[arg(long = "index", value_name = "N", help_heading = "Query")]
    indexes: Vec<u32>,
    /// Ask for signed answers and verify each with the key in the HS_SITE of the server
    /// asked (an unverifiable answer is an error; needs a service lookup, so not --server).
    #[arg(long, conflicts_with = "server", help_heading = "Query")]
    certify: bool,
    /// Ask primary sites only, bypassing caches.
    #[arg(long, help_heading = "Query")]
    authoritative: bool,
    /// Follow HS_ALIAS values to the handle they name (at most 10 hops).
    #[arg(long, help_heading = "Query")]
    follow_aliases: bool,

    /// Print one JSON document per identifier (the handle.net REST API shape).
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// Print value data as the hex of its bytes (adds "raw" to each JSON value).
    #[arg(long, help_heading = "Output")]
    raw: bool,
    /// Print only the URL values, one per line.
    #[arg(long, conflicts_with_all = ["json", "raw"], help_heading = "Output")]
    short: bool,
    /// Show every request sent: handle, server, transport, round-trip time, response code.
    #[arg(long, help_heading = "Output")]
    trace: bool,

    /// Ask this server only, without service lookup; `http://HOST:PORT` (or `https://`)
    /// asks its HTTP interface (the native protocol over HTTP).
    #[arg(long, value_name = "HOST:PORT|URL", help_heading = "Network")]
    server: Option<String>,
    /// Root to start from: HOST:PORT, http://HOST:PORT (its HTTP interface), or a
    /// reference-client `root_info` or `bootstrap_handles` file [default: the global root
    /// servers].
    #[arg(
        long,
        value_name = "HOST:PORT|URL|FILE",
        conflicts_with = "server",
        help_heading = "Network"
    )]
    root: Option<String>,
    /// Resolve through the REST API of this handle proxy (e.g. https://hdl.handle.net:
    /// `GET URL/api/handles/ID`) instead of the native protocol.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "root", "certify", "all_sites"], help_heading = "Network")]
    proxy: Option<String>,
    /// Transports: `udp` tries UDP, then TCP, then HTTP(S) on each server, moving on when one
    /// gets no answer or a refused connection; `tcp` only TCP; `http` only the native
    /// protocol over HTTP(S).
    #[arg(long, value_enum, default_value_t = Transport::Udp, help_heading = "Network")]
    transport: Transport,
    /// Overall deadline per identifier, in seconds.
    #[arg(long, default_value = "10", value_name = "SECONDS", value_parser = seconds, help_heading = "Network")]
    timeout: Duration,
    /// Resolutions in flight at once (bulk input).
    #[arg(long, default_value_t = 16, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=100_000), help_heading = "Network")]
    concurrency: u32,
    /// Resolve every URN (urn:fdc, urn-3) at this RFC 2169 resolver (http://HOST:PORT)
    /// instead of its namespace's (the ProviderId; the HUL resolver for urn-3).
    #[arg(long, value_name = "URL", help_heading = "Network")]
    urn_resolver: Option<String>,
    /// Ask every server of every site of the service and show where they differ.
    #[arg(long, conflicts_with_all = ["short", "trace", "follow_aliases"], help_heading = "Network")]
    all_sites: bool,
}

/// `--timeout`: a positive, finite number of seconds.
fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err("expected a number of seconds above 0 (e.g. 2 or 0.5)".into()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    /// UDP, then TCP, then the native protocol over HTTP(S), each when the server offers it.
    Udp,
    /// TCP only.
    Tcp,
    /// The native protocol over HTTP, then HTTPS, only.
    Http,
}

impl Args {
    fn parse_options(&self) -> ParseOptions {
        ParseOptions::default()
            .lenient(self.lenient)
            .cordra_only(self.cordra)
    }

    fn query(&self) -> Query {
        Query::new()
            .types(self.types.iter().cloned())
            .indexes(self.indexes.iter().copied())
    }

    fn context(&self) -> Context {
        let first_hop = match (&self.server, &self.root) {
            _ if self.proxy.is_some() => format!("proxy {}", self.proxy.as_deref().unwrap_or("")),
            (Some(s), _) => format!("server {s}"),
            (None, Some(r)) => format!("root {r}"),
            (None, None) => "the global root servers".to_string(),
        };
        Context {
            first_hop,
            filtered: !(self.types.is_empty() && self.indexes.is_empty()),
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args = Args::parse();
    if let Some(status) = check_root::run_if_asked(&args.root_file, args.json) {
        return ExitCode::from(status);
    }
    let bad_lines = match expand_stdin(&args.ids) {
        Ok((ids, bad)) => {
            args.ids = ids;
            bad
        }
        Err(e) => {
            out::error(format!("cannot read identifiers from stdin: {e}"));
            return ExitCode::from(BAD_INPUT);
        }
    };
    let mut o = Out::new();
    let result = if args.check {
        check::run(&args.ids, args.parse_options(), args.json, &mut o)
    } else {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime.block_on(async {
                // URNs resolve over HTTP (RFC 2169), the rest as handles.
                let urns = urn::take_urns(&mut args);
                let status = urn::run(&args, &urns, &mut o).await?;
                match args.ids.is_empty() {
                    true => Ok(status),
                    false => Ok(status.max(run(&args, &mut o).await?)),
                }
            }),
            Err(e) => {
                out::error(format!("cannot start the async runtime: {e}"));
                Ok(NETWORK)
            }
        }
    };
    // A reader that went away (`resolve ... | head`) is not an error of ours: exit quietly.
    let status = match result.and_then(|s| o.finish().map(|()| s)) {
        Ok(s) if bad_lines > 0 => s.max(BAD_INPUT),
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => OK,
        Err(e) => {
            out::error(format!("cannot write to stdout: {e}"));
            NETWORK
        }
    };
    ExitCode::from(status)
}

/// Replaces each `-` by the non-empty lines of stdin (surrounding blanks trimmed). A line that
/// is not UTF-8 is reported with its number and skipped; the second value counts them.
fn expand_stdin(ids: &[String]) -> std::io::Result<(Vec<String>, usize)> {
    let mut out = Vec::new();
    let mut bad = 0;
    for id in ids {
        if id != "-" {
            out.push(id.clone());
            continue;
        }
        for (n, line) in std::io::stdin().lock().split(b'\n').enumerate() {
            match String::from_utf8(line?) {
                Ok(line) if line.trim().is_empty() => {}
                Ok(line) => out.push(line.trim().to_string()),
                Err(e) => {
                    bad += 1;
                    out::error(format!(
                        "stdin line {}: not UTF-8 (invalid byte at {})",
                        n + 1,
                        e.utf8_error().valid_up_to()
                    ));
                }
            }
        }
    }
    Ok((out, bad))
}

fn socket_addr(text: &str) -> Option<SocketAddr> {
    text.to_socket_addrs().ok()?.next()
}

/// `--server` or `--root` `http://HOST[:PORT][/]` or `https://...`: the address, the host name to send
/// as `Host` (when it is a name, not an address), and whether it is HTTPS. `None` when the
/// text has no such scheme.
fn http_server(text: &str) -> Result<Option<(SocketAddr, Option<String>, bool)>, String> {
    let (rest, tls) = if let Some(r) = text.strip_prefix("http://") {
        (r, false)
    } else if let Some(r) = text.strip_prefix("https://") {
        (r, true)
    } else {
        return Ok(None);
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty() || authority.contains('/') {
        return Err(format!(
            "{text:?}: give the HTTP interface as http://HOST:PORT (no path)"
        ));
    }
    let default_port = if tls { 443 } else { 80 };
    let (host, with_port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && p.parse::<u16>().is_ok() && !p.is_empty() => (
            h.trim_start_matches('[').trim_end_matches(']'),
            authority.to_string(),
        ),
        _ => (
            authority.trim_start_matches('[').trim_end_matches(']'),
            format!("{authority}:{default_port}"),
        ),
    };
    let addr = socket_addr(&with_port)
        .ok_or_else(|| format!("{text:?}: cannot find the address of {host:?}"))?;
    let name = host
        .parse::<std::net::IpAddr>()
        .is_err()
        .then(|| host.to_string());
    Ok(Some((addr, name, tls)))
}

fn builder(args: &Args) -> Result<ResolverBuilder, String> {
    let mut b = Resolver::builder()
        .transport(match args.transport {
            Transport::Udp => TransportPreference::Udp,
            Transport::Tcp => TransportPreference::Tcp,
            Transport::Http => TransportPreference::Http,
        })
        .certify(args.certify)
        .authoritative(args.authoritative)
        .follow_aliases(args.follow_aliases)
        .strict_cordra(args.cordra)
        .timeout(args.timeout);
    if let Some(server) = &args.server {
        b = match http_server(server)? {
            Some((addr, host, tls)) => b.server_http(addr, host.as_deref(), tls),
            None => {
                let addr = socket_addr(server).ok_or_else(|| {
                    format!("--server {server:?}: not a HOST:PORT address (e.g. 127.0.0.1:2641)")
                })?;
                b.server(addr)
            }
        };
    }
    if let Some(proxy) = &args.proxy {
        b = b.proxy(proxy.as_str());
    }
    if let Some(root) = &args.root {
        let path = Path::new(root);
        if path.is_file() {
            let first = std::fs::read(path)
                .map_err(|e| format!("--root {root}: cannot read the file: {e}"))?
                .iter()
                .copied()
                .find(|c| !c.is_ascii_whitespace());
            b = match first {
                Some(b'{') | Some(b'[') => b.bootstrap_handles_file(path),
                _ => b.root_info_file(path),
            };
        } else if let Some((addr, host, tls)) = http_server(root)? {
            b = b.root_server_http(addr, host.as_deref(), tls);
        } else {
            let addr = socket_addr(root).ok_or_else(|| {
                format!(
                    "--root {root:?}: neither a HOST:PORT address (e.g. 127.0.0.1:2641) nor a readable file"
                )
            })?;
            b = b.root_server(addr);
        }
    }
    Ok(b)
}

async fn run(args: &Args, o: &mut Out) -> std::io::Result<u8> {
    let built = builder(args).and_then(|b| {
        b.build().map_err(|e| match (&e, &args.root) {
            (BuildError::Bootstrap(b), Some(root)) => {
                format!("--root {root}: not a usable root_info or bootstrap_handles file: {b}")
            }
            _ => e.to_string(),
        })
    });
    let resolver = match built {
        Ok(r) => r,
        Err(e) => {
            out::error(e);
            return Ok(BAD_INPUT);
        }
    };
    let ctx = args.context();
    let root_is_address = args
        .root
        .as_deref()
        .is_some_and(|r| !Path::new(r).is_file());
    if args.certify && root_is_address && args.server.is_none() {
        // A bare HOST:PORT root comes without keys: take them from its own 0.NA/0.NA.
        match resolver.refresh_root(false).await {
            Ok(_) => out::note(
                "root keys taken from the root's own 0.NA/0.NA answer (trusted on first use)",
            ),
            Err(e) => {
                out::error(format!(
                    "0.NA/0.NA: cannot read the {}'s site information: {}",
                    ctx.first_hop,
                    render::reason(&e, &[], &ctx)
                ));
                return Ok(render::exit_status(&e));
            }
        }
    }
    let query = args.query();
    if args.all_sites {
        let mut status = OK;
        for id in &args.ids {
            status = status.max(all_sites(&resolver, id, &query, args, &ctx, o).await?);
            o.done()?;
        }
        return Ok(status);
    }
    let options = args.parse_options();
    let mut results = futures::stream::iter(args.ids.iter())
        .map(|input| {
            let (resolver, query) = (&resolver, &query);
            async move {
                match Identifier::parse_with(input.trim(), options) {
                    Ok(id) => {
                        // What is sent: as written, or a CORDRA id's CORDRA form (--cordra).
                        let sent = if args.cordra {
                            id.normalized_handle()
                        } else {
                            id.to_handle().ok()
                        };
                        let asked = sent.map(|h| h.normalized().to_string());
                        (input, asked, resolver.resolve_traced(&id, query).await)
                    }
                    Err(e) => (
                        input,
                        None,
                        (Err(ResolveError::InvalidIdentifier(e)), Vec::new()),
                    ),
                }
            }
        })
        .buffer_unordered(args.concurrency as usize);
    let mut status = OK;
    while let Some((input, asked, (result, attempts))) = results.next().await {
        let asked = asked.as_deref().unwrap_or(input);
        status = status.max(report(input, asked, &result, &attempts, args, &ctx, o)?);
        o.done()?;
    }
    Ok(status)
}

/// Prints one outcome; returns its exit status.
#[allow(clippy::too_many_arguments)]
fn report(
    input: &str,
    asked: &str,
    result: &Result<HandleRecord, ResolveError>,
    attempts: &[Attempt],
    args: &Args,
    ctx: &Context,
    o: &mut Out,
) -> std::io::Result<u8> {
    if args.json {
        o.line(render::json_document(
            asked, result, attempts, ctx, args.trace, args.raw,
        ))?;
    } else {
        if args.trace {
            o.line(format!(";; {input}"))?;
            for line in render::attempts_text(attempts) {
                o.line(line)?;
            }
        }
        match result {
            Ok(rec) if args.short => {
                let urls = rec.urls();
                if urls.is_empty() {
                    o.done()?;
                    out::note(format!("{input}: no URL values"));
                }
                for url in urls {
                    o.line(url)?;
                }
            }
            Ok(rec) => {
                for line in render::record_text(rec, args.raw) {
                    o.line(line)?;
                }
            }
            Err(_) => {}
        }
    }
    // On a terminal, this identifier's lines show before its notes and errors on stderr.
    o.done()?;
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
    Ok(match result {
        Ok(_) => OK,
        Err(e) => {
            out::error(render::error_line(input, e, attempts, ctx));
            render::exit_status(e)
        }
    })
}

/// The comparable part of one server's answer: its values, or its response code.
fn answer_key(r: &Result<Vec<HandleValue>, ResolveError>) -> Option<Result<&[HandleValue], u32>> {
    match r {
        Ok(v) => Some(Ok(v.as_slice())),
        Err(e) => e.response_code().map(|c| Err(c.code())),
    }
}

/// `--all-sites`: every server of every site, and whether the responsible ones agree.
async fn all_sites(
    resolver: &Resolver,
    input: &str,
    query: &Query,
    args: &Args,
    ctx: &Context,
    o: &mut Out,
) -> std::io::Result<u8> {
    let answers: Vec<SiteAnswer> = match resolver.resolve_all_sites(input, query).await {
        Ok(a) => a,
        Err(e) => {
            out::error(render::error_line(input, &e, &[], ctx));
            return Ok(render::exit_status(&e));
        }
    };
    let reference = answers
        .iter()
        .find(|a| a.responsible)
        .and_then(|a| answer_key(&a.result));
    let mut drift = false;
    let mut status = OK;
    let mut docs = Vec::new();
    let mut rows = Vec::new();
    for a in &answers {
        let key = answer_key(&a.result);
        let agrees = key.is_some() && key == reference;
        if a.responsible {
            drift |= !agrees;
            if let Err(e) = &a.result {
                status = status.max(render::exit_status(e));
            }
        }
        let code = match &a.result {
            Ok(_) => 1,
            Err(e) => e.response_code().map_or(2, |c| c.code()),
        };
        if args.json {
            let mut doc = json!({
                "site": a.site,
                "server": a.server.to_string(),
                "responsible": a.responsible,
                "responseCode": code,
                "values": a.result.as_ref().map(|v| v.iter().map(|v| render::value_json(v, args.raw)).collect::<Vec<_>>()).unwrap_or_default(),
                "agrees": agrees,
            });
            if let Err(e) = &a.result {
                doc["message"] = json!(render::reason(e, &[], ctx));
            }
            docs.push(doc);
        } else {
            let what = match &a.result {
                Ok(v) => format!("{} value{}", v.len(), if v.len() == 1 { "" } else { "s" }),
                Err(e) => render::reason(e, &[], ctx),
            };
            let mark = if a.responsible && !agrees {
                "  <- DIFFERS"
            } else {
                ""
            };
            rows.push(SiteRow {
                responsible: a.responsible,
                site: a.site.clone(),
                server: a.server,
                answer: format!("{what}{mark}"),
            });
        }
    }
    if args.json {
        o.line(json!({"handle": input, "drift": drift, "servers": docs}))?;
    } else {
        o.line(format!(
            ";; {input}: {} server{} asked (* = the one its site's hash picks)",
            answers.len(),
            if answers.len() == 1 { "" } else { "s" }
        ))?;
        for line in render::sites_table(&rows) {
            o.line(line)?;
        }
    }
    if drift {
        out::error(format!(
            "{input}: the responsible servers of its service answer differently"
        ));
        status = status.max(NOT_FOUND);
    } else if let Some(Err(code)) = reference {
        out::error(format!(
            "{input}: every responsible server answers {}",
            ResponseCode::from_code(code)
        ));
    }
    Ok(status)
}
