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
//! From `../fixtures/reference/captures-auth` (UDP datagrams put together, TCP streams cut
//! by MessageLength):
//! - `session`: every message of the three `session_*` folders, under each of the four
//!   modes, with that folder's session (accept, answer_setup, open in the session, open
//!   without one);
//! - `auth` mode 0: every file of `keys/` (PEM and the reference library's files, private
//!   and public), each identity's PKCS#8 and X.509 DER from `keys/identities.json`, and
//!   `../fixtures/auth/dsa1024_privkey_encrypted.bin`; mode 1: that file, each
//!   `*_privkey.bin`, and each of those encrypted again (scheme 4) under the target's
//!   passphrase with 16 PBKDF2 iterations and key lengths of 128, 160 and 256 bits;
//! - `auth` mode 2: every challenge of every `auth.json` with its original request (a
//!   session-encrypted request decrypted with the session key, as its digest is over the
//!   plaintext), under each of the target's eight identities; and the same requests
//!   challenged again at 2.0 (MD5 digest in the body), 2.5 (RD SHA-1) and 2.6 (RD MD5),
//!   one identity each in turn;
//! - `auth` mode 3: every captured answer with its challenge, under the stored value of
//!   the identity that answered; for the HS_SECKEY identities the answer again with a
//!   16-iteration PBKDF2 MAC and with an HMAC-SHA256 one, which verify.
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
//!
//! `batch`: the reference's sample batch files of `../fixtures/genericbatch`, LF and CRLF,
//! with and without files, and a siteinfo JSON as an HS_SITE `FILE` value (see [`batch`]).
//!
//! From the signed 2019 `bootstrap_handles`: every HS_SIGNATURE and HS_CERT value's data as a
//! JWS (`jws` mode 0) and its payload as claims (`jws` mode 1); every record with the two
//! records its chains go through (`0.NA/0.NA` and `0.0/0.0`) as a record set (`trust`),
//! checked at the file's `lastUpdate` against the global root (mode 0), 200 days later
//! (mode 1), and at `lastUpdate` against the set's own `0.0/0.0` keys (mode 4), and the whole
//! file once (mode 0).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use bytes::{BufMut, Bytes, BytesMut};
use handle_resolver::auth::{pbkdf2_derive, Authenticator, SecretKey, SecretKeyMac};
use handle_resolver::root::read_bootstrap_handles;
use handle_resolver::testing::StoreFile;
use handle_resolver::transport::HDL_MIME_TYPE;
use handle_resolver::wire::encode_values;
use handle_resolver::wire::encrypt_payload;
use handle_resolver::wire::json::{value_to_json, RestAnswer};
use handle_resolver::wire::{
    Body, ChallengeBody, DigestAlgorithm, Envelope, HandleValue, Limits, Message, OpFlags,
    PartialMessage, ProtocolVersion, Reader, RequestDigest, ResponseCode, SecretKeyProof,
    ENVELOPE_LEN, MAX_DATAGRAM, MAX_FRAGMENT_PAYLOAD,
};
use handle_resolver_fuzz::TYPES;
use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use serde_json::{json, Value as Json};
use sha1::Sha1;

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
    let site = handle_resolver::root::read_root_info(&root_info, &Limits::default())
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

/// `batch`: every sample batch file of `../fixtures/genericbatch` (the reference's own
/// samples; sample 08 cut to its blocks in the first 3 KB) without files (mode 0) and with
/// each `FILE` path read as its own bytes (mode 1); the same with CRLF line ends; and, with
/// files, a CREATE whose HS_SITE `FILE` path is the samples' `server/siteinfo.json` on one
/// line, which the parser converts.
fn batch(corpus: &mut Corpus, fixtures: &Path) {
    let dir = fixtures.join("genericbatch");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "batch"))
        .collect();
    files.sort();
    for f in files {
        let mut text = fs::read(&f).unwrap();
        // Sample 08's 200 CREATE blocks differ only in their numbers: the blocks within the
        // first 3 KB keep every shape and bound the inputs libFuzzer makes (its `-max_len`
        // is the largest seed's length; the parser costs about 0.1 ms per KB instrumented).
        if text.len() > 3072 {
            let cut = text[..3072].windows(2).rposition(|w| w == b"\n\n").unwrap();
            text.truncate(cut + 1);
        }
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let crlf = String::from_utf8_lossy(&text).replace('\n', "\r\n");
        for mode in [0, 1] {
            corpus.add_with("batch", &name, mode, &text);
            corpus.add_with("batch", &name, mode, crlf.as_bytes());
        }
    }
    let site: Json =
        serde_json::from_slice(&fs::read(dir.join("server/siteinfo.json")).unwrap()).unwrap();
    let text = format!(
        "CREATE 20.500.12345/site\n1 HS_SITE 86400 1110 FILE {}\n2 DESC 86400 1110 FILE x\n",
        serde_json::to_string(&site).unwrap()
    );
    corpus.add_with("batch", "siteinfo", 1, text.as_bytes());
}

/// The passphrase of the `auth` target (mode 1).
const PASSPHRASE: &str = "grüße-päss-ß-3";

/// Every message of a captures-auth folder by its `decoded.json` label: UDP datagrams of
/// one direction, client port and request id put together by sequence number under the
/// first one's envelope (labels joined by `,`); TCP streams cut by MessageLength (the k-th
/// message of a stream, k ≥ 2, is `"<file> msgk"`).
fn frames(dir: &Path) -> Vec<(String, Bytes)> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    // (direction and port, request id) → labels and datagrams, in capture order.
    type Datagrams = ((String, u32), Vec<String>, Vec<Bytes>);
    let mut udp: Vec<Datagrams> = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let data = Bytes::from(fs::read(&f).unwrap());
        if name.starts_with("tcp") {
            let mut at = 0;
            let mut k = 1;
            while let Some(e) = envelope(&data.slice(at..)) {
                let end = (at + ENVELOPE_LEN + e.message_length as usize).min(data.len());
                let label = if k == 1 {
                    name.clone()
                } else {
                    format!("{name} msg{k}")
                };
                out.push((label, data.slice(at..end)));
                at = end;
                k += 1;
            }
            continue;
        }
        let Some(env) = envelope(&data) else {
            continue;
        };
        // `NN_c2s_udp_cportP.bin`: the part after the number names direction and port.
        let key = (name.split_once('_').unwrap().1.to_string(), env.request_id);
        match udp.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, labels, datagrams)) => {
                labels.push(name);
                datagrams.push(data);
            }
            None => udp.push((key, vec![name], vec![data])),
        }
    }
    for (_, labels, mut datagrams) in udp {
        datagrams.sort_by_key(|d| envelope(d).map_or(0, |e| e.sequence_number));
        let mut frame = BytesMut::new();
        frame.put_slice(&datagrams[0][..ENVELOPE_LEN]);
        for d in &datagrams {
            frame.put_slice(&d[ENVELOPE_LEN..]);
        }
        out.push((labels.join(","), frame.freeze()));
    }
    out
}

fn unhex(v: &Json) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

/// `int2 n ‖ a (n bytes) ‖ b`.
fn pair(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = (a.len() as u16).to_be_bytes().to_vec();
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    out
}

/// A reference key encoding (`*_privkey.bin` without its scheme word) in a scheme-4 file:
/// `int4 4 ‖ bytes salt ‖ int4 iterations ‖ int4 key bits ‖ bytes IV ‖ bytes ciphertext`.
fn encrypted_key_file(key: &[u8], key_bits: u32) -> Vec<u8> {
    let salt = [0x5Au8; 16];
    let iv = [0xA5u8; 16];
    let iterations = 16;
    let derived = pbkdf2_derive(PASSPHRASE.as_bytes(), &salt, iterations, key_bits);
    let ct = encrypt_payload(&derived[..16], &iv, key).unwrap();
    let mut out = BytesMut::new();
    out.put_u32(4);
    out.put_u32(16);
    out.put_slice(&salt);
    out.put_u32(iterations);
    out.put_u32(key_bits);
    out.put_u32(16);
    out.put_slice(&iv);
    out.put_u32((ct.len() - 16) as u32);
    out.put_slice(&ct[16..]);
    out.to_vec()
}

/// The key files of a captures-auth `keys/` folder (`.bin` and `.pem`), in name order.
fn key_paths(keys: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(keys)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin" || e == "pem"))
        .collect();
    files.sort();
    files
}

/// `auth` modes 0 and 1: the key files.
fn key_files(corpus: &mut Corpus, auth: &Path, fixtures: &Path) {
    let keys = auth.join("keys");
    for f in key_paths(&keys) {
        let data = fs::read(&f).unwrap();
        corpus.add_with("auth", "key", 0, &data);
        if f.to_string_lossy().ends_with("_privkey.bin") {
            corpus.add_with("auth", "key", 1, &data);
            for bits in [128, 160, 256] {
                corpus.add_with("auth", "key", 1, &encrypted_key_file(&data[4..], bits));
            }
        }
    }
    let ids: Json =
        serde_json::from_slice(&fs::read(keys.join("identities.json")).unwrap()).unwrap();
    for id in ids["identities"].as_object().unwrap().values() {
        for field in ["privateKeyPkcs8DerHex", "publicKeyX509DerHex"] {
            if id["key"][field].is_string() {
                corpus.add_with("auth", "key", 0, &unhex(&id["key"][field]));
            }
        }
    }
    let jdk = fs::read(fixtures.join("auth/dsa1024_privkey_encrypted.bin")).unwrap();
    corpus.add_with("auth", "key", 0, &jdk);
    corpus.add_with("auth", "key", 1, &jdk);
    keyfile(corpus, &keys, &fixtures.join("auth/convert-key"));
}

/// `keyfile`: every key of `keys/` (the reference's files and the JDK's PEM), in every
/// format the library writes it to (JWK too), read detected (mode 0) and as a user's key
/// file, without and with a passphrase (modes 1 and 3); and every file of
/// `../fixtures/auth/convert-key` (the reference's `hdl-convert-key` PEM: CRLF, 76 columns,
/// plain and `PBEWithSHA1AndDESede`) as it is, in the same modes.
fn keyfile(corpus: &mut Corpus, keys: &Path, convert_key: &Path) {
    use handle_resolver::auth::{KeyFormat, KeyMaterial};
    let mut made: Vec<PathBuf> = fs::read_dir(convert_key)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pem"))
        .collect();
    made.sort();
    for f in made {
        let data = fs::read(&f).unwrap();
        for mode in [0, 1, 3] {
            corpus.add_with("keyfile", "key", mode, &data);
        }
    }
    for f in key_paths(keys) {
        let data = fs::read(&f).unwrap();
        let Ok(read) = KeyMaterial::read(&data, None, None) else {
            continue;
        };
        for format in [
            KeyFormat::Reference,
            KeyFormat::Pkcs8Pem,
            KeyFormat::SpkiPem,
            KeyFormat::Jwk,
        ] {
            if let Ok(written) = read.key.write(format, None) {
                for mode in [0, 1, 3] {
                    corpus.add_with("keyfile", "key", mode, &written);
                }
            }
        }
    }
}

/// The `auth` target's stored value (mode 3) for a `clientIdentity` of `auth.json`.
fn stored_index(identity: &str) -> u8 {
    match identity {
        "seckey_hashed" => 1,
        "seckey_nonascii" => 2,
        "rsa" | "rsa_wrongkey" => 3,
        "dsa" => 4,
        "dsa1024" => 5,
        _ => 0,
    }
}

fn hmac_sha1(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut m = <Hmac<Sha1> as Mac>::new_from_slice(key).unwrap();
    m.update(data);
    m.finalize().into_bytes().to_vec()
}

/// The answer message with another `signedResponse`.
fn with_signed_response(answer: &Message, signed: Bytes) -> Bytes {
    let mut a = answer.clone();
    if let Body::ChallengeAnswer(b) = &mut a.body {
        b.signed_response = signed;
    }
    a.signed_bytes = Bytes::new();
    a.encode().unwrap()
}

/// `request` challenged again at `version`: RD with `algorithm`, or (2.0) the MD5 digest in
/// the body.
fn rechallenge(request: &Message, nonce: &Bytes, version: ProtocolVersion) -> Bytes {
    let hb = request.header_and_body().unwrap();
    let legacy = !version.at_least(2, 1);
    let mut probe = request.clone();
    probe.header.flags.set(OpFlags::RD, !legacy);
    let mut c = Message::response_to(
        &probe,
        ResponseCode::AuthenticationNeeded,
        Body::Challenge(ChallengeBody {
            nonce: nonce.clone(),
            legacy_digest: legacy.then(|| Bytes::from(Md5::digest(&hb).to_vec())),
        }),
    );
    let algorithm = if version.at_least(2, 6) {
        DigestAlgorithm::Md5
    } else {
        DigestAlgorithm::Sha1
    };
    c.request_digest = (!legacy).then(|| RequestDigest::compute(algorithm, &hb).unwrap());
    c.envelope.version = version;
    c.envelope.suggested = version;
    c.envelope.session_id = 9;
    c.encode().unwrap()
}

/// captures-auth: the `session` corpus, and the `auth` corpus's challenges and answers.
fn captures_auth(corpus: &mut Corpus, auth: &Path) {
    let limits = Limits::default();
    let ids: Json =
        serde_json::from_slice(&fs::read(auth.join("keys/identities.json")).unwrap()).unwrap();
    let mut dirs: Vec<PathBuf> = fs::read_dir(auth)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("auth.json").is_file())
        .collect();
    dirs.sort();
    let mut session_index = 0u8;
    let mut turn = 0u8;
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let frames = frames(&dir);
        let frame = |label: &str| frames.iter().find(|(l, _)| l == label).unwrap().1.clone();
        let doc: Json = serde_json::from_slice(&fs::read(dir.join("auth.json")).unwrap()).unwrap();
        let session_key = doc["session"]["clientState"]["sessions"][0]["sessionKeyHex"]
            .as_str()
            .map(|k| hex::decode(k).unwrap());
        if name.starts_with("session_") {
            for (_, f) in &frames {
                for op in 0..4 {
                    corpus.add_with("session", &name, (session_index << 2) | op, f);
                }
            }
            session_index += 1;
        }
        for ex in doc["exchanges"].as_array().unwrap() {
            let wire = frame(ex["originalRequestFile"].as_str().unwrap());
            let mut request = match &session_key {
                Some(key) if envelope(&wire).unwrap().encrypted => {
                    Message::decode_encrypted(wire, key, &limits).unwrap()
                }
                _ => Message::decode(wire, &limits).unwrap(),
            };
            request.envelope.encrypted = false;
            let request_bytes = request.encode().unwrap();
            let challenge_bytes = frame(ex["challengeFile"].as_str().unwrap());
            for who in 0..8u8 {
                let seed = pair(&request_bytes, &challenge_bytes);
                corpus.add_with("auth", &name, (who << 2) | 2, &seed);
            }
            let challenge = Message::decode(challenge_bytes.clone(), &limits).unwrap();
            let Body::Challenge(body) = &challenge.body else {
                panic!("{name}: not a challenge")
            };
            for version in [
                ProtocolVersion::new(2, 0),
                ProtocolVersion::new(2, 5),
                ProtocolVersion::new(2, 6),
            ] {
                let again = rechallenge(&request, &body.nonce, version);
                corpus.add_with(
                    "auth",
                    &name,
                    (turn << 2) | 2,
                    &pair(&request_bytes, &again),
                );
                turn = (turn + 1) % 8;
            }
            let Some(answer_file) = ex["answerFile"].as_str() else {
                continue;
            };
            let identity = ex["recompute"]["clientIdentity"].as_str().unwrap();
            let stored = stored_index(identity);
            let answer_bytes = frame(answer_file);
            corpus.add_with(
                "auth",
                &name,
                (stored << 2) | 3,
                &pair(&challenge_bytes, &answer_bytes),
            );
            let id = &ids["identities"][identity];
            if id["authType"] != "HS_SECKEY" {
                continue;
            }
            // The same identity's answer with cheaper MACs, which the target verifies.
            let mac_key = unhex(&id["macKeyHex"]);
            let answer = Message::decode(answer_bytes, &limits).unwrap();
            let digest = challenge.request_digest.as_ref().unwrap();
            let mut data = body.nonce.to_vec();
            data.extend_from_slice(&digest.digest);
            let salt = [0x33u8; 16];
            let derived = pbkdf2_derive(&mac_key, &salt, 16, 160);
            let proof = SecretKeyProof::Pbkdf2 {
                salt: Bytes::copy_from_slice(&salt),
                iterations: 16,
                key_bits: 160,
                mac: Bytes::from(hmac_sha1(&derived, &data)),
            };
            let pbkdf2 = with_signed_response(&answer, proof.encode().unwrap());
            corpus.add_with(
                "auth",
                &name,
                (stored << 2) | 3,
                &pair(&challenge_bytes, &pbkdf2),
            );
            let hmac = Authenticator::secret_key(
                handle_resolver::auth::Identity::new(300, "20.500.12345/USER-SECKEY"),
                SecretKey::new(&mac_key),
            )
            .with_secret_key_mac(SecretKeyMac::HmacSha256)
            .answer_with_salt(&challenge, &request, 1, 2, salt)
            .unwrap();
            corpus.add_with(
                "auth",
                &name,
                (stored << 2) | 3,
                &pair(&challenge_bytes, &hmac.encode().unwrap()),
            );
        }
    }
}

/// A record set in the `trust` target's form: per record `handle length (u8) ‖ handle ‖
/// value count (u8) ‖ values in wire form`.
fn trust_records<'a>(records: impl IntoIterator<Item = (&'a str, &'a [HandleValue])>) -> Vec<u8> {
    let mut out = BytesMut::new();
    for (handle, values) in records {
        out.put_u8(u8::try_from(handle.len()).unwrap());
        out.put_slice(handle.as_bytes());
        out.put_u8(u8::try_from(values.len()).unwrap());
        for v in values {
            v.encode(&mut out).unwrap();
        }
    }
    out.to_vec()
}

/// The `jws` and `trust` targets' seeds (see the module's doc).
fn trust(corpus: &mut Corpus, reference: &Path) {
    let file = fs::read(reference.join("root-files/bootstrap_handles")).unwrap();
    let records = read_bootstrap_handles(&file, &Limits::default())
        .unwrap()
        .handles;
    for (handle, values) in &records {
        for v in values
            .iter()
            .filter(|v| v.is_type("HS_SIGNATURE") || v.is_type("HS_CERT"))
        {
            corpus.add_with("jws", "jws", 0, &v.data);
            let jws = handle_resolver::trust::Jws::parse(&v.data).unwrap();
            corpus.add_with("jws", "claims", 1, jws.payload());
        }
        let mut set: Vec<(&str, &[HandleValue])> = vec![(handle, values)];
        for chain in ["0.NA/0.NA", "0.0/0.0"] {
            if chain != handle {
                set.push((chain, &records[chain]));
            }
        }
        let seed = trust_records(set);
        for mode in [0, 1, 4] {
            corpus.add_with("trust", "records", mode, &seed);
        }
    }
    let all = trust_records(records.iter().map(|(h, v)| (h.as_str(), v.as_slice())));
    corpus.add_with("trust", "records-all", 0, &all);
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
    trust(&mut corpus, &reference);
    test_server(&mut corpus, &here.join("../fixtures"));
    batch(&mut corpus, &here.join("../fixtures"));
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
    let auth = reference.join("captures-auth");
    key_files(&mut corpus, &auth, &here.join("../fixtures"));
    captures_auth(&mut corpus, &auth);
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
