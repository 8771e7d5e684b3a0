//! The JSON shape of handle records: one codec for the handle.net REST API answers
//! (`GET /api/handles/{handle}`), the reference client's `bootstrap_handles` file and the
//! `resolve --json` output.
//!
//! A value is `{"index", "type", "data": {"format", "value"}, "permissions"?, "ttl",
//! "timestamp"?, "references"?}`, as the reference library (`GsonUtility`) writes it:
//!
//! - `data.format` is `string` (UTF-8 text), `base64`, `hex` (read only), `admin` (HS_ADMIN:
//!   `{handle, index, permissions: "011111110011"}`), `vlist` (HS_VLIST: `[{handle,
//!   index}]`), `site` (HS_SITE: the structured record of `bootstrap_handles`) or `key`
//!   (HS_PUBKEY: a JWK-like `{kty: RSA, n, e}` or `{kty: DSA, y, p, q, g}`, base64url);
//! - `permissions` only when not the usual admin read + write, public read (`"1110"`): four
//!   characters admin-read, admin-write, public-read, public-write;
//! - `ttl` a number of seconds (relative) or an RFC 3339 instant (absolute);
//! - `timestamp` an RFC 3339 instant, left out when 0 (integer seconds are read too);
//! - `references` only when the value has some.
//!
//! Decoding gives exactly the `data` bytes a native answer carries for the value (RSA and DSA
//! numbers written as Java's `BigInteger.toByteArray`, IPv4 server addresses in the
//! IPv4-compatible form, ...). Encoding picks the format the REST API would; where that
//! structured form cannot carry the bytes exactly (a key with a non-zero options field, a
//! site whose primary mask has other bits set, text that is not UTF-8, ...) it falls back to
//! `base64`, so that a value encoded here always decodes back to itself. Three extensions keep
//! that promise for values the REST API cannot show: a TTL type other than 0 or 1 is written
//! as `"ttlType": n` beside a numeric `ttl`; a permission byte with bits above the low four is
//! written with eight characters (the reference library reads the last four); and a type
//! name or a reference's handle that is not UTF-8 is written as text with U+FFFD for the bad
//! bytes (`type`, `handle`, for readers that know only those) and exactly, in hex, as
//! `typeHex` / `handleHex`, which a reader here takes over the text.
//!
//! Decoding untrusted JSON never panics; every error names the field
//! (`values[3].data.value.servers[0].address`). Sizes are checked against [`Limits`] as the
//! native decoder checks them.

pub(crate) mod data;

use std::fmt;
use std::fmt::Write as _;

use bytes::Bytes;
use serde_json::{Map, Value as Json};
use thiserror::Error;

use super::error::EncodeError;
use super::limits::Limits;
use super::value::{HandleValue, Permissions, Ttl, ValueReference};

pub use data::{
    admin_from_json, admin_to_json, data_format, data_from_json, data_to_json, key_from_json,
    key_to_json, server_to_json, site_from_json, site_to_json, vlist_from_json, vlist_to_json,
    DataFormat,
};

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

/// What is wrong with a JSON document, at [`JsonError::path`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// Not JSON at all (serde_json's message, with line and column).
    #[error("not JSON: {0}")]
    Syntax(String),
    /// The document is longer than the limit.
    #[error("{len} bytes exceed the limit of {limit}")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// An array holds more items than the limit.
    #[error("{count} items exceed the limit of {limit}")]
    TooMany {
        /// Items present.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A string or the bytes it stands for are longer than the limit.
    #[error("{len} bytes exceed the limit of {limit}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A required field is absent (or `null`).
    #[error("missing")]
    Missing,
    /// The field has another JSON type.
    #[error("expected {0}")]
    WrongType(&'static str),
    /// A number outside the field's range.
    #[error("out of range: expected {0}")]
    OutOfRange(&'static str),
    /// A string that does not parse as what the field holds.
    #[error("invalid: expected {0}")]
    Invalid(&'static str),
    /// A `data.format` this codec does not know.
    #[error("unknown data format {0:?}")]
    UnknownFormat(String),
    /// The binary record built from the JSON does not encode (a field beyond 4 GiB).
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

/// A JSON document that could not be read: where (`values[3].data.value.servers[0].address`;
/// empty for the document itself) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonError {
    /// The field, as a path from the document's root.
    pub path: String,
    /// What is wrong with it.
    pub kind: JsonErrorKind,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

impl std::error::Error for JsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            JsonErrorKind::Encode(e) => Some(e),
            _ => None,
        }
    }
}

/// Where a decoder is in the document: a chain of keys and indexes on the stack, turned into
/// text only when an error is reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    /// The document itself.
    pub(crate) const ROOT: At<'static> = At {
        up: None,
        step: Step::Root,
    };

    /// The member `key` of the object here.
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Key(key),
        }
    }

    /// The item `i` of the array here.
    pub(crate) fn index<'b>(&'b self, i: usize) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Index(i),
        }
    }

    /// The path as text: `a.b[2]`, with `["..."]` for keys that are not plain names.
    pub(crate) fn path(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        if let Some(up) = self.up {
            up.write(out);
        }
        match self.step {
            Step::Root => {}
            Step::Key(k) if is_plain_name(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Key(k) => {
                out.push('[');
                out.push_str(&Json::from(k).to_string());
                out.push(']');
            }
            Step::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }

    /// An error at this place.
    pub(crate) fn err(&self, kind: JsonErrorKind) -> JsonError {
        JsonError {
            path: self.path(),
            kind,
        }
    }
}

fn is_plain_name(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------------------
// Reading fields

/// The object at `at`.
pub(crate) fn object<'j>(v: &'j Json, at: &At) -> Result<&'j Map<String, Json>, JsonError> {
    v.as_object()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("an object")))
}

/// The array at `at`, at most `limit` items long.
pub(crate) fn array<'j>(v: &'j Json, at: &At, limit: usize) -> Result<&'j [Json], JsonError> {
    let a = v
        .as_array()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("an array")))?;
    if a.len() > limit {
        return Err(at.err(JsonErrorKind::TooMany {
            count: a.len(),
            limit,
        }));
    }
    Ok(a)
}

/// A member; `null` counts as absent.
pub(crate) fn get<'j>(o: &'j Map<String, Json>, key: &str) -> Option<&'j Json> {
    o.get(key).filter(|v| !v.is_null())
}

/// A required member.
pub(crate) fn need<'j>(
    o: &'j Map<String, Json>,
    key: &str,
    at: &At,
) -> Result<&'j Json, JsonError> {
    get(o, key).ok_or_else(|| at.key(key).err(JsonErrorKind::Missing))
}

/// The string at `at`.
pub(crate) fn text<'j>(v: &'j Json, at: &At) -> Result<&'j str, JsonError> {
    v.as_str()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("a string")))
}

/// The string at `at` as bytes, at most `limit` long.
pub(crate) fn text_bytes(v: &Json, at: &At, limit: usize) -> Result<Bytes, JsonError> {
    let s = text(v, at)?;
    check_len(s.len(), at, limit)?;
    Ok(Bytes::copy_from_slice(s.as_bytes()))
}

/// `TooLong` when `len` bytes exceed `limit`.
pub(crate) fn check_len(len: usize, at: &At, limit: usize) -> Result<(), JsonError> {
    if len > limit {
        Err(at.err(JsonErrorKind::TooLong { len, limit }))
    } else {
        Ok(())
    }
}

/// The boolean at `at`.
pub(crate) fn boolean(v: &Json, at: &At) -> Result<bool, JsonError> {
    v.as_bool()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("true or false")))
}

/// A whole number in `0..=max`.
pub(crate) fn unsigned(v: &Json, at: &At, max: u64, range: &'static str) -> Result<u64, JsonError> {
    match v {
        Json::Number(n) => match n.as_u64() {
            Some(x) if x <= max => Ok(x),
            _ => Err(at.err(JsonErrorKind::OutOfRange(range))),
        },
        _ => Err(at.err(JsonErrorKind::WrongType("a number"))),
    }
}

/// An `int4` field (index, server id, port, ...): printed unsigned, read unsigned or as the
/// reference library's signed int (a negative number keeps its bit pattern).
pub(crate) fn int4(v: &Json, at: &At) -> Result<u32, JsonError> {
    const RANGE: &str = "a 32-bit integer";
    match v {
        Json::Number(n) => {
            if let Some(x) = n.as_u64() {
                u32::try_from(x).map_err(|_| at.err(JsonErrorKind::OutOfRange(RANGE)))
            } else if let Some(x) = n.as_i64() {
                i32::try_from(x)
                    .map(|x| x as u32)
                    .map_err(|_| at.err(JsonErrorKind::OutOfRange(RANGE)))
            } else {
                Err(at.err(JsonErrorKind::OutOfRange(RANGE)))
            }
        }
        _ => Err(at.err(JsonErrorKind::WrongType("a number"))),
    }
}

// ---------------------------------------------------------------------------------------
// Time

/// Seconds since the epoch as RFC 3339 (`2019-07-26T06:15:40Z`), as the REST API prints
/// timestamps and absolute TTLs.
pub fn timestamp_to_json(seconds: u32) -> Json {
    time::OffsetDateTime::from_unix_timestamp(i64::from(seconds))
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .map_or_else(|| Json::from(seconds), Json::String)
}

/// Seconds since the epoch from an RFC 3339 instant (any offset; fractions of a second
/// dropped) or a whole number of seconds.
pub fn timestamp_from_json(v: &Json) -> Result<u32, JsonError> {
    timestamp_at(v, &At::ROOT)
}

/// [`timestamp_from_json`] for the field at `at`.
pub(crate) fn timestamp_at(v: &Json, at: &At) -> Result<u32, JsonError> {
    const RANGE: &str = "an instant from 1970 to 2106";
    match v {
        Json::String(s) => {
            let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .map_err(|_| at.err(JsonErrorKind::Invalid("an RFC 3339 instant")))?;
            u32::try_from(t.unix_timestamp()).map_err(|_| at.err(JsonErrorKind::OutOfRange(RANGE)))
        }
        Json::Number(_) => unsigned(v, at, u64::from(u32::MAX), RANGE).map(|x| x as u32),
        _ => Err(at.err(JsonErrorKind::WrongType("an RFC 3339 string or a number"))),
    }
}

// ---------------------------------------------------------------------------------------
// Values

/// The value permission byte as the REST API prints it: admin-read, admin-write,
/// public-read, public-write (`"1100"`); eight characters when higher bits are set.
fn permissions_to_json(p: Permissions) -> Json {
    let width = if p.0 < 0x10 { 4 } else { 8 };
    Json::String(
        (0..width)
            .rev()
            .map(|bit| if p.0 & (1 << bit) != 0 { '1' } else { '0' })
            .collect(),
    )
}

/// Reads the permission string from its end (the last character is public-write); bits the
/// string does not reach keep the usual `1110`; `"*"` grants all four.
fn permissions_at(v: &Json, at: &At) -> Result<Permissions, JsonError> {
    let s = text(v, at)?;
    if s == "*" {
        return Ok(Permissions(0x0F));
    }
    if s.len() > 8 || !s.bytes().all(|c| c == b'0' || c == b'1') {
        return Err(at.err(JsonErrorKind::Invalid(
            "up to 8 characters 0 or 1 (or \"*\")",
        )));
    }
    let mut p = Permissions::DEFAULT.0;
    for (bit, c) in s.bytes().rev().enumerate() {
        if c == b'1' {
            p |= 1 << bit;
        } else {
            p &= !(1 << bit);
        }
    }
    Ok(Permissions(p))
}

fn ttl_to_json(ttl: Ttl, o: &mut Map<String, Json>) {
    match ttl {
        Ttl::Relative(s) => {
            o.insert("ttl".into(), Json::from(s));
        }
        Ttl::Absolute(t) => {
            o.insert("ttl".into(), timestamp_to_json(t));
        }
        Ttl::Other { kind, value } => {
            o.insert("ttl".into(), Json::from(value));
            o.insert("ttlType".into(), Json::from(kind));
        }
    }
}

fn ttl_at(o: &Map<String, Json>, at: &At) -> Result<Ttl, JsonError> {
    let kind = get(o, "ttlType")
        .map(|k| unsigned(k, &at.key("ttlType"), 255, "0..=255").map(|k| k as u8))
        .transpose()?;
    let Some(ttl) = get(o, "ttl") else {
        return match kind {
            None | Some(0) => Ok(Ttl::Relative(86_400)),
            Some(_) => Err(at.key("ttl").err(JsonErrorKind::Missing)),
        };
    };
    let at = at.key("ttl");
    match (ttl, kind) {
        (Json::String(_), None | Some(1)) => Ok(Ttl::Absolute(timestamp_at(ttl, &at)?)),
        (Json::String(_), Some(_)) => Err(at.err(JsonErrorKind::WrongType("a number"))),
        (_, kind) => {
            let value = int4(ttl, &at)?;
            Ok(match kind.unwrap_or(0) {
                0 => Ttl::Relative(value),
                1 => Ttl::Absolute(value),
                kind => Ttl::Other { kind, value },
            })
        }
    }
}

fn references_to_json(refs: &[ValueReference]) -> Json {
    Json::Array(refs.iter().map(reference_to_json).collect())
}

/// `{"handle", "index"}`, plus `handleHex` when the handle is not UTF-8.
pub(crate) fn reference_to_json(r: &ValueReference) -> Json {
    let mut o = Map::new();
    text_with_hex(&mut o, "handle", "handleHex", &r.handle);
    o.insert("index".into(), Json::from(r.index));
    Json::Object(o)
}

/// `key`: the bytes as text (U+FFFD for what is not UTF-8); `hex_key`: the bytes in hex, only
/// when they are not UTF-8 (the text then does not carry them).
fn text_with_hex(o: &mut Map<String, Json>, key: &str, hex_key: &str, bytes: &[u8]) {
    o.insert(key.into(), Json::from(String::from_utf8_lossy(bytes)));
    if std::str::from_utf8(bytes).is_err() {
        o.insert(hex_key.into(), Json::from(hex::encode(bytes)));
    }
}

/// The bytes of `key`, or of `hex_key` (hex digits) when it is present, at most `limit` long.
fn text_or_hex(
    o: &Map<String, Json>,
    key: &str,
    hex_key: &str,
    at: &At,
    limit: usize,
) -> Result<Bytes, JsonError> {
    let Some(h) = get(o, hex_key) else {
        return text_bytes(need(o, key, at)?, &at.key(key), limit);
    };
    let at = at.key(hex_key);
    let digits = text(h, &at)?;
    check_len(digits.len() / 2, &at, limit)?;
    hex::decode(digits)
        .map(Bytes::from)
        .map_err(|_| at.err(JsonErrorKind::Invalid("hex digits")))
}

/// `[{"handle", "index"}, ...]` (`handleHex` taken over `handle`), at most
/// [`Limits::max_array`] of them.
pub(crate) fn references_at(
    v: &Json,
    at: &At,
    limits: &Limits,
) -> Result<Vec<ValueReference>, JsonError> {
    let items = array(v, at, limits.max_array)?;
    let mut out = Vec::new();
    for (i, r) in items.iter().enumerate() {
        let at = at.index(i);
        let o = object(r, &at)?;
        out.push(ValueReference {
            handle: text_or_hex(o, "handle", "handleHex", &at, limits.max_handle_length)?,
            index: int4(need(o, "index", &at)?, &at.key("index"))?,
        });
    }
    Ok(out)
}

/// One value in the REST API shape.
///
/// ```
/// use handle_resolver::wire::{json, HandleValue};
/// let v = HandleValue::new(1, "URL", "https://example.org/");
/// assert_eq!(
///     json::value_to_json(&v),
///     serde_json::json!({"index": 1, "type": "URL", "ttl": 86400,
///         "data": {"format": "string", "value": "https://example.org/"}})
/// );
/// ```
pub fn value_to_json(v: &HandleValue) -> Json {
    let mut o = Map::new();
    o.insert("index".into(), Json::from(v.index));
    text_with_hex(&mut o, "type", "typeHex", &v.type_name);
    o.insert("data".into(), data_to_json(v));
    if v.permissions != Permissions::DEFAULT {
        o.insert("permissions".into(), permissions_to_json(v.permissions));
    }
    ttl_to_json(v.ttl, &mut o);
    if v.timestamp != 0 {
        o.insert("timestamp".into(), timestamp_to_json(v.timestamp));
    }
    if !v.references.is_empty() {
        o.insert("references".into(), references_to_json(&v.references));
    }
    Json::Object(o)
}

/// Reads one value in the REST API shape (unknown members are ignored, as the reference
/// library ignores them). `data` may also be a bare string (its UTF-8 bytes); `typeHex`,
/// when present, gives the type name's bytes (then `type` is not needed).
///
/// ```
/// use handle_resolver::wire::{json, Limits, Ttl};
/// let v = json::value_from_json(
///     &serde_json::json!({"index": 8, "type": "URL", "ttl": "2030-01-01T00:00:00Z",
///         "data": {"format": "string", "value": "http://example.org/"}}),
///     &Limits::default(),
/// )?;
/// assert_eq!(v.ttl, Ttl::Absolute(1_893_456_000));
/// assert_eq!(&v.data[..], b"http://example.org/");
/// # Ok::<(), json::JsonError>(())
/// ```
pub fn value_from_json(v: &Json, limits: &Limits) -> Result<HandleValue, JsonError> {
    value_at(v, &At::ROOT, limits)
}

/// [`value_from_json`] for the value at `at`.
pub(crate) fn value_at(v: &Json, at: &At, limits: &Limits) -> Result<HandleValue, JsonError> {
    let o = object(v, at)?;
    let index = int4(need(o, "index", at)?, &at.key("index"))?;
    let type_name = text_or_hex(o, "type", "typeHex", at, limits.max_array)?;
    let data = data::data_at(need(o, "data", at)?, &at.key("data"), limits)?;
    let permissions = match get(o, "permissions") {
        Some(p) => permissions_at(p, &at.key("permissions"))?,
        None => Permissions::DEFAULT,
    };
    let ttl = ttl_at(o, at)?;
    let timestamp = match get(o, "timestamp") {
        Some(t) => timestamp_at(t, &at.key("timestamp"))?,
        None => 0,
    };
    let references = match get(o, "references") {
        Some(r) => references_at(r, &at.key("references"), limits)?,
        None => Vec::new(),
    };
    Ok(HandleValue {
        index,
        timestamp,
        ttl,
        permissions,
        type_name,
        data,
        references,
    })
}

/// Reads an array of values, at most [`Limits::max_values`] of them.
pub fn values_from_json(v: &Json, limits: &Limits) -> Result<Vec<HandleValue>, JsonError> {
    values_at(v, &At::ROOT, limits)
}

/// [`values_from_json`] for the array at `at`.
pub(crate) fn values_at(v: &Json, at: &At, limits: &Limits) -> Result<Vec<HandleValue>, JsonError> {
    let items = array(v, at, limits.max_values)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        out.push(value_at(item, &at.index(i), limits)?);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// REST answers

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

    /// The answer as JSON. `values` is written when there are some, and always for codes
    /// 1 and 200 (the REST API's empty list when no value matches).
    pub fn to_json(&self) -> Json {
        let mut o = Map::new();
        o.insert("responseCode".into(), Json::from(self.response_code));
        if let Some(h) = &self.handle {
            o.insert("handle".into(), Json::from(h.as_str()));
        }
        if let Some(r) = &self.referral_handle {
            o.insert("referralHandle".into(), Json::from(r.as_str()));
        }
        if !self.values.is_empty() || matches!(self.response_code, 1 | 200) {
            o.insert(
                "values".into(),
                Json::Array(self.values.iter().map(value_to_json).collect()),
            );
        }
        if let Some(m) = &self.message {
            o.insert("message".into(), Json::from(m.as_str()));
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

#[cfg(test)]
mod tests;
