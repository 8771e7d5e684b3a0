//! Compact JSON Web Signatures (RFC 7515) as the reference library writes HS_SIGNATURE and
//! HS_CERT values (`JsonWebSignatureImpl`): `base64url(header) . base64url(payload) .
//! base64url(signature)`, unpadded; the header `{"alg":"RS256"}` (RSASSA-PKCS1-v1_5 with
//! SHA-256) or `{"alg":"DS256"}` (DSA with SHA-256, the signature in Java's DER
//! `SEQUENCE { r, s }`); the signature covers the ASCII of `header.payload` as written.

use base64ct::{Base64UrlUnpadded, Encoding};
use serde_json::Value as Json;

pub use super::alg::JwsAlgorithm;
use super::error::{JwsError, TrustErrorKind};
use super::names::ValueId;
use crate::wire::json::{need, object, text, At, JsonErrorKind};
use crate::wire::signature::{verify_signature, SignatureError};
use crate::wire::PublicKey;

/// A parsed compact JWS: what was signed and the signature, not yet checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jws {
    signing_input: String,
    alg: JwsAlgorithm,
    payload: Vec<u8>,
    signature: Vec<u8>,
}

impl Jws {
    /// Reads the compact serialization from a value's data (surrounding ASCII whitespace is
    /// ignored). Every part must be unpadded base64url in canonical form.
    pub fn parse(data: &[u8]) -> Result<Jws, JwsError> {
        let text = std::str::from_utf8(data)
            .map_err(|_| JwsError::NotText)?
            .trim_matches(|c: char| c.is_ascii_whitespace());
        if text.starts_with('{') {
            return Err(JwsError::JsonSerialization);
        }
        let parts: Vec<&str> = text.splitn(4, '.').collect();
        let [header_b64, payload_b64, signature_b64] = parts[..] else {
            return Err(JwsError::Parts(text.split('.').count()));
        };
        let header =
            Base64UrlUnpadded::decode_vec(header_b64).map_err(|_| JwsError::Base64("header"))?;
        let payload =
            Base64UrlUnpadded::decode_vec(payload_b64).map_err(|_| JwsError::Base64("payload"))?;
        let signature = Base64UrlUnpadded::decode_vec(signature_b64)
            .map_err(|_| JwsError::Base64("signature"))?;
        let alg = header_alg(&header)?;
        Ok(Jws {
            signing_input: format!("{header_b64}.{payload_b64}"),
            alg,
            payload,
            signature,
        })
    }

    /// The algorithm of the protected header.
    pub fn algorithm(&self) -> JwsAlgorithm {
        self.alg
    }

    /// The payload bytes (the claims' JSON).
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// Checks the signature with `key`, the key of `issuer` found in `key_from` (both named
    /// in the error).
    pub fn verify(
        &self,
        key: &PublicKey,
        issuer: &str,
        key_from: &ValueId,
    ) -> Result<(), TrustErrorKind> {
        let fits = matches!(
            (self.alg, key),
            (JwsAlgorithm::Rs256, PublicKey::Rsa(_)) | (JwsAlgorithm::Ds256, PublicKey::Dsa(_))
        );
        if !fits {
            return Err(TrustErrorKind::KeyType {
                alg: self.alg,
                key: String::from_utf8_lossy(key.key_type()).into(),
                key_from: key_from.clone(),
            });
        }
        verify_signature(
            key,
            b"SHA-256",
            &self.signature,
            self.signing_input.as_bytes(),
        )
        .map_err(|e| match e {
            SignatureError::Key(error) => TrustErrorKind::UnusableKey {
                error,
                key_from: key_from.clone(),
            },
            _ => TrustErrorKind::BadSignature {
                issuer: issuer.to_string(),
                key_from: key_from.clone(),
            },
        })
    }

    /// Builds the compact serialization from its parts (used by the signer).
    pub(crate) fn compact(alg: JwsAlgorithm, payload: &[u8], sign: &[u8]) -> String {
        format!(
            "{}.{}",
            Self::signing_input(alg, payload),
            Base64UrlUnpadded::encode_string(sign)
        )
    }

    /// The bytes a signer signs: `base64url(header) . base64url(payload)`.
    pub(crate) fn signing_input(alg: JwsAlgorithm, payload: &[u8]) -> String {
        let header = format!("{{\"alg\":\"{}\"}}", alg.name());
        format!(
            "{}.{}",
            Base64UrlUnpadded::encode_string(header.as_bytes()),
            Base64UrlUnpadded::encode_string(payload)
        )
    }
}

/// The `alg` of a protected header.
fn header_alg(header: &[u8]) -> Result<JwsAlgorithm, JwsError> {
    let doc: Json = serde_json::from_slice(header)
        .map_err(|e| JwsError::Header(At::ROOT.err(JsonErrorKind::Syntax(e.to_string()))))?;
    let at = At::ROOT;
    let o = object(&doc, &at).map_err(JwsError::Header)?;
    let alg = need(o, "alg", &at)
        .and_then(|v| text(v, &at.key("alg")))
        .map_err(JwsError::Header)?;
    JwsAlgorithm::from_name(alg).ok_or_else(|| JwsError::Algorithm(alg.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_what_is_not_a_compact_jws() {
        assert_eq!(Jws::parse(b"\xff"), Err(JwsError::NotText));
        assert_eq!(
            Jws::parse(b" {\"payload\":\"\"}"),
            Err(JwsError::JsonSerialization)
        );
        assert_eq!(Jws::parse(b"a.b"), Err(JwsError::Parts(2)));
        assert_eq!(Jws::parse(b"a.b.c.d.e"), Err(JwsError::Parts(5)));
        // {"alg":"RS256"} is eyJhbGciOiJSUzI1NiJ9; "e30" is {}; "e" alone is not base64.
        assert_eq!(Jws::parse(b"e.e30.AA"), Err(JwsError::Base64("header")));
        assert_eq!(
            Jws::parse(b"eyJhbGciOiJSUzI1NiJ9.e30=.AA"),
            Err(JwsError::Base64("payload"))
        );
        assert_eq!(
            Jws::parse(b"eyJhbGciOiJSUzI1NiJ9.e30.A+"),
            Err(JwsError::Base64("signature"))
        );
        // "AB" carries a non-zero bit past the byte it encodes: not canonical.
        assert_eq!(
            Jws::parse(b"eyJhbGciOiJSUzI1NiJ9.e30.AB"),
            Err(JwsError::Base64("signature"))
        );
        // {} as the header: no alg.
        assert!(matches!(
            Jws::parse(b"e30.e30.AA"),
            Err(JwsError::Header(e)) if e.path == "alg"
        ));
        // {"alg":"HS256"}
        let hs = Base64UrlUnpadded::encode_string(br#"{"alg":"HS256"}"#);
        assert_eq!(
            Jws::parse(format!("{hs}.e30.AA").as_bytes()),
            Err(JwsError::Algorithm("HS256".into()))
        );
        let ok = Jws::parse(b" eyJhbGciOiJSUzI1NiJ9.e30.AA\n").unwrap();
        assert_eq!(ok.algorithm(), JwsAlgorithm::Rs256);
        assert_eq!(ok.payload(), b"{}");
        assert_eq!(ok.signing_input, "eyJhbGciOiJSUzI1NiJ9.e30");
        assert_eq!(
            Jws::signing_input(JwsAlgorithm::Rs256, b"{}"),
            ok.signing_input
        );
    }
}
