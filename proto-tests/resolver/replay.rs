//! Replay: a scripted exchange answers from the reference captures in `fixtures/reference/`
//! (request id and expiration patched in, as the captures README's "Time" section says, or
//! left as captured with the resolver's clock set to the capture time), and the resolver must
//! come out with the values of `decoded.json`.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::future::BoxFuture;
use handle_resolver::transport::{
    Exchange, ExchangeOptions, Exchanged, TransportError, TransportKind,
};
use handle_resolver::wire::{Body, HandleValue, Limits, Message, SiteInfo};
use handle_resolver::{FixedClock, Query, Resolver};
use serde_json::Value;

use crate::support::captures::{scenario, Direction, Scenario};

/// Answers a request with the captured response to the captured request for the same handle.
struct Replay {
    answers: Vec<(String, Message)>,
    patch: bool,
    asked: Mutex<Vec<String>>,
}

fn handle_of(m: &Message) -> String {
    match &m.body {
        Body::ResolutionRequest(r) => String::from_utf8_lossy(&r.handle).into_owned(),
        Body::ResolutionResponse(r) => String::from_utf8_lossy(&r.handle).into_owned(),
        _ => String::new(),
    }
}

impl Replay {
    fn new(scenarios: &[Scenario], patch: bool) -> Arc<Replay> {
        let mut answers = Vec::new();
        for s in scenarios {
            for m in s.messages.iter().filter(|m| m.direction == Direction::S2c) {
                let msg = Message::decode(m.frame(), &Limits::default()).unwrap();
                answers.push((handle_of(&msg), msg));
            }
        }
        Arc::new(Replay {
            answers,
            patch,
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl Exchange for Replay {
    fn exchange<'a>(
        &'a self,
        _server: SocketAddr,
        _kind: TransportKind,
        request: &'a Message,
        _options: &'a ExchangeOptions,
    ) -> BoxFuture<'a, Result<Exchanged, TransportError>> {
        Box::pin(async move {
            let answered = |message| Ok(Exchanged::new(message, 1));
            let h = handle_of(request);
            self.asked.lock().unwrap().push(h.clone());
            let found = self
                .answers
                .iter()
                .find(|(ah, _)| ah.eq_ignore_ascii_case(&h));
            let Some((_, captured)) = found else {
                return Err(TransportError::Timeout);
            };
            if !self.patch {
                return answered(captured.clone());
            }
            // Patch the live request's id and expiration into the captured answer, then pass
            // it through the codec like the transport would.
            let mut m = captured.clone();
            m.envelope.request_id = request.request_id();
            m.header.expiration = request.header.expiration;
            answered(Message::decode(m.encode().unwrap(), &Limits::default()).unwrap())
        })
    }
}

/// The values of the last response of `decoded.json`.
fn expected_values(s: &Scenario) -> Vec<Value> {
    let last = s
        .decoded
        .iter()
        .rev()
        .find(|m| m["class"] == "ResolutionResponse")
        .unwrap();
    last["values"].as_array().unwrap().clone()
}

fn assert_same_values(got: &[HandleValue], want: &[Value], id: &str) {
    assert_eq!(got.len(), want.len(), "{id}: value count");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(u64::from(g.index), w["index"].as_u64().unwrap(), "{id}");
        assert_eq!(g.type_str(), w["type"].as_str().unwrap(), "{id}");
        let data = match w.get("dataHex").and_then(Value::as_str) {
            Some(h) => Bytes::from(hex::decode(h).unwrap()),
            None => Bytes::from(w["data"].as_str().unwrap().to_string()),
        };
        assert_eq!(g.data, data, "{id}: data of index {}", g.index);
        assert_eq!(u64::from(g.ttl.value()), w["ttl"].as_u64().unwrap(), "{id}");
        assert_eq!(
            u64::from(g.ttl.kind()),
            w["ttlType"].as_u64().unwrap(),
            "{id}"
        );
        assert_eq!(
            u64::from(g.timestamp),
            w["timestamp"].as_u64().unwrap(),
            "{id}"
        );
    }
}

fn capture_root() -> SocketAddr {
    "127.0.0.1:2641".parse().unwrap()
}

#[tokio::test]
async fn full_resolution_from_the_captures_gives_the_decoded_values() {
    let s = scenario("captures", "full_resolve_cordra_guid");
    let replay = Replay::new(std::slice::from_ref(&s), true);
    let r = Resolver::builder()
        .root_server(capture_root())
        .exchange(replay.clone())
        .build()
        .unwrap();
    let rec = r
        .resolve("20.500.12345/F58FB49EB1F848F0A606E84CEF294BE5")
        .await
        .unwrap();
    assert_same_values(&rec.values, &expected_values(&s), &s.id());
    // The chain asked the prefix handle, then the handle at the site from its HS_SITE.
    let asked = replay.asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [
            "0.NA/20.500.12345",
            "20.500.12345/F58FB49EB1F848F0A606E84CEF294BE5"
        ]
    );
    assert_eq!(rec.source.server, Some(capture_root()));
}

#[tokio::test]
async fn single_answers_from_the_captures_give_the_decoded_values() {
    for name in [
        "udp_resolve_all",
        "tcp_resolve_all",
        "udp_large",
        "tcp_large",
        "tcp_resolve_alltypes",
        "udp_resolve_alltypes",
        "udp_resolve_type_filter",
        "udp_resolve_index_filter",
        "udp_alias",
        "udp_cordra_guid",
        "udp_prefix_handle",
        "udp_root_handle",
    ] {
        let s = scenario("captures", name);
        let request = s
            .decoded
            .iter()
            .find(|m| m["class"] == "ResolutionRequest")
            .unwrap();
        let query = Query::new()
            .types(
                request["types"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_string()),
            )
            .indexes(
                request["indexes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_u64().unwrap() as u32),
            );
        let replay = Replay::new(std::slice::from_ref(&s), true);
        let r = Resolver::builder()
            .server(capture_root())
            .exchange(replay)
            .build()
            .unwrap();
        let rec = r
            .resolve_with(request["handle"].as_str().unwrap(), &query)
            .await
            .unwrap();
        assert_same_values(&rec.values, &expected_values(&s), &s.id());
    }
}

#[tokio::test]
async fn not_found_and_no_values_from_the_captures_are_typed() {
    for (name, not_found) in [
        ("udp_not_found", true),
        ("udp_resolve_no_matching_values", false),
    ] {
        let s = scenario("captures", name);
        let request = s
            .decoded
            .iter()
            .find(|m| m["class"] == "ResolutionRequest")
            .unwrap();
        let replay = Replay::new(std::slice::from_ref(&s), true);
        // Error answers carry no handle: answer anything with them.
        let replay = Arc::new(Replay {
            answers: replay
                .answers
                .iter()
                .map(|(_, m)| (request["handle"].as_str().unwrap().to_string(), m.clone()))
                .collect(),
            patch: true,
            asked: Mutex::new(Vec::new()),
        });
        let r = Resolver::builder()
            .server(capture_root())
            .exchange(replay)
            .build()
            .unwrap();
        let e = r
            .resolve(request["handle"].as_str().unwrap())
            .await
            .unwrap_err();
        assert!(e.is_not_found(), "{name}: {e}");
        assert_eq!(
            matches!(e, handle_resolver::ResolveError::NotFound { .. }),
            not_found,
            "{name}: {e}"
        );
    }
}

#[tokio::test]
async fn certified_capture_verifies_at_the_capture_time_and_not_after() {
    let s = scenario("captures", "full_resolve_certified");
    let replay = Replay::new(std::slice::from_ref(&s), false);
    // The root: the site of the capture's own HS_SITE (server key included).
    let prefix_answer = &replay
        .answers
        .iter()
        .find(|(h, _)| h == "0.NA/20.500.12345")
        .unwrap()
        .1;
    let Body::ResolutionResponse(r) = &prefix_answer.body else {
        panic!()
    };
    let site_value = r.values.iter().find(|v| v.is_type("HS_SITE")).unwrap();
    let root = SiteInfo::decode(&site_value.data, &Limits::default()).unwrap();
    let expiration = u64::from(prefix_answer.header.expiration);
    let at = |now: u64| {
        Resolver::builder()
            .root_sites([root.clone()])
            .exchange(replay.clone())
            .clock(Arc::new(FixedClock(now)))
            .certify(true)
            .build()
            .unwrap()
    };
    let rec = at(expiration - 43_000)
        .resolve("20.500.12345/1")
        .await
        .unwrap();
    assert!(rec.source.certified);
    assert_same_values(&rec.values, &expected_values(&s), &s.id());
    // Once the captured answers have expired they are rejected, never accepted.
    let e = at(expiration + 1)
        .resolve("20.500.12345/1")
        .await
        .unwrap_err();
    assert!(
        matches!(e, handle_resolver::ResolveError::Protocol { .. }),
        "{e}"
    );
}
