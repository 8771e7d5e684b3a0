//! Fills `corpus/<target>/` for every target from `../fixtures` (run from `fuzz/`:
//! `cargo run --example seed --features seed`).
//!
//! From the captures in `../fixtures/reference`:
//! - `message`: every whole message (TCP streams cut by MessageLength, UDP datagrams, and
//!   multi-datagram UDP messages put together);
//! - `value`: every value of those messages in wire form (mode byte 0), and its data with its
//!   type's mode byte; each key in `captures-dsa/keys` as HS_PUBKEY data;
//! - `site`: every HS_SITE-like value's data and every get-site-info answer;
//! - `reassembler`: each scenario's datagrams as push records;
//! - `json`: every value of those messages in wire form (mode 2), as typed data (mode 3) and
//!   as REST JSON (mode 1), every resolution answer as a REST answer body (mode 0);
//! - `http_answer`: every message as an HTTP body, with the native content type and without;
//! - `ident`: every handle asked for, bare and in `hdl:`, `doi:`, proxy-URL and
//!   scheme-less proxy forms, under each of the eight option combinations in turn;
//! - `root_files`: the values of every `0.NA/0.NA` answer as a `root_info` file.
//!
//! Handle records (the shipped `root-files/bootstrap_handles`, the records of
//! `captures/handles.json` and `captures-dsa/handles.json`, and every handle of the test
//! server's handle file `testserver/handles.json`, read by `handle_resolver::testing` as the
//! server reads it): each record as a REST answer body and each value as REST JSON (`json`),
//! each handle in the forms above (`ident`), each set of records as a `bootstrap_handles`
//! file and its `0.NA/0.NA` values as a `root_info` file (`root_files`). Also the two root
//! files as shipped (`root_files`), the 27 handles of `hash-vectors.json` (`ident`), and each
//! URN of the test server's file (`ident`) with its URLs as the `text/uri-list` of an `N2Ls`
//! answer, with CRLF and with LF (`uri_list`).

#[path = "../fuzz_targets/types.rs"]
mod types;

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use bytes::{BufMut, Bytes, BytesMut};
use handle_resolver::resolver::read_bootstrap_handles;
use handle_resolver::testing::StoreFile;
use handle_resolver::transport::http::HDL_MIME_TYPE;
use handle_resolver::wire::json::{value_to_json, RestAnswer};
use handle_resolver::wire::value::encode_values;
use handle_resolver::wire::{
    Body, Envelope, HandleValue, Limits, Message, PartialMessage, Reader, ENVELOPE_LEN,
    MAX_DATAGRAM, MAX_FRAGMENT_PAYLOAD,
};
use serde_json::{json, Value as Json};
use types::TYPES;

struct Corpus {
    root: PathBuf,
    count: HashMap<&'static str, usize>,
    /// The next option combination (0..8) for an `ident` seed.
    ident_mode: u8,
}

impl Corpus {
    fn add(&mut self, target: &'static str, name: &str, data: &[u8]) {
        let dir = self.root.join(target);
        fs::create_dir_all(&dir).unwrap();
        let n = self.count.entry(target).or_insert(0);
        *n += 1;
        fs::write(dir.join(format!("{name}-{n}")), data).unwrap();
    }

    /// `mode ‖ data`.
    fn add_with(&mut self, target: &'static str, name: &str, mode: u8, data: &[u8]) {
        let mut seed = vec![mode];
        seed.extend_from_slice(data);
        self.add(target, name, &seed);
    }

    fn add_value(&mut self, name: &str, v: &HandleValue) {
        let mut wire = BytesMut::new();
        v.encode(&mut wire).unwrap();
        self.add_with("value", name, 0, &wire);
        self.add_with("json", name, 2, &wire);
        self.add_json_value(name, v);
        if let Some(i) = TYPES.iter().position(|t| v.is_type(t)) {
            self.add_with("value", name, ((i as u8) << 1) | 1, &v.data);
            self.add_with("json", name, ((i as u8) << 2) | 3, &v.data);
        }
        if TYPES[4..8].iter().any(|t| v.is_type(t)) {
            self.add("site", name, &v.data);
        }
    }

    /// One value in the REST shape (`json` mode 1).
    fn add_json_value(&mut self, name: &str, v: &HandleValue) {
        let text = serde_json::to_vec(&value_to_json(v)).unwrap();
        self.add_with("json", name, 1, &text);
    }

    /// A REST answer body (`json` mode 0), pretty-printed as the REST API sends it.
    fn add_rest_answer(&mut self, name: &str, handle: &str, values: &[HandleValue]) {
        let mut answer = RestAnswer::new(1, handle);
        answer.values = values.to_vec();
        self.add_with("json", name, 0, &answer.to_vec(true));
    }

    /// `int4 totalLen ‖ int4 count ‖ values` (`root_files` mode 0).
    fn add_root_info(&mut self, name: &str, values: &[HandleValue]) {
        let mut body = BytesMut::new();
        encode_values(&mut body, "values", values).unwrap();
        let mut file = BytesMut::new();
        file.put_u32(body.len() as u32);
        file.extend_from_slice(&body);
        self.add_with("root_files", name, 0, &file);
    }

    /// A handle and the forms people paste it in, each under the next option combination.
    fn add_handle(&mut self, name: &str, handle: &str) {
        for form in [
            handle.to_string(),
            format!("hdl:{handle}"),
            format!("doi:{handle}"),
            format!("https://hdl.handle.net/{handle}?noredirect#top"),
            format!("doi.org/{handle}"),
        ] {
            self.add_ident(name, &form);
        }
    }

    fn add_ident(&mut self, name: &str, text: &str) {
        let mode = self.ident_mode;
        self.ident_mode = (mode + 1) % 8;
        self.add_with("ident", name, mode, text.as_bytes());
    }

    /// Handle records: each as a REST answer, its values as JSON, its handle as identifiers,
    /// and all of them as a `bootstrap_handles` file.
    fn add_records(&mut self, name: &str, records: &BTreeMap<String, Vec<HandleValue>>) {
        let mut handles = serde_json::Map::new();
        for (handle, values) in records {
            self.add_rest_answer(name, handle, values);
            for v in values {
                self.add_json_value(name, v);
            }
            self.add_handle(name, handle);
            if handle == "0.NA/0.NA" {
                self.add_root_info(name, values);
            }
            let values: Vec<Json> = values.iter().map(value_to_json).collect();
            handles.insert(
                handle.clone(),
                json!({ "handle": handle, "values": values }),
            );
        }
        let file = json!({ "lastUpdate": 1_767_225_600_000u64, "handles": handles });
        let text = serde_json::to_vec_pretty(&file).unwrap();
        self.add_with("root_files", name, 1, &text);
    }

    fn add_message(&mut self, name: &str, frame: &Bytes) {
        self.add("message", name, frame);
        let ct = HDL_MIME_TYPE.as_bytes();
        let mut http = vec![0, 200, ct.len() as u8];
        http.extend_from_slice(ct);
        http.extend_from_slice(frame);
        self.add("http_answer", name, &http);
        let mut http = vec![0x01, 0xF4, 0xFF]; // status 500, no Content-Type
        http.extend_from_slice(frame);
        self.add("http_answer", name, &http);
        let Ok(m) = Message::decode(frame.clone(), &Limits::default()) else {
            return;
        };
        for v in m.body.values() {
            self.add_value(name, v);
        }
        match &m.body {
            Body::SiteInfoResponse(s) => self.add("site", name, &s.record),
            Body::ResolutionRequest(r) => {
                self.add_handle(name, &String::from_utf8_lossy(&r.handle));
            }
            Body::ResolutionResponse(r) => {
                let handle = String::from_utf8_lossy(&r.handle).into_owned();
                self.add_rest_answer(name, &handle, &r.values);
                if handle.eq_ignore_ascii_case("0.NA/0.NA") {
                    self.add_root_info(name, &r.values);
                }
            }
            _ => {}
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

/// The root files the reference client ships, and the records of the captures'
/// `handles.json` files: in `captures/`, in the `bootstrap_handles` shape beside a `_meta`
/// record; in `captures-dsa/`, under `handles`, each value in wire form (`encodedValueHex`).
fn root_files(corpus: &mut Corpus, reference: &Path) {
    let limits = Limits::default();
    let root_info = fs::read(reference.join("root-files/root_info")).unwrap();
    corpus.add_with("root_files", "root_info", 0, &root_info);
    let bootstrap = fs::read(reference.join("root-files/bootstrap_handles")).unwrap();
    corpus.add_with("root_files", "bootstrap_handles", 1, &bootstrap);
    let b = read_bootstrap_handles(&bootstrap, &limits).unwrap();
    corpus.add_records("bootstrap_handles", &b.handles);

    let text = fs::read_to_string(reference.join("captures/handles.json")).unwrap();
    let mut doc: Json = serde_json::from_str(&text).unwrap();
    // `_meta` says where the records came from; it is no handle.
    doc.as_object_mut()
        .unwrap()
        .retain(|k, _| !k.starts_with('_'));
    let file = serde_json::to_vec(&json!({ "handles": doc })).unwrap();
    corpus.add_with("root_files", "captures", 1, &file);
    let b = read_bootstrap_handles(&file, &limits).unwrap();
    corpus.add_records("captures", &b.handles);

    let text = fs::read_to_string(reference.join("captures-dsa/handles.json")).unwrap();
    let doc: Json = serde_json::from_str(&text).unwrap();
    let mut records = BTreeMap::new();
    for (handle, record) in doc["handles"].as_object().unwrap() {
        let values = record["values"].as_array().unwrap().iter().map(|v| {
            let wire = hex::decode(v["encodedValueHex"].as_str().unwrap()).unwrap();
            HandleValue::decode(&mut Reader::new(Bytes::from(wire)), &limits).unwrap()
        });
        records.insert(handle.clone(), values.collect());
    }
    corpus.add_records("captures-dsa", &records);

    let vectors: Json =
        serde_json::from_slice(&fs::read(reference.join("hash-vectors.json")).unwrap()).unwrap();
    for h in vectors["handles"].as_array().unwrap() {
        corpus.add_handle("hash-vectors", h["handle"].as_str().unwrap());
    }
}

/// The test server's handle file: what its REST API and URN resolver answer.
fn test_server(corpus: &mut Corpus, fixtures: &Path) {
    let text = fs::read_to_string(fixtures.join("testserver/handles.json")).unwrap();
    let file = StoreFile::parse(&text).unwrap();
    let store = file.new_store();
    // The `self_site` values: the first HS_SITE of the shipped root_info.
    let root_info = fs::read(fixtures.join("reference/root-files/root_info")).unwrap();
    let site = handle_resolver::resolver::read_root_info(&root_info, &Limits::default())
        .unwrap()
        .into_iter()
        .find(|v| v.is_type("HS_SITE"))
        .unwrap()
        .data;
    file.fill(&store, &site).unwrap();
    let records: BTreeMap<String, Vec<HandleValue>> = file
        .handles
        .keys()
        .map(|h| (h.clone(), store.get(h).unwrap().values.clone()))
        .collect();
    corpus.add_records("testserver", &records);
    for (urn, urls) in &file.urns {
        corpus.add_ident("testserver-urn", urn);
        let mut crlf = format!("# {urn}\r\n");
        for u in urls {
            crlf.push_str(u);
            crlf.push_str("\r\n");
        }
        corpus.add("uri_list", "testserver", crlf.as_bytes());
        corpus.add(
            "uri_list",
            "testserver",
            crlf.replace("\r\n", "\n").as_bytes(),
        );
    }
}

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = here.join("../fixtures/reference");
    let mut corpus = Corpus {
        root: here.join("corpus"),
        count: HashMap::new(),
        ident_mode: 0,
    };
    root_files(&mut corpus, &reference);
    test_server(&mut corpus, &here.join("../fixtures"));
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
        let key = fs::read(k.unwrap().path()).unwrap();
        corpus.add_with("value", "key", (pubkey << 1) | 1, &key);
        corpus.add_with("json", "key", (pubkey << 2) | 3, &key);
    }
    let mut counts: Vec<_> = corpus.count.into_iter().collect();
    counts.sort();
    for (target, n) in counts {
        println!("corpus/{target}: {n} seeds");
    }
}
