//! Typed views of handle value data (RFC 3651 §3.2, PROTOCOL.md §7): what the bytes of a
//! URL, HS_ADMIN, HS_SITE, HS_PUBKEY, 10320/loc... value mean.
//!
//! [`HandleValue::typed`] never fails: data that does not parse as its type is shown as text
//! (when it is UTF-8 and the type is textual) or raw bytes. Every view encodes back to the
//! bytes it came from ([`TypedValue::encode`]).

use bytes::Bytes;
use serde_json::{json, Value as Json};
use thiserror::Error;

use super::admin::{decode_vlist, encode_vlist, AdminRecord};
use super::error::{DecodeError, EncodeError};
use super::json::{admin_to_json, key_to_json, site_to_json, vlist_to_json};
use super::limits::Limits;
use super::loc::{LocError, Locations};
use super::pubkey::PublicKey;
use super::site::SiteInfo;
use super::value::{HandleValue, ValueReference};

/// Type names whose data is an HS_SITE record.
pub(crate) const SITE_TYPES: [&str; 4] =
    ["HS_SITE", "HS_SITE.6", "HS_SITE.PREFIX", "HS_NA_DELEGATE"];
/// Type names whose data is a service handle.
pub(crate) const SERV_TYPES: [&str; 2] = ["HS_SERV", "HS_SERV.PREFIX"];
/// The type name of location lists.
pub(crate) const LOC_TYPE: &str = "10320/loc";

/// A typed view of a value's data.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TypedValue {
    /// `URL`.
    Url(String),
    /// `EMAIL`.
    Email(String),
    /// `DESC`.
    Desc(String),
    /// `HS_ADMIN`.
    Admin(AdminRecord),
    /// `HS_SITE`, `HS_SITE.6`, `HS_SITE.PREFIX`, `HS_NA_DELEGATE`.
    Site(SiteInfo),
    /// `HS_SERV`, `HS_SERV.PREFIX`: the service handle (raw UTF-8, no length prefix).
    Serv(String),
    /// `HS_VLIST`.
    VList(Vec<ValueReference>),
    /// `HS_ALIAS`: the target handle (raw UTF-8, no length prefix).
    Alias(String),
    /// `HS_PUBKEY`.
    PubKey(PublicKey),
    /// `HS_SECKEY`: the secret (or its hash), as stored.
    SecKey(Bytes),
    /// `HS_NAMESPACE`: the `<NAMESPACE>` XML text.
    Namespace(String),
    /// `10320/loc`.
    Locations(Locations),
    /// Any other UTF-8 data.
    Text(String),
    /// Anything else.
    Binary(Bytes),
}

/// Why a value's data does not parse as its type (see [`HandleValue::try_typed`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TypedError {
    /// A binary record (HS_SITE, HS_ADMIN, HS_VLIST, HS_PUBKEY) is malformed.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A `10320/loc` text is not a location list.
    #[error(transparent)]
    Locations(#[from] LocError),
    /// A textual type's data is not UTF-8.
    #[error("the data of a textual type is not UTF-8")]
    NotUtf8,
}

/// The `"format"` name of a value's JSON view, as the handle.net REST API and the `inspect`
/// example print it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueFormat {
    /// Text.
    String,
    /// HS_ADMIN.
    Admin,
    /// HS_VLIST.
    VList,
    /// HS_SITE and its variants.
    Site,
    /// HS_PUBKEY.
    Key,
    /// 10320/loc.
    Locations,
    /// Other bytes, shown as hex.
    Hex,
}

impl ValueFormat {
    /// `string`, `admin`, `vlist`, `site`, `key`, `locations` or `hex`.
    pub const fn name(self) -> &'static str {
        match self {
            ValueFormat::String => "string",
            ValueFormat::Admin => "admin",
            ValueFormat::VList => "vlist",
            ValueFormat::Site => "site",
            ValueFormat::Key => "key",
            ValueFormat::Locations => "locations",
            ValueFormat::Hex => "hex",
        }
    }
}

fn utf8(data: &Bytes) -> Result<String, TypedError> {
    std::str::from_utf8(data)
        .map(str::to_owned)
        .map_err(|_| TypedError::NotUtf8)
}

fn is_any(v: &HandleValue, names: &[&str]) -> bool {
    names.iter().any(|n| v.is_type(n))
}

impl HandleValue {
    /// The typed view of the data, with the default [`Limits`]. Never fails: malformed data
    /// comes back as [`TypedValue::Text`] (a 10320/loc that is UTF-8 but no location list) or
    /// [`TypedValue::Binary`].
    ///
    /// ```
    /// use handle_resolver::wire::{HandleValue, TypedValue};
    /// let v = HandleValue::new(1, "URL", "https://example.org/");
    /// assert_eq!(v.typed(), TypedValue::Url("https://example.org/".into()));
    /// assert_eq!(v.typed().encode().unwrap(), v.data);
    /// let bad = HandleValue::new(2, "HS_SITE", vec![0u8, 1]);
    /// assert_eq!(bad.typed(), TypedValue::Binary(bad.data.clone()));
    /// ```
    pub fn typed(&self) -> TypedValue {
        self.typed_with(&Limits::default())
    }

    /// [`HandleValue::typed`] with explicit limits for the binary records.
    pub fn typed_with(&self, limits: &Limits) -> TypedValue {
        match self.try_typed_with(limits) {
            Ok(t) => t,
            Err(_) => match std::str::from_utf8(&self.data) {
                Ok(s) if self.is_type(LOC_TYPE) => TypedValue::Text(s.to_owned()),
                _ => TypedValue::Binary(self.data.clone()),
            },
        }
    }

    /// The typed view, or why the data does not parse as its type. Unknown types never fail
    /// (they are [`TypedValue::Text`] or [`TypedValue::Binary`]).
    pub fn try_typed(&self) -> Result<TypedValue, TypedError> {
        self.try_typed_with(&Limits::default())
    }

    /// [`HandleValue::try_typed`] with explicit limits.
    pub fn try_typed_with(&self, limits: &Limits) -> Result<TypedValue, TypedError> {
        let d = &self.data;
        Ok(if self.is_type("URL") {
            TypedValue::Url(utf8(d)?)
        } else if self.is_type("EMAIL") {
            TypedValue::Email(utf8(d)?)
        } else if self.is_type("DESC") {
            TypedValue::Desc(utf8(d)?)
        } else if self.is_type("HS_ADMIN") {
            TypedValue::Admin(AdminRecord::decode(d, limits)?)
        } else if is_any(self, &SITE_TYPES) {
            TypedValue::Site(SiteInfo::decode(d, limits)?)
        } else if is_any(self, &SERV_TYPES) {
            TypedValue::Serv(utf8(d)?)
        } else if self.is_type("HS_VLIST") {
            TypedValue::VList(decode_vlist(d, limits)?)
        } else if self.is_type("HS_ALIAS") {
            TypedValue::Alias(utf8(d)?)
        } else if self.is_type("HS_PUBKEY") {
            TypedValue::PubKey(PublicKey::decode_bytes(d)?)
        } else if self.is_type("HS_SECKEY") {
            TypedValue::SecKey(d.clone())
        } else if self.is_type("HS_NAMESPACE") {
            TypedValue::Namespace(utf8(d)?)
        } else if self.is_type(LOC_TYPE) {
            TypedValue::Locations(Locations::parse(&utf8(d)?)?)
        } else {
            match std::str::from_utf8(d) {
                Ok(s) => TypedValue::Text(s.to_owned()),
                Err(_) => TypedValue::Binary(d.clone()),
            }
        })
    }
}

impl TypedValue {
    /// The data bytes of this view; a view from [`HandleValue::typed`] gives back exactly the
    /// value's data.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        Ok(match self {
            TypedValue::Url(s)
            | TypedValue::Email(s)
            | TypedValue::Desc(s)
            | TypedValue::Serv(s)
            | TypedValue::Alias(s)
            | TypedValue::Namespace(s)
            | TypedValue::Text(s) => Bytes::copy_from_slice(s.as_bytes()),
            TypedValue::Admin(a) => a.encode()?,
            TypedValue::Site(s) => s.encode()?,
            TypedValue::VList(v) => encode_vlist(v)?,
            TypedValue::PubKey(k) => k.encode()?,
            TypedValue::SecKey(b) | TypedValue::Binary(b) => b.clone(),
            TypedValue::Locations(l) => Bytes::copy_from_slice(l.raw.as_bytes()),
        })
    }

    /// The text of a textual view (URL, EMAIL, DESC, HS_SERV, HS_ALIAS, HS_NAMESPACE and any
    /// other UTF-8 text); `None` for the structured and binary views.
    ///
    /// ```
    /// use handle_resolver::wire::HandleValue;
    ///
    /// assert_eq!(HandleValue::new(1, "URL", "https://example.org/").typed().as_text(), Some("https://example.org/"));
    /// assert_eq!(HandleValue::new(2, "HS_ADMIN", &b"\x0f\xff"[..]).typed().as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            TypedValue::Url(s)
            | TypedValue::Email(s)
            | TypedValue::Desc(s)
            | TypedValue::Serv(s)
            | TypedValue::Alias(s)
            | TypedValue::Namespace(s)
            | TypedValue::Text(s) => Some(s),
            _ => None,
        }
    }

    /// The `"format"` of the JSON view.
    pub fn format(&self) -> ValueFormat {
        match self {
            TypedValue::Url(_)
            | TypedValue::Email(_)
            | TypedValue::Desc(_)
            | TypedValue::Serv(_)
            | TypedValue::Alias(_)
            | TypedValue::Namespace(_)
            | TypedValue::Text(_) => ValueFormat::String,
            TypedValue::Admin(_) => ValueFormat::Admin,
            TypedValue::Site(_) => ValueFormat::Site,
            TypedValue::VList(_) => ValueFormat::VList,
            TypedValue::PubKey(_) => ValueFormat::Key,
            TypedValue::SecKey(b) if std::str::from_utf8(b).is_ok() => ValueFormat::String,
            TypedValue::SecKey(_) | TypedValue::Binary(_) => ValueFormat::Hex,
            TypedValue::Locations(_) => ValueFormat::Locations,
        }
    }

    /// A JSON view of the data for people: `{"format": ..., "value": ...}` with the REST API's
    /// shapes where it has them (`string` text; `admin`, `vlist`, `site` and `key` as
    /// [`wire::json`](super::json) writes them), plus `locations` (the parsed list and the
    /// XML; the REST API shows the XML as a string) and `hex` for other bytes. The exact REST
    /// shape of a value, which always reads back to the same bytes, is
    /// [`json::data_to_json`](super::json::data_to_json).
    ///
    /// ```
    /// use handle_resolver::wire::HandleValue;
    /// let v = HandleValue::new(1, "EMAIL", "a@example.org");
    /// assert_eq!(
    ///     v.typed().to_json(),
    ///     serde_json::json!({"format": "string", "value": "a@example.org"})
    /// );
    /// ```
    pub fn to_json(&self) -> Json {
        let value = match self {
            TypedValue::Url(s)
            | TypedValue::Email(s)
            | TypedValue::Desc(s)
            | TypedValue::Serv(s)
            | TypedValue::Alias(s)
            | TypedValue::Namespace(s)
            | TypedValue::Text(s) => json!(s),
            TypedValue::Admin(a) => admin_to_json(a),
            TypedValue::Site(s) => site_to_json(s),
            TypedValue::VList(v) => vlist_to_json(v),
            TypedValue::PubKey(k) => key_to_json(k),
            TypedValue::SecKey(b) | TypedValue::Binary(b) => match std::str::from_utf8(b) {
                Ok(s) if matches!(self, TypedValue::SecKey(_)) => json!(s),
                _ => json!(hex::encode(b)),
            },
            TypedValue::Locations(l) => l.to_json(),
        };
        json!({"format": self.format().name(), "value": value})
    }
}

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;
