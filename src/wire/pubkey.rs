//! HS_PUBKEY public keys (RFC 3651 §3.2.2, PROTOCOL.md §7.5), also the key blob inside an
//! HS_SITE server record, and their conversion to RustCrypto DSA and RSA keys.
//!
//! Layout: `UTF8 key type ‖ int2 options ‖ key fields`, each key field an `int4 len ‖
//! big-endian magnitude` (the reference library's `BigInteger.toByteArray()`, so possibly
//! with a leading zero byte). The magnitudes are kept exactly as received so a key encodes
//! back to the same bytes.

use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

use super::error::{DecodeError, EncodeError};
use super::limits::MAX_ARRAY;
use super::reader::Reader;
use super::writer::put_bytes;

/// Key type string of a DSA key.
pub(crate) const DSA_PUB_KEY: &[u8] = b"DSA_PUB_KEY";
/// Key type string of an RSA key.
pub(crate) const RSA_PUB_KEY: &[u8] = b"RSA_PUB_KEY";
/// Key type string of a Diffie-Hellman key.
pub(crate) const DH_PUB_KEY: &[u8] = b"DH_PUB_KEY";
/// Longest key component accepted for conversion to a usable key: 8192 bits. Larger numbers
/// would only cost time in modular arithmetic.
pub(crate) const MAX_KEY_COMPONENT_LEN: usize = 1024 + 1;

/// A DSA public key: `q ‖ p ‖ g ‖ y` on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DsaKey {
    /// The reserved options field (0).
    pub options: u16,
    /// Sub-group order q.
    pub q: Bytes,
    /// Prime modulus p.
    pub p: Bytes,
    /// Generator g.
    pub g: Bytes,
    /// Public value y.
    pub y: Bytes,
}

/// An RSA public key: `e ‖ n ‖ trailer` on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RsaKey {
    /// The reserved options field (0).
    pub options: u16,
    /// Public exponent e.
    pub exponent: Bytes,
    /// Modulus n.
    pub modulus: Bytes,
    /// Whatever follows the modulus, kept as is. The reference library writes an empty byte
    /// array there (four zero bytes, its length); the field is not in PROTOCOL.md §7.5.
    pub trailer: Bytes,
}

/// What the reference library writes after an RSA modulus: an empty byte array.
pub(crate) const RSA_TRAILER: &[u8] = &[0, 0, 0, 0];

/// A public key from an HS_PUBKEY value or a server record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    /// `DSA_PUB_KEY`.
    Dsa(DsaKey),
    /// `RSA_PUB_KEY`.
    Rsa(RsaKey),
    /// `DH_PUB_KEY`: `y ‖ p ‖ g`.
    Dh {
        /// The reserved options field.
        options: u16,
        /// Public value y.
        y: Bytes,
        /// Prime p.
        p: Bytes,
        /// Generator g.
        g: Bytes,
    },
    /// Any other key type, its fields kept as bytes.
    Other {
        /// The key type string.
        key_type: Bytes,
        /// The options field.
        options: u16,
        /// Everything after the options.
        data: Bytes,
    },
}

/// Why a key could not be turned into a usable RustCrypto key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key is not of the type the conversion needs.
    #[error("not a {0} key")]
    WrongType(&'static str),
    /// A component is longer than 1 025 bytes (an 8 192-bit number and a sign byte).
    #[error("key component too large: {0} bytes")]
    TooLarge(usize),
    /// The crypto library refused the components.
    #[error("invalid {0} key components")]
    Invalid(&'static str),
}

fn magnitude(b: &[u8]) -> Result<&[u8], KeyError> {
    let m = strip_zeros(b);
    if m.len() > MAX_KEY_COMPONENT_LEN {
        Err(KeyError::TooLarge(m.len()))
    } else {
        Ok(m)
    }
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    b.get(start..).unwrap_or_default()
}

impl PublicKey {
    /// Decodes an HS_PUBKEY blob (copies it; see [`PublicKey::decode_bytes`] for zero-copy).
    /// Strict: bytes left after a known key's fields are an error.
    pub fn decode(blob: &[u8]) -> Result<PublicKey, DecodeError> {
        Self::decode_bytes(&Bytes::copy_from_slice(blob))
    }

    /// Decodes an HS_PUBKEY blob without copying its fields.
    pub fn decode_bytes(blob: &Bytes) -> Result<PublicKey, DecodeError> {
        let mut r = Reader::new(blob.clone());
        let key_type = r.bytes("pubkey.type", MAX_ARRAY)?;
        let options = r.u16("pubkey.options")?;
        let mut field = |name| r.bytes(name, MAX_ARRAY);
        let key = if key_type.as_ref() == DSA_PUB_KEY {
            PublicKey::Dsa(DsaKey {
                options,
                q: field("pubkey.dsa.q")?,
                p: field("pubkey.dsa.p")?,
                g: field("pubkey.dsa.g")?,
                y: field("pubkey.dsa.y")?,
            })
        } else if key_type.as_ref() == RSA_PUB_KEY {
            PublicKey::Rsa(RsaKey {
                options,
                exponent: field("pubkey.rsa.e")?,
                modulus: field("pubkey.rsa.n")?,
                trailer: r.rest(),
            })
        } else if key_type.as_ref() == DH_PUB_KEY {
            PublicKey::Dh {
                options,
                y: field("pubkey.dh.y")?,
                p: field("pubkey.dh.p")?,
                g: field("pubkey.dh.g")?,
            }
        } else {
            PublicKey::Other {
                key_type,
                options,
                data: r.rest(),
            }
        };
        r.finish("pubkey")?;
        Ok(key)
    }

    /// Encodes the blob; a decoded key comes back byte for byte.
    pub fn encode(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        put_bytes(&mut out, "pubkey.type", self.key_type())?;
        match self {
            PublicKey::Dsa(k) => {
                out.put_u16(k.options);
                put_bytes(&mut out, "pubkey.dsa.q", &k.q)?;
                put_bytes(&mut out, "pubkey.dsa.p", &k.p)?;
                put_bytes(&mut out, "pubkey.dsa.g", &k.g)?;
                put_bytes(&mut out, "pubkey.dsa.y", &k.y)?;
            }
            PublicKey::Rsa(k) => {
                out.put_u16(k.options);
                put_bytes(&mut out, "pubkey.rsa.e", &k.exponent)?;
                put_bytes(&mut out, "pubkey.rsa.n", &k.modulus)?;
                out.put_slice(&k.trailer);
            }
            PublicKey::Dh { options, y, p, g } => {
                out.put_u16(*options);
                put_bytes(&mut out, "pubkey.dh.y", y)?;
                put_bytes(&mut out, "pubkey.dh.p", p)?;
                put_bytes(&mut out, "pubkey.dh.g", g)?;
            }
            PublicKey::Other { options, data, .. } => {
                out.put_u16(*options);
                out.put_slice(data);
            }
        }
        Ok(out.freeze())
    }

    /// The key type string (`DSA_PUB_KEY`, ...).
    pub fn key_type(&self) -> &[u8] {
        match self {
            PublicKey::Dsa(_) => DSA_PUB_KEY,
            PublicKey::Rsa(_) => RSA_PUB_KEY,
            PublicKey::Dh { .. } => DH_PUB_KEY,
            PublicKey::Other { key_type, .. } => key_type,
        }
    }

    /// A RustCrypto DSA verifying key (checks the components as the `dsa` crate does).
    pub fn to_dsa(&self) -> Result<dsa::VerifyingKey, KeyError> {
        let PublicKey::Dsa(k) = self else {
            return Err(KeyError::WrongType("DSA"));
        };
        let n = |b: &Bytes| magnitude(b).map(dsa::BigUint::from_bytes_be);
        let components = dsa::Components::from_components(n(&k.p)?, n(&k.q)?, n(&k.g)?)
            .map_err(|_| KeyError::Invalid("DSA"))?;
        dsa::VerifyingKey::from_components(components, n(&k.y)?)
            .map_err(|_| KeyError::Invalid("DSA"))
    }

    /// A RustCrypto RSA public key (the `rsa` crate's size and exponent checks apply).
    pub fn to_rsa(&self) -> Result<rsa::RsaPublicKey, KeyError> {
        let PublicKey::Rsa(k) = self else {
            return Err(KeyError::WrongType("RSA"));
        };
        let n = |b: &Bytes| magnitude(b).map(rsa::BigUint::from_bytes_be);
        rsa::RsaPublicKey::new(n(&k.modulus)?, n(&k.exponent)?)
            .map_err(|_| KeyError::Invalid("RSA"))
    }

    /// Builds an RSA key from a RustCrypto key, written as the reference library writes it
    /// (a leading zero byte when a magnitude's top bit is set, the empty trailer).
    pub fn from_rsa(key: &rsa::RsaPublicKey) -> PublicKey {
        use rsa::traits::PublicKeyParts;
        let java = |b: Vec<u8>| {
            let mut v = Vec::with_capacity(b.len() + 1);
            if b.first().is_some_and(|&x| x & 0x80 != 0) {
                v.push(0);
            }
            v.extend_from_slice(&b);
            Bytes::from(v)
        };
        PublicKey::Rsa(RsaKey {
            options: 0,
            exponent: java(key.e().to_bytes_be()),
            modulus: java(key.n().to_bytes_be()),
            trailer: Bytes::from_static(RSA_TRAILER),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny RSA blob: type "RSA_PUB_KEY" (int4 11 + 11 bytes), options 0 (2 bytes),
    /// e = 0x010001 (int4 3 + 3 bytes), n = 0x00C5 (int4 2 + 2 bytes, Java's leading zero),
    /// then the reference library's empty trailing byte array (int4 0).
    const TINY_RSA: &[u8] = &[
        0, 0, 0, 11, b'R', b'S', b'A', b'_', b'P', b'U', b'B', b'_', b'K', b'E', b'Y', // type
        0, 0, // options
        0, 0, 0, 3, 1, 0, 1, // e
        0, 0, 0, 2, 0x00, 0xC5, // n
        0, 0, 0, 0, // trailer
    ];

    /// A tiny DSA blob: type "DSA_PUB_KEY" (int4 11 + 11 bytes), options 0, then q, p, g, y
    /// as one-byte arrays 5, 11, 3, 4.
    const TINY_DSA: &[u8] = &[
        0, 0, 0, 11, b'D', b'S', b'A', b'_', b'P', b'U', b'B', b'_', b'K', b'E', b'Y', // type
        0, 0, // options
        0, 0, 0, 1, 5, // q
        0, 0, 0, 1, 11, // p
        0, 0, 0, 1, 3, // g
        0, 0, 0, 1, 4, // y
    ];

    #[test]
    fn round_trips_a_hand_built_rsa_blob() {
        let k = PublicKey::decode(TINY_RSA).unwrap();
        let PublicKey::Rsa(r) = &k else {
            panic!("{k:?}")
        };
        assert_eq!(r.exponent.as_ref(), &[1, 0, 1]);
        assert_eq!(r.modulus.as_ref(), &[0, 0xC5]);
        assert_eq!(r.trailer.as_ref(), RSA_TRAILER);
        assert_eq!(k.encode().unwrap().as_ref(), TINY_RSA);
        // A 8-bit modulus is not a usable RSA key.
        assert!(k.to_rsa().is_err());
        assert_eq!(k.to_dsa().unwrap_err(), KeyError::WrongType("DSA"));
    }

    #[test]
    fn rejects_trailing_bytes_and_truncation() {
        let k = PublicKey::decode(TINY_DSA).unwrap();
        assert!(matches!(&k, PublicKey::Dsa(d) if d.p.as_ref() == [11] && d.y.as_ref() == [4]));
        assert_eq!(k.encode().unwrap().as_ref(), TINY_DSA);
        let mut long = TINY_DSA.to_vec();
        long.push(0);
        assert_eq!(PublicKey::decode(&long).unwrap_err().field, "pubkey");
        for cut in 0..TINY_DSA.len() {
            assert!(PublicKey::decode(&TINY_DSA[..cut]).is_err(), "cut at {cut}");
        }
        // RSA stops being decodable only before the end of the modulus.
        for cut in 0..TINY_RSA.len() - 4 {
            assert!(PublicKey::decode(&TINY_RSA[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn keeps_unknown_key_types() {
        // type "X" (int4 1 + 1 byte), options 7, then three opaque bytes.
        let blob = [0, 0, 0, 1, b'X', 0, 7, 9, 8, 7];
        let k = PublicKey::decode(&blob).unwrap();
        assert!(
            matches!(&k, PublicKey::Other { options: 7, data, .. } if data.as_ref() == [9, 8, 7])
        );
        assert_eq!(k.encode().unwrap().as_ref(), &blob);
        assert_eq!(k.key_type(), b"X");
    }
}
