//! The root (global) service information as files carry it, read with no I/O: the
//! reference client's binary `root_info` ([`read_root_info`]) and JSON `bootstrap_handles`
//! ([`read_bootstrap_handles`]), the copy of `bootstrap_handles` built into the crate
//! ([`builtin_root_sites`]), and the sites they name ([`root_sites`],
//! [`BootstrapHandles::root_sites`]) (PROTOCOL.md §11.4).
//!
//! The global sites are the HS_SITE / HS_SITE.6 values of [`ROOT_HANDLE`], plus, recursively,
//! the sites of every HS_SERV service handle listed there. The resolver starts from them, the
//! trust chain (`crate::trust`) checks root records read the same way, and the fuzz targets
//! and the CLI read these files through the same functions.

mod bootstrap;
mod root_info;

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::LazyLock;

use thiserror::Error;

use crate::ident::Handle;
use crate::wire::json::JsonError;
use crate::wire::{DecodeError, HandleValue, Limits, SiteInfo};

pub use bootstrap::{builtin_root_sites, read_bootstrap_handles, BootstrapHandles};
pub use root_info::read_root_info;

/// The root handle, whose HS_SITE values are the global service information.
pub const ROOT_HANDLE: &str = "0.NA/0.NA";

/// [`ROOT_HANDLE`] as a handle.
pub(crate) fn root_handle() -> &'static Handle {
    static ROOT: LazyLock<Handle> = LazyLock::new(|| Handle::from_checked_parts("0.NA", "0.NA"));
    &ROOT
}

/// A root file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RootFileError {
    /// The binary `root_info` does not decode.
    #[error("root_info: {0}")]
    Decode(#[from] DecodeError),
    /// `root_info`'s total length does not match the file.
    #[error("root_info: total length {declared} but {actual} bytes follow it")]
    Length {
        /// The length the file declares.
        declared: u32,
        /// The bytes after the length field.
        actual: usize,
    },
    /// The JSON file is not JSON, or not in the `bootstrap_handles` shape (the error names
    /// the field).
    #[error("bootstrap_handles: {0}")]
    Json(#[from] JsonError),
}

/// True when `file` is a `bootstrap_handles` file (JSON: its first non-blank byte is `{` or
/// `[`) rather than a binary `root_info` (which starts with its length).
pub fn is_bootstrap_handles(file: &[u8]) -> bool {
    matches!(
        file.iter().find(|c| !c.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    )
}

/// The sites among the values of [`ROOT_HANDLE`] (HS_SITE and HS_SITE.6, each site once;
/// values that do not decode are skipped). HS_SERV values name service handles whose sites
/// need the network, or [`BootstrapHandles::root_sites`].
pub fn root_sites(values: &[HandleValue], limits: &Limits) -> Vec<SiteInfo> {
    let mut sites = Vec::new();
    extend_unique(&mut sites, site_values(values, limits));
    sites
}

/// The sites of the HS_SITE / HS_SITE.6 values among `values`, in order.
fn site_values<'a>(
    values: &'a [HandleValue],
    limits: &'a Limits,
) -> impl Iterator<Item = SiteInfo> + 'a {
    values
        .iter()
        .filter(|v| v.is_type("HS_SITE") || v.is_type("HS_SITE.6"))
        .filter_map(move |v| match SiteInfo::decode(&v.data, limits) {
            Ok(site) => Some(site),
            Err(e) => {
                tracing::debug!(index = v.index, error = %e, "ignoring undecodable site value");
                None
            }
        })
}

/// What makes two sites the same: each server's address and interface ports, in record
/// order (not the serial, keys or attributes).
pub(crate) fn site_identity(site: &SiteInfo) -> Vec<(IpAddr, Vec<u32>)> {
    site.servers
        .iter()
        .map(|s| (s.address, s.interfaces.iter().map(|i| i.port).collect()))
        .collect()
}

/// Appends the sites of `more` that are not in `sites` yet.
fn extend_unique(sites: &mut Vec<SiteInfo>, more: impl IntoIterator<Item = SiteInfo>) {
    extend_unique_by(sites, more, site_identity);
}

/// Appends the items of `more` whose site (`identity`: [`site_identity`]) is not in `items`
/// yet, repeats within `more` included. Linear: each identity is built once (a server's
/// answer may list up to `Limits::max_values` sites).
pub(crate) fn extend_unique_by<T>(
    items: &mut Vec<T>,
    more: impl IntoIterator<Item = T>,
    identity: impl Fn(&T) -> Vec<(IpAddr, Vec<u32>)>,
) {
    let mut seen: HashSet<_> = items.iter().map(&identity).collect();
    for item in more {
        if seen.insert(identity(&item)) {
            items.push(item);
        }
    }
}
