//! HS_PUBKEY in JSON (data format `key`): the JWK-like view of RSA and DSA keys as the REST
//! API writes them, both ways.

use base64ct::{Base64, Base64UrlUnpadded, Encoding};

use bytes::Bytes;
use serde_json::{Map, Value as Json};

use super::format::{base64_at, bytes_at, member_at, tagged, DataFormat};
use super::{need, object, text, At, JsonError, JsonErrorKind};
use crate::wire::limits::Limits;
use crate::wire::pubkey::{DsaKey, PublicKey, RsaKey, RSA_TRAILER};

/// A number as the JSON key shows it: base64url without padding, leading zero bytes dropped
/// (one kept for zero).
fn b64_number(b: &[u8]) -> Json {
    let start = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    let m = b.get(start..).filter(|m| !m.is_empty()).unwrap_or(&[0]);
    Json::from(Base64UrlUnpadded::encode_string(m))
}

/// A number as the reference library writes it (`BigInteger.toByteArray`): the magnitude
/// without leading zeros, one zero byte in front when its top bit is set, `[0]` for zero.
fn java_integer(magnitude: &[u8]) -> Bytes {
    let start = magnitude
        .iter()
        .position(|&x| x != 0)
        .unwrap_or(magnitude.len());
    let m = magnitude.get(start..).unwrap_or_default();
    match m.first() {
        None => Bytes::from_static(&[0]),
        Some(b) if b & 0x80 != 0 => {
            let mut v = Vec::with_capacity(m.len() + 1);
            v.push(0);
            v.extend_from_slice(m);
            Bytes::from(v)
        }
        Some(_) => Bytes::copy_from_slice(m),
    }
}

/// The JWK-like object of a key: RSA `{"kty": "RSA", "n", "e"}` and DSA `{"kty": "DSA", "y",
/// "p", "q", "g"}` as the REST API writes them (numbers in base64url without padding, leading
/// zero bytes dropped), which [`key_from_json`] reads back. Other key types get a view the
/// REST API does not have and [`key_from_json`] does not read (`{"kty": "DH", "y", "p",
/// "g"}`, `{"kty": <type>, "hex": <the bytes after the options>}`); [`data_to_json`](super::data_to_json) writes
/// those keys as `base64`.
pub fn key_to_json(k: &PublicKey) -> Json {
    let mut o = Map::new();
    match k {
        PublicKey::Rsa(r) => {
            o.insert("kty".into(), Json::from("RSA"));
            o.insert("n".into(), b64_number(&r.modulus));
            o.insert("e".into(), b64_number(&r.exponent));
        }
        PublicKey::Dsa(d) => {
            o.insert("kty".into(), Json::from("DSA"));
            o.insert("y".into(), b64_number(&d.y));
            o.insert("p".into(), b64_number(&d.p));
            o.insert("q".into(), b64_number(&d.q));
            o.insert("g".into(), b64_number(&d.g));
        }
        PublicKey::Dh { y, p, g, .. } => {
            o.insert("kty".into(), Json::from("DH"));
            o.insert("y".into(), b64_number(y));
            o.insert("p".into(), b64_number(p));
            o.insert("g".into(), b64_number(g));
        }
        PublicKey::Other { key_type, data, .. } => {
            o.insert("kty".into(), Json::from(String::from_utf8_lossy(key_type)));
            o.insert("hex".into(), Json::from(hex::encode(data)));
        }
    }
    Json::Object(o)
}

/// `{"format": "key", ...}` for a key blob the JSON key carries exactly, else
/// `{"format": "base64", ...}` (an empty blob included, as the reference library writes it).
pub(crate) fn key_blob_to_json(blob: &Bytes) -> Json {
    let limits = Limits::default();
    let exact = PublicKey::decode_bytes(blob)
        .ok()
        .map(|k| key_to_json(&k))
        .filter(|j| {
            key_at(j, &At::ROOT, &limits)
                .ok()
                .and_then(|k| k.encode().ok())
                .is_some_and(|back| back == *blob)
        });
    match exact {
        Some(j) => tagged(DataFormat::Key, j),
        None => tagged(DataFormat::Base64, Json::from(Base64::encode_string(blob))),
    }
}

/// Reads a JWK-like RSA or DSA key into the blob the reference library would write for it
/// (options 0, numbers as `BigInteger.toByteArray`, RSA followed by an empty byte array).
pub fn key_from_json(v: &Json, limits: &Limits) -> Result<PublicKey, JsonError> {
    key_at(v, &At::ROOT, limits)
}

/// The bytes of a server's `publicKey` in a site: a bare string, or data in the `key` format
/// or a format of plain bytes (`string`, `base64`, `hex`); the structured formats of other
/// types have no place there.
pub(super) fn key_data_at(v: &Json, at: &At, limits: &Limits) -> Result<Bytes, JsonError> {
    member_at(v, at, limits, |format, value, value_at| {
        match bytes_at(format, value, value_at, limits) {
            Some(bytes) => bytes,
            None if format == DataFormat::Key => key_at(value, value_at, limits)?
                .encode()
                .map_err(|e| value_at.err(JsonErrorKind::Encode(e))),
            None => Err(at
                .key("format")
                .err(JsonErrorKind::Invalid("key, base64, hex or string"))),
        }
    })
}

pub(super) fn key_at(v: &Json, at: &At, limits: &Limits) -> Result<PublicKey, JsonError> {
    let o = object(v, at)?;
    let number = |name: &str| -> Result<Bytes, JsonError> {
        let raw = base64_at(need(o, name, at)?, &at.key(name), limits)?;
        Ok(java_integer(&raw))
    };
    let kty_at = at.key("kty");
    let kty = text(need(o, "kty", at)?, &kty_at)?;
    if kty.eq_ignore_ascii_case("RSA") {
        Ok(PublicKey::Rsa(RsaKey {
            options: 0,
            exponent: number("e")?,
            modulus: number("n")?,
            trailer: Bytes::from_static(RSA_TRAILER),
        }))
    } else if kty.eq_ignore_ascii_case("DSA") {
        Ok(PublicKey::Dsa(DsaKey {
            options: 0,
            q: number("q")?,
            p: number("p")?,
            g: number("g")?,
            y: number("y")?,
        }))
    } else {
        Err(kty_at.err(JsonErrorKind::Invalid("RSA or DSA")))
    }
}
