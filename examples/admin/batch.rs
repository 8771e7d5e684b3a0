//! `admin batch`: the reference's batch files run by `handle_resolver::admin::batch`.

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
/// The log could not be written (its output closed): the run stopped.
const LOG_FAILED: u8 = 3;

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
    // On stdout (a pipe, a terminal) each line goes out as it is logged, so that a reader
    // that stops reading (`| head`) is noticed at once and stops the run; a log file is
    // written in blocks.
    let flush_each = logfile.is_none();
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
    let stop = Arc::new(AtomicBool::new(false));
    let mut log = Log {
        out: BufWriter::new(out),
        json: *json,
        error: None,
        flush_each,
        stop: stop.clone(),
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
    let runtime = match super::runtime(tokio::runtime::Builder::new_multi_thread()) {
        Ok(r) => r,
        Err(code) => return code,
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
    let started = Instant::now();
    log.line(&format!("Start Time: {}", java_date()));
    let (summary, all_ok, reported) = runtime.block_on(async {
        let on_signal = stop.clone();
        let bar_for_signal = bar.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                on_signal.store(true, Ordering::SeqCst);
                bar_for_signal
                    .println("stopping: no command starts any more; waiting for those in flight");
            }
        });
        let mut all_ok = true;
        let mut order = Reorder::default();
        let (mut failures, mut invalid, mut reported) = (0u64, 0u64, 0u64);
        let summary = runner
            .run_until(&batch, &stop, |r| {
                match r.outcome {
                    Outcome::Success => {}
                    Outcome::Invalid(_) => invalid += 1,
                    _ => failures += 1,
                }
                all_ok &= r.outcome == Outcome::Success;
                reported += 1;
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
        (summary, all_ok, reported)
    });
    bar.finish_and_clear();
    let elapsed = started.elapsed();
    for line in summary.log_lines() {
        log.line(&line);
    }
    log.line(&format!("Finish Time: {}", java_date()));
    log.line(&took(&summary, elapsed));
    if let Err(e) = log.finish() {
        let not_started = steps.saturating_sub(reported);
        eprintln!(
            "error: cannot write the log: {e}; no command started after that ({not_started} \
             not started), those in flight finished"
        );
        return ExitCode::from(LOG_FAILED);
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
/// lines then go as one closing JSON object, see `line`). The first write error is kept
/// and reported once at the end; it also stops the run (`stop`, as Ctrl-C does): no
/// command starts whose outcome could not be logged.
struct Log {
    out: BufWriter<Box<dyn Write>>,
    json: bool,
    error: Option<std::io::Error>,
    /// Flush after every line (stdout).
    flush_each: bool,
    /// Set when a write fails.
    stop: Arc<AtomicBool>,
}

impl Log {
    fn write(&mut self, text: &str) {
        if self.error.is_some() {
            return;
        }
        let mut written = writeln!(self.out, "{text}");
        if written.is_ok() && self.flush_each {
            written = self.out.flush();
        }
        if let Err(e) = written {
            self.error = Some(e);
            self.stop.store(true, Ordering::SeqCst);
        }
    }

    fn step(&mut self, r: &Report) {
        if self.json {
            self.write(&r.to_json().to_string());
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
