//! The certificate chain of a signature, built from the records at hand and checked up to the
//! trust root (the reference library's `ChainBuilder` and `ChainVerifier`).
//!
//! A signature names its issuer (`iss`, `index:handle`). The issuer's certificate is the
//! latest-issued (`iat`) HS_CERT of the issuer's record whose subject (`sub`) is the issuer
//! (or the value the claims' `chain` names); its `publicKey` checks the signature and its
//! `perms` say what the issuer may sign. The certificate is itself a statement with an
//! issuer, and so on until a self-signed certificate (`sub` equal to `iss`), which must be
//! about `0.0/0.0` with one of the trust root's keys. Every statement of the chain must verify
//! with its issuer's key and be inside its `nbf`..`exp` period, and every issuer's permissions
//! must cover the signed record's handle.

use std::collections::{HashMap, HashSet};

use super::claims::Claims;
use super::error::TrustErrorKind;
use super::jws::Jws;
use super::names::{authorized, handle_key, same_handle, Permission, ValueId, TRUST_ROOT_HANDLE};
use super::root::TrustRoot;
use crate::wire::{HandleValue, Limits, PublicKey};

/// Most certificates followed from one signature (the reference library's limit).
pub const MAX_CHAIN_LENGTH: usize = 50;

/// The records a chain may pass through, by handle (compared as [`same_handle`] does).
pub(crate) struct Store<'a> {
    records: HashMap<String, (&'a str, &'a [HandleValue])>,
}

impl<'a> Store<'a> {
    pub(crate) fn new(records: impl IntoIterator<Item = (&'a str, &'a [HandleValue])>) -> Self {
        let mut map = HashMap::new();
        for (handle, values) in records {
            map.entry(handle_key(handle)).or_insert((handle, values));
        }
        Self { records: map }
    }

    /// The record of `handle`: its name as given and its values.
    pub(crate) fn get(&self, handle: &str) -> Option<(&'a str, &'a [HandleValue])> {
        self.records.get(&handle_key(handle)).copied()
    }
}

/// A signed statement (HS_SIGNATURE or HS_CERT) and where it was found.
#[derive(Debug, Clone)]
pub(crate) struct Statement {
    pub(crate) at: ValueId,
    pub(crate) jws: Jws,
    pub(crate) claims: Claims,
}

impl Statement {
    /// Reads a value's data as a JWS and its claims.
    pub(crate) fn parse(at: ValueId, data: &[u8], limits: &Limits) -> Result<Self, TrustErrorKind> {
        let jws = Jws::parse(data)?;
        let claims = Claims::parse(jws.payload(), limits).map_err(TrustErrorKind::Claims)?;
        Ok(Self { at, jws, claims })
    }
}

/// One statement of a chain with the key and permissions of its issuer.
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) statement: Statement,
    /// The key the statement must verify with.
    pub(crate) issuer_key: PublicKey,
    /// What the issuer may sign.
    pub(crate) perms: Vec<Permission>,
    /// The certificate that gave key and permissions (the statement itself at the root).
    pub(crate) grant: ValueId,
}

/// Builds the chain of `first`: the statement, its issuer's certificate, that one's
/// issuer's, ... up to a self-signed certificate. Errors about a certificate are wrapped in
/// [`TrustErrorKind::Certificate`].
pub(crate) fn build(
    store: &Store<'_>,
    first: Statement,
    limits: &Limits,
) -> Result<Vec<Link>, TrustErrorKind> {
    let mut links = Vec::new();
    let mut seen = HashSet::new();
    let mut hints: Vec<String> = Vec::new();
    let mut child = first;
    loop {
        if child.claims.is_self_issued() {
            let key = child
                .claims
                .public_key
                .clone()
                .ok_or_else(|| TrustErrorKind::NoPublicKey.in_cert(&child.at))?;
            let perms = child.claims.perms.clone();
            let grant = child.at.clone();
            links.push(Link {
                statement: child,
                issuer_key: key,
                perms,
                grant,
            });
            return Ok(links);
        }
        if links.len() >= MAX_CHAIN_LENGTH {
            return Err(TrustErrorKind::ChainTooLong(MAX_CHAIN_LENGTH));
        }
        let in_child = |k: TrustErrorKind| {
            if links.is_empty() {
                k
            } else {
                k.in_cert(&child.at)
            }
        };
        let Some(iss) = child.claims.iss.clone() else {
            return Err(in_child(TrustErrorKind::NoIssuer));
        };
        if hints.is_empty() {
            hints = child.claims.chain.iter().rev().cloned().collect();
            if hints.is_empty() {
                hints.push(ValueId::parse(&iss).handle);
            }
        }
        let Some(next) = hints.pop() else {
            return Err(in_child(TrustErrorKind::NoIssuer));
        };
        if !seen.insert(handle_key(&next)) {
            return Err(TrustErrorKind::ChainCycle(next));
        }
        let parent = lookup(store, &next, &iss, limits)?;
        let about_issuer = parent
            .claims
            .sub
            .as_deref()
            .is_some_and(|sub| ValueId::parse(sub).same(&ValueId::parse(&iss)));
        if !about_issuer {
            return Err(TrustErrorKind::BrokenChain {
                issuer: iss,
                subject: parent.claims.sub.clone(),
            }
            .in_cert(&parent.at));
        }
        let key = parent
            .claims
            .public_key
            .clone()
            .ok_or_else(|| TrustErrorKind::NoPublicKey.in_cert(&parent.at))?;
        links.push(Link {
            statement: child,
            issuer_key: key,
            perms: parent.claims.perms.clone(),
            grant: parent.at.clone(),
        });
        child = parent;
    }
}

/// The certificate at `link` about `subject`: the value `link` names (`index:handle`), or
/// the latest-issued HS_CERT of the handle `link` whose subject is `subject`.
fn lookup(
    store: &Store<'_>,
    link: &str,
    subject: &str,
    limits: &Limits,
) -> Result<Statement, TrustErrorKind> {
    let target = ValueId::parse(link);
    let (name, values) = store
        .get(&target.handle)
        .ok_or_else(|| TrustErrorKind::NoIssuerRecord(target.handle.clone()))?;
    let not_found = |others: Vec<u32>| TrustErrorKind::NoCertificate {
        handle: name.into(),
        subject: subject.into(),
        others: others.into(),
    };
    if target.index != 0 {
        let v = values
            .iter()
            .find(|v| v.index == target.index)
            .ok_or_else(|| not_found(Vec::new()))?;
        let at = ValueId::new(name, v.index);
        return Statement::parse(at.clone(), &v.data, limits).map_err(|e| e.in_cert(&at));
    }
    let wanted = ValueId::parse(subject);
    let mut best: Option<Statement> = None;
    let mut others = Vec::new();
    for v in values.iter().filter(|v| v.is_type("HS_CERT")) {
        let at = ValueId::new(name, v.index);
        // As the reference library does, a certificate that does not read fails the chain.
        let s = Statement::parse(at.clone(), &v.data, limits).map_err(|e| e.in_cert(&at))?;
        let about = s
            .claims
            .sub
            .as_deref()
            .is_some_and(|sub| ValueId::parse(sub).same(&wanted));
        if !about {
            others.push(v.index);
        } else {
            let later = match &best {
                Some(b) => s.claims.iat > b.claims.iat,
                None => true,
            };
            if later {
                best = Some(s);
            }
        }
    }
    best.ok_or_else(|| not_found(others))
}

/// Checks every link of `links` for a record of `handle` at `now`: signature, validity
/// period, the issuer's permissions, and that the chain ends at the trust root. The first
/// link's own failures are returned as they are, a certificate's wrapped.
pub(crate) fn check(
    links: &[Link],
    handle: &str,
    root: &TrustRoot,
    now: u64,
) -> Result<(), TrustErrorKind> {
    for (i, link) in links.iter().enumerate() {
        let s = &link.statement;
        let wrap = |k: TrustErrorKind| if i == 0 { k } else { k.in_cert(&s.at) };
        let signer = s.claims.iss.clone().unwrap_or_default();
        s.jws
            .verify(&link.issuer_key, &signer, &link.grant)
            .map_err(wrap)?;
        check_period(&s.claims, now).map_err(wrap)?;
        if !authorized(&link.perms, handle) {
            return Err(TrustErrorKind::NotAuthorized {
                grant: link.grant.clone(),
                handle: handle.to_string(),
            });
        }
    }
    let Some(last) = links.last() else {
        return Err(TrustErrorKind::NoIssuer);
    };
    let subject = last.statement.claims.sub.clone().unwrap_or_default();
    let about_root = same_handle(&ValueId::parse(&subject).handle, TRUST_ROOT_HANDLE);
    if about_root && root.contains(&last.issuer_key) {
        Ok(())
    } else {
        Err(TrustErrorKind::UntrustedRoot {
            cert: last.statement.at.clone(),
            subject,
        })
    }
}

/// `nbf <= now <= exp`, each bound when present (the reference library's `isDateInRange`).
pub(crate) fn check_period(claims: &Claims, now: u64) -> Result<(), TrustErrorKind> {
    if let Some(nbf) = claims.nbf {
        if now < nbf {
            return Err(TrustErrorKind::NotYetValid { nbf, now });
        }
    }
    if let Some(exp) = claims.exp {
        if now > exp {
            return Err(TrustErrorKind::Expired { exp, now });
        }
    }
    Ok(())
}
