//! Decode and encode errors of the wire layer.
//!
//! A [`DecodeError`] is small and `Copy`: it names the field that could not be read
//! (`"value.ttl"`, `"envelope.message_length"`, ...) and the byte offset where that field
//! starts, counted from the start of the buffer the decoder was given.

use thiserror::Error;

/// Why a decode failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Fewer bytes remain than the field needs.
    #[error("truncated: needs {needed} bytes, {available} remain")]
    Truncated {
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the enclosing buffer.
        available: usize,
    },
    /// A length or count is larger than the configured limit.
    #[error("{value} exceeds the limit of {limit}")]
    TooLarge {
        /// The value read from the wire.
        value: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A value is outside what the protocol allows (negative length, bad enum, ...).
    #[error("invalid value {value}")]
    Invalid {
        /// The offending value, as read.
        value: i64,
    },
    /// Bytes are left over after a structure that must consume its whole buffer.
    #[error("{count} unexpected trailing bytes")]
    TrailingBytes {
        /// How many bytes were not consumed.
        count: usize,
    },
    /// Text that must be UTF-8 is not.
    #[error("invalid UTF-8")]
    InvalidUtf8,
    /// The message uses a feature this library does not implement (compression, encryption).
    #[error("unsupported feature")]
    Unsupported,
}

/// A decode failure: what went wrong, in which field, at which byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("cannot decode {field} at offset {offset}: {kind}")]
pub struct DecodeError {
    /// The field being read, as `"struct.field"`.
    pub field: &'static str,
    /// Byte offset of the field from the start of the decoded buffer.
    pub offset: usize,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// Builds an error for `field` at `offset`.
    pub const fn new(field: &'static str, offset: usize, kind: DecodeErrorKind) -> Self {
        Self {
            field,
            offset,
            kind,
        }
    }
}

/// An encode failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A field is longer than the wire format can carry (a length above `u32::MAX`) or than
    /// the configured limit.
    #[error("{field} is too long to encode: {len} bytes")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length.
        len: usize,
    },
}
