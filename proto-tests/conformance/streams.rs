//! The captured TCP streams through [`HandleCodec`] in small pieces, and the captured UDP
//! datagrams through the [`Reassembler`], give the same messages as a whole-frame decode.

use bytes::BytesMut;
use std::time::Instant;

use handle_resolver::transport::{CodecError, HandleCodec};
use handle_resolver::wire::{Limits, Message, Reassembler, ReassemblerConfig};
use tokio_util::codec::Decoder;

use crate::support::captures::{scenarios, Transport};

#[test]
fn tcp_streams_decode_through_the_codec_in_pieces() {
    let mut streams = 0;
    for sc in scenarios() {
        let mut names: Vec<String> = std::fs::read_dir(&sc.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tcp") && n.ends_with(".bin"))
            .collect();
        names.sort();
        for name in names {
            let data = std::fs::read(sc.dir.join(&name)).unwrap();
            let frames: Vec<_> = sc
                .messages
                .iter()
                .filter(|m| {
                    m.transport == Transport::Tcp
                        && m.label.split(' ').next() == Some(name.as_str())
                })
                .collect();
            for piece in [1usize, 7, 500] {
                let mut codec = HandleCodec::default();
                let mut buf = BytesMut::new();
                let mut out = Vec::new();
                for chunk in data.chunks(piece) {
                    buf.extend_from_slice(chunk);
                    loop {
                        match codec.decode(&mut buf) {
                            Ok(Some(m)) => out.push(Ok(m)),
                            Ok(None) => break,
                            Err(e) => {
                                out.push(Err(e));
                                break;
                            }
                        }
                    }
                }
                assert!(buf.is_empty(), "{} {name}: bytes left", sc.id());
                assert_eq!(out.len(), frames.len(), "{} {name}", sc.id());
                for (got, cap) in out.iter().zip(&frames) {
                    let direct = Message::decode(cap.frame(), &Limits::default());
                    match (got, direct) {
                        (Ok(a), Ok(b)) => assert_eq!(a, &b),
                        (Err(CodecError::Decode(a)), Err(b)) => assert_eq!(a, &b),
                        (a, b) => panic!("{} {name}: codec {a:?} vs direct {b:?}", sc.id()),
                    }
                }
            }
            streams += 1;
        }
    }
    assert!(streams >= 30, "{streams} streams");
}

#[test]
fn udp_datagrams_decode_through_the_reassembler() {
    let mut reassembler = Reassembler::new(ReassemblerConfig::default());
    let now = Instant::now();
    let mut messages = 0;
    for sc in scenarios() {
        for cap in sc.messages.iter().filter(|m| m.transport == Transport::Udp) {
            let mut done = Vec::new();
            for d in &cap.datagrams {
                if let Some(m) = reassembler.push(d.clone(), now).transpose() {
                    done.push(m);
                }
            }
            assert_eq!(done.len(), 1, "{} {}", sc.id(), cap.label);
            let direct = Message::decode(cap.frame(), &Limits::default());
            match (done.pop().unwrap(), direct) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(a, b),
                (a, b) => panic!(
                    "{} {}: reassembled {a:?} vs direct {b:?}",
                    sc.id(),
                    cap.label
                ),
            }
            messages += 1;
        }
    }
    assert_eq!(reassembler.in_progress(), 0);
    assert!(messages >= 100, "{messages}");
}
