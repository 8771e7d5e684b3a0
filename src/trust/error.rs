//! Why a record is not trusted: the record, the value at fault and the reason.

use std::fmt;

use thiserror::Error;

use super::alg::JwsAlgorithm;
use super::digest::DigestAlgorithm;
use super::names::ValueId;
use crate::wire::json::JsonError;
use crate::wire::{EncodeError, KeyError};

/// A value's data is not a compact JWS the verifier reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum JwsError {
    /// The data is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText,
    /// The JSON serialization (`{"payload": ...}`); only the compact one is read.
    #[error("the JSON serialization is not supported, only the compact one")]
    JsonSerialization,
    /// Not three `.`-separated parts.
    #[error("{0} parts, expected header.payload.signature")]
    Parts(usize),
    /// A part is not unpadded base64url (`header`, `payload` or `signature`).
    #[error("the {0} is not base64url")]
    Base64(&'static str),
    /// The protected header is not a JSON object with a string `alg`.
    #[error("header: {0}")]
    Header(JsonError),
    /// An `alg` other than RS256 and DS256.
    #[error("unsupported algorithm {0:?}")]
    Algorithm(String),
}

/// The 10320/sig.digest and 10320/sig.sig values (the reference library's deprecated
/// `HandleSignature`) do not verify.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LegacyError {
    /// The XML is not the shape the reference library writes (names what is wrong).
    #[error("malformed {0}")]
    Xml(String),
    /// `ofindex` names no value of the record.
    #[error("its digests value {0} is not in the record")]
    NoDigestsValue(String),
    /// The digests or the signature are about another handle.
    #[error("about {0:?}, not this handle")]
    WrongHandle(String),
    /// The signer's key cannot be used: absent, not an HS_PUBKEY, not itself covered by a
    /// trusted JWS signature, or unusable.
    #[error("signer {signer}: {why}")]
    Signer {
        /// The signer's key value.
        signer: ValueId,
        /// What is wrong with it.
        why: &'static str,
    },
    /// An algorithm other than `SHA1withDSA`, `SHA256withDSA`, `SHA1withRSA`,
    /// `SHA256withRSA`, or one that does not fit the signer's key.
    #[error("unsupported algorithm {0:?}")]
    Algorithm(String),
    /// The signature over the digests value does not verify.
    #[error("the signature over the digests in value {digests} does not verify")]
    BadSignature {
        /// The index of the signed 10320/sig.digest value.
        digests: u32,
    },
    /// A listed value has no SHA digest (MD5 alone is not enough).
    #[error("no SHA digest listed for value {0}")]
    NoShaDigest(u32),
}

/// What is wrong; see [`TrustError`] for the record and value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TrustErrorKind {
    /// The record has no HS_SIGNATURE value.
    #[error("no HS_SIGNATURE value")]
    NoSignature,
    /// Two values of the record share this index.
    #[error("the index appears more than once in the record")]
    DuplicateIndex,
    /// The HS_SIGNATURE or HS_CERT is not a JWS.
    #[error("not a JWS: {0}")]
    Jws(#[from] JwsError),
    /// The signed claims are not JSON of the reference library's shape (names the field).
    #[error("claims: {0}")]
    Claims(JsonError),
    /// The signature is about another handle (`sub`).
    #[error("signed for {0:?}, not for this handle")]
    WrongSubject(Option<String>),
    /// The claims name no issuer (`iss`).
    #[error("no issuer (iss)")]
    NoIssuer,
    /// The algorithm does not fit the issuer's key (RS256 needs RSA, DS256 DSA).
    #[error("{} signature, but the issuer's key (from {key_from}) is {key}", alg.name())]
    KeyType {
        /// The JWS algorithm.
        alg: JwsAlgorithm,
        /// The key type.
        key: Box<str>,
        /// The certificate (or key value) the key comes from.
        key_from: ValueId,
    },
    /// The issuer's key cannot be used.
    #[error("unusable issuer key (from {key_from}): {error}")]
    UnusableKey {
        /// What is wrong with it.
        error: KeyError,
        /// The certificate (or key value) the key comes from.
        key_from: ValueId,
    },
    /// The signature does not verify with the issuer's key: the statement or the key's
    /// certificate has changed.
    #[error("signature does not verify with the key of {issuer} (from {key_from})")]
    BadSignature {
        /// The issuer (`iss`).
        issuer: String,
        /// The certificate (or key value) the key comes from.
        key_from: ValueId,
    },
    /// `nbf` is later than the time of the check.
    #[error("not valid before {} (checked at {})", instant(*nbf), instant(*now))]
    NotYetValid {
        /// `nbf`, seconds since the epoch.
        nbf: u64,
        /// The time of the check.
        now: u64,
    },
    /// `exp` is earlier than the time of the check.
    #[error("expired at {} (checked at {})", instant(*exp), instant(*now))]
    Expired {
        /// `exp`, seconds since the epoch.
        exp: u64,
        /// The time of the check.
        now: u64,
    },
    /// The signature lists no value digests.
    #[error("signs no value digests")]
    NoDigests,
    /// A digest algorithm this verifier does not accept (MD5 included).
    #[error("unsupported digest algorithm {0:?}")]
    DigestAlgorithm(String),
    /// The value's digest differs from the one signed.
    #[error("its {} digest differs from the one signed in value {signature}", alg.name())]
    DigestMismatch {
        /// The value holding the signed digests.
        signature: u32,
        /// The digest algorithm.
        alg: DigestAlgorithm,
    },
    /// A digest is signed for this index, but the record has no such value.
    #[error("signed in value {signature} but absent from the record")]
    MissingValue {
        /// The value holding the signed digests.
        signature: u32,
    },
    /// The value is public but no trusted signature covers it.
    #[error("not covered by a trusted signature")]
    Unsigned,
    /// The issuer's record is not among the records given.
    #[error("the issuer's record {0} is not in the set")]
    NoIssuerRecord(String),
    /// The issuer's record holds no certificate about the issuer.
    #[error("no HS_CERT of {handle} is about {subject}")]
    NoCertificate {
        /// The record searched.
        handle: Box<str>,
        /// The issuer the certificate must be about.
        subject: Box<str>,
        /// The HS_CERT values of that record, all about other subjects.
        others: Box<[u32]>,
    },
    /// A certificate of the chain fails.
    #[error("certificate {cert}: {reason}")]
    Certificate {
        /// The HS_CERT value.
        cert: ValueId,
        /// Why it fails.
        reason: Box<TrustErrorKind>,
    },
    /// The certificate found for the issuer is about another subject.
    #[error("about {subject:?}, not the issuer {issuer}")]
    BrokenChain {
        /// The issuer the chain needs.
        issuer: String,
        /// The certificate's `sub`.
        subject: Option<String>,
    },
    /// A certificate carries no `publicKey`.
    #[error("no publicKey")]
    NoPublicKey,
    /// An issuer in the chain holds no permission over the record's handle.
    #[error("the permissions granted by {grant} do not cover {handle}")]
    NotAuthorized {
        /// The certificate whose `perms` were checked.
        grant: ValueId,
        /// The record's handle.
        handle: String,
    },
    /// The chain ends at a self-signed certificate that is not about a trust root key of
    /// `0.0/0.0`.
    #[error("the chain ends at {cert}, about {subject:?}, which is not a trust root")]
    UntrustedRoot {
        /// The self-signed certificate.
        cert: ValueId,
        /// Its subject.
        subject: String,
    },
    /// More than this many certificates.
    #[error("the chain is longer than {0} certificates")]
    ChainTooLong(usize),
    /// The chain comes back to a record it has passed.
    #[error("the chain loops back to {0}")]
    ChainCycle(String),
    /// The legacy DSA signature (10320/sig.sig) does not verify.
    #[error("legacy signature: {0}")]
    Legacy(#[from] LegacyError),
    /// A value could not be encoded to be digested (a field beyond 4 GiB).
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

impl TrustErrorKind {
    /// The same reason, about the certificate `cert` of the chain.
    pub(crate) fn in_cert(self, cert: &ValueId) -> TrustErrorKind {
        TrustErrorKind::Certificate {
            cert: cert.clone(),
            reason: Box::new(self),
        }
    }
}

/// A record that is not trusted: which record, which of its values, and why.
///
/// The value is the one at fault: the value whose digest differs, the unsigned value, or the
/// HS_SIGNATURE whose JWS, claims or chain fail (a failing certificate of the chain, maybe in
/// another record, is named by [`TrustErrorKind::Certificate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrustError {
    /// The record's handle.
    pub handle: String,
    /// The index of the value at fault, if one value is.
    pub index: Option<u32>,
    /// That value's type.
    pub value_type: Option<String>,
    /// Why.
    pub kind: TrustErrorKind,
}

impl TrustError {
    /// An error about the record as a whole.
    pub(crate) fn record(handle: &str, kind: TrustErrorKind) -> Self {
        Self {
            handle: handle.to_string(),
            index: None,
            value_type: None,
            kind,
        }
    }

    /// An error about one value of the record.
    pub(crate) fn value(
        handle: &str,
        value: &crate::wire::HandleValue,
        kind: TrustErrorKind,
    ) -> Self {
        Self {
            handle: handle.to_string(),
            index: Some(value.index),
            value_type: Some(value.type_str().into_owned()),
            kind,
        }
    }

    /// Every value the error names: the record's value at fault, the certificate that fails,
    /// the HS_CERT values searched, the digests value of a legacy signature.
    pub fn values(&self) -> Vec<ValueId> {
        let mut out = Vec::new();
        if let Some(i) = self.index {
            out.push(ValueId::new(self.handle.clone(), i));
        }
        let mut kind = &self.kind;
        loop {
            match kind {
                TrustErrorKind::Certificate { cert, reason } => {
                    out.push(cert.clone());
                    kind = reason;
                    continue;
                }
                TrustErrorKind::NoCertificate { handle, others, .. } => {
                    out.extend(others.iter().map(|&i| ValueId::new(&**handle, i)));
                }
                TrustErrorKind::UntrustedRoot { cert, .. } => out.push(cert.clone()),
                TrustErrorKind::NotAuthorized { grant, .. } => out.push(grant.clone()),
                TrustErrorKind::BadSignature { key_from, .. }
                | TrustErrorKind::KeyType { key_from, .. }
                | TrustErrorKind::UnusableKey { key_from, .. } => out.push(key_from.clone()),
                TrustErrorKind::Legacy(LegacyError::BadSignature { digests }) => {
                    out.push(ValueId::new(self.handle.clone(), *digests));
                }
                _ => {}
            }
            return out;
        }
    }

    /// True when the error names the value `index` of `handle`.
    pub fn names(&self, handle: &str, index: u32) -> bool {
        let want = ValueId::new(handle, index);
        self.values().iter().any(|v| v.same(&want))
    }
}

impl fmt::Display for TrustError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.handle)?;
        if let Some(i) = self.index {
            write!(f, "value {i}")?;
            if let Some(t) = &self.value_type {
                write!(f, " ({t})")?;
            }
            f.write_str(": ")?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for TrustError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.kind)
    }
}

/// Seconds since the epoch as RFC 3339 (`2019-07-26T18:15:40Z`), or the number when out of
/// range: how the trust chain's errors and reports name a certificate's times.
///
/// ```
/// assert_eq!(handle_resolver::trust::instant(1_564_164_940), "2019-07-26T18:15:40Z");
/// ```
pub fn instant(seconds: u64) -> String {
    i64::try_from(seconds)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| seconds.to_string())
}
