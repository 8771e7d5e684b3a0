//! Verifying a set of records against the trust root (the reference library's
//! `HandleRecordTrustVerifier`, record by record).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::chain::{self, Statement, Store};
use super::digest::{value_digest, DigestAlgorithm};
use super::error::{TrustError, TrustErrorKind};
use super::legacy::{self, SignerTrust};
use super::names::{same_handle, ValueId};
use super::root::TrustRoot;
use crate::root::ROOT_HANDLE;
use crate::wire::{HandleValue, Limits};

/// The value type of a JWS signature over a record's values.
pub const HS_SIGNATURE: &str = "HS_SIGNATURE";
/// The value type of a JWS certificate.
pub const HS_CERT: &str = "HS_CERT";

/// One HS_SIGNATURE that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedSignature {
    /// The HS_SIGNATURE value's index.
    pub index: u32,
    /// The issuer (`iss`).
    pub issuer: String,
    /// The certificates of the chain, the issuer's first, the root's self-signed one last.
    pub chain: Vec<ValueId>,
    /// The values it covers.
    pub signed: Vec<u32>,
    /// The earliest `exp` of the signature and its chain: when it stops verifying.
    pub not_after: Option<u64>,
}

/// A record all of whose public values are covered by verified signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifiedRecord {
    /// The handle.
    pub handle: String,
    /// The indexes of the values covered by a verified signature.
    pub signed: BTreeSet<u32>,
    /// The HS_SIGNATURE values.
    pub signatures: Vec<VerifiedSignature>,
    /// The legacy `10320/sig.sig` values that verified too.
    pub legacy_signatures: Vec<u32>,
}

impl VerifiedRecord {
    /// When the first of its signatures expires (the record must be refreshed before).
    pub fn not_after(&self) -> Option<u64> {
        self.signatures.iter().filter_map(|s| s.not_after).min()
    }
}

/// The outcome of [`verify_records`]: per record (by handle, as given), verified or why not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verification {
    records: BTreeMap<String, Result<VerifiedRecord, TrustError>>,
}

impl Verification {
    /// The outcome for `handle` (exactly as given to [`verify_records`]).
    pub fn get(&self, handle: &str) -> Option<&Result<VerifiedRecord, TrustError>> {
        self.records.get(handle)
    }

    /// Every record's outcome, by handle.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Result<VerifiedRecord, TrustError>)> {
        self.records.iter().map(|(h, r)| (h.as_str(), r))
    }

    /// The records that verified.
    pub fn verified(&self) -> impl Iterator<Item = &VerifiedRecord> {
        self.records.values().filter_map(|r| r.as_ref().ok())
    }

    /// Why the others did not.
    pub fn errors(&self) -> impl Iterator<Item = &TrustError> {
        self.records.values().filter_map(|r| r.as_ref().err())
    }

    /// True when there are records and every one verified.
    pub fn all_verified(&self) -> bool {
        !self.records.is_empty() && self.records.values().all(Result::is_ok)
    }

    /// How many records were checked.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when no record was given.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The outcomes, by handle.
    pub fn into_map(self) -> BTreeMap<String, Result<VerifiedRecord, TrustError>> {
        self.records
    }
}

/// Verifies each of `records` (handle → values, as a root file or a refresh gives them)
/// against `root` at `now` (seconds since the epoch; nothing here reads a clock).
///
/// A record verifies when it has at least one HS_SIGNATURE and every one of them
/// - is a JWS (RS256 or DS256) about this handle whose certificate chain, built from the
///   records given, verifies signature by signature up to a self-signed certificate about
///   `0.0/0.0` with a key of `root`, every statement inside its `nbf`..`exp` period and every
///   issuer permitted (`perms`) to sign for the handle;
/// - lists digests that match the record's values, none of them missing;
///
/// and when every public value other than the signatures is covered (the legacy
/// `10320/sig.*` values of `0.NA/0.NA` excepted, which must verify themselves when
/// present). A record that fails is not to be used; its error names the value and why.
pub fn verify_records<I, K, V>(records: I, root: &TrustRoot, now: u64) -> Verification
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<[HandleValue]>,
{
    let limits = Limits::default();
    let given: Vec<(K, V)> = records.into_iter().collect();
    let store = Store::new(given.iter().map(|(h, v)| (h.as_ref(), v.as_ref())));
    let mut outcome: BTreeMap<String, Result<VerifiedRecord, TrustError>> = BTreeMap::new();
    for (handle, values) in &given {
        let (handle, values) = (handle.as_ref(), values.as_ref());
        let result = verify_jws(&store, handle, values, root, now, &limits);
        outcome.insert(handle.to_string(), result);
    }
    // The legacy signatures need the JWS outcome of their signer's record.
    let trust = JwsOutcome {
        store: &store,
        outcome: &outcome,
    };
    let mut legacy_results = Vec::new();
    for (handle, values) in &given {
        let (handle, values) = (handle.as_ref(), values.as_ref());
        if !matches!(outcome.get(handle), Some(Ok(_))) {
            continue;
        }
        let checked: Result<Vec<u32>, TrustError> = values
            .iter()
            .filter(|v| v.is_type(legacy::SIGNATURE_TYPE))
            .map(|sig| legacy::verify(handle, values, sig, &trust))
            .collect();
        legacy_results.push((handle.to_string(), checked));
    }
    for (handle, checked) in legacy_results {
        if let Some(entry) = outcome.get_mut(&handle) {
            match (entry.as_mut(), checked) {
                (Ok(rec), Ok(indexes)) => rec.legacy_signatures = indexes,
                (Ok(_), Err(e)) => *entry = Err(e),
                (Err(_), _) => {}
            }
        }
    }
    Verification { records: outcome }
}

/// The JWS outcome of pass one, as the legacy check sees its signers.
struct JwsOutcome<'a, 's> {
    store: &'a Store<'s>,
    outcome: &'a BTreeMap<String, Result<VerifiedRecord, TrustError>>,
}

impl SignerTrust for JwsOutcome<'_, '_> {
    fn signer_value(&self, signer: &ValueId) -> Option<(Option<&HandleValue>, bool)> {
        let (name, values) = self.store.get(&signer.handle)?;
        let value = values.iter().find(|v| v.index == signer.index);
        let trusted = matches!(
            self.outcome.get(name),
            Some(Ok(rec)) if rec.signed.contains(&signer.index)
        );
        Some((value, trusted))
    }
}

/// True when a value must be covered by a signature: public, not a signature itself, and
/// not one of the legacy signature values of `0.NA/0.NA` (the reference library's rule).
fn needs_signature(handle: &str, v: &HandleValue) -> bool {
    if v.is_type(HS_SIGNATURE) || !v.permissions.public_read() {
        return false;
    }
    let legacy = v.is_type(legacy::SIGNATURE_TYPE) || v.is_type(legacy::DIGESTS_TYPE);
    !(legacy && same_handle(handle, ROOT_HANDLE))
}

/// Pass one: the record's HS_SIGNATURE values and their chains.
fn verify_jws(
    store: &Store<'_>,
    handle: &str,
    values: &[HandleValue],
    root: &TrustRoot,
    now: u64,
    limits: &Limits,
) -> Result<VerifiedRecord, TrustError> {
    let mut seen = HashSet::new();
    for v in values {
        if !seen.insert(v.index) {
            return Err(TrustError::value(handle, v, TrustErrorKind::DuplicateIndex));
        }
    }
    let sigs: Vec<&HandleValue> = values.iter().filter(|v| v.is_type(HS_SIGNATURE)).collect();
    if sigs.is_empty() {
        return Err(TrustError::record(handle, TrustErrorKind::NoSignature));
    }
    let mut signed = BTreeSet::new();
    let mut signatures = Vec::new();
    for sig in sigs {
        let s = verify_signature(store, handle, values, sig, root, now, limits)?;
        signed.extend(s.signed.iter().copied());
        signatures.push(s);
    }
    for v in values {
        if needs_signature(handle, v) && !signed.contains(&v.index) {
            return Err(TrustError::value(handle, v, TrustErrorKind::Unsigned));
        }
    }
    Ok(VerifiedRecord {
        handle: handle.to_string(),
        signed,
        signatures,
        legacy_signatures: Vec::new(),
    })
}

/// One HS_SIGNATURE: its JWS, subject, chain, then the digests it lists.
fn verify_signature(
    store: &Store<'_>,
    handle: &str,
    values: &[HandleValue],
    sig: &HandleValue,
    root: &TrustRoot,
    now: u64,
    limits: &Limits,
) -> Result<VerifiedSignature, TrustError> {
    let at_sig = |k: TrustErrorKind| TrustError::value(handle, sig, k);
    let statement =
        Statement::parse(ValueId::new(handle, sig.index), &sig.data, limits).map_err(at_sig)?;
    let claims = &statement.claims;
    if !claims
        .sub
        .as_deref()
        .is_some_and(|s| same_handle(s, handle))
    {
        return Err(at_sig(TrustErrorKind::WrongSubject(claims.sub.clone())));
    }
    let digests = claims
        .digests
        .clone()
        .ok_or_else(|| at_sig(TrustErrorKind::NoDigests))?;
    let alg = DigestAlgorithm::from_name(&digests.alg)
        .filter(|a| *a != DigestAlgorithm::Md5)
        .ok_or_else(|| at_sig(TrustErrorKind::DigestAlgorithm(digests.alg.clone())))?;
    let issuer = claims.iss.clone().unwrap_or_default();
    let links = chain::build(store, statement, limits).map_err(at_sig)?;
    chain::check(&links, handle, root, now).map_err(at_sig)?;

    let mut covered = Vec::new();
    for (index, digest) in &digests.digests {
        let Some(v) = values.iter().find(|v| v.index == *index) else {
            return Err(TrustError {
                handle: handle.to_string(),
                index: Some(*index),
                value_type: None,
                kind: TrustErrorKind::MissingValue {
                    signature: sig.index,
                },
            });
        };
        let at_value = |k: TrustErrorKind| TrustError::value(handle, v, k);
        if value_digest(v, alg).map_err(|e| at_value(e.into()))? != *digest {
            return Err(at_value(TrustErrorKind::DigestMismatch {
                signature: sig.index,
                alg,
            }));
        }
        covered.push(*index);
    }
    Ok(VerifiedSignature {
        index: sig.index,
        issuer,
        chain: links
            .iter()
            .skip(1)
            .map(|l| l.statement.at.clone())
            .collect(),
        signed: covered,
        not_after: links.iter().filter_map(|l| l.statement.claims.exp).min(),
    })
}
