//! Root (global) service information: the built-in GHR sites, the reference client's binary
//! `root_info` file and its JSON `bootstrap_handles` file (PROTOCOL.md §11.4).
//!
//! The global sites are the HS_SITE / HS_SITE.6 values of `0.NA/0.NA`, plus, recursively, the
//! sites of every HS_SERV service handle listed there.

use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;

use bytes::Bytes;
use thiserror::Error;

use crate::wire::value::decode_values;
use crate::wire::{
    DecodeError, EncodeError, HandleValue, HashOption, Interface, InterfaceType, Limits, Protocol,
    ProtocolVersion, Reader, SiteInfo,
};

use super::sites::{extend_unique, server_record, Site, UNKNOWN_SERIAL};

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
    /// The JSON file is not JSON, or not in a shape this reader knows.
    #[error("bootstrap_handles: {0}")]
    Json(String),
    /// A site given in JSON could not be encoded.
    #[error("bootstrap_handles: {0}")]
    Encode(#[from] EncodeError),
    /// The information holds no usable site.
    #[error("no root site in the bootstrap information")]
    NoSites,
}

/// One row of the built-in table: description, IPv4 address, primary.
const BUILTIN: [(&str, [u8; 4], bool); 13] = [
    ("CNRI", [38, 100, 138, 131], true),
    ("East coast root mirror", [132, 151, 1, 179], false),
    ("GWDG", [134, 76, 10, 100], false),
    ("IDF GHR", [38, 100, 138, 153], true),
    ("ATI MPA", [41, 231, 118, 2], true),
    ("Saudi Arabia GHR", [86, 111, 195, 107], true),
    ("Smart Africa - RURA", [196, 12, 152, 22], true),
    ("Russia MPA 77", [212, 193, 120, 1], true),
    ("GWDG MPA21", [134, 76, 30, 197], true),
    ("CHC MPA", [119, 90, 34, 34], true),
    ("86.ARS.HK", [47, 90, 103, 77], false),
    ("ARS@CIC", [124, 193, 169, 170], false),
    ("ITU MPA GHR 11", [156, 106, 193, 155], true),
];

/// The global root sites as of the reference client's 2019 snapshot (PROTOCOL.md §11.4):
/// single-server sites, protocol 2.10, hash by handle, TCP 2641 (admin + query), UDP 2641
/// (query), HTTP 8000. Their keys are not built in (so certified resolution needs a root
/// given by file or a refresh), alternate IPv6 addresses are left out, and the serial is sent
/// as unknown. The resolver refreshes them from `0.NA/0.NA` when a server says they are out
/// of date.
pub fn builtin_root_sites() -> Vec<Site> {
    BUILTIN
        .iter()
        .map(|(desc, ip, primary)| {
            let mut server = server_record(1, IpAddr::from(*ip), Bytes::new(), 2641, 2641);
            server.interfaces.push(Interface {
                kind: InterfaceType::AdminAndQuery,
                protocol: Protocol::Http,
                port: 8000,
            });
            let mut site = Site::new(SiteInfo {
                data_format_version: 1,
                protocol_version: ProtocolVersion::V2_10,
                serial: 0,
                primary: *primary,
                multi_primary: true,
                primary_mask: if *primary { 0xC0 } else { 0x40 },
                hash_option: HashOption::ByHandle,
                hash_filter: Bytes::new(),
                attributes: vec![(
                    Bytes::from_static(b"desc"),
                    Bytes::from_static(desc.as_bytes()),
                )],
                servers: vec![server],
            });
            site.request_serial = UNKNOWN_SERIAL;
            site
        })
        .collect()
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

    #[test]
    fn builtin_table_has_the_documented_sites() {
        let sites = builtin_root_sites();
        assert_eq!(sites.len(), 13);
        let cnri = &sites[0];
        assert_eq!(cnri.description().as_deref(), Some("CNRI"));
        assert!(cnri.is_primary());
        let server = cnri.server_for(b"0.NA/10.1045").unwrap();
        assert_eq!(server.address.to_string(), "38.100.138.131");
        assert_eq!(
            server.socket_addr(Protocol::Udp, false).unwrap().port(),
            2641
        );
        assert_eq!(sites.iter().filter(|s| !s.is_primary()).count(), 4);
        assert!(sites.iter().all(|s| s.request_serial == UNKNOWN_SERIAL));
    }

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
