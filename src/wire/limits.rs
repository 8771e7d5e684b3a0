//! Configurable decode limits (PROTOCOL.md §1.3). Every length and count read from the wire
//! is checked against these before anything is allocated or indexed.

/// Default cap on `MessageLength` (the reference server's value).
pub(crate) const MAX_MESSAGE_LENGTH: usize = 256 * 1024;
/// Default cap on the number of values in one message.
pub(crate) const MAX_VALUES: usize = 2048;
/// Default cap on a handle's length in bytes: the identifier layer's limit, so that what
/// `ident` accepts is what the wire carries.
pub(crate) const MAX_HANDLE_LENGTH: usize = crate::ident::MAX_HANDLE_LENGTH;
/// Default cap on any other array or string (the reference library's `MAX_ARRAY_SIZE`).
pub(crate) const MAX_ARRAY: usize = 1024 * 1024;

use super::error::{DecodeError, DecodeErrorKind};

/// Limits applied while decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest accepted `MessageLength` (header + body + credential). Default 262 144 (the
    /// reference server's).
    pub max_message_length: usize,
    /// Largest accepted value count in one message. Default 2 048.
    pub max_values: usize,
    /// Longest accepted handle, in bytes. Default 2 048
    /// ([`crate::ident::MAX_HANDLE_LENGTH`], what identifier parsing accepts).
    pub max_handle_length: usize,
    /// Longest accepted other string or array. Default 1 048 576 (the reference library's
    /// `MAX_ARRAY_SIZE`).
    pub max_array: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_length: MAX_MESSAGE_LENGTH,
            max_values: MAX_VALUES,
            max_handle_length: MAX_HANDLE_LENGTH,
            max_array: MAX_ARRAY,
        }
    }
}

impl Limits {
    /// Sets [`max_message_length`](Self::max_message_length).
    pub fn with_max_message_length(mut self, bytes: usize) -> Self {
        self.max_message_length = bytes;
        self
    }

    /// Sets [`max_values`](Self::max_values).
    pub fn with_max_values(mut self, count: usize) -> Self {
        self.max_values = count;
        self
    }

    /// Sets [`max_handle_length`](Self::max_handle_length).
    pub fn with_max_handle_length(mut self, bytes: usize) -> Self {
        self.max_handle_length = bytes;
        self
    }

    /// Sets [`max_array`](Self::max_array).
    pub fn with_max_array(mut self, len: usize) -> Self {
        self.max_array = len;
        self
    }

    /// Checks an envelope's `MessageLength` against `max_message_length`; the error points at
    /// the field (envelope offset 16).
    pub(crate) fn check_message_length(&self, len: u32) -> Result<usize, DecodeError> {
        let len = len as usize;
        if len > self.max_message_length {
            Err(DecodeError::new(
                "envelope.message_length",
                16,
                DecodeErrorKind::TooLarge {
                    value: len as u64,
                    limit: self.max_message_length as u64,
                },
            ))
        } else {
            Ok(len)
        }
    }
}
