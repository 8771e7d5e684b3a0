//! The keys a chain must end at: the trust root `0.0/0.0`'s keys, given by the caller or
//! built in (the global Handle System's, as the reference client shipped it in 2019).

use serde_json::json;

use crate::wire::json::key_from_json;
use crate::wire::{HandleValue, Limits, PublicKey};

/// The modulus (base64url) of the global trust root's RSA key: HS_PUBKEY index 301 of
/// `0.0/0.0` in the reference client's `bootstrap_handles` of 2019-07-26, the key its
/// self-signed HS_CERT (400) certifies. A test compares it with the shipped file.
const GLOBAL_ROOT_N: &str = "\
tnOA_03HfrjWVHwKpbKs3FS-eAPF2ac_5u6dSUhjeVhFf3VBs2YE1L9qh9HXLGQFITTNMEdTiaIdQ7R8a4OuLKW8\
Z_W9X7n5MvN5NkG2oaZjYjzunB1gRi4i_IQoUQKikH9j5jQVDjsT85a49b3MXr3KzMaYR_PEuBb29dVr5y2j4Fq6\
mWnGhqkirdweCDmUbT20-t9V0kt38AHMlwnjomqQiL-ltZsB8yiXhXIrEXWganbE3-ZuS0jzzNsKJQ-jyII3SrGp\
0tPjRm6t5UnsgMtH6eeuPkclRddqEL8UdF6klQK6cWPHl2V4NMW1Y-IhPtLIi_75Cu6doTfWEJD9sqDhCg4W-\
eA_sbivKp0ntxjFYlXoh06i027UVL9zOhC3W0iQpomvHyk11ZfiWaLqiDaNbXIiJxvqM758Q7UrgGkAcAzd1QfXA\
UbUU8I1wFNk5BJNu3bB5g6qCHg9RjFgCIqtWaPt8A_I970oN4pYiQ3YUs2xs4_q8cQd7X0XkZZyyW-rkA5IwF1bF\
IKK6maHdf8Buv0Q9ocA9HwtxA_Llj0dMcJvGI1_Lv3IeANu3UnngV_soWOR2kev7nPXL7nsEDKK1Ejx85OducB0v\
PhJB6OM-eVZLLrwc2gH5_N91T_uD1UKK7GFhRV7X1o3bhWyvmgsbZ_eDRfGpN4ZYLI8l7E";

/// The public exponent of that key (65537).
const GLOBAL_ROOT_E: &str = "AQAB";

/// The keys trusted as `0.0/0.0`'s: a chain is trusted only when it ends at a self-signed
/// certificate about `0.0/0.0` whose key is one of these.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustRoot {
    keys: Vec<PublicKey>,
}

impl TrustRoot {
    /// A root of the given keys.
    pub fn new(keys: impl IntoIterator<Item = PublicKey>) -> Self {
        Self {
            keys: keys.into_iter().collect(),
        }
    }

    /// The global Handle System's root key as the reference client shipped it in 2019 (a
    /// 4096-bit RSA key; HS_PUBKEY 301 of `0.0/0.0`).
    pub fn global() -> Self {
        let jwk = json!({"kty": "RSA", "n": GLOBAL_ROOT_N, "e": GLOBAL_ROOT_E});
        match key_from_json(&jwk, &Limits::default()) {
            Ok(k) => Self::new([k]),
            // Not reachable with the constants above (a test reads them); an empty root
            // trusts nothing.
            Err(_) => Self::default(),
        }
    }

    /// The HS_PUBKEY values of a `0.0/0.0` record that decode as keys (taken on trust: for
    /// a root of one's own, or a test).
    pub fn from_values(values: &[HandleValue]) -> Self {
        Self::new(
            values
                .iter()
                .filter(|v| v.is_type("HS_PUBKEY"))
                .filter_map(|v| PublicKey::decode_bytes(&v.data).ok()),
        )
    }

    /// The keys.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// True when `key` is one of the root's keys (the same numbers; leading zero bytes and
    /// the encoding's options and trailer do not matter).
    pub fn contains(&self, key: &PublicKey) -> bool {
        self.keys.iter().any(|k| same_key(k, key))
    }
}

/// Two keys with the same numbers.
pub(crate) fn same_key(a: &PublicKey, b: &PublicKey) -> bool {
    fn eq(x: &[u8], y: &[u8]) -> bool {
        let strip = |v: &[u8]| -> Vec<u8> { v.iter().copied().skip_while(|&c| c == 0).collect() };
        strip(x) == strip(y)
    }
    match (a, b) {
        (PublicKey::Rsa(x), PublicKey::Rsa(y)) => {
            eq(&x.modulus, &y.modulus) && eq(&x.exponent, &y.exponent)
        }
        (PublicKey::Dsa(x), PublicKey::Dsa(y)) => {
            eq(&x.p, &y.p) && eq(&x.q, &y.q) && eq(&x.g, &y.g) && eq(&x.y, &y.y)
        }
        _ => false,
    }
}
