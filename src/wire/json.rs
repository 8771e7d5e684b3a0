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
//!
//! Layout: this file reads and writes whole values (and timestamps); `data` the `data` member
//! and its formats (`site` and `key` the structured ones of HS_SITE and HS_PUBKEY); `rest` the
//! REST answer document ([`RestAnswer`]); `read` the errors ([`JsonError`]) and the reading
//! helpers they all use.

mod data;
mod format;
mod key;
mod read;
mod rest;
mod site;

use bytes::Bytes;
use serde_json::{Map, Value as Json};

use super::limits::Limits;
use super::value::{HandleValue, Permissions, Ttl, ValueReference};

pub use data::{
    admin_from_json, admin_to_json, data_format, data_from_json, data_to_json, vlist_from_json,
    vlist_to_json,
};
pub(crate) use format::base64_bytes;
pub use format::DataFormat;
pub use key::{key_from_json, key_to_json};
pub(crate) use read::{
    array, boolean, check_len, get, int4, need, object, text, text_bytes, unsigned, At,
};
pub use read::{JsonError, JsonErrorKind};
pub use rest::{max_json_len, rest_http_status, RestAnswer, JSON_BYTES_PER_WIRE_BYTE};
pub use site::{server_to_json, site_from_json, site_to_json};

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
        (_, kind) => Ok(Ttl::from_parts(kind.unwrap_or(0), int4(ttl, &at)?)),
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

#[cfg(test)]
mod tests;
