//! `admin`: create, change, delete and list handles as an identity.
//!
//! ```sh
//! export HANDLE_RESOLVER_SECRET=...   # or --secret-file FILE, or --key-file FILE
//! cargo run --example admin -- --server 127.0.0.1:2641 --auth 300:0.NA/20.500.1 \
//!     create 20.500.1/new --values values.json
//! cargo run --example admin -- --server 127.0.0.1:2641 --auth 300:0.NA/20.500.1 --key-file admpriv.bin \
//!     remove 20.500.1/new 3 4
//! ```
//!
//! Values are read as the REST API's PUT body: `{"values": [...]}` or a bare array of
//! REST values (`{"index": 1, "type": "URL", "data": {"format": "string", "value": ...}}`).
//! Exit status: 0 done, 1 refused by the server (exists, not found, not permitted,
//! authentication failed, ...), 2 bad input (nothing sent), 3 no answer.
//!
//! `admin home PREFIX` and `admin unhome PREFIX` make the site of `--server` serve a prefix,
//! or stop serving it (HOME_NA / UNHOME_NA, as the reference's batch HOME and UNHOME).
//! `--root` and `--server` come from `HANDLE_RESOLVER_ROOT` and `HANDLE_RESOLVER_SERVER`
//! when not given, as for `resolve`.
//!
//! `admin batch` runs the reference's batch files (`batch.rs`); `admin keygen` and `admin
//! convert-key` make and convert key files, offline (`keys.rs`).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use handle_resolver::cli::AuthArgs;
use handle_resolver::transport::addr::{Endpoint, RootEndpoint};
use handle_resolver::wire::json::values_from_json;
use handle_resolver::wire::{HandleValue, Limits};
use handle_resolver::AdminError;
use handle_resolver::Resolver;

mod batch;
mod keys;

/// Done.
const OK: u8 = 0;
/// The server refused the operation.
const REFUSED: u8 = 1;
/// Bad input: nothing was sent.
const BAD_INPUT: u8 = 2;
/// No answer (network, deadline, a bad answer).
const NETWORK: u8 = 3;

const AFTER_HELP: &str = "\
The identity is --auth INDEX:HANDLE with its key from --secret-file, --key-file or the
environment variable HANDLE_RESOLVER_SECRET (never from the command line). Requests go to a
primary site of the handle's prefix (through --root), or to --server alone. Without --root
or --server (or HANDLE_RESOLVER_ROOT / HANDLE_RESOLVER_SERVER) the root is the global Handle
System's; an option given on the command line wins over the environment. home and unhome
act on the site of --server.

keygen and convert-key work offline; their passphrases come from a file, a variable or the
terminal, never from the command line.

Exit status: 0 done; 1 refused by the server (already exists, not found, value exists, not
permitted, authentication failed, ...); 2 bad input (nothing sent); 3 no answer.";

/// Create, change, delete and list handles as an authenticated identity.
#[derive(Debug, Parser)]
#[command(name = "admin", version, after_help = AFTER_HELP)]
struct Args {
    #[command(subcommand)]
    command: Command,

    /// Send every request to this server (HOST[:PORT], port 2641 unless given; or its HTTP
    /// interface, http(s)://HOST[:PORT]), without service lookup.
    #[arg(
        long,
        global = true,
        value_name = "HOST[:PORT]",
        env = "HANDLE_RESOLVER_SERVER"
    )]
    server: Option<String>,
    /// The root to find the prefix's primary site from (HOST[:PORT], http(s)://HOST[:PORT], or
    /// a root file) [default: the global root servers].
    #[arg(
        long,
        global = true,
        value_name = "HOST[:PORT]",
        env = "HANDLE_RESOLVER_ROOT"
    )]
    root: Option<String>,
    /// Deadline of each request, in seconds.
    #[arg(long, global = true, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,

    #[command(flatten)]
    auth: AuthArgs,

    /// Why --root and --server cannot be settled (both from the environment), said when a
    /// command needs them (keygen and convert-key do not).
    #[arg(skip)]
    unsettled: Option<String>,
}

impl Args {
    /// Settles what clap cannot, as `resolve` does: --root and --server exclude each other
    /// on the command line, and a value from the environment gives way to the command line.
    fn settle(&mut self, matches: &ArgMatches) -> Result<(), String> {
        let on_line = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        let (root_line, server_line) = (on_line("root"), on_line("server"));
        if root_line && server_line {
            return Err("--root and --server cannot be used together".into());
        }
        if root_line {
            self.server = None;
        } else if server_line {
            self.root = None;
        } else if self.root.is_some() && self.server.is_some() {
            self.unsettled = Some(
                "HANDLE_RESOLVER_ROOT and HANDLE_RESOLVER_SERVER are both set: unset one".into(),
            );
        }
        Ok(())
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create HANDLE with the values of FILE (include an HS_ADMIN value).
    Create {
        /// The handle.
        handle: String,
        /// The values: a JSON file (`{"values": [...]}` or `[...]`; `-` for stdin).
        #[arg(long, value_name = "FILE")]
        values: PathBuf,
    },
    /// Add the values of FILE to HANDLE (their indexes must be free).
    Add {
        /// The handle.
        handle: String,
        /// The values (as for create).
        #[arg(long, value_name = "FILE")]
        values: PathBuf,
    },
    /// Replace the values of HANDLE at the indexes of FILE's values.
    Modify {
        /// The handle.
        handle: String,
        /// The values (as for create).
        #[arg(long, value_name = "FILE")]
        values: PathBuf,
    },
    /// Remove the values of HANDLE at INDEX...
    Remove {
        /// The handle.
        handle: String,
        /// The indexes of the values to remove.
        #[arg(required = true, value_name = "INDEX")]
        indexes: Vec<u32>,
    },
    /// Delete HANDLE.
    Delete {
        /// The handle.
        handle: String,
    },
    /// List the handles under PREFIX (e.g. 20.500.1), one a line.
    List {
        /// The prefix.
        prefix: String,
    },
    /// Make the site of --server serve PREFIX (HOME_NA, as the reference's batch HOME): each
    /// server of that site is asked in turn. The reference server lets its server
    /// administrators do it.
    Home {
        /// The prefix (20.500.1) or its prefix handle (0.NA/20.500.1); several in turn.
        #[arg(required = true, value_name = "PREFIX")]
        prefixes: Vec<String>,
    },
    /// Make the site of --server stop serving PREFIX (UNHOME_NA, as the reference's batch
    /// UNHOME); as home.
    Unhome {
        /// The prefix (20.500.1) or its prefix handle (0.NA/20.500.1); several in turn.
        #[arg(required = true, value_name = "PREFIX")]
        prefixes: Vec<String>,
    },
    /// Generate a key pair in the reference's files, as its `hdl-keygen` (RSA 2048 unless
    /// told otherwise): PRIVFILE, the private key (encrypted with a passphrase unless
    /// --no-passphrase), and PUBFILE, the public key as an HS_PUBKEY value holds it.
    Keygen(keys::KeygenArgs),
    /// Convert a key file between the reference's format (`hdl-convert-key`), PKCS#8 PEM
    /// (encrypted or not), SubjectPublicKeyInfo PEM and JWK (for DSA the reference's own
    /// form); the input's format is detected unless --from is given.
    ConvertKey(keys::ConvertArgs),
    /// Run a batch file of the reference's `hdl-genericbatch` (CREATE, ADD, MODIFY, REMOVE,
    /// DELETE, HOME, UNHOME, AUTHENTICATE, SESSIONSETUP), independent commands at once.
    ///
    /// The identities are the file's AUTHENTICATE commands (--auth is not used); paths in
    /// the file are relative to the current directory, as for the reference. The log is the
    /// reference's (`==>SUCCESS[n]: ...`, its closing counts and times) in LOGFILE, or on
    /// stdout. Exit status: 0 every command succeeded; 1 some failed or were invalid; 2 the
    /// file cannot be read (or --check found invalid lines); 3 the log could not be written
    /// (its output closed, as by `| head`: no command starts after that, those in flight
    /// finish); 130 stopped by Ctrl-C (the commands in flight finish and are logged, no
    /// other starts).
    Batch {
        /// The batch file (UTF-8).
        file: PathBuf,
        /// Write the log here instead of stdout.
        logfile: Option<PathBuf>,
        /// Commands sent at once. Commands on one handle keep their file order;
        /// AUTHENTICATE, SESSIONSETUP, HOME, UNHOME and commands on 0.NA/ handles wait for
        /// everything before them, and nothing after them starts before they are done.
        #[arg(long, default_value_t = 16, value_name = "N",
              value_parser = clap::value_parser!(u32).range(1..=4096))]
        concurrency: u32,
        /// Log in file order (as the reference) rather than as commands finish.
        #[arg(long)]
        keep_order: bool,
        /// One JSON object a line per logged step (line, n, op, handle, outcome, code,
        /// message) instead of the reference's log lines.
        #[arg(long)]
        json: bool,
        /// Only read the file: log its invalid lines, send nothing.
        #[arg(long)]
        check: bool,
    },
}

fn main() -> ExitCode {
    let matches = Args::command().get_matches();
    let mut args = match Args::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    if let Err(e) = args.settle(&matches) {
        eprintln!("error: {e}");
        return ExitCode::from(BAD_INPUT);
    }
    match &args.command {
        Command::Batch { .. } => return batch::main(&args),
        Command::Keygen(k) => return keys::keygen(k),
        Command::ConvertKey(c) => return keys::convert(c),
        _ => {}
    }
    let resolver = match build(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(BAD_INPUT);
        }
    };
    // home and unhome: the server whose site is to serve the prefixes, and their handles.
    let home = match &args.command {
        Command::Home { prefixes } | Command::Unhome { prefixes } => {
            match home_request(&args, prefixes) {
                Ok(h) => Some(h),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(BAD_INPUT);
                }
            }
        }
        _ => None,
    };
    let values = match &args.command {
        Command::Create { values, .. }
        | Command::Add { values, .. }
        | Command::Modify { values, .. } => match read_values(values) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(BAD_INPUT);
            }
        },
        _ => Vec::new(),
    };
    let runtime = match runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let done = match home {
        Some(home) => runtime.block_on(home.run(&resolver)),
        None => runtime
            .block_on(run(&resolver, args.command, values))
            .map_err(Failure::Admin),
    };
    match done {
        Ok(lines) => match print(&lines) {
            Ok(()) => ExitCode::from(OK),
            // A reader that went away (`admin list ... | head -1`) ends the run quietly.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(OK),
            Err(e) => {
                eprintln!("error: cannot write to stdout: {e}");
                ExitCode::from(NETWORK)
            }
        },
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

/// Why a subcommand failed.
#[derive(Debug, thiserror::Error)]
enum Failure {
    /// The library's administration failed.
    #[error(transparent)]
    Admin(#[from] AdminError),
    /// home / unhome: the server of --server is not in a primary site.
    #[error("{server}: its site is not primary; a prefix is homed at a primary site")]
    NotPrimary {
        /// The server asked.
        server: std::net::SocketAddr,
    },
}

impl Failure {
    /// The exit status of the failure.
    fn exit_status(&self) -> u8 {
        match self {
            Failure::Admin(e) => exit_status(e),
            Failure::NotPrimary { .. } => REFUSED,
        }
    }
}

/// `admin home` / `admin unhome`: the prefix handles, and the server whose site homes them.
#[derive(Debug)]
struct HomeRequest {
    home: bool,
    server: std::net::SocketAddr,
    prefix_handles: Vec<String>,
}

/// What `admin home` / `unhome` is asked to do, or why it cannot be (nothing is sent).
fn home_request(args: &Args, prefixes: &[String]) -> Result<HomeRequest, String> {
    let home = matches!(args.command, Command::Home { .. });
    let name = if home { "home" } else { "unhome" };
    let target = Target::of(args)?;
    let server = match &target.server {
        Some(Endpoint::Native(addr)) => *addr,
        Some(_) => {
            return Err(format!(
                "{name} asks the server's site information over UDP or TCP: give --server \
                 HOST[:PORT], not its HTTP interface"
            ))
        }
        None => {
            return Err(format!(
                "{name} needs --server HOST[:PORT] (or HANDLE_RESOLVER_SERVER): the server \
                 whose site is to {} the prefix",
                if home { "serve" } else { "stop serving" }
            ))
        }
    };
    let prefix_handles = prefixes
        .iter()
        .map(|p| prefix_handle(p))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(HomeRequest {
        home,
        server,
        prefix_handles,
    })
}

/// The prefix handle of PREFIX as given: `20.500.1` or `0.NA/20.500.1` → `0.NA/20.500.1`.
fn prefix_handle(text: &str) -> Result<String, String> {
    let text = text.trim();
    let is_handle = text
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"));
    let prefix = if is_handle {
        text.get(5..).unwrap_or("")
    } else {
        text
    };
    if prefix.is_empty() || prefix.contains('/') {
        return Err(format!(
            "{text:?}: not a prefix: give the prefix (20.500.1) or its prefix handle \
             (0.NA/20.500.1)"
        ));
    }
    let handle = format!("0.NA/{prefix}");
    handle_resolver::ident::Handle::parse(&handle).map_err(|e| format!("{text:?}: {e}"))?;
    Ok(handle)
}

impl HomeRequest {
    /// Homes or unhomes each prefix at the site of the server, in turn; the lines to print.
    async fn run(self, resolver: &Resolver) -> Result<Vec<String>, Failure> {
        let admin = resolver.admin();
        let site = admin.site_info(self.server).await?;
        if !site.primary {
            return Err(Failure::NotPrimary {
                server: self.server,
            });
        }
        let n = site.servers.len();
        let servers = format!("{n} server{}", if n == 1 { "" } else { "s" });
        let mut lines = Vec::new();
        for handle in &self.prefix_handles {
            if self.home {
                admin.home_prefix(&site, handle).await?;
                lines.push(format!(
                    "homed {handle} at the site of {} ({servers})",
                    self.server
                ));
            } else {
                admin.unhome_prefix(&site, handle).await?;
                lines.push(format!(
                    "unhomed {handle} at the site of {} ({servers})",
                    self.server
                ));
            }
        }
        Ok(lines)
    }
}

/// The async runtime `builder` makes, or the exit status after saying why there is none.
fn runtime(mut builder: tokio::runtime::Builder) -> Result<tokio::runtime::Runtime, ExitCode> {
    builder.enable_all().build().map_err(|e| {
        eprintln!("error: cannot start the async runtime: {e}");
        ExitCode::from(NETWORK)
    })
}

/// Writes `lines` on stdout, one a line, through one locked buffer (`println!` would panic
/// on a closed pipe).
fn print(lines: &[String]) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

/// The resolver the options describe, or why not (nothing is sent).
fn build(args: &Args) -> Result<Resolver, String> {
    let target = Target::of(args)?;
    let mut b = target.builder();
    if let Some(me) = args.auth.authenticator().map_err(|e| e.to_string())? {
        b = b.authenticator(me).sessions(!args.auth.no_session);
    }
    b.build().map_err(|e| e.to_string())
}

/// Where requests go and their deadline: the options every resolver of a run shares.
#[derive(Debug, Clone)]
struct Target {
    server: Option<Endpoint>,
    root: Option<RootEndpoint>,
    timeout: Duration,
}

impl Target {
    fn of(args: &Args) -> Result<Target, String> {
        if let Some(why) = &args.unsettled {
            return Err(why.clone());
        }
        if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
            return Err(format!(
                "--timeout {}: expected seconds above 0, at most one day",
                args.timeout
            ));
        }
        let server = match &args.server {
            Some(s) => Some(Endpoint::parse(s).map_err(|e| format!("--server {s}: {e}"))?),
            None => None,
        };
        let root = match &args.root {
            Some(r) => Some(RootEndpoint::parse(r).map_err(|e| format!("--root {r}: {e}"))?),
            None => None,
        };
        Ok(Target {
            server,
            root,
            timeout: Duration::from_secs_f64(args.timeout),
        })
    }

    fn builder(&self) -> handle_resolver::ResolverBuilder {
        let mut b = Resolver::builder().timeout(self.timeout);
        if let Some(server) = &self.server {
            b = b.server_at(server);
        }
        if let Some(root) = &self.root {
            b = b.root_at(root);
        }
        b
    }
}

/// The values in `path` (`-`: stdin): `{"values": [...]}` or a bare array.
fn read_values(path: &Path) -> Result<Vec<HandleValue>, String> {
    let shown = path.display();
    let text = if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
    .map_err(|e| format!("--values {shown}: cannot read it: {e}"))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("--values {shown}: not JSON: {e}"))?;
    let list = match &doc {
        serde_json::Value::Object(o) => o.get("values").ok_or_else(|| {
            format!("--values {shown}: an object needs a \"values\" array (or give a bare array)")
        })?,
        other => other,
    };
    values_from_json(list, &Limits::default()).map_err(|e| format!("--values {shown}: {e}"))
}

/// Runs one subcommand: the lines to print on success.
async fn run(
    resolver: &Resolver,
    command: Command,
    values: Vec<HandleValue>,
) -> Result<Vec<String>, AdminError> {
    let admin = resolver.admin();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    Ok(match command {
        Command::Create { handle, .. } => {
            let n = values.len();
            let created = admin.create_handle(&handle, values).await?;
            vec![format!("created {created} ({n} value{})", plural(n))]
        }
        Command::Add { handle, .. } => {
            let n = values.len();
            admin.add_values(&handle, values).await?;
            vec![format!("{handle}: {n} value{} added", plural(n))]
        }
        Command::Modify { handle, .. } => {
            let n = values.len();
            admin.modify_values(&handle, values).await?;
            vec![format!("{handle}: {n} value{} modified", plural(n))]
        }
        Command::Remove { handle, indexes } => {
            let n = indexes.len();
            admin.remove_values(&handle, indexes).await?;
            vec![format!("{handle}: {n} value{} removed", plural(n))]
        }
        Command::Delete { handle } => {
            admin.delete_handle(&handle).await?;
            vec![format!("deleted {handle}")]
        }
        Command::List { prefix } => admin.list_handles(&prefix).await?,
        Command::Batch { .. }
        | Command::Keygen(_)
        | Command::ConvertKey(_)
        | Command::Home { .. }
        | Command::Unhome { .. } => Vec::new(),
    })
}

/// The exit status of a failed operation.
fn exit_status(e: &AdminError) -> u8 {
    if e.is_input_error() {
        BAD_INPUT
    } else if e.is_refused() {
        REFUSED
    } else {
        NETWORK
    }
}
