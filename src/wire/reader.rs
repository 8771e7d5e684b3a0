//! A bounded, panic-free reader over untrusted bytes.
//!
//! Every read checks the remaining length first and reports the field name and the absolute
//! offset on failure. Length-prefixed fields come back as zero-copy [`Bytes`] slices of the
//! input. Nothing here allocates from a length read off the wire.

use bytes::Bytes;

use super::error::{DecodeError, DecodeErrorKind};

/// Reads big-endian integers and length-prefixed fields from a [`Bytes`] buffer.
#[derive(Debug, Clone)]
pub struct Reader {
    buf: Bytes,
    pos: usize,
    /// Offset of `buf[0]` in the outermost buffer, so errors report absolute offsets.
    base: usize,
}

impl Reader {
    /// A reader over the whole of `buf`, with offsets counted from its start.
    pub fn new(buf: Bytes) -> Self {
        Self {
            buf,
            pos: 0,
            base: 0,
        }
    }

    /// A reader whose reported offsets start at `base`.
    pub fn with_base(buf: Bytes, base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    /// Absolute offset of the next byte to be read.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Position of the next byte relative to this reader's own buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The whole underlying buffer (read and unread parts).
    pub fn buffer(&self) -> &Bytes {
        &self.buf
    }

    /// Builds an error for `field` at the current offset.
    pub fn error(&self, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(field, self.offset(), kind)
    }

    fn need(&self, field: &'static str, n: usize) -> Result<(), DecodeError> {
        if self.remaining() < n {
            Err(self.error(
                field,
                DecodeErrorKind::Truncated {
                    needed: n,
                    available: self.remaining(),
                },
            ))
        } else {
            Ok(())
        }
    }

    /// Reads one byte.
    pub fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        self.need(field, 1)?;
        let v = self.buf[self.pos];
        self.pos += 1;
        Ok(v)
    }

    /// Reads a big-endian `u16`.
    pub fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.need(field, 2)?;
        let v = u16::from_be_bytes([self.buf[self.pos], self.buf[self.pos + 1]]);
        self.pos += 2;
        Ok(v)
    }

    /// Reads a big-endian `u32`.
    pub fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.need(field, 4)?;
        let b = &self.buf[self.pos..self.pos + 4];
        let v = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        self.pos += 4;
        Ok(v)
    }

    /// Reads a big-endian `u64`.
    pub fn u64(&mut self, field: &'static str) -> Result<u64, DecodeError> {
        let hi = self.u32(field)? as u64;
        let lo = self.u32(field)? as u64;
        Ok(hi << 32 | lo)
    }

    /// Takes the next `n` bytes as a zero-copy slice.
    pub fn take(&mut self, field: &'static str, n: usize) -> Result<Bytes, DecodeError> {
        self.need(field, n)?;
        let out = self.buf.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(out)
    }

    /// Takes every remaining byte.
    pub fn rest(&mut self) -> Bytes {
        let out = self.buf.slice(self.pos..);
        self.pos = self.buf.len();
        out
    }

    /// Reads an `int4` length and checks it against `limit` and the bytes that remain.
    pub fn length(&mut self, field: &'static str, limit: usize) -> Result<usize, DecodeError> {
        let at = self.offset();
        let len = self.u32(field)?;
        // Java writes lengths as signed ints: anything with the top bit set is negative.
        if len > i32::MAX as u32 {
            return Err(DecodeError::new(
                field,
                at,
                DecodeErrorKind::Invalid {
                    value: len as i32 as i64,
                },
            ));
        }
        let len = len as usize;
        if len > limit {
            return Err(DecodeError::new(
                field,
                at,
                DecodeErrorKind::TooLarge {
                    value: len as u64,
                    limit: limit as u64,
                },
            ));
        }
        Ok(len)
    }

    /// Reads an `int4` count of items that each occupy at least `min_item_size` bytes,
    /// checking it against `limit` and against what the remaining bytes could hold.
    pub fn count(
        &mut self,
        field: &'static str,
        limit: usize,
        min_item_size: usize,
    ) -> Result<usize, DecodeError> {
        let at = self.offset();
        let n = self.length(field, limit)?;
        let needed = n.saturating_mul(min_item_size.max(1));
        if needed > self.remaining() && min_item_size > 0 {
            return Err(DecodeError::new(
                field,
                at,
                DecodeErrorKind::Truncated {
                    needed,
                    available: self.remaining(),
                },
            ));
        }
        Ok(n)
    }

    /// Reads a length-prefixed byte string (`int4 len ‖ len bytes`) as a zero-copy slice.
    pub fn bytes(&mut self, field: &'static str, limit: usize) -> Result<Bytes, DecodeError> {
        let len = self.length(field, limit)?;
        self.take(field, len)
    }

    /// Reads a length-prefixed byte string and checks that it is UTF-8.
    pub fn utf8(&mut self, field: &'static str, limit: usize) -> Result<Bytes, DecodeError> {
        let at = self.offset() + 4;
        let b = self.bytes(field, limit)?;
        if std::str::from_utf8(&b).is_err() {
            return Err(DecodeError::new(field, at, DecodeErrorKind::InvalidUtf8));
        }
        Ok(b)
    }

    /// Reads a length-prefixed field and returns a reader over exactly its bytes, with
    /// offsets continuing from this one.
    pub fn sub(&mut self, field: &'static str, limit: usize) -> Result<Reader, DecodeError> {
        let len = self.length(field, limit)?;
        self.sub_exact(field, len)
    }

    /// Returns a reader over the next `n` bytes.
    pub fn sub_exact(&mut self, field: &'static str, n: usize) -> Result<Reader, DecodeError> {
        let base = self.offset();
        let b = self.take(field, n)?;
        Ok(Reader::with_base(b, base))
    }

    /// Fails unless every byte has been read.
    pub fn finish(&self, field: &'static str) -> Result<(), DecodeError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.error(
                field,
                DecodeErrorKind::TrailingBytes {
                    count: self.remaining(),
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_length_beyond_remaining_bytes() {
        let mut r = Reader::new(Bytes::from_static(&[0, 0, 0, 9, 1, 2]));
        let e = r.bytes("x", 100).unwrap_err();
        assert_eq!(e.field, "x");
        assert_eq!(e.offset, 4);
        assert!(matches!(
            e.kind,
            DecodeErrorKind::Truncated {
                needed: 9,
                available: 2
            }
        ));
    }

    #[test]
    fn rejects_negative_and_oversized_lengths() {
        let mut r = Reader::new(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff]));
        assert!(matches!(
            r.length("x", 10).unwrap_err().kind,
            DecodeErrorKind::Invalid { value: -1 }
        ));
        let mut r = Reader::new(Bytes::from_static(&[0, 0, 0, 11]));
        assert!(matches!(
            r.length("x", 10).unwrap_err().kind,
            DecodeErrorKind::TooLarge { .. }
        ));
    }

    #[test]
    fn count_is_checked_against_remaining_bytes() {
        let mut r = Reader::new(Bytes::from_static(&[0, 0, 0, 3, 0, 0, 0, 1]));
        assert!(r.count("c", 2048, 4).is_err());
    }

    #[test]
    fn sub_reader_reports_absolute_offsets() {
        let mut r = Reader::new(Bytes::from_static(&[9, 0, 0, 0, 1, 7]));
        r.u8("a").unwrap();
        let mut s = r.sub("s", 10).unwrap();
        assert_eq!(s.u8("b").unwrap(), 7);
        let e = s.u8("c").unwrap_err();
        assert_eq!(e.offset, 6);
    }
}
