//! [`JwsAlgorithm`]: the JWS signature algorithms of the reference library (its own
//! module, as both the JWS reader and the errors name it).

/// A JWS signature algorithm of the reference library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JwsAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RSA keys).
    Rs256,
    /// DSA with SHA-256, DER-encoded (DSA keys; the reference library's own name).
    Ds256,
}

impl JwsAlgorithm {
    /// The `alg` header value.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Ds256 => "DS256",
        }
    }

    /// The algorithm named `name` (exactly, as RFC 7515 compares it).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "RS256" => Some(Self::Rs256),
            "DS256" => Some(Self::Ds256),
            _ => None,
        }
    }
}
