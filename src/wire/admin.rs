//! HS_ADMIN administrator records (RFC 3651 §3.2.1, PROTOCOL.md §7.3) and HS_VLIST value
//! reference lists (RFC 3651 §3.2.7, PROTOCOL.md §7.4).
//!
//! HS_ADMIN on the wire, as the reference library and real data have it (the RFC lists the
//! fields in another order): `int2 permissions ‖ UTF8 admin handle ‖ int4 admin index`, or
//! the legacy form with a 4-byte permission field.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{json, Value as Json};

use super::error::{DecodeError, EncodeError};
use super::limits::Limits;
use super::reader::Reader;
use super::value::{decode_references, encode_references, ValueReference};
use super::writer::put_bytes;

/// The HS_ADMIN permission bit mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AdminPermissions(pub u16);

impl AdminPermissions {
    /// Create handles under the prefix.
    pub const ADD_HANDLE: u16 = 0x0001;
    /// Delete handles.
    pub const DELETE_HANDLE: u16 = 0x0002;
    /// Create derived prefixes (RFC `Add_NA`).
    pub const ADD_DERIVED_PREFIX: u16 = 0x0004;
    /// Delete derived prefixes (RFC `Delete_NA`).
    pub const DELETE_DERIVED_PREFIX: u16 = 0x0008;
    /// Modify values.
    pub const MODIFY_VALUE: u16 = 0x0010;
    /// Remove values.
    pub const REMOVE_VALUE: u16 = 0x0020;
    /// Add values.
    pub const ADD_VALUE: u16 = 0x0040;
    /// Modify HS_ADMIN values.
    pub const MODIFY_ADMIN: u16 = 0x0080;
    /// Remove HS_ADMIN values.
    pub const REMOVE_ADMIN: u16 = 0x0100;
    /// Add HS_ADMIN values.
    pub const ADD_ADMIN: u16 = 0x0200;
    /// Read values without public read permission.
    pub const READ_VALUE: u16 = 0x0400;
    /// List the handles under the prefix.
    pub const LIST_HANDLES: u16 = 0x0800;
    /// RFC `LIST_NA` (not decoded by the reference library).
    pub const LIST_DERIVED_PREFIXES: u16 = 0x1000;

    /// True when every bit of `mask` is set.
    pub const fn contains(self, mask: u16) -> bool {
        self.0 & mask == mask
    }

    /// The 12 permissions the reference library knows as a string of `0`/`1`, most
    /// significant bit first (`LIST_HANDLES` … `ADD_HANDLE`), as in the handle.net REST API
    /// (`"111111111111"` for 0x0FFF).
    pub fn as_bits(self) -> String {
        (0..12)
            .rev()
            .map(|bit| if self.0 & (1 << bit) != 0 { '1' } else { '0' })
            .collect()
    }
}

/// An HS_ADMIN value: who may administer the handle, and what they may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminRecord {
    /// The permission bits.
    pub permissions: AdminPermissions,
    /// The administrator: a handle and the index of its key or group value.
    pub admin: ValueReference,
    /// For the legacy 4-byte permission form: the high 16 bits of that field (usually 0),
    /// kept so the record encodes back to the same bytes. `None` for the usual 2-byte form.
    pub legacy_high: Option<u16>,
}

impl AdminRecord {
    /// A record in the usual 2-byte permission form.
    pub fn new(permissions: u16, handle: impl Into<Bytes>, index: u32) -> Self {
        Self {
            permissions: AdminPermissions(permissions),
            admin: ValueReference {
                handle: handle.into(),
                index,
            },
            legacy_high: None,
        }
    }

    /// Decodes an HS_ADMIN record: the 2-byte permission form, or else the legacy 4-byte one.
    /// The record must use every byte.
    pub fn decode(data: &Bytes, limits: &Limits) -> Result<AdminRecord, DecodeError> {
        let short = (|| {
            let mut r = Reader::new(data.clone());
            let permissions = AdminPermissions(r.u16("admin.permissions")?);
            let admin = ValueReference::decode(&mut r, limits)?;
            r.finish("admin")?;
            Ok(AdminRecord {
                permissions,
                admin,
                legacy_high: None,
            })
        })();
        short.or_else(|e: DecodeError| {
            let mut r = Reader::new(data.clone());
            let high = r.u16("admin.permissions")?;
            let permissions = AdminPermissions(r.u16("admin.permissions")?);
            let admin = ValueReference::decode(&mut r, limits).map_err(|_| e)?;
            r.finish("admin").map_err(|_| e)?;
            Ok(AdminRecord {
                permissions,
                admin,
                legacy_high: Some(high),
            })
        })
    }

    /// Encodes the record in the form it was read in.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        if let Some(high) = self.legacy_high {
            out.put_u16(high);
        }
        out.put_u16(self.permissions.0);
        put_bytes(&mut out, "admin.handle", &self.admin.handle)?;
        out.put_u32(self.admin.index);
        Ok(out.freeze())
    }

    /// The handle.net REST API shape: `{"handle": ..., "index": ..., "permissions": "0111…"}`.
    pub fn to_json(&self) -> Json {
        json!({
            "handle": String::from_utf8_lossy(&self.admin.handle),
            "index": self.admin.index,
            "permissions": self.permissions.as_bits(),
        })
    }
}

/// Decodes HS_VLIST data: `int4 count ‖ count × (UTF8 handle ‖ int4 index)`, using every byte.
pub fn decode_vlist(data: &Bytes, limits: &Limits) -> Result<Vec<ValueReference>, DecodeError> {
    let mut r = Reader::new(data.clone());
    let refs = decode_references(&mut r, "vlist.count", limits)?;
    r.finish("vlist")?;
    Ok(refs)
}

/// Encodes HS_VLIST data.
pub fn encode_vlist(refs: &[ValueReference]) -> Result<Bytes, EncodeError> {
    let mut out = BytesMut::new();
    encode_references(&mut out, "vlist.count", refs)?;
    Ok(out.freeze())
}

/// The handle.net REST API shape of an HS_VLIST: `[{"handle": ..., "index": ...}, ...]`.
pub fn vlist_to_json(refs: &[ValueReference]) -> Json {
    Json::Array(
        refs.iter()
            .map(|r| json!({"handle": String::from_utf8_lossy(&r.handle), "index": r.index}))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perms 0x0FFF (2 bytes), handle "0.NA/0.NA" (int4 9 + 9 bytes), index 300 (int4):
    /// the root HS_ADMIN of the captures.
    const ROOT_ADMIN: &str = "0fff00000009302e4e412f302e4e410000012c";

    #[test]
    fn decodes_the_permission_first_form() {
        let data = Bytes::from(hex::decode(ROOT_ADMIN).unwrap());
        let a = AdminRecord::decode(&data, &Limits::default()).unwrap();
        assert_eq!(a, AdminRecord::new(0x0FFF, "0.NA/0.NA", 300));
        assert_eq!(a.encode().unwrap(), data);
        assert_eq!(a.permissions.as_bits(), "111111111111");
    }

    #[test]
    fn accepts_the_legacy_four_byte_permission_form() {
        // Two extra leading bytes 00 00 make the permission field an int4.
        let data = Bytes::from(hex::decode(format!("0000{ROOT_ADMIN}")).unwrap());
        let a = AdminRecord::decode(&data, &Limits::default()).unwrap();
        assert_eq!(a.permissions, AdminPermissions(0x0FFF));
        assert_eq!(a.legacy_high, Some(0));
        assert_eq!(a.admin.index, 300);
        assert_eq!(a.encode().unwrap(), data);
    }

    #[test]
    fn rejects_trailing_and_truncated_records() {
        let good = hex::decode(ROOT_ADMIN).unwrap();
        let mut long = good.clone();
        long.push(1);
        assert!(AdminRecord::decode(&Bytes::from(long), &Limits::default()).is_err());
        for cut in 0..good.len() {
            let b = Bytes::copy_from_slice(&good[..cut]);
            assert!(AdminRecord::decode(&b, &Limits::default()).is_err());
        }
    }

    #[test]
    fn permission_bits_are_msb_first() {
        let p = AdminPermissions(AdminPermissions::ADD_HANDLE | AdminPermissions::LIST_HANDLES);
        assert_eq!(p.as_bits(), "100000000001");
        assert!(p.contains(AdminPermissions::LIST_HANDLES));
        assert!(!p.contains(AdminPermissions::READ_VALUE));
        assert_eq!(AdminPermissions(0x0402).as_bits(), "010000000010");
    }

    #[test]
    fn vlist_round_trips() {
        let refs = vec![
            ValueReference {
                handle: Bytes::from_static(b"0.NA/20.500.12345"),
                index: 300,
            },
            ValueReference {
                handle: Bytes::from_static(b"20.500.12345/ADMINGROUP"),
                index: 300,
            },
        ];
        let data = encode_vlist(&refs).unwrap();
        assert_eq!(decode_vlist(&data, &Limits::default()).unwrap(), refs);
        let mut long = data.to_vec();
        long.push(0);
        assert!(decode_vlist(&Bytes::from(long), &Limits::default()).is_err());
    }
}
