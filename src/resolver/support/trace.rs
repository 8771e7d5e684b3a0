//! [`Trace`]: the bookkeeping of one call, shared by its concurrent attempts: its one
//! [`Deadline`], the attempts made (finished and running), the shared work it waits for,
//! its referral budget and whether it has spent its one root refresh. [`Trace::run`] is the
//! one place work runs under the deadline and what it cut short is recorded;
//! [`Trace::share`] the one way work is shared with other calls.

use std::time::Duration;

use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use tracing::debug;

use futures::FutureExt;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::ident::Handle;

use super::super::error::ResolveError;
use super::super::record::{Attempt, AttemptOutcome};
use super::super::settings::MAX_REFERRALS;
use super::deadline::Deadline;
use super::flight::{Flight, Flights};

/// What shared work (a single flight) hands every caller: its outcome and the attempts it
/// made, merged into each caller's trace.
pub(crate) type SharedOutcome<T> = (Result<T, ResolveError>, Vec<Attempt>);

/// How work run by [`Trace::run`] failed: the error, and at the deadline every attempt (those
/// cut short included); `None` when it failed before (the trace holds its attempts).
pub(crate) type Failed = (ResolveError, Option<Vec<Attempt>>);

/// What [`Trace::snapshot`] copies: finished attempts, those of joined work, those still
/// running, and how many numbers the trace had given out.
type Snapshot = (Vec<Attempt>, Vec<Attempt>, Vec<Attempt>, u32);

/// Reserves as many numbers as the largest of `attempts` (numbered by another trace from 1);
/// returns what to add to each to number it after the attempts numbered so far.
fn reserve_numbers(e: &mut Entries, attempts: &[Attempt]) -> u32 {
    let count = attempts.iter().map(|a| a.number).max().unwrap_or(0);
    let base = e.numbered;
    e.numbered = e.numbered.saturating_add(count);
    base
}

/// An attempt in progress, with the token that ends it and when it started.
#[derive(Debug, Clone)]
struct Running {
    attempt: Attempt,
    token: u64,
    started: Instant,
}

#[derive(Debug, Default)]
struct Entries {
    /// Finished attempts, in the order they ended.
    done: Vec<Attempt>,
    /// Attempts in progress, in the order they started.
    running: Vec<Running>,
    /// Shared work this resolution waits for, by token.
    joined: Vec<(u64, Arc<Trace>)>,
    /// The last token given out (for running attempts and joined work).
    last_token: u64,
    /// Attempt numbers given out (or reserved for joined work that has ended). Kept under
    /// the same lock as the lists, so that a snapshot sees numbers and attempts agree.
    numbered: u32,
}

impl Entries {
    fn token(&mut self) -> u64 {
        self.last_token = self.last_token.wrapping_add(1);
        self.last_token
    }
}

/// The bookkeeping of one resolution (or of one piece of shared work).
#[derive(Debug)]
pub(crate) struct Trace {
    /// The handle the resolution is about (named by its errors).
    origin: Handle,
    /// When the call ends (shared work: the call that started it).
    deadline: Deadline,
    entries: Mutex<Entries>,
    /// Attempt numbers given out.
    /// Referrals and service hops so far: shared with the work this resolution starts on
    /// behalf of others, so the limit bounds the whole tree of lookups.
    referrals: Arc<AtomicU32>,
    /// Whether the resolution has spent its one root refresh (shared with the request it
    /// shares with identical queries: one refresh per resolution, whatever runs it).
    refreshed: Arc<AtomicBool>,
}

impl Trace {
    /// Fresh bookkeeping for a call about `origin`, ending at `deadline`.
    pub(crate) fn new(origin: Handle, deadline: Deadline) -> Self {
        Self::with(origin, deadline, Arc::default(), Arc::default())
    }

    fn with(
        origin: Handle,
        deadline: Deadline,
        referrals: Arc<AtomicU32>,
        refreshed: Arc<AtomicBool>,
    ) -> Self {
        Self {
            origin,
            deadline,
            entries: Mutex::new(Entries::default()),
            referrals,
            refreshed,
        }
    }

    /// Bookkeeping for shared work this resolution starts about `origin`: its own attempts,
    /// but this resolution's referral budget, so nested lookups cannot each start over from
    /// [`MAX_REFERRALS`].
    pub(crate) fn for_shared_work(&self, origin: &Handle) -> Self {
        Self::with(
            origin.clone(),
            self.deadline,
            self.referrals.clone(),
            Arc::default(),
        )
    }

    /// Bookkeeping for this resolution's own request when it is shared with identical
    /// queries: like [`Trace::for_shared_work`], and also this resolution's one root
    /// refresh.
    pub(crate) fn for_shared_request(&self, origin: &Handle) -> Self {
        Self::with(
            origin.clone(),
            self.deadline,
            self.referrals.clone(),
            self.refreshed.clone(),
        )
    }

    /// The handle this bookkeeping is about.
    pub(crate) fn origin(&self) -> &Handle {
        &self.origin
    }

    /// When the call ends.
    pub(crate) fn deadline(&self) -> Deadline {
        self.deadline
    }

    /// Runs `work` under this trace's deadline: the one place a call's work is cut short.
    /// At the deadline the work is dropped (cancelling its requests) and the error, a
    /// timeout naming this trace's handle, comes with every attempt: those finished, those
    /// of the shared work waited for and those still running, as cut short by the deadline
    /// ([`AttemptOutcome::DeadlinePassed`]).
    ///
    /// The caller pins `work` where it makes it: at the deadline the work (and its attempts
    /// in progress) must still exist while the trace is read, and a future taken by value
    /// here would be held twice (the argument and the pinned copy), and copied whole, on
    /// every resolution.
    pub(crate) async fn run<R, F>(&self, mut work: Pin<&mut F>) -> Result<R, Failed>
    where
        F: Future<Output = Result<R, ResolveError>>,
    {
        let work = async { work.as_mut().await.map_err(|e| (e, None)) };
        let timed_out = |after| {
            let e = ResolveError::timeout(&self.origin, after);
            (e, Some(self.at_deadline()))
        };
        self.deadline.run(work, timed_out).await
    }

    /// Records an attempt that starts now (numbered here); returns its token for
    /// [`Trace::end`].
    pub(crate) fn start(&self, mut attempt: Attempt, started: Instant) -> u64 {
        let mut e = self.entries.lock();
        e.numbered = e.numbered.saturating_add(1);
        attempt.number = e.numbered;
        let token = e.token();
        e.running.push(Running {
            attempt,
            token,
            started,
        });
        token
    }

    /// Records the end of an attempt started with [`Trace::start`]: `finish` fills in how it
    /// ended, and it moves from the running attempts to the finished ones.
    pub(crate) fn end(&self, token: u64, finish: impl FnOnce(&mut Attempt)) {
        let mut e = self.entries.lock();
        if let Some(i) = e.running.iter().position(|r| r.token == token) {
            let mut attempt = e.running.remove(i).attempt;
            finish(&mut attempt);
            e.done.push(attempt);
        }
    }

    /// Shares work with concurrent callers: joins the flight for `key` in `flights`, or
    /// starts one running `work` with its own bookkeeping (`shared()`, given to `work`);
    /// then waits for it as [`Trace::wait_for`] does. The one way the resolver shares work.
    ///
    /// Work runs under the deadline of the call that started it, although callers joining
    /// later have later deadlines: otherwise a stream of callers keeps silent work alive past
    /// all of theirs, and its servers are never known silent (`peers/health.rs`). A caller
    /// whose own deadline is later does not end with it: it joins or starts the work again,
    /// and so waits until its own deadline.
    pub(crate) async fn share<K, R, Fut>(
        &self,
        flights: &Flights<K, SharedOutcome<R>, Arc<Trace>>,
        key: K,
        shared: impl Fn() -> Trace,
        work: impl Fn(Arc<Trace>) -> Fut,
    ) -> Result<R, ResolveError>
    where
        K: Hash + Eq + Clone + Send + Sync + 'static,
        R: Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ResolveError>> + Send + 'static,
    {
        loop {
            let (flight, trace, _) = flights.join_or_start(
                key.clone(),
                || Arc::new(shared()),
                |trace| {
                    let work = work(trace.clone());
                    async move {
                        match trace.run(std::pin::pin!(work)).await {
                            Ok(out) => (Ok(out), trace.attempts()),
                            Err((e, Some(attempts))) => (Err(e), attempts),
                            Err((e, None)) => (Err(e), trace.attempts()),
                        }
                    }
                    .boxed()
                },
            );
            match self.wait_for(flight, trace).await {
                Err(ResolveError::Timeout { .. }) if !self.deadline.passed() => continue,
                out => return out,
            }
        }
    }

    /// Waits for shared work (whose bookkeeping is `shared`) and merges its attempts into
    /// this trace, numbered after this resolution's own; until it ends,
    /// [`Trace::at_deadline`] lists them too.
    pub(crate) async fn wait_for<R: Clone>(
        &self,
        flight: Flight<SharedOutcome<R>>,
        shared: Arc<Trace>,
    ) -> Result<R, ResolveError> {
        let token = {
            let mut e = self.entries.lock();
            let token = e.token();
            e.joined.push((token, shared));
            token
        };
        let (out, attempts) = flight.await;
        let mut e = self.entries.lock();
        e.joined.retain(|(t, _)| *t != token);
        // The shared work numbered its attempts 1, 2, ... as they started: they keep that
        // order, after this resolution's own.
        let base = reserve_numbers(&mut e, &attempts);
        for mut attempt in attempts {
            attempt.number = attempt.number.saturating_add(base);
            e.done.push(attempt);
        }
        // Shared work that ran out of time (the deadline of the call that started it) names
        // the lookup it ran; this call's error names the handle it is about, as its own
        // deadline would.
        out.map_err(|e| match e {
            ResolveError::Timeout { after, .. } => ResolveError::timeout(&self.origin, after),
            e => e,
        })
    }

    /// The attempts finished so far.
    pub(crate) fn attempts(&self) -> Vec<Attempt> {
        self.entries.lock().done.clone()
    }

    /// The attempts finished so far, taken out (for a resolution that has ended).
    pub(crate) fn take_attempts(&self) -> Vec<Attempt> {
        std::mem::take(&mut self.entries.lock().done)
    }

    /// Every attempt when the deadline has passed: those finished, those of the shared work
    /// still waited for (numbered after this resolution's own), and those still running (as
    /// failed at the deadline, with the time they had run).
    pub(crate) fn at_deadline(&self) -> Vec<Attempt> {
        let mut seen = Vec::new();
        let (mut out, shared, running, _) = self.snapshot(&mut seen);
        let base = reserve_numbers(&mut self.entries.lock(), &shared);
        for mut attempt in shared {
            attempt.number = attempt.number.saturating_add(base);
            out.push(attempt);
        }
        out.extend(running);
        out
    }

    /// Finished attempts, those of joined work (numbered after the highest number this
    /// trace has given out, in the order each joined trace numbered them; the shared traces
    /// themselves are not changed: one may belong to work still running for others), and
    /// running attempts marked as failed at the deadline. `seen` lists the traces already
    /// visited: concurrent parts of one resolution may wait for the same shared work, whose
    /// attempts are listed once.
    /// Also returns how many numbers this trace had given out when its lists were copied.
    fn snapshot(&self, seen: &mut Vec<*const Trace>) -> Snapshot {
        let (done, running, joined, numbered) = {
            let e = self.entries.lock();
            let joined: Vec<Arc<Trace>> = e.joined.iter().map(|(_, t)| t.clone()).collect();
            (e.done.clone(), e.running.clone(), joined, e.numbered)
        };
        let mut shared = Vec::new();
        for trace in joined {
            let ptr = Arc::as_ptr(&trace);
            if seen.contains(&ptr) {
                continue;
            }
            seen.push(ptr);
            let (d, j, r, own) = trace.snapshot(seen);
            // `trace` numbered its own attempts 1.. and its joined work after them: the lot
            // goes after the traces joined before it.
            let offset = shared.iter().map(|x: &Attempt| x.number).max().unwrap_or(0);
            for (nested, mut attempt) in d
                .into_iter()
                .map(|x| (false, x))
                .chain(j.into_iter().map(|x| (true, x)))
                .chain(r.into_iter().map(|x| (false, x)))
            {
                if nested {
                    attempt.number = attempt.number.saturating_add(own);
                }
                attempt.number = attempt.number.saturating_add(offset);
                shared.push(attempt);
            }
        }
        let running = running
            .into_iter()
            .map(
                |Running {
                     mut attempt,
                     started,
                     ..
                 }| {
                    attempt.rtt = started.elapsed();
                    attempt.outcome = AttemptOutcome::DeadlinePassed;
                    attempt
                },
            )
            .collect();
        (done, shared, running, numbered)
    }

    /// Counts one referral or service hop; an error past [`MAX_REFERRALS`].
    pub(crate) fn count_referral(&self) -> Result<(), ResolveError> {
        let n = self.referrals.fetch_add(1, Ordering::Relaxed) + 1;
        if n > MAX_REFERRALS {
            return Err(ResolveError::TooManyReferrals {
                handle: self.origin.clone(),
                limit: MAX_REFERRALS,
            });
        }
        Ok(())
    }

    /// True the first time only: whether this resolution may still trigger a root refresh.
    pub(crate) fn claim_refresh(&self) -> bool {
        !self.refreshed.swap(true, Ordering::Relaxed)
    }
}

/// An attempt in the trace: running while it runs, cancelled when dropped before it
/// finished (another answer won, or the deadline passed).
pub(crate) struct Recorded<'a> {
    trace: &'a Trace,
    token: u64,
    open: bool,
    pub(crate) started: Instant,
    session: Option<u32>,
}

impl<'a> Recorded<'a> {
    pub(crate) fn start(trace: &'a Trace, attempt: Attempt) -> Self {
        let started = Instant::now();
        let token = trace.start(attempt, started);
        Self {
            trace,
            token,
            open: true,
            started,
            session: None,
        }
    }

    /// The session the request goes in (recorded when the attempt ends).
    pub(crate) fn in_session(&mut self, session: Option<u32>) {
        self.session = session;
    }

    /// Records how the attempt ended, `rtt` after it started, after `transmissions`
    /// transmissions.
    pub(crate) fn finish(&mut self, outcome: AttemptOutcome, rtt: Duration, transmissions: u32) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        let session = self.session;
        self.trace.end(self.token, |a| {
            a.rtt = rtt;
            a.transmissions = transmissions;
            a.session = session;
            debug!(
                server = ?a.server,
                transport = %a.transport,
                attempt = a.number,
                rtt_ms = rtt.as_secs_f64() * 1000.0,
                transmissions,
                outcome = ?outcome,
                handle = %a.handle,
                "attempt"
            );
            a.outcome = outcome;
        });
    }
}

impl Drop for Recorded<'_> {
    fn drop(&mut self) {
        // `finish` checks `open` too; checked here first so that an attempt already
        // finished costs no clock read.
        if self.open {
            let rtt = self.started.elapsed();
            self.finish(AttemptOutcome::Cancelled, rtt, 0);
        }
    }
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
