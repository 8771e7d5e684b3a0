//! Fills `corpus/{message,value,site,reassembler}` from the captures in
//! `../fixtures/reference` (run from `fuzz/`: `cargo run --example seed`).
//!
//! - `message`: every whole message (TCP streams cut by MessageLength, UDP datagrams, and
//!   multi-datagram UDP messages put together);
//! - `value`: every value of those messages in wire form (mode byte 0), and its data with its
//!   type's mode byte; each key in `captures-dsa/keys` as HS_PUBKEY data;
//! - `site`: every HS_SITE-like value's data and every get-site-info answer;
//! - `reassembler`: each scenario's datagrams as push records.

#[path = "../fuzz_targets/types.rs"]
mod types;

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use handle_resolver::wire::{
    Body, Envelope, HandleValue, Limits, Message, PartialMessage, Reader, ENVELOPE_LEN,
    MAX_DATAGRAM, MAX_FRAGMENT_PAYLOAD,
};
use types::TYPES;

struct Corpus {
    root: PathBuf,
    count: HashMap<&'static str, usize>,
}

impl Corpus {
    fn add(&mut self, target: &'static str, name: &str, data: &[u8]) {
        let dir = self.root.join(target);
        fs::create_dir_all(&dir).unwrap();
        let n = self.count.entry(target).or_insert(0);
        *n += 1;
        fs::write(dir.join(format!("{name}-{n}")), data).unwrap();
    }

    fn add_value(&mut self, name: &str, v: &HandleValue) {
        let mut wire = BytesMut::from(&[0u8][..]);
        v.encode(&mut wire).unwrap();
        self.add("value", name, &wire);
        if let Some(i) = TYPES.iter().position(|t| v.is_type(t)) {
            let mut typed = vec![((i as u8) << 1) | 1];
            typed.extend_from_slice(&v.data);
            self.add("value", name, &typed);
        }
        if TYPES[4..8].iter().any(|t| v.is_type(t)) {
            self.add("site", name, &v.data);
        }
    }

    fn add_message(&mut self, name: &str, frame: &Bytes) {
        self.add("message", name, frame);
        let Ok(m) = Message::decode(frame.clone(), &Limits::default()) else {
            return;
        };
        for v in m.body.values() {
            self.add_value(name, v);
        }
        if let Body::SiteInfoResponse(s) = &m.body {
            self.add("site", name, &s.record);
        }
    }
}

fn envelope(data: &Bytes) -> Option<Envelope> {
    Envelope::decode(&mut Reader::new(data.clone())).ok()
}

fn scenario(corpus: &mut Corpus, dir: &Path) {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    // Reassembler records: max_in_progress 4, timeout 5.1 s, then one push per datagram.
    let mut pushes = vec![4u8, 50];
    let mut partial: HashMap<(u32, u32), PartialMessage> = HashMap::new();
    for f in files {
        let data = Bytes::from(fs::read(&f).unwrap());
        let is_tcp = f.file_name().unwrap().to_string_lossy().starts_with("tcp");
        if !is_tcp && data.len() <= MAX_DATAGRAM {
            pushes.push(0);
            pushes.extend_from_slice(&(data.len() as u16).to_be_bytes());
            pushes.extend_from_slice(&data);
        }
        let Some(env) = envelope(&data) else {
            corpus.add("message", &name, &data);
            continue;
        };
        let declared = env.message_length as usize;
        let fragment = !is_tcp
            && (env.sequence_number > 0 || ENVELOPE_LEN + declared > data.len())
            && declared > MAX_FRAGMENT_PAYLOAD
            && declared <= Limits::default().max_message_length;
        if !fragment {
            // One message, a stream, or garbage: cut it by MessageLength.
            let mut at = 0;
            while let Some(e) = envelope(&data.slice(at..)) {
                let len = (e.message_length as usize).min(data.len());
                let end = (at + ENVELOPE_LEN + len).min(data.len());
                corpus.add_message(&name, &data.slice(at..end));
                at = end;
            }
            if at < data.len() {
                corpus.add("message", &name, &data[at..]);
            }
            continue;
        }
        let key = (env.request_id, env.message_length);
        let m = match partial.entry(key) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => match PartialMessage::new(env, &Limits::default()) {
                Ok(p) => v.insert(p),
                Err(_) => continue,
            },
        };
        let Ok(Some(p)) = m.push(data.clone()) else {
            continue;
        };
        let mut frame = BytesMut::new();
        let mut first = *partial[&key].envelope();
        first.sequence_number = 0;
        first.encode(&mut frame);
        frame.extend_from_slice(&p);
        corpus.add_message(&name, &frame.freeze());
    }
    if pushes.len() > 2 {
        corpus.add("reassembler", &name, &pushes);
    }
}

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = here.join("../fixtures/reference");
    let mut corpus = Corpus {
        root: here.join("corpus"),
        count: HashMap::new(),
    };
    for set in ["captures", "captures-dsa"] {
        let mut dirs: Vec<PathBuf> = fs::read_dir(reference.join(set))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n != "keys"))
            .collect();
        dirs.sort();
        for d in dirs {
            scenario(&mut corpus, &d);
        }
    }
    let keys = reference.join("captures-dsa/keys");
    let pubkey = TYPES.iter().position(|t| *t == "HS_PUBKEY").unwrap() as u8;
    for k in fs::read_dir(keys).unwrap() {
        let mut seed = vec![(pubkey << 1) | 1];
        seed.extend(fs::read(k.unwrap().path()).unwrap());
        corpus.add("value", "key", &seed);
    }
    let mut counts: Vec<_> = corpus.count.into_iter().collect();
    counts.sort();
    for (target, n) in counts {
        println!("corpus/{target}: {n} seeds");
    }
}
