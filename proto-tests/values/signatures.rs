//! Signature checks over every signed response of both capture sets: with the low-level
//! functions on hand-sliced messages, and with `verify_message` on decoded ones.

use super::*;

// ---------------------------------------------------------------------------------------
// Signatures (messages sliced by hand: envelope 20, header 24, body, credential)

/// Envelope + message of one captured message: UDP datagrams reassembled (fragment `i` at
/// `i × 492`), or the `nth` message of a TCP stream.
fn load_message(dir: &Path, files: &str, nth: usize) -> Bytes {
    let files: Vec<&str> = files.split(',').collect();
    let first = std::fs::read(dir.join(files[0])).unwrap();
    if files[0].starts_with("tcp") {
        let mut at = 0;
        for _ in 0..nth {
            let len = u32::from_be_bytes(first[at + 16..at + 20].try_into().unwrap()) as usize;
            at += ENVELOPE_LEN + len;
        }
        let len = u32::from_be_bytes(first[at + 16..at + 20].try_into().unwrap()) as usize;
        return Bytes::copy_from_slice(&first[at..at + ENVELOPE_LEN + len]);
    }
    let total = u32::from_be_bytes(first[16..20].try_into().unwrap()) as usize;
    let mut out = first[..ENVELOPE_LEN].to_vec();
    out.resize(ENVELOPE_LEN + total, 0);
    for f in files {
        let d = std::fs::read(dir.join(f)).unwrap();
        let seq = u32::from_be_bytes(d[12..16].try_into().unwrap()) as usize;
        let at = ENVELOPE_LEN + seq * 492;
        out[at..at + d.len() - ENVELOPE_LEN].copy_from_slice(&d[ENVELOPE_LEN..]);
    }
    Bytes::from(out)
}

/// A parsed credential: (signer index, type, digest algorithm, signature).
fn parse_credential(c: &Bytes) -> (u32, Bytes, Bytes, Bytes) {
    let mut r = Reader::new(c.clone());
    r.take("version, reserved, flags", 4).unwrap();
    r.bytes("signer", 4096).unwrap();
    let counter = r.u32("signer index").unwrap();
    let ty = r.bytes("type", 4096).unwrap();
    let mut info = r.sub("signed info", 1 << 20).unwrap();
    let alg = info.bytes("alg", 4096).unwrap();
    let sig = info.bytes("sig", 1 << 20).unwrap();
    (counter, ty, alg, sig)
}

struct Signed {
    what: String,
    data: Vec<u8>,
    header_and_body_at: usize,
    alg: Bytes,
    sig: Bytes,
    key: String,
}

/// Every signed response in both capture sets, with the name of the key that signed it.
fn signed_responses() -> Vec<Signed> {
    let mut out = Vec::new();
    for (name, msgs) in decoded_files() {
        let dir = fixtures().join(&name);
        let mut per_file: HashMap<String, usize> = HashMap::new();
        for m in msgs {
            let file = m["file"].as_str().unwrap().to_owned();
            let nth = *per_file
                .entry(file.clone())
                .and_modify(|n| *n += 1)
                .or_insert(0);
            if m["signaturePresent"] != Json::Bool(true) {
                continue;
            }
            let buf = load_message(&dir, &file, nth);
            let (env, header, body, cred) = split_message(&buf);
            let (counter, ty, alg, sig) = parse_credential(&cred);
            assert_eq!(ty.as_ref(), b"HS_SIGNED", "{name}");
            let hb = buf.slice(ENVELOPE_LEN..ENVELOPE_LEN + HEADER_LEN + body.len());
            assert_eq!(hb.len() as u32, HEADER_LEN as u32 + header.body_length);
            let data = signed_data(
                env.version,
                env.suggested,
                env.session_id,
                env.request_id,
                counter,
                &hb,
            );
            let key = match m["signatureVerifiesWithKeys"].as_array() {
                Some(keys) => {
                    assert_eq!(keys.len(), 1, "{name}");
                    keys[0]
                        .as_str()
                        .unwrap()
                        .trim_end_matches(".pubkey.bin")
                        .to_owned()
                }
                None => "rsa-site".to_owned(),
            };
            out.push(Signed {
                what: format!("{name}/{file}"),
                header_and_body_at: data.len() - hb.len(),
                data,
                alg,
                sig,
                key,
            });
        }
    }
    out
}

pub(super) fn all_keys() -> HashMap<String, PublicKey> {
    let mut keys = HashMap::new();
    for name in ["root-127.0.0.9", "s0-127.0.0.10", "s1-127.0.0.11"] {
        keys.insert(name.to_owned(), PublicKey::decode(&key_file(name)).unwrap());
    }
    let site = site_from_values("0.NA/0.NA");
    keys.insert(
        "rsa-site".to_owned(),
        site.servers[0].public_key().unwrap().unwrap(),
    );
    keys
}

#[test]
fn every_signed_capture_verifies_with_its_key_only() {
    let keys = all_keys();
    let signed = signed_responses();
    let certify = |s: &Signed| s.what.contains("certif");
    assert!(signed.iter().filter(|s| certify(s)).count() >= 15);
    assert!(signed.iter().any(|s| s.alg.as_ref() == b"SHA1"));
    assert!(signed
        .iter()
        .any(|s| s.alg.as_ref() == b"SHA-256" && s.key == "rsa-site"));
    for s in &signed {
        let key = &keys[&s.key];
        assert_eq!(
            verify_signature(key, &s.alg, &s.sig, &s.data),
            Ok(()),
            "{}",
            s.what
        );
        for (other, k) in &keys {
            if other != &s.key {
                assert!(
                    verify_signature(k, &s.alg, &s.sig, &s.data).is_err(),
                    "{} verified with {other}",
                    s.what
                );
            }
        }
        // Wrong hash, wrong prefix (the plain RFC bytes), truncated signature.
        let other_alg: &[u8] = if s.alg.as_ref() == b"SHA1" {
            b"SHA-256"
        } else {
            b"SHA1"
        };
        assert!(verify_signature(key, other_alg, &s.sig, &s.data).is_err());
        let rfc_bytes = &s.data[s.header_and_body_at..];
        assert!(verify_signature(key, &s.alg, &s.sig, rfc_bytes).is_err());
        let short = &s.sig[..s.sig.len() - 1];
        assert!(verify_signature(key, &s.alg, short, &s.data).is_err());
    }
}

#[test]
fn any_one_byte_change_in_the_signed_region_breaks_the_signature() {
    let keys = all_keys();
    let signed = signed_responses();
    // One message per key and algorithm: every byte of the prefix, header and body.
    let mut done = std::collections::HashSet::new();
    for s in signed {
        if !done.insert((s.key.clone(), s.alg.clone())) {
            continue;
        }
        let key = &keys[&s.key];
        let mut data = s.data.clone();
        for i in 0..data.len() {
            data[i] ^= 0x01;
            assert_eq!(
                verify_signature(key, &s.alg, &s.sig, &data),
                Err(SignatureError::Mismatch),
                "{} byte {i}",
                s.what
            );
            data[i] ^= 0x01;
        }
    }
    assert!(done.len() >= 6, "{done:?}");
}

// ---------------------------------------------------------------------------------------
// Signatures through the message codec

/// Every signed response decoded with `Message::decode`, with its key name.
fn signed_messages() -> Vec<(String, Bytes, String)> {
    let mut out = Vec::new();
    for (name, msgs) in decoded_files() {
        let dir = fixtures().join(&name);
        let mut per_file: HashMap<String, usize> = HashMap::new();
        for m in msgs {
            let file = m["file"].as_str().unwrap().to_owned();
            let nth = *per_file
                .entry(file.clone())
                .and_modify(|n| *n += 1)
                .or_insert(0);
            if m["signaturePresent"] != Json::Bool(true) {
                continue;
            }
            let key = m["signatureVerifiesWithKeys"][0]
                .as_str()
                .map_or("rsa-site".to_owned(), |k| {
                    k.trim_end_matches(".pubkey.bin").to_owned()
                });
            out.push((
                format!("{name}/{file}"),
                load_message(&dir, &file, nth),
                key,
            ));
        }
    }
    out
}

#[test]
fn verify_message_accepts_every_signed_capture_with_its_key_only() {
    let keys = all_keys();
    let signed = signed_messages();
    assert!(signed.len() >= 15);
    for (what, buf, key) in &signed {
        let msg = Message::decode(buf.clone(), &Limits::default()).unwrap();
        assert_eq!(verify_message(&msg, &keys[key]), Ok(()), "{what}");
        for (other, k) in &keys {
            if other != key {
                assert!(verify_message(&msg, k).is_err(), "{what} with {other}");
            }
        }
        // Re-encoded (built) message: the same signed bytes come back.
        let mut built = msg.clone();
        built.signed_bytes = Bytes::new();
        assert_eq!(verify_message(&built, &keys[key]), Ok(()), "{what} rebuilt");
        // No credential, or a session MAC: not a signature check.
        let mut unsigned = msg.clone();
        unsigned.credential = None;
        assert_eq!(
            verify_message(&unsigned, &keys[key]),
            Err(SignatureError::NoCredential)
        );
        let mut mac = msg;
        if let Some(c) = mac.credential.as_mut() {
            c.credential_type = Bytes::from_static(b"HS_MAC");
        }
        assert!(matches!(
            verify_message(&mac, &keys[key]),
            Err(SignatureError::CredentialType(_))
        ));
    }
}

#[test]
fn verify_message_fails_after_any_one_byte_change_in_the_signed_region() {
    let keys = all_keys();
    let mut done = std::collections::HashSet::new();
    for (what, buf, key) in signed_messages() {
        let msg = Message::decode(buf.clone(), &Limits::default()).unwrap();
        let alg = msg.credential.as_ref().unwrap().digest_algorithm.clone();
        if !done.insert((key.clone(), alg)) {
            continue;
        }
        // Signed: envelope version, suggested version, session id, request id (bytes 0..12;
        // byte 2 flipped in its suggested-major bit), then header and body.
        let signed_len = HEADER_LEN + msg.header.body_length as usize;
        let positions = (0..12).chain(ENVELOPE_LEN..ENVELOPE_LEN + signed_len);
        let mut bytes = buf.to_vec();
        for i in positions {
            bytes[i] ^= 0x01;
            if let Ok(m) = Message::decode(Bytes::copy_from_slice(&bytes), &Limits::default()) {
                assert!(verify_message(&m, &keys[&key]).is_err(), "{what} byte {i}");
            }
            bytes[i] ^= 0x01;
        }
    }
    assert!(done.len() >= 5, "{done:?}");
}
