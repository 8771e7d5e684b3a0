//! Walks the reference captures in `fixtures/reference/` and cuts them into messages.
//!
//! UDP: one file per datagram (`NN_c2s_udp_cportP.bin`, `NN_s2c_udp_cportP.bin`); datagrams of
//! the same direction, client port and request id form one message, labelled like the
//! `file` field of `decoded.json` (the file names joined by `,`). TCP: one file per
//! direction and connection (`tcpN_cportP_c2s.bin`), cut by the envelopes' MessageLength;
//! the k-th message (k ≥ 2) of a stream is labelled `"<file> msgk"`.

use std::path::{Path, PathBuf};

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value;

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    C2s,
    /// Server to client.
    S2c,
}

/// How it travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// One or more datagrams.
    Udp,
    /// Part of a TCP stream.
    Tcp,
}

/// One captured message.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The `file` label of `decoded.json`.
    pub label: String,
    /// Direction.
    pub direction: Direction,
    /// Transport.
    pub transport: Transport,
    /// UDP: the datagrams in capture order. TCP: the one frame.
    pub datagrams: Vec<Bytes>,
}

impl Captured {
    /// Envelope + whole message: the TCP frame, or the UDP datagrams put together by
    /// sequence number under fragment 0's envelope (independently of the crate's
    /// reassembler).
    pub fn frame(&self) -> Bytes {
        if self.datagrams.len() == 1 {
            return self.datagrams[0].clone();
        }
        let mut sorted = self.datagrams.clone();
        sorted.sort_by_key(|d| u32::from_be_bytes([d[12], d[13], d[14], d[15]]));
        let mut out = BytesMut::new();
        out.put_slice(&sorted[0][..20]);
        for d in &sorted {
            out.put_slice(&d[20..]);
        }
        out.freeze()
    }
}

/// One scenario folder.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `captures` or `captures-dsa`.
    pub set: &'static str,
    /// Folder name.
    pub name: String,
    /// Folder path.
    pub dir: PathBuf,
    /// `decoded.json`.
    pub decoded: Vec<Value>,
    /// Every message found in the packet files.
    pub messages: Vec<Captured>,
}

impl Scenario {
    /// The captured message with this `decoded.json` label.
    pub fn message(&self, label: &str) -> Option<&Captured> {
        self.messages.iter().find(|m| m.label == label)
    }

    /// `set/name`, for messages.
    pub fn id(&self) -> String {
        format!("{}/{}", self.set, self.name)
    }
}

/// `fixtures/reference`.
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference")
}

/// Every scenario of both capture sets, in name order.
pub fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    for set in ["captures", "captures-dsa"] {
        let root = reference_dir().join(set);
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("decoded.json").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            out.push(load(set, &dir));
        }
    }
    out
}

/// One scenario by set and name.
pub fn scenario(set: &'static str, name: &str) -> Scenario {
    load(set, &reference_dir().join(set).join(name))
}

fn load(set: &'static str, dir: &Path) -> Scenario {
    let decoded: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("decoded.json")).unwrap()).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    names.sort();
    let mut messages = Vec::new();
    // UDP: group by (direction, client port, request id), in file order.
    let mut udp: Vec<UdpGroup> = Vec::new();
    for name in &names {
        let data = Bytes::from(std::fs::read(dir.join(name)).unwrap());
        if name.starts_with("tcp") {
            let direction = if name.ends_with("_c2s.bin") {
                Direction::C2s
            } else {
                Direction::S2c
            };
            messages.extend(split_stream(name, direction, data));
        } else if let Some(rest) = name.get(3..) {
            let direction = if rest.starts_with("c2s") {
                Direction::C2s
            } else {
                Direction::S2c
            };
            let port = rest.rsplit("cport").next().unwrap_or("").to_string();
            let id = data.get(8..12).unwrap_or(&data[..]).to_vec();
            match udp
                .iter_mut()
                .find(|g| g.direction == direction && g.port == port && g.request_id == id)
            {
                Some(g) => {
                    g.files.push(name.clone());
                    g.datagrams.push(data);
                }
                None => udp.push(UdpGroup {
                    direction,
                    port,
                    request_id: id,
                    files: vec![name.clone()],
                    datagrams: vec![data],
                }),
            }
        }
    }
    for g in udp {
        messages.push(Captured {
            label: g.files.join(","),
            direction: g.direction,
            transport: Transport::Udp,
            datagrams: g.datagrams,
        });
    }
    Scenario {
        set,
        name: dir.file_name().unwrap().to_string_lossy().into_owned(),
        dir: dir.to_path_buf(),
        decoded,
        messages,
    }
}

/// Datagrams of one UDP message while grouping.
struct UdpGroup {
    direction: Direction,
    port: String,
    request_id: Vec<u8>,
    files: Vec<String>,
    datagrams: Vec<Bytes>,
}

fn split_stream(name: &str, direction: Direction, data: Bytes) -> Vec<Captured> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let len = data
            .get(at + 16..at + 20)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .unwrap_or(0);
        let end = (at + 20 + len).min(data.len());
        let label = if out.is_empty() {
            name.to_string()
        } else {
            format!("{name} msg{}", out.len() + 1)
        };
        out.push(Captured {
            label,
            direction,
            transport: Transport::Tcp,
            datagrams: vec![data.slice(at..end)],
        });
        at = end;
    }
    out
}
