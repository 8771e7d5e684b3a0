//! UDP fragmentation and reassembly (RFC 3652 §2.3, PROTOCOL.md §8.1, §14.3), sans-IO.
//!
//! A message longer than 492 bytes travels as datagrams of at most 512 bytes, each with the
//! envelope of the message (same request id, **total** `MessageLength`) and `SequenceNumber`
//! = chunk index; chunk *i* starts at message offset `i * 492`. The receiver does not rely on
//! the TC flag (reference servers never set it): the number of fragments comes from
//! `MessageLength` alone. Datagrams may come in any order and more than once.
//!
//! Memory: a partial message allocates `MessageLength` bytes once, after checking it against
//! the limit; a [`Reassembler`] holds at most `max_in_progress` partial messages, so it never
//! holds more than `max_in_progress × max_message_length` bytes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};

use super::envelope::{Envelope, ENVELOPE_LEN};
use super::error::{DecodeError, DecodeErrorKind};
use super::limits::Limits;
use super::message::Message;
use super::reader::Reader;

/// Error field of a datagram whose total length differs from its pending message's.
const CONFLICT_LENGTH: &str = "envelope.message_length";
/// Error field of a duplicate fragment whose bytes differ from the first copy.
const CONFLICT_DUPLICATE: &str = "fragment.duplicate";

/// Largest datagram: envelope + payload.
pub const MAX_DATAGRAM: usize = 512;
/// Largest message chunk in one datagram.
pub const MAX_FRAGMENT_PAYLOAD: usize = 492;

/// Split an encoded message (envelope + message) into ≤ 512-byte datagrams (PROTOCOL.md §8.1).
/// A single-datagram message comes back unchanged as one element.
///
/// Every fragment carries the original envelope with its sequence number replaced; the
/// flags are kept as they are (set `envelope.truncated` before encoding to mark a request's
/// fragments with TC as the reference client does; reference servers leave it clear).
///
/// ```
/// use std::time::Instant;
/// use bytes::Bytes;
/// use handle_resolver::wire::{fragment, Message, Reassembler, ReassemblerConfig, MAX_DATAGRAM};
///
/// let types = (0..60).map(|i| Bytes::from(format!("TYPE.{i:04}"))).collect();
/// let big = Message::resolution_request("0.NA/10.1045", vec![], types, 7, 0).encode()?;
/// let datagrams = fragment(&big);
/// assert_eq!(datagrams.len(), 2);
/// assert!(datagrams.iter().all(|d| d.len() <= MAX_DATAGRAM));
///
/// let mut r = Reassembler::new(ReassemblerConfig::default());
/// let now = Instant::now();
/// assert!(r.push(datagrams[1].clone(), now)?.is_none()); // any order
/// let whole = r.push(datagrams[0].clone(), now)?.expect("complete");
/// assert_eq!(whole.encode()?, big);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fragment(encoded: &Bytes) -> Vec<Bytes> {
    if encoded.len() <= MAX_DATAGRAM || encoded.len() < ENVELOPE_LEN {
        return vec![encoded.clone()];
    }
    let (envelope, message) = encoded.split_at(ENVELOPE_LEN);
    let (ids, length) = envelope.split_at(12);
    let length = length.get(4..).unwrap_or_default();
    message
        .chunks(MAX_FRAGMENT_PAYLOAD)
        .enumerate()
        .map(|(i, chunk)| {
            let mut d = BytesMut::with_capacity(ENVELOPE_LEN + chunk.len());
            d.put_slice(ids);
            d.put_u32(u32::try_from(i).unwrap_or(u32::MAX));
            d.put_slice(length);
            d.put_slice(chunk);
            d.freeze()
        })
        .collect()
}

fn decode_envelope(datagram: &Bytes) -> Result<(Envelope, Bytes), DecodeError> {
    let mut r = Reader::new(datagram.clone());
    let envelope = Envelope::decode(&mut r)?;
    Ok((envelope, r.rest()))
}

fn invalid(field: &'static str, offset: usize, value: u64) -> DecodeError {
    DecodeError::new(
        field,
        offset,
        DecodeErrorKind::Invalid {
            value: i64::try_from(value).unwrap_or(i64::MAX),
        },
    )
}

/// Collects the datagrams of ONE message (any order, duplicates ignored, bitmap, memory bound).
#[derive(Debug, Clone)]
pub struct PartialMessage {
    envelope: Envelope,
    have_first: bool,
    total: usize,
    fragments: usize,
    buf: Vec<u8>,
    received: Vec<bool>,
    received_count: usize,
    done: bool,
}

impl PartialMessage {
    /// Starts a message from the envelope of any of its datagrams. Fails when its
    /// `MessageLength` exceeds `limits.max_message_length`.
    pub fn new(first: Envelope, limits: &Limits) -> Result<PartialMessage, DecodeError> {
        let total = first.message_length as usize;
        if total > limits.max_message_length {
            return Err(DecodeError::new(
                "envelope.message_length",
                16,
                DecodeErrorKind::TooLarge {
                    value: total as u64,
                    limit: limits.max_message_length as u64,
                },
            ));
        }
        let fragments = total.div_ceil(MAX_FRAGMENT_PAYLOAD).max(1);
        Ok(PartialMessage {
            envelope: first,
            have_first: false,
            total,
            fragments,
            buf: Vec::new(),
            received: vec![false; fragments],
            received_count: 0,
            done: false,
        })
    }

    /// Number of datagrams the message needs.
    pub fn fragment_count(&self) -> usize {
        self.fragments
    }

    /// Feed one datagram (envelope included). Ok(Some(message_bytes)) when complete:
    /// message_bytes = the whole message after the envelope (header+body+credential).
    ///
    /// Errors (the partial message is left as it was): a datagram of another request id or
    /// another total length, a sequence number beyond the last fragment, a chunk of the wrong
    /// size, or a duplicate whose bytes differ from the first copy. An exact duplicate, or
    /// any datagram after completion, gives `Ok(None)`.
    pub fn push(&mut self, datagram: Bytes) -> Result<Option<Bytes>, DecodeError> {
        let (env, payload) = decode_envelope(&datagram)?;
        if self.done {
            return Ok(None);
        }
        if env.request_id != self.envelope.request_id {
            return Err(invalid("envelope.request_id", 8, env.request_id.into()));
        }
        if env.message_length as usize != self.total {
            return Err(invalid(
                "envelope.message_length",
                16,
                env.message_length.into(),
            ));
        }
        let seq = env.sequence_number as usize;
        let Some(seen) = self.received.get(seq).copied() else {
            return Err(invalid(
                "envelope.sequence_number",
                12,
                env.sequence_number.into(),
            ));
        };
        let start = seq.saturating_mul(MAX_FRAGMENT_PAYLOAD);
        let end = start.saturating_add(MAX_FRAGMENT_PAYLOAD).min(self.total);
        let expected = end.saturating_sub(start);
        if payload.len() != expected {
            let kind = if payload.len() < expected {
                DecodeErrorKind::Truncated {
                    needed: expected,
                    available: payload.len(),
                }
            } else {
                DecodeErrorKind::TrailingBytes {
                    count: payload.len() - expected,
                }
            };
            return Err(DecodeError::new("fragment", ENVELOPE_LEN, kind));
        }
        if self.buf.is_empty() && self.total > 0 {
            self.buf = vec![0; self.total];
        }
        let Some(slot) = self.buf.get_mut(start..end) else {
            return Err(invalid(
                "envelope.sequence_number",
                12,
                env.sequence_number.into(),
            ));
        };
        if seen {
            return if slot == &payload[..] {
                Ok(None)
            } else {
                Err(invalid(
                    "fragment.duplicate",
                    12,
                    env.sequence_number.into(),
                ))
            };
        }
        slot.copy_from_slice(&payload);
        if let Some(flag) = self.received.get_mut(seq) {
            *flag = true;
        }
        self.received_count += 1;
        if seq == 0 {
            self.envelope = env;
            self.have_first = true;
        }
        if self.received_count == self.fragments {
            self.done = true;
            return Ok(Some(Bytes::from(std::mem::take(&mut self.buf))));
        }
        Ok(None)
    }

    /// envelope of fragment 0 if seen, else the first seen
    pub fn envelope(&self) -> &Envelope {
        &self.envelope
    }

    /// True once fragment 0 (the one holding the header) has arrived.
    pub fn has_first_fragment(&self) -> bool {
        self.have_first
    }
}

/// Settings of a [`Reassembler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblerConfig {
    /// Most partial messages held at once; a new one beyond that evicts the oldest.
    pub max_in_progress: usize,
    /// Largest message accepted (also capped by `limits.max_message_length`).
    pub max_message_length: usize,
    /// A partial message older than this is dropped.
    pub timeout: Duration,
    /// Limits for decoding the completed messages.
    pub limits: Limits,
}

impl Default for ReassemblerConfig {
    /// 64 messages in progress, the default message limit, 5 s (the reference client gives up
    /// on a server after 3 s).
    fn default() -> Self {
        let limits = Limits::default();
        Self {
            max_in_progress: 64,
            max_message_length: limits.max_message_length,
            timeout: Duration::from_secs(5),
            limits,
        }
    }
}

/// Many messages in progress, keyed by request id, with caps on messages in progress and bytes.
#[derive(Debug, Clone)]
pub struct Reassembler {
    config: ReassemblerConfig,
    limits: Limits,
    partial: HashMap<u32, (PartialMessage, Instant)>,
}

impl Reassembler {
    /// An empty reassembler.
    pub fn new(config: ReassemblerConfig) -> Reassembler {
        let mut limits = config.limits;
        limits.max_message_length = limits.max_message_length.min(config.max_message_length);
        Reassembler {
            config,
            limits,
            partial: HashMap::new(),
        }
    }

    /// Ok(Some(Message)) when a message completes (decoded with Message::decode_parts).
    ///
    /// A single-datagram message completes at once and is never stored. Expired partial
    /// messages are dropped first. When `max_in_progress` messages are already pending, the
    /// oldest is evicted to make room (a reassembler with `max_in_progress == 0` refuses
    /// multi-datagram messages). A datagram of the pending request id but another total
    /// length, or a duplicate fragment with other bytes, means another message under the
    /// same id: the pending one is dropped and a new one starts from this datagram (newest
    /// wins). Other misfits (sequence number out of range, wrong chunk size) are errors and
    /// leave the pending message as it was. A duplicate arriving after its message completed
    /// starts a new partial message that expires (or call [`Reassembler::remove`]).
    pub fn push(&mut self, datagram: Bytes, now: Instant) -> Result<Option<Message>, DecodeError> {
        self.expire(now);
        let (env, _) = decode_envelope(&datagram)?;
        let id = env.request_id;
        let pending = match self.partial.get_mut(&id) {
            Some((p, _)) => match p.push(datagram.clone()) {
                Ok(Some(b)) => {
                    let env = *p.envelope();
                    self.partial.remove(&id);
                    Some(Some((env, b)))
                }
                Ok(None) => Some(None),
                // Another message under the same request id (a stale partial, or a resend
                // of the request elsewhere): the newest wins, as the reference client only
                // cares about the latest answer.
                Err(e) if e.field == CONFLICT_LENGTH || e.field == CONFLICT_DUPLICATE => {
                    tracing::debug!(request_id = id, error = %e, "restarting partial message");
                    self.partial.remove(&id);
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        let complete = match pending {
            Some(done) => done,
            None => {
                let mut p = PartialMessage::new(env, &self.limits)?;
                match p.push(datagram)? {
                    Some(b) => Some((*p.envelope(), b)),
                    None => {
                        self.make_room()?;
                        self.partial.insert(id, (p, now));
                        None
                    }
                }
            }
        };
        match complete {
            Some((env, bytes)) => Message::decode_parts(env, bytes, &self.limits).map(Some),
            None => Ok(None),
        }
    }

    fn make_room(&mut self) -> Result<(), DecodeError> {
        if self.config.max_in_progress == 0 {
            return Err(DecodeError::new(
                "reassembler.in_progress",
                0,
                DecodeErrorKind::TooLarge { value: 1, limit: 0 },
            ));
        }
        while self.partial.len() >= self.config.max_in_progress {
            let oldest = self
                .partial
                .iter()
                .min_by_key(|(_, (_, started))| *started)
                .map(|(id, _)| *id);
            match oldest {
                Some(id) => {
                    tracing::debug!(request_id = id, "reassembler full: evicting oldest");
                    self.partial.remove(&id);
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Forgets the partial message of `request_id`, if any.
    pub fn remove(&mut self, request_id: u32) {
        self.partial.remove(&request_id);
    }

    /// drops partial messages older than timeout
    pub fn expire(&mut self, now: Instant) {
        let timeout = self.config.timeout;
        self.partial
            .retain(|_, (_, started)| now.saturating_duration_since(*started) < timeout);
    }

    /// Number of partial messages held.
    pub fn in_progress(&self) -> usize {
        self.partial.len()
    }

    /// When the oldest partial message expires, if any (for a caller's timer).
    pub fn next_expiry(&self) -> Option<Instant> {
        self.partial
            .values()
            .filter_map(|(_, started)| started.checked_add(self.config.timeout))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::body::{Body, ResolutionResponse};
    use crate::wire::codes::ResponseCode;
    use crate::wire::value::HandleValue;

    /// A response of `n` URL values, long enough to need several datagrams for n ≥ 20.
    fn big_response(request_id: u32, n: u32) -> Bytes {
        let req = Message::resolution_request("0.NA/1", vec![], vec![], request_id, 0);
        let values = (0..n)
            .map(|i| HandleValue::new(i, "URL", format!("http://example.org/{i:040}")))
            .collect();
        let body = Body::ResolutionResponse(ResolutionResponse {
            handle: Bytes::from_static(b"0.NA/1"),
            values,
        });
        Message::response_to(&req, ResponseCode::Success, body)
            .encode()
            .unwrap()
    }

    #[test]
    fn fragments_are_at_most_512_bytes_and_reassemble_in_any_order() {
        let encoded = big_response(5, 30);
        let frags = fragment(&encoded);
        assert!(frags.len() > 2);
        assert!(frags.iter().all(|f| f.len() <= MAX_DATAGRAM));
        let t = Instant::now();
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let mut order: Vec<_> = frags.iter().rev().cloned().collect();
        order.insert(1, frags[frags.len() - 1].clone()); // a duplicate
        let mut out = None;
        for f in order {
            if let Some(m) = r.push(f, t).unwrap() {
                assert!(out.is_none());
                out = Some(m);
            }
        }
        let m = out.unwrap();
        assert_eq!(m.encode().unwrap(), encoded);
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn single_datagram_completes_immediately() {
        let encoded = big_response(6, 1);
        assert_eq!(fragment(&encoded), vec![encoded.clone()]);
        let mut r = Reassembler::new(ReassemblerConfig::default());
        assert!(r.push(encoded, Instant::now()).unwrap().is_some());
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn conflicting_duplicate_and_out_of_range_sequence_are_errors() {
        let frags = fragment(&big_response(7, 30));
        let env = decode_envelope(&frags[0]).unwrap().0;
        let mut p = PartialMessage::new(env, &Limits::default()).unwrap();
        assert!(p.push(frags[1].clone()).unwrap().is_none());
        assert!(p.push(frags[1].clone()).unwrap().is_none());
        let mut bad = BytesMut::from(&frags[1][..]);
        bad[30] ^= 1;
        assert_eq!(
            p.push(bad.freeze()).unwrap_err().field,
            "fragment.duplicate"
        );
        let mut far = BytesMut::from(&frags[1][..]);
        far[12..16].copy_from_slice(&1000u32.to_be_bytes());
        assert_eq!(
            p.push(far.freeze()).unwrap_err().field,
            "envelope.sequence_number"
        );
        assert!(!p.has_first_fragment());
    }

    #[test]
    fn message_length_over_the_limit_is_refused_before_allocating() {
        let frags = fragment(&big_response(8, 30));
        let mut r = Reassembler::new(ReassemblerConfig {
            max_message_length: 600,
            ..ReassemblerConfig::default()
        });
        let e = r.push(frags[0].clone(), Instant::now()).unwrap_err();
        assert_eq!(e.field, "envelope.message_length");
        assert_eq!(r.in_progress(), 0);
    }

    #[test]
    fn caps_messages_in_progress_and_expires_old_ones() {
        let t0 = Instant::now();
        let mut r = Reassembler::new(ReassemblerConfig {
            max_in_progress: 2,
            timeout: Duration::from_secs(3),
            ..ReassemblerConfig::default()
        });
        for id in 1..=3u32 {
            let frags = fragment(&big_response(id, 30));
            let at = t0 + Duration::from_millis(u64::from(id));
            assert!(r.push(frags[0].clone(), at).unwrap().is_none());
        }
        assert_eq!(r.in_progress(), 2);
        // Request 1 was the oldest and was evicted: its other fragments start over.
        let frags = fragment(&big_response(1, 30));
        let n = frags.len();
        let mut done = None;
        for f in frags.iter().skip(1) {
            done = r.push(f.clone(), t0 + Duration::from_millis(10)).unwrap();
        }
        assert!(done.is_none());
        // Starting request 1 again evicted request 2, now the oldest.
        assert_eq!(r.in_progress(), 2);
        assert_eq!(
            r.next_expiry(),
            Some(t0 + Duration::from_millis(3) + Duration::from_secs(3))
        );
        r.expire(t0 + Duration::from_secs(4));
        assert_eq!(r.in_progress(), 0);
        assert!(n > 1);
    }

    #[test]
    fn another_message_under_the_same_id_replaces_the_pending_one() {
        let t = Instant::now();
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let old = fragment(&big_response(9, 30));
        let new_encoded = big_response(9, 31);
        let new = fragment(&new_encoded);
        assert!(r.push(old[1].clone(), t).unwrap().is_none());
        // Different total length: the old partial goes, the new message completes.
        let mut done = None;
        for f in &new {
            done = r.push(f.clone(), t).unwrap();
        }
        assert_eq!(done.unwrap().encode().unwrap(), new_encoded);
        assert_eq!(r.in_progress(), 0);
        // A bad sequence number, by contrast, is an error that keeps the pending message.
        assert!(r.push(old[0].clone(), t).unwrap().is_none());
        let mut far = BytesMut::from(&old[1][..]);
        far[12..16].copy_from_slice(&99u32.to_be_bytes());
        assert!(r.push(far.freeze(), t).is_err());
        assert_eq!(r.in_progress(), 1);
    }
}
