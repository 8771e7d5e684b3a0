//! A recorded answer against the gateway's.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::SystemTime;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::Value as Json;

use crate::http::{KeepAlive, Received};

/// Where the recording was made and where the gateway runs.
pub struct Context {
    /// The recording server's `Host` (its address).
    pub recording_host: String,
    /// The gateway's address.
    pub gateway: SocketAddr,
    /// When the gateway started: no record in its cache is older.
    pub started: SystemTime,
}

impl Context {
    /// A recorded URL or page naming the recording server, for a request without `Host`:
    /// the reference named its own address there, the gateway names its own.
    fn localize(&self, record: &Json, url: &str) -> String {
        let has_host = record["request"]["headers"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|h| {
                h[0].as_str()
                    .is_some_and(|n| n.eq_ignore_ascii_case("host"))
            });
        if has_host {
            url.to_owned()
        } else {
            url.replace(
                &format!("//{}/", self.recording_host),
                &format!("//{}/", self.gateway),
            )
        }
    }
}

/// The values of a header list, each line split at commas, trimmed.
fn tokens(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .flat_map(|l| l.split(','))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

fn recorded_list(selected: &Json, name: &str) -> Vec<String> {
    match &selected[name] {
        Json::Array(a) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        Json::String(s) => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn time(text: &str) -> Option<SystemTime> {
    httpdate::parse_http_date(text).ok()
}

/// Seconds from `b` to `a` (negative when `a` is earlier).
fn seconds(a: SystemTime, b: SystemTime) -> i64 {
    match a.duration_since(b) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// The (status, Location) pairs the reference gave over its passes.
fn seen(record: &Json, context: &Context) -> BTreeSet<(u16, String)> {
    let mut out = BTreeSet::new();
    if let Some(map) = record["repeats"]["status_location_seen"].as_object() {
        for key in map.keys() {
            let (status, location) = key.split_once(' ').unwrap_or((key, ""));
            if let Ok(s) = status.parse() {
                out.insert((s, context.localize(record, location)));
            }
        }
    }
    let r = &record["response"];
    out.insert((
        r["status"].as_u64().unwrap_or(0) as u16,
        context.localize(record, r["selected"]["location"].as_str().unwrap_or("")),
    ));
    out
}

/// True when the gateway's (status, Location) is not one the reference gave.
pub fn choice_differs(record: &Json, got: &Received, context: &Context) -> bool {
    let pair = (got.status, got.first("location").unwrap_or("").to_owned());
    !seen(record, context).contains(&pair)
}

/// The headers compared on every answer: Content-Type, Vary, CORS, x-* (but the gateway's
/// own X-Cache), Expires (for an answer with `X-Cache`, which may use records from the
/// gateway's cache, counted down by at most the time since the gateway started).
fn common(record: &Json, got: &Received, context: &Context, problems: &mut Vec<String>) {
    let selected = &record["response"]["selected"];
    let ct = selected["content-type"].as_str();
    if ct != got.first("content-type") {
        problems.push(format!(
            "Content-Type {:?}, recorded {ct:?}",
            got.first("content-type")
        ));
    }
    let vary = tokens(&got.all("vary"));
    let want = tokens(&recorded_list(selected, "vary"));
    if vary != want {
        problems.push(format!("Vary {vary:?}, recorded {want:?}"));
    }
    let names: BTreeSet<String> = selected
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .chain(got.headers.iter().map(|(k, _)| k.clone()))
        .filter(|k| {
            // X-Cache is the gateway's own (its cache: hit, miss, bypass, stale).
            k.starts_with("access-control-")
                || (k.starts_with("x-") && k != "x-test-error" && k != "x-cache")
        })
        .collect();
    for name in names {
        let mine = got.all(&name);
        let theirs = recorded_list(selected, &name);
        if mine != theirs {
            problems.push(format!("{name} {mine:?}, recorded {theirs:?}"));
        }
    }
    let recorded = selected["expires_minus_date_s"].as_i64();
    let expires = got.first("expires").and_then(time);
    let date = got.first("date").and_then(time);
    match (recorded, expires, date) {
        (None, None, _) => {}
        (Some(want), Some(exp), Some(date)) => {
            let mine = seconds(exp, date);
            let absolute = selected["expires"]
                .as_str()
                .and_then(time)
                .is_some_and(|r| seconds(exp, r).abs() <= 2);
            // The reference's location cache (included and namespace handles): after the
            // first request its expiry counts down from one hour; the gateway's is the hour.
            let cached = (3_000..3_600).contains(&want) && (want..=3_602).contains(&mine);
            // An answer made of records from the gateway's cache expires when they do: their
            // relative TTLs count down from the fetch, at most as long ago as the gateway
            // started. (Any answer that resolved, `X-Cache` of any value: a `miss` may have
            // resolved one handle of an alias chain and found the next in the cache.) Never
            // later than the reference's.
            let age = if got.first("x-cache").is_some() {
                seconds(SystemTime::now(), context.started).max(0)
            } else {
                0
            };
            if (mine > want + 2 || mine < want - 2 - age) && !absolute && !cached {
                problems.push(format!("Expires - Date {mine} s, recorded {want} s"));
            }
        }
        (want, _, _) => problems.push(format!(
            "Expires {:?}, recorded Expires - Date {want:?}",
            got.first("expires")
        )),
    }
}

/// What differs in a redirect.
pub fn redirect(record: &Json, got: &Received, context: &Context) -> Vec<String> {
    let mut problems = Vec::new();
    if choice_differs(record, got, context) {
        problems.push(format!(
            "{} {:?}, recorded {:?}",
            got.status,
            got.first("location"),
            seen(record, context)
        ));
    }
    let selected = &record["response"]["selected"];
    let links = got.all("link");
    let want = recorded_list(selected, "link");
    if links != want {
        problems.push(format!("Link {links:?}, recorded {want:?}"));
    }
    common(record, got, context, &mut problems);
    let deterministic = !record["nondeterministic"].as_bool().unwrap_or(false);
    if deterministic && got.status == record["response"]["status"].as_u64().unwrap_or(0) as u16 {
        if let Some(text) = record["response"]["body_text"].as_str() {
            let mine = String::from_utf8_lossy(&got.body);
            if mine != text {
                problems.push(format!("page {mine:?}, recorded {text:?}"));
            }
        }
    }
    problems
}

/// What differs in another answer: status, `Location`, the common headers, `Allow`,
/// `Cache-Control`, `Content-Length` of a HEAD (the length of the page a GET would get), and
/// the body (the JSON parsed, a page or any other text byte for byte, binary bytes).
pub fn other(record: &Json, got: &Received, context: &Context) -> Vec<String> {
    let mut problems = Vec::new();
    let r = &record["response"];
    if u64::from(got.status) != r["status"].as_u64().unwrap_or(0) {
        problems.push(format!("status {}", got.status));
    }
    let location = r["selected"]["location"]
        .as_str()
        .map(|l| context.localize(record, l));
    if got.first("location").map(str::to_owned) != location {
        problems.push(format!(
            "Location {:?}, recorded {location:?}",
            got.first("location")
        ));
    }
    common(record, got, context, &mut problems);
    for name in ["allow", "cache-control"] {
        let mine = got.all(name);
        let theirs = recorded_list(&r["selected"], name);
        if mine != theirs {
            problems.push(format!("{name} {mine:?}, recorded {theirs:?}"));
        }
    }
    if record["request"]["method"].as_str() == Some("HEAD") {
        let theirs = r["selected"]["content-length"].as_str();
        if theirs.is_some() && got.first("content-length") != theirs {
            problems.push(format!(
                "Content-Length {:?}, recorded {theirs:?}",
                got.first("content-length")
            ));
        }
    }
    let mine = String::from_utf8_lossy(&got.body);
    if let Some(want) = r.get("body_json").filter(|j| !j.is_null()) {
        let parsed: Option<Json> = serde_json::from_slice(&got.body).ok();
        if parsed.as_ref() != Some(want) {
            problems.push(format!(
                "JSON body {}",
                first_difference(&mine, &want.to_string())
            ));
        }
    } else if let Some(b64) = r["body_base64"].as_str() {
        if BASE64.decode(b64).ok().as_deref() != Some(&got.body[..]) {
            problems.push(format!(
                "body ({} bytes) differs from the recorded bytes",
                got.body.len()
            ));
        }
    } else {
        let want = context.localize(record, r["body_text"].as_str().unwrap_or(""));
        if mine != want {
            problems.push(format!("body {}", first_difference(&mine, &want)));
        }
    }
    problems
}

/// Where `mine` and `want` part, with up to 60 characters of each from there.
fn first_difference(mine: &str, want: &str) -> String {
    let at = mine
        .char_indices()
        .zip(want.chars())
        .find(|((_, a), b)| a != b)
        .map_or(mine.len().min(want.len()), |((i, _), _)| i);
    let start = mine[..at.min(mine.len())]
        .char_indices()
        .rev()
        .nth(20)
        .map_or(0, |(i, _)| i);
    let part = |s: &str| -> String { s.get(start..).unwrap_or("").chars().take(80).collect() };
    format!(
        "differs at byte {at}: {:?}, recorded {:?}",
        part(mine),
        part(want)
    )
}

/// Writes the gateway's body and the recorded one of request `id` to `dir` (`ID.got`,
/// `ID.want`, the id's `/` and `:` as `_`).
pub fn dump(dir: &std::path::Path, id: &str, record: &Json, got: &Received, context: &Context) {
    let name: String = id
        .chars()
        .map(|c| if c == '/' || c == ':' { '_' } else { c })
        .collect();
    let want = context.localize(
        record,
        record["response"]["body_text"].as_str().unwrap_or(""),
    );
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(format!("{name}.got")), &got.body);
    let _ = std::fs::write(dir.join(format!("{name}.want")), want);
}

/// One distribution: the line to print and what differs by more than 5 points.
pub fn distribution(
    case: &Json,
    n: usize,
    host: &str,
    gateway: SocketAddr,
) -> (String, Vec<String>) {
    let handle = case["handle"].as_str().unwrap_or_default();
    let query = case["query"].as_str().unwrap_or_default();
    let mut raw = format!(
        "GET /{handle}{}{query} HTTP/1.1\r\nHost: {host}\r\n",
        if query.is_empty() || query.starts_with('?') {
            ""
        } else {
            "?"
        }
    );
    for h in case["headers"].as_array().into_iter().flatten() {
        raw.push_str(&format!(
            "{}: {}\r\n",
            h[0].as_str().unwrap_or_default(),
            h[1].as_str().unwrap_or_default()
        ));
    }
    raw.push_str("\r\n");
    let recorded: BTreeMap<String, u64> = case["location_counts"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
        .collect();
    let total: u64 = recorded.values().sum::<u64>().max(1);
    let mut mine: BTreeMap<String, u64> = BTreeMap::new();
    let mut conn = KeepAlive::connect(gateway).expect("a connection to the gateway");
    for _ in 0..n {
        let got = conn.exchange(raw.as_bytes()).expect("an answer");
        let key = format!("{} {}", got.status, got.first("location").unwrap_or(""));
        *mine.entry(key).or_default() += 1;
    }
    let mine: BTreeMap<String, u64> = mine
        .into_iter()
        .map(|(k, v)| (k.strip_prefix("302 ").map_or(k.clone(), str::to_owned), v))
        .collect();
    let keys: BTreeSet<&String> = recorded.keys().chain(mine.keys()).collect();
    let mut problems = Vec::new();
    let mut parts = Vec::new();
    for k in keys {
        let want = *recorded.get(k).unwrap_or(&0) as f64 / total as f64;
        let got = *mine.get(k).unwrap_or(&0) as f64 / n as f64;
        parts.push(format!(
            "{k} {:.1}% (recorded {:.1}%)",
            got * 100.0,
            want * 100.0
        ));
        if (got - want).abs() > 0.05 {
            problems.push(format!(
                "{} {query}: {k} {:.3}, recorded {:.3}",
                case["handle_key"].as_str().unwrap_or(handle),
                got,
                want
            ));
        }
    }
    (
        format!(
            "distribution {} {query}: {}",
            case["handle_key"].as_str().unwrap_or(handle),
            parts.join(", ")
        ),
        problems,
    )
}
