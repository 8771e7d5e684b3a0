//! Running a parsed batch: independent commands at once (at most `concurrency`), commands
//! on the same handle in file order, barriers where later commands may depend on earlier
//! ones, one resolver (and so one session per server) per identity.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::future::{FutureExt, Shared};
use futures::stream::{FuturesUnordered, StreamExt};

use super::report::{Outcome, Report, Summary};
use super::{AuthKey, Batch, Command, Entry, ErrorKind, Operation};
use crate::admin::client::AdminError;
use crate::auth::{Authenticator, Identity, KeyFileError, PrivateKey, SecretKey};
use crate::resolver::{BuildError, ResolveError, Resolver};
use crate::wire::ResponseCode;

type MakeResolver = dyn Fn(Option<Authenticator>) -> Result<Resolver, BuildError> + Send + Sync;
type Done = Shared<Pin<Box<dyn Future<Output = ()> + Send>>>;

/// Runs parsed batches. Build it with how to make a resolver for an identity (the servers,
/// root, deadline: the CLI's options), then [`run`](Runner::run).
pub struct Runner {
    make: Arc<MakeResolver>,
    concurrency: usize,
    base: PathBuf,
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runner")
            .field("concurrency", &self.concurrency)
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner making one resolver per identity with `make` (`None`: no identity yet);
    /// 16 commands at once, key files relative to the current directory.
    pub fn new(
        make: impl Fn(Option<Authenticator>) -> Result<Resolver, BuildError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            make: Arc::new(make),
            concurrency: 16,
            base: PathBuf::new(),
        }
    }

    /// At most `n` commands at once (at least 1).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The directory relative paths in the batch file (key files) are read from.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base = dir.into();
        self
    }

    /// Runs `batch`: `report` gets every log line as its step ends (not in file order; sort
    /// by [`Report::seq`] for that). Commands on one handle keep their order; AUTHENTICATE,
    /// SESSIONSETUP, HOME / UNHOME and commands on `0.NA/` handles wait for everything before
    /// them, and nothing after them starts before they are done (after a `0.NA/` or HOME /
    /// UNHOME command, the resolvers forget what they cached).
    pub async fn run(&self, batch: &Batch, report: impl FnMut(Report)) -> Summary {
        self.run_until(batch, &AtomicBool::new(false), report).await
    }

    /// [`run`](Runner::run), stopping when `stop` becomes true (a Ctrl-C handler sets it):
    /// no command starts after that, the ones in flight finish and are reported, and the
    /// summary says so ([`Summary::stopped`]).
    ///
    /// ```
    /// use std::sync::atomic::AtomicBool;
    /// use handle_resolver::admin::batch::{parse, Runner};
    /// let batch = parse("DELETE 20.500.1/x\n", &mut |_: &str| None);
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// let runner = Runner::new(|_| handle_resolver::Resolver::builder().server("127.0.0.1:9".parse().unwrap()).build());
    /// let summary = rt.block_on(runner.run_until(&batch, &AtomicBool::new(true), |_| {}));
    /// assert!(summary.stopped);
    /// assert_eq!(summary.total, 0);
    /// ```
    pub async fn run_until(
        &self,
        batch: &Batch,
        stop: &AtomicBool,
        report: impl FnMut(Report),
    ) -> Summary {
        let mut run = Run::new(self, batch.lines, report);
        for entry in &batch.entries {
            if stop.load(Ordering::SeqCst) {
                run.summary.stopped = true;
                break;
            }
            match plan(entry) {
                Plan::Invalid(kind) => run.invalid(entry, kind.clone()),
                Plan::Command { command, barrier } => {
                    run.order(barrier).await;
                    run.command(entry, command).await;
                }
            }
        }
        run.finish().await
    }

    /// The current resolver, or one without identity.
    fn resolver(&self, current: &mut Option<Resolver>) -> Result<Resolver, ErrorKind> {
        if let Some(r) = current {
            return Ok(r.clone());
        }
        let r = (self.make)(None).map_err(|e| ErrorKind::Home(e.to_string()))?;
        *current = Some(r.clone());
        Ok(r)
    }

    /// The authenticator an AUTHENTICATE names, with a name that tells identities apart.
    fn identity(
        &self,
        index: u32,
        handle: &str,
        key: &AuthKey,
    ) -> Result<(String, Authenticator), ErrorKind> {
        let id = Identity::new(index, handle.as_bytes().to_vec());
        match key {
            AuthKey::Secret(secret) => {
                let name = format!("{index}:{handle}:s:{}", hex::encode(secret));
                Ok((name, Authenticator::secret_key(id, SecretKey::new(secret))))
            }
            AuthKey::KeyFile { path, passphrase } => {
                let full = self.base.join(path);
                let bytes = std::fs::read(&full).map_err(|e| {
                    ErrorKind::Authentication(format!(
                        "java.io.FileNotFoundException: {path} ({})",
                        io_reason(&e)
                    ))
                })?;
                let pass = passphrase.as_deref().unwrap_or("");
                let key = PrivateKey::from_reference_file_with_passphrase(&bytes, pass.as_bytes())
                    .map_err(|e| ErrorKind::Authentication(key_error_text(&e)))?;
                let name = format!("{index}:{handle}:k:{path}|{pass}");
                Ok((name, Authenticator::private_key(id, key)))
            }
        }
    }

    /// Why a private exchange key cannot be used, as the reference logs it.
    fn exchange_key_error(&self, path: &str, passphrase: Option<&str>) -> Option<ErrorKind> {
        let bytes = std::fs::read(self.base.join(path)).ok()?;
        // The reference's key files: an int4 encryption type first (1 = none, as
        // `server/keys/rsa_privkey.bin` of the samples).
        let encrypted = bytes.get(..4).is_some_and(|t| t != [0, 0, 0, 1]);
        match passphrase {
            None if encrypted => Some(ErrorKind::SessionKey(
                "passphrase for private exchange key missed.  Session not setup.".into(),
            )),
            Some(p) => match PrivateKey::from_reference_file_with_passphrase(&bytes, p.as_bytes()) {
                Ok(_) => None,
                Err(_) => Some(ErrorKind::SessionKey(
                    "can't decrypt private exchange key!java.lang.Exception: Unable to decrypt Session not setup.".into(),
                )),
            },
            None => None,
        }
    }
}

/// What one entry of a batch comes to before anything runs (and is counted as the
/// reference counts it).
enum Plan<'b> {
    /// A line that does not parse: reported as it is.
    Invalid(&'b ErrorKind),
    /// A command; a barrier waits for everything before it, and nothing after it starts
    /// before it is done.
    Command { command: &'b Command, barrier: bool },
}

fn plan(entry: &Entry) -> Plan<'_> {
    match &entry.command {
        Err(e) => Plan::Invalid(&e.kind),
        Ok(command) => {
            let barrier = match command {
                Command::Values { handle, .. }
                | Command::Delete { handle }
                | Command::Remove { handle, .. } => is_prefix_handle(handle),
                _ => true,
            };
            Plan::Command { command, barrier }
        }
    }
}

/// One run of a batch: the commands in flight, the resolver of each identity, and the
/// reports and the summary as steps end.
struct Run<'r, F> {
    runner: &'r Runner,
    summary: Summary,
    report: F,
    identities: HashMap<String, Resolver>,
    current: Option<Resolver>,
    in_flight: FuturesUnordered<Pin<Box<dyn Future<Output = Report> + Send + 'r>>>,
    /// The last command on each handle (upper case): the next one on it waits for it.
    last_on: HashMap<String, Done>,
    /// The next step's number (the log's order).
    seq: usize,
    /// The command before was a barrier.
    after_barrier: bool,
}

impl<'r, F: FnMut(Report)> Run<'r, F> {
    fn new(runner: &'r Runner, lines: u32, report: F) -> Self {
        Self {
            runner,
            summary: Summary {
                lines,
                ..Summary::default()
            },
            report,
            identities: HashMap::new(),
            current: None,
            in_flight: FuturesUnordered::new(),
            last_on: HashMap::new(),
            seq: 0,
            after_barrier: false,
        }
    }

    /// Reports one step that has ended.
    fn done(&mut self, r: Report) {
        if r.outcome == Outcome::Success {
            self.summary.successes += 1;
        }
        (self.report)(r);
    }

    /// The next step's number.
    fn next_seq(&mut self) -> usize {
        self.seq += 1;
        self.seq - 1
    }

    /// The one invalid-line step: `entry` reported as invalid for `kind` (counted when the
    /// reference counts such a line before parsing it).
    fn invalid(&mut self, entry: &Entry, kind: ErrorKind) {
        if entry.command.is_err() && counted(&kind) {
            self.summary.total += 1;
        }
        let seq = self.next_seq();
        self.done(Report {
            seq,
            line: entry.line,
            n: entry.n,
            op: "",
            handle: String::new(),
            outcome: Outcome::Invalid(kind),
        });
    }

    /// Waits for every command in flight, reporting each.
    async fn drain(&mut self) {
        while let Some(r) = self.in_flight.next().await {
            self.done(r);
        }
    }

    /// Before a command: a barrier, or the command after one, starts when everything
    /// before it is done; after a barrier the resolvers forget what they cached (a prefix
    /// handle or a prefix's home changed: what they learnt about services may be wrong now).
    async fn order(&mut self, barrier: bool) {
        if barrier || self.after_barrier {
            self.drain().await;
            self.last_on.clear();
        }
        if self.after_barrier {
            for r in self.identities.values().chain(self.current.as_ref()) {
                r.clear_cache();
            }
        }
        self.after_barrier = barrier;
    }

    /// Runs (or, for commands on handles, starts) one command.
    async fn command(&mut self, entry: &Entry, command: &Command) {
        if command.counts() {
            self.summary.total += 1;
        }
        match command {
            Command::Authenticate { index, handle, key } => {
                if let Err(kind) = self.authenticate(*index, handle, key) {
                    self.invalid(entry, kind);
                }
            }
            Command::SessionSetup(options) => {
                // Sessions are always on here, as in the reference; its options change
                // nothing for our runs (`docs/administration.md`, "Batch files": the session quirk).
                if let Some(path) = &options.private_exchange_key_file {
                    let passphrase = options.passphrase.as_deref();
                    if let Some(kind) = self.runner.exchange_key_error(path, passphrase) {
                        self.invalid(entry, kind);
                    }
                }
            }
            Command::Home {
                home,
                target,
                prefixes,
            } => {
                if let Err(kind) = self.home(entry, *home, target.addr, prefixes).await {
                    self.invalid(entry, kind);
                }
            }
            Command::Values { handle, .. }
            | Command::Delete { handle }
            | Command::Remove { handle, .. } => self.start(entry, handle, command).await,
        }
    }

    /// AUTHENTICATE: the identity's resolver (one per identity) becomes the current one.
    fn authenticate(&mut self, index: u32, handle: &str, key: &AuthKey) -> Result<(), ErrorKind> {
        let (name, me) = self.runner.identity(index, handle, key)?;
        let resolver = match self.identities.get(&name) {
            Some(r) => r.clone(),
            None => (self.runner.make)(Some(me))
                .map_err(|e| ErrorKind::Authentication(e.to_string()))?,
        };
        self.identities.insert(name, resolver.clone());
        self.current = Some(resolver);
        Ok(())
    }

    /// HOME / UNHOME: each prefix at the primary server `addr`, one step each.
    async fn home(
        &mut self,
        entry: &Entry,
        home: bool,
        addr: std::net::SocketAddr,
        prefixes: &[(u32, Result<String, ErrorKind>)],
    ) -> Result<(), ErrorKind> {
        let admin = self.runner.resolver(&mut self.current)?.admin();
        let site = match admin.site_info(addr).await {
            Ok(site) if site.primary => site,
            Ok(_) => return Err(ErrorKind::HomeServer("not primary server".into())),
            Err(e) => return Err(ErrorKind::Home(e.to_string())),
        };
        for (_line, prefix) in prefixes {
            self.summary.total += 1;
            let (op, handle, outcome) = match prefix {
                Err(kind) => ("", String::new(), Outcome::Invalid(kind.clone())),
                Ok(na) => {
                    let done = if home {
                        admin.home_prefix(&site, na).await
                    } else {
                        admin.unhome_prefix(&site, na).await
                    };
                    ("home/unhome", na.clone(), outcome_of(done.map(drop)))
                }
            };
            let seq = self.next_seq();
            self.done(Report {
                seq,
                line: entry.line,
                n: entry.n,
                op,
                handle,
                outcome,
            });
        }
        Ok(())
    }

    /// A command on `handle`: started at once when fewer than `concurrency` are in flight
    /// (else when one ends), after the command before it on the same handle.
    async fn start(&mut self, entry: &Entry, handle: &str, command: &Command) {
        while self.in_flight.len() >= self.runner.concurrency {
            if let Some(r) = self.in_flight.next().await {
                self.done(r);
            }
        }
        let key = handle.to_ascii_uppercase();
        let before = self.last_on.get(&key).cloned();
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let done: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(rx.map(drop));
        self.last_on.insert(key, done.shared());
        let resolver = self.current.clone();
        let command = command.clone();
        let (line, n, seq) = (entry.line, entry.n, self.next_seq());
        self.in_flight.push(Box::pin(async move {
            if let Some(before) = before {
                before.await;
            }
            let (op, handle, outcome) = perform(resolver, &command).await;
            let _ = tx.send(());
            Report {
                seq,
                line,
                n,
                op,
                handle,
                outcome,
            }
        }));
    }

    /// Waits for the commands still in flight; the summary.
    async fn finish(mut self) -> Summary {
        self.drain().await;
        self.summary
    }
}

fn io_reason(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory",
        std::io::ErrorKind::PermissionDenied => "Permission denied",
        _ => "Input/output error",
    }
}

/// The reference's text for a key file that does not read.
fn key_error_text(e: &KeyFileError) -> String {
    match e {
        KeyFileError::NeedsPassphrase(_) | KeyFileError::WrongPassphrase => {
            "java.lang.Exception: Unable to decrypt".into()
        }
        KeyFileError::UnknownScheme(code) => {
            format!("HandleException (INVALID_VALUE) Unknown encryption type code: {code}")
        }
        other => format!("java.lang.Exception: {other}"),
    }
}

/// True for the errors of commands the reference counts before parsing them (CREATE, ADD,
/// MODIFY: their `no handle values` line; DELETE, REMOVE, CREATE/ADD/MODIFY without handle).
fn counted(kind: &ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::NoValues { .. }
            | ErrorKind::HandleName
            | ErrorKind::RemoveLine
            | ErrorKind::Indexes
            | ErrorKind::RemoveHandle
    )
}

fn is_prefix_handle(handle: &str) -> bool {
    handle
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"))
}

/// Sends one change; the reference's operation name, the handle and the outcome.
async fn perform(resolver: Option<Resolver>, command: &Command) -> (&'static str, String, Outcome) {
    let (op, handle) = match command {
        Command::Values {
            op: Operation::Create,
            handle,
            ..
        } => ("create", handle.clone()),
        Command::Values {
            op: Operation::Add,
            handle,
            ..
        } => ("add values", handle.clone()),
        Command::Values {
            op: Operation::Modify,
            handle,
            ..
        } => ("modify values", handle.clone()),
        Command::Delete { handle } => ("delete", handle.clone()),
        Command::Remove { handle, .. } => ("remove values", handle.clone()),
        _ => ("", String::new()),
    };
    let Some(resolver) = resolver else {
        return (
            op,
            handle,
            Outcome::Failure {
                code: None,
                text: "No authentication info provided".into(),
            },
        );
    };
    let admin = resolver.admin();
    let done = match command {
        Command::Values {
            op: Operation::Create,
            handle,
            values,
        } => admin.create_handle(handle, values.clone()).await.map(drop),
        Command::Values {
            op: Operation::Add,
            handle,
            values,
        } => admin.add_values(handle, values.clone()).await,
        Command::Values {
            op: Operation::Modify,
            handle,
            values,
        } => admin.modify_values(handle, values.clone()).await,
        Command::Delete { handle } => admin.delete_handle(handle).await,
        Command::Remove { handle, indexes } => admin.remove_values(handle, indexes.clone()).await,
        _ => Ok(()),
    };
    (op, handle, outcome_of(done))
}

/// An admin result as the reference logs it.
fn outcome_of(done: Result<(), AdminError>) -> Outcome {
    let e = match done {
        Ok(()) => return Outcome::Success,
        Err(e) => e,
    };
    let text = match &e {
        AdminError::AuthenticationNeeded { .. } => "No authentication info provided".to_string(),
        AdminError::ValueExists { message, .. } | AdminError::Refused { message, .. }
            if !message.is_empty() =>
        {
            let code = e.response_code().unwrap_or(ResponseCode::Error);
            format!("{}: {message}", error_text(code))
        }
        // The reference logs the server's text after the code's name (sample 07).
        AdminError::Failed(ResolveError::PrefixNotServed { message, .. }) if !message.is_empty() => {
            format!("{}: {message}", error_text(ResponseCode::ServerNotResponsible))
        }
        AdminError::Failed(ResolveError::ServiceNotFound { prefix_handle }) => format!(
            "Unable to find service for prefix {prefix_handle}; prefix resolution response: Error(100): HANDLE NOT FOUND"
        ),
        other => match other.response_code() {
            Some(code) => error_text(code),
            None => other.to_string(),
        },
    };
    Outcome::Failure {
        code: e.response_code().map(|c| c.code()),
        text,
    }
}

/// hdllib's `Error(code): NAME` of a response code.
fn error_text(code: ResponseCode) -> String {
    let name = match code {
        ResponseCode::ServerNotResponsible => "SERVER NOT RESPONSIBLE FOR HANDLE".to_string(),
        ResponseCode::AuthenticationFailed => "AUTHENTICATION FAILED".to_string(),
        other => other.name().replace('_', " "),
    };
    format!("Error({}): {name}", code.code())
}
