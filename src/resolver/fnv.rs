//! FNV-1a: a small hasher for the resolver's internal tables (work in flight, SRTT), whose
//! keys are few and short, so SipHash's per-lookup cost outweighs its flooding resistance.

use std::hash::{BuildHasherDefault, Hasher};

/// 64-bit FNV-1a.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        // The FNV-1a 64-bit offset basis.
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            // XOR the byte in, multiply by the FNV 64-bit prime.
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Builds [`Fnv`] hashers for `HashMap::with_hasher` / `HashMap::default`.
pub(crate) type FnvBuild = BuildHasherDefault<Fnv>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn matches_the_published_fnv1a_values() {
        // Test vectors of the FNV reference (draft-eastlake-fnv): "" and "a".
        assert_eq!(Fnv::default().finish(), 0xcbf2_9ce4_8422_2325);
        let mut h = Fnv::default();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
        let b = FnvBuild::default();
        assert_eq!(b.hash_one("x/y"), b.hash_one("x/y"));
        assert_ne!(b.hash_one("x/y"), b.hash_one("x/z"));
    }
}
