//! Never panics: every truncation of every captured message, random bytes, and randomly
//! mutated captures through the message decoder, the reassembler and the TCP codec. What
//! decodes re-encodes stably (encode ∘ decode is idempotent after one pass).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use handle_resolver::transport::HandleCodec;
use handle_resolver::wire::{Limits, Message, Reassembler, ReassemblerConfig};
use proptest::prelude::*;
use tokio_util::codec::Decoder;

use crate::support::captures::scenarios;

/// Every captured frame (envelope + whole message) and every captured datagram.
fn corpus() -> &'static (Vec<Bytes>, Vec<Bytes>) {
    static CORPUS: OnceLock<(Vec<Bytes>, Vec<Bytes>)> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut frames = Vec::new();
        let mut datagrams = Vec::new();
        for sc in scenarios() {
            for m in &sc.messages {
                frames.push(m.frame());
                datagrams.extend(m.datagrams.iter().cloned());
            }
        }
        (frames, datagrams)
    })
}

/// Decodes, and when that works, checks that encoding is stable.
fn decode_stably(bytes: Bytes) {
    let limits = Limits::default();
    if let Ok(m) = Message::decode(bytes, &limits) {
        let once = m.encode().expect("a decoded message encodes");
        let again = Message::decode(once.clone(), &limits).expect("what we encode decodes");
        assert_eq!(again.encode().unwrap(), once);
    }
}

#[test]
fn every_truncated_capture_is_an_error() {
    let limits = Limits::default();
    let mut cuts = 0;
    for frame in &corpus().0 {
        for k in 0..frame.len() {
            assert!(Message::decode(frame.slice(..k), &limits).is_err());
            cuts += 1;
        }
    }
    assert!(cuts > 50_000, "{cuts}");
}

#[test]
fn every_truncated_datagram_is_refused_by_the_reassembler() {
    let mut r = Reassembler::new(ReassemblerConfig::default());
    let now = Instant::now();
    for d in &corpus().1 {
        for k in [0, 1, 19, 20, d.len().saturating_sub(1)] {
            if k < d.len() {
                // A short datagram is an error, or (for a fragment) waits for the rest;
                // never a completed message.
                if let Ok(Some(m)) = r.push(d.slice(..k), now) {
                    panic!("truncated datagram completed {m:?}");
                }
            }
        }
        r.expire(now + Duration::from_secs(3600));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..700)) {
        let bytes = Bytes::from(bytes);
        decode_stably(bytes.clone());
        let mut r = Reassembler::new(ReassemblerConfig::default());
        let _ = r.push(bytes.clone(), Instant::now());
        let mut codec = HandleCodec::default();
        let mut buf = BytesMut::from(&bytes[..]);
        while let Ok(Some(_)) = codec.decode(&mut buf) {}
    }

    #[test]
    fn random_envelopes_on_real_messages_never_panic(
        pick in any::<prop::sample::Index>(),
        envelope in proptest::collection::vec(any::<u8>(), 20),
    ) {
        let frames = &corpus().0;
        let frame = &frames[pick.index(frames.len())];
        let mut b = BytesMut::from(&frame[..]);
        b[..20].copy_from_slice(&envelope);
        decode_stably(b.freeze());
    }

    #[test]
    fn mutated_captures_never_panic(
        pick in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let frames = &corpus().0;
        let frame = &frames[pick.index(frames.len())];
        let mut b = BytesMut::from(&frame[..]);
        for (at, byte) in &edits {
            let i = at.index(b.len());
            b[i] = *byte;
        }
        if let Some(c) = cut {
            b.truncate(c.index(b.len()));
        }
        decode_stably(b.freeze());
    }

    #[test]
    fn mutated_fragments_never_panic_the_reassembler(
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 16),
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>()), 0..12),
    ) {
        let datagrams = &corpus().1;
        let mut r = Reassembler::new(ReassemblerConfig::default().with_max_in_progress(4));
        let now = Instant::now();
        let mut picked: Vec<BytesMut> = picks
            .iter()
            .map(|p| BytesMut::from(&datagrams[p.index(datagrams.len())][..]))
            .collect();
        for (which, at, byte) in &edits {
            let n = picked.len();
            let d = &mut picked[which.index(n)];
            let i = at.index(d.len());
            d[i] = *byte;
        }
        for d in picked {
            let _ = r.push(d.freeze(), now);
            prop_assert!(r.in_progress() <= 4);
        }
    }
}
