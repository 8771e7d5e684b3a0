//! The test server's in-memory handle store and the resolution rules it applies
//! (PROTOCOL.md §4.1, §14.7-§14.12): filters, PO, homed prefixes, referrals.
//!
//! Each stored handle keeps its values pre-encoded (`count ‖ values`, public values only), so
//! the usual unfiltered public query is answered by copying those bytes: no per-request
//! allocation of stored answers.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use bytes::{BufMut, Bytes, BytesMut};

use crate::wire::{HandleValue, ReferralBody, ResponseCode};

/// A configured referral answer (302 service referral or 303 prefix referral).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Referral {
    /// `ResponseCode::ServiceReferral` or `ResponseCode::PrefixReferral`.
    pub code: ResponseCode,
    /// The referral body sent as is.
    pub body: ReferralBody,
}

/// One stored handle.
#[derive(Debug)]
pub struct StoredHandle {
    /// The handle as stored (as given to [`Store::insert`]).
    pub handle: Bytes,
    /// All values, public or not, in the order given.
    pub values: Vec<HandleValue>,
    /// `int4 count ‖ values` of the publicly readable values, pre-encoded.
    pub(crate) public_encoded: Bytes,
    /// How many values `public_encoded` holds.
    pub(crate) public_count: usize,
}

/// What the store says about one resolution query.
#[derive(Debug)]
pub enum Lookup {
    /// 301: the handle's prefix is not homed here.
    NotHomed,
    /// 302/303 configured for this handle.
    Referral(Referral),
    /// 100.
    NotFound,
    /// 200: the handle exists, nothing matches (or only non-public values with PO set).
    NoValues,
    /// 402: PO cleared and a selected value is not public.
    AuthenticationNeeded,
    /// 1: the unfiltered public answer, pre-encoded (`count ‖ values`).
    AllPublic(Arc<StoredHandle>),
    /// 1: a filtered selection, encoded for this query (`int4 count ‖ values`).
    Selected(Bytes),
    /// A recorded answer (envelope ‖ message) sent back as is, with the request id and
    /// expiration of the request patched in.
    Raw(Bytes),
}

#[derive(Debug, Default)]
struct Inner {
    handles: HashMap<Bytes, Arc<StoredHandle>>,
    referrals: HashMap<Bytes, Referral>,
    raw: HashMap<Bytes, Bytes>,
    homed: HashSet<Bytes>,
    /// Handles served whatever their prefix (normalised): [`Store::serve_handle`].
    served: HashSet<Bytes>,
    /// Server administrators (index, normalised handle): they may home and unhome prefixes,
    /// and change any handle (the reference's `server_admin_full_access`).
    server_admins: Vec<(u32, Bytes)>,
}

impl Inner {
    /// True when the normalised `key` is served here (see [`Store::serves`]).
    fn serves_key(&self, key: &[u8]) -> bool {
        self.homed.is_empty() || self.homed.contains(prefix_of(key)) || self.served.contains(key)
    }
}

/// Handle → values, plus referral rules and homed prefixes. Shared (`Arc<Store>`) and
/// changeable while servers run.
///
/// Keys are normalised like the reference server does: ASCII letters of the prefix (before
/// the first `/`) upper-cased, the whole handle upper-cased when it starts with `0.`, and the
/// suffix too when the store is case-insensitive. A store with no homed prefix serves every
/// prefix; once one is homed, a handle of any other prefix gets 301, unless it is one of the
/// handles named by [`Store::serve_handle`].
#[derive(Debug, Default)]
pub struct Store {
    inner: RwLock<Inner>,
    case_insensitive: bool,
}

impl Store {
    /// An empty, case-sensitive store serving every prefix.
    pub fn new() -> Store {
        Store::default()
    }

    /// An empty store that also folds ASCII case in suffixes (the reference server's
    /// `case_sensitive = no`).
    pub fn case_insensitive() -> Store {
        Store {
            inner: RwLock::default(),
            case_insensitive: true,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read()
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write()
    }

    /// The lookup key of `handle`.
    pub fn normalize(&self, handle: &[u8]) -> Bytes {
        let mut key = handle.to_vec();
        normalize_in_place(&mut key, self.case_insensitive);
        Bytes::from(key)
    }

    /// Stores (or replaces) `handle` with `values`.
    pub fn insert(&self, handle: impl AsRef<[u8]>, values: Vec<HandleValue>) {
        let handle = Bytes::copy_from_slice(handle.as_ref());
        let public: Vec<&HandleValue> = values
            .iter()
            .filter(|v| v.permissions.public_read())
            .collect();
        let public_encoded = encode_values(&public);
        let stored = StoredHandle {
            public_count: public.len(),
            public_encoded,
            handle: handle.clone(),
            values,
        };
        let key = self.normalize(&handle);
        self.write().handles.insert(key, Arc::new(stored));
    }

    /// Removes `handle`; true when it was stored.
    pub fn remove(&self, handle: impl AsRef<[u8]>) -> bool {
        let key = self.normalize(handle.as_ref());
        self.write().handles.remove(&key).is_some()
    }

    /// Answers every query for `handle` with this referral (checked before the values).
    pub fn insert_referral(&self, handle: impl AsRef<[u8]>, referral: Referral) {
        let key = self.normalize(handle.as_ref());
        self.write().referrals.insert(key, referral);
    }

    /// Answers every resolution of `handle` (whatever its filters) with `answer`, a whole
    /// recorded answer (envelope ‖ message, UDP fragments reassembled), e.g. from
    /// `fixtures/reference/captures`. The server patches in the request's request id
    /// (envelope bytes 8..12) and expiration (header offset 16) and sends the rest unchanged;
    /// a recorded signature therefore no longer verifies (it covers the request id). Checked
    /// before everything else, homed prefixes included.
    pub fn insert_raw_answer(&self, handle: impl AsRef<[u8]>, answer: Bytes) {
        let key = self.normalize(handle.as_ref());
        self.write().raw.insert(key, answer);
    }

    /// Homes `prefix` (e.g. `20.500.1`, `0.NA`): from then on only homed prefixes are served.
    pub fn home_prefix(&self, prefix: impl AsRef<[u8]>) {
        let mut p = prefix.as_ref().to_vec();
        p.make_ascii_uppercase();
        self.write().homed.insert(Bytes::from(p));
    }

    /// Stops serving `prefix` (as given to [`Store::home_prefix`]); true when it was homed.
    /// Once no prefix is homed, every prefix is served again.
    pub fn unhome_prefix(&self, prefix: impl AsRef<[u8]>) -> bool {
        let mut p = prefix.as_ref().to_vec();
        p.make_ascii_uppercase();
        self.write().homed.remove(&p[..])
    }

    /// Serves `handle` itself whatever its prefix, while other handles of that prefix still
    /// get 301: a copy of another prefix's handle kept here, e.g. the prefix handle
    /// `0.NA/<prefix>` holding the administrators' keys, so that a client talking to this
    /// server alone can read the identity it authenticates as.
    ///
    /// ```
    /// use handle_resolver::testing::Store;
    ///
    /// let store = Store::new();
    /// store.home_prefix("20.500.1");
    /// store.serve_handle("0.NA/20.500.1");
    /// assert!(store.serves("0.na/20.500.1") && !store.serves("0.NA/20.500.2"));
    /// ```
    pub fn serve_handle(&self, handle: impl AsRef<[u8]>) {
        let key = self.normalize(handle.as_ref());
        self.write().served.insert(key);
    }

    /// True when the store serves `handle`: no prefix homed, its prefix homed, or the handle
    /// named by [`Store::serve_handle`].
    pub fn serves(&self, handle: impl AsRef<[u8]>) -> bool {
        let key = self.normalize(handle.as_ref());
        self.read().serves_key(&key)
    }

    /// Makes `index:handle` a server administrator: it may home and unhome prefixes, and
    /// change every handle whatever their HS_ADMIN values say.
    pub fn add_server_admin(&self, index: u32, handle: impl AsRef<[u8]>) {
        let key = self.normalize(handle.as_ref());
        self.write().server_admins.push((index, key));
    }

    /// True when `index:handle` is a server administrator.
    pub fn is_server_admin(&self, index: u32, handle: impl AsRef<[u8]>) -> bool {
        let key = self.normalize(handle.as_ref());
        self.read()
            .server_admins
            .iter()
            .any(|(i, h)| *i == index && *h == key)
    }

    /// The stored handle, if any.
    pub fn get(&self, handle: impl AsRef<[u8]>) -> Option<Arc<StoredHandle>> {
        let key = self.normalize(handle.as_ref());
        self.read().handles.get(&key).cloned()
    }

    /// The stored handles (as stored) under `prefix` (the part before the first `/`,
    /// compared as the store compares prefixes), sorted.
    pub fn handles_under(&self, prefix: impl AsRef<[u8]>) -> Vec<Bytes> {
        let mut p = prefix.as_ref().to_vec();
        p.make_ascii_uppercase();
        let mut out: Vec<Bytes> = self
            .read()
            .handles
            .iter()
            .filter(|(key, _)| key.contains(&b'/') && prefix_of(key) == &p[..])
            .map(|(_, stored)| stored.handle.clone())
            .collect();
        out.sort();
        out
    }

    /// Number of stored handles.
    pub fn len(&self) -> usize {
        self.read().handles.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies the resolution rules to one query.
    pub fn lookup(
        &self,
        handle: &[u8],
        indexes: &[u32],
        types: &[Bytes],
        public_only: bool,
    ) -> Lookup {
        // Normalise into a stack buffer when the handle is short (the usual case).
        let mut stack = [0u8; 256];
        let mut heap;
        let key: &[u8] = if let Some(buf) = stack.get_mut(..handle.len()) {
            buf.copy_from_slice(handle);
            normalize_in_place(buf, self.case_insensitive);
            buf
        } else {
            heap = handle.to_vec();
            normalize_in_place(&mut heap, self.case_insensitive);
            &heap
        };
        let inner = self.read();
        if let Some(raw) = inner.raw.get(key) {
            return Lookup::Raw(raw.clone());
        }
        if !inner.serves_key(key) {
            return Lookup::NotHomed;
        }
        if let Some(r) = inner.referrals.get(key) {
            return Lookup::Referral(r.clone());
        }
        let Some(stored) = inner.handles.get(key).cloned() else {
            return Lookup::NotFound;
        };
        drop(inner);
        if indexes.is_empty() && types.is_empty() {
            if public_only {
                return if stored.public_count == 0 {
                    Lookup::NoValues
                } else {
                    Lookup::AllPublic(stored)
                };
            }
            if stored.values.iter().any(|v| !v.permissions.public_read()) {
                return Lookup::AuthenticationNeeded;
            }
            return Lookup::AllPublic(stored);
        }
        let selected: Vec<&HandleValue> = stored
            .values
            .iter()
            .filter(|v| value_matches(v, indexes, types))
            .collect();
        if !public_only && selected.iter().any(|v| !v.permissions.public_read()) {
            return Lookup::AuthenticationNeeded;
        }
        let selected: Vec<&HandleValue> = selected
            .into_iter()
            .filter(|v| v.permissions.public_read())
            .collect();
        if selected.is_empty() {
            return Lookup::NoValues;
        }
        Lookup::Selected(encode_values(&selected))
    }
}

/// The prefix part of a normalised handle (before the first `/`); a handle without `/` is
/// itself a prefix, looked up as `0.NA/<handle>` by the reference server, so it is homed
/// with `0.NA`.
fn prefix_of(key: &[u8]) -> &[u8] {
    match key.iter().position(|b| *b == b'/') {
        Some(i) => key.get(..i).unwrap_or(key),
        None => b"0.NA",
    }
}

/// Upper-cases ASCII letters of the prefix, of the whole handle when it starts with `0.`, or
/// of everything when `all` (PROTOCOL.md §11.1).
pub(crate) fn normalize_in_place(h: &mut [u8], all: bool) {
    let zero_dot = h.len() >= 2 && h.first() == Some(&b'0') && h.get(1) == Some(&b'.');
    if all || zero_dot {
        h.make_ascii_uppercase();
        return;
    }
    for b in h.iter_mut() {
        if *b == b'/' {
            break;
        }
        b.make_ascii_uppercase();
    }
}

/// Index OR type selection (PROTOCOL.md §4.1): a type matches ASCII-case-insensitively, and
/// a query type ending in `.` also selects its whole sub-type hierarchy and the type itself.
pub(crate) fn value_matches(v: &HandleValue, indexes: &[u32], types: &[Bytes]) -> bool {
    if indexes.contains(&v.index) {
        return true;
    }
    types.iter().any(|t| type_matches(&v.type_name, t))
}

fn type_matches(value_type: &[u8], query: &[u8]) -> bool {
    if value_type.eq_ignore_ascii_case(query) {
        return true;
    }
    match query.strip_suffix(b".") {
        Some(parent) if !parent.is_empty() => {
            value_type.eq_ignore_ascii_case(parent)
                || (value_type.len() > query.len()
                    && value_type
                        .get(..query.len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(query)))
        }
        _ => false,
    }
}

/// `int4 count ‖ values`. Encoding a stored value cannot fail for values that fit in memory
/// below 2 GiB; a value that does not encode is left out (and logged).
fn encode_values(values: &[&HandleValue]) -> Bytes {
    let mut out =
        BytesMut::with_capacity(4 + values.iter().map(|v| v.encoded_len()).sum::<usize>());
    out.put_u32(0);
    let mut count: u32 = 0;
    for v in values {
        match v.encode(&mut out) {
            Ok(()) => count = count.saturating_add(1),
            Err(e) => tracing::debug!(index = v.index, error = %e, "value left out"),
        }
    }
    if let Some(slot) = out.get_mut(..4) {
        slot.copy_from_slice(&count.to_be_bytes());
    }
    out.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Permissions;

    fn store() -> Store {
        let s = Store::new();
        let mut secret = HandleValue::new(3, "SECRET", "x");
        secret.permissions = Permissions(0x0C);
        s.insert(
            "20.500.1/abc",
            vec![
                HandleValue::new(1, "URL", "https://example.org/"),
                HandleValue::new(2, "URL.mirror", "https://mirror.example.org/"),
                secret,
                HandleValue::new(4, "EMAIL", "a@example.org"),
            ],
        );
        s
    }

    fn count(l: &Lookup) -> Option<u32> {
        let b = match l {
            Lookup::AllPublic(s) => s.public_encoded.clone(),
            Lookup::Selected(encoded) => encoded.clone(),
            _ => return None,
        };
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[test]
    fn prefix_is_case_folded_suffix_is_not() {
        let s = store();
        assert!(matches!(
            s.lookup(b"20.500.1/abc", &[], &[], true),
            Lookup::AllPublic(_)
        ));
        assert!(matches!(
            s.lookup(b"20.500.1/ABC", &[], &[], true),
            Lookup::NotFound
        ));
        let ci = Store::case_insensitive();
        ci.insert("20.500.1/abc", vec![HandleValue::new(1, "URL", "u")]);
        assert!(matches!(
            ci.lookup(b"20.500.1/ABC", &[], &[], true),
            Lookup::AllPublic(_)
        ));
    }

    #[test]
    fn public_only_leaves_out_restricted_values() {
        let s = store();
        assert_eq!(count(&s.lookup(b"20.500.1/abc", &[], &[], true)), Some(3));
        assert!(matches!(
            s.lookup(b"20.500.1/abc", &[], &[], false),
            Lookup::AuthenticationNeeded
        ));
    }

    #[test]
    fn filters_are_ored_and_hierarchical() {
        let s = store();
        let t = |x: &str| Bytes::copy_from_slice(x.as_bytes());
        assert_eq!(
            count(&s.lookup(b"20.500.1/abc", &[], &[t("url")], true)),
            Some(1)
        );
        assert_eq!(
            count(&s.lookup(b"20.500.1/abc", &[], &[t("URL.")], true)),
            Some(2)
        );
        assert_eq!(
            count(&s.lookup(b"20.500.1/abc", &[4], &[t("URL")], true)),
            Some(2)
        );
        assert!(matches!(
            s.lookup(b"20.500.1/abc", &[], &[t("HS_")], true),
            Lookup::NoValues
        ));
        assert!(matches!(
            s.lookup(b"20.500.1/abc", &[3], &[], true),
            Lookup::NoValues
        ));
    }

    #[test]
    fn homed_prefixes_give_301_for_others() {
        let s = store();
        s.home_prefix("20.500.1");
        assert!(matches!(
            s.lookup(b"99.999/abc", &[], &[], true),
            Lookup::NotHomed
        ));
        assert!(matches!(
            s.lookup(b"20.500.1/zzz", &[], &[], true),
            Lookup::NotFound
        ));
    }

    #[test]
    fn a_handle_served_alone_is_answered_its_prefix_is_not() {
        let s = store();
        s.home_prefix("20.500.1");
        s.insert("0.NA/20.500.1", vec![HandleValue::new(1, "DESC", "prefix")]);
        s.insert("0.NA/20.500.2", vec![HandleValue::new(1, "DESC", "other")]);
        assert!(matches!(
            s.lookup(b"0.NA/20.500.1", &[], &[], true),
            Lookup::NotHomed
        ));
        s.serve_handle("0.na/20.500.1");
        assert!(matches!(
            s.lookup(b"0.NA/20.500.1", &[], &[], true),
            Lookup::AllPublic(_)
        ));
        assert!(s.serves("0.NA/20.500.1"));
        assert!(matches!(
            s.lookup(b"0.NA/20.500.2", &[], &[], true),
            Lookup::NotHomed
        ));
        assert!(!s.serves("0.NA/20.500.2"));
    }
}
