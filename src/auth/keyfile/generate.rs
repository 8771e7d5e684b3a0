//! New key pairs, as the reference's `hdl-keygen` makes them (`KeyGenerator`: the JDK's
//! `KeyPairGenerator` for `RSA` or `DSA`, default sizes RSA 2048 and DSA 1024).

use rand::rngs::OsRng;

use super::super::error::KeyFileError;
use super::super::keys::PrivateKey;

/// The key to generate.
///
/// RSA keys have the public exponent 65537 (what the JDK uses too). DSA keys get domain
/// parameters of their own (FIPS 186-4 sizes L/N), generated with the key; that takes a
/// few seconds for L = 2048 and longer for 3072.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeySpec {
    /// RSA with a modulus of `bits` bits: 2048, 3072 or 4096.
    Rsa {
        /// The modulus size.
        bits: u32,
    },
    /// DSA with a prime p of `l` bits and a subgroup order q of `n` bits: 1024/160,
    /// 2048/224, 2048/256 or 3072/256.
    Dsa {
        /// Bits of p.
        l: u32,
        /// Bits of q.
        n: u32,
    },
}

impl KeySpec {
    /// RSA-2048, the reference's default (`hdl-keygen` without `-keysize`).
    pub const DEFAULT_RSA: KeySpec = KeySpec::Rsa { bits: 2048 };
    /// DSA 2048/224: what the reference's `hdl-keygen -alg DSA -keysize 2048` makes (the
    /// JDK's q for L = 2048). The reference's own default, 1024/160, is below the 112-bit
    /// strength NIST SP 800-57 asks of signatures today; ask for it with
    /// `KeySpec::dsa(1024, None)`.
    pub const DEFAULT_DSA: KeySpec = KeySpec::Dsa { l: 2048, n: 224 };

    /// RSA of `bits` bits (2048, 3072 or 4096; larger moduli are refused by the signature
    /// checks of this library and of many servers, smaller ones are too weak).
    pub fn rsa(bits: u32) -> Result<KeySpec, KeyFileError> {
        match bits {
            2048 | 3072 | 4096 => Ok(KeySpec::Rsa { bits }),
            _ => Err(KeyFileError::KeySize {
                alg: "RSA",
                bits,
                allowed: "2048, 3072 or 4096",
            }),
        }
    }

    /// DSA with p of `l` bits and q of `n` bits; `n` defaults to the JDK's choice for `l`
    /// (1024: 160, 2048: 224, 3072: 256).
    pub fn dsa(l: u32, n: Option<u32>) -> Result<KeySpec, KeyFileError> {
        let n = n.unwrap_or(match l {
            1024 => 160,
            2048 => 224,
            _ => 256,
        });
        match (l, n) {
            (1024, 160) | (2048, 224) | (2048, 256) | (3072, 256) => Ok(KeySpec::Dsa { l, n }),
            _ => Err(KeyFileError::KeySize {
                alg: "DSA",
                bits: l,
                allowed: "L/N 1024/160, 2048/224, 2048/256 or 3072/256",
            }),
        }
    }
}

impl PrivateKey {
    /// Generates a new key pair from the operating system's random numbers.
    ///
    /// ```no_run
    /// use handle_resolver::auth::{KeyFormat, KeyMaterial, KeySpec, PrivateKey};
    ///
    /// let key = PrivateKey::generate(KeySpec::DEFAULT_RSA)?;
    /// let private_file = key.to_reference_file(Some(b"passphrase"))?;
    /// // The HS_PUBKEY value's data.
    /// let public_file = KeyMaterial::Private(key).to_public().write(KeyFormat::Reference, None)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn generate(spec: KeySpec) -> Result<PrivateKey, KeyFileError> {
        // Checked again: the variants' fields are public.
        match spec {
            KeySpec::Rsa { bits } => {
                KeySpec::rsa(bits)?;
                let key = rsa::RsaPrivateKey::new(&mut OsRng, bits as usize)
                    .map_err(|_| KeyFileError::InvalidKey("RSA"))?;
                Ok(PrivateKey::Rsa(key))
            }
            KeySpec::Dsa { l, n } => {
                KeySpec::dsa(l, Some(n))?;
                #[allow(deprecated)] // 1024/160: the reference's default, asked for explicitly.
                let size = match (l, n) {
                    (1024, _) => dsa::KeySize::DSA_1024_160,
                    (2048, 224) => dsa::KeySize::DSA_2048_224,
                    (2048, _) => dsa::KeySize::DSA_2048_256,
                    _ => dsa::KeySize::DSA_3072_256,
                };
                let components = dsa::Components::generate(&mut OsRng, size);
                Ok(PrivateKey::Dsa(dsa::SigningKey::generate(
                    &mut OsRng, components,
                )))
            }
        }
    }
}
