//! Helpers to append wire primitives to a [`BytesMut`].

use bytes::{BufMut, BytesMut};

use super::error::EncodeError;

/// Converts a length to the wire's `int4`, refusing anything Java would read as negative.
pub(crate) fn wire_len(field: &'static str, len: usize) -> Result<u32, EncodeError> {
    if len > i32::MAX as usize {
        Err(EncodeError::TooLong { field, len })
    } else {
        Ok(len as u32)
    }
}

/// Appends `int4 len ‖ bytes`.
pub(crate) fn put_bytes(
    out: &mut BytesMut,
    field: &'static str,
    b: &[u8],
) -> Result<(), EncodeError> {
    out.put_u32(wire_len(field, b.len())?);
    out.put_slice(b);
    Ok(())
}

/// Appends an int list: `int4 count ‖ count × int4`.
pub(crate) fn put_u32_list(
    out: &mut BytesMut,
    field: &'static str,
    v: &[u32],
) -> Result<(), EncodeError> {
    out.put_u32(wire_len(field, v.len())?);
    for x in v {
        out.put_u32(*x);
    }
    Ok(())
}

/// Appends a string list: `int4 count ‖ count × (int4 len ‖ bytes)`.
pub(crate) fn put_bytes_list<T: AsRef<[u8]>>(
    out: &mut BytesMut,
    field: &'static str,
    v: &[T],
) -> Result<(), EncodeError> {
    out.put_u32(wire_len(field, v.len())?);
    for x in v {
        put_bytes(out, field, x.as_ref())?;
    }
    Ok(())
}

/// Overwrites the big-endian `u32` at `at` in a buffer this crate has just encoded (a length
/// known only after the field was written). Does nothing when `at..at + 4` is outside `out`,
/// which cannot happen for the fixed envelope and header offsets it is used with.
pub(crate) fn patch_u32(out: &mut [u8], at: usize, v: u32) {
    if let Some(slot) = at.checked_add(4).and_then(|end| out.get_mut(at..end)) {
        slot.copy_from_slice(&v.to_be_bytes());
    }
}
