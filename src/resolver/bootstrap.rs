//! Root (global) service information: the built-in GHR sites (the reference client's own
//! `bootstrap_handles` file, built in), its binary `root_info` file and its JSON
//! `bootstrap_handles` file (PROTOCOL.md §11.4).
//!
//! The global sites are the HS_SITE / HS_SITE.6 values of `0.NA/0.NA`, plus, recursively, the
//! sites of every HS_SERV service handle listed there.

use std::collections::{BTreeMap, HashSet};

use bytes::Bytes;
use thiserror::Error;

use crate::wire::value::decode_values;
use crate::wire::{DecodeError, EncodeError, HandleValue, JsonError, Limits, Reader};

use super::sites::{extend_unique, Site};

/// The root handle, whose HS_SITE values are the global service information.
pub const ROOT_HANDLE: &str = "0.NA/0.NA";
/// Most service-handle hops followed while reading a bootstrap file.
const MAX_BOOTSTRAP_DEPTH: usize = 20;

/// A bootstrap file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BootstrapError {
    /// The file could not be read.
    #[error("cannot read {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        message: String,
    },
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
    /// A site given in JSON could not be encoded.
    #[error("bootstrap_handles: {0}")]
    Encode(#[from] EncodeError),
    /// The information holds no usable site.
    #[error("no root site in the bootstrap information")]
    NoSites,
}

/// Reads the reference client's binary `root_info`: `int4 totalLen (= file size − 4) ‖ int4
/// valueCount ‖ values` (the values of `0.NA/0.NA`).
pub fn read_root_info(bytes: &[u8], limits: &Limits) -> Result<Vec<HandleValue>, BootstrapError> {
    let mut r = Reader::new(Bytes::copy_from_slice(bytes));
    let declared = r.u32("root_info.total_length")?;
    if usize::try_from(declared).ok() != Some(r.remaining()) {
        return Err(BootstrapError::Length {
            declared,
            actual: r.remaining(),
        });
    }
    let values = decode_values(&mut r, "root_info.values", limits)?;
    r.finish("root_info")?;
    Ok(values)
}

/// The sites among `0.NA/0.NA`'s values (HS_SITE and HS_SITE.6; HS_SERV values need the
/// network, or [`root_sites_from_handles`]).
pub fn root_sites_from_values(values: &[HandleValue], limits: &Limits) -> Vec<Site> {
    let mut sites = Vec::new();
    extend_unique(
        &mut sites,
        values
            .iter()
            .filter(|v| v.is_type("HS_SITE") || v.is_type("HS_SITE.6"))
            .filter_map(|v| Site::from_value(v, limits)),
    );
    sites
}

/// The global sites from a set of handles (as read from `bootstrap_handles`): the sites of
/// `0.NA/0.NA` plus those of every HS_SERV handle reachable from it within the set.
pub fn root_sites_from_handles(
    handles: &BTreeMap<String, Vec<HandleValue>>,
    limits: &Limits,
) -> Vec<Site> {
    let mut sites = Vec::new();
    let mut visited = HashSet::new();
    let mut todo = vec![(ROOT_HANDLE.to_string(), 0usize)];
    while let Some((handle, depth)) = todo.pop() {
        if depth > MAX_BOOTSTRAP_DEPTH || !visited.insert(handle.to_ascii_uppercase()) {
            continue;
        }
        let Some(values) = handles
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(&handle))
            .map(|(_, v)| v)
        else {
            continue;
        };
        extend_unique(&mut sites, root_sites_from_values(values, limits));
        for v in values.iter().filter(|v| v.is_type("HS_SERV")) {
            todo.push((String::from_utf8_lossy(&v.data).into_owned(), depth + 1));
        }
    }
    sites
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};

    fn root_info_file(values: &[HandleValue]) -> Vec<u8> {
        let mut body = BytesMut::new();
        crate::wire::value::encode_values(&mut body, "values", values).unwrap();
        let mut out = BytesMut::new();
        // int4 totalLen = everything after this field.
        out.put_u32(body.len() as u32);
        out.extend_from_slice(&body);
        out.to_vec()
    }

    #[test]
    fn reads_a_root_info_file() {
        let values = vec![
            HandleValue::new(1, "HS_SERV", "0.GHR/20"),
            HandleValue::new(100, "HS_ADMIN", vec![0u8, 1]),
        ];
        let file = root_info_file(&values);
        assert_eq!(read_root_info(&file, &Limits::default()).unwrap(), values);
    }

    #[test]
    fn rejects_root_info_with_a_wrong_total_length_or_trailing_bytes() {
        let mut file = root_info_file(&[HandleValue::new(1, "URL", "x")]);
        file.push(0);
        assert!(matches!(
            read_root_info(&file, &Limits::default()),
            Err(BootstrapError::Length { .. })
        ));
        assert!(read_root_info(&[0, 0], &Limits::default()).is_err());
    }
}
