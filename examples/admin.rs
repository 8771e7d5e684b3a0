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

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use handle_resolver::cli::AuthArgs;
use handle_resolver::transport::addr::resolve_host_port;
use handle_resolver::wire::json::values_from_json;
use handle_resolver::wire::{HandleValue, Limits};
use handle_resolver::AdminError;
use handle_resolver::Resolver;

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
primary site of the handle's prefix (through --root), or to --server alone.

Exit status: 0 done; 1 refused by the server (already exists, not found, value exists, not
permitted, authentication failed, ...); 2 bad input (nothing sent); 3 no answer.";

/// Create, change, delete and list handles as an authenticated identity.
#[derive(Debug, Parser)]
#[command(name = "admin", version, after_help = AFTER_HELP)]
struct Args {
    #[command(subcommand)]
    command: Command,

    /// Send every request to this server (HOST[:PORT], port 2641 unless given), without
    /// service lookup.
    #[arg(
        long,
        global = true,
        value_name = "HOST[:PORT]",
        conflicts_with = "root"
    )]
    server: Option<String>,
    /// The root to find the prefix's primary site from (HOST[:PORT]) [default: the global
    /// root servers].
    #[arg(long, global = true, value_name = "HOST[:PORT]")]
    root: Option<String>,
    /// Deadline of each request, in seconds.
    #[arg(long, global = true, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,

    #[command(flatten)]
    auth: AuthArgs,
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
    /// Run a batch file of the reference's `hdl-genericbatch` (CREATE, ADD, MODIFY, REMOVE,
    /// DELETE, HOME, UNHOME, AUTHENTICATE, SESSIONSETUP), independent commands at once.
    ///
    /// The identities are the file's AUTHENTICATE commands (--auth is not used); paths in
    /// the file are relative to the current directory, as for the reference. The log is the
    /// reference's (`==>SUCCESS[n]: ...`, its closing counts and times) in LOGFILE, or on
    /// stdout. Exit status: 0 every command succeeded; 1 some failed or were invalid; 2 the
    /// file cannot be read (or --check found invalid lines); 130 stopped by Ctrl-C (the
    /// commands in flight finish and are logged, no other starts).
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
    let args = Args::parse();
    if let Command::Batch { .. } = &args.command {
        return batch::main(&args);
    }
    let resolver = match build(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(BAD_INPUT);
        }
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
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(NETWORK);
        }
    };
    match runtime.block_on(run(&resolver, args.command, values)) {
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
            ExitCode::from(exit_status(&e))
        }
    }
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
#[derive(Debug, Clone, Copy)]
struct Target {
    server: Option<std::net::SocketAddr>,
    root: Option<std::net::SocketAddr>,
    timeout: Duration,
}

impl Target {
    fn of(args: &Args) -> Result<Target, String> {
        if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
            return Err(format!(
                "--timeout {}: expected seconds above 0, at most one day",
                args.timeout
            ));
        }
        let server = match &args.server {
            Some(s) => Some(resolve_host_port(s).map_err(|e| format!("--server {s}: {e}"))?),
            None => None,
        };
        let root = match &args.root {
            Some(r) => Some(resolve_host_port(r).map_err(|e| format!("--root {r}: {e}"))?),
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
        if let Some(addr) = self.server {
            b = b.server(addr);
        }
        if let Some(addr) = self.root {
            b = b.root_server(addr);
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
        Command::Batch { .. } => Vec::new(),
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

/// `admin batch`: the reference's batch files run by `handle_resolver::admin::batch`.
mod batch {
    use std::collections::BTreeMap;
    use std::fs::File;
    use std::io::{BufWriter, IsTerminal, Write};
    use std::process::ExitCode;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    use handle_resolver::admin::batch::{parse, LogLine, Outcome, Report, Runner, Summary};
    use indicatif::{ProgressBar, ProgressStyle};

    use super::{Args, Command, Target, BAD_INPUT, NETWORK, OK, REFUSED};

    /// Stopped by Ctrl-C (128 + SIGINT).
    const INTERRUPTED: u8 = 130;

    pub(super) fn main(args: &Args) -> ExitCode {
        let Command::Batch {
            file,
            logfile,
            concurrency,
            keep_order,
            json,
            check,
        } = &args.command
        else {
            return ExitCode::from(BAD_INPUT);
        };
        let shown = file.display();
        let text = match std::fs::read(file) {
            // The reference reads UTF-8 and replaces what does not decode.
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                eprintln!("error: {shown}: cannot read it: {e}");
                return ExitCode::from(BAD_INPUT);
            }
        };
        let batch = parse(&text, &mut |p: &str| std::fs::read(p).ok());
        let out: Box<dyn Write> = match logfile {
            None => Box::new(std::io::stdout().lock()),
            Some(path) => match File::create(path) {
                Ok(f) => Box::new(f),
                Err(e) => {
                    eprintln!("error: {}: cannot write it: {e}", path.display());
                    return ExitCode::from(BAD_INPUT);
                }
            },
        };
        let mut log = Log {
            out: BufWriter::new(out),
            json: *json,
            error: None,
        };
        if *check {
            let mut bad = 0;
            for entry in &batch.entries {
                if let Err(e) = &entry.command {
                    bad += 1;
                    let r = Report::invalid(entry, e.kind.clone());
                    log.step(&r);
                }
            }
            log.line(&format!("Batch File Lines: {}", batch.lines));
            return match log.finish() {
                Err(e) => {
                    eprintln!("error: cannot write the log: {e}");
                    ExitCode::from(NETWORK)
                }
                Ok(()) if bad == 0 => ExitCode::from(OK),
                Ok(()) => ExitCode::from(BAD_INPUT),
            };
        }
        let target = match Target::of(args) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(BAD_INPUT);
            }
        };
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: cannot start the async runtime: {e}");
                return ExitCode::from(NETWORK);
            }
        };
        let runner = Runner::new(move |me| {
            let mut b = target.builder();
            if let Some(me) = me {
                b = b.authenticator(me);
            }
            b.build()
        })
        .concurrency(*concurrency as usize);
        let steps = batch.entries.len() as u64;
        let bar = if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(steps);
            if let Ok(style) = ProgressStyle::with_template(
                "{bar:40} {pos}/{len} commands, {per_sec}, {msg} (Ctrl-C stops)",
            ) {
                bar.set_style(style);
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        let stop = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        log.line(&format!("Start Time: {}", java_date()));
        let (summary, all_ok) = runtime.block_on(async {
            let on_signal = stop.clone();
            let bar_for_signal = bar.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    on_signal.store(true, Ordering::SeqCst);
                    bar_for_signal.println(
                        "stopping: no command starts any more; waiting for those in flight",
                    );
                }
            });
            let mut all_ok = true;
            let mut order = Reorder::default();
            let (mut failures, mut invalid) = (0u64, 0u64);
            let summary = runner
                .run_until(&batch, &stop, |r| {
                    match r.outcome {
                        Outcome::Success => {}
                        Outcome::Invalid(_) => invalid += 1,
                        _ => failures += 1,
                    }
                    all_ok &= r.outcome == Outcome::Success;
                    bar.inc(1);
                    bar.set_message(format!("{failures} failed, {invalid} invalid"));
                    if *keep_order {
                        for r in order.push(r) {
                            log.step(&r);
                        }
                    } else {
                        log.step(&r);
                    }
                })
                .await;
            for r in order.rest() {
                log.step(&r);
            }
            (summary, all_ok)
        });
        bar.finish_and_clear();
        let elapsed = started.elapsed();
        for line in summary.log_lines() {
            log.line(&line);
        }
        log.line(&format!("Finish Time: {}", java_date()));
        log.line(&took(&summary, elapsed));
        if let Err(e) = log.finish() {
            eprintln!("error: cannot write the log: {e}");
            return ExitCode::from(NETWORK);
        }
        if summary.stopped {
            eprintln!("stopped: the log holds every command that was sent");
            ExitCode::from(INTERRUPTED)
        } else if all_ok {
            ExitCode::from(OK)
        } else {
            ExitCode::from(REFUSED)
        }
    }

    /// The log: the reference's lines, or JSON lines with `--json` (the time and count
    /// lines then go as one closing JSON object, see `line`). Write errors are kept and
    /// reported once at the end.
    struct Log {
        out: BufWriter<Box<dyn Write>>,
        json: bool,
        error: Option<std::io::Error>,
    }

    impl Log {
        fn write(&mut self, text: &str) {
            if self.error.is_none() {
                if let Err(e) = writeln!(self.out, "{text}") {
                    self.error = Some(e);
                }
            }
        }

        fn step(&mut self, r: &Report) {
            if self.json {
                let (outcome, code, message) = match &r.outcome {
                    Outcome::Success => ("success", None, None),
                    Outcome::Failure { code, text } => ("failure", *code, Some(text.clone())),
                    Outcome::Invalid(kind) => ("invalid", None, Some(kind.to_string())),
                    _ => ("unknown", None, None),
                };
                let doc = serde_json::json!({
                    "line": r.line,
                    "n": r.n,
                    "op": r.op,
                    "handle": r.handle,
                    "outcome": outcome,
                    "code": code,
                    "message": message,
                });
                self.write(&doc.to_string());
            } else {
                self.write(&LogLine(r).to_string());
            }
        }

        /// A line of the reference's log around the steps; with `--json`, a
        /// `{"log": line}` object.
        fn line(&mut self, text: &str) {
            if self.json {
                self.write(&serde_json::json!({ "log": text }).to_string());
            } else {
                self.write(text);
            }
        }

        fn finish(mut self) -> std::io::Result<()> {
            if let Some(e) = self.error.take() {
                return Err(e);
            }
            self.out.flush()
        }
    }

    /// Reports back in file order (`--keep-order`): each is let go once every report
    /// before it is.
    #[derive(Default)]
    struct Reorder {
        next: usize,
        held: BTreeMap<usize, Report>,
    }

    impl Reorder {
        fn push(&mut self, r: Report) -> Vec<Report> {
            self.held.insert(r.seq, r);
            let mut ready = Vec::new();
            while let Some(r) = self.held.remove(&self.next) {
                self.next += 1;
                ready.push(r);
            }
            ready
        }

        /// What is held when the run ends (after a stop: reports past a gap).
        fn rest(&mut self) -> Vec<Report> {
            std::mem::take(&mut self.held).into_values().collect()
        }
    }

    /// `java.util.Date.toString()` in UTC: `Fri Nov 27 19:52:08 UTC 2026`.
    fn java_date() -> String {
        let now = time::OffsetDateTime::now_utc();
        let format = time::macros::format_description!(
            "[weekday repr:short] [month repr:short] [day] [hour]:[minute]:[second] UTC [year]"
        );
        now.format(&format).unwrap_or_default()
    }

    /// The reference's last line: whole seconds, and the rate as Java prints a double.
    fn took(summary: &Summary, elapsed: std::time::Duration) -> String {
        let ms = elapsed.as_millis();
        let rate = summary.total as f64 / (ms as f64 / 1000.0);
        format!(
            "This batch took {} seconds to complete at an average speed of {} operations/second",
            ms / 1000,
            java_double(rate)
        )
    }

    /// Java's `Double.toString` for the values a rate takes.
    fn java_double(x: f64) -> String {
        if x.is_nan() {
            "NaN".into()
        } else if x.is_infinite() {
            "Infinity".into()
        } else if x.fract() == 0.0 && x.abs() < 1e7 {
            format!("{x:.1}")
        } else {
            format!("{x}")
        }
    }
}
