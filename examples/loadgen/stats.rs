//! `loadgen`'s measures: the counts, latencies and CPU seconds of one run ([`Stats`]), and
//! the resident memory sampled while the runs go on.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::json;

/// Adds up the counts of the client tasks of one measurement (a task that failed counts as
/// one error), with the latencies they recorded.
pub(crate) async fn join_stats(
    tasks: Vec<tokio::task::JoinHandle<Stats>>,
    latencies: &Latencies,
) -> Stats {
    let mut all = Stats::default();
    for t in tasks {
        match t.await {
            Ok(s) => {
                all.ok += s.ok;
                all.errors += s.errors;
            }
            Err(_) => all.errors += 1,
        }
    }
    all.latencies = Some(latencies.take());
    all
}

/// The latencies of one measurement, in microseconds: one histogram (3 significant digits)
/// that all its client tasks record into, so that the memory they take does not grow with
/// N. (A list of every latency grew by 4 bytes a resolution: 16 MB in a soak of 4 million,
/// which hid whether the library's own memory stays flat.)
#[derive(Clone)]
pub(crate) struct Latencies(Arc<parking_lot::Mutex<Histogram<u64>>>);

impl Latencies {
    pub(crate) fn new() -> Self {
        Self(Arc::new(parking_lot::Mutex::new(empty_histogram())))
    }

    /// Records the time since `start`.
    pub(crate) fn record(&self, start: Instant) {
        let us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.0.lock().saturating_record(us);
    }

    /// What was recorded, leaving an empty histogram.
    pub(crate) fn take(&self) -> Histogram<u64> {
        std::mem::replace(&mut *self.0.lock(), empty_histogram())
    }
}

/// 1 µs to an hour (a longer latency counts as an hour), 3 significant digits (within
/// 0.1 %).
pub(crate) fn empty_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

/// Outcome of one measured run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stats {
    pub(crate) ok: usize,
    pub(crate) errors: usize,
    pub(crate) elapsed: Duration,
    /// Latencies of the successful requests, microseconds.
    pub(crate) latencies: Option<Histogram<u64>>,
    /// CPU seconds of the client during the run (the process less the built-in server).
    pub(crate) cpu: f64,
}

impl Stats {
    /// Adds another slice of the same measurement.
    pub(crate) fn absorb(&mut self, other: Stats) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.elapsed += other.elapsed;
        self.cpu += other.cpu;
        match (&mut self.latencies, other.latencies) {
            // The same bounds, so adding cannot fall out of range.
            (Some(mine), Some(theirs)) => {
                let _ = mine.add(theirs);
            }
            (mine @ None, theirs) => *mine = theirs,
            (Some(_), None) => {}
        }
    }
    pub(crate) fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    pub(crate) fn pct(&self, p: u32) -> u64 {
        self.latencies
            .as_ref()
            .map_or(0, |h| h.value_at_quantile(f64::from(p) / 100.0))
    }
    pub(crate) fn max(&self) -> u64 {
        self.latencies.as_ref().map_or(0, Histogram::max)
    }
    pub(crate) fn cpu_per_100k(&self) -> f64 {
        self.cpu * 100_000.0 / (self.ok.max(1) as f64)
    }
    pub(crate) fn json(&self, with_cpu: bool) -> serde_json::Value {
        let mut v = json!({
            "resolutions_per_s": self.rate().round(),
            "ok": self.ok,
            "errors": self.errors,
            "seconds": self.elapsed.as_secs_f64(),
            "p50_us": self.pct(50),
            "p99_us": self.pct(99),
            "max_us": self.max(),
        });
        if with_cpu {
            v["cpu_s_per_100k"] = json!(self.cpu_per_100k());
        }
        v
    }
    pub(crate) fn text(&self, with_cpu: bool) -> String {
        let cpu = if with_cpu {
            format!(" cpu {:.2}s/100k", self.cpu_per_100k())
        } else {
            String::new()
        };
        format!(
            "{:>8.0}/s p50 {}us p99 {}us max {}us errors {}{cpu}",
            self.rate(),
            self.pct(50),
            self.pct(99),
            self.max(),
            self.errors
        )
    }
}

/// User + system CPU seconds of the client: the whole process (`/proc/self/stat`, which
/// keeps the time of threads that have ended, such as the raw loop's) less the built-in
/// server's threads (named `testserver`, alive for the whole run, from
/// `/proc/self/task/*/stat`).
pub(crate) fn cpu_seconds() -> f64 {
    let process = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| stat_cpu(&stat).map(|(_, cpu)| cpu))
        .unwrap_or(0.0);
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return process;
    };
    let mut server = 0.0;
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        if let Some((name, cpu)) = stat_cpu(&stat) {
            if name.starts_with("testserver") {
                server += cpu;
            }
        }
    }
    process - server
}

/// A process's or thread's name and user + system CPU seconds, from its `stat` line.
pub(crate) fn stat_cpu(stat: &str) -> Option<(&str, f64)> {
    // `pid (comm) state ...`: the name is between the first '(' and the last ')'.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat.get(open + 1..close)?;
    // Fields 14 and 15 (utime, stime) in clock ticks; USER_HZ is 100 on Linux.
    let f: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    Some((name, (tick(11) + tick(12)) / 100.0))
}

/// Times `work` and fills in the elapsed time and CPU used.
pub(crate) fn measured(work: impl FnOnce() -> Stats) -> Stats {
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    let mut s = work();
    s.elapsed = t0.elapsed();
    s.cpu = cpu_seconds() - cpu0;
    s
}

pub(crate) fn median_of(runs: &[Stats]) -> Stats {
    let mut v: Vec<&Stats> = runs.iter().collect();
    v.sort_by(|a, b| a.rate().total_cmp(&b.rate()));
    v.get(v.len() / 2).map(|s| (*s).clone()).unwrap_or_default()
}

/// Samples the resident memory every 200 ms on a thread of its own while the runs go on.
pub(crate) struct RssSampler {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl RssSampler {
    pub(crate) fn start() -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                samples.push(rss_kb());
                std::thread::sleep(Duration::from_millis(200));
            }
            samples
        });
        RssSampler { stop, thread }
    }

    /// The samples at 1/4, 1/2, 3/4 and the end of the time, and the highest one.
    pub(crate) fn stop(self) -> ([u64; 4], u64) {
        self.stop.store(true, Ordering::Relaxed);
        let samples = self.thread.join().unwrap_or_default();
        let at = |num: usize| {
            let i = (samples.len() * num / 4).min(samples.len().saturating_sub(1));
            samples.get(i).copied().unwrap_or(0)
        };
        let peak = samples.iter().copied().max().unwrap_or(0);
        ([at(1), at(2), at(3), at(4)], peak)
    }
}

/// Resident set size of this process in kB (`VmRSS` of `/proc/self/status`; 0 if unknown).
pub(crate) fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
