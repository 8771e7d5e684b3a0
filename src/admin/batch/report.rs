//! What a batch run reports: one [`Report`] per logged step ([`LogLine`] writes it as the
//! reference's log does) and the [`Summary`] of the run.

use std::fmt;

use super::{Entry, ErrorKind};

/// The outcome of one logged step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The server answered success.
    Success,
    /// The server refused (its code), or no answer came (no code).
    Failure {
        /// The server's response code.
        code: Option<u32>,
        /// The reference's text for it (`Error(101): HANDLE ALREADY EXISTS`).
        text: String,
    },
    /// Nothing was sent: the lines are invalid.
    Invalid(ErrorKind),
}

impl Outcome {
    /// Its name in a report's JSON and Python's `BatchReport.outcome`: `success`, `failure`
    /// or `invalid`.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure { .. } => "failure",
            Outcome::Invalid(_) => "invalid",
        }
    }

    /// The server's response code of a failure, when a server answered.
    pub fn code(&self) -> Option<u32> {
        match self {
            Outcome::Failure { code, .. } => *code,
            Outcome::Success | Outcome::Invalid(_) => None,
        }
    }

    /// Why it failed or is invalid (the reference's text); `None` on success.
    pub fn message(&self) -> Option<String> {
        match self {
            Outcome::Success => None,
            Outcome::Failure { text, .. } => Some(text.clone()),
            Outcome::Invalid(kind) => Some(kind.to_string()),
        }
    }
}

/// One line of the log: what the reference writes as `==>SUCCESS[n]`, `==>FAILURE[n]` or
/// `==>INVALID[n]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Position in file order (for a log in file order).
    pub seq: usize,
    /// Physical line number.
    pub line: u32,
    /// The reference's `[n]`.
    pub n: u32,
    /// The reference's operation name (`create`, `add values`, `home/unhome`, ...), empty
    /// for an invalid line.
    pub op: &'static str,
    /// The handle the operation is about.
    pub handle: String,
    /// What happened.
    pub outcome: Outcome,
}

impl Report {
    /// The report of an invalid entry, as a run logs it, without running anything (`admin
    /// batch --check`); its `seq` is 0.
    ///
    /// ```
    /// use handle_resolver::admin::batch::{parse, LogLine, Report};
    /// let batch = parse("FROBNICATE x\n", &mut |_: &str| None);
    /// let entry = &batch.entries[0];
    /// let Err(e) = &entry.command else { panic!() };
    /// let r = Report::invalid(entry, e.kind.clone());
    /// assert_eq!(LogLine(&r).to_string(), "==>INVALID[1]: error in command line");
    /// ```
    pub fn invalid(entry: &Entry, kind: ErrorKind) -> Report {
        Report {
            seq: 0,
            line: entry.line,
            n: entry.n,
            op: "",
            handle: String::new(),
            outcome: Outcome::Invalid(kind),
        }
    }
}

impl Report {
    /// The report as one JSON object, what `admin batch --json` writes per step: `{"line",
    /// "n", "op", "handle", "outcome", "code", "message"}` (`code` and `message` null where
    /// there is none).
    ///
    /// ```
    /// use handle_resolver::admin::batch::{parse, Report};
    /// let batch = parse("FROBNICATE x\n", &mut |_: &str| None);
    /// let entry = &batch.entries[0];
    /// let Err(e) = &entry.command else { panic!() };
    /// let json = Report::invalid(entry, e.kind.clone()).to_json();
    /// assert_eq!(json["outcome"], "invalid");
    /// assert_eq!(json["message"], "error in command line");
    /// assert!(json["code"].is_null());
    /// ```
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "line": self.line,
            "n": self.n,
            "op": self.op,
            "handle": self.handle,
            "outcome": self.outcome.name(),
            "code": self.outcome.code(),
            "message": self.outcome.message(),
        })
    }
}

/// A report as the reference's log line.
///
/// ```
/// use handle_resolver::admin::batch::{parse, LogLine, Runner};
/// let batch = parse("FROBNICATE x\n", &mut |_: &str| None);
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let runner = Runner::new(|_| handle_resolver::Resolver::builder().server("127.0.0.1:9".parse().unwrap()).build());
/// let mut lines = Vec::new();
/// rt.block_on(runner.run(&batch, |r| lines.push(LogLine(&r).to_string())));
/// assert_eq!(lines, ["==>INVALID[1]: error in command line"]);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct LogLine<'a>(pub &'a Report);

impl fmt::Display for LogLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        match &r.outcome {
            Outcome::Success => write!(f, "==>SUCCESS[{}]: {}:{}", r.n, r.op, r.handle),
            Outcome::Failure { text, .. } => {
                write!(f, "==>FAILURE[{}]: {}:{}: {}", r.n, r.op, r.handle, text)
            }
            Outcome::Invalid(kind) if kind.spaced() => write!(f, "==>INVALID [{}]: {kind}", r.n),
            Outcome::Invalid(kind) => write!(f, "==>INVALID[{}]: {kind}", r.n),
        }
    }
}

/// The closing counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Successful operations.
    pub successes: u64,
    /// Operations counted as the reference counts them.
    pub total: u64,
    /// Main-loop lines of the file.
    pub lines: u32,
    /// The run was stopped before the end of the file: the counts cover what ran.
    pub stopped: bool,
}

impl Summary {
    /// The reference's two count lines.
    pub fn log_lines(&self) -> [String; 2] {
        [
            format!("Successes/Total Entries: {}/{}", self.successes, self.total),
            format!("Batch File Lines: {}", self.lines),
        ]
    }
}
