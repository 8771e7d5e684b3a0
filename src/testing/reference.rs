//! A handles JSON in the reference's own shape (`testserver --reference-store`): an object of
//! handle → `{"handle", "values"}` with REST API values (`string`, `hex`, `base64`, `admin`,
//! `vlist`, `site` and `key` formats), as the reference's `hdl-dumpjson` writes it and as
//! `server/handles.json` of the batch samples (`fixtures/genericbatch/`) holds it; or the
//! gateway sets' shape (`fixtures/gateway/handles.json`): an object whose `handles` list holds
//! `{"handle", "values", ...}` records (its other members, such as `prefix` and `names`, are
//! not read).
//!
//! ```
//! use handle_resolver::testing::{ReferenceStore, Store};
//! let text = r#"{"0.NA/20.500.1": {"handle": "0.NA/20.500.1", "values": [
//!     {"index": 100, "type": "HS_ADMIN", "data": {"format": "admin",
//!      "value": {"handle": "0.NA/20.500.1", "index": 300, "permissions": "111111111111"}}}]}}"#;
//! let file = ReferenceStore::parse(text)?;
//! assert_eq!(file.homed_prefixes(), ["20.500.1"]);
//! let store = Store::case_insensitive();
//! file.fill(&store, None);
//! assert!(store.get("0.na/20.500.1").is_some());
//! assert!(!store.serves("20.500.2/x"));
//! # Ok::<(), handle_resolver::testing::StoreFileError>(())
//! ```

use bytes::Bytes;
use serde_json::Value as Json;

use super::json::StoreFileError;
use super::store::Store;
use crate::wire::json::values_from_json;
use crate::wire::{HandleValue, Limits};

/// The handles of a reference-shaped JSON file, in file order.
#[derive(Debug, Clone)]
pub struct ReferenceStore {
    handles: Vec<(String, Vec<HandleValue>)>,
}

impl ReferenceStore {
    /// Reads the JSON text: an object of handle → `{"handle"?, "values": [...]}`, or an
    /// object whose `handles` member is a list of `{"handle", "values": [...]}`.
    ///
    /// ```
    /// use handle_resolver::testing::ReferenceStore;
    /// let text = r#"{"prefix": "20.500.1", "handles": [{"handle": "20.500.1/x", "kind": "URL",
    ///     "values": [{"index": 1, "type": "URL",
    ///                 "data": {"format": "string", "value": "https://example.org/"}}]}]}"#;
    /// let file = ReferenceStore::parse(text)?;
    /// assert_eq!(file.handles()[0].0, "20.500.1/x");
    /// # Ok::<(), handle_resolver::testing::StoreFileError>(())
    /// ```
    pub fn parse(text: &str) -> Result<ReferenceStore, StoreFileError> {
        let doc: Json = serde_json::from_str(text)?;
        let err = |handle: &str, reason: String| StoreFileError::Reference {
            handle: handle.to_string(),
            reason,
        };
        let Json::Object(map) = doc else {
            return Err(err("", "expected an object of handle → record".into()));
        };
        let records: Vec<(String, Json)> = match map.get("handles") {
            Some(Json::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, record)| {
                    let handle = record.get("handle").and_then(Json::as_str).ok_or_else(|| {
                        err(&format!("handles[{i}]"), "no \"handle\" text".into())
                    })?;
                    Ok((handle.to_string(), record.clone()))
                })
                .collect::<Result<_, StoreFileError>>()?,
            Some(_) => return Err(err("handles", "expected a list of records".into())),
            None => map.into_iter().collect(),
        };
        let mut handles = Vec::with_capacity(records.len());
        for (handle, record) in records {
            let values = record
                .get("values")
                .ok_or_else(|| err(&handle, "no \"values\" array".into()))?;
            let values = values_from_json(values, &Limits::default())
                .map_err(|e| err(&handle, e.to_string()))?;
            handles.push((handle, values));
        }
        Ok(ReferenceStore { handles })
    }

    /// The handles and their values, in file order.
    pub fn handles(&self) -> &[(String, Vec<HandleValue>)] {
        &self.handles
    }

    /// The prefixes whose `0.NA/` records the file holds (`0.NA/0.NA` → `0.NA`), which the
    /// reference server that wrote it homes.
    pub fn homed_prefixes(&self) -> Vec<String> {
        self.handles
            .iter()
            .filter_map(|(h, _)| {
                h.get(..5)
                    .filter(|p| p.eq_ignore_ascii_case("0.NA/"))
                    .and_then(|_| h.get(5..))
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
            })
            .collect()
    }

    /// Stores every handle in `store` and homes [`homed_prefixes`](Self::homed_prefixes).
    /// With `own_site` (this server's HS_SITE record), the HS_SITE values of the `0.NA/`
    /// records become it, so that the prefixes this server homes point at it (its address,
    /// port and key) whatever port the file's server listened on.
    pub fn fill(&self, store: &Store, own_site: Option<&Bytes>) {
        for p in self.homed_prefixes() {
            store.home_prefix(p);
        }
        for (handle, values) in &self.handles {
            let is_na = handle
                .get(..5)
                .is_some_and(|p| p.eq_ignore_ascii_case("0.NA/"));
            let values = values
                .iter()
                .map(|v| match own_site {
                    Some(site) if is_na && v.is_type("HS_SITE") => {
                        let mut v = v.clone();
                        v.data = site.clone();
                        v
                    }
                    _ => v.clone(),
                })
                .collect();
            store.insert(handle, values);
        }
    }

    /// Stores every handle in `store` as the file holds it (HS_SITE values kept) and serves
    /// as the server that wrote it did when it was the root of its own Handle System (the
    /// gateway sets' lab server, `testserver --reference-store FILE --keep-sites`): homes
    /// [`homed_prefixes`](Self::homed_prefixes) and `0.NA`, so that its `0.NA/` records are
    /// answered and a `0.NA/` handle it lacks is not found.
    ///
    /// ```
    /// use handle_resolver::testing::{ReferenceStore, Store};
    /// let file = ReferenceStore::parse(r#"{"handles": [{"handle": "0.NA/20.500.1", "values": []}]}"#)?;
    /// let store = Store::case_insensitive();
    /// file.fill_as_recorded(&store);
    /// assert!(store.serves("0.NA/20.500.1") && store.serves("0.NA/20.500.2"));
    /// assert!(store.serves("20.500.1/x") && !store.serves("20.500.2/x"));
    /// # Ok::<(), handle_resolver::testing::StoreFileError>(())
    /// ```
    pub fn fill_as_recorded(&self, store: &Store) {
        self.fill(store, None);
        store.home_prefix("0.NA");
    }
}
