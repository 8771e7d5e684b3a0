//! `resolve`: check, normalize and resolve identifiers, like `dig` for handles.
//!
//! ```sh
//! cargo run --example resolve -- 10.1045/april2006-paskin
//! cargo run --example resolve -- --root 127.0.0.1:2641 --trace 20.500.1/1
//! cargo run --example resolve -- --json --type URL hdl:20.500.1/1
//! cargo run --example resolve -- --check 10.1045/april2006-paskin urn-3:HBS.Baker.TC:1923
//! ```
//!
//! `--check` works offline. Exit status: 0 all resolved (or valid), 1 some not found / no
//! values, 2 bad input, 3 network, timeout or protocol failure. Messages on stderr say what
//! failed and where.

use std::io::BufRead;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use futures::StreamExt;
use handle_resolver::ident::{Description, IdentError, Identifier, ParseOptions};
use handle_resolver::resolver::{
    HandleRecord, Hop, Query, ResolveError, Resolver, ResolverBuilder, SiteAnswer,
    TransportPreference,
};
use handle_resolver::transport::TransportKind;
use handle_resolver::wire::{HandleValue, TypedValue};
use serde_json::{json, Value as Json};

/// Check, normalize and resolve handles, CORDRA ids, hdl:/doi: URIs, resolver URLs and URNs.
#[derive(Debug, Parser)]
#[command(name = "resolve", version)]
struct Args {
    /// Only validate and normalize, without any network access.
    #[arg(long)]
    check: bool,
    /// Print one JSON document per identifier (the handle.net REST API shape).
    #[arg(long)]
    json: bool,
    /// Require every identifier to be a CORDRA id.
    #[arg(long)]
    cordra: bool,
    /// Read URIs leniently: everything after the prefix's '/' is the local name.
    #[arg(long)]
    lenient: bool,
    /// Only values of this type (repeatable).
    #[arg(long = "type", value_name = "T")]
    types: Vec<String>,
    /// Only the value with this index (repeatable).
    #[arg(long = "index", value_name = "N")]
    indexes: Vec<u32>,
    /// Print value data as hex bytes, undecoded.
    #[arg(long)]
    raw: bool,
    /// Print the URL values only, one per line.
    #[arg(long)]
    short: bool,
    /// Print every request sent: server, transport, code, RTT.
    #[arg(long)]
    trace: bool,
    /// Ask this server only (HOST:PORT), without service lookup.
    #[arg(long, value_name = "HOST:PORT")]
    server: Option<String>,
    /// Root: HOST:PORT, or a reference-client `root_info` or `bootstrap_handles` file.
    #[arg(long, value_name = "HOST:PORT|FILE")]
    root: Option<String>,
    /// Transport to use first.
    #[arg(long, value_enum, default_value_t = Transport::Udp)]
    transport: Transport,
    /// Ask for signed answers and verify them.
    #[arg(long)]
    certify: bool,
    /// Primary sites only, no cache.
    #[arg(long)]
    authoritative: bool,
    /// Follow HS_ALIAS values.
    #[arg(long)]
    follow_aliases: bool,
    /// Overall deadline per identifier, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Resolutions at once for bulk input.
    #[arg(long, default_value_t = 16, value_name = "N")]
    concurrency: usize,
    /// Ask every site and server of the service and show where they differ.
    #[arg(long)]
    all_sites: bool,
    /// Identifiers (PREFIX/SUFFIX, hdl:..., doi:..., http(s)://..., urn:...); `-` reads one
    /// per line from stdin.
    #[arg(required = true, value_name = "ID")]
    ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    Udp,
    Tcp,
}

/// Exit statuses, most severe last.
const OK: u8 = 0;
const NOT_FOUND: u8 = 1;
const BAD_INPUT: u8 = 2;
const NETWORK: u8 = 3;

impl Args {
    fn parse_options(&self) -> ParseOptions {
        ParseOptions::default()
            .lenient(self.lenient)
            .cordra_only(self.cordra)
    }

    fn query(&self) -> Query {
        Query {
            types: self.types.clone(),
            indexes: self.indexes.clone(),
            certify: self.certify,
            authoritative: self.authoritative,
            public_only: true,
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let mut args = Args::parse();
    match expand_stdin(&args.ids) {
        Ok(ids) => args.ids = ids,
        Err(e) => {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(BAD_INPUT);
        }
    }
    if args.check {
        return run_check(&args);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(NETWORK);
        }
    };
    ExitCode::from(runtime.block_on(run(&args)))
}

/// Replaces each `-` by the non-empty lines of stdin.
fn expand_stdin(ids: &[String]) -> std::io::Result<Vec<String>> {
    let mut out = Vec::new();
    for id in ids {
        if id == "-" {
            for line in std::io::stdin().lock().lines() {
                let line = line?;
                let line = line.trim();
                if !line.is_empty() {
                    out.push(line.to_string());
                }
            }
        } else {
            out.push(id.clone());
        }
    }
    Ok(out)
}

fn socket_addr(text: &str) -> Option<SocketAddr> {
    text.to_socket_addrs().ok()?.next()
}

fn builder(args: &Args) -> Result<ResolverBuilder, String> {
    let mut b = Resolver::builder()
        .transport(match args.transport {
            Transport::Udp => TransportPreference::Udp,
            Transport::Tcp => TransportPreference::Tcp,
        })
        .certify(args.certify)
        .authoritative(args.authoritative)
        .follow_aliases(args.follow_aliases)
        .strict_cordra(args.cordra);
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(format!(
            "--timeout {} is not a positive number of seconds",
            args.timeout
        ));
    }
    b = b.timeout(Duration::from_secs_f64(args.timeout));
    if let Some(server) = &args.server {
        let addr =
            socket_addr(server).ok_or_else(|| format!("--server {server:?}: not HOST:PORT"))?;
        b = b.server(addr);
    }
    if let Some(root) = &args.root {
        let path = Path::new(root);
        if path.is_file() {
            let first = std::fs::read(path)
                .map_err(|e| format!("--root {root}: {e}"))?
                .iter()
                .copied()
                .find(|c| !c.is_ascii_whitespace());
            b = match first {
                Some(b'{') | Some(b'[') => b.bootstrap_handles_file(path),
                _ => b.root_info_file(path),
            };
        } else {
            let addr = socket_addr(root)
                .ok_or_else(|| format!("--root {root:?}: neither HOST:PORT nor a readable file"))?;
            b = b.root_server(addr);
        }
    }
    Ok(b)
}

async fn run(args: &Args) -> u8 {
    let resolver = match builder(args).and_then(|b| b.build().map_err(|e| e.to_string())) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return BAD_INPUT;
        }
    };
    let root_is_address = args
        .root
        .as_deref()
        .is_some_and(|r| !Path::new(r).is_file());
    if args.certify && root_is_address && args.server.is_none() {
        // A bare HOST:PORT root comes without keys: take them from its own 0.NA/0.NA.
        match resolver.refresh_root(false).await {
            Ok(_) => eprintln!(
                "note: root keys taken from the root's own 0.NA/0.NA answer (trusted on first use)"
            ),
            Err(e) => {
                eprintln!("error: cannot read the root's site information: {e}");
                return exit_status(&e);
            }
        }
    }
    let query = args.query();
    if args.all_sites {
        let mut status = OK;
        for id in &args.ids {
            status = status.max(all_sites(&resolver, id, &query, args).await);
        }
        return status;
    }
    let options = args.parse_options();
    let mut results = futures::stream::iter(args.ids.iter())
        .map(|input| {
            let (resolver, query) = (&resolver, &query);
            async move {
                let outcome = match Identifier::parse_with(input.trim(), options) {
                    Ok(id) => resolver.resolve_traced(&id, query).await,
                    Err(e) => (Err(ResolveError::InvalidIdentifier(e)), Vec::new()),
                };
                (input, outcome)
            }
        })
        .buffer_unordered(args.concurrency.max(1));
    let mut status = OK;
    while let Some((input, (result, hops))) = results.next().await {
        status = status.max(report(input, &result, &hops, args));
    }
    status
}

fn exit_status(e: &ResolveError) -> u8 {
    match e {
        _ if e.is_input_error() => BAD_INPUT,
        ResolveError::NotFound { .. }
        | ResolveError::NoMatchingValues { .. }
        | ResolveError::ServiceNotFound { .. }
        | ResolveError::AuthenticationNeeded { .. } => NOT_FOUND,
        _ => NETWORK,
    }
}

fn transport_name(kind: TransportKind) -> &'static str {
    match kind {
        TransportKind::Udp => "udp",
        TransportKind::Tcp => "tcp",
    }
}

/// Prints one outcome; returns its exit status.
fn report(
    input: &str,
    result: &Result<HandleRecord, ResolveError>,
    hops: &[Hop],
    args: &Args,
) -> u8 {
    if args.json {
        println!("{}", json_document(input, result, hops, args.trace));
    } else {
        if args.trace {
            println!(";; {input}");
            for hop in hops {
                println!(";;   {hop}");
            }
        }
        if let Ok(rec) = result {
            print_record(rec, args);
        }
    }
    match result {
        Ok(_) => OK,
        Err(e) => {
            eprintln!("{}", error_message(input, e));
            exit_status(e)
        }
    }
}

/// `error: ...`, naming the identifier unless the error already does.
fn error_message(input: &str, e: &ResolveError) -> String {
    match e {
        ResolveError::NotFound { .. }
        | ResolveError::NoMatchingValues { .. }
        | ResolveError::PrefixNotServed { .. }
        | ResolveError::AuthenticationNeeded { .. }
        | ResolveError::ReferralLoop { .. }
        | ResolveError::TooManyReferrals { .. } => format!("error: {e}"),
        _ => format!("error: {input}: {e}"),
    }
}

fn print_record(rec: &HandleRecord, args: &Args) {
    if args.short {
        for url in rec.urls() {
            println!("{url}");
        }
        return;
    }
    let s = &rec.source;
    let origin = if rec.from_cache { ", cached" } else { "" };
    let cert = if s.certified { ", certified" } else { "" };
    println!(
        "{}  (from {} {}{}{}{})",
        rec.handle,
        s.server,
        transport_name(s.transport),
        s.site_description
            .as_deref()
            .map(|d| format!(", site {d:?}"))
            .unwrap_or_default(),
        cert,
        origin
    );
    if rec.aliases.len() > 1 {
        println!("  alias chain: {}", rec.aliases.join(" -> "));
    }
    for v in &rec.values {
        let data = if args.raw {
            hex::encode(&v.data)
        } else {
            display_data(v)
        };
        println!("  {:>5}  {:<14} {}", v.index, v.type_str(), data);
    }
}

fn display_data(v: &HandleValue) -> String {
    match v.typed() {
        TypedValue::Url(s)
        | TypedValue::Email(s)
        | TypedValue::Desc(s)
        | TypedValue::Serv(s)
        | TypedValue::Alias(s)
        | TypedValue::Text(s) => s,
        other => other.to_json()["value"].to_string(),
    }
}

fn timestamp(ts: u32) -> Json {
    time::OffsetDateTime::from_unix_timestamp(i64::from(ts))
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .map_or(Json::Null, Json::String)
}

fn value_json(v: &HandleValue) -> Json {
    json!({
        "index": v.index,
        "type": v.type_str(),
        "data": v.typed().to_json(),
        "ttl": v.ttl.value(),
        "timestamp": timestamp(v.timestamp),
    })
}

fn hop_json(h: &Hop) -> Json {
    json!({
        "handle": h.handle,
        "server": h.server.to_string(),
        "transport": transport_name(h.transport),
        "attempt": h.attempt,
        "rttMs": (h.rtt.as_secs_f64() * 1e4).round() / 10.0,
        "outcome": match &h.outcome {
            handle_resolver::resolver::HopOutcome::Response(c) => json!(c.code()),
            other => json!(format!("{other:?}")),
        },
    })
}

/// `{"responseCode": 1, "handle": "...", "values": [...]}` (handle.net REST API), or
/// `{"responseCode": N, "handle": "...", "message": "..."}` for a failure (2 when the failure
/// has no response code of its own).
fn json_document(
    input: &str,
    result: &Result<HandleRecord, ResolveError>,
    hops: &[Hop],
    trace: bool,
) -> Json {
    let mut doc = match result {
        Ok(rec) => json!({
            "responseCode": 1,
            "handle": rec.handle,
            "values": rec.values.iter().map(value_json).collect::<Vec<_>>(),
        }),
        Err(e) => json!({
            "responseCode": e.response_code().map_or(2, |c| c.code()),
            "handle": input,
            "message": e.to_string(),
        }),
    };
    if trace {
        doc["trace"] = Json::Array(hops.iter().map(hop_json).collect());
    }
    doc
}

/// `--all-sites`: every server of every site, and whether their answers agree.
async fn all_sites(resolver: &Resolver, input: &str, query: &Query, args: &Args) -> u8 {
    let answers: Vec<SiteAnswer> = match resolver.resolve_all_sites(input, query).await {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{}", error_message(input, &e));
            return exit_status(&e);
        }
    };
    let responsible: Vec<&SiteAnswer> = answers.iter().filter(|a| a.responsible).collect();
    let reference = responsible.iter().find_map(|a| a.result.as_ref().ok());
    let mut drift = false;
    let mut docs = Vec::new();
    for a in &answers {
        let same = match (&a.result, reference) {
            (Ok(v), Some(r)) => v == r,
            _ => false,
        };
        if a.responsible && !same {
            drift = true;
        }
        if args.json {
            docs.push(json!({
                "site": a.site,
                "server": a.server.to_string(),
                "responsible": a.responsible,
                "responseCode": match &a.result { Ok(_) => 1, Err(e) => e.response_code().map_or(2, |c| c.code()) },
                "values": a.result.as_ref().map(|v| v.iter().map(value_json).collect::<Vec<_>>()).unwrap_or_default(),
                "agrees": same,
            }));
        } else {
            let what = match &a.result {
                Ok(v) => format!(
                    "{} values{}",
                    v.len(),
                    if same { "" } else { " (DIFFERENT)" }
                ),
                Err(e) => e.to_string(),
            };
            let mark = if a.responsible { "*" } else { " " };
            println!("{mark} {:<24} {:<22} {what}", a.site, a.server);
        }
    }
    if args.json {
        println!(
            "{}",
            json!({"handle": input, "drift": drift, "servers": docs})
        );
    } else {
        println!(
            "{}",
            if drift {
                "sites DIFFER"
            } else {
                "all responsible servers agree"
            }
        );
    }
    if drift {
        eprintln!("error: {input}: the sites of its service answer differently");
        NOT_FOUND
    } else if reference.is_none() {
        NOT_FOUND
    } else {
        OK
    }
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
