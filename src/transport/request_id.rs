//! Request ids: the one place they are minted ([`random_request_id`]) and put into an encoded
//! request ([`encode_with_request_id`]). Both transports call these for every request, so
//! whatever id the caller's request carries is replaced.

use bytes::Bytes;
use rand::Rng;

use super::error::TransportError;
use crate::wire::{Message, SessionKey};

/// A fresh random request id: never 0 (RFC: "non-zero") and never 0xFFFFFFFF (what the
/// reference server puts in its answer to an undecodable request, PROTOCOL.md §14.10).
pub(crate) fn random_request_id() -> u32 {
    let mut rng = rand::thread_rng();
    loop {
        let id: u32 = rng.gen();
        if id != 0 && id != u32::MAX {
            return id;
        }
    }
}

/// Encodes `request` with `request_id` in its envelope (bytes 8..12), without cloning the
/// message. The request is not re-signed: a credential that covers the request id (versions
/// ≥ 2.7) would no longer verify, which is fine for the unsigned requests of a resolver.
/// In a session, the session seals it instead: its MAC covers the id.
pub(crate) fn encode_with_request_id(
    request: &Message,
    request_id: u32,
    session: Option<&SessionKey>,
) -> Result<Bytes, TransportError> {
    match session {
        Some(s) => s.seal(request, request_id).map_err(TransportError::Session),
        None => Ok(request.encode_with_request_id(request_id)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_avoid_the_reserved_values() {
        for _ in 0..10_000 {
            let id = random_request_id();
            assert_ne!(id, 0);
            assert_ne!(id, u32::MAX);
        }
    }

    #[test]
    fn encode_with_request_id_patches_only_the_id() {
        let m = Message::resolution_request("0.NA/10.1045", vec![], vec![], 0x1234_5678, 0);
        let plain = m.encode().unwrap();
        let patched = encode_with_request_id(&m, 0xA1B2_C3D4, None).unwrap();
        assert_eq!(plain.len(), patched.len());
        // Envelope bytes 8..12 are the request id (PROTOCOL.md §2.1).
        assert_eq!(&patched[8..12], &[0xA1, 0xB2, 0xC3, 0xD4]);
        assert_eq!(&plain[..8], &patched[..8]);
        assert_eq!(&plain[12..], &patched[12..]);
    }
}
