//! The reference client's `bootstrap_handles` JSON file (PROTOCOL.md §11.4), read through the
//! wire layer's JSON codec ([`crate::wire::json`]).
//!
//! The file as the reference client ships and rewrites it:
//! `{"lastUpdate": <ms since the epoch>, "handles": {"<handle>": {"handle": "<handle>",
//! "values": [<values in the REST API shape>]}, ...}}`: the trust root `0.0/0.0`, the root
//! handle `0.NA/0.NA` and the GHR service handles `0.GHR/...`.

use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

use serde_json::Value as Json;

use crate::wire::json::JsonError;
use crate::wire::json::{
    get, max_json_len, need, object, unsigned, value_to_json, values_at, At, JsonErrorKind,
};
use crate::wire::{HandleValue, Limits, SiteInfo};

use super::{extend_unique, site_values, RootFileError, ROOT_HANDLE};

/// Most service-handle hops followed while reading a bootstrap file.
const MAX_BOOTSTRAP_DEPTH: usize = 20;

/// A `bootstrap_handles` file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BootstrapHandles {
    /// When the reference client last refreshed the file, milliseconds since the epoch
    /// (`lastUpdate`; absent in a hand-written file).
    pub last_update: Option<u64>,
    /// Handle → its values, timestamps and TTLs as the file gives them.
    pub handles: BTreeMap<String, Vec<HandleValue>>,
}

/// Reads a `bootstrap_handles` file (at most [`max_json_len`] bytes; each record at most
/// [`Limits::max_values`] values). A record may also be a bare array of values. Errors name
/// the field: `handles["0.NA/0.NA"].values[5].data.value.servers[0].address`.
///
/// ```
/// use handle_resolver::root::read_bootstrap_handles;
/// use handle_resolver::wire::Limits;
/// let file = br#"{"lastUpdate": 1564121740225, "handles": {"0.NA/0.NA": {"handle": "0.NA/0.NA",
///     "values": [{"index": 20, "type": "HS_SERV", "ttl": 86400, "timestamp": "2015-12-09T17:49:42Z",
///                 "data": {"format": "string", "value": "0.GHR/20"}}]}}}"#;
/// let b = read_bootstrap_handles(file, &Limits::default())?;
/// assert_eq!(b.last_update, Some(1_564_121_740_225));
/// assert_eq!(b.handles["0.NA/0.NA"][0].timestamp, 1_449_683_382);
/// # Ok::<(), handle_resolver::root::RootFileError>(())
/// ```
pub fn read_bootstrap_handles(
    file: &[u8],
    limits: &Limits,
) -> Result<BootstrapHandles, RootFileError> {
    let limit = max_json_len(limits);
    if file.len() > limit {
        return Err(At::ROOT
            .err(JsonErrorKind::TooLarge {
                len: file.len(),
                limit,
            })
            .into());
    }
    let doc: Json = serde_json::from_slice(file)
        .map_err(|e| At::ROOT.err(JsonErrorKind::Syntax(e.to_string())))?;
    Ok(bootstrap_at(&doc, limits)?)
}

impl BootstrapHandles {
    /// A file of these records (`last_update` in milliseconds since the epoch).
    pub fn new(last_update: Option<u64>, handles: BTreeMap<String, Vec<HandleValue>>) -> Self {
        Self {
            last_update,
            handles,
        }
    }

    /// The file as the reference client writes it (pretty-printed JSON, values in the REST
    /// API shape), which [`read_bootstrap_handles`] reads back.
    pub fn to_json(&self) -> Vec<u8> {
        let handles: serde_json::Map<String, Json> = self
            .handles
            .iter()
            .map(|(h, values)| {
                let values: Vec<Json> = values.iter().map(value_to_json).collect();
                (
                    h.clone(),
                    serde_json::json!({"handle": h, "values": values}),
                )
            })
            .collect();
        let mut doc = serde_json::Map::new();
        if let Some(t) = self.last_update {
            doc.insert("lastUpdate".into(), t.into());
        }
        doc.insert("handles".into(), Json::Object(handles));
        // Serialising a `serde_json::Value` cannot fail (its keys are strings).
        serde_json::to_vec_pretty(&Json::Object(doc)).unwrap_or_default()
    }

    /// The global sites: those of [`ROOT_HANDLE`] plus those of every HS_SERV handle
    /// reachable from it within the file (handles compared ASCII case-insensitively, at most
    /// 20 hops deep), each site once.
    pub fn root_sites(&self, limits: &Limits) -> Vec<SiteInfo> {
        let mut sites = Vec::new();
        let mut visited = HashSet::new();
        let mut todo = vec![(ROOT_HANDLE.to_string(), 0usize)];
        while let Some((handle, depth)) = todo.pop() {
            if depth > MAX_BOOTSTRAP_DEPTH || !visited.insert(handle.to_ascii_uppercase()) {
                continue;
            }
            let Some(values) = self
                .handles
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&handle))
                .map(|(_, v)| v)
            else {
                continue;
            };
            extend_unique(&mut sites, site_values(values, limits));
            for v in values.iter().filter(|v| v.is_type("HS_SERV")) {
                todo.push((String::from_utf8_lossy(&v.data).into_owned(), depth + 1));
            }
        }
        sites
    }
}

fn bootstrap_at(doc: &Json, limits: &Limits) -> Result<BootstrapHandles, JsonError> {
    let at = At::ROOT;
    let o = object(doc, &at)?;
    let last_update = get(o, "lastUpdate")
        .map(|t| {
            unsigned(
                t,
                &at.key("lastUpdate"),
                u64::MAX,
                "milliseconds since the epoch",
            )
        })
        .transpose()?;
    let handles_at = at.key("handles");
    let mut handles = BTreeMap::new();
    for (handle, record) in object(need(o, "handles", &at)?, &handles_at)? {
        let at = handles_at.key(handle);
        let values = match record {
            Json::Array(_) => values_at(record, &at, limits)?,
            _ => values_at(
                need(object(record, &at)?, "values", &at)?,
                &at.key("values"),
                limits,
            )?,
        };
        handles.insert(handle.clone(), values);
    }
    Ok(BootstrapHandles {
        last_update,
        handles,
    })
}

/// The reference client's `bootstrap_handles` file of 2019-07-26 (Handle.Net 9.2.0), the
/// built-in root.
const BUILTIN_BOOTSTRAP: &str = include_str!("bootstrap_handles");

/// The built-in root sites, read from [`BUILTIN_BOOTSTRAP`] once.
static BUILTIN_SITES: LazyLock<Vec<SiteInfo>> = LazyLock::new(|| {
    let limits = Limits::default();
    match read_bootstrap_handles(BUILTIN_BOOTSTRAP.as_bytes(), &limits) {
        Ok(b) => b.root_sites(&limits),
        Err(e) => {
            // Not reachable with the file shipped (a test reads it); a resolver built on
            // it then reports that the root holds no site.
            tracing::error!(error = %e, "the built-in bootstrap_handles does not read");
            Vec::new()
        }
    }
});

/// The global root sites of the reference client's `bootstrap_handles` file as shipped with
/// Handle.Net 9.2.0 (`lastUpdate` 2019-07-26; PROTOCOL.md §11.4): the HS_SITE values of
/// `0.NA/0.NA` and of the `0.GHR/...` service handles it names, with their DSA server keys
/// and site serials. The resolver refreshes them from `0.NA/0.NA` on first use (a root site
/// announcing a newer serial) and when a server answers that they are out of date (300).
pub fn builtin_root_sites() -> Vec<SiteInfo> {
    BUILTIN_SITES.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn builtin_root_is_the_shipped_bootstrap_file() {
        let shipped = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/reference/root-files/bootstrap_handles"
        ))
        .unwrap();
        assert_eq!(
            BUILTIN_BOOTSTRAP.as_bytes(),
            &shipped[..],
            "the two copies differ"
        );
        let sites = builtin_root_sites();
        // PROTOCOL.md §11.4: 13 single-server sites, 4 of them not primary.
        assert_eq!(sites.len(), 13);
        assert_eq!(sites.iter().filter(|s| !s.primary).count(), 4);
        let cnri = sites
            .iter()
            .find(|s| s.description().as_deref() == Some("CNRI"))
            .unwrap();
        assert!(cnri.primary);
        assert_eq!(
            cnri.serial, 15,
            "the file's serial, so a newer one triggers a refresh"
        );
        let server = cnri.server_for(b"0.NA/10.1045").unwrap();
        assert_eq!(server.address.to_string(), "38.100.138.131");
        assert_eq!(
            server.socket_addr(Protocol::Udp, false).unwrap().port(),
            2641
        );
        assert!(sites
            .iter()
            .all(|s| s.servers[0].public_key().is_ok_and(|k| k.is_some())));
    }

    use crate::root::{read_root_info, root_sites};
    use crate::wire::{json, Protocol, PublicKey, SiteInfo, Ttl};

    /// The reference client's file as shipped (Handle.Net 9.2.0, lastUpdate 2019-07-26).
    fn reference_file() -> Vec<u8> {
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/reference/root-files/bootstrap_handles"
        ))
        .unwrap()
    }

    fn reference_root_info() -> Vec<u8> {
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/reference/root-files/root_info"
        ))
        .unwrap()
    }

    #[test]
    fn reads_the_reference_file_as_it_is() {
        let b = read_bootstrap_handles(&reference_file(), &Limits::default()).unwrap();
        assert_eq!(b.last_update, Some(1_564_164_940_225));
        let names: Vec<&str> = b.handles.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "0.0/0.0",
                "0.GHR/10",
                "0.GHR/11",
                "0.GHR/20",
                "0.GHR/21",
                "0.GHR/22",
                "0.GHR/25",
                "0.GHR/44",
                "0.GHR/77",
                "0.GHR/86",
                "0.NA/0.NA"
            ]
        );
        let doc: Json = serde_json::from_slice(&reference_file()).unwrap();
        let root = &b.handles["0.NA/0.NA"];
        assert_eq!(
            root.len(),
            doc["handles"]["0.NA/0.NA"]["values"]
                .as_array()
                .unwrap()
                .len()
        );
        // {"index": 100, "type": "HS_ADMIN", ..., "timestamp": "2015-12-08T22:00:05Z"}
        assert_eq!(root[0].index, 100);
        assert_eq!(root[0].timestamp, 1_449_612_005);
        assert_eq!(root[0].ttl, Ttl::Relative(86_400));
        // The trust root's RSA key: n is 4096 bits with Java's sign byte.
        let trust = &b.handles["0.0/0.0"];
        let key = trust.iter().find(|v| v.is_type("HS_PUBKEY")).unwrap();
        let PublicKey::Rsa(rsa) = PublicKey::decode_bytes(&key.data).unwrap() else {
            panic!("not RSA")
        };
        assert_eq!(rsa.modulus.len(), 513);
        assert_eq!(rsa.modulus[0], 0);
        // The disabled `#HS_SITE` is kept as the bytes the file gives in base64.
        let disabled = root.iter().find(|v| v.is_type("#HS_SITE")).unwrap();
        assert!(SiteInfo::decode(&disabled.data, &Limits::default()).is_ok());
        // Every value encodes back to the file's own JSON.
        for (handle, values) in &b.handles {
            for (i, v) in values.iter().enumerate() {
                let want = &doc["handles"][handle]["values"][i];
                assert_eq!(&json::value_to_json(v), want, "{handle} {i}");
            }
        }
    }

    #[test]
    fn the_json_sites_are_the_bytes_of_root_info() {
        // root_info (binary) and bootstrap_handles (JSON) ship the same root values: the JSON
        // decoder must rebuild every HS_SITE byte for byte, keys included.
        let limits = Limits::default();
        let binary = read_root_info(&reference_root_info(), &limits).unwrap();
        let b = read_bootstrap_handles(&reference_file(), &limits).unwrap();
        let root = &b.handles["0.NA/0.NA"];
        let mut compared = 0;
        for v in &binary {
            let Some(j) = root
                .iter()
                .find(|j| j.index == v.index && j.type_name == v.type_name)
            else {
                continue;
            };
            assert_eq!(j, v, "index {}", v.index);
            compared += 1;
        }
        assert!(compared >= 8, "only {compared} values in both files");
        let from_json = root_sites(root, &limits);
        let from_binary = root_sites(&binary, &limits);
        assert_eq!(from_json, from_binary);
    }

    #[test]
    fn the_reference_file_yields_the_global_sites() {
        let limits = Limits::default();
        let b = read_bootstrap_handles(&reference_file(), &limits).unwrap();
        let sites = b.root_sites(&limits);
        let mut got: Vec<(String, bool)> = sites
            .iter()
            .map(|s| (s.servers[0].address.to_string(), s.primary))
            .collect();
        got.sort();
        // PROTOCOL.md §11.4, the table of the bundled snapshot: address, primary.
        let mut want: Vec<(String, bool)> = [
            ("38.100.138.131", true),   // CNRI
            ("132.151.1.179", false),   // East coast root mirror
            ("134.76.10.100", false),   // GWDG
            ("38.100.138.153", true),   // IDF GHR
            ("41.231.118.2", true),     // ATI MPA
            ("86.111.195.107", true),   // Saudi Arabia GHR
            ("196.12.152.22", true),    // Smart Africa - RURA
            ("212.193.120.1", true),    // Russia MPA 77
            ("134.76.30.197", true),    // GWDG MPA21
            ("119.90.34.34", true),     // CHC MPA
            ("47.90.103.77", false),    // 86.ARS.HK
            ("124.193.169.170", false), // ARS@CIC
            ("156.106.193.155", true),  // ITU MPA GHR 11
        ]
        .iter()
        .map(|(a, p)| (a.to_string(), *p))
        .collect();
        want.sort();
        assert_eq!(got, want);
        let cnri = sites
            .iter()
            .find(|s| s.servers[0].address.to_string() == "38.100.138.131");
        assert_eq!(cnri.unwrap().description().as_deref(), Some("CNRI"));
        for s in &sites {
            let server = &s.servers[0];
            assert_eq!(s.servers.len(), 1);
            assert!(matches!(server.public_key(), Ok(Some(PublicKey::Dsa(_)))));
            assert_eq!(
                server.socket_addr(Protocol::Udp, false).unwrap().port(),
                2641
            );
            assert_eq!(
                server.socket_addr(Protocol::Tcp, true).unwrap().port(),
                2641
            );
            // HTTP 8000 is listed everywhere, out of service at 0.GHR/86:101 (CHC MPA).
            assert!(server
                .interfaces
                .iter()
                .any(|i| i.protocol == Protocol::Http && i.port == 8000));
        }
    }

    #[test]
    fn rejects_files_it_cannot_read_naming_the_field() {
        let l = Limits::default();
        let err = |file: &str| match read_bootstrap_handles(file.as_bytes(), &l) {
            Err(RootFileError::Json(e)) => e,
            other => panic!("{file}: {other:?}"),
        };
        assert!(matches!(err("").kind, JsonErrorKind::Syntax(_)));
        assert_eq!(err("[]").kind, JsonErrorKind::WrongType("an object"));
        assert_eq!(err(r#"{"lastUpdate": 1}"#).path, "handles");
        assert_eq!(
            err(r#"{"lastUpdate": "x", "handles": {}}"#).path,
            "lastUpdate"
        );
        assert_eq!(
            err(r#"{"handles": {"0.NA/0.NA": {"handle": "0.NA/0.NA"}}}"#).path,
            "handles[\"0.NA/0.NA\"].values"
        );
        let e = err(
            r#"{"handles": {"0.NA/0.NA": {"values": [{"index": 5, "type": "HS_SITE",
                "data": {"format": "site", "value": {"servers": [{"serverId": 1,
                "address": "nowhere", "interfaces": []}]}}}]}}}"#,
        );
        assert_eq!(
            e.path,
            "handles[\"0.NA/0.NA\"].values[0].data.value.servers[0].address"
        );
        // A bare array of values is read too.
        let b = read_bootstrap_handles(
            br#"{"handles": {"0.GHR/1": [{"index": 7, "type": "URL", "data": "u"}]}}"#,
            &l,
        )
        .unwrap();
        assert_eq!(b.handles["0.GHR/1"][0].index, 7);
        assert_eq!(b.last_update, None);
    }
}
