//! The document of a handle.net REST API answer ([`RestAnswer`]: `GET /api/handles/{handle}`),
//! its size cap and the HTTP status the REST API sends with each response code.

use serde_json::{Map, Value as Json};

use super::{
    get, need, object, text, unsigned, value_to_json, values_at, At, JsonError, JsonErrorKind,
};
use crate::wire::limits::Limits;
use crate::wire::value::HandleValue;

/// How many JSON bytes a REST answer may take per byte of the largest native message
/// ([`Limits::max_message_length`]): base64 grows data by 4/3, structure and pretty-printing
/// (an interface is 6 bytes on the wire and about 100 pretty-printed) by far more.
pub const JSON_BYTES_PER_WIRE_BYTE: usize = 32;

/// The largest JSON document [`RestAnswer::from_slice`] reads under `limits`.
pub fn max_json_len(limits: &Limits) -> usize {
    limits
        .max_message_length
        .saturating_mul(JSON_BYTES_PER_WIRE_BYTE)
}
/// An answer of the handle.net REST API (`GET /api/handles/{handle}`):
/// `{"responseCode", "handle", "values", "message"}`, plus `referralHandle` on a referral.
///
/// ```
/// use handle_resolver::wire::{json::RestAnswer, Limits};
/// let body = br#"{"responseCode":1,"handle":"20.500.1/1","values":[
///     {"index":1,"type":"URL","data":{"format":"string","value":"https://example.org/"},
///      "ttl":86400,"timestamp":"2026-01-01T00:00:00Z"}]}"#;
/// let answer = RestAnswer::from_slice(body, &Limits::default())?;
/// assert_eq!(answer.response_code, 1);
/// assert_eq!(answer.values[0].timestamp, 1_767_225_600);
/// assert_eq!(answer.http_status(), 200);
/// # Ok::<(), handle_resolver::wire::json::JsonError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestAnswer {
    /// The Handle protocol response code (1 success, 100 handle not found, 200 no values,
    /// 301 server not responsible, 302/303 referral, 402 authentication needed, ...).
    pub response_code: u32,
    /// The handle asked for, as the server echoes it.
    pub handle: Option<String>,
    /// The values (all of them: the `type`/`index` filters are the server's business).
    pub values: Vec<HandleValue>,
    /// The error message of a failure.
    pub message: Option<String>,
    /// The service handle of a 302 referral.
    pub referral_handle: Option<String>,
}

impl RestAnswer {
    /// An answer with `response_code` for `handle`, no values, no message.
    pub fn new(response_code: u32, handle: impl Into<String>) -> Self {
        Self {
            response_code,
            handle: Some(handle.into()),
            values: Vec::new(),
            message: None,
            referral_handle: None,
        }
    }

    /// Reads an answer body: at most [`max_json_len`] bytes, at most
    /// [`Limits::max_values`] values.
    pub fn from_slice(body: &[u8], limits: &Limits) -> Result<Self, JsonError> {
        let limit = max_json_len(limits);
        if body.len() > limit {
            return Err(At::ROOT.err(JsonErrorKind::TooLarge {
                len: body.len(),
                limit,
            }));
        }
        let doc: Json = serde_json::from_slice(body)
            .map_err(|e| At::ROOT.err(JsonErrorKind::Syntax(e.to_string())))?;
        Self::from_json(&doc, limits)
    }

    /// Reads an answer already parsed as JSON.
    pub fn from_json(doc: &Json, limits: &Limits) -> Result<Self, JsonError> {
        let at = At::ROOT;
        let o = object(doc, &at)?;
        let string = |key: &str| -> Result<Option<String>, JsonError> {
            get(o, key)
                .map(|v| text(v, &at.key(key)).map(str::to_owned))
                .transpose()
        };
        Ok(Self {
            response_code: unsigned(
                need(o, "responseCode", &at)?,
                &at.key("responseCode"),
                u64::from(u32::MAX),
                "a response code",
            )? as u32,
            handle: string("handle")?,
            values: match get(o, "values") {
                Some(v) => values_at(v, &at.key("values"), limits)?,
                None => Vec::new(),
            },
            message: string("message")?,
            referral_handle: string("referralHandle")?,
        })
    }

    /// The answer as JSON, its members in the order the reference's REST API writes them:
    /// `responseCode`, then `values` and `handle` for code 200 (no value matched),
    /// otherwise `message`, `handle`, `referralHandle` and `values`. `values` is written
    /// when there are some, and always for codes 1 and 200.
    pub fn to_json(&self) -> Json {
        let mut o = Map::new();
        o.insert("responseCode".into(), Json::from(self.response_code));
        let values = (!self.values.is_empty() || matches!(self.response_code, 1 | 200))
            .then(|| Json::Array(self.values.iter().map(value_to_json).collect()));
        if self.response_code == 200 {
            if let Some(v) = values.clone() {
                o.insert("values".into(), v);
            }
        }
        if let Some(m) = &self.message {
            o.insert("message".into(), Json::from(m.as_str()));
        }
        if let Some(h) = &self.handle {
            o.insert("handle".into(), Json::from(h.as_str()));
        }
        if let Some(r) = &self.referral_handle {
            o.insert("referralHandle".into(), Json::from(r.as_str()));
        }
        if self.response_code != 200 {
            if let Some(v) = values {
                o.insert("values".into(), v);
            }
        }
        Json::Object(o)
    }

    /// The answer as a body, pretty-printed or compact.
    pub fn to_vec(&self, pretty: bool) -> Vec<u8> {
        let doc = self.to_json();
        let out = if pretty {
            serde_json::to_vec_pretty(&doc)
        } else {
            serde_json::to_vec(&doc)
        };
        // Serialising a `serde_json::Value` cannot fail (string keys, finite numbers).
        out.unwrap_or_default()
    }

    /// The HTTP status the REST API sends with this response code (the reference server's
    /// rule for a resolution): 1 and 200 → 200, 302/303 → 300, 100 → 404, 101/201 → 409,
    /// 4/102/202/301 → 400, 5 → 501, 3/7 → 503, 402 → 401, 400/401/403/404 → 403, any other
    /// → 500.
    pub fn http_status(&self) -> u16 {
        rest_http_status(self.response_code)
    }
}

/// The HTTP status of a REST answer carrying `response_code`; see
/// [`RestAnswer::http_status`].
pub fn rest_http_status(response_code: u32) -> u16 {
    match response_code {
        1 | 200 => 200,
        302 | 303 => 300,
        100 => 404,
        101 | 201 => 409,
        4 | 102 | 202 | 301 => 400,
        5 => 501,
        3 | 7 => 503,
        402 => 401,
        400 | 401 | 403 | 404 => 403,
        _ => 500,
    }
}
