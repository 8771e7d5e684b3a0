//! Small readers shared by the body decoders, each bounded by [`Limits`].

use bytes::Bytes;

use crate::wire::error::DecodeError;
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;

/// Reads a length-prefixed handle, capped at `limits.max_handle_length`.
pub(crate) fn read_handle(
    r: &mut Reader,
    field: &'static str,
    limits: &Limits,
) -> Result<Bytes, DecodeError> {
    r.bytes(field, limits.max_handle_length)
}

/// Reads an int list (`int4 count ‖ count × int4`); the count is checked against the bytes
/// that remain, and the list grows as items decode (never sized from the wire count).
pub(crate) fn read_u32_list(
    r: &mut Reader,
    field: &'static str,
    limits: &Limits,
) -> Result<Vec<u32>, DecodeError> {
    let n = r.count(field, limits.max_array, 4)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(r.u32(field)?);
    }
    Ok(out)
}

/// Reads a string list (`int4 count ‖ count × (int4 len ‖ bytes)`).
pub(crate) fn read_bytes_list(
    r: &mut Reader,
    field: &'static str,
    limits: &Limits,
) -> Result<Vec<Bytes>, DecodeError> {
    let n = r.count(field, limits.max_array, 4)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(r.bytes(field, limits.max_array)?);
    }
    Ok(out)
}

/// Reads a string list whose items are each capped at `item_limit`.
pub(crate) fn read_bytes_list_capped(
    r: &mut Reader,
    field: &'static str,
    item_limit: usize,
    limits: &Limits,
) -> Result<Vec<Bytes>, DecodeError> {
    let n = r.count(field, limits.max_array, 4)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(r.bytes(field, item_limit)?);
    }
    Ok(out)
}
