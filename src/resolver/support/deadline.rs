//! [`Deadline`]: the one deadline of a call. Every public call of the resolver (a
//! resolution, a URN, an administration request, a root refresh, a raw query, the mirror
//! check) makes one when it starts ([`Deadline::start`], the resolver's timeout from now) and
//! carries it, in its trace (`trace.rs`), to every stage, attempt and piece of shared work
//! it starts or joins. Work runs under it in one place, [`Deadline::run`] (with the trace:
//! `Trace::run`, which also lists the attempts it cut short); dropping the work there
//! cancels every request it has in flight (work shared with other callers goes on for
//! them, to the deadline of the call that started it).

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// When a call ends: an instant, made once when the call starts, and the window it was
/// given (named by its timeout error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline {
    at: Instant,
    window: Duration,
}

#[cfg(test)]
thread_local! {
    /// Deadlines made on this thread (a test counts them per call).
    static MADE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many deadlines this thread has made (tests: one per public call).
#[cfg(test)]
pub(crate) fn made() -> usize {
    MADE.with(std::cell::Cell::get)
}

impl Deadline {
    /// The deadline of a call that starts now and may last `window`.
    pub(crate) fn start(window: Duration) -> Self {
        #[cfg(test)]
        MADE.with(|m| m.set(m.get() + 1));
        Self {
            at: Instant::now() + window,
            window,
        }
    }

    /// How long the call was given (what its timeout error says).
    pub(crate) fn window(self) -> Duration {
        self.window
    }

    /// True once the deadline has passed.
    pub(crate) fn passed(self) -> bool {
        Instant::now() >= self.at
    }

    /// `work`, or `timed_out(window)` when it has not finished by the deadline (and is
    /// dropped there).
    pub(crate) async fn run<R, E>(
        self,
        work: impl Future<Output = Result<R, E>>,
        timed_out: impl FnOnce(Duration) -> E,
    ) -> Result<R, E> {
        match tokio::time::timeout_at(self.at, work).await {
            Ok(outcome) => outcome,
            Err(_) => Err(timed_out(self.window)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn work_ends_at_the_instant_made_at_the_start() {
        let deadline = Deadline::start(Duration::from_secs(2));
        tokio::time::advance(Duration::from_millis(1500)).await;
        // Half a second left, whatever runs under it now.
        let started = Instant::now();
        let out: Result<(), Duration> = deadline.run(std::future::pending(), |after| after).await;
        assert_eq!(out, Err(Duration::from_secs(2)));
        assert_eq!(Instant::now() - started, Duration::from_millis(500));
        assert!(deadline.passed());
    }
}
