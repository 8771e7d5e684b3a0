//! The message credential (RFC 3652 §2.2.4, PROTOCOL.md §2.5): who signed, how, and the
//! signature. Verification lives with the typed values (`signature.rs`); this is the layout.

use bytes::{BufMut, Bytes, BytesMut};

use super::error::{DecodeError, EncodeError};
use super::limits::Limits;
use super::reader::Reader;
use super::value::ValueReference;
use super::writer::{put_bytes, wire_len};

/// Credential type of a public-key signature.
pub const HS_SIGNED: &[u8] = b"HS_SIGNED";
/// Credential type of a session MAC.
pub const HS_MAC: &[u8] = b"HS_MAC";

/// A parsed credential (the `CredentialLength` bytes after the body).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Credential {
    /// Credential version (0).
    pub version: u8,
    /// Reserved byte (0).
    pub reserved: u8,
    /// Options / flags (0).
    pub flags: u16,
    /// The signer; the reference library leaves the handle empty and puts its "session
    /// counter" in the index.
    pub signer: ValueReference,
    /// `HS_SIGNED`, `HS_MAC`, legacy `HS_DSAPUBKEY`, ...
    pub credential_type: Bytes,
    /// `SHA-256`, `SHA1`, `MD5`, `HMAC-SHA256`, or a legacy one-byte code.
    pub digest_algorithm: Bytes,
    /// The signature (DER `SEQUENCE {r, s}` for DSA, PKCS#1 v1.5 for RSA) or MAC.
    pub signature: Bytes,
    /// The `CredentialLength` bytes exactly as received (empty for a built credential; the
    /// encoder always writes from the fields, which give back these bytes for every
    /// credential the decoder accepts).
    pub raw: Bytes,
}

impl Credential {
    /// A credential as the reference library builds it: version 0, no flags, empty signer
    /// handle, `signer_index` (the session counter, 0 outside sessions).
    pub fn new(
        credential_type: impl Into<Bytes>,
        digest_algorithm: impl Into<Bytes>,
        signature: impl Into<Bytes>,
        signer_index: u32,
    ) -> Self {
        Self {
            version: 0,
            reserved: 0,
            flags: 0,
            signer: ValueReference {
                handle: Bytes::new(),
                index: signer_index,
            },
            credential_type: credential_type.into(),
            digest_algorithm: digest_algorithm.into(),
            signature: signature.into(),
            raw: Bytes::new(),
        }
    }

    /// Decodes the credential from exactly its `CredentialLength` bytes. `r` must cover only
    /// those bytes: anything left over is an error (the layout has no optional parts).
    pub fn decode(r: &mut Reader, limits: &Limits) -> Result<Self, DecodeError> {
        let raw = r.buffer().slice(r.position()..);
        let version = r.u8("credential.version")?;
        let reserved = r.u8("credential.reserved")?;
        let flags = r.u16("credential.flags")?;
        let signer = ValueReference {
            handle: r.bytes("credential.signer_handle", limits.max_handle_length)?,
            index: r.u32("credential.signer_index")?,
        };
        let credential_type = r.bytes("credential.type", limits.max_array)?;
        let mut signed_info = r.sub("credential.signed_info", limits.max_array)?;
        let digest_algorithm =
            signed_info.bytes("credential.digest_algorithm", limits.max_array)?;
        let signature = signed_info.bytes("credential.signature", limits.max_array)?;
        signed_info.finish("credential.signed_info")?;
        r.finish("credential")?;
        Ok(Self {
            version,
            reserved,
            flags,
            signer,
            credential_type,
            digest_algorithm,
            signature,
            raw,
        })
    }

    /// Appends the credential bytes (without the `CredentialLength` prefix).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), EncodeError> {
        out.put_u8(self.version);
        out.put_u8(self.reserved);
        out.put_u16(self.flags);
        self.signer.encode(out)?;
        put_bytes(out, "credential.type", &self.credential_type)?;
        let signed_info_len = 4 + self.digest_algorithm.len() + 4 + self.signature.len();
        out.put_u32(wire_len("credential.signed_info", signed_info_len)?);
        put_bytes(out, "credential.digest_algorithm", &self.digest_algorithm)?;
        put_bytes(out, "credential.signature", &self.signature)
    }

    /// The encoded credential (without the `CredentialLength` prefix).
    pub fn to_bytes(&self) -> Result<Bytes, EncodeError> {
        let mut out = BytesMut::new();
        self.encode(&mut out)?;
        Ok(out.freeze())
    }

    /// True for a public-key signature (`HS_SIGNED`, or the legacy `HS_DSAPUBKEY`).
    pub fn is_signature(&self) -> bool {
        self.credential_type.as_ref() == HS_SIGNED
            || self.credential_type.as_ref() == b"HS_DSAPUBKEY"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_round_trips_and_keeps_raw() {
        let c = Credential::new("HS_SIGNED", "SHA-256", vec![7u8; 40], 3);
        let b = c.to_bytes().unwrap();
        let back = Credential::decode(&mut Reader::new(b.clone()), &Limits::default()).unwrap();
        assert_eq!(back.raw, b);
        assert_eq!(back.signer.index, 3);
        assert_eq!(back.to_bytes().unwrap(), b);
        assert!(back.is_signature());
    }

    #[test]
    fn signed_info_length_must_match() {
        let c = Credential::new("HS_SIGNED", "SHA1", vec![1u8; 4], 0);
        let mut b = BytesMut::from(&c.to_bytes().unwrap()[..]);
        b.put_u8(0); // one stray byte after the signature
        let e = Credential::decode(&mut Reader::new(b.freeze()), &Limits::default()).unwrap_err();
        assert_eq!(e.field, "credential");
    }
}
