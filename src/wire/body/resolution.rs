//! Resolution request and response bodies (RFC 3652 §3.2, PROTOCOL.md §4.1-§4.2).

use bytes::{Bytes, BytesMut};

use super::lists::{read_bytes_list, read_handle, read_u32_list};
use crate::wire::error::{DecodeError, EncodeError};
use crate::wire::limits::Limits;
use crate::wire::reader::Reader;
use crate::wire::value::{decode_values, encode_values, HandleValue};
use crate::wire::writer::{put_bytes, put_bytes_list, put_u32_list};

/// Body of a resolution request: the handle and the index and type filters (empty = any).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResolutionRequest {
    /// The handle, raw bytes.
    pub handle: Bytes,
    /// Requested indexes; empty = any.
    pub indexes: Vec<u32>,
    /// Requested types; empty = any. A trailing `.` selects a type hierarchy.
    pub types: Vec<Bytes>,
}

impl ResolutionRequest {
    /// Decodes `handle ‖ index list ‖ type list`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        Ok(Self {
            handle: read_handle(r, "resolution_request.handle", limits)?,
            indexes: read_u32_list(r, "resolution_request.indexes", limits)?,
            types: read_bytes_list(r, "resolution_request.types", limits)?,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "resolution_request.handle", &self.handle)?;
        put_u32_list(out, "resolution_request.indexes", &self.indexes)?;
        put_bytes_list(out, "resolution_request.types", &self.types)
    }
}

/// Body of a successful resolution response: the handle as queried and its values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResolutionResponse {
    /// The handle, as the request spelled it.
    pub handle: Bytes,
    /// The values.
    pub values: Vec<HandleValue>,
}

impl ResolutionResponse {
    /// Decodes `handle ‖ value count ‖ values`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        Ok(Self {
            handle: read_handle(r, "resolution_response.handle", limits)?,
            values: decode_values(r, "resolution_response.values", limits)?,
        })
    }

    /// Appends the body.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "resolution_response.handle", &self.handle)?;
        encode_values(out, "resolution_response.values", &self.values)
    }
}
