//! Session-encrypted messages (envelope flag EC), as the reference library 9.2 sends a
//! request or response that carries a non-public value inside a session (captures-auth
//! `session_*`, `decoded.json` `encryption`):
//!
//! `envelope (EC set; MessageLength counts IV + ciphertext) ‖ IV (16 bytes) ‖
//! AES-128-CBC/PKCS#5(key = first 16 bytes of the session key, header ‖ body ‖ credential)`.
//!
//! The decrypted message keeps the envelope as received (EC set, the wire's MessageLength);
//! [`Message::encode_encrypted`] writes it back with a given IV.

use aes::Aes128;
use bytes::{BufMut, Bytes, BytesMut};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use thiserror::Error;

use super::envelope::{Envelope, ENVELOPE_LEN};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::limits::Limits;
use super::message::Message;
use super::reader::Reader;
use super::writer::wire_len;

/// Length of the IV in front of the ciphertext.
pub const SESSION_IV_LEN: usize = 16;
/// Length of the AES key taken from the front of the session key.
pub const SESSION_AES_KEY_LEN: usize = 16;

/// Why an encrypted message could not be read or written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CryptError {
    /// The session key is shorter than the 16 bytes of an AES-128 key.
    #[error("session key of {0} bytes is shorter than 16")]
    KeyLength(usize),
    /// The envelope does not have EC set.
    #[error("the message is not encrypted")]
    NotEncrypted,
    /// Fewer than 16 bytes of IV, or a ciphertext that is not whole blocks.
    #[error("encrypted payload of {0} bytes is not IV + whole AES blocks")]
    Length(usize),
    /// The ciphertext does not decrypt to validly padded plaintext (wrong key, or damaged).
    #[error("ciphertext does not decrypt under the session key")]
    Decrypt,
    /// The message is encrypted and no session key is at hand to decrypt it.
    #[error("the message is encrypted and no session is open")]
    NoSession,
    /// The envelope, or the decrypted message, does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The message could not be encoded.
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

fn aes_key(session_key: &[u8]) -> Result<&[u8], CryptError> {
    session_key
        .get(..SESSION_AES_KEY_LEN)
        .ok_or(CryptError::KeyLength(session_key.len()))
}

/// Decrypts `IV ‖ ciphertext` with the first 16 bytes of `session_key`.
pub fn decrypt_payload(session_key: &[u8], payload: &[u8]) -> Result<Vec<u8>, CryptError> {
    let key = aes_key(session_key)?;
    let (iv, ct) = payload
        .split_at_checked(SESSION_IV_LEN)
        .ok_or(CryptError::Length(payload.len()))?;
    if ct.is_empty() || ct.len() % 16 != 0 {
        return Err(CryptError::Length(payload.len()));
    }
    cbc::Decryptor::<Aes128>::new_from_slices(key, iv)
        .map_err(|_| CryptError::KeyLength(session_key.len()))?
        .decrypt_padded_vec_mut::<Pkcs7>(ct)
        .map_err(|_| CryptError::Decrypt)
}

/// Encrypts `plaintext` into `IV ‖ ciphertext` with the first 16 bytes of `session_key`.
pub fn encrypt_payload(
    session_key: &[u8],
    iv: &[u8; SESSION_IV_LEN],
    plaintext: &[u8],
) -> Result<Vec<u8>, CryptError> {
    let key = aes_key(session_key)?;
    let ct = cbc::Encryptor::<Aes128>::new_from_slices(key, iv)
        .map_err(|_| CryptError::KeyLength(session_key.len()))?
        .encrypt_padded_vec_mut::<Pkcs7>(plaintext);
    let mut out = Vec::with_capacity(SESSION_IV_LEN + ct.len());
    out.extend_from_slice(iv);
    out.extend_from_slice(&ct);
    Ok(out)
}

impl Message {
    /// Decodes an encrypted message (envelope + IV + ciphertext, a TCP frame or a
    /// reassembled UDP message) with the session key. The envelope's `MessageLength` is
    /// checked against [`Limits`] before anything is decrypted; the result keeps the envelope
    /// as received.
    ///
    /// ```
    /// use handle_resolver::wire::{Body, Limits, Message};
    ///
    /// let key = [7u8; 32];
    /// let mut m = Message::resolution_request("20.500.12345/PROTECTED", vec![], vec![], 1, 0);
    /// m.envelope.encrypted = true;
    /// let wire = m.encode_encrypted(&key, &[1; 16])?;
    /// let back = Message::decode_encrypted(wire.clone(), &key, &Limits::default())?;
    /// assert_eq!(back.body, m.body);
    /// assert_eq!(back.encode_encrypted(&key, &[1; 16])?, wire);
    /// assert!(Message::decode_encrypted(wire, &[8u8; 32], &Limits::default()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decode_encrypted(
        buf: Bytes,
        session_key: &[u8],
        limits: &Limits,
    ) -> Result<Message, CryptError> {
        let mut r = Reader::new(buf);
        let envelope = Envelope::decode(&mut r)?;
        Self::decode_encrypted_parts(envelope, r.rest(), session_key, limits)
    }

    /// [`decode_encrypted`](Self::decode_encrypted) given an already-read envelope and the
    /// bytes after it (IV and ciphertext), as a transport that read the envelope first has them.
    pub fn decode_encrypted_parts(
        envelope: Envelope,
        payload: Bytes,
        session_key: &[u8],
        limits: &Limits,
    ) -> Result<Message, CryptError> {
        if !envelope.encrypted {
            return Err(CryptError::NotEncrypted);
        }
        let declared = limits.check_message_length(envelope.message_length)?;
        if payload.len() != declared {
            return Err(DecodeError::new(
                "message",
                ENVELOPE_LEN,
                DecodeErrorKind::Truncated {
                    needed: declared,
                    available: payload.len(),
                },
            )
            .into());
        }
        let plain = Bytes::from(decrypt_payload(session_key, &payload)?);
        let plain_envelope = Envelope {
            encrypted: false,
            message_length: wire_len("message", plain.len())?,
            ..envelope
        };
        let mut m = Message::decode_parts(plain_envelope, plain, limits)?;
        m.envelope = envelope;
        Ok(m)
    }

    /// Encodes the message, then encrypts everything after the envelope under the session
    /// key with `iv`; the envelope gets EC and the encrypted length.
    pub fn encode_encrypted(
        &self,
        session_key: &[u8],
        iv: &[u8; SESSION_IV_LEN],
    ) -> Result<Bytes, CryptError> {
        let mut plain = self.clone();
        plain.envelope.encrypted = false;
        let bytes = plain.encode()?;
        let payload = encrypt_payload(
            session_key,
            iv,
            bytes.get(ENVELOPE_LEN..).unwrap_or_default(),
        )?;
        let mut envelope = self.envelope;
        envelope.encrypted = true;
        envelope.message_length = wire_len("message", payload.len())?;
        let mut out = BytesMut::with_capacity(ENVELOPE_LEN + payload.len());
        envelope.encode(&mut out);
        out.put_slice(&payload);
        Ok(out.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keys_and_ragged_payloads_are_refused() {
        assert_eq!(
            decrypt_payload(&[0; 15], &[0; 32]),
            Err(CryptError::KeyLength(15))
        );
        assert_eq!(
            decrypt_payload(&[0; 16], &[0; 16]),
            Err(CryptError::Length(16))
        );
        assert_eq!(
            decrypt_payload(&[0; 16], &[0; 33]),
            Err(CryptError::Length(33))
        );
        let ct = encrypt_payload(&[3; 32], &[9; 16], b"hello").unwrap();
        assert_eq!(ct.len(), 32);
        assert_eq!(decrypt_payload(&[3; 32], &ct).unwrap(), b"hello");
    }

    #[test]
    fn a_plain_message_is_not_decrypted() {
        let m = Message::resolution_request("0.NA/1", vec![], vec![], 1, 0);
        let e = Message::decode_encrypted(m.encode().unwrap(), &[0; 16], &Limits::default());
        assert_eq!(e.unwrap_err(), CryptError::NotEncrypted);
    }
}
