//! The JSON document of a resolved handle, in the handle.net REST API's shape: what `resolve
//! --json` prints for a record (before the `input` it adds), and what the Python package's
//! `HandleRecord.to_dict()` returns. One function, so that the two cannot drift apart.

use serde_json::{json, Value as Json};

use crate::wire::json::RestAnswer;
use crate::wire::HandleValue;
use crate::{Attempt, AttemptOutcome, HandleRecord};

/// `{"responseCode": 1, "handle": ..., "values": [...]}` ([`RestAnswer`], each value as
/// [`value_to_json`](crate::wire::json::value_to_json) writes it), plus `"aliases"` (the
/// HS_ALIAS chain followed) when the values came through one.
///
/// ```
/// use handle_resolver::document::record_document;
/// use handle_resolver::wire::HandleValue;
///
/// let values = [HandleValue::new(1, "URL", "https://example.org/")];
/// let doc = record_document("20.500.1/x", &values, &[]);
/// assert_eq!(doc["responseCode"], 1);
/// assert_eq!(doc["values"][0]["data"]["value"], "https://example.org/");
/// assert!(doc.get("aliases").is_none());
/// ```
pub fn record_document(handle: &str, values: &[HandleValue], aliases: &[String]) -> Json {
    let mut answer = RestAnswer::new(1, handle);
    answer.values = values.to_vec();
    let mut doc = answer.to_json();
    if aliases.len() > 1 {
        doc["aliases"] = json!(aliases);
    }
    doc
}

/// [`record_document`] of a [`HandleRecord`].
pub fn record_json(record: &HandleRecord) -> Json {
    record_document(&record.handle, &record.values, &record.aliases)
}

/// One attempt of a resolution's trace as JSON (what `resolve --json --trace` prints per
/// attempt): its number, handle, server, transport, round trip in milliseconds (one
/// decimal), transmissions, the response code when a response came, and the outcome as text.
pub fn attempt_json(a: &Attempt) -> Json {
    let code = match &a.outcome {
        AttemptOutcome::Response(c) => json!(c.code()),
        _ => Json::Null,
    };
    let outcome = match &a.outcome {
        AttemptOutcome::Cancelled => "cancelled".to_string(),
        other => other.to_string(),
    };
    json!({
        "attempt": a.number,
        "handle": a.handle.as_str(),
        // null for a proxy named by a host name (its URL is the attempt's `url`).
        "server": a.server.map(|s| s.to_string()),
        "transport": a.transport.as_str(),
        "rttMs": (a.rtt.as_secs_f64() * 1e4).round() / 10.0,
        "transmissions": a.transmissions,
        "responseCode": code,
        "outcome": outcome,
    })
}
