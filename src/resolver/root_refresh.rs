//! The verified root refresh: with a trust root (the global one for the built-in root), the
//! new root information is taken only when its records verify (`crate::trust`): `0.0/0.0`,
//! `0.NA/0.NA` and the service handles its HS_SERV values name are read whole at the current
//! root sites, their HS_SIGNATURE and HS_CERT chains checked up to the trust root, and the
//! sites of the records that verify replace the root sites at once; a root record that fails
//! leaves the old root in place and says why. Optionally the verified records are written to
//! a file in the reference client's `bootstrap_handles` format.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;

use bytes::Bytes;
use serde_json::json;
use tracing::info;

use crate::trust::{verify_records, TrustRoot, ROOT_HANDLE, TRUST_ROOT_HANDLE};
use crate::wire::{json::value_to_json, HandleValue, Limits};

use super::error::ResolveError;
use super::sites::{text_of, Site, SiteKind};

/// Most service handles read for one refresh (the global root names about a dozen).
pub(crate) const MAX_ROOT_SERVICES: usize = 64;

/// Reads the root records whole with `read` (every value of a handle, at the current root
/// sites), verifies them against `trust` at `now` (seconds since the epoch), and returns the
/// sites of those that verify, with the verified records.
pub(crate) async fn verified_root_sites<R, F>(
    read: R,
    trust: &TrustRoot,
    now: u64,
    limits: Limits,
) -> Result<(Vec<Site>, BTreeMap<String, Vec<HandleValue>>), ResolveError>
where
    R: Fn(String) -> F,
    F: Future<Output = Result<Vec<HandleValue>, ResolveError>>,
{
    let mut records: BTreeMap<String, Vec<HandleValue>> = BTreeMap::new();
    for name in [TRUST_ROOT_HANDLE, ROOT_HANDLE] {
        records.insert(name.to_string(), read(name.to_string()).await?);
    }
    let services: Vec<String> = records
        .get(ROOT_HANDLE)
        .map(|values| {
            values
                .iter()
                .filter(|v| v.is_type(SiteKind::Service.serv_type()))
                .map(|v| text_of(&v.data).trim().to_string())
                .take(MAX_ROOT_SERVICES)
                .collect()
        })
        .unwrap_or_default();
    for service in services {
        if records.contains_key(&service) {
            continue;
        }
        // A service handle that cannot be read is left out (as one that does not verify).
        match read(service.clone()).await {
            Ok(values) => {
                records.insert(service, values);
            }
            Err(e) => info!(%service, error = %e, "root service handle not read; left out"),
        }
    }
    let verification = verify_records(&records, trust, now);
    if let Some(Err(e)) = verification.get(ROOT_HANDLE) {
        return Err(ResolveError::UntrustedRoot {
            reason: e.to_string(),
        });
    }
    let mut sites = Vec::new();
    let mut verified = BTreeMap::new();
    for (handle, outcome) in verification.iter() {
        match outcome {
            Ok(_) => {
                let Some(values) = records.get(handle) else {
                    continue;
                };
                if handle == ROOT_HANDLE || !handle.eq_ignore_ascii_case(TRUST_ROOT_HANDLE) {
                    sites.extend(
                        values
                            .iter()
                            .filter(|v| SiteKind::Service.site_types().iter().any(|t| v.is_type(t)))
                            .filter_map(|v| Site::from_value(v, &limits)),
                    );
                }
                verified.insert(handle.to_string(), values.clone());
            }
            Err(e) => info!(%handle, error = %e, "root record does not verify; left out"),
        }
    }
    Ok((sites, verified))
}

/// Writes `records` to `path` in the reference client's `bootstrap_handles` format (written
/// to a temporary file beside it, then renamed over it).
pub(crate) fn persist(
    path: &Path,
    records: &BTreeMap<String, Vec<HandleValue>>,
    now_unix: u64,
) -> std::io::Result<()> {
    let handles: serde_json::Map<String, serde_json::Value> = records
        .iter()
        .map(|(h, values)| {
            let values: Vec<serde_json::Value> = values.iter().map(value_to_json).collect();
            (h.clone(), json!({"handle": h, "values": values}))
        })
        .collect();
    let doc = json!({"lastUpdate": now_unix.saturating_mul(1000), "handles": handles});
    let text = serde_json::to_vec_pretty(&doc).map_err(std::io::Error::other)?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, Bytes::from(text))?;
    std::fs::rename(&tmp, path)
}
