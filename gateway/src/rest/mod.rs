//! The REST API (`/api/handles/<handle>`, and `action=api` on a proxy path): the handle's
//! public values as the reference's `HandleJsonRestApiServlet` writes them
//! (`{"responseCode":1,"handle":...,"values":[...]}`, members in its order), with its `type`
//! / `index` filters, `pretty`, `callback` (JSONP), and its codes for a missing handle (100,
//! HTTP 404), no matching value (200), a prefix not served (301, HTTP 400), an empty handle
//! (102), a bad index (4) and a request that needs authentication (`publicOnly=false`, a
//! prefix's handle list, `/api/prefixes`: 402, HTTP 403). The gateway holds no credentials
//! and passes none on: it reads public values only, and refuses writes (405).

use handle_resolver::wire::json::RestAnswer;
use handle_resolver::ResolveErrorKind;

use crate::cache::{LookupError, Record};
use crate::path::Params;
use crate::redirect::Answer;
use crate::upstream::Lookup;

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

/// 403 with code 402: what needs authentication (`publicOnly=false`, the handles of a
/// prefix, the prefix list), naming `handle` when there is one.
pub fn authentication_required(handle: Option<&str>) -> Answer {
    let mut r = RestAnswer::new(402, handle.unwrap_or_default());
    if handle.is_none() {
        r.handle = None;
    }
    let mut a = json(&r, false);
    a.status = 403;
    a
}

/// 405 for a write (`PUT`, `DELETE`): the gateway only reads.
pub fn read_only(method: &str) -> Answer {
    let mut a = error(
        4,
        None,
        &format!("The gateway is read-only: {method} is not served"),
    );
    a.status = 405;
    a.headers
        .push(("Allow".into(), "GET, HEAD, POST, OPTIONS".into()));
    a
}

/// A JSONP callback name as the reference writes it: each character outside
/// `[A-Za-z0-9_.$]` as `_`.
fn callback_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The REST answer for `handle` (as received, no scheme stripped): JSON, or JSONP
/// (`application/javascript`, `name(...);`) with `callback=name`.
pub async fn answer(lookup: &Lookup<'_>, handle: &str, params: &Params) -> Answer {
    let mut a = document(lookup, handle, params).await;
    if let Some(name) = params.get("callback").filter(|n| !n.is_empty()) {
        let mut body = callback_name(name).into_bytes();
        body.push(b'(');
        body.extend_from_slice(&a.body);
        body.extend_from_slice(b");");
        a.body = body;
        for (k, v) in &mut a.headers {
            if k.eq_ignore_ascii_case("Content-Type") {
                *v = JAVASCRIPT.into();
            }
        }
    }
    a
}

/// The content type of a JSONP answer.
pub const JAVASCRIPT: &str = "application/javascript;charset=utf-8";

async fn document(lookup: &Lookup<'_>, handle: &str, params: &Params) -> Answer {
    let pretty = params
        .get("pretty")
        .is_some_and(|p| !p.eq_ignore_ascii_case("false"));
    if handle.is_empty() {
        return error(102, None, "Empty handle invalid");
    }
    if params
        .get("publicOnly")
        .is_some_and(|p| p.eq_ignore_ascii_case("false"))
    {
        return authentication_required(Some(handle));
    }
    let types: Vec<String> = params.all("type").map(str::to_owned).collect();
    let mut indexes = Vec::new();
    for i in params.all("index") {
        match i.parse::<u32>() {
            Ok(i) => indexes.push(i),
            Err(_) => {
                return error(
                    4,
                    None,
                    &format!("java.lang.NumberFormatException: For input string: \"{i}\""),
                )
            }
        }
    }
    let answer = match lookup
        .values(handle, &types, &indexes)
        .await
        .map(Record::into_values)
    {
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
