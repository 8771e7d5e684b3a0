//! The data formats of the JSON shape ([`DataFormat`]) and the ones that are plain bytes
//! (`string`, `base64`, `hex`), read the same way wherever data appears: a value's `data`
//! (`data.rs`) and a server's `publicKey` (`site.rs`, through `key.rs`).

use base64ct::{Base64Unpadded, Base64UrlUnpadded, Encoding};
use bytes::Bytes;
use serde_json::{Map, Value as Json};

use super::{check_len, need, text, text_bytes, At, JsonError, JsonErrorKind};
use crate::wire::limits::Limits;

/// The `data.format` of a value's JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataFormat {
    /// UTF-8 text.
    String,
    /// Any bytes, base64 (standard alphabet, padded).
    Base64,
    /// Any bytes, hex (read, never written: the REST API writes base64).
    Hex,
    /// HS_ADMIN.
    Admin,
    /// HS_VLIST.
    VList,
    /// HS_SITE, HS_SITE.PREFIX, HS_SITE.6, HS_NA_DELEGATE.
    Site,
    /// HS_PUBKEY (RSA or DSA).
    Key,
}

impl DataFormat {
    /// `string`, `base64`, `hex`, `admin`, `vlist`, `site` or `key`.
    pub const fn name(self) -> &'static str {
        match self {
            DataFormat::String => "string",
            DataFormat::Base64 => "base64",
            DataFormat::Hex => "hex",
            DataFormat::Admin => "admin",
            DataFormat::VList => "vlist",
            DataFormat::Site => "site",
            DataFormat::Key => "key",
        }
    }

    /// The format of a name, ignoring ASCII case (as the reference library does).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            DataFormat::String,
            DataFormat::Base64,
            DataFormat::Hex,
            DataFormat::Admin,
            DataFormat::VList,
            DataFormat::Site,
            DataFormat::Key,
        ]
        .into_iter()
        .find(|f| f.name().eq_ignore_ascii_case(name))
    }
}

pub(super) fn tagged(format: DataFormat, value: Json) -> Json {
    let mut o = Map::new();
    o.insert("format".into(), Json::from(format.name()));
    o.insert("value".into(), value);
    Json::Object(o)
}

/// The bytes of a data member: a bare string, or `{"format", "value"}` whose value `decode`
/// reads in its format. Bounded by `limits` before and after.
pub(super) fn member_at(
    v: &Json,
    at: &At,
    limits: &Limits,
    decode: impl FnOnce(DataFormat, &Json, &At) -> Result<Bytes, JsonError>,
) -> Result<Bytes, JsonError> {
    let bytes = match v {
        Json::String(s) => {
            check_len(s.len(), at, limits.max_array)?;
            Bytes::copy_from_slice(s.as_bytes())
        }
        Json::Object(o) => {
            let format = format_of(o, at)?;
            decode(format, need(o, "value", at)?, &at.key("value"))?
        }
        _ => {
            return Err(at.err(JsonErrorKind::WrongType(
                "a string or an object with format and value",
            )))
        }
    };
    check_len(bytes.len(), at, limits.max_array)?;
    Ok(bytes)
}

/// The format named by the `format` member of `o` (at `at`).
fn format_of(o: &Map<String, Json>, at: &At) -> Result<DataFormat, JsonError> {
    let format_at = at.key("format");
    let name = text(need(o, "format", at)?, &format_at)?;
    DataFormat::from_name(name)
        .ok_or_else(|| format_at.err(JsonErrorKind::UnknownFormat(name.to_owned())))
}

/// The bytes of `v` in `format` when it is a format of plain bytes (`string`, `base64`,
/// `hex`); `None` for a structured format.
pub(super) fn bytes_at(
    format: DataFormat,
    v: &Json,
    at: &At,
    limits: &Limits,
) -> Option<Result<Bytes, JsonError>> {
    Some(match format {
        DataFormat::String => text_bytes(v, at, limits.max_array),
        DataFormat::Base64 => base64_at(v, at, limits),
        DataFormat::Hex => hex_at(v, at, limits),
        _ => return None,
    })
}

fn hex_at(v: &Json, at: &At, limits: &Limits) -> Result<Bytes, JsonError> {
    let s = text(v, at)?;
    check_len(s.len() / 2, at, limits.max_array)?;
    hex::decode(s)
        .map(Bytes::from)
        .map_err(|_| at.err(JsonErrorKind::Invalid("hex digits")))
}

/// Base64 as the reference library reads it: standard or URL-safe alphabet, padded or not,
/// line breaks and spaces ignored.
pub(crate) fn base64_bytes(s: &str) -> Option<Vec<u8>> {
    let spaced;
    let s = if s.bytes().any(|b| b.is_ascii_whitespace()) {
        spaced = s
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect::<String>();
        spaced.as_str()
    } else {
        s
    };
    let s = s.trim_end_matches('=');
    if s.contains(['-', '_']) {
        Base64UrlUnpadded::decode_vec(s).ok()
    } else {
        Base64Unpadded::decode_vec(s).ok()
    }
}

pub(super) fn base64_at(v: &Json, at: &At, limits: &Limits) -> Result<Bytes, JsonError> {
    let s = text(v, at)?;
    check_len(s.len() / 4 * 3, at, limits.max_array)?;
    base64_bytes(s)
        .map(Bytes::from)
        .ok_or_else(|| at.err(JsonErrorKind::Invalid("base64")))
}
