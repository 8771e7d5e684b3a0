//! The UDP reassembler under random datagram sequences.
//!
//! Input: byte 0 sets `max_in_progress` (0-7), byte 1 the timeout (100 ms units, 1-256);
//! then records, each a tag byte:
//! - tag % 4 = 0 or 1: push a datagram: `u16 length ‖ length bytes` (cut at the input's end);
//! - tag % 4 = 2: advance the clock by `next byte × 50 ms`;
//! - tag % 4 = 3: forget request id `u32`.
//!
//! Properties: nothing panics; `in_progress()` never exceeds `max_in_progress`; a completed
//! message encodes, and carries the request id of the datagram that completed it.
#![no_main]

use std::time::{Duration, Instant};

use bytes::Bytes;
use handle_resolver::wire::{Envelope, Reader, Reassembler, ReassemblerConfig};
use libfuzzer_sys::fuzz_target;

struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let (Some(cap), Some(timeout)) = (input.byte(), input.byte()) else {
        return;
    };
    let cap = usize::from(cap % 8);
    let config = ReassemblerConfig::default()
        .with_max_in_progress(cap)
        .with_timeout(Duration::from_millis(100 * (u64::from(timeout) + 1)));
    let mut reassembler = Reassembler::new(config);
    let mut now = Instant::now();
    while let Some(tag) = input.byte() {
        match tag % 4 {
            0 | 1 => {
                let hi = input.byte().unwrap_or(0);
                let lo = input.byte().unwrap_or(0);
                let datagram =
                    Bytes::copy_from_slice(input.take(usize::from(u16::from_be_bytes([hi, lo]))));
                let id = Envelope::decode(&mut Reader::new(datagram.clone()))
                    .ok()
                    .map(|e| e.request_id);
                if let Ok(Some(message)) = reassembler.push(datagram, now) {
                    assert_eq!(Some(message.request_id()), id);
                    message.encode().expect("a reassembled message encodes");
                }
            }
            2 => now += Duration::from_millis(50 * u64::from(input.byte().unwrap_or(0))),
            _ => {
                let id = input.take(4);
                let mut b = [0u8; 4];
                b[..id.len()].copy_from_slice(id);
                reassembler.remove(u32::from_be_bytes(b));
            }
        }
        assert!(
            reassembler.in_progress() <= cap,
            "{} messages in progress, cap {cap}",
            reassembler.in_progress()
        );
    }
});
