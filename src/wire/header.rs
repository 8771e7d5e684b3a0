//! The 24-byte message header (RFC 3652 §2.2.2, PROTOCOL.md §2.2).

use bytes::BufMut;

use super::codes::{OpCode, OpFlags, ResponseCode};
use super::error::DecodeError;
use super::reader::Reader;

/// Size of the header in bytes.
pub const HEADER_LEN: usize = 24;

/// The message header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Operation.
    pub op_code: OpCode,
    /// Response code (`Reserved` in requests).
    pub response_code: ResponseCode,
    /// Op flags.
    pub flags: OpFlags,
    /// Site-info serial number (`0xFFFF` when the client does not know it).
    pub site_info_serial: u16,
    /// Recursion count.
    pub recursion_count: u8,
    /// The reserved byte at offset 15, kept for exact re-encoding.
    pub reserved: u8,
    /// Expiration time, seconds since the Unix epoch (0 = never, per the RFC).
    pub expiration: u32,
    /// Body length in bytes.
    pub body_length: u32,
}

impl Header {
    /// Decodes the 24 header bytes.
    pub fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Self {
            op_code: OpCode::from_code(r.u32("header.op_code")?),
            response_code: ResponseCode::from_code(r.u32("header.response_code")?),
            flags: OpFlags(r.u32("header.op_flags")?),
            site_info_serial: r.u16("header.site_info_serial")?,
            recursion_count: r.u8("header.recursion_count")?,
            reserved: r.u8("header.reserved")?,
            expiration: r.u32("header.expiration")?,
            body_length: r.u32("header.body_length")?,
        })
    }

    /// Appends the 24 header bytes.
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.op_code.code());
        out.put_u32(self.response_code.code());
        out.put_u32(self.flags.0);
        out.put_u16(self.site_info_serial);
        out.put_u8(self.recursion_count);
        out.put_u8(self.reserved);
        out.put_u32(self.expiration);
        out.put_u32(self.body_length);
    }
}
