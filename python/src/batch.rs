//! `Admin.run_batch` and `AsyncAdmin.run_batch`: a batch file of the reference's
//! `hdl-genericbatch` run by the library's [`Runner`] (independent commands at once, one
//! handle's commands in file order, barriers at AUTHENTICATE / SESSIONSETUP / HOME and
//! `0.NA/` handles), its outcome as [`BatchResult`] with one [`BatchReport`] per log line in
//! file order. Both admins share [`prepare`] and [`run`]. The identities are the file's
//! (its AUTHENTICATE lines), each with a resolver of the admin's settings (servers, root,
//! transports, deadline); as with `hdl-genericbatch`, changes before the first
//! AUTHENTICATE fail ("No authentication info provided").

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use handle_resolver::admin::batch::{parse, Batch, LogLine, Outcome, Report, Runner, Summary};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use crate::config::Config;

/// A batch ready to run: parsed, with the runner that makes the resolvers.
pub(crate) struct BatchJob {
    batch: Batch,
    runner: Runner,
}

/// Reads `file` (or takes `text`), parses it (FILE value paths relative to `base_dir`, else
/// the batch file's folder, else the current one) and makes the runner: at most
/// `concurrency` commands at once, one resolver of `config`'s settings per identity the
/// file names.
pub(crate) fn prepare(
    config: &Config,
    file: Option<PathBuf>,
    text: Option<String>,
    concurrency: usize,
    base_dir: Option<PathBuf>,
) -> PyResult<BatchJob> {
    if concurrency == 0 {
        return Err(PyValueError::new_err("concurrency: at least 1"));
    }
    let (text, base) = match (file, text) {
        (Some(file), None) => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", file.display())))?;
            let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
            (text, base_dir.unwrap_or(folder))
        }
        (None, Some(text)) => (text, base_dir.unwrap_or_default()),
        _ => {
            return Err(PyValueError::new_err(
                "give the batch file or text=, not both",
            ))
        }
    };
    let read_base = base.clone();
    let batch = parse(&text, &mut |path: &str| {
        std::fs::read(read_base.join(path)).ok()
    });
    let endpoints = config.endpoints()?;
    let settings = config.clone();
    let runner = Runner::new(move |identity| settings.builder_for(&endpoints, identity).build())
        .concurrency(concurrency)
        .base_dir(base);
    Ok(BatchJob { batch, runner })
}

/// Runs the batch; the reports in file order and the summary.
pub(crate) async fn run(job: BatchJob) -> BatchResult {
    let mut reports = Vec::new();
    let summary = job
        .runner
        .run_until(&job.batch, &AtomicBool::new(false), |r| reports.push(r))
        .await;
    reports.sort_by_key(|r| r.seq);
    BatchResult::new(reports, summary)
}

/// One line of a batch run's log: a command's outcome (or an invalid line's).
#[pyclass(frozen, module = "handle_resolver._native")]
#[derive(Clone)]
pub(crate) struct BatchReport {
    /// Physical line number of the command in the file (1-based).
    #[pyo3(get)]
    line: u32,
    /// The reference's `[n]`: the command line's place among the file's top-level lines.
    #[pyo3(get)]
    n: u32,
    /// The reference's name of the operation (`create`, `add values`, `delete`, ...), empty
    /// for an invalid line.
    #[pyo3(get)]
    op: String,
    /// The handle the command is about.
    #[pyo3(get)]
    handle: String,
    /// `"success"`, `"failure"` or `"invalid"` (nothing sent).
    #[pyo3(get)]
    outcome: &'static str,
    /// The server's response code of a failure, when a server answered.
    #[pyo3(get)]
    code: Option<u32>,
    /// Why it failed or is invalid (the reference's text), empty on success.
    #[pyo3(get)]
    message: String,
    log: String,
}

impl BatchReport {
    fn new(r: &Report) -> Self {
        Self {
            line: r.line,
            n: r.n,
            op: r.op.to_string(),
            handle: r.handle.clone(),
            outcome: r.outcome.name(),
            code: r.outcome.code(),
            message: r.outcome.message().unwrap_or_default(),
            log: LogLine(r).to_string(),
        }
    }
}

#[pymethods]
impl BatchReport {
    /// The reference's log line (`==>SUCCESS[3]: create:20.500.1/x`).
    fn __str__(&self) -> String {
        self.log.clone()
    }

    fn __repr__(&self) -> String {
        format!("BatchReport(line={}, {:?})", self.line, self.log)
    }
}

/// What a batch run did: every log line in file order and the reference's counts.
#[pyclass(frozen, module = "handle_resolver._native")]
pub(crate) struct BatchResult {
    reports: Vec<BatchReport>,
    /// Commands that succeeded.
    #[pyo3(get)]
    successes: u64,
    /// Commands counted as the reference counts them (`Total Entries`).
    #[pyo3(get)]
    total: u64,
    /// Top-level lines of the file (`Batch File Lines`).
    #[pyo3(get)]
    lines: u32,
    counts: [String; 2],
    every_success: bool,
}

impl BatchResult {
    fn new(reports: Vec<Report>, summary: Summary) -> Self {
        let every_success = reports.iter().all(|r| r.outcome == Outcome::Success);
        Self {
            reports: reports.iter().map(BatchReport::new).collect(),
            successes: summary.successes,
            total: summary.total,
            lines: summary.lines,
            counts: summary.log_lines(),
            every_success,
        }
    }
}

#[pymethods]
impl BatchResult {
    /// Every log line's report, in file order.
    #[getter]
    fn reports(&self) -> Vec<BatchReport> {
        self.reports.clone()
    }

    /// True when every command succeeded (no failure, no invalid line).
    #[getter]
    fn ok(&self) -> bool {
        self.every_success
    }

    /// The reference's log: every line in file order, then its two count lines.
    #[getter]
    fn log(&self) -> String {
        let mut out = String::new();
        for line in self.reports.iter().map(|r| &r.log).chain(&self.counts) {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    fn __repr__(&self) -> String {
        format!(
            "BatchResult(successes={}, total={}, lines={})",
            self.successes, self.total, self.lines
        )
    }
}
