//! The REST API (`/api/handles/<handle>`, and `action=api` on a proxy path), in a first form:
//! the handle's public values as the reference's `HandleJsonRestApiServlet` writes them
//! (`{"responseCode":1,"handle":...,"values":[...]}`), with its `type` / `index` filters,
//! `pretty`, and its codes for a missing handle (100, HTTP 404), no matching value (200), a
//! prefix not served (301, HTTP 400), an empty handle (102) and a bad index (4). Issue 38's
//! part 2 completes it (`callback`, `publicOnly`, authentication, the other endpoints).

use handle_resolver::wire::json::RestAnswer;
use handle_resolver::ResolveErrorKind;

use crate::path::Params;
use crate::redirect::Answer;
use crate::upstream::{LookupError, Resolution};

/// The REST API's content type.
pub const JSON: &str = "application/json;charset=utf-8";

fn json(answer: &RestAnswer, pretty: bool) -> Answer {
    let mut a = Answer::new(answer.http_status()).header("Content-Type", JSON);
    a.body = answer.to_vec(pretty);
    a
}

/// A REST answer of `code` with a message.
pub fn error(code: u32, handle: Option<&str>, message: &str) -> Answer {
    let mut r = RestAnswer::new(code, handle.unwrap_or_default());
    if handle.is_none() {
        r.handle = None;
    }
    r.message = Some(message.to_owned());
    json(&r, false)
}

/// 404 for a path under `/api/` that is no endpoint.
pub fn unknown_endpoint(method: &str, path: &str) -> Answer {
    let mut a = error(
        4,
        None,
        &format!("Unknown HTTP API endpoint {method} {path}"),
    );
    a.status = 404;
    a
}

/// The REST answer for `handle` (as received, no scheme stripped).
pub async fn answer(resolution: &Resolution, handle: &str, params: &Params) -> Answer {
    let pretty = params
        .get("pretty")
        .is_some_and(|p| !p.eq_ignore_ascii_case("false"));
    if handle.is_empty() {
        return error(102, None, "Empty handle invalid");
    }
    let types: Vec<String> = params.all("type").map(str::to_owned).collect();
    let mut indexes = Vec::new();
    for i in params.all("index") {
        match i.parse::<u32>() {
            Ok(i) => indexes.push(i),
            Err(_) => {
                return error(
                    4,
                    Some(handle),
                    &format!("java.lang.NumberFormatException: For input string: \"{i}\""),
                )
            }
        }
    }
    let answer = match resolution.values(handle, &types, &indexes).await {
        Ok(values) => {
            let mut r = RestAnswer::new(if values.is_empty() { 200 } else { 1 }, handle);
            r.values = values;
            r
        }
        Err(LookupError::Resolve(e)) if e.kind() == ResolveErrorKind::NoMatchingValues => {
            RestAnswer::new(200, handle)
        }
        Err(e) if e.is_not_found() => RestAnswer::new(100, handle),
        Err(LookupError::Resolve(e))
            if matches!(
                e.kind(),
                ResolveErrorKind::PrefixNotServed | ResolveErrorKind::UnknownPrefix
            ) =>
        {
            let mut r = RestAnswer::new(301, handle);
            r.message = Some("That prefix doesn't live here".into());
            r
        }
        Err(e) => {
            let mut r = RestAnswer::new(2, handle);
            r.message = Some(e.to_string());
            r
        }
    };
    json(&answer, pretty)
}
