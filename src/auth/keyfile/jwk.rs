//! JSON Web Keys, in the members the reference library reads and writes
//! (`GsonUtility.PublicKeyTypeHierarchyAdapter` and `PrivateKeyTypeHierarchyAdapter`):
//!
//! - RSA (RFC 7518 §6.3): public `kty, n, e`; private `kty, n, e, d, p, q, dp, dq, qi`;
//! - DSA (no RFC; the reference's own): public `kty "DSA", y, p, q, g`; private `kty, x, p,
//!   q, g`, without `y`.
//!
//! Numbers are base64url without padding of the unsigned big-endian magnitude (leading zero
//! bytes dropped); read, as the reference reads them, in either base64 alphabet, padded or
//! not. `kty` is compared ignoring case, as the reference does; other members (`kid`, `use`,
//! `alg`, ...) are ignored. A private RSA JWK needs `n, e, d` and either both `p` and `q` or
//! neither (then they are recovered from `n, e, d`); `dp, dq, qi`, when given, must be those
//! of the key.

use base64ct::{Base64UrlUnpadded, Encoding};
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use serde::{Deserialize, Deserializer};
use zeroize::Zeroizing;

use super::super::error::KeyFileError;
use super::super::keys::{dsa_from, PrivateKey, MAX_COMPONENT};
use super::{usable, KeyMaterial};
use crate::wire::json::{base64_bytes, key_from_json, key_to_json};
use crate::wire::{Limits, PublicKey};

/// A member's text, zeroized when dropped (the private numbers pass through it).
struct Member(Zeroizing<String>);

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Member(Zeroizing::new(s)))
    }
}

/// The members read; all optional here, required by the key type.
#[derive(Deserialize)]
struct Jwk {
    kty: Member,
    n: Option<Member>,
    e: Option<Member>,
    d: Option<Member>,
    p: Option<Member>,
    q: Option<Member>,
    dp: Option<Member>,
    dq: Option<Member>,
    qi: Option<Member>,
    x: Option<Member>,
    g: Option<Member>,
}

/// The number in member `name`, if present.
fn number(m: &Option<Member>, name: &'static str) -> Result<Option<rsa::BigUint>, KeyFileError> {
    let Some(Member(text)) = m else {
        return Ok(None);
    };
    if text.len() / 4 * 3 > MAX_COMPONENT + 3 {
        return Err(KeyFileError::Jwk(format!(
            "{name}: longer than a key number"
        )));
    }
    let bytes = Zeroizing::new(
        base64_bytes(text).ok_or_else(|| KeyFileError::Jwk(format!("{name}: not base64")))?,
    );
    if bytes.len() > MAX_COMPONENT {
        return Err(KeyFileError::Jwk(format!(
            "{name}: longer than a key number"
        )));
    }
    Ok(Some(rsa::BigUint::from_bytes_be(&bytes)))
}

fn required(m: &Option<Member>, name: &'static str) -> Result<rsa::BigUint, KeyFileError> {
    number(m, name)?.ok_or_else(|| KeyFileError::Jwk(format!("no member {name:?}")))
}

/// Reads a JWK: private when it has `d` (RSA) or `x` (DSA), else public.
pub(super) fn read(bytes: &[u8]) -> Result<KeyMaterial, KeyFileError> {
    let jwk: Jwk = serde_json::from_slice(bytes).map_err(|e| {
        // The position only: the error's text could quote a number of the key.
        KeyFileError::Jwk(format!(
            "not a JWK object (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let kty = jwk.kty.0.as_str();
    let private = if kty.eq_ignore_ascii_case("RSA") {
        jwk.d.is_some()
    } else if kty.eq_ignore_ascii_case("DSA") {
        jwk.x.is_some()
    } else {
        return Err(KeyFileError::Jwk(format!("kty {kty:?}: RSA or DSA")));
    };
    if private {
        return private_key(&jwk).map(KeyMaterial::Private);
    }
    // Public members only: the REST API's `key` format reads them.
    let doc: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| KeyFileError::Jwk(e.to_string()))?;
    let key =
        key_from_json(&doc, &Limits::default()).map_err(|e| KeyFileError::Jwk(e.to_string()))?;
    usable(key).map(KeyMaterial::Public)
}

fn private_key(jwk: &Jwk) -> Result<PrivateKey, KeyFileError> {
    if jwk.kty.0.eq_ignore_ascii_case("DSA") {
        let key = dsa_from(
            required(&jwk.p, "p")?,
            required(&jwk.q, "q")?,
            required(&jwk.g, "g")?,
            required(&jwk.x, "x")?,
        )?;
        return Ok(PrivateKey::Dsa(key));
    }
    let invalid = |_| KeyFileError::InvalidKey("RSA");
    let (n, e, d) = (
        required(&jwk.n, "n")?,
        required(&jwk.e, "e")?,
        required(&jwk.d, "d")?,
    );
    let primes = match (number(&jwk.p, "p")?, number(&jwk.q, "q")?) {
        (Some(p), Some(q)) => vec![p, q],
        // Without them the rsa crate recovers the primes from n, e and d, with arithmetic
        // that panics on n = 0 or d = 0 (a crafted file): only a plausible triple goes there.
        (None, None) if n > e && d > rsa::BigUint::default() && d < n => Vec::new(),
        (None, None) => return Err(KeyFileError::InvalidKey("RSA")),
        _ => return Err(KeyFileError::Jwk("p without q, or q without p".into())),
    };
    let key = rsa::RsaPrivateKey::from_components(n, e, d, primes).map_err(invalid)?;
    let [p, q] = key.primes() else {
        return Err(KeyFileError::InvalidKey("RSA"));
    };
    let one = rsa::BigUint::from(1u8);
    let given = [
        (number(&jwk.dp, "dp")?, Some(key.d() % (p - &one))),
        (number(&jwk.dq, "dq")?, Some(key.d() % (q - &one))),
        (number(&jwk.qi, "qi")?, key.crt_coefficient()),
    ];
    for (given, computed) in given {
        if given.is_some_and(|g| Some(g) != computed) {
            return Err(KeyFileError::InvalidKey("RSA"));
        }
    }
    Ok(PrivateKey::Rsa(key))
}

/// A number as the reference writes it in a JWK: base64url of the magnitude, no padding.
fn b64(n: &rsa::BigUint) -> Zeroizing<String> {
    let bytes = Zeroizing::new(n.to_bytes_be());
    Zeroizing::new(Base64UrlUnpadded::encode_string(&bytes))
}

impl PrivateKey {
    /// The key as a JWK, members in the reference's order: RSA `kty, n, e, d, p, q, dp, dq,
    /// qi`; DSA `kty, x, p, q, g` (the reference's form, which has no `y`). Pretty-printed,
    /// ending in a newline.
    pub fn to_jwk(&self) -> Result<Zeroizing<String>, KeyFileError> {
        let (kty, members): (&str, Vec<(&str, Zeroizing<String>)>) = match self {
            PrivateKey::Rsa(k) => {
                let [p, q] = k.primes() else {
                    return Err(KeyFileError::Unsupported(
                        "an RSA key of more than two primes",
                    ));
                };
                let one = rsa::BigUint::from(1u8);
                let qi =
                    Zeroizing::new(k.crt_coefficient().ok_or(KeyFileError::InvalidKey("RSA"))?);
                (
                    "RSA",
                    vec![
                        ("n", b64(k.n())),
                        ("e", b64(k.e())),
                        ("d", b64(k.d())),
                        ("p", b64(p)),
                        ("q", b64(q)),
                        ("dp", b64(&Zeroizing::new(k.d() % (p - &one)))),
                        ("dq", b64(&Zeroizing::new(k.d() % (q - &one)))),
                        ("qi", b64(&qi)),
                    ],
                )
            }
            PrivateKey::Dsa(k) => {
                let c = k.verifying_key().components();
                (
                    "DSA",
                    vec![
                        ("x", b64(k.x())),
                        ("p", b64(c.p())),
                        ("q", b64(c.q())),
                        ("g", b64(c.g())),
                    ],
                )
            }
        };
        let len = 24
            + members
                .iter()
                .map(|(n, v)| n.len() + v.len() + 10)
                .sum::<usize>();
        // Sized once, so that no copy is left behind by a reallocation.
        let mut out = Zeroizing::new(String::with_capacity(len));
        out.push_str("{\n  \"kty\": \"");
        out.push_str(kty);
        out.push('"');
        for (name, value) in &members {
            out.push_str(",\n  \"");
            out.push_str(name);
            out.push_str("\": \"");
            out.push_str(value);
            out.push('"');
        }
        out.push_str("\n}\n");
        Ok(out)
    }

    /// Reads a private JWK (RSA, or DSA in the reference's form); see
    /// [`KeyMaterial::read`] for public ones.
    pub fn from_jwk(text: &str) -> Result<PrivateKey, KeyFileError> {
        match read(text.as_bytes())? {
            KeyMaterial::Private(k) => Ok(k),
            KeyMaterial::Public(_) => Err(KeyFileError::NotPrivate("PrivateKey::from_jwk")),
        }
    }
}

/// A public key as a JWK (the REST API's `key` format), pretty-printed, ending in a newline.
pub(super) fn public_to_jwk(key: &PublicKey) -> Result<String, KeyFileError> {
    let key = usable(key.clone())?;
    let mut text = serde_json::to_string_pretty(&key_to_json(&key))
        .map_err(|e| KeyFileError::Jwk(e.to_string()))?;
    text.push('\n');
    Ok(text)
}
