//! HS_ADMIN administrator records (RFC 3651 §3.2.1, PROTOCOL.md §7.3) and HS_VLIST value
//! reference lists (RFC 3651 §3.2.7, PROTOCOL.md §7.4).
//!
//! HS_ADMIN on the wire, as the reference library and real data have it (the RFC lists the
//! fields in another order): `int2 permissions ‖ UTF8 admin handle ‖ int4 admin index`, or
//! the reference library's legacy form with two more bytes after the index (it sized the
//! permission field as an int4 but wrote an int2 there).

use bytes::{BufMut, Bytes, BytesMut};

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
    /// Modify HS_ADMIN values (the reference's `AdminRecord.MODIFY_ADMIN`, bit 7).
    pub const MODIFY_ADMIN: u16 = 0x0080;
    /// Remove HS_ADMIN values (bit 8).
    pub const REMOVE_ADMIN: u16 = 0x0100;
    /// Add HS_ADMIN values (bit 9).
    pub const ADD_ADMIN: u16 = 0x0200;
    /// Read values without public read permission (bit 10: `AdminRecord.READ_VALUE`,
    /// PROTOCOL.md §7.3).
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
    /// For the legacy form: the two bytes after the index (0 as the reference library
    /// writes them), kept so the record encodes back to the same bytes. `None` for the usual
    /// form.
    pub legacy_trailer: Option<u16>,
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
            legacy_trailer: None,
        }
    }

    /// Decodes an HS_ADMIN record: `int2 permissions ‖ admin handle ‖ int4 index`, then
    /// exactly two more bytes in the legacy form. Any other leftover is an error.
    pub fn decode(data: &Bytes, limits: &Limits) -> Result<AdminRecord, DecodeError> {
        let mut r = Reader::new(data.clone());
        let permissions = AdminPermissions(r.u16("admin.permissions")?);
        let admin = ValueReference::decode(&mut r, limits)?;
        let legacy_trailer = if r.remaining() == 2 {
            Some(r.u16("admin.legacy_trailer")?)
        } else {
            None
        };
        r.finish("admin")?;
        Ok(AdminRecord {
            permissions,
            admin,
            legacy_trailer,
        })
    }

    /// Encodes the record in the form it was read in.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        out.put_u16(self.permissions.0);
        put_bytes(&mut out, "admin.handle", &self.admin.handle)?;
        out.put_u32(self.admin.index);
        if let Some(trailer) = self.legacy_trailer {
            out.put_u16(trailer);
        }
        Ok(out.freeze())
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
    fn accepts_the_legacy_form_with_two_trailing_bytes() {
        // The reference library's legacy form: permission first as usual, then two more bytes
        // after the index (it sized the permission field as an int4 but wrote an int2).
        let data = Bytes::from(hex::decode(format!("{ROOT_ADMIN}0000")).unwrap());
        let a = AdminRecord::decode(&data, &Limits::default()).unwrap();
        assert_eq!(a.permissions, AdminPermissions(0x0FFF));
        assert_eq!(a.admin.handle.as_ref(), b"0.NA/0.NA");
        assert_eq!(a.admin.index, 300);
        assert_eq!(a.legacy_trailer, Some(0));
        assert_eq!(a.encode().unwrap(), data);
        // Two leading bytes are not a form the reference library reads.
        let lead = Bytes::from(hex::decode(format!("0000{ROOT_ADMIN}")).unwrap());
        assert!(AdminRecord::decode(&lead, &Limits::default()).is_err());
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
