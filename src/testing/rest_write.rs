//! The test server's REST API writes, as the reference server's `HandleJsonRestApiServlet`
//! and its authentication filter do them, as a pure function of the store and the request
//! (no socket: the server's HTTP side calls [`respond`]):
//!
//! - `PUT /api/handles/<handle>` with a JSON body (`application/json`, else 400): an array
//!   of values, an object with `values` (and a `handle` that must be the path's), or one
//!   value. Without `index` it creates the handle (CREATE_HANDLE); with `index=N` (repeated,
//!   the values' indexes exactly) or `index=various` it adds the values (ADD_VALUE).
//!   `overwrite` (default true for PUT) replaces an existing handle or values at the same
//!   indexes; `mintNewSuffix=true` has the server append a suffix. Success is 201 without
//!   overwrite, 200 with it, the body `{"responseCode":1,"handle":...}` (the created
//!   handle).
//! - `DELETE /api/handles/<handle>` deletes the handle; with `index=N` (repeated) it removes
//!   those values. Success is 200.
//! - `Authorization: Basic base64(urlencoded(INDEX:HANDLE):secret)`: the secret is checked as
//!   the reference checks it, by answering a challenge of the server's own with it and
//!   verifying the answer against the identity's HS_SECKEY value (any HS_SECKEY when the
//!   username has no `INDEX:`); a wrong one is 401 with no body. The request then runs as
//!   that identity: the same checks and changes as a native request
//!   (`admin::perform_as`). Without credentials a change is answered as a challenged native
//!   request (402 → 401). Another `Authorization` scheme (`Handle ...`, a session the test
//!   server does not keep) is 401 as well.
//! - The reference server takes credentials over HTTPS only (over HTTP, a 401 becomes 403);
//!   the test server takes them over plain HTTP too when the client is on loopback, so that
//!   tests run with `http://` URLs.
//!
//! Statuses (the reference's `statusCodeFromResponse`): 1 → 200/201; 100 → 404; 101, 201 →
//! 409; 4, 102, 200, 202, 301 → 400; 402 → 401; 400, 401, 403, 404 → 403. Errors carry
//! `{"responseCode", "handle", "message"}` (no `handle`, code 4, when the request could not
//! be read: the reference puts the Java exception's text in `message`, the test server its
//! own text).

use base64ct::{Base64, Encoding};
use bytes::Bytes;
use percent_encoding::percent_decode;
use serde_json::Value as Json;

use super::admin::{perform_as, precheck};
use super::http_reply::HttpReply;
use super::rest::JSON;
use super::store::Store;
use crate::auth::{verify_answer, Authenticator, Challenge, SecretKey};
use crate::transport::media_type;
use crate::wire::json::{rest_http_status, value_from_json, values_from_json};
use crate::wire::{
    Body, ChallengeAnswer, DigestAlgorithm, HandleValue, Limits, Message, OpCode, OpFlags,
    ProtocolVersion, RequestDigest, ResponseCode, ValueReference,
};

/// One PUT or DELETE of the REST API, as the HTTP side received it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RestWrite<'a> {
    /// `PUT` or `DELETE`.
    pub(crate) method: &'a str,
    /// Path and query (`/api/handles/20.500.1%2Fx?index=2`).
    pub(crate) target: &'a str,
    /// The `Content-Type` header.
    pub(crate) content_type: Option<&'a str>,
    /// The `Authorization` header.
    pub(crate) authorization: Option<&'a [u8]>,
    /// The body.
    pub(crate) body: &'a [u8],
    /// Whether credentials are taken: HTTPS, or plain HTTP from a loopback client.
    pub(crate) credentials_allowed: bool,
}

/// Java's `Boolean.parseBoolean`: true only for `true`, any case.
fn java_bool(v: &str) -> bool {
    v.eq_ignore_ascii_case("true")
}

/// An answer `{"responseCode", "handle", "message"}` (the last two when given), as the
/// reference serializes a response that carries no values.
fn reply(status: u16, code: u32, handle: Option<&str>, message: Option<&str>) -> HttpReply {
    let mut o = serde_json::Map::new();
    o.insert("responseCode".into(), Json::from(code));
    if let Some(h) = handle {
        o.insert("handle".into(), Json::from(h));
    }
    if let Some(m) = message {
        o.insert("message".into(), Json::from(m));
    }
    // Serialising a map of strings and numbers cannot fail.
    let body = serde_json::to_vec(&Json::Object(o)).unwrap_or_default();
    HttpReply::new(status, JSON, body)
}

/// A request that could not be read (the reference: an exception's text, code 4, no handle).
fn unreadable(message: impl Into<String>) -> HttpReply {
    let code = ResponseCode::ProtocolError.code();
    reply(400, code, None, Some(&message.into()))
}

/// Answers one PUT or DELETE of the REST API.
pub(crate) fn respond(store: &Store, limits: &Limits, w: &RestWrite<'_>) -> HttpReply {
    let (path, query) = w.target.split_once('?').unwrap_or((w.target, ""));
    let Some(encoded) = path.strip_prefix("/api/handles/") else {
        let message = format!("Unknown HTTP API endpoint {} {path}", w.method);
        return reply(
            405,
            ResponseCode::ProtocolError.code(),
            None,
            Some(&message),
        );
    };
    // The authentication filter runs before the servlet.
    let identity = match (w.authorization, w.credentials_allowed) {
        (Some(header), true) => match basic_identity(store, limits, header) {
            Some(identity) => Some(identity),
            None => return unauthorized(HttpReply::empty(401)),
        },
        _ => None,
    };
    let handle = percent_decode(encoded.as_bytes())
        .decode_utf8_lossy()
        .into_owned();
    // `+` kept, as the reference's `decodeURLIgnorePlus`.
    let params = super::rest::query_params(query, false);
    let request = match w.method {
        "PUT" => put_request(store, &handle, &params, w, limits),
        _ => delete_request(&handle, &params),
    };
    let request = match request {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let refused = |code| Message::response_to(&request, code, Body::Error(Default::default()));
    let answer = match (precheck(store, &request), &identity) {
        (Some(answer), _) => answer,
        (None, Some(identity)) => perform_as(store, limits, &request, identity)
            .into_iter()
            .next()
            .unwrap_or_else(|| refused(ResponseCode::Error)),
        // Unauthenticated: what a native request gets before its answer.
        (None, None) => refused(ResponseCode::AuthenticationNeeded),
    };
    let out = answer_reply(&request, &handle, &answer);
    match (out.status, w.credentials_allowed) {
        (401, true) => unauthorized(out),
        // The reference takes no credentials over plain HTTP: it asks for none there.
        (401, false) => HttpReply { status: 403, ..out },
        _ => out,
    }
}

fn unauthorized(reply: HttpReply) -> HttpReply {
    reply.with_header("WWW-Authenticate", "Basic realm=\"handle\"")
}

/// CREATE_HANDLE or ADD_VALUE from a PUT.
fn put_request(
    store: &Store,
    handle: &str,
    params: &[(String, String)],
    w: &RestWrite<'_>,
    limits: &Limits,
) -> Result<Message, HttpReply> {
    let json_type = w
        .content_type
        .is_some_and(|t| media_type(t).eq_ignore_ascii_case("application/json"));
    if !json_type {
        return Err(unreadable(format!(
            "Unsupported media type {}",
            w.content_type.unwrap_or("null")
        )));
    }
    let various = params.iter().any(|(k, v)| k == "index" && v == "various");
    let indexes = if various { None } else { indexes(params)? };
    let doc: Json = serde_json::from_slice(w.body).map_err(|e| unreadable(e.to_string()))?;
    let values = put_values(store, handle, &doc, limits)?;
    let add = various || indexes.is_some();
    if let Some(wanted) = &indexes {
        let mut a: Vec<u32> = wanted.clone();
        let mut b: Vec<u32> = values.iter().map(|v| v.index).collect();
        a.sort_unstable();
        a.dedup();
        b.sort_unstable();
        b.dedup();
        if a != b {
            return Err(unreadable("Mismatched indexes in PUT request"));
        }
    }
    let flag = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| java_bool(v))
    };
    let overwrite = flag("overwrite").unwrap_or(true);
    let mint = flag("mintNewSuffix").unwrap_or(false);
    let h = Bytes::from(handle.as_bytes().to_vec());
    let (op, body) = if add {
        (
            OpCode::AddValue,
            Body::AddValueRequest { handle: h, values },
        )
    } else {
        (
            OpCode::CreateHandle,
            Body::CreateHandleRequest { handle: h, values },
        )
    };
    let mut request = Message::request(body, op, 0, 0);
    request.header.flags.set(OpFlags::OW, overwrite);
    request.header.flags.set(OpFlags::MINT, mint);
    Ok(request)
}

/// The values of a PUT body: an array, `{"values": [...]}` (its `handle`, if any, the
/// path's, compared as the store compares handles: the prefix in any case), or one value.
fn put_values(
    store: &Store,
    handle: &str,
    doc: &Json,
    limits: &Limits,
) -> Result<Vec<HandleValue>, HttpReply> {
    let invalid = || unreadable("Invalid JSON in PUT request");
    let bad_value = |e: crate::wire::json::JsonError| unreadable(e.to_string());
    match doc {
        Json::Array(_) => values_from_json(doc, limits).map_err(bad_value),
        Json::Object(o) if o.contains_key("values") => {
            if let Some(named) = o.get("handle") {
                let named = named.as_str().ok_or_else(invalid)?;
                if store.normalize(handle.as_bytes()) != store.normalize(named.as_bytes()) {
                    return Err(unreadable("Mismatched handle in PUT request"));
                }
            }
            match &o["values"] {
                Json::Null => Ok(Vec::new()),
                v => values_from_json(v, limits).map_err(bad_value),
            }
        }
        Json::Object(o) if ["index", "type", "data"].iter().all(|k| o.contains_key(*k)) => {
            Ok(vec![value_from_json(doc, limits).map_err(bad_value)?])
        }
        _ => Err(invalid()),
    }
}

/// The `index` parameters (Java ints); `None` without any.
fn indexes(params: &[(String, String)]) -> Result<Option<Vec<u32>>, HttpReply> {
    let mut out = Vec::new();
    for (_, v) in params.iter().filter(|(k, _)| k == "index") {
        match v.parse::<i32>() {
            Ok(i) => out.push(i as u32),
            Err(_) => {
                return Err(unreadable(format!(
                    "java.lang.NumberFormatException: For input string: \"{v}\""
                )))
            }
        }
    }
    Ok((!out.is_empty()).then_some(out))
}

/// DELETE_HANDLE, or REMOVE_VALUE with `index` parameters.
fn delete_request(handle: &str, params: &[(String, String)]) -> Result<Message, HttpReply> {
    let h = Bytes::from(handle.as_bytes().to_vec());
    let (op, body) = match indexes(params)? {
        Some(indexes) => (
            OpCode::RemoveValue,
            Body::RemoveValueRequest { handle: h, indexes },
        ),
        None => (
            OpCode::DeleteHandle,
            Body::DeleteHandleRequest { handle: h },
        ),
    };
    Ok(Message::request(body, op, 0, 0))
}

/// The REST answer to `request` from the native `answer`.
fn answer_reply(request: &Message, handle: &str, answer: &Message) -> HttpReply {
    let code = answer.header.response_code;
    if code == ResponseCode::Success {
        let created = match &answer.body {
            Body::CreateHandleResponse { handle } => String::from_utf8_lossy(handle).into_owned(),
            _ => handle.to_string(),
        };
        let creates = matches!(
            request.header.op_code,
            OpCode::CreateHandle | OpCode::AddValue
        );
        let status = if creates && !request.header.flags.contains(OpFlags::OW) {
            201
        } else {
            200
        };
        return reply(status, 1, Some(&created), None);
    }
    let message = match &answer.body {
        Body::Error(e) if !e.message.is_empty() => {
            Some(String::from_utf8_lossy(&e.message).into_owned())
        }
        _ => None,
    };
    let status = match code {
        // A change's "no such values" is a bad request (a resolution's is 200).
        ResponseCode::ValuesNotFound => 400,
        _ => rest_http_status(code.code()),
    };
    reply(status, code.code(), Some(handle), message.as_deref())
}

/// The identity of a valid `Authorization: Basic` header: `urlencoded(INDEX:HANDLE):secret`
/// whose secret answers a challenge as the identity's HS_SECKEY value verifies; `None` for
/// any other header or a secret that does not verify.
fn basic_identity(store: &Store, limits: &Limits, header: &[u8]) -> Option<ValueReference> {
    let text = std::str::from_utf8(header).ok()?.trim();
    let (scheme, encoded) = text.split_once(char::is_whitespace)?;
    if !scheme.eq_ignore_ascii_case("Basic") {
        return None;
    }
    let decoded = Base64::decode_vec(encoded.trim()).ok()?;
    let colon = decoded.iter().position(|b| *b == b':')?;
    let (user, secret) = (&decoded[..colon], &decoded[colon + 1..]);
    let user = percent_decode(user).decode_utf8_lossy().into_owned();
    let identity = match user.split_once(':') {
        Some((i, h)) if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => ValueReference {
            handle: Bytes::from(h.as_bytes().to_vec()),
            index: i.parse().ok()?,
        },
        _ => ValueReference {
            handle: Bytes::from(user.into_bytes()),
            index: 0,
        },
    };
    let stored = store.get(&identity.handle)?;
    let keys = stored
        .values
        .iter()
        .filter(|v| v.is_type("HS_SECKEY") && (identity.index == 0 || v.index == identity.index));
    for key in keys {
        if secret_verifies(&identity, key, secret, limits) {
            return Some(ValueReference {
                handle: identity.handle.clone(),
                index: key.index,
            });
        }
    }
    None
}

/// Whether `secret` answers a challenge of the server's own as `stored` verifies it (the
/// reference server's `checkSecretKey`).
fn secret_verifies(
    identity: &ValueReference,
    stored: &HandleValue,
    secret: &[u8],
    limits: &Limits,
) -> bool {
    let nonce: [u8; 16] = rand::random();
    let version = ProtocolVersion::V2_11;
    let Some(digest) = RequestDigest::compute(DigestAlgorithm::for_version(version), &nonce) else {
        return false;
    };
    let challenge = Challenge::issued(nonce.to_vec(), digest, version, version, 0);
    let who = crate::auth::Identity::new(stored.index, identity.handle.clone());
    let me = Authenticator::secret_key(who, SecretKey::new(secret));
    let Ok(signed_response) = me.sign(&challenge, rand::random()) else {
        return false;
    };
    let answer = ChallengeAnswer {
        auth_type: Bytes::from_static(b"HS_SECKEY"),
        identity: ValueReference {
            handle: identity.handle.clone(),
            index: stored.index,
        },
        signed_response,
    };
    verify_answer(&answer, &challenge, stored, limits).is_ok()
}

#[cfg(test)]
#[path = "rest_write_tests.rs"]
mod tests;
