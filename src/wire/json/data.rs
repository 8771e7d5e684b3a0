//! The `data` member of a value: which format the REST API picks, and each format both ways
//! (`string`, `base64`, `hex` and the data formats of `format.rs`; `admin`, `vlist` here;
//! `site` and `key` in their own files).

use base64ct::{Base64, Encoding};
use bytes::Bytes;
use serde_json::{Map, Value as Json};

use super::{
    boolean, get, int4, need, object, reference_to_json, references_at, text_bytes, unsigned, At,
    JsonError, JsonErrorKind,
};
use crate::wire::admin::{decode_vlist, encode_vlist, AdminPermissions, AdminRecord};
use crate::wire::error::EncodeError;
use crate::wire::limits::Limits;
use crate::wire::pubkey::PublicKey;
use crate::wire::site::SiteInfo;
use crate::wire::value::{HandleValue, ValueReference};

use super::format::{bytes_at, member_at, tagged, DataFormat};
use super::key::{key_at, key_to_json};
use super::site::{site_at, site_to_json};

/// The structured view the REST API gives the value's type, when its data parses and the
/// view carries every byte of it.
fn structured(v: &HandleValue) -> Option<(DataFormat, Json)> {
    let limits = Limits::default();
    let d = &v.data;
    let (format, value) = if v.has_type("HS_ADMIN") {
        (
            DataFormat::Admin,
            admin_to_json(&AdminRecord::decode(d, &limits).ok()?),
        )
    } else if v.has_type("HS_VLIST") {
        (
            DataFormat::VList,
            vlist_to_json(&decode_vlist(d, &limits).ok()?),
        )
    } else if v.has_type("HS_SITE") || v.has_type("HS_NA_DELEGATE") {
        (
            DataFormat::Site,
            site_to_json(&SiteInfo::decode(d, &limits).ok()?),
        )
    } else if v.has_type("HS_PUBKEY") {
        (
            DataFormat::Key,
            key_to_json(&PublicKey::decode_bytes(d).ok()?),
        )
    } else {
        return None;
    };
    let back = decode_format(format, &value, &At::ROOT, &limits).ok()?;
    (back == *d).then_some((format, value))
}

/// Text when [`is_text`], else base64.
fn plain(d: &[u8]) -> (DataFormat, Json) {
    match std::str::from_utf8(d) {
        Ok(s) if !crate::wire::looks_like_binary(d) => (DataFormat::String, Json::from(s)),
        _ => (DataFormat::Base64, Json::from(Base64::encode_string(d))),
    }
}

/// The format [`data_to_json`] writes for `v`.
pub fn data_format(v: &HandleValue) -> DataFormat {
    structured(v).map_or_else(|| plain(&v.data).0, |(f, _)| f)
}

/// `{"format": ..., "value": ...}` for the value's data, in the format the REST API picks:
/// `admin`, `vlist`, `site` or `key` for HS_ADMIN, HS_VLIST, HS_SITE (and its sub-types,
/// HS_NA_DELEGATE) and HS_PUBKEY when the data parses as such, else `string` for text and
/// `base64` for other bytes. A structured view that would not give back the exact bytes is
/// replaced by `base64`.
pub fn data_to_json(v: &HandleValue) -> Json {
    let (format, value) = structured(v).unwrap_or_else(|| plain(&v.data));
    tagged(format, value)
}

/// The data bytes of a `data` member: `{"format", "value"}` or a bare string.
pub fn data_from_json(v: &Json, limits: &Limits) -> Result<Bytes, JsonError> {
    data_at(v, &At::ROOT, limits)
}

pub(super) fn data_at(v: &Json, at: &At, limits: &Limits) -> Result<Bytes, JsonError> {
    member_at(v, at, limits, |format, value, value_at| {
        decode_format(format, value, value_at, limits)
    })
}

fn encoded(r: Result<Bytes, EncodeError>, at: &At) -> Result<Bytes, JsonError> {
    r.map_err(|e| at.err(JsonErrorKind::Encode(e)))
}

fn decode_format(
    format: DataFormat,
    v: &Json,
    at: &At,
    limits: &Limits,
) -> Result<Bytes, JsonError> {
    match format {
        DataFormat::Admin => encoded(admin_at(v, at, limits)?.encode(), at),
        DataFormat::VList => encoded(encode_vlist(&references_at(v, at, limits)?), at),
        DataFormat::Site => encoded(site_at(v, at, limits)?.encode(), at),
        DataFormat::Key => encoded(key_at(v, at, limits)?.encode(), at),
        // `string`, `base64`, `hex`: read where every use of plain bytes reads them.
        plain => bytes_at(plain, v, at, limits)
            .unwrap_or_else(|| Err(at.err(JsonErrorKind::Invalid("a known data format")))),
    }
}

// ---------------------------------------------------------------------------------------
// HS_ADMIN and HS_VLIST

/// `{"handle", "index", "permissions"}`, the permissions as `0`/`1` from `LIST_HANDLES`
/// (0x0800) down to `ADD_HANDLE` (0x0001), longer than 12 characters only when higher bits
/// are set; `"legacyByteLength": true` for the legacy form.
pub fn admin_to_json(a: &AdminRecord) -> Json {
    let p = a.permissions.0;
    let width = (16 - p.leading_zeros() as usize).max(12);
    let bits: String = (0..width)
        .rev()
        .map(|bit| if p & (1 << bit) != 0 { '1' } else { '0' })
        .collect();
    let mut o = Map::new();
    o.insert(
        "handle".into(),
        Json::from(String::from_utf8_lossy(&a.admin.handle)),
    );
    o.insert("index".into(), Json::from(a.admin.index));
    o.insert("permissions".into(), Json::from(bits));
    if a.legacy_trailer.is_some() {
        o.insert("legacyByteLength".into(), Json::from(true));
    }
    Json::Object(o)
}

/// Reads an HS_ADMIN object. `permissions` may also be `"*"` or `true` (the 12 known
/// permissions), `false`, or a number (the bit mask).
pub fn admin_from_json(v: &Json, limits: &Limits) -> Result<AdminRecord, JsonError> {
    admin_at(v, &At::ROOT, limits)
}

fn admin_at(v: &Json, at: &At, limits: &Limits) -> Result<AdminRecord, JsonError> {
    let o = object(v, at)?;
    let handle = text_bytes(
        need(o, "handle", at)?,
        &at.key("handle"),
        limits.max_handle_length,
    )?;
    let index = int4(need(o, "index", at)?, &at.key("index"))?;
    let permissions = match get(o, "permissions") {
        Some(p) => admin_permissions_at(p, &at.key("permissions"))?,
        None => 0,
    };
    let legacy = match get(o, "legacyByteLength") {
        Some(b) => boolean(b, &at.key("legacyByteLength"))?,
        None => false,
    };
    Ok(AdminRecord {
        permissions: AdminPermissions(permissions),
        admin: ValueReference { handle, index },
        legacy_trailer: legacy.then_some(0),
    })
}

fn admin_permissions_at(v: &Json, at: &At) -> Result<u16, JsonError> {
    const ALL: u16 = 0x0FFF;
    match v {
        Json::String(s) if s == "*" => Ok(ALL),
        Json::String(s) => {
            if s.len() > 16 || !s.bytes().all(|c| c == b'0' || c == b'1') {
                return Err(at.err(JsonErrorKind::Invalid(
                    "up to 16 characters 0 or 1 (or \"*\")",
                )));
            }
            Ok(s.bytes()
                .rev()
                .enumerate()
                .filter(|(_, c)| *c == b'1')
                .fold(0, |p, (bit, _)| p | (1 << bit)))
        }
        Json::Bool(all) => Ok(if *all { ALL } else { 0 }),
        Json::Number(_) => unsigned(v, at, u64::from(u16::MAX), "a 16-bit mask").map(|p| p as u16),
        _ => Err(at.err(JsonErrorKind::WrongType("a string of 0 and 1"))),
    }
}

/// `[{"handle", "index"}, ...]`.
pub fn vlist_to_json(refs: &[ValueReference]) -> Json {
    Json::Array(refs.iter().map(reference_to_json).collect())
}

/// Reads an HS_VLIST array.
pub fn vlist_from_json(v: &Json, limits: &Limits) -> Result<Vec<ValueReference>, JsonError> {
    references_at(v, &At::ROOT, limits)
}
