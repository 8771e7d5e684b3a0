//! What a bulk run tells on stderr: a progress bar while it runs (only when stderr is a
//! terminal: done/total, rate, ETA, failures) and one closing summary line.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::render::Outcome;

/// The count of each kind of outcome.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Values came back.
    pub resolved: u64,
    /// Not found, no (matching) values, unknown prefix, not served, authentication needed.
    pub not_found: u64,
    /// Invalid identifiers and unreadable lines.
    pub invalid: u64,
    /// Timeouts, network, protocol and server errors.
    pub failed: u64,
}

impl Tally {
    /// Counts one outcome.
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Resolved => self.resolved += 1,
            Outcome::NotFound
            | Outcome::NoValues
            | Outcome::UnknownPrefix
            | Outcome::NotServed
            | Outcome::AuthenticationNeeded => self.not_found += 1,
            Outcome::Invalid | Outcome::Usage => self.invalid += 1,
            Outcome::Failed
            | Outcome::OtherCode
            | Outcome::AuthenticationFailed
            | Outcome::Interrupted => self.failed += 1,
        }
    }

    /// `summary: 750 resolved, 250 not found, 0 invalid, 0 failed in 0.31 s`; for a run that
    /// was stopped, `summary (interrupted): ..., 0 failed, 8 unfinished in 0.31 s; resume
    /// from identifier 21 (...)`.
    pub fn summary(&self, elapsed: Duration, stopped: Option<&Stopped>) -> String {
        let counts = format!(
            "{} resolved, {} not found, {} invalid, {} failed",
            self.resolved, self.not_found, self.invalid, self.failed
        );
        let secs = elapsed.as_secs_f64();
        match stopped {
            None => format!("summary: {counts} in {secs:.2} s"),
            Some(s) => format!(
                "summary (interrupted): {counts}, {} unfinished in {secs:.2} s; {}",
                s.unfinished, s.resume
            ),
        }
    }

    fn failures(&self) -> String {
        format!(
            "{} not found, {} invalid, {} failed",
            self.not_found, self.invalid, self.failed
        )
    }
}

/// How a stopped run ended: what it had started and not written, and where to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Identifiers started (or read) and not written: dropped in flight, or waiting behind
    /// one that was (`--keep-order`).
    pub unfinished: u64,
    /// `resume from identifier 21 (stdin line 23: ...)`.
    pub resume: String,
}

/// The progress bar of a bulk run (hidden unless stderr is a terminal) and its tally.
pub struct Progress {
    bar: ProgressBar,
    tally: Tally,
    started: Instant,
}

impl Progress {
    /// A bar on stderr, drawn only when `show` and stderr is a terminal.
    pub fn new(show: bool) -> Self {
        let target = if show {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} {human_pos} done {per_sec} {elapsed} {msg}")
        {
            bar.set_style(style);
        }
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        Progress {
            bar,
            tally: Tally::default(),
            started: Instant::now(),
        }
    }

    /// True when the bar is drawn.
    pub fn visible(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// A handle that can set the total from another thread.
    pub fn total_setter(&self) -> impl FnOnce(u64) + Send + 'static {
        let bar = self.bar.clone();
        move |total| {
            if let Ok(style) = ProgressStyle::with_template(
                "{wide_bar} {human_pos}/{human_len} {per_sec} ETA {eta} {msg}",
            ) {
                bar.set_style(style);
            }
            bar.set_length(total);
        }
    }

    /// Counts one finished identifier.
    pub fn add(&mut self, outcome: Outcome) {
        self.tally.add(outcome);
        self.bar.inc(1);
        if outcome != Outcome::Resolved {
            self.bar.set_message(self.tally.failures());
        }
    }

    /// Runs `f` (which writes to the terminal) with the bar cleared.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.visible() {
            self.bar.suspend(f)
        } else {
            f()
        }
    }

    /// Removes the bar; returns the summary line (`stopped`: the run was interrupted).
    pub fn finish(&self, stopped: Option<&Stopped>) -> String {
        self.bar.finish_and_clear();
        self.tally.summary(self.started.elapsed(), stopped)
    }
}
