//! The errors of the JSON codec ([`JsonError`]: what is wrong, and where) and the reading
//! helpers every decoder of the codec uses: [`At`], the path of the field being read, and
//! typed getters that name that path in their errors.

use std::fmt;
use std::fmt::Write as _;

use bytes::Bytes;
use serde_json::{Map, Value as Json};
use thiserror::Error;

use crate::wire::error::EncodeError;

/// What is wrong with a JSON document, at [`JsonError::path`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// Not JSON at all (serde_json's message, with line and column).
    #[error("not JSON: {0}")]
    Syntax(String),
    /// The document is longer than the limit.
    #[error("{len} bytes exceed the limit of {limit}")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// An array holds more items than the limit.
    #[error("{count} items exceed the limit of {limit}")]
    TooMany {
        /// Items present.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A string or the bytes it stands for are longer than the limit.
    #[error("{len} bytes exceed the limit of {limit}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A required field is absent (or `null`).
    #[error("missing")]
    Missing,
    /// The field has another JSON type.
    #[error("expected {0}")]
    WrongType(&'static str),
    /// A number outside the field's range.
    #[error("out of range: expected {0}")]
    OutOfRange(&'static str),
    /// A string that does not parse as what the field holds.
    #[error("invalid: expected {0}")]
    Invalid(&'static str),
    /// A `data.format` this codec does not know.
    #[error("unknown data format {0:?}")]
    UnknownFormat(String),
    /// The binary record built from the JSON does not encode (a field beyond 4 GiB).
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

/// A JSON document that could not be read: where (`values[3].data.value.servers[0].address`;
/// empty for the document itself) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonError {
    /// The field, as a path from the document's root.
    pub path: String,
    /// What is wrong with it.
    pub kind: JsonErrorKind,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.path, self.kind)
        }
    }
}

impl std::error::Error for JsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            JsonErrorKind::Encode(e) => Some(e),
            _ => None,
        }
    }
}

/// Where a decoder is in the document: a chain of keys and indexes on the stack, turned into
/// text only when an error is reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    /// The document itself.
    pub(crate) const ROOT: At<'static> = At {
        up: None,
        step: Step::Root,
    };

    /// The member `key` of the object here.
    pub(crate) fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Key(key),
        }
    }

    /// The item `i` of the array here.
    pub(crate) fn index<'b>(&'b self, i: usize) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Index(i),
        }
    }

    /// The path as text: `a.b[2]`, with `["..."]` for keys that are not plain names.
    pub(crate) fn path(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        if let Some(up) = self.up {
            up.write(out);
        }
        match self.step {
            Step::Root => {}
            Step::Key(k) if is_plain_name(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Key(k) => {
                out.push('[');
                out.push_str(&Json::from(k).to_string());
                out.push(']');
            }
            Step::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }

    /// An error at this place.
    pub(crate) fn err(&self, kind: JsonErrorKind) -> JsonError {
        JsonError {
            path: self.path(),
            kind,
        }
    }
}

fn is_plain_name(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// ---------------------------------------------------------------------------------------
// Reading fields

/// The object at `at`.
pub(crate) fn object<'j>(v: &'j Json, at: &At) -> Result<&'j Map<String, Json>, JsonError> {
    v.as_object()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("an object")))
}

/// The array at `at`, at most `limit` items long.
pub(crate) fn array<'j>(v: &'j Json, at: &At, limit: usize) -> Result<&'j [Json], JsonError> {
    let a = v
        .as_array()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("an array")))?;
    if a.len() > limit {
        return Err(at.err(JsonErrorKind::TooMany {
            count: a.len(),
            limit,
        }));
    }
    Ok(a)
}

/// A member; `null` counts as absent.
pub(crate) fn get<'j>(o: &'j Map<String, Json>, key: &str) -> Option<&'j Json> {
    o.get(key).filter(|v| !v.is_null())
}

/// A required member.
pub(crate) fn need<'j>(
    o: &'j Map<String, Json>,
    key: &str,
    at: &At,
) -> Result<&'j Json, JsonError> {
    get(o, key).ok_or_else(|| at.key(key).err(JsonErrorKind::Missing))
}

/// The string at `at`.
pub(crate) fn text<'j>(v: &'j Json, at: &At) -> Result<&'j str, JsonError> {
    v.as_str()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("a string")))
}

/// The string at `at` as bytes, at most `limit` long.
pub(crate) fn text_bytes(v: &Json, at: &At, limit: usize) -> Result<Bytes, JsonError> {
    let s = text(v, at)?;
    check_len(s.len(), at, limit)?;
    Ok(Bytes::copy_from_slice(s.as_bytes()))
}

/// `TooLong` when `len` bytes exceed `limit`.
pub(crate) fn check_len(len: usize, at: &At, limit: usize) -> Result<(), JsonError> {
    if len > limit {
        Err(at.err(JsonErrorKind::TooLong { len, limit }))
    } else {
        Ok(())
    }
}

/// The boolean at `at`.
pub(crate) fn boolean(v: &Json, at: &At) -> Result<bool, JsonError> {
    v.as_bool()
        .ok_or_else(|| at.err(JsonErrorKind::WrongType("true or false")))
}

/// A whole number in `0..=max`.
pub(crate) fn unsigned(v: &Json, at: &At, max: u64, range: &'static str) -> Result<u64, JsonError> {
    match v {
        Json::Number(n) => match n.as_u64() {
            Some(x) if x <= max => Ok(x),
            _ => Err(at.err(JsonErrorKind::OutOfRange(range))),
        },
        _ => Err(at.err(JsonErrorKind::WrongType("a number"))),
    }
}

/// An `int4` field (index, server id, port, ...): printed unsigned, read unsigned or as the
/// reference library's signed int (a negative number keeps its bit pattern).
pub(crate) fn int4(v: &Json, at: &At) -> Result<u32, JsonError> {
    const RANGE: &str = "a 32-bit integer";
    match v {
        Json::Number(n) => {
            if let Some(x) = n.as_u64() {
                u32::try_from(x).map_err(|_| at.err(JsonErrorKind::OutOfRange(RANGE)))
            } else if let Some(x) = n.as_i64() {
                i32::try_from(x)
                    .map(|x| x as u32)
                    .map_err(|_| at.err(JsonErrorKind::OutOfRange(RANGE)))
            } else {
                Err(at.err(JsonErrorKind::OutOfRange(RANGE)))
            }
        }
        _ => Err(at.err(JsonErrorKind::WrongType("a number"))),
    }
}
