//! What the operator sees of the requests: Prometheus metrics (requests by status, a latency
//! histogram, the cache's answers by `X-Cache`, upstream errors, requests in flight) and an
//! access log in the combined format (Apache's `%h %l %u %t "%r" %>s %b "%{Referer}i"
//! "%{User-agent}i"`), one line per request, on stdout or appended to a file.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use axum::http::{HeaderValue, Method, Uri, Version};
use thiserror::Error;

/// The latency histogram's upper bounds, in seconds.
pub const LATENCY_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The `X-Cache` values counted (anything else counts as `other`).
const CACHE_STATES: [&str; 5] = ["hit", "miss", "stale", "bypass", "other"];

/// The statuses counted one by one: 100 to 999 (what `http::StatusCode` holds).
const FIRST_STATUS: u16 = 100;
const STATUSES: usize = 900;

/// The gateway's counters, written as Prometheus text by [`Metrics::render`]. Every counter
/// is an atomic, none behind a lock: each request adds to them from any worker thread.
#[derive(Debug)]
pub struct Metrics {
    /// Requests by status, index `status - 100`.
    by_status: Box<[AtomicU64]>,
    buckets: [AtomicU64; LATENCY_BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
    cache: [AtomicU64; CACHE_STATES.len()],
    upstream_errors: AtomicU64,
    timeouts: AtomicU64,
    rate_limited: AtomicU64,
    in_flight: AtomicI64,
}

/// Counts a request in flight until dropped.
#[derive(Debug)]
pub struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            by_status: (0..STATUSES).map(|_| AtomicU64::new(0)).collect(),
            buckets: Default::default(),
            count: AtomicU64::new(0),
            sum_micros: AtomicU64::new(0),
            cache: Default::default(),
            upstream_errors: AtomicU64::new(0),
            timeouts: AtomicU64::new(0),
            rate_limited: AtomicU64::new(0),
            in_flight: AtomicI64::new(0),
        }
    }
}

impl Metrics {
    /// A request begins.
    pub fn begin(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// A request ended with `status` after `elapsed`; `x_cache` is its `X-Cache` header.
    pub fn record(&self, status: u16, elapsed: Duration, x_cache: Option<&str>) {
        if let Some(n) = status
            .checked_sub(FIRST_STATUS)
            .and_then(|i| self.by_status.get(usize::from(i)))
        {
            n.fetch_add(1, Ordering::Relaxed);
        }
        let secs = elapsed.as_secs_f64();
        for (bound, bucket) in LATENCY_BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
        if let Some(x) = x_cache {
            let i = CACHE_STATES
                .iter()
                .position(|s| x.trim().eq_ignore_ascii_case(s))
                .unwrap_or(CACHE_STATES.len() - 1);
            self.cache[i].fetch_add(1, Ordering::Relaxed);
        }
        // A 5xx of a resolution (the upstream failed or answered what cannot be served).
        if status == 500 || status == 502 || status == 503 {
            self.upstream_errors.fetch_add(1, Ordering::Relaxed);
        }
        if status == 504 {
            self.timeouts.fetch_add(1, Ordering::Relaxed);
        }
        if status == 429 {
            self.rate_limited.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The counters in the Prometheus text format (version 0.0.4).
    ///
    /// ```
    /// use std::time::Duration;
    /// use handle_gateway::server::observe::Metrics;
    /// let m = Metrics::default();
    /// m.record(302, Duration::from_millis(3), Some("hit"));
    /// let text = m.render();
    /// assert!(text.contains("handle_gateway_requests_total{status=\"302\"} 1"));
    /// assert!(text.contains("handle_gateway_cache_total{result=\"hit\"} 1"));
    /// ```
    pub fn render(&self) -> String {
        let mut t = String::new();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        t.push_str("# HELP handle_gateway_requests_total Requests answered, by status.\n");
        t.push_str("# TYPE handle_gateway_requests_total counter\n");
        for (status, n) in (FIRST_STATUS..).zip(self.by_status.iter()) {
            let n = load(n);
            if n > 0 {
                let _ = writeln!(
                    t,
                    "handle_gateway_requests_total{{status=\"{status}\"}} {n}"
                );
            }
        }
        t.push_str("# HELP handle_gateway_request_duration_seconds Time to answer a request.\n");
        t.push_str("# TYPE handle_gateway_request_duration_seconds histogram\n");
        for (bound, bucket) in LATENCY_BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                t,
                "handle_gateway_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                load(bucket)
            );
        }
        let count = load(&self.count);
        let _ = writeln!(
            t,
            "handle_gateway_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = load(&self.sum_micros) as f64 / 1e6;
        let _ = writeln!(t, "handle_gateway_request_duration_seconds_sum {sum}");
        let _ = writeln!(t, "handle_gateway_request_duration_seconds_count {count}");
        t.push_str("# HELP handle_gateway_cache_total Answers by the cache's X-Cache result.\n");
        t.push_str("# TYPE handle_gateway_cache_total counter\n");
        for (state, n) in CACHE_STATES.iter().zip(&self.cache) {
            let _ = writeln!(
                t,
                "handle_gateway_cache_total{{result=\"{state}\"}} {}",
                load(n)
            );
        }
        for (name, help, n) in [
            (
                "handle_gateway_upstream_errors_total",
                "Answers 500, 502 or 503: a resolution failed.",
                &self.upstream_errors,
            ),
            (
                "handle_gateway_timeouts_total",
                "Requests over request_timeout_ms (answered 504).",
                &self.timeouts,
            ),
            (
                "handle_gateway_rate_limited_total",
                "Requests over the per-client rate (answered 429).",
                &self.rate_limited,
            ),
        ] {
            let _ = writeln!(
                t,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                load(n)
            );
        }
        t.push_str("# HELP handle_gateway_in_flight Requests being answered.\n");
        t.push_str("# TYPE handle_gateway_in_flight gauge\n");
        let _ = writeln!(
            t,
            "handle_gateway_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        t
    }
}

/// Why the access log cannot be opened.
#[derive(Debug, Error)]
#[error("access_log {path}: cannot open: {source}", path = path.display())]
pub struct AccessLogError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Where the access log goes.
#[derive(Debug)]
pub enum AccessLog {
    /// Standard output.
    Stdout,
    /// Appended to a file through a 64 KiB buffer of whole lines, which
    /// [`AccessLog::flush`] writes out (the server flushes it every second and when it
    /// stops): a `write` of each line took a system call per request (BENCHMARKS.md §18).
    File(Mutex<std::io::BufWriter<std::fs::File>>),
}

/// The buffer of an access log file.
const LOG_BUFFER: usize = 64 * 1024;

impl AccessLog {
    /// `stdout`, or a file path (created, appended to).
    pub fn open(target: &str) -> Result<AccessLog, AccessLogError> {
        if target == "stdout" || target == "-" {
            return Ok(AccessLog::Stdout);
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(target)
            .map(|f| AccessLog::File(Mutex::new(std::io::BufWriter::with_capacity(LOG_BUFFER, f))))
            .map_err(|source| AccessLogError {
                path: target.into(),
                source,
            })
    }

    /// Writes one line (a failed write is dropped: the log never stops a request).
    pub fn write(&self, line: &str) {
        match self {
            AccessLog::Stdout => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(line.as_bytes());
                let _ = out.flush();
            }
            AccessLog::File(f) => {
                if let Ok(mut f) = f.lock() {
                    let _ = f.write_all(line.as_bytes());
                }
            }
        }
    }

    /// Writes out the lines buffered for the file.
    pub fn flush(&self) {
        if let AccessLog::File(f) = self {
            if let Ok(mut f) = f.lock() {
                let _ = f.flush();
            }
        }
    }
}

/// Text of a log field onto `out`: `"` and `\` escaped, control and non-ASCII bytes as
/// `\xHH`.
fn escape(out: &mut String, text: &[u8]) {
    let plain = |b: u8| (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\';
    let mut rest = text;
    while !rest.is_empty() {
        // The run of bytes written as they are, in one push.
        let run = rest.iter().position(|&b| !plain(b)).unwrap_or(rest.len());
        let (ascii, after) = rest.split_at(run);
        // Printable ASCII only: always UTF-8.
        out.push_str(std::str::from_utf8(ascii).unwrap_or_default());
        let Some((&b, after)) = after.split_first() else {
            break;
        };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
        rest = after;
    }
}

/// `ip` as text onto `out` (an IPv4 address octet by octet).
fn push_ip(out: &mut String, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            let mut digits = itoa::Buffer::new();
            for (i, octet) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                out.push_str(digits.format(octet));
            }
        }
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}

thread_local! {
    /// The last second a log line was dated with, and its text: a second's lines share it.
    static LOG_DATE: RefCell<(i64, String)> = const { RefCell::new((i64::MIN, String::new())) };
}

/// `at` as the combined format dates a line (`29/Nov/2026:14:00:00 +0000`), onto `out`.
fn log_date(out: &mut String, at: time::OffsetDateTime) {
    let second = at.unix_timestamp();
    LOG_DATE.with_borrow_mut(|(cached, text)| {
        if *cached != second || text.is_empty() {
            *text = at
                .format(time::macros::format_description!(
                    "[day]/[month repr:short]/[year]:[hour]:[minute]:[second] [offset_hour sign:mandatory][offset_minute]"
                ))
                .unwrap_or_default();
            *cached = second;
        }
        out.push_str(text);
    });
}

/// One request in the combined log format, with its newline; `referer` and `user_agent` are
/// the request's headers of those names.
///
/// ```
/// use axum::http::{Method, Uri, Version};
/// use handle_gateway::server::observe::combined_line;
/// let t = time::macros::datetime!(2026-11-29 14:00:00 UTC);
/// let uri: Uri = "/20.500.1/demo?x=1".parse().unwrap();
/// let line = combined_line("192.0.2.1".parse().unwrap(), t, &Method::GET, &uri,
///     Version::HTTP_11, 302, Some(0), None, None);
/// assert_eq!(line, "192.0.2.1 - - [29/Nov/2026:14:00:00 +0000] \
///     \"GET /20.500.1/demo?x=1 HTTP/1.1\" 302 - \"-\" \"-\"\n");
/// ```
#[allow(clippy::too_many_arguments)]
pub fn combined_line(
    client: IpAddr,
    at: time::OffsetDateTime,
    method: &Method,
    uri: &Uri,
    version: Version,
    status: u16,
    bytes: Option<u64>,
    referer: Option<&HeaderValue>,
    user_agent: Option<&HeaderValue>,
) -> String {
    // One string, written in order (BENCHMARKS.md §18: the line was 6,700 instructions);
    // numbers through itoa, not `fmt` (`{client}` alone was 960 of the line's 2,850).
    let target = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    let mut line = String::with_capacity(128 + target.len());
    push_ip(&mut line, client);
    line.push_str(" - - [");
    log_date(&mut line, at);
    line.push_str("] \"");
    escape(&mut line, method.as_str().as_bytes());
    line.push(' ');
    escape(&mut line, target.as_bytes());
    line.push(' ');
    line.push_str(match version {
        Version::HTTP_09 => "HTTP/0.9",
        Version::HTTP_10 => "HTTP/1.0",
        Version::HTTP_11 => "HTTP/1.1",
        Version::HTTP_2 => "HTTP/2.0",
        Version::HTTP_3 => "HTTP/3.0",
        _ => "HTTP/?",
    });
    line.push_str("\" ");
    let mut digits = itoa::Buffer::new();
    line.push_str(digits.format(status));
    line.push(' ');
    match bytes {
        Some(0) | None => line.push('-'),
        Some(n) => line.push_str(digits.format(n)),
    }
    for value in [referer, user_agent] {
        line.push_str(" \"");
        match value {
            Some(v) => escape(&mut line, v.as_bytes()),
            None => line.push('-'),
        }
        line.push('"');
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_count_and_escape() {
        let m = Metrics::default();
        {
            let _g = m.begin();
            assert!(m.render().contains("handle_gateway_in_flight 1"));
        }
        m.record(200, Duration::from_millis(20), Some("miss"));
        m.record(500, Duration::from_secs(20), None);
        let t = m.render();
        assert!(t.contains("handle_gateway_in_flight 0"), "{t}");
        assert!(t.contains("handle_gateway_request_duration_seconds_bucket{le=\"0.025\"} 1"));
        assert!(t.contains("handle_gateway_request_duration_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(t.contains("handle_gateway_upstream_errors_total 1"));
        assert!(t.contains("handle_gateway_cache_total{result=\"miss\"} 1"));
        let mut escaped = String::new();
        escape(&mut escaped, b"a\"b\\\n\xff");
        assert_eq!(escaped, "a\\\"b\\\\\\x0a\\xff");
    }
}
