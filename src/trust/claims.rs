//! The claims a JWS payload carries (the reference library's `HandleClaimsSet`): the JWT
//! times and names (`iss`, `sub`, `iat`, `nbf`, `exp`), and for a certificate (HS_CERT) the
//! subject's `publicKey` and `perms`, for a signature (HS_SIGNATURE) the value `digests`.
//! Read through the wire layer's JSON helpers, so errors name the field
//! (`digests.digests[3].digest`).

use base64ct::{Base64, Encoding};
use serde_json::{Map, Value as Json};

use super::names::{Permission, ValueId};
use crate::wire::json::JsonError;
use crate::wire::json::{
    array, get, int4, key_from_json, key_to_json, need, object, text, unsigned, At, JsonErrorKind,
};
use crate::wire::{Limits, PublicKey};

/// The digests a signature lists: the algorithm (a Java `MessageDigest` name, `SHA-256`) and
/// per value index the digest of the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedDigests {
    /// The digest algorithm's name.
    pub alg: String,
    /// `(index, digest)`, in the order signed.
    pub digests: Vec<(u32, Vec<u8>)>,
}

/// The claims of an HS_SIGNATURE or HS_CERT.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claims {
    /// The issuer, `index:handle` of its key (`301:0.NA/0.NA`).
    pub iss: Option<String>,
    /// The subject: the signed handle (signature) or `index:handle` of the certified key.
    pub sub: Option<String>,
    /// Issued at, seconds since the epoch.
    pub iat: Option<u64>,
    /// Not valid before, seconds since the epoch.
    pub nbf: Option<u64>,
    /// Not valid after, seconds since the epoch.
    pub exp: Option<u64>,
    /// What the subject may sign (certificates).
    pub perms: Vec<Permission>,
    /// The value digests (signatures).
    pub digests: Option<SignedDigests>,
    /// Where to find the issuer's certificates, nearest first (`index:handle` of an HS_CERT
    /// value, or a handle to search); empty: the issuer's own handle.
    pub chain: Vec<String>,
    /// The subject's key (certificates).
    pub public_key: Option<PublicKey>,
}

impl Claims {
    /// Reads the claims from a JWS payload. Unknown members are ignored, as the reference
    /// library ignores them.
    pub fn parse(payload: &[u8], limits: &Limits) -> Result<Claims, JsonError> {
        let doc: Json = serde_json::from_slice(payload)
            .map_err(|e| At::ROOT.err(JsonErrorKind::Syntax(e.to_string())))?;
        let at = At::ROOT;
        let o = object(&doc, &at)?;
        let string = |key: &str| -> Result<Option<String>, JsonError> {
            get(o, key)
                .map(|v| text(v, &at.key(key)).map(str::to_owned))
                .transpose()
        };
        let seconds = |key: &str| -> Result<Option<u64>, JsonError> {
            get(o, key)
                .map(|v| unsigned(v, &at.key(key), i64::MAX as u64, "seconds since the epoch"))
                .transpose()
        };
        let perms = match get(o, "perms") {
            Some(v) => permissions_at(v, &at.key("perms"), limits)?,
            None => Vec::new(),
        };
        let digests = get(o, "digests")
            .map(|v| digests_at(v, &at.key("digests"), limits))
            .transpose()?;
        let chain = match get(o, "chain") {
            Some(v) => {
                let at = at.key("chain");
                let items = array(v, &at, limits.max_values)?;
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    out.push(text(item, &at.index(i))?.to_owned());
                }
                out
            }
            None => Vec::new(),
        };
        let public_key = get(o, "publicKey")
            .map(|v| key_from_json(v, limits).map_err(|e| under("publicKey", e)))
            .transpose()?;
        Ok(Claims {
            iss: string("iss")?,
            sub: string("sub")?,
            iat: seconds("iat")?,
            nbf: seconds("nbf")?,
            exp: seconds("exp")?,
            perms,
            digests,
            chain,
            public_key,
        })
    }

    /// True when the claims are issued by their own subject (`sub` equals `iss`): the
    /// self-signed certificate that ends a chain.
    pub fn is_self_issued(&self) -> bool {
        matches!((&self.sub, &self.iss), (Some(s), Some(i)) if s == i)
    }

    /// The issuer as a value reference.
    pub fn issuer(&self) -> Option<ValueId> {
        self.iss.as_deref().map(ValueId::parse)
    }

    /// The claims as the JSON a signer puts in the payload.
    pub fn to_json(&self) -> Json {
        let mut o = Map::new();
        if !self.perms.is_empty() {
            let perms = self
                .perms
                .iter()
                .map(|p| {
                    let mut m = Map::new();
                    m.insert("perm".into(), Json::from(p.perm.as_str()));
                    if let Some(h) = &p.handle {
                        m.insert("handle".into(), Json::from(h.as_str()));
                    }
                    Json::Object(m)
                })
                .collect();
            o.insert("perms".into(), Json::Array(perms));
        }
        if let Some(d) = &self.digests {
            let list = d
                .digests
                .iter()
                .map(|(index, digest)| {
                    let mut m = Map::new();
                    m.insert("index".into(), Json::from(*index));
                    m.insert("digest".into(), Json::from(Base64::encode_string(digest)));
                    Json::Object(m)
                })
                .collect();
            let mut m = Map::new();
            m.insert("alg".into(), Json::from(d.alg.as_str()));
            m.insert("digests".into(), Json::Array(list));
            o.insert("digests".into(), Json::Object(m));
        }
        if !self.chain.is_empty() {
            o.insert("chain".into(), Json::from(self.chain.clone()));
        }
        if let Some(k) = &self.public_key {
            o.insert("publicKey".into(), key_to_json(k));
        }
        for (key, value) in [("iss", &self.iss), ("sub", &self.sub)] {
            if let Some(v) = value {
                o.insert(key.into(), Json::from(v.as_str()));
            }
        }
        for (key, value) in [("exp", self.exp), ("nbf", self.nbf), ("iat", self.iat)] {
            if let Some(v) = value {
                o.insert(key.into(), Json::from(v));
            }
        }
        Json::Object(o)
    }
}

/// `[{"perm": "everything"}, {"perm": "thisHandle", "handle": "0.NA/10.1"}, ...]`
fn permissions_at(v: &Json, at: &At, limits: &Limits) -> Result<Vec<Permission>, JsonError> {
    let items = array(v, at, limits.max_values)?;
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = at.index(i);
        let o = object(item, &at)?;
        let perm = text(need(o, "perm", &at)?, &at.key("perm"))?;
        let handle = get(o, "handle")
            .map(|h| text(h, &at.key("handle")).map(str::to_owned))
            .transpose()?;
        out.push(Permission::new(perm, handle));
    }
    Ok(out)
}

/// `{"alg": "SHA-256", "digests": [{"index": 100, "digest": "<base64>"}, ...]}`
fn digests_at(v: &Json, at: &At, limits: &Limits) -> Result<SignedDigests, JsonError> {
    let o = object(v, at)?;
    let alg = text(need(o, "alg", at)?, &at.key("alg"))?.to_owned();
    let list_at = at.key("digests");
    let items = array(need(o, "digests", at)?, &list_at, limits.max_values)?;
    let mut digests = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = list_at.index(i);
        let d = object(item, &at)?;
        let index = int4(need(d, "index", &at)?, &at.key("index"))?;
        let digest_at = at.key("digest");
        let digest = Base64::decode_vec(text(need(d, "digest", &at)?, &digest_at)?)
            .map_err(|_| digest_at.err(JsonErrorKind::Invalid("base64")))?;
        digests.push((index, digest));
    }
    Ok(SignedDigests { alg, digests })
}

/// `e` with its path put under the member `key`.
fn under(key: &str, mut e: JsonError) -> JsonError {
    e.path = match e.path.as_str() {
        "" => key.to_string(),
        p if p.starts_with('[') => format!("{key}{p}"),
        p => format!("{key}.{p}"),
    };
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Claims, JsonError> {
        Claims::parse(s.as_bytes(), &Limits::default())
    }

    #[test]
    fn reads_a_signature_and_names_bad_fields() {
        let c = parse(
            r#"{"digests":{"alg":"SHA-256","digests":[{"index":100,"digest":"AAE="}]},
                "iss":"301:0.NA/0.NA","sub":"0.GHR/20","exp":3,"nbf":1,"iat":2,"x":[]}"#,
        )
        .unwrap();
        assert_eq!(c.issuer(), Some(ValueId::new("0.NA/0.NA", 301)));
        assert_eq!((c.nbf, c.iat, c.exp), (Some(1), Some(2), Some(3)));
        let d = c.digests.as_ref().unwrap();
        assert_eq!(d.digests, [(100, vec![0, 1])]);
        assert!(!c.is_self_issued());
        // What the signer writes reads back the same.
        let back = parse(&c.to_json().to_string()).unwrap();
        assert_eq!(back, c);

        let path = |s: &str| parse(s).unwrap_err().path;
        assert_eq!(path(r#"{"digests":{"digests":[]}}"#), "digests.alg");
        assert_eq!(
            path(r#"{"digests":{"alg":"SHA-256","digests":[{"index":1,"digest":"*"}]}}"#),
            "digests.digests[0].digest"
        );
        assert_eq!(path(r#"{"exp":-1}"#), "exp");
        assert_eq!(path(r#"{"perms":[{"handle":"x"}]}"#), "perms[0].perm");
        assert_eq!(
            path(r#"{"publicKey":{"kty":"RSA","n":"AQ"}}"#),
            "publicKey.e"
        );
        assert_eq!(path(r#"{"chain":[1]}"#), "chain[0]");
        assert!(matches!(
            parse("[1,").unwrap_err().kind,
            JsonErrorKind::Syntax(_)
        ));
    }
}
