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
use super::{AuthKey, Batch, Command, ErrorKind, Operation};
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
        mut report: impl FnMut(Report),
    ) -> Summary {
        let mut summary = Summary {
            lines: batch.lines,
            ..Summary::default()
        };
        let mut identities: HashMap<String, Resolver> = HashMap::new();
        let mut current: Option<Resolver> = None;
        let mut in_flight = FuturesUnordered::new();
        let mut last_on: HashMap<String, Done> = HashMap::new();
        let mut seq = 0usize;
        let mut after_barrier = false;
        let note = |r: Report, summary: &mut Summary, report: &mut dyn FnMut(Report)| {
            if r.outcome == Outcome::Success {
                summary.successes += 1;
            }
            report(r);
        };
        for entry in &batch.entries {
            if stop.load(Ordering::SeqCst) {
                summary.stopped = true;
                break;
            }
            let invalid = |seq, kind: ErrorKind| Report {
                seq,
                line: entry.line,
                n: entry.n,
                op: "",
                handle: String::new(),
                outcome: Outcome::Invalid(kind),
            };
            let command = match &entry.command {
                Err(e) => {
                    if counted(&e.kind) {
                        summary.total += 1;
                    }
                    note(invalid(seq, e.kind.clone()), &mut summary, &mut report);
                    seq += 1;
                    continue;
                }
                Ok(c) => c,
            };
            if command.counts() {
                summary.total += 1;
            }
            let barrier = match command {
                Command::Values { handle, .. }
                | Command::Delete { handle }
                | Command::Remove { handle, .. } => is_prefix_handle(handle),
                _ => true,
            };
            if barrier || after_barrier {
                while let Some(r) = in_flight.next().await {
                    note(r, &mut summary, &mut report);
                }
                last_on.clear();
            }
            if after_barrier {
                // A prefix handle or a prefix's home changed: what the resolvers learnt about
                // services (found or not) may be wrong now.
                for r in identities.values().chain(current.as_ref()) {
                    r.clear_cache();
                }
            }
            // Nothing after a barrier starts before it is done.
            after_barrier = barrier;
            match command {
                Command::Authenticate { index, handle, key } => {
                    match self.identity(*index, handle, key) {
                        Ok((name, me)) => {
                            let r = match identities.get(&name) {
                                Some(r) => Ok(r.clone()),
                                None => (self.make)(Some(me)),
                            };
                            match r {
                                Ok(r) => {
                                    identities.insert(name, r.clone());
                                    current = Some(r);
                                }
                                Err(e) => {
                                    let kind = ErrorKind::Authentication(e.to_string());
                                    note(invalid(seq, kind), &mut summary, &mut report);
                                    seq += 1;
                                }
                            }
                        }
                        Err(kind) => {
                            note(invalid(seq, kind), &mut summary, &mut report);
                            seq += 1;
                        }
                    }
                }
                Command::SessionSetup(options) => {
                    if let Some(path) = &options.private_exchange_key_file {
                        if let Some(kind) =
                            self.exchange_key_error(path, options.passphrase.as_deref())
                        {
                            note(invalid(seq, kind), &mut summary, &mut report);
                            seq += 1;
                        }
                    }
                    // Sessions are always on here, as in the reference; its options change
                    // nothing for our runs (README, session quirk).
                }
                Command::Home {
                    home,
                    target,
                    prefixes,
                } => {
                    let resolver = match self.resolver(&mut current) {
                        Ok(r) => r,
                        Err(kind) => {
                            note(invalid(seq, kind), &mut summary, &mut report);
                            seq += 1;
                            continue;
                        }
                    };
                    let admin = resolver.admin();
                    let site = match admin.site_info(target.addr).await {
                        Ok(site) if site.primary => site,
                        Ok(_) => {
                            let kind = ErrorKind::HomeServer("not primary server".into());
                            note(invalid(seq, kind), &mut summary, &mut report);
                            seq += 1;
                            continue;
                        }
                        Err(e) => {
                            note(
                                invalid(seq, ErrorKind::Home(e.to_string())),
                                &mut summary,
                                &mut report,
                            );
                            seq += 1;
                            continue;
                        }
                    };
                    for (_line, prefix) in prefixes {
                        summary.total += 1;
                        let (outcome, handle) = match prefix {
                            Err(kind) => (Outcome::Invalid(kind.clone()), String::new()),
                            Ok(na) => {
                                let done = if *home {
                                    admin.home_prefix(&site, na).await
                                } else {
                                    admin.unhome_prefix(&site, na).await
                                };
                                (outcome_of(done.map(drop)), na.clone())
                            }
                        };
                        let r = Report {
                            seq,
                            line: entry.line,
                            n: entry.n,
                            op: if matches!(outcome, Outcome::Invalid(_)) {
                                ""
                            } else {
                                "home/unhome"
                            },
                            handle,
                            outcome,
                        };
                        note(r, &mut summary, &mut report);
                        seq += 1;
                    }
                }
                Command::Values { handle, .. }
                | Command::Delete { handle }
                | Command::Remove { handle, .. } => {
                    while in_flight.len() >= self.concurrency {
                        if let Some(r) = in_flight.next().await {
                            note(r, &mut summary, &mut report);
                        }
                    }
                    let key = handle.to_ascii_uppercase();
                    let before = last_on.get(&key).cloned();
                    let (tx, rx) = futures::channel::oneshot::channel::<()>();
                    let done: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(rx.map(drop));
                    last_on.insert(key, done.shared());
                    let resolver = current.clone();
                    let command = command.clone();
                    let (line, n, this) = (entry.line, entry.n, seq);
                    seq += 1;
                    in_flight.push(async move {
                        if let Some(before) = before {
                            before.await;
                        }
                        let (op, handle, outcome) = perform(resolver, &command).await;
                        let _ = tx.send(());
                        Report {
                            seq: this,
                            line,
                            n,
                            op,
                            handle,
                            outcome,
                        }
                    });
                }
            }
        }
        while let Some(r) = in_flight.next().await {
            note(r, &mut summary, &mut report);
        }
        summary
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
