//! `resolve`: check, normalize and resolve identifiers, like `dig` for handles.
//!
//! ```sh
//! cargo run --example resolve -- --demo
//! cargo run --example resolve -- 10.1045/april2006-paskin
//! cargo run --example resolve -- --root 127.0.0.1:2641 --trace 20.500.1/1
//! cargo run --example resolve -- --root 127.0.0.1 --format tsv - < ids.txt
//! cargo run --example resolve -- --check 10.1045/april2006-paskin urn-3:HBS.Baker.TC:1923
//! cargo run --example resolve -- --check-root fixtures/reference/root-files/bootstrap_handles --at file
//! ```
//!
//! `--check` works offline; `--demo` resolves through a test network it starts on loopback.
//! The exit status of each outcome is the table in `render.rs` (`--help` prints it); with
//! several identifiers the highest wins. Messages on stderr say what failed and where.
//!
//! Files: `main.rs` the options and the run; `bulk.rs` resolving a stream of identifiers
//! (order, signals, flushing); `input.rs` reading them; `report.rs` one result in each output
//! format; `render.rs` text, JSON and the exit status table; `tsv.rs`; `progress.rs`;
//! `check.rs` `--check`; `check_root.rs` `--check-root`; `demo.rs` `--demo`; `out.rs`
//! stdout. The `--auth` options are the library's `cli::AuthArgs` (shared with `admin`),
//! `HOST[:PORT]` addresses and `http(s)://` URLs its `transport::addr`.

mod bulk;
mod check;
mod check_root;
#[cfg(feature = "testing")]
mod demo;
mod input;
mod location;
#[path = "../common/log.rs"]
mod logging;
mod out;
mod progress;
mod render;
mod report;
mod tsv;
mod urn;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};
use handle_resolver::cli::AuthArgs;
use handle_resolver::ident::ParseOptions;
use handle_resolver::transport::addr::{Endpoint, RootEndpoint};
use handle_resolver::wire::{HandleValue, ResponseCode};
use handle_resolver::{BuildError, Query, ResolveError, Resolver, ResolverBuilder};
use handle_resolver::{SiteAnswer, TransportPreference};
use serde_json::json;

use out::Out;
use render::{Context, SiteRow, BAD_INPUT, NETWORK, NOT_FOUND, OK};

const EXAMPLES: &str = "\
Examples:
  resolve --demo                                       a whole resolution on a loopback test network
  resolve --root 127.0.0.1:2641 20.500.1/1             resolve through a local root
  resolve --server 127.0.0.1 --json 20.500.1/1         ask one server (port 2641); REST API JSON
  resolve --root 127.0.0.1 --format tsv - < ids.txt    bulk: one identifier per line, one line per value
  resolve --check --cordra 20.500.123/0123456789abcdef0123456789abcdef
  resolve --server 127.0.0.1 --auth 300:20.500.1/ADMIN --secret-file my.secret 20.500.1/1
                                                       non-public values too, as that identity

Without --root or --server (or HANDLE_RESOLVER_ROOT / HANDLE_RESOLVER_SERVER), requests go
to the global Handle System root servers; an option given on the command line wins over the
environment. --type and --index select values matching any of the types OR any of the
indexes (the protocol's rule). Results print as they complete (--keep-order: in input
order). In stdin (`-`), blank lines and `#` lines are skipped. With several identifiers every
result carries its input, failures included, a progress bar shows on stderr when it is a
terminal, and a summary line closes the run; Ctrl-C or SIGTERM stops sending, prints what
was resolved (with --keep-order nothing after the first unfinished identifier) and the
summary, which says where to resume, and exits 130. Errors go to stderr as `error: <id>:
<reason>` (--quiet: only the summary).";

fn after_help() -> String {
    format!("{EXAMPLES}\n\n{}", render::exit_table_text())
}

/// Check, normalize and resolve handles, CORDRA ids, hdl:/doi: URIs, resolver URLs and URNs.
#[derive(Debug, Parser)]
#[command(name = "resolve", version, after_help = after_help())]
struct Args {
    /// Identifiers (PREFIX/SUFFIX, hdl:..., doi:..., http(s)://..., urn:...); `-` reads one
    /// per line from stdin.
    #[arg(required_unless_present_any = ["demo", "completions", "check_root"], value_name = "ID")]
    ids: Vec<String>,

    /// Resolve through a test network started in-process on loopback (a root, and a service
    /// of 2 sites of 3 servers each), with the trace; IDs default to 20.500.1/demo.
    #[arg(long)]
    demo: bool,
    /// Print the shell completion script for SHELL and exit.
    #[arg(long, value_name = "SHELL", exclusive = true)]
    completions: Option<clap_complete::Shell>,

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
    #[arg(long, help_heading = "Query")]
    certify: bool,
    /// Ask primary sites only, bypassing caches.
    #[arg(long, help_heading = "Query")]
    authoritative: bool,
    /// Follow HS_ALIAS values to the handle they name (at most 20 hops, as the handle.net
    /// proxy).
    #[arg(long, help_heading = "Query")]
    follow_aliases: bool,

    /// Output format: text, json (one REST-API-shaped document per identifier, with its
    /// input), tsv (input, handle, responseCode, type, value: one line per value or failure).
    #[arg(long, value_enum, value_name = "FORMAT", help_heading = "Output")]
    format: Option<Format>,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format", help_heading = "Output")]
    json: bool,
    /// Print value data as the hex of its bytes (adds "raw" to each JSON value).
    #[arg(long, help_heading = "Output")]
    raw: bool,
    /// Print only the URL values, one per line (INPUT<TAB>URL with several identifiers; an
    /// identifier without one gets INPUT<TAB> alone).
    #[arg(long, conflicts_with_all = ["json", "raw", "format"], help_heading = "Output")]
    short: bool,
    /// Print results in input order (at most --concurrency of them wait or run at once).
    #[arg(long, help_heading = "Output")]
    keep_order: bool,
    /// Show every request sent: handle, server, transport, round-trip time, response code.
    #[arg(long, help_heading = "Output")]
    trace: bool,
    /// Keep stderr to the closing summary of a bulk run (and errors that stop the run): no
    /// `error:` or `note:` line per identifier and no progress bar; failures are still in
    /// the output (TSV, JSON, text).
    #[arg(long, short = 'q', help_heading = "Output")]
    quiet: bool,

    /// Ask this server only, without service lookup: HOST[:PORT] (port 2641 unless given);
    /// `http://HOST:PORT` (or `https://`) asks its HTTP interface (the native protocol over
    /// HTTP).
    #[arg(
        long,
        value_name = "HOST[:PORT]|URL",
        env = "HANDLE_RESOLVER_SERVER",
        help_heading = "Network"
    )]
    server: Option<String>,
    /// Root to start from: HOST[:PORT] (port 2641 unless given), http://HOST:PORT (its HTTP
    /// interface), or a reference-client `root_info` or `bootstrap_handles` file [default:
    /// the global root servers].
    #[arg(
        long,
        value_name = "HOST[:PORT]|URL|FILE",
        env = "HANDLE_RESOLVER_ROOT",
        help_heading = "Network"
    )]
    root: Option<String>,
    /// Resolve through the REST API of this handle proxy (e.g. https://hdl.handle.net:
    /// `GET URL/api/handles/ID`) instead of the native protocol.
    #[arg(long, value_name = "URL", conflicts_with_all = ["certify", "all_sites", "demo"], help_heading = "Network")]
    proxy: Option<String>,
    /// Transports: `udp` tries UDP, then TCP, then HTTP(S) on each server, moving on when one
    /// gets no answer or a refused connection; `tcp` only TCP; `http` only the native
    /// protocol over HTTP(S).
    #[arg(long, default_value = "udp", value_parser = transport_parser(), help_heading = "Network")]
    transport: TransportPreference,
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

    /// Print the URL the handle.net proxy would redirect to instead of the values: HS_ALIAS
    /// followed first (at most 20 hops), then one location of the handle's 10320/loc and URL
    /// values chosen as the proxy chooses (INPUT<TAB>URL a line with several identifiers).
    #[arg(long, conflicts_with_all = ["all_sites", "json", "format", "short", "raw", "trace", "types", "indexes"], help_heading = "Location")]
    location: bool,
    /// A `locatt` wish for --location (`view:json`, or a name for any value; repeatable, in
    /// order, as the proxy's ?locatt=).
    #[arg(
        long,
        value_name = "NAME[:VALUE]",
        requires = "location",
        help_heading = "Location"
    )]
    locatt: Vec<String>,
    /// The client address --location chooses for (the locations' `addresses` ranges).
    #[arg(
        long,
        value_name = "IP",
        requires = "location",
        help_heading = "Location"
    )]
    client_address: Option<std::net::IpAddr>,
    /// The client's country --location chooses for (the locations' `country`).
    #[arg(
        long,
        value_name = "CC",
        requires = "location",
        help_heading = "Location"
    )]
    country: Option<String>,

    #[command(flatten)]
    root_file: check_root::CheckRootArgs,

    #[command(flatten)]
    auth: AuthArgs,
}

/// The longest `--timeout`: one day.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// `--timeout`: a positive, finite number of seconds, at most [`MAX_TIMEOUT_SECS`].
fn seconds(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_TIMEOUT_SECS => {
            Ok(Duration::from_secs_f64(s))
        }
        Ok(s) if s > MAX_TIMEOUT_SECS => Err(format!(
            "at most {MAX_TIMEOUT_SECS} seconds (one day) per identifier"
        )),
        _ => Err("expected a number of seconds above 0 (e.g. 2 or 0.5)".into()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Tsv,
}

/// `--transport`: the library's names (`TransportPreference`'s `FromStr`), each with its
/// help line.
fn transport_parser() -> impl clap::builder::TypedValueParser<Value = TransportPreference> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = [
        PossibleValue::new(TransportPreference::Udp.as_str()).help(
            "UDP, then TCP, then the native protocol over HTTP(S), each when the server offers it",
        ),
        PossibleValue::new(TransportPreference::Tcp.as_str()).help("TCP only"),
        PossibleValue::new(TransportPreference::Http.as_str())
            .help("The native protocol over HTTP, then HTTPS, only"),
    ];
    // Only the names above get through the parser, and each reads.
    PossibleValuesParser::new(values).map(|name| name.parse().unwrap_or_default())
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
            // With an identity, non-public values are asked for too (the server challenges).
            .public_only(!self.auth.enabled())
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
            one_server: self.server.is_some(),
            identity: self
                .auth
                .auth
                .clone()
                .map(|id| (id, self.auth.key_file.is_none())),
        }
    }

    fn format(&self) -> Format {
        match self.format {
            Some(f) => f,
            None if self.json => Format::Json,
            None => Format::Text,
        }
    }

    /// Several identifiers, or stdin: every result then carries its input.
    fn bulk(&self) -> bool {
        self.ids.len() > 1 || self.ids.iter().any(|id| id == "-")
    }

    /// Settles what clap cannot: options that exclude each other when given on the command
    /// line, while a value from the environment gives way to the command line.
    fn settle(&mut self, matches: &ArgMatches) -> Result<(), String> {
        let on_line = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        let (root_line, server_line) = (on_line("root"), on_line("server"));
        if root_line && server_line {
            return Err("--root and --server cannot be used together".into());
        }
        if self.proxy.is_some() {
            if root_line || server_line {
                return Err(
                    "--proxy resolves through the proxy: leave out --root and --server".into(),
                );
            }
            self.root = None;
            self.server = None;
        } else if self.demo {
            if root_line || server_line {
                return Err("--demo starts its own root: leave out --root and --server".into());
            }
            self.root = None;
            self.server = None;
        } else if root_line {
            self.server = None;
        } else if server_line {
            self.root = None;
        } else if self.root.is_some() && self.server.is_some() {
            return Err(
                "HANDLE_RESOLVER_ROOT and HANDLE_RESOLVER_SERVER are both set: unset one".into(),
            );
        }
        if self.certify && self.server.is_some() {
            return Err(
                "--certify needs the service lookup that --server skips (use --root)".into(),
            );
        }
        if self.trace && self.format() == Format::Tsv {
            return Err("--trace does not fit --format tsv (use --format json --trace)".into());
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    logging::init();
    let matches = Args::command().get_matches();
    let mut args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    if let Some(shell) = args.completions {
        let mut command = Args::command();
        // Into a buffer first: clap_complete panics when its writer fails (a closed pipe).
        let mut script = Vec::new();
        clap_complete::generate(shell, &mut command, "resolve", &mut script);
        return match std::io::Write::write_all(&mut std::io::stdout().lock(), &script) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                out::error(format!("cannot write to stdout: {e}"));
                ExitCode::from(NETWORK)
            }
            _ => ExitCode::SUCCESS,
        };
    }
    if let Some(status) = check_root::run_if_asked(&args.root_file, args.format() == Format::Json) {
        return ExitCode::from(status);
    }
    if let Err(e) = args.settle(&matches) {
        out::error(e);
        return ExitCode::from(BAD_INPUT);
    }
    let mut o = Out::new();
    let result = if args.check {
        check::run(
            input::Items::new(args.ids.clone()),
            args.parse_options(),
            args.format() == Format::Json,
            &mut o,
        )
    } else {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime.block_on(run(args, &mut o)),
            Err(e) => {
                out::error(format!("cannot start the async runtime: {e}"));
                Ok(NETWORK)
            }
        }
    };
    // A reader that went away (`resolve ... | head`) is not an error of ours: exit quietly.
    let status = match result.and_then(|s| o.finish().map(|()| s)) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => OK,
        Err(e) => {
            out::error(format!("cannot write to stdout: {e}"));
            NETWORK
        }
    };
    ExitCode::from(status)
}

/// True when `text` names an HTTP(S) interface (for the message of [`no_transport`]).
fn is_http(text: &str) -> bool {
    Endpoint::parse_with(text, |_, _| Ok(Vec::new())).is_ok_and(|e| e.is_http())
}

/// Why `--transport` cannot reach the first hop (the resolver refused to build: nothing
/// was sent), and which form of `--root`/`--server` it needs.
fn no_transport(args: &Args, server: bool) -> String {
    let (option, given) = if server {
        ("--server", args.server.as_deref())
    } else {
        ("--root", args.root.as_deref())
    };
    let given = given.unwrap_or("");
    let transport = args.transport.as_str();
    if Path::new(given).is_file() {
        format!("{option} {given}: no root server in the file offers --transport {transport}")
    } else if is_http(given) {
        format!(
            "{option} {given}: an http(s):// address is asked over HTTP only, which \
             --transport {transport} leaves out: give {option} HOST:PORT, or --transport http"
        )
    } else {
        format!(
            "{option} {given}: a HOST:PORT address is asked over UDP and TCP, which \
             --transport {transport} leaves out: give the server's HTTP interface, \
             {option} http://HOST:PORT"
        )
    }
}

fn builder(args: &Args) -> Result<ResolverBuilder, String> {
    let mut b = Resolver::builder()
        .transport(args.transport)
        .certify(args.certify)
        .authoritative(args.authoritative)
        .follow_aliases(args.follow_aliases)
        .strict_cordra(args.cordra)
        .timeout(args.timeout);
    if let Some(me) = args.auth.authenticator().map_err(|e| e.to_string())? {
        b = b.authenticator(me).sessions(!args.auth.no_session);
    }
    if let Some(server) = &args.server {
        let server = Endpoint::parse(server).map_err(|e| format!("--server {server}: {e}"))?;
        b = b.server_at(&server);
    }
    if let Some(proxy) = &args.proxy {
        b = b.proxy(proxy.as_str());
    }
    if let Some(root) = &args.root {
        let root = RootEndpoint::parse(root).map_err(|e| format!("--root {root}: {e}"))?;
        b = b.root_at(&root);
    }
    Ok(b)
}

async fn run(args: Args, o: &mut Out) -> std::io::Result<u8> {
    // The test network of --demo runs on this thread's runtime until the run ends.
    #[cfg(feature = "testing")]
    let mut args = args;
    #[cfg(feature = "testing")]
    let _network = if args.demo {
        match demo::start(&mut args).await {
            Ok(network) => Some(network),
            Err(e) => {
                out::error(format!("--demo: cannot start the test network: {e}"));
                return Ok(NETWORK);
            }
        }
    } else {
        None
    };
    #[cfg(not(feature = "testing"))]
    if args.demo {
        out::error("--demo runs the bundled test server: build with `--features testing`");
        return Ok(BAD_INPUT);
    }
    let args = &args;
    let built = builder(args).and_then(|b| {
        b.build().map_err(|e| match (&e, &args.root) {
            (BuildError::RootFile { error, .. }, Some(root)) => {
                format!("--root {root}: not a usable root_info or bootstrap_handles file: {error}")
            }
            (BuildError::ReadRootFile { message, .. }, Some(root)) => {
                format!("--root {root}: cannot read the file: {message}")
            }
            (BuildError::NoRootSites, Some(root)) => {
                format!("--root {root}: not a usable root_info or bootstrap_handles file: {e}")
            }
            (BuildError::NoTransport { server, .. }, _) => no_transport(args, *server),
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
            Ok(_) if args.quiet => {}
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
    if args.location {
        let request = location::request(&args.locatt, args.client_address, args.country.as_deref());
        return location::run(&resolver, &request, args, &ctx, o).await;
    }
    if args.all_sites {
        let mut status = OK;
        for item in input::Items::new(args.ids.clone()) {
            let id = match item {
                input::Item::Id(id) => id,
                input::Item::Unreadable { why, .. } => {
                    if !args.quiet {
                        out::error(why);
                    }
                    status = status.max(BAD_INPUT);
                    continue;
                }
            };
            status = status.max(all_sites(&resolver, &id, &query, args, &ctx, o).await?);
            o.done()?;
        }
        return Ok(status);
    }
    bulk::run(&resolver, args, &ctx, o).await
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
            if !args.quiet {
                out::error(render::error_line(input, &e, &[], ctx));
            }
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
            Err(e) => e.rest_response_code(),
        };
        if args.format() == Format::Json {
            let mut doc = json!({
                "site": a.site,
                "server": a.server.map(|s| s.to_string()),
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
                server: a.server.map_or("-".to_string(), |s| s.to_string()),
                answer: format!("{what}{mark}"),
            });
        }
    }
    if args.format() == Format::Json {
        o.line(json!({"input": input, "handle": input, "drift": drift, "servers": docs}))?;
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
        status = status.max(NOT_FOUND);
    }
    if args.quiet {
        // Said in the output.
    } else if drift {
        out::error(format!(
            "{input}: the responsible servers of its service answer differently"
        ));
    } else if let Some(Err(code)) = reference {
        out::error(format!(
            "{input}: every responsible server answers {}",
            ResponseCode::from_code(code)
        ));
    }
    Ok(status)
}
