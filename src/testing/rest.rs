//! The test server's handle.net REST API, `GET /api/handles/{handle}?type=..&index=..`, as a
//! pure function of the store and the request target (no socket: the server's HTTP side
//! calls [`respond`]).
//!
//! As the reference server's REST servlet answers a resolution: the handle is the
//! percent-decoded rest of the path (`+` kept); `type` and `index` repeat and select values
//! by type OR index (as a native query); `publicOnly` (default true, as for an
//! unauthenticated caller) leaves restricted values out, else asks for them (402 → 401);
//! `pretty` indents the body. The body is [`RestAnswer`] JSON, the status the REST API's for
//! its response code ([`RestAnswer::http_status`]): 1 → 200, 100 → 404, 200 (no value
//! matches, `"values": []`) → 200, 301 → 400, 302/303 → 300, 402 → 401, 2 → 500; a bad
//! `index` → 4 (400), an empty handle → 102 (400), another path → 4 (404).

use bytes::Bytes;
use percent_encoding::percent_decode_str;

use super::faults::FaultState;
use super::http_reply::HttpReply;
use super::store::{Lookup, Store};
use crate::wire::json::RestAnswer;
use crate::wire::value::decode_values;
use crate::wire::{Body, HandleValue, Limits, Message, Reader, ResponseCode};

/// The content type of every REST answer.
pub(crate) const JSON: &str = "application/json";

/// The query parameters, decoded (`+` is a space, `%XX` a byte, invalid UTF-8 replaced).
struct Params(Vec<(String, String)>);

/// The `name=value` pairs of a query, percent-decoded; a `+` is a space when `plus_is_space`
/// (reads), and kept (the REST API's writes, as the reference's `decodeURLIgnorePlus`).
pub(super) fn query_params(query: &str, plus_is_space: bool) -> Vec<(String, String)> {
    let decode = |s: &str| {
        let s = if plus_is_space {
            std::borrow::Cow::Owned(s.replace('+', " "))
        } else {
            std::borrow::Cow::Borrowed(s)
        };
        percent_decode_str(&s).decode_utf8_lossy().into_owned()
    };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

impl Params {
    fn parse(query: &str) -> Params {
        Params(query_params(query, true))
    }

    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The reference servlet's boolean parameter: absent → `None`; empty, `true` or `yes`
    /// (any case) → true; anything else → false.
    fn flag(&self, name: &str) -> Option<bool> {
        self.all(name).next().map(|v| {
            v.is_empty() || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes")
        })
    }
}

fn reply(answer: &RestAnswer, pretty: bool) -> HttpReply {
    HttpReply::new(answer.http_status(), JSON, answer.to_vec(pretty))
}

/// A failure with a message; `handle` is echoed when the request got as far as naming one.
fn error(code: ResponseCode, handle: Option<&str>, message: &str) -> RestAnswer {
    let mut a = RestAnswer::new(code.code(), "");
    a.handle = handle.map(str::to_owned);
    a.message = Some(message.to_owned());
    a
}

/// Answers one `GET` of the REST API; `path_and_query` is the request target
/// (`/api/handles/20.500.1%2Fx?type=URL&index=1&pretty`).
pub(crate) fn respond(store: &Store, path_and_query: &str) -> HttpReply {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let params = Params::parse(query);
    let pretty = params.flag("pretty").unwrap_or(false);
    let encoded = match path.strip_prefix("/api/handles") {
        Some("") => Some(""),
        Some(rest) => rest.strip_prefix('/'),
        None => None,
    };
    let Some(encoded) = encoded else {
        let answer = error(
            ResponseCode::ProtocolError,
            None,
            &format!("Unknown HTTP API endpoint GET {path}"),
        );
        return HttpReply::new(404, JSON, answer.to_vec(pretty));
    };
    let Ok(handle) = percent_decode_str(encoded).decode_utf8() else {
        let answer = error(ResponseCode::InvalidHandle, None, "Handle is not UTF-8");
        return reply(&answer, pretty);
    };
    if handle.is_empty() {
        let answer = error(ResponseCode::InvalidHandle, None, "Empty handle invalid");
        return reply(&answer, pretty);
    }
    let mut indexes = Vec::new();
    for i in params.all("index") {
        // The reference servlet parses a Java int.
        match i.trim().parse::<i32>() {
            Ok(i) => indexes.push(i as u32),
            Err(_) => {
                let answer = error(
                    ResponseCode::ProtocolError,
                    None,
                    &format!("Invalid index parameter {i:?}"),
                );
                return reply(&answer, pretty);
            }
        }
    }
    let types: Vec<Bytes> = params
        .all("type")
        .map(|t| Bytes::copy_from_slice(t.as_bytes()))
        .collect();
    let public_only = params.flag("publicOnly").unwrap_or(true);
    let answer = resolve(store, &handle, &indexes, &types, public_only);
    reply(&answer, pretty)
}

/// [`respond`], unless [`Faults::rest_429`](super::Faults::rest_429) or
/// [`Faults::rest_429_ratio`](super::Faults::rest_429_ratio) refuse the request.
pub(crate) fn respond_or_throttle(
    store: &Store,
    faults: &FaultState,
    path_and_query: &str,
) -> HttpReply {
    match faults.rest_throttle() {
        Some(retry_after) => too_many_requests(retry_after),
        None => respond(store, path_and_query),
    }
}

/// `429 Too Many Requests` with `Retry-After: <seconds>`, as a rate-limiting front (such as
/// hdl.handle.net's) sends it; the body says so in the REST shape, with response code 3
/// (server too busy).
pub(crate) fn too_many_requests(retry_after: u32) -> HttpReply {
    let mut answer = RestAnswer::new(ResponseCode::ServerBusy.code(), "");
    answer.handle = None;
    answer.message = Some("Too many requests".into());
    HttpReply::new(429, JSON, answer.to_vec(false))
        .with_header("Retry-After", retry_after.to_string())
}

fn resolve(
    store: &Store,
    handle: &str,
    indexes: &[u32],
    types: &[Bytes],
    public_only: bool,
) -> RestAnswer {
    let answer = |code: ResponseCode| RestAnswer::new(code.code(), handle);
    match store.lookup(handle.as_bytes(), indexes, types, public_only) {
        Lookup::NotHomed => error(
            ResponseCode::ServerNotResponsible,
            Some(handle),
            "That prefix doesn't live here",
        ),
        Lookup::Referral(r) => {
            let mut a = answer(r.code);
            if !r.body.referral_handle.is_empty() {
                a.referral_handle = Some(String::from_utf8_lossy(&r.body.referral_handle).into());
            }
            a.values = r.body.values.unwrap_or_default();
            a
        }
        Lookup::NotFound => answer(ResponseCode::HandleNotFound),
        Lookup::NoValues => answer(ResponseCode::ValuesNotFound),
        Lookup::AuthenticationNeeded => answer(ResponseCode::AuthenticationNeeded),
        Lookup::AllPublic(stored) => {
            let mut a = answer(ResponseCode::Success);
            a.values = stored
                .values
                .iter()
                .filter(|v| v.permissions.public_read())
                .cloned()
                .collect();
            a
        }
        Lookup::Selected(encoded) => match decode_selected(encoded) {
            Some(values) => {
                let mut a = answer(ResponseCode::Success);
                a.values = values;
                a
            }
            None => error(
                ResponseCode::Error,
                Some(handle),
                "Stored values do not decode",
            ),
        },
        Lookup::Raw(recorded) => from_recorded(recorded, handle),
    }
}

/// `int4 count ‖ values`, as the store encodes a selection.
fn decode_selected(encoded: Bytes) -> Option<Vec<HandleValue>> {
    let mut r = Reader::new(encoded);
    let values = decode_values(&mut r, "values", &Limits::default()).ok()?;
    r.is_empty().then_some(values)
}

/// A recorded native answer told in the REST shape: its response code, values, referral
/// handle and error message.
fn from_recorded(recorded: Bytes, handle: &str) -> RestAnswer {
    let Ok(m) = Message::decode(recorded, &Limits::default()) else {
        return error(
            ResponseCode::Error,
            Some(handle),
            "Recorded answer does not decode",
        );
    };
    let mut a = RestAnswer::new(m.response_code().code(), handle);
    a.values = m.body.values().to_vec();
    match &m.body {
        Body::Referral(r) if !r.referral_handle.is_empty() => {
            a.referral_handle = Some(String::from_utf8_lossy(&r.referral_handle).into());
        }
        Body::Error(e) if !e.message_absent() && !e.message.is_empty() => {
            a.message = Some(e.message_str().into_owned());
        }
        _ => {}
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::store::Referral;
    use crate::testing::Faults;
    use crate::wire::{json, Permissions, ReferralBody, Ttl};
    use serde_json::{json, Value as Json};

    /// 20.500.1/abc: 1 URL, 2 URL.mirror, 3 SECRET (not public), 4 EMAIL with an absolute
    /// TTL; 20.500.1/a b+c: one URL (a handle that needs escaping).
    fn store() -> Store {
        let s = Store::new();
        let mut secret = HandleValue::new(3, "SECRET", "x");
        secret.permissions = Permissions(0x0C);
        let mut email = HandleValue::new(4, "EMAIL", "a@example.org");
        email.ttl = Ttl::Absolute(1_893_456_000);
        email.timestamp = 1_767_225_600;
        s.insert(
            "20.500.1/abc",
            vec![
                HandleValue::new(1, "URL", "https://example.org/"),
                HandleValue::new(2, "URL.mirror", "https://mirror.example.org/"),
                secret,
                email,
            ],
        );
        s.insert(
            "20.500.1/a b+c",
            vec![HandleValue::new(1, "URL", "https://example.org/abc")],
        );
        s
    }

    fn body(r: &HttpReply) -> Json {
        assert_eq!(r.content_type, Some(JSON));
        serde_json::from_slice(&r.body).unwrap()
    }

    fn answer(r: &HttpReply) -> RestAnswer {
        RestAnswer::from_slice(&r.body, &Limits::default()).unwrap()
    }

    #[test]
    fn resolves_every_public_value() {
        let s = store();
        let r = respond(&s, "/api/handles/20.500.1/abc");
        assert_eq!(r.status, 200);
        let a = answer(&r);
        assert_eq!(a.response_code, 1);
        assert_eq!(a.handle.as_deref(), Some("20.500.1/abc"));
        let indexes: Vec<u32> = a.values.iter().map(|v| v.index).collect();
        assert_eq!(indexes, [1, 2, 4], "the restricted value is left out");
        // Each value as the codec writes it: the absolute TTL as an instant.
        let doc = body(&r);
        assert_eq!(doc["values"][2], json::value_to_json(&a.values[2]));
        assert_eq!(doc["values"][2]["ttl"], "2030-01-01T00:00:00Z");
        assert_eq!(a.values[2], s.get("20.500.1/abc").unwrap().values[3]);
        // The prefix is case-folded as in a native query; the handle is echoed as asked.
        let r = respond(&s, "/api/handles/20.500.1%2Fabc");
        assert_eq!(answer(&r).values.len(), 3);
        let r = respond(&s, "/api/handles/20.500.1/a%20b+c");
        assert_eq!(r.status, 200, "{:?}", body(&r));
        assert_eq!(answer(&r).handle.as_deref(), Some("20.500.1/a b+c"));
    }

    #[test]
    fn type_and_index_filters_repeat_and_combine() {
        let s = store();
        let indexes = |target: &str| {
            let a = answer(&respond(&s, target));
            a.values.iter().map(|v| v.index).collect::<Vec<_>>()
        };
        assert_eq!(indexes("/api/handles/20.500.1/abc?type=URL"), [1]);
        assert_eq!(indexes("/api/handles/20.500.1/abc?type=URL."), [1, 2]);
        assert_eq!(
            indexes("/api/handles/20.500.1/abc?index=4&type=url"),
            [1, 4]
        );
        assert_eq!(indexes("/api/handles/20.500.1/abc?index=1&index=2"), [1, 2]);
        // Nothing matches: 200 with an empty list.
        let r = respond(&s, "/api/handles/20.500.1/abc?type=HS_ADMIN");
        assert_eq!(r.status, 200);
        assert_eq!(
            body(&r),
            json!({"responseCode": 200, "handle": "20.500.1/abc", "values": []})
        );
        // A restricted value asked for by a caller who wants every value: 402 → 401.
        let r = respond(&s, "/api/handles/20.500.1/abc?index=3&publicOnly=false");
        assert_eq!(r.status, 401);
        assert_eq!(answer(&r).response_code, 402);
        let r = respond(&s, "/api/handles/20.500.1/abc?index=3&publicOnly=true");
        assert_eq!(answer(&r).response_code, 200);
    }

    #[test]
    fn documented_codes_and_statuses() {
        let s = store();
        let r = respond(&s, "/api/handles/20.500.1/nothere");
        assert_eq!(r.status, 404);
        assert_eq!(
            body(&r),
            json!({"responseCode": 100, "handle": "20.500.1/nothere"})
        );
        s.home_prefix("20.500.1");
        let r = respond(&s, "/api/handles/99.999/x");
        assert_eq!(r.status, 400);
        assert_eq!(answer(&r).response_code, 301);
        s.insert_referral(
            "20.500.1/moved",
            Referral {
                code: ResponseCode::ServiceReferral,
                body: ReferralBody {
                    referral_handle: Bytes::from_static(b"0.SERV/2"),
                    values: None,
                },
            },
        );
        let r = respond(&s, "/api/handles/20.500.1/moved");
        assert_eq!(r.status, 300);
        assert_eq!(
            body(&r),
            json!({"responseCode": 302, "handle": "20.500.1/moved", "referralHandle": "0.SERV/2"})
        );
        for (target, status, code) in [
            ("/api/handles/", 400, 102),
            ("/api/handles", 400, 102),
            ("/api/handles/20.500.1/abc?index=one", 400, 4),
            ("/api/handles/%FF", 400, 102),
            ("/api/other/20.500.1/abc", 404, 4),
            ("/api/handlesX", 404, 4),
        ] {
            let r = respond(&s, target);
            assert_eq!(
                (r.status, answer(&r).response_code),
                (status, code),
                "{target}"
            );
            assert!(answer(&r).message.is_some(), "{target}");
        }
    }

    #[test]
    fn a_recorded_answer_is_told_in_the_rest_shape() {
        let s = store();
        let values = vec![HandleValue::new(7, "URL", "https://example.org/recorded")];
        let request = Message::resolution_request("20.500.1/rec", vec![], vec![], 1, 0);
        let recorded = Message::response_to(
            &request,
            ResponseCode::Success,
            Body::ResolutionResponse(crate::wire::ResolutionResponse {
                handle: Bytes::from_static(b"20.500.1/rec"),
                values: values.clone(),
            }),
        );
        s.insert_raw_answer("20.500.1/rec", recorded.encode().unwrap());
        let a = answer(&respond(&s, "/api/handles/20.500.1/rec"));
        assert_eq!((a.response_code, a.values), (1, values));
        s.insert_raw_answer("20.500.1/junk", Bytes::from_static(b"junk"));
        let r = respond(&s, "/api/handles/20.500.1/junk");
        assert_eq!((r.status, answer(&r).response_code), (500, 2));
    }

    #[test]
    fn pretty_or_compact() {
        let s = store();
        let compact = respond(&s, "/api/handles/20.500.1/abc");
        assert!(!compact.body.contains(&b'\n'));
        for flag in ["pretty", "pretty=true", "pretty=YES"] {
            let pretty = respond(&s, &format!("/api/handles/20.500.1/abc?{flag}"));
            assert!(pretty.body.contains(&b'\n'), "{flag}");
            assert_eq!(body(&pretty), body(&compact));
        }
        let r = respond(&s, "/api/handles/20.500.1/abc?pretty=no");
        assert!(!r.body.contains(&b'\n'));
    }

    #[test]
    fn throttled_requests_get_429_with_retry_after() {
        let s = store();
        let faults = FaultState::new(
            Faults {
                rest_429: Some(1),
                rest_retry_after: 3,
                ..Faults::default()
            },
            9,
        );
        let r = respond_or_throttle(&s, &faults, "/api/handles/20.500.1/abc");
        assert_eq!(r.status, 429);
        assert_eq!(r.headers, [("Retry-After", "3".to_string())]);
        assert_eq!(answer(&r).response_code, 3);
        let r = respond_or_throttle(&s, &faults, "/api/handles/20.500.1/abc");
        assert_eq!(r.status, 200);
        assert_eq!(json::value_to_json(&answer(&r).values[0])["index"], 1);
    }
}
