//! The gateway against the answers recorded from the reference's proxy (issue 38).
//!
//! The set's `handles.json` is served by the library's loopback test server (as
//! `testserver --reference-store FILE --keep-sites` serves it), the real `handle-gateway`
//! binary runs with `--server` at it, and every request of `requests.jsonl` is sent to the
//! gateway byte for byte (its own `Host`). A request whose recorded answer is a redirect
//! (301, 302, 303, 307, 308) must match on status, `Location` (for a request the reference
//! answered at random: one of the answers it gave), `Link`, `Vary`, `Content-Type`, the CORS
//! headers, the `10320/headers` headers, `Expires` (present or not; its distance from `Date`
//! within 2 s) and, answered the same every time, the page. The other requests (part 2) are
//! counted, not asserted. Then the 9 distributions of `distributions.json` must agree with
//! the recorded shares within 5 points.
//!
//! Every request is sent twice (the gateway's cache on, as it runs by default): the second
//! answer, from the cache where the record may be kept, is compared the same way, and the
//! test says how its `X-Cache` headers read (that header, the gateway's own, is the one `x-*`
//! header not compared). Records from the cache expire when they would have on the fetch
//! (`Expires` counts down): the `Expires - Date` of an answer that resolved (one with
//! `X-Cache`) may be short of the recorded one by at most the time since the gateway
//! started, never longer.
//!
//! The set is the folder named by `HANDLE_GATEWAY_SET` (default `fixtures/gateway/`); the
//! test fails when it is missing. `HANDLE_GATEWAY_VERBOSE=1` lists what differs in the
//! requests that are not redirects. It names no handle of its own: every name comes from the
//! set's files.

mod compare;
mod http;
#[path = "../support/process.rs"]
mod process;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use handle_resolver::testing::{ReferenceStore, Store, TestServer, TestServerConfig};
use serde_json::Value as Json;

/// The set's folder.
fn set_dir() -> PathBuf {
    match std::env::var_os("HANDLE_GATEWAY_SET") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/gateway"),
    }
}

fn read(name: &str) -> String {
    let path = set_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the gateway set is missing: {}: {e} (HANDLE_GATEWAY_SET names the folder)",
            path.display()
        )
    })
}

fn start_gateway(server: SocketAddr) -> process::Running {
    // The recorded proxy matched `10320/loc` `addresses` against the client's address.
    process::start(&[
        "--listen",
        "127.0.0.1:0",
        "--server",
        &server.to_string(),
        "--match-client-address",
    ])
}

/// The raw bytes of a recorded request.
fn raw_request(request: &Json) -> Vec<u8> {
    let s = |k: &str| request[k].as_str().unwrap_or_default();
    let mut raw = format!("{} {} {}\r\n", s("method"), s("target"), s("http_version")).into_bytes();
    for h in request["headers"].as_array().into_iter().flatten() {
        let name = h[0].as_str().unwrap_or_default();
        let value = h[1].as_str().unwrap_or_default();
        raw.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    raw.extend_from_slice(b"\r\n");
    if let Some(body) = request["body"].as_str() {
        raw.extend_from_slice(body.as_bytes());
    }
    raw
}

/// The `Host` most requests of the set carry: the recording server's address.
fn recording_host(records: &[Json]) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        for h in r["request"]["headers"].as_array().into_iter().flatten() {
            if h[0].as_str() == Some("Host") {
                *counts
                    .entry(h[1].as_str().unwrap_or_default().to_owned())
                    .or_default() += 1;
            }
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(h, _)| h)
        .expect("the set's requests carry a Host")
}

/// The requests where the gateway answers otherwise on purpose (`deliberate.txt` beside this
/// file: a request id, then the reason; each is in gateway/README.md too), by id.
fn deliberate_differences() -> BTreeMap<String, String> {
    include_str!("deliberate.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(char::is_whitespace) {
            Some((id, reason)) => (id.to_owned(), reason.trim().to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

const REDIRECTS: [u64; 5] = [301, 302, 303, 307, 308];

/// How often a redirect whose answer is one the reference did not give is sent again (the
/// gateway draws at random where the reference did, also where one recorded pass happened
/// to give one answer only).
const TRIES: usize = 40;

/// One answer to `record` and what differs in it: a redirect the reference answered at random
/// is asked again (up to [`TRIES`] times) while the gateway's draw is one the reference did not
/// give. The answer, the differences, and whether it was asked again.
fn judged(
    record: &Json,
    send: &dyn Fn() -> http::Received,
    is_redirect: bool,
    context: &compare::Context,
) -> (http::Received, Vec<String>, bool) {
    let mut got = send();
    if !is_redirect {
        let problems = compare::other(record, &got, context);
        return (got, problems, false);
    }
    let mut problems = compare::redirect(record, &got, context);
    let mut tries = 1;
    while !problems.is_empty() && tries < TRIES && compare::choice_differs(record, &got, context) {
        got = send();
        problems = compare::redirect(record, &got, context);
        tries += 1;
    }
    (got, problems, tries > 1)
}

#[test]
fn the_gateway_answers_as_the_recorded_proxy() {
    let handles = ReferenceStore::parse(&read("handles.json")).expect("handles.json");
    let records: Vec<Json> = read("requests.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let distributions: Json = serde_json::from_str(&read("distributions.json")).expect("JSON");
    assert!(!records.is_empty(), "requests.jsonl is empty");

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let store = Arc::new(Store::case_insensitive());
    let server = runtime
        .block_on(TestServer::start(TestServerConfig::new(store.clone())))
        .expect("the test server starts");
    handles.fill_as_recorded(&store);
    let gateway = start_gateway(server.addr());
    let host = recording_host(&records);
    let context = compare::Context {
        recording_host: host.clone(),
        gateway: gateway.addr,
        started: std::time::SystemTime::now(),
    };

    let deliberate = deliberate_differences();
    let known: std::collections::BTreeSet<&str> =
        records.iter().filter_map(|r| r["id"].as_str()).collect();
    let mut failures: Vec<String> = deliberate
        .keys()
        .filter(|id| !known.contains(id.as_str()))
        .map(|id| format!("{id}: listed in deliberate.txt but not in the set"))
        .collect();
    let (mut redirects, mut redirect_ok, mut retried) = (0, 0, 0);
    let (mut others, mut others_ok, mut differ_as_listed) = (0, 0, 0);
    // The X-Cache of each second answer.
    let mut second_served: BTreeMap<String, usize> = BTreeMap::new();
    // HANDLE_GATEWAY_VERBOSE=1 prints what differs in the deliberate differences too.
    let verbose = std::env::var_os("HANDLE_GATEWAY_VERBOSE").is_some();
    // HANDLE_GATEWAY_DUMP=DIR writes the body of each answer that differs, and the recorded
    // one, to DIR (ID.got, ID.want) for a diff.
    let dump = std::env::var_os("HANDLE_GATEWAY_DUMP").map(PathBuf::from);
    let started = std::time::Instant::now();
    for record in &records {
        let id = record["id"].as_str().unwrap_or("?");
        let expected = &record["response"];
        let raw = raw_request(&record["request"]);
        let status = expected["status"].as_u64().unwrap_or(0);
        let send = || {
            http::exchange(gateway.addr, &raw).unwrap_or_else(|e| http::Received {
                status: 0,
                headers: vec![("x-test-error".into(), e.to_string())],
                body: Vec::new(),
            })
        };
        let is_redirect = REDIRECTS.contains(&status);
        // Every request twice: the second answer (from the cache, where the record may be
        // kept) must match the same way.
        let (got, mut problems, retried_first) = judged(record, &send, is_redirect, &context);
        let (second, problems_second, _) = judged(record, &send, is_redirect, &context);
        let served = second.first("x-cache").unwrap_or("(none)");
        *second_served.entry(served.to_owned()).or_default() += 1;
        if verbose && served != "hit" {
            println!("second answer {served}: {id}");
        }
        problems.extend(
            problems_second
                .into_iter()
                .map(|p| format!("second answer: {p}")),
        );
        if is_redirect {
            redirects += 1;
            if retried_first && problems.is_empty() {
                retried += 1;
            }
            if problems.is_empty() {
                redirect_ok += 1;
            }
        } else {
            others += 1;
            if problems.is_empty() {
                others_ok += 1;
            }
        }
        if let (Some(dir), false) = (&dump, problems.is_empty()) {
            compare::dump(dir, id, record, &got, &context);
        }
        match (deliberate.get(id), problems.is_empty()) {
            (None, true) => {}
            (None, false) => failures.push(format!("{id}: {}", problems.join("; "))),
            (Some(_), true) => failures.push(format!(
                "{id}: listed as a deliberate difference in deliberate.txt, but it matches"
            )),
            (Some(reason), false) => {
                differ_as_listed += 1;
                if verbose {
                    println!("deliberate: {id} ({reason}): {}", problems.join("; "));
                }
            }
        }
    }
    println!(
        "redirects: {redirect_ok} of {redirects} match ({retried} after another draw); \
         other requests: {others_ok} of {others} match; {differ_as_listed} differ as \
         deliberate.txt lists ({} listed, at most {})",
        deliberate.len(),
        records.len() * 3 / 100
    );
    let served: Vec<String> = second_served
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    println!(
        "second answers (X-Cache): {} of {}; the {} requests, twice, in {:.1} s",
        served.join(", "),
        records.len(),
        records.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        !second_served.contains_key("stale"),
        "a second answer was stale: the test server never fails"
    );
    assert!(
        deliberate.len() * 100 <= records.len() * 3,
        "{} deliberate differences listed: more than 3 % of the {} requests",
        deliberate.len(),
        records.len()
    );

    let mut distribution_failures = Vec::new();
    // Twice the recorded draws: the gateway's own sampling noise stays well under the
    // tolerance (at 4,000 draws a share's standard deviation is under 0.8 points).
    let n = 2 * distributions["n_per_case"].as_u64().unwrap_or(2000).max(1) as usize;
    let started = std::time::Instant::now();
    for case in distributions["cases"].as_array().expect("cases") {
        let (line, problems) = compare::distribution(case, n, &host, gateway.addr);
        println!("{line}");
        distribution_failures.extend(problems);
    }
    println!(
        "distributions: {} requests in {:.1} s",
        n * distributions["cases"].as_array().map_or(0, Vec::len),
        started.elapsed().as_secs_f64()
    );
    drop(gateway);
    drop(server);
    assert!(
        failures.is_empty() && distribution_failures.is_empty(),
        "{} requests differ:\n{}\ndistributions:\n{}",
        failures.len(),
        failures.join("\n"),
        distribution_failures.join("\n")
    );
}
