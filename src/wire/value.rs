//! Handle values as they travel on the wire (RFC 3651 §3.1, PROTOCOL.md §4.3 — the reference
//! library's field order and sizes, which differ from the RFC text).
//!
//! `type` and `data` are zero-copy slices of the received message.

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{DecodeError, EncodeError};
use super::limits::Limits;
use super::reader::Reader;
use super::writer::{put_bytes, wire_len};

/// Smallest possible encoded value: 14 fixed bytes + three empty length-prefixed fields.
pub(crate) const MIN_VALUE_LEN: usize = 14 + 4 + 4 + 4;
/// Smallest possible encoded value reference: an empty handle + the index.
pub(crate) const MIN_REFERENCE_LEN: usize = 4 + 4;

/// How long a value may be cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ttl {
    /// Seconds after retrieval (0 = do not cache). Signed, as the reference reads the field
    /// (an `int`): a relative TTL with the high bit set is negative, i.e. expired, not 68+
    /// years.
    Relative(i32),
    /// Valid until this many seconds after the Unix epoch.
    Absolute(u32),
    /// A TTL type byte other than 0 or 1, kept for exact re-encoding.
    Other {
        /// The type byte.
        kind: u8,
        /// The TTL field.
        value: u32,
    },
}

impl Ttl {
    /// The TTL type byte (0 relative, 1 absolute).
    pub const fn kind(self) -> u8 {
        match self {
            Ttl::Relative(_) => 0,
            Ttl::Absolute(_) => 1,
            Ttl::Other { kind, .. } => kind,
        }
    }

    /// The TTL field as it travels (a negative relative TTL in two's complement).
    pub const fn value(self) -> u32 {
        match self {
            Ttl::Relative(v) => v as u32,
            Ttl::Absolute(v) | Ttl::Other { value: v, .. } => v,
        }
    }

    /// The TTL of a type byte and a TTL field as they travel: 0 relative (the field read as
    /// a signed int4), 1 absolute, anything else [`Ttl::Other`].
    pub const fn from_parts(kind: u8, value: u32) -> Ttl {
        match kind {
            0 => Ttl::Relative(value as i32),
            1 => Ttl::Absolute(value),
            kind => Ttl::Other { kind, value },
        }
    }
}

/// The value permission byte (PROTOCOL.md §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Permissions(pub u8);

impl Permissions {
    /// Anyone may modify the value.
    pub const PUBLIC_WRITE: u8 = 0x01;
    /// Anyone may read the value.
    pub const PUBLIC_READ: u8 = 0x02;
    /// Administrators may modify the value.
    pub const ADMIN_WRITE: u8 = 0x04;
    /// Administrators may read the value.
    pub const ADMIN_READ: u8 = 0x08;
    /// RFC only: public execute.
    pub const PUBLIC_EXECUTE: u8 = 0x10;
    /// RFC only: admin execute.
    pub const ADMIN_EXECUTE: u8 = 0x20;
    /// The usual permissions of a public value: admin read and write, public read.
    pub const DEFAULT: Permissions = Permissions(0x0E);

    /// True when the value is readable without authentication.
    pub const fn public_read(self) -> bool {
        self.0 & Self::PUBLIC_READ != 0
    }

    /// Four characters in the order admin-read, admin-write, public-read, public-write, as
    /// the handle.net REST API prints them (`"1110"` for the usual 0x0E).
    pub fn as_bits(self) -> String {
        [
            Self::ADMIN_READ,
            Self::ADMIN_WRITE,
            Self::PUBLIC_READ,
            Self::PUBLIC_WRITE,
        ]
        .iter()
        .map(|b| if self.0 & b != 0 { '1' } else { '0' })
        .collect()
    }

    /// The reference library's `rwr-` style: admin read, admin write, public read, public
    /// write.
    pub fn as_rw(self) -> String {
        [
            (Self::ADMIN_READ, 'r'),
            (Self::ADMIN_WRITE, 'w'),
            (Self::PUBLIC_READ, 'r'),
            (Self::PUBLIC_WRITE, 'w'),
        ]
        .iter()
        .map(|(b, c)| if self.0 & b != 0 { *c } else { '-' })
        .collect()
    }
}

/// A reference to a value of another handle: `(handle, index)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValueReference {
    /// The referenced handle, raw bytes (UTF-8 in practice).
    pub handle: Bytes,
    /// The referenced index.
    pub index: u32,
}

impl ValueReference {
    /// Decodes `UTF8 handle ‖ int4 index`.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        Ok(Self {
            handle: r.bytes("reference.handle", limits.max_handle_length)?,
            index: r.u32("reference.index")?,
        })
    }

    /// Appends `UTF8 handle ‖ int4 index`.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        put_bytes(out, "reference.handle", &self.handle)?;
        out.put_u32(self.index);
        Ok(())
    }
}

/// Decodes a reference list: `int4 count ‖ count × reference`.
pub(crate) fn decode_references(
    r: &mut Reader,
    field: &'static str,
    limits: &Limits,
) -> Result<Vec<ValueReference>, DecodeError> {
    let n = r.count(field, limits.max_array, MIN_REFERENCE_LEN)?;
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(ValueReference::decode(r, limits)?);
    }
    Ok(out)
}

/// Encodes a reference list.
pub(crate) fn encode_references(
    out: &mut BytesMut,
    field: &'static str,
    refs: &[ValueReference],
) -> Result<(), EncodeError> {
    out.put_u32(wire_len(field, refs.len())?);
    for r in refs {
        r.encode(out)?;
    }
    Ok(())
}

/// One handle value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HandleValue {
    /// Index, unique within the handle (an `int4`; kept as its bit pattern).
    pub index: u32,
    /// Last modification, seconds since the Unix epoch.
    pub timestamp: u32,
    /// Caching rule.
    pub ttl: Ttl,
    /// Permission bits.
    pub permissions: Permissions,
    /// The type name, raw bytes (`URL`, `HS_SITE`, ...).
    pub type_name: Bytes,
    /// The data, raw bytes; see [`TypedValue`](crate::wire::TypedValue) for typed views.
    pub data: Bytes,
    /// References to other values.
    pub references: Vec<ValueReference>,
}

impl HandleValue {
    /// A value with the usual defaults: relative TTL 86400, permissions 0x0E, timestamp 0,
    /// no references.
    pub fn new(index: u32, type_name: impl Into<Bytes>, data: impl Into<Bytes>) -> Self {
        Self {
            index,
            timestamp: 0,
            ttl: Ttl::Relative(86_400),
            permissions: Permissions::DEFAULT,
            type_name: type_name.into(),
            data: data.into(),
            references: Vec::new(),
        }
    }

    /// The type name as text (lossy for non-UTF-8 bytes).
    pub fn type_str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.type_name)
    }

    /// True when the type name equals `t`, ignoring ASCII case.
    pub fn is_type(&self, t: &str) -> bool {
        self.type_name.eq_ignore_ascii_case(t.as_bytes())
    }

    /// True when the type is `t` or a subtype of it (`URL.pdf` is a `URL`), ignoring ASCII
    /// case: the reference's `hasType`.
    ///
    /// ```
    /// use handle_resolver::wire::HandleValue;
    /// let v = HandleValue::new(1, "url.PDF", "https://example.org/a.pdf");
    /// assert!(v.has_type("URL"));
    /// assert!(!v.has_type("URL.html"));
    /// assert!(!HandleValue::new(1, "URLX", "").has_type("URL"));
    /// ```
    pub fn has_type(&self, t: &str) -> bool {
        let name = &self.type_name[..];
        let t = t.as_bytes();
        name.eq_ignore_ascii_case(t)
            || (name.len() > t.len()
                && name[t.len()] == b'.'
                && name[..t.len()].eq_ignore_ascii_case(t))
    }

    /// The data as the reference shows it to people (its `getDataAsString`): upper-case
    /// hex when it [looks binary](looks_like_binary), else the UTF-8 text.
    ///
    /// ```
    /// use handle_resolver::wire::HandleValue;
    /// assert_eq!(HandleValue::new(1, "DESC", "a\tb").data_as_string(), "a\tb");
    /// assert_eq!(HandleValue::new(100, "HS_ADMIN", vec![0x0f, 0xff, 0]).data_as_string(), "0FFF00");
    /// ```
    pub fn data_as_string(&self) -> String {
        if looks_like_binary(&self.data) {
            self.data.iter().map(|b| format!("{b:02X}")).collect()
        } else {
            String::from_utf8_lossy(&self.data).into_owned()
        }
    }

    /// Decodes one value.
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let index = r.u32("value.index")?;
        let timestamp = r.u32("value.timestamp")?;
        let ttl_kind = r.u8("value.ttl_type")?;
        let ttl_value = r.u32("value.ttl")?;
        let ttl = Ttl::from_parts(ttl_kind, ttl_value);
        let permissions = Permissions(r.u8("value.permissions")?);
        let type_name = r.bytes("value.type", limits.max_array)?;
        let data = r.bytes("value.data", limits.max_array)?;
        let references = decode_references(r, "value.references", limits)?;
        Ok(Self {
            index,
            timestamp,
            ttl,
            permissions,
            type_name,
            data,
            references,
        })
    }

    /// Appends the value's wire encoding.
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        out.put_u32(self.index);
        out.put_u32(self.timestamp);
        out.put_u8(self.ttl.kind());
        out.put_u32(self.ttl.value());
        out.put_u8(self.permissions.0);
        put_bytes(out, "value.type", &self.type_name)?;
        put_bytes(out, "value.data", &self.data)?;
        encode_references(out, "value.references", &self.references)
    }

    /// Size of the value's wire encoding.
    pub fn encoded_len(&self) -> usize {
        14 + 4
            + self.type_name.len()
            + 4
            + self.data.len()
            + 4
            + self
                .references
                .iter()
                .map(|r| 8 + r.handle.len())
                .sum::<usize>()
    }
}

/// True when `data` is no text a person reads, as the reference's `Util.looksLikeBinary`
/// decides: not UTF-8, or holding a control byte other than the whitespace range
/// `0x09..=0x13` (so an HS_ADMIN, HS_SITE or HS_PUBKEY value is binary, a `DESC` with tabs
/// and newlines is not).
///
/// ```
/// use handle_resolver::wire::looks_like_binary;
/// assert!(!looks_like_binary(b"line one\nline\ttwo"));
/// assert!(looks_like_binary(&[0x0f, 0xff, 0x00, 0x00]));
/// assert!(looks_like_binary(b"bell\x07"));
/// assert!(looks_like_binary(b"ok \xff\xfe bad utf8"));
/// ```
pub fn looks_like_binary(data: &[u8]) -> bool {
    std::str::from_utf8(data).is_err()
        || data
            .iter()
            .any(|&b| (b < 0x20 && !(0x09..=0x13).contains(&b)) || b == 0x7f)
}

/// Decodes `int4 count ‖ count × value`, the count checked against the limit and the bytes
/// that remain.
pub fn decode_values(
    r: &mut Reader,
    field: &'static str,
    limits: &Limits,
) -> Result<Vec<HandleValue>, DecodeError> {
    let n = r.count(field, limits.max_values, MIN_VALUE_LEN)?;
    // Grown as values decode, never sized from the wire count.
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(HandleValue::decode(r, limits)?);
    }
    Ok(out)
}

/// Encodes `int4 count ‖ values`.
pub fn encode_values(
    out: &mut BytesMut,
    field: &'static str,
    values: &[HandleValue],
) -> Result<(), EncodeError> {
    out.put_u32(wire_len(field, values.len())?);
    for v in values {
        v.encode(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_round_trips_and_knows_its_length() {
        let mut v = HandleValue::new(1, "URL", "http://example.org/");
        v.references.push(ValueReference {
            handle: Bytes::from_static(b"0.NA/1"),
            index: 300,
        });
        let mut out = BytesMut::new();
        v.encode(&mut out).unwrap();
        assert_eq!(out.len(), v.encoded_len());
        let back = HandleValue::decode(&mut Reader::new(out.freeze()), &Limits::default()).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn permission_strings() {
        assert_eq!(Permissions(0x0E).as_bits(), "1110");
        assert_eq!(Permissions(0x0E).as_rw(), "rwr-");
        assert_eq!(Permissions(0x0C).as_rw(), "rw--");
    }

    #[test]
    fn rejects_value_count_the_bytes_cannot_hold() {
        let mut r = Reader::new(Bytes::from_static(&[0, 0, 0, 5, 0, 0]));
        assert!(decode_values(&mut r, "values", &Limits::default()).is_err());
    }
}
