//! Hedged attempts over an ordered list of candidates: start the first; when it has not
//! finished within its hedge delay, or as soon as it fails, start the next; the first success
//! wins and every other attempt still running is dropped (which cancels it).
//!
//! Bounded: at most `candidates` attempts in all and at most `max_parallel` at once.

use std::future::Future;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use tokio::time::{sleep_until, Instant};

/// Runs the race. `start(i)` builds the attempt for candidate `i`; `delay(i)` is how long to
/// wait for candidate `i` before also starting candidate `i + 1`. Returns the winning index
/// and value, or every error in the order the attempts failed.
pub(crate) async fn race<T, E, F, Fut, D>(
    candidates: usize,
    max_parallel: usize,
    mut start: F,
    delay: D,
) -> Result<(usize, T), Vec<(usize, E)>>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = Result<T, E>>,
    D: Fn(usize) -> Duration,
{
    let max_parallel = max_parallel.max(1);
    let mut errors = Vec::new();
    let mut running = FuturesUnordered::new();
    let mut next = 0usize;
    let mut hedge_at = Instant::now();
    loop {
        // Start a candidate when nothing runs, or when the hedge timer has fired.
        if next < candidates
            && running.len() < max_parallel
            && (running.is_empty() || Instant::now() >= hedge_at)
        {
            let i = next;
            next += 1;
            let fut = start(i);
            running.push(async move { (i, fut.await) });
            hedge_at = Instant::now() + delay(i);
            continue;
        }
        if running.is_empty() {
            return Err(errors);
        }
        let can_hedge = next < candidates && running.len() < max_parallel;
        tokio::select! {
            biased;
            Some((i, result)) = running.next() => match result {
                Ok(v) => return Ok((i, v)),
                Err(e) => {
                    errors.push((i, e));
                    // A failure frees the way for the next candidate at once.
                    hedge_at = Instant::now();
                }
            },
            () = sleep_until(hedge_at), if can_hedge => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use tokio::time::sleep;

    /// Candidate i answers Ok after `times[i]` ms, or Err after that long when negative.
    async fn scripted(times: &[i64], started: Arc<AtomicUsize>, i: usize) -> Result<usize, usize> {
        started.fetch_add(1, Ordering::SeqCst);
        let t = times[i];
        sleep(Duration::from_millis(t.unsigned_abs())).await;
        if t >= 0 {
            Ok(i)
        } else {
            Err(i)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn fast_first_candidate_wins_without_hedging() {
        let started = Arc::new(AtomicUsize::new(0));
        let times = [10, 10, 10];
        let r = race(
            3,
            3,
            |i| scripted(&times, started.clone(), i),
            |_| Duration::from_millis(100),
        )
        .await;
        assert_eq!(r.unwrap(), (0, 0));
        assert_eq!(started.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn silent_first_candidate_is_hedged_after_its_delay() {
        let started = Arc::new(AtomicUsize::new(0));
        let times = [60_000, 20, 20];
        let t0 = Instant::now();
        let r = race(
            3,
            3,
            |i| scripted(&times, started.clone(), i),
            |_| Duration::from_millis(100),
        )
        .await;
        assert_eq!(r.unwrap(), (1, 1));
        assert_eq!(t0.elapsed(), Duration::from_millis(120));
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn failure_starts_the_next_at_once_and_all_errors_are_reported() {
        let started = Arc::new(AtomicUsize::new(0));
        let times = [-5, -5, -5];
        let t0 = Instant::now();
        let r = race(
            3,
            3,
            |i| scripted(&times, started.clone(), i),
            |_| Duration::from_secs(10),
        )
        .await;
        let errors: Vec<usize> = r.unwrap_err().into_iter().map(|(i, _)| i).collect();
        assert_eq!(errors, vec![0, 1, 2]);
        assert_eq!(t0.elapsed(), Duration::from_millis(15));
    }

    #[tokio::test(start_paused = true)]
    async fn parallelism_is_bounded() {
        let started = Arc::new(AtomicUsize::new(0));
        let times = [1_000, 1_000, 1_000, 1_000, 5];
        let r = race(
            5,
            2,
            |i| scripted(&times, started.clone(), i),
            |_| Duration::from_millis(10),
        )
        .await;
        // Only two run at once, so candidate 4 starts after the first finishes.
        assert_eq!(r.unwrap(), (0, 0));
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn no_candidates_is_an_empty_error() {
        let r: Result<(usize, ()), Vec<(usize, ())>> =
            race(0, 3, |_| async { Ok(()) }, |_| Duration::ZERO).await;
        assert!(r.unwrap_err().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn losers_are_dropped() {
        struct Guard(Arc<AtomicUsize>);
        impl Drop for Guard {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicUsize::new(0));
        let d2 = dropped.clone();
        let r = race(
            2,
            2,
            move |i| {
                let g = Guard(d2.clone());
                async move {
                    let _g = g;
                    sleep(Duration::from_millis(if i == 0 { 10_000 } else { 10 })).await;
                    Ok::<usize, ()>(i)
                }
            },
            |_| Duration::from_millis(50),
        )
        .await;
        assert_eq!(r.unwrap(), (1, 1));
        assert_eq!(dropped.load(Ordering::SeqCst), 2);
    }
}
