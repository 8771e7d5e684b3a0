//! Key files read and converted (`auth::KeyMaterial::read`, `PrivateKey::from_key_file`,
//! `KeyMaterial::write`): what `admin convert-key`, `--key-file` and the Python package's
//! `key_file=` read from a user's file.
//!
//! Input: byte 0 the mode, the rest a key file.
//! - `mode & 1` = 0: `KeyMaterial::read` with the format detected (or, with bit 1, the
//!   format `FORMATS[(mode >> 2) % 4]` forced);
//! - `mode & 1` = 1: `PrivateKey::from_key_file`, with the passphrase `"pass"` when bit 1
//!   is set.
//!
//! Passphrase-encrypted files cost what their own parameters say (up to 10,000,000 PBKDF2
//! rounds, the cap above which they are refused unread): inputs given a passphrase are
//! skipped when they are encrypted (`ENCRYPTED PRIVATE KEY`, or a reference file of a
//! scheme other than 1); the `auth` target covers the reference's scheme 4 with small
//! counts.
//!
//! Properties: nothing panics, and
//! - a passphrase given for a file that is not encrypted is `NotEncrypted` (never ignored);
//! - a key that reads is written to every format that holds it (private: the reference's
//!   file, PKCS#8 PEM and JWK, unencrypted; public: the reference's file, SPKI PEM and
//!   JWK), and each of those reads back (detected) to a key with the same public numbers
//!   (compared as public JWK), and as private exactly when it was;
//! - what `KeyMaterial::read` detects as a format is the format `KeyFormat::detect` names.
#![no_main]

use handle_resolver::auth::{KeyFileError, KeyFormat, KeyMaterial, PrivateKey};
use libfuzzer_sys::fuzz_target;

const FORMATS: [KeyFormat; 4] = [
    KeyFormat::Reference,
    KeyFormat::Pkcs8Pem,
    KeyFormat::SpkiPem,
    KeyFormat::Jwk,
];

/// Would reading `file` with a passphrase decrypt (and so cost its PBKDF2 rounds)?
fn encrypted(file: &[u8]) -> bool {
    let text = file.trim_ascii_start();
    text.windows(b"ENCRYPTED".len()).any(|w| w == b"ENCRYPTED")
        || (!text.starts_with(b"-")
            && !text.starts_with(b"{")
            && file.get(..4) != Some(&[0, 0, 0, 1]))
}

/// The public numbers of `key`, as its public JWK.
fn canonical(key: &KeyMaterial) -> Option<Vec<u8>> {
    key.to_public()
        .write(KeyFormat::Jwk, None)
        .ok()
        .map(|b| b.to_vec())
}

/// Every format that holds `key`, written unencrypted and read back.
fn round_trips(key: &KeyMaterial) {
    let formats: &[KeyFormat] = if key.is_private() {
        &[KeyFormat::Reference, KeyFormat::Pkcs8Pem, KeyFormat::Jwk]
    } else {
        &[KeyFormat::Reference, KeyFormat::SpkiPem, KeyFormat::Jwk]
    };
    for &format in formats {
        let written = match key.write(format, None) {
            Ok(w) => w,
            // A key the format cannot hold (e.g. sizes the writer refuses) is an error.
            Err(_) => continue,
        };
        let back = KeyMaterial::read(&written, None, None)
            .unwrap_or_else(|e| panic!("{format} written and not read: {e}"));
        assert_eq!(back.format, format);
        assert!(!back.encrypted);
        assert_eq!(back.key.is_private(), key.is_private(), "{format}");
        // The same numbers: compared in JWK, where they are canonical (the reference's file
        // keeps a leading zero byte or an RSA trailer as read, which other formats drop).
        assert_eq!(canonical(&back.key), canonical(key), "{format}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, file)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        let forced = (mode & 2 != 0).then(|| FORMATS[usize::from(mode >> 2) % 4]);
        if let Ok(read) = KeyMaterial::read(file, forced, None) {
            assert_eq!(Some(read.format), forced.or(KeyFormat::detect(file)));
            round_trips(&read.key);
        }
        return;
    }
    let passphrase = (mode & 2 != 0).then_some(&b"pass"[..]);
    if passphrase.is_some() && encrypted(file) {
        return;
    }
    match PrivateKey::from_key_file(file, passphrase) {
        Ok(key) => {
            assert!(
                passphrase.is_none(),
                "a passphrase for a file not encrypted was ignored"
            );
            round_trips(&KeyMaterial::Private(key));
        }
        Err(KeyFileError::NotEncrypted) => assert!(passphrase.is_some()),
        Err(_) => {}
    }
});
