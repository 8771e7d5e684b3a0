//! The trust chain of handle records, verified offline (sans-IO: no sockets, no clock; the
//! time of the check is an argument).
//!
//! The global root's records carry `HS_SIGNATURE` values: JSON Web Signatures over the
//! digests of the record's values, issued by a key that an `HS_CERT` certificate vouches for,
//! whose issuer another certificate vouches for, up to the self-signed certificate of the
//! trust root `0.0/0.0` (the reference library's `net.handle.hdllib.trust`). The 2019
//! `bootstrap_handles` of the reference client is the test vector: its `0.0/0.0`,
//! `0.NA/0.NA` and `0.GHR/*` records all verify at a time inside their certificates'
//! validity, and fail after any one-byte change.
//!
//! [`verify_records`] checks a set of records against a [`TrustRoot`]; each record verifies
//! or fails with a [`TrustError`] that names the record, the value and the reason.
//!
//! Layout (private modules; their items are re-exported here, each at one path,
//! `handle_resolver::trust::...`):
//! - `names`: `index:handle` references ([`ValueId`]), handle comparison, permissions
//!   ([`Permission`]);
//! - `jws` and `claims`: the signed statements ([`Jws`], [`Claims`]);
//! - `digest`: value digests as the reference library computes them ([`value_digest`]);
//! - `chain`: building and checking certificate chains;
//! - `legacy`: the deprecated DSA value signature (`10320/sig.sig`) of `0.NA/0.NA`;
//! - `root`: the trust root's keys ([`TrustRoot`]); `verify`: the records;
//! - `sign`: signing values and issuing certificates ([`sign_values`], [`issue_certificate`]).
#![warn(unreachable_pub)]

mod alg;
mod chain;
mod claims;
mod digest;
mod error;
mod jws;
mod legacy;
mod names;
mod root;
mod sign;
mod verify;

#[cfg(test)]
mod tests;

pub use chain::MAX_CHAIN_LENGTH;
pub use claims::{Claims, SignedDigests};
pub use digest::{digested_bytes, value_digest, DigestAlgorithm, DIGEST_OFFSET};
pub use error::{instant, JwsError, LegacyError, TrustError, TrustErrorKind};
pub use jws::{Jws, JwsAlgorithm};
pub use legacy::{DIGESTS_TYPE as LEGACY_DIGESTS_TYPE, SIGNATURE_TYPE as LEGACY_SIGNATURE_TYPE};
pub use names::{same_handle, Permission, ValueId, TRUST_ROOT_HANDLE};
pub use root::TrustRoot;
pub use sign::{issue_certificate, sign_values, SignError, SigningKey, Validity};
pub use verify::{
    verify_records, Verification, VerifiedRecord, VerifiedSignature, HS_CERT, HS_SIGNATURE,
};
