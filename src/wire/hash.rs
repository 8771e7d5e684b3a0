//! The server-choice hash of a multi-server site (RFC 3652 §3.1.3, PROTOCOL.md §11.2, the
//! reference library's `SiteInfo.getHandleHash`).
//!
//! 1. Pick the part of the handle the site hashes on ([`HashOption`]).
//! 2. Upper-case ASCII `a`–`z` in it (other bytes unchanged).
//! 3. MD5 it; read the last 4 digest bytes as a big-endian signed `i32`.
//! 4. Its absolute value modulo the server count is the index into the site's server
//!    records, in record order.

use md5::{Digest, Md5};

/// Which part of a handle a multi-server site hashes to pick a server (PROTOCOL.md §11.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashOption {
    /// 0: the prefix (the part before the first `/`).
    ByPrefix,
    /// 1: the suffix (the part after the first `/`).
    BySuffix,
    /// 2: the whole handle.
    ByHandle,
    /// Any other byte, kept for re-encoding; no server can be chosen with it.
    Other(u8),
}

impl HashOption {
    /// The wire byte.
    pub const fn code(self) -> u8 {
        match self {
            HashOption::ByPrefix => 0,
            HashOption::BySuffix => 1,
            HashOption::ByHandle => 2,
            HashOption::Other(v) => v,
        }
    }

    /// The option for a wire byte.
    pub const fn from_code(v: u8) -> Self {
        match v {
            0 => HashOption::ByPrefix,
            1 => HashOption::BySuffix,
            2 => HashOption::ByHandle,
            v => HashOption::Other(v),
        }
    }
}

/// What the reference library hashes for a handle without `/` under [`HashOption::ByPrefix`].
const NO_SLASH_PREFIX: &[u8] = b"0.NA";

/// The bytes a site with hash option `option` hashes for `handle`, upper-cased (ASCII only).
///
/// `None` for a hash option this library does not know (the reference library refuses those).
///
/// ```
/// use handle_resolver::wire::{hash_part, HashOption};
/// assert_eq!(hash_part(b"20.500.12345/abc", HashOption::ByPrefix).unwrap(), b"20.500.12345");
/// assert_eq!(hash_part(b"20.500.12345/abc", HashOption::BySuffix).unwrap(), b"ABC");
/// assert_eq!(hash_part(b"10.1045", HashOption::ByPrefix).unwrap(), b"0.NA");
/// ```
pub fn hash_part(handle: &[u8], option: HashOption) -> Option<Vec<u8>> {
    hashed_slice(handle, option).map(<[u8]>::to_ascii_uppercase)
}

/// The part of `handle` that [`hash_part`] upper-cases, borrowed.
fn hashed_slice(handle: &[u8], option: HashOption) -> Option<&[u8]> {
    let slash = handle.iter().position(|&b| b == b'/');
    Some(match option {
        HashOption::ByPrefix => match slash {
            Some(i) => handle.get(..i).unwrap_or_default(),
            None => NO_SLASH_PREFIX,
        },
        HashOption::BySuffix => match slash {
            Some(i) => handle.get(i + 1..).unwrap_or_default(),
            None => handle,
        },
        HashOption::ByHandle => handle,
        HashOption::Other(_) => return None,
    })
}

/// The hash value of `handle` under `option`: the absolute value of the big-endian signed
/// `i32` formed by the last 4 bytes of the MD5 digest of [`hash_part`].
///
/// The reference library's `abs(i32::MIN)` stays negative; here it is 2³¹, which picks the
/// same server for every server count it can handle.
pub fn handle_hash(handle: &[u8], option: HashOption) -> Option<u32> {
    // Upper-cased a block at a time on the stack and fed to MD5: no allocation.
    let mut md5 = Md5::new();
    let mut block = [0u8; 64];
    for chunk in hashed_slice(handle, option)?.chunks(block.len()) {
        let upper = block.get_mut(..chunk.len()).unwrap_or_default();
        upper.copy_from_slice(chunk);
        upper.make_ascii_uppercase();
        md5.update(&*upper);
    }
    let digest = md5.finalize();
    let mut last = [0u8; 4];
    last.copy_from_slice(&digest[12..16]);
    Some(i32::from_be_bytes(last).unsigned_abs())
}

/// The 0-based index, in record order, of the server that serves `handle` in a site of
/// `server_count` servers hashing with `option`. `None` when there are no servers or the
/// option is unknown.
///
/// ```
/// use handle_resolver::wire::{server_index, HashOption};
/// // PROTOCOL.md §11.2: `0.NA/10.1045` hashed whole goes to server 0, 2, 2 of 2, 3, 4.
/// let idx: Vec<_> = (2..=4)
///     .map(|n| server_index(b"0.NA/10.1045", HashOption::ByHandle, n).unwrap())
///     .collect();
/// assert_eq!(idx, [0, 2, 2]);
/// ```
pub fn server_index(handle: &[u8], option: HashOption, server_count: usize) -> Option<usize> {
    match (server_count, option) {
        (0, _) | (_, HashOption::Other(_)) => return None,
        // Any hash modulo 1 is 0: a single-server site needs no MD5.
        (1, _) => return Some(0),
        _ => {}
    }
    let h = handle_hash(handle, option)?;
    usize::try_from(h).ok().map(|h| h % server_count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_hash_equals_md5_of_the_upper_cased_part() {
        // Lengths around the 64-byte block the hash upper-cases at a time.
        for len in [0usize, 1, 63, 64, 65, 130] {
            let suffix: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let handle = format!("20.500.x/{suffix}");
            for option in [
                HashOption::ByPrefix,
                HashOption::BySuffix,
                HashOption::ByHandle,
            ] {
                let part = hash_part(handle.as_bytes(), option).unwrap();
                let digest = Md5::digest(&part);
                let expected = i32::from_be_bytes([digest[12], digest[13], digest[14], digest[15]])
                    .unsigned_abs();
                assert_eq!(handle_hash(handle.as_bytes(), option), Some(expected));
            }
        }
    }

    #[test]
    fn single_server_and_unknown_option() {
        assert_eq!(server_index(b"a/b", HashOption::ByHandle, 1), Some(0));
        assert_eq!(server_index(b"a/b", HashOption::Other(9), 1), None);
        assert_eq!(server_index(b"a/b", HashOption::Other(9), 3), None);
        assert_eq!(server_index(b"a/b", HashOption::ByHandle, 0), None);
    }

    #[test]
    fn protocol_md_examples() {
        // PROTOCOL.md §11.2: `0.NA/10.1045` → x = -1743065258.
        assert_eq!(
            handle_hash(b"0.NA/10.1045", HashOption::ByHandle),
            Some(1_743_065_258)
        );
        // `20.500.12345/ABC` → 0x70ec4241 = 1894531649 → 1/2/1 for 2/3/4 servers.
        assert_eq!(
            handle_hash(b"20.500.12345/ABC", HashOption::ByHandle),
            Some(1_894_531_649)
        );
        let idx: Vec<_> = (2..=4)
            .map(|n| server_index(b"20.500.12345/ABC", HashOption::ByHandle, n).unwrap())
            .collect();
        assert_eq!(idx, [1, 2, 1]);
    }

    #[test]
    fn upper_cases_ascii_only() {
        assert_eq!(
            hash_part("a/ümlaut".as_bytes(), HashOption::BySuffix).unwrap(),
            "üMLAUT".as_bytes()
        );
    }

    #[test]
    fn no_slash_rules() {
        assert_eq!(hash_part(b"abc", HashOption::BySuffix).unwrap(), b"ABC");
        assert_eq!(hash_part(b"abc", HashOption::ByHandle).unwrap(), b"ABC");
        assert_eq!(hash_part(b"abc", HashOption::ByPrefix).unwrap(), b"0.NA");
        assert_eq!(hash_part(b"a/", HashOption::BySuffix).unwrap(), b"");
    }

    #[test]
    fn rejects_unknown_option_and_empty_site() {
        assert_eq!(handle_hash(b"a/b", HashOption::Other(7)), None);
        assert_eq!(server_index(b"a/b", HashOption::ByHandle, 0), None);
    }
}
