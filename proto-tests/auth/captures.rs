//! One test per captures-auth scenario: every message decodes field for field as the
//! reference library decoded it (`decoded.json`) and encodes back to the captured bytes; UDP
//! messages are cut into the captured datagrams again; session-encrypted messages decrypt to
//! the reference's plaintext under the published session key and encrypt back to the wire
//! bytes with the captured IV; server signatures verify with the server key; session MACs
//! verify with the session key over the MAC input the reference printed.

use handle_resolver::wire::{fragment, signed_data, verify_message, Limits, Message, PublicKey};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use super::compare::{compare, Diff};
use crate::support::captures::{reference_dir, scenario, Captured, Transport};

/// `fixtures/reference/captures-auth`.
pub fn auth_dir() -> std::path::PathBuf {
    reference_dir().join("captures-auth")
}

fn server_key() -> PublicKey {
    let blob = std::fs::read(auth_dir().join("keys/server_pubkey.bin")).unwrap();
    PublicKey::decode(&blob).unwrap()
}

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

/// Decodes one captured message (decrypting it when the reference says it is encrypted),
/// compares it and checks that it encodes back to the captured bytes.
fn check_message(d: &mut Diff, cap: &Captured, entry: &Value) -> Option<Message> {
    let frame = cap.frame();
    let limits = Limits::default();
    let m = if entry["envelope"]["EC_encrypted"].as_bool() == Some(true) {
        let enc = &entry["encryption"];
        let key = unhex(&enc["sessionKeyHex"]);
        let m = match Message::decode_encrypted(frame.clone(), &key, &limits) {
            Ok(m) => m,
            Err(e) => {
                d.fail(format!("decrypt: {e}"));
                return None;
            }
        };
        let mut plain = m.clone();
        plain.envelope.encrypted = false;
        let plain_bytes = plain.encode().unwrap();
        d.eq(
            "encryption.plaintextHex",
            hex::encode(&plain_bytes[20..]),
            enc["plaintextHex"].as_str().unwrap().to_string(),
        );
        let iv: [u8; 16] = unhex(&enc["ivHex"]).try_into().unwrap();
        d.eq(
            "re-encrypted bytes",
            m.encode_encrypted(&key, &iv).map_err(|e| e.to_string()),
            Ok(frame.clone()),
        );
        m
    } else {
        match Message::decode(frame.clone(), &limits) {
            Ok(m) => {
                d.eq("re-encoded bytes", m.encode().ok(), Some(frame.clone()));
                m
            }
            Err(e) => {
                d.fail(format!("decode: {e}"));
                return None;
            }
        }
    };
    compare(d, &m, entry);
    if cap.transport == Transport::Udp {
        let mut sent = cap.datagrams.clone();
        sent.sort_by_key(|g| u32::from_be_bytes([g[12], g[13], g[14], g[15]]));
        d.eq("datagrams", fragment(&frame), sent);
        if let Some(n) = entry.get("reassembledFromDatagrams") {
            d.eq(
                "reassembledFromDatagrams",
                cap.datagrams.len() as u64,
                n.as_u64().unwrap(),
            );
        }
    }
    d.eq(
        "bytes",
        frame.len() as u64,
        entry["bytes"].as_u64().unwrap(),
    );
    Some(m)
}

/// The server signature and the session MAC that the reference checked, checked again.
fn check_credential(d: &mut Diff, m: &Message, entry: &Value) {
    let Some(check) = entry.get("credentialCheck") else {
        return;
    };
    if check
        .get("verifiesWithServerPublicKey")
        .and_then(Value::as_bool)
        == Some(true)
    {
        d.eq(
            "server signature",
            verify_message(m, &server_key()).map_err(|e| e.to_string()),
            Ok(()),
        );
    }
    if check.get("verifiesWithSessionKey").and_then(Value::as_bool) == Some(true) {
        let c = m.credential.as_ref().expect("a session MAC");
        let env = &m.envelope;
        let input = signed_data(
            env.version,
            env.suggested,
            env.session_id,
            env.request_id,
            c.signer.index,
            &m.header_and_body().unwrap(),
        );
        d.eq(
            "macInput",
            hex::encode(&input),
            check["macInput"]["hex"].as_str().unwrap().to_string(),
        );
        let mut mac = Hmac::<Sha256>::new_from_slice(&unhex(&check["sessionKeyHex"])).unwrap();
        mac.update(&input);
        d.eq(
            "session MAC",
            mac.finalize().into_bytes().to_vec(),
            c.signature.to_vec(),
        );
    }
}

/// Checks every message of one scenario; returns how many were compared.
fn check_scenario(name: &str) -> usize {
    let sc = scenario("captures-auth", name);
    assert!(!sc.decoded.is_empty(), "{name}: no decoded.json entries");
    let mut failures = Vec::new();
    for entry in &sc.decoded {
        let label = entry["file"].as_str().unwrap();
        let ctx = format!("{name} {label}");
        let mut d = Diff::new(&ctx);
        match sc.message(label) {
            Some(cap) => {
                if let Some(m) = check_message(&mut d, cap, entry) {
                    check_credential(&mut d, &m, entry);
                }
            }
            None => d.fail("no such message in the packet files".into()),
        }
        failures.extend(d.out);
    }
    for cap in &sc.messages {
        if !sc.decoded.iter().any(|e| e["file"] == cap.label.as_str()) {
            failures.push(format!("{name} {}: not in decoded.json", cap.label));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    sc.decoded.len()
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_scenario(stringify!($name));
            }
        )*
        /// Every scenario with a test of its own.
        const ALL: &[&str] = &[$(stringify!($name)),*];
    };
}

scenarios!(
    session_admin_rsa_create_delete,
    session_admin_seckey_create_delete,
    session_resolve_seckey,
    tcp_admin_noauth_create,
    tcp_admin_rsa_add,
    tcp_admin_rsa_add_exists,
    tcp_admin_rsa_create,
    tcp_admin_rsa_create_exists,
    tcp_admin_rsa_delete,
    tcp_admin_rsa_delete_missing,
    tcp_admin_rsa_list,
    tcp_admin_rsa_mint,
    tcp_admin_rsa_modify,
    tcp_admin_rsa_overwrite,
    tcp_admin_rsa_remove,
    tcp_admin_rsa_remove_missing,
    tcp_admin_seckey_add,
    tcp_admin_seckey_add_exists,
    tcp_admin_seckey_create,
    tcp_admin_seckey_create_exists,
    tcp_admin_seckey_delete,
    tcp_admin_seckey_delete_missing,
    tcp_admin_seckey_list,
    tcp_admin_seckey_mint,
    tcp_admin_seckey_modify,
    tcp_admin_seckey_overwrite,
    tcp_admin_seckey_remove,
    tcp_admin_seckey_remove_missing,
    tcp_resolve_dsa,
    tcp_resolve_dsa1024,
    tcp_resolve_ghost,
    tcp_resolve_none,
    tcp_resolve_norights,
    tcp_resolve_rsa,
    tcp_resolve_rsa_wrongkey,
    tcp_resolve_seckey,
    tcp_resolve_seckey_hashed,
    tcp_resolve_seckey_nonascii,
    tcp_resolve_seckey_wrong,
    tcp_resolve_unknown,
    udp_resolve_dsa,
    udp_resolve_dsa1024,
    udp_resolve_ghost,
    udp_resolve_none,
    udp_resolve_norights,
    udp_resolve_rsa,
    udp_resolve_rsa_wrongkey,
    udp_resolve_seckey,
    udp_resolve_seckey_hashed,
    udp_resolve_seckey_nonascii,
    udp_resolve_seckey_wrong,
    udp_resolve_unknown,
);

#[test]
fn every_scenario_folder_has_its_test_and_every_message_is_compared() {
    let mut folders: Vec<String> = std::fs::read_dir(auth_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("decoded.json").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let mut listed: Vec<String> = ALL.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(folders, listed);
    // The README's count: 52 scenarios, 214 protocol messages.
    assert_eq!(ALL.len(), 52);
    let total: usize = ALL.iter().map(|n| check_scenario(n)).sum();
    assert_eq!(total, 214);
}
