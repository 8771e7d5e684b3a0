//! UDP fragmentation and reassembly (RFC 3652 §2.3, PROTOCOL.md §8.1, §14.3), sans-IO.
//!
//! A message longer than 492 bytes travels as datagrams of at most 512 bytes, each with the
//! envelope of the message (same request id, **total** `MessageLength`) and `SequenceNumber`
//! = chunk index; chunk *i* starts at message offset `i * 492`. The receiver does not rely on
//! the TC flag (reference servers never set it): the number of fragments comes from
//! `MessageLength` alone. Datagrams may come in any order and more than once. A datagram with
//! sequence number 0 that carries all `MessageLength` bytes is a whole message, however long
//! (a sender that does not fragment).
//!
//! Three layers, each built on the one before:
//! - [`PartialMessage`] collects the datagrams of ONE message (one total length);
//! - [`Collector`] holds the message being collected under one request id and applies the
//!   reassembly rule of this crate (a misfit that is valid on its own starts collection over,
//!   newest wins; a datagram invalid on its own is refused and changes nothing). Every
//!   receiver goes through it: the [`Reassembler`] (in `reassembler`) and the UDP
//!   transport's demultiplexer (which adds a per-socket memory budget, the `room` of
//!   [`Collector::push`]);
//! - [`Reassembler`] keys collectors by request id, with a cap on messages in progress and an
//!   expiry.
//!
//! Memory: a partial message allocates `MessageLength` bytes once, after checking it against
//! the limit; a [`Reassembler`] holds at most `max_in_progress` partial messages, so it never
//! holds more than `max_in_progress × max_message_length` bytes.

use bytes::{BufMut, Bytes, BytesMut};
use thiserror::Error;

use super::envelope::{Envelope, ENVELOPE_LEN};
use super::error::{DecodeError, DecodeErrorKind};
use super::limits::Limits;
use super::reader::Reader;

mod reassembler;

pub use reassembler::{Reassembler, ReassemblerConfig};

/// Why a datagram does not fit a partial message.
enum Misfit {
    /// It belongs to another message under the same request id (another total length, or a
    /// duplicate fragment with other bytes).
    OtherMessage(DecodeError),
    /// It is malformed for this message (wrong id, sequence number, chunk size).
    Bad(DecodeError),
}

impl From<Misfit> for DecodeError {
    fn from(m: Misfit) -> Self {
        match m {
            Misfit::OtherMessage(e) | Misfit::Bad(e) => e,
        }
    }
}

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
        let total = limits.check_message_length(first.message_length)?;
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
        Ok(self.push_parts(env, &payload)?)
    }

    fn push_parts(&mut self, env: Envelope, payload: &Bytes) -> Result<Option<Bytes>, Misfit> {
        use Misfit::{Bad, OtherMessage};
        if self.done {
            return Ok(None);
        }
        if env.request_id != self.envelope.request_id {
            return Err(Bad(invalid(
                "envelope.request_id",
                8,
                env.request_id.into(),
            )));
        }
        if env.message_length as usize != self.total {
            return Err(OtherMessage(invalid(
                "envelope.message_length",
                16,
                env.message_length.into(),
            )));
        }
        let seq = env.sequence_number as usize;
        let Some(seen) = self.received.get(seq).copied() else {
            return Err(Bad(invalid(
                "envelope.sequence_number",
                12,
                env.sequence_number.into(),
            )));
        };
        if seq == 0 && payload.len() == self.total {
            // The whole message in one datagram larger than 512 bytes, from a sender that
            // does not fragment: complete as it is.
            self.done = true;
            self.envelope = env;
            self.have_first = true;
            self.buf = Vec::new();
            return Ok(Some(payload.clone()));
        }
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
            return Err(Bad(DecodeError::new("fragment", ENVELOPE_LEN, kind)));
        }
        if self.buf.is_empty() && self.total > 0 {
            self.buf = vec![0; self.total];
        }
        let Some(slot) = self.buf.get_mut(start..end) else {
            return Err(Bad(invalid(
                "envelope.sequence_number",
                12,
                env.sequence_number.into(),
            )));
        };
        if seen {
            return if slot == &payload[..] {
                Ok(None)
            } else {
                Err(OtherMessage(invalid(
                    "fragment.duplicate",
                    12,
                    env.sequence_number.into(),
                )))
            };
        }
        slot.copy_from_slice(payload);
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

/// What [`Collector::push`] did with a datagram it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Collected {
    /// Taken into the message being collected (or an exact duplicate of a datagram already
    /// held, ignored): the message is not complete yet.
    Held,
    /// The datagram did not fit the message being collected (the error says why) but is
    /// valid on its own: that message was dropped and collection started over from this
    /// datagram. Not complete yet.
    Restarted(DecodeError),
    /// The message is complete and the collector is empty again.
    Complete {
        /// The envelope of the message (that of fragment 0).
        envelope: Envelope,
        /// The whole message after the envelope: header, body, credential.
        message: Bytes,
    },
}

/// Why [`Collector::push`] refused a datagram. The collector is as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum CollectError {
    /// The datagram is not valid on its own: another request id than the message being
    /// collected, a `MessageLength` above the limit, a sequence number beyond the last
    /// fragment, a chunk of the wrong size.
    #[error(transparent)]
    Invalid(#[from] DecodeError),
    /// The datagram would start a message of `need` bytes, more than the `room` the caller
    /// allowed.
    #[error("a message of {need} bytes does not fit in the {room} bytes of room left")]
    NoRoom {
        /// The `MessageLength` of the datagram.
        need: usize,
        /// The room the caller allowed.
        room: usize,
    },
}

impl From<CollectError> for DecodeError {
    /// [`CollectError::NoRoom`] as a `MessageLength` above a limit of `room`.
    fn from(e: CollectError) -> Self {
        match e {
            CollectError::Invalid(e) => e,
            CollectError::NoRoom { need, room } => DecodeError::new(
                "envelope.message_length",
                16,
                DecodeErrorKind::TooLarge {
                    value: u64::try_from(need).unwrap_or(u64::MAX),
                    limit: u64::try_from(room).unwrap_or(u64::MAX),
                },
            ),
        }
    }
}

/// The message being collected from the datagrams of one request id, one message at a time.
/// This is the reassembly rule of the crate, in one place: the [`Reassembler`] keeps one
/// collector per request id, the UDP transport one per pending request.
///
/// - A datagram that fits the message being collected is taken (an exact duplicate changes
///   nothing).
/// - A datagram that does not fit it (another total length, or a fragment already held with
///   other bytes) but is valid on its own means the server sent another answer (its data
///   changed between transmissions): the newest wins, and collection starts over from this
///   datagram ([`Collected::Restarted`]).
/// - A datagram that is not valid on its own (another request id, a length above the limits
///   or the room allowed, a bad sequence number or chunk size) is refused
///   ([`CollectError`]) and leaves the message being collected as it was.
///
/// Two messages of the same length whose fragments never overlap cannot be told apart; a mix
/// of them fails to decode or is what the server sent, as with any UDP client.
///
/// The message being collected is boxed, so an empty collector is one pointer wide: most
/// answers are one datagram, and a table with a collector per request in flight would
/// otherwise carry a [`PartialMessage`] in every slot.
///
/// ```
/// use bytes::Bytes;
/// use handle_resolver::wire::{fragment, Collected, Collector, Envelope, Limits, Message, Reader};
///
/// let types = (0..60).map(|i| Bytes::from(format!("TYPE.{i:04}"))).collect();
/// let big = Message::resolution_request("0.NA/10.1045", vec![], types, 7, 0).encode()?;
/// let mut collector = Collector::new();
/// let mut done = None;
/// for datagram in fragment(&big).into_iter().rev() {
///     let mut r = Reader::new(datagram);
///     let envelope = Envelope::decode(&mut r)?;
///     match collector.push(envelope, r.rest(), &Limits::default(), usize::MAX)? {
///         Collected::Complete { envelope, message } => done = Some((envelope, message)),
///         Collected::Held | Collected::Restarted(_) => {}
///     }
/// }
/// let (envelope, message) = done.expect("complete");
/// let whole = Message::decode_parts(envelope, message, &Limits::default())?;
/// assert_eq!(whole.encode()?, big);
/// assert_eq!(collector.held_bytes(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Collector {
    partial: Option<Box<PartialMessage>>,
}

impl Collector {
    /// An empty collector.
    pub fn new() -> Collector {
        Collector::default()
    }

    /// True when no message is being collected.
    pub fn is_empty(&self) -> bool {
        self.partial.is_none()
    }

    /// The bytes reserved for the message being collected: its `MessageLength` (what its
    /// partial message allocates, once), or 0 when none is.
    pub fn held_bytes(&self) -> usize {
        self.partial.as_ref().map_or(0, |p| p.total)
    }

    /// Feeds one datagram, as its decoded `envelope` and the `payload` after it.
    ///
    /// `limits` caps the `MessageLength` of a message this datagram starts. `room` caps it
    /// too: the bytes the caller lets this collector hold once the datagram is in (the
    /// message being collected, which a restart would drop, counts as free); pass
    /// `usize::MAX` for no cap beyond `limits`. Neither applies to a datagram that fits the
    /// message being collected, whose bytes are already reserved.
    pub fn push(
        &mut self,
        envelope: Envelope,
        payload: Bytes,
        limits: &Limits,
        room: usize,
    ) -> Result<Collected, CollectError> {
        let misfit = match self.partial.as_deref_mut() {
            None => None,
            Some(p) => match p.push_parts(envelope, &payload) {
                Ok(None) => return Ok(Collected::Held),
                Ok(Some(message)) => {
                    let envelope = *p.envelope();
                    self.partial = None;
                    return Ok(Collected::Complete { envelope, message });
                }
                Err(Misfit::OtherMessage(e)) => Some(e),
                Err(Misfit::Bad(e)) => return Err(CollectError::Invalid(e)),
            },
        };
        // Nothing collected yet, or another message: the datagram as the start of one.
        let need = envelope.message_length as usize;
        if need > room {
            return Err(CollectError::NoRoom { need, room });
        }
        let mut fresh = PartialMessage::new(envelope, limits)?;
        match fresh
            .push_parts(envelope, &payload)
            .map_err(DecodeError::from)?
        {
            Some(message) => {
                self.partial = None;
                Ok(Collected::Complete {
                    envelope: *fresh.envelope(),
                    message,
                })
            }
            None => {
                self.partial = Some(Box::new(fresh));
                Ok(misfit.map_or(Collected::Held, Collected::Restarted))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::body::{Body, ResolutionResponse};
    use crate::wire::codes::ResponseCode;
    use crate::wire::message::Message;
    use crate::wire::value::HandleValue;
    use std::time::{Duration, Instant};

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

    /// What a receiver sees on a socket: a stray datagram (44 bytes of text, as in the
    /// raw_udp_garbage capture) is refused without disturbing anything, then the fragments
    /// of an answer in reverse order with a duplicate complete it once, and nothing is left.
    /// (Moved here with the removal of the transport's `DatagramCodec`.)
    #[test]
    fn garbage_is_refused_and_reversed_fragments_with_a_duplicate_complete() {
        let encoded = big_response(9, 30);
        let mut frags = fragment(&encoded);
        assert!(frags.len() > 1);
        frags.reverse();
        let dup = frags[0].clone();
        let t = Instant::now();
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let garbage = Bytes::from_static(b"this is not a handle protocol message at all");
        assert!(r.push(garbage, t).is_err());
        let mut done = Vec::new();
        for f in frags.into_iter().chain([dup]) {
            done.extend(r.push(f, t).unwrap());
        }
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].encode().unwrap(), encoded);
        // The duplicate after completion starts a partial message that expires.
        r.expire(t + ReassemblerConfig::default().timeout);
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
    fn a_whole_message_in_one_large_datagram_completes_at_once() {
        // A sender that does not fragment (PROTOCOL.md §8.1: receive ≥ 1500 bytes to be
        // tolerant): sequence 0 carries all MessageLength bytes, TC clear.
        let encoded = big_response(10, 12);
        assert!(encoded.len() > MAX_DATAGRAM && encoded.len() < 1500);
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let m = r.push(encoded.clone(), Instant::now()).unwrap().unwrap();
        assert_eq!(m.encode().unwrap(), encoded);
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

    fn push(c: &mut Collector, datagram: &Bytes, room: usize) -> Result<Collected, CollectError> {
        let (env, payload) = decode_envelope(datagram).unwrap();
        c.push(env, payload, &Limits::default(), room)
    }

    fn complete(c: &mut Collector, datagrams: &[Bytes]) -> Option<Bytes> {
        let mut out = None;
        for d in datagrams {
            if let Collected::Complete { envelope, message } = push(c, d, usize::MAX).unwrap() {
                let m = Message::decode_parts(envelope, message, &Limits::default()).unwrap();
                out = Some(m.encode().unwrap());
            }
        }
        out
    }

    #[test]
    fn collector_restarts_on_a_misfit_valid_alone() {
        let old = fragment(&big_response(11, 30));
        let new_encoded = big_response(11, 31);
        let new = fragment(&new_encoded);
        let mut c = Collector::new();
        assert_eq!(push(&mut c, &old[0], usize::MAX).unwrap(), Collected::Held);
        assert_eq!(c.held_bytes(), big_response(11, 30).len() - ENVELOPE_LEN);
        // Another total length: the newest wins.
        match push(&mut c, &new[1], usize::MAX).unwrap() {
            Collected::Restarted(e) => assert_eq!(e.field, "envelope.message_length"),
            other => panic!("{other:?}"),
        }
        assert_eq!(c.held_bytes(), new_encoded.len() - ENVELOPE_LEN);
        assert_eq!(complete(&mut c, &new), Some(new_encoded.clone()));
        assert!(c.is_empty());
        assert_eq!(c.held_bytes(), 0);

        // A fragment already held, with other bytes: another answer of the same length.
        assert_eq!(push(&mut c, &new[1], usize::MAX).unwrap(), Collected::Held);
        let mut changed = BytesMut::from(&new[1][..]);
        changed[30] ^= 1;
        match push(&mut c, &changed.freeze(), usize::MAX).unwrap() {
            Collected::Restarted(e) => assert_eq!(e.field, "fragment.duplicate"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn collector_keeps_its_message_when_a_datagram_is_invalid_alone() {
        let encoded = big_response(12, 30);
        let frags = fragment(&encoded);
        let mut c = Collector::new();
        assert_eq!(
            push(&mut c, &frags[0], usize::MAX).unwrap(),
            Collected::Held
        );
        let held = c.held_bytes();
        // Another total length, but beyond the limit.
        let mut huge = BytesMut::from(&frags[1][..]);
        huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
        let e = push(&mut c, &huge.freeze(), usize::MAX).unwrap_err();
        assert!(matches!(e, CollectError::Invalid(e) if e.field == "envelope.message_length"));
        // Another total length, but a sequence number beyond its last fragment.
        let mut far = BytesMut::from(&frags[1][..]);
        far[12..16].copy_from_slice(&5u32.to_be_bytes());
        far[16..20].copy_from_slice(&600u32.to_be_bytes());
        let e = push(&mut c, &far.freeze(), usize::MAX).unwrap_err();
        assert!(matches!(e, CollectError::Invalid(e) if e.field == "envelope.sequence_number"));
        // Another request id.
        let other = fragment(&big_response(13, 31));
        let e = push(&mut c, &other[1], usize::MAX).unwrap_err();
        assert!(matches!(e, CollectError::Invalid(e) if e.field == "envelope.request_id"));
        // Valid alone, but more than the room allowed.
        let bigger = fragment(&big_response(12, 31));
        let e = push(&mut c, &bigger[1], held).unwrap_err();
        assert!(matches!(e, CollectError::NoRoom { room, .. } if room == held));
        // The message being collected was kept through all of it.
        assert_eq!(c.held_bytes(), held);
        assert_eq!(complete(&mut c, &frags[1..]), Some(encoded));
    }

    #[test]
    fn collector_room_does_not_apply_to_a_datagram_that_fits() {
        let encoded = big_response(14, 30);
        let frags = fragment(&encoded);
        let mut c = Collector::new();
        assert!(matches!(
            push(&mut c, &frags[0], 10),
            Err(CollectError::NoRoom { room: 10, .. })
        ));
        assert!(c.is_empty());
        assert_eq!(
            push(&mut c, &frags[0], usize::MAX).unwrap(),
            Collected::Held
        );
        let mut out = None;
        for f in &frags[1..] {
            if let Collected::Complete { envelope, message } = push(&mut c, f, 0).unwrap() {
                out = Some(Message::decode_parts(envelope, message, &Limits::default()).unwrap());
            }
        }
        assert_eq!(out.unwrap().encode().unwrap(), encoded);
    }

    #[test]
    fn reassembler_keeps_the_pending_message_when_another_is_invalid_alone() {
        let t = Instant::now();
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let encoded = big_response(15, 30);
        let frags = fragment(&encoded);
        assert!(r.push(frags[0].clone(), t).unwrap().is_none());
        // Another total length beyond the limit: an error, and the pending message stays.
        let mut huge = BytesMut::from(&frags[1][..]);
        huge[16..20].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            r.push(huge.freeze(), t).unwrap_err().field,
            "envelope.message_length"
        );
        assert_eq!(r.in_progress(), 1);
        let mut done = None;
        for f in &frags[1..] {
            done = r.push(f.clone(), t).unwrap();
        }
        assert_eq!(done.unwrap().encode().unwrap(), encoded);
        assert_eq!(r.in_progress(), 0);
    }
}
