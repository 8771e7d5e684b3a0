//! A JSON description of a test server's handles (used by `examples/testserver.rs`).
//!
//! ```json
//! {
//!   "case_insensitive": false,
//!   "homed_prefixes": ["20.500.1", "0.NA"],
//!   "handles": {
//!     "20.500.1/x": [
//!       {"index": 1, "type": "URL", "data": "https://example.org/"},
//!       {"index": 2, "type": "EMAIL", "data": "a@example.org", "ttl": 3600},
//!       {"index": 3, "type": "SECRET", "data_hex": "00ff", "permissions": 12},
//!       {"index": 4, "type": "DESC", "data": "old", "ttl": 1900000000, "ttl_type": "absolute",
//!        "timestamp": 1767225600}
//!     ],
//!     "0.NA/20.500.1": [{"index": 1, "type": "HS_SITE", "self_site": true}]
//!   },
//!   "referrals": {
//!     "20.500.1/moved": {"code": 302, "handle": "0.NA/20.500.2"}
//!   },
//!   "urns": {
//!     "urn:fdc:example.org:2024:img-1": ["http://example.org/img/1", "http://mirror.example.net/img/1"]
//!   }
//! }
//! ```
//! Per value: `index` and `type` are required; the data is `data` (UTF-8 text), `data_hex`
//! (bytes in hex), or `"self_site": true` (the serving server's own HS_SITE record, filled in
//! once its port is known). `ttl` defaults to 86400, `ttl_type` to `"relative"`,
//! `permissions` to 14 (0x0E: admin read+write, public read; 12 = not public),
//! `timestamp` to 0. `homed_prefixes` (optional): when present, other prefixes get 301.
//! Referral `code` is 302 or 303; `handle` is the referral handle (may be empty).
//! `urns` (optional): `urn:fdc` and `urn-3` URNs and their URLs in order of preference, served
//! by the RFC 2169 resolver of the server's HTTP side ([`uri_res`](super::uri_res)); a URN
//! is found in any lexically equivalent spelling.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::Deserialize;

use super::store::{Referral, Store};
use super::uri_res::Urns;
use crate::ident::{IdentError, Urn};
use crate::wire::{HandleValue, Permissions, ReferralBody, ResponseCode, Ttl};

/// The JSON document.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreFile {
    /// Fold ASCII case in suffixes too.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Prefixes served; absent = every prefix.
    #[serde(default)]
    pub homed_prefixes: Vec<String>,
    /// Handle → values.
    #[serde(default)]
    pub handles: BTreeMap<String, Vec<ValueSpec>>,
    /// Handle → referral answer.
    #[serde(default)]
    pub referrals: BTreeMap<String, ReferralSpec>,
    /// URN → its URLs (RFC 2169 `N2L` / `N2Ls`), in order of preference.
    #[serde(default)]
    pub urns: BTreeMap<String, Vec<String>>,
}

/// One value in the JSON document.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueSpec {
    /// Value index.
    pub index: u32,
    /// Value type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Data as UTF-8 text.
    #[serde(default)]
    pub data: Option<String>,
    /// Data as hex.
    #[serde(default)]
    pub data_hex: Option<String>,
    /// Data = the serving server's HS_SITE record.
    #[serde(default)]
    pub self_site: bool,
    /// TTL seconds (default 86400).
    #[serde(default)]
    pub ttl: Option<u32>,
    /// `"relative"` (default) or `"absolute"`.
    #[serde(default)]
    pub ttl_type: Option<String>,
    /// Permission byte (default 14).
    #[serde(default)]
    pub permissions: Option<u8>,
    /// Timestamp, seconds since the epoch (default 0).
    #[serde(default)]
    pub timestamp: Option<u32>,
}

/// One referral in the JSON document.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferralSpec {
    /// 302 or 303.
    pub code: u32,
    /// The referral handle.
    #[serde(default)]
    pub handle: String,
}

/// Why a JSON store could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreFileError {
    /// Not valid JSON of the expected shape.
    #[error("invalid store file: {0}")]
    Json(#[from] serde_json::Error),
    /// A value is wrong (which handle, which index, why).
    #[error("{handle} index {index}: {reason}")]
    Value {
        /// The handle.
        handle: String,
        /// The value index.
        index: u32,
        /// What is wrong.
        reason: String,
    },
    /// A referral code other than 302/303.
    #[error("{0}: referral code must be 302 or 303")]
    ReferralCode(String),
    /// A record of a reference-shaped file ([`ReferenceStore`](super::ReferenceStore)) that
    /// does not read.
    #[error("{handle}: {reason}")]
    Reference {
        /// The handle (empty: the document itself).
        handle: String,
        /// Why.
        reason: String,
    },
    /// A key of `urns` that is not a `urn:fdc` or `urn-3` URN.
    #[error("urns: {urn:?}: {error}")]
    Urn {
        /// The key as written.
        urn: String,
        /// Why it is not a URN.
        error: IdentError,
    },
}

impl StoreFile {
    /// Parses the JSON text.
    pub fn parse(text: &str) -> Result<StoreFile, StoreFileError> {
        Ok(serde_json::from_str(text)?)
    }

    /// An empty store with this file's case rule.
    pub fn new_store(&self) -> Store {
        if self.case_insensitive {
            Store::case_insensitive()
        } else {
            Store::new()
        }
    }

    /// The `urns` section, keyed by canonical URN.
    pub fn urns(&self) -> Result<Urns, StoreFileError> {
        let mut urns = Urns::new();
        for (text, urls) in &self.urns {
            let urn = Urn::parse(text).map_err(|error| StoreFileError::Urn {
                urn: text.clone(),
                error,
            })?;
            urns.insert(&urn, urls.clone());
        }
        Ok(urns)
    }

    /// Fills `store`; `self_site` values get `site_record` as their data.
    pub fn fill(&self, store: &Store, site_record: &Bytes) -> Result<(), StoreFileError> {
        for p in &self.homed_prefixes {
            store.home_prefix(p);
        }
        for (handle, specs) in &self.handles {
            let values = specs
                .iter()
                .map(|s| s.to_value(handle, site_record))
                .collect::<Result<Vec<_>, _>>()?;
            store.insert(handle, values);
        }
        for (handle, r) in &self.referrals {
            let code = match r.code {
                302 => ResponseCode::ServiceReferral,
                303 => ResponseCode::PrefixReferral,
                _ => return Err(StoreFileError::ReferralCode(handle.clone())),
            };
            store.insert_referral(
                handle,
                Referral {
                    code,
                    body: ReferralBody {
                        referral_handle: Bytes::from(r.handle.clone()),
                        values: None,
                    },
                },
            );
        }
        Ok(())
    }
}

impl ValueSpec {
    fn to_value(&self, handle: &str, site_record: &Bytes) -> Result<HandleValue, StoreFileError> {
        let err = |reason: &str| StoreFileError::Value {
            handle: handle.to_string(),
            index: self.index,
            reason: reason.to_string(),
        };
        let data = match (&self.data, &self.data_hex, self.self_site) {
            (Some(t), None, false) => Bytes::from(t.clone()),
            (None, Some(h), false) => {
                Bytes::from(hex::decode(h).map_err(|e| err(&format!("data_hex: {e}")))?)
            }
            (None, None, true) => site_record.clone(),
            (None, None, false) => Bytes::new(),
            _ => return Err(err("give only one of data, data_hex, self_site")),
        };
        let mut v = HandleValue::new(self.index, Bytes::from(self.type_name.clone()), data);
        let ttl = self.ttl.unwrap_or(86_400);
        v.ttl = match self.ttl_type.as_deref() {
            None | Some("relative") => Ttl::from_parts(0, ttl),
            Some("absolute") => Ttl::Absolute(ttl),
            Some(_) => return Err(err("ttl_type must be relative or absolute")),
        };
        v.permissions = Permissions(self.permissions.unwrap_or(Permissions::DEFAULT.0));
        v.timestamp = self.timestamp.unwrap_or(0);
        Ok(v)
    }
}
