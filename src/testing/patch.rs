//! Fixed offsets in an encoded message and in-place patching of them, shared by the
//! responder, the answer signing of [`super::key`], the faults and the server loops.

/// Offset of the request id in an encoded message (envelope bytes 8..12, PROTOCOL.md §2.1).
pub(crate) const REQUEST_ID_AT: usize = 8;
/// Offset of `MessageLength` in an encoded message (envelope bytes 16..20).
pub(crate) const MESSAGE_LENGTH_AT: usize = 16;

/// Writes `v` big-endian at `at..at + 4` of `buf`; false (and `buf` untouched) when `buf`
/// is too short.
pub(crate) fn patch_u32(buf: &mut [u8], at: usize, v: u32) -> bool {
    let slot = at.checked_add(4).and_then(|end| buf.get_mut(at..end));
    match slot {
        Some(slot) => {
            slot.copy_from_slice(&v.to_be_bytes());
            true
        }
        None => false,
    }
}

/// The request id of an encoded message, if it is long enough to hold one.
pub(crate) fn request_id_of(encoded: &[u8]) -> Option<u32> {
    let end = REQUEST_ID_AT.checked_add(4)?;
    let bytes = encoded.get(REQUEST_ID_AT..end)?;
    <[u8; 4]>::try_from(bytes).ok().map(u32::from_be_bytes)
}
