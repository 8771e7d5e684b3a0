//! Admin bodies (create/delete handle, add/modify/remove values; PROTOCOL.md §3), so that the
//! admin exchanges only need the session and challenge logic on top.

use bytes::{Bytes, BytesMut};

use super::lists::{read_bytes_list_capped, read_handle, read_u32_list};
use crate::wire::error::{DecodeError, EncodeError};
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;
use crate::wire::value::{decode_values, encode_values, HandleValue};
use crate::wire::writer::{put_bytes, put_bytes_list, put_u32_list};

/// Decodes `handle ‖ value count ‖ values` (create handle, add values, modify values).
pub(crate) fn decode_handle_values(
    r: &mut Reader,
    limits: &Limits,
) -> Result<(Bytes, Vec<HandleValue>), DecodeError> {
    let handle = read_handle(r, "admin.handle", limits)?;
    let values = decode_values(r, "admin.values", limits)?;
    Ok((handle, values))
}

/// Decodes `handle ‖ index list` (remove values).
pub(crate) fn decode_handle_indexes(
    r: &mut Reader,
    limits: &Limits,
) -> Result<(Bytes, Vec<u32>), DecodeError> {
    let handle = read_handle(r, "admin.handle", limits)?;
    let indexes = read_u32_list(r, "admin.indexes", limits)?;
    Ok((handle, indexes))
}

/// Decodes a body made of one handle (delete handle request, create handle response).
pub(crate) fn decode_handle(r: &mut Reader, limits: &Limits) -> Result<Bytes, DecodeError> {
    read_handle(r, "admin.handle", limits)
}

/// Appends `handle ‖ values`.
pub(crate) fn encode_handle_values(
    out: &mut BytesMut,
    handle: &[u8],
    values: &[HandleValue],
) -> Result<(), EncodeError> {
    put_bytes(out, "admin.handle", handle)?;
    encode_values(out, "admin.values", values)
}

/// Appends `handle ‖ index list`.
pub(crate) fn encode_handle_indexes(
    out: &mut BytesMut,
    handle: &[u8],
    indexes: &[u32],
) -> Result<(), EncodeError> {
    put_bytes(out, "admin.handle", handle)?;
    put_u32_list(out, "admin.indexes", indexes)
}

/// Appends `handle`.
pub(crate) fn encode_handle(out: &mut BytesMut, handle: &[u8]) -> Result<(), EncodeError> {
    put_bytes(out, "admin.handle", handle)
}

/// Decodes `int4 count ‖ count × handle` (list handles response), each handle capped at
/// `limits.max_handle_length`.
pub(crate) fn decode_handle_list(
    r: &mut Reader,
    limits: &Limits,
) -> Result<Vec<Bytes>, DecodeError> {
    read_bytes_list_capped(r, "list_handles.handles", limits.max_handle_length, limits)
}

/// Appends `int4 count ‖ count × handle`.
pub(crate) fn encode_handle_list(out: &mut BytesMut, handles: &[Bytes]) -> Result<(), EncodeError> {
    put_bytes_list(out, "list_handles.handles", handles)
}
