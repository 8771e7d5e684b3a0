//! The test server's signing key and the signing of answers (PROTOCOL.md §9.2, §2.5, §14.6).
//!
//! The embedded key, `fixtures/testserver/test-rsa-1024.pkcs1.der`, is a 1024-bit RSA key
//! generated once for these tests with `openssl genrsa -traditional 1024` and converted to
//! PKCS#1 DER (`openssl rsa -outform DER -traditional`). It protects nothing.

use bytes::{BufMut, Bytes, BytesMut};
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::{Pkcs1v15Sign, RsaPrivateKey, RsaPublicKey};
use sha2::{Digest, Sha256};

use super::patch::{patch_u32, MESSAGE_LENGTH_AT};
use crate::wire::credential::HS_SIGNED;
use crate::wire::signature::signed_data;
use crate::wire::{Credential, EncodeError, Envelope, PublicKey, Reader, ENVELOPE_LEN};

/// The embedded test key, PKCS#1 DER.
pub const TEST_KEY_DER: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/testserver/test-rsa-1024.pkcs1.der"
));

/// A 2048-bit test key, PKCS#1 DER (`fixtures/testserver/test-rsa-2048.pkcs1.der`, made
/// with `openssl genrsa 2048 | openssl rsa -outform DER -traditional`): for HTTPS, as TLS
/// libraries refuse RSA keys under 2048 bits. It protects nothing.
pub const TEST_KEY_2048_DER: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/testserver/test-rsa-2048.pkcs1.der"
));

/// An RSA key a test server signs with.
#[derive(Debug, Clone)]
pub struct TestKey {
    private: RsaPrivateKey,
    public: RsaPublicKey,
    hs_pubkey: Bytes,
}

/// Why a key could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("cannot load the test key: {0}")]
pub struct KeyLoadError(String);

impl TestKey {
    /// The embedded 1024-bit test key.
    pub fn embedded() -> TestKey {
        static KEY: std::sync::OnceLock<TestKey> = std::sync::OnceLock::new();
        KEY.get_or_init(|| match TestKey::from_pkcs1_der(TEST_KEY_DER) {
            Ok(k) => k,
            // The fixture is part of the crate; failing here is a build defect.
            Err(e) => panic!("embedded test key is broken: {e}"),
        })
        .clone()
    }

    /// The embedded 2048-bit test key (for a server with an HTTPS side).
    pub fn embedded_2048() -> TestKey {
        static KEY: std::sync::OnceLock<TestKey> = std::sync::OnceLock::new();
        KEY.get_or_init(|| match TestKey::from_pkcs1_der(TEST_KEY_2048_DER) {
            Ok(k) => k,
            // The fixture is part of the crate; failing here is a build defect.
            Err(e) => panic!("embedded 2048-bit test key is broken: {e}"),
        })
        .clone()
    }

    /// The private key as PKCS#8 DER (for a TLS server).
    pub fn pkcs8_der(&self) -> Result<Vec<u8>, KeyLoadError> {
        use rsa::pkcs8::EncodePrivateKey;
        self.private
            .to_pkcs8_der()
            .map(|d| d.as_bytes().to_vec())
            .map_err(|e| KeyLoadError(e.to_string()))
    }

    /// A key from PKCS#1 DER bytes.
    pub fn from_pkcs1_der(der: &[u8]) -> Result<TestKey, KeyLoadError> {
        let private =
            RsaPrivateKey::from_pkcs1_der(der).map_err(|e| KeyLoadError(e.to_string()))?;
        let public = private.to_public_key();
        let hs_pubkey = PublicKey::from_rsa(&public)
            .encode()
            .map_err(|e| KeyLoadError(e.to_string()))?;
        Ok(TestKey {
            private,
            public,
            hs_pubkey,
        })
    }

    /// The public half.
    pub fn public_key(&self) -> &RsaPublicKey {
        &self.public
    }

    /// The public key as an HS_PUBKEY blob (PROTOCOL.md §7.5), for server records.
    pub fn hs_pubkey(&self) -> Bytes {
        self.hs_pubkey.clone()
    }

    /// A client's key and certificate as a handle server's REST API takes them (what
    /// pyhandle's `certificate_and_key` file holds): the private key as PKCS#8 PEM and a
    /// self-signed certificate (PEM) for it whose subject's UID is `identity`
    /// (`"300:20.500.1/USER"`), the identity a handle server reads from a client
    /// certificate. The key must be of 2048 bits or more ([`TestKey::embedded_2048`]).
    pub fn client_certificate(&self, identity: &str) -> Result<(String, String), KeyLoadError> {
        use rustls::pki_types::PrivatePkcs8KeyDer;
        let invalid = |e: &dyn std::fmt::Display| KeyLoadError(e.to_string());
        let pkcs8 = self.pkcs8_der()?;
        let der = PrivatePkcs8KeyDer::from(pkcs8);
        let pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_RSA_SHA256)
            .map_err(|e| invalid(&e))?;
        let mut params =
            rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| invalid(&e))?;
        // UID, 0.9.2342.19200300.100.1.1.
        let uid = rcgen::DnType::CustomDnType(vec![0, 9, 2342, 19_200_300, 100, 1, 1]);
        params.distinguished_name.push(uid, identity);
        let cert = params.self_signed(&pair).map_err(|e| invalid(&e))?;
        Ok((pair.serialize_pem(), cert.pem()))
    }

    /// SHA-256 with RSA PKCS#1 v1.5 over `data`.
    pub fn sign(&self, data: &[u8]) -> Result<Vec<u8>, rsa::Error> {
        let digest = Sha256::digest(data);
        self.private.sign(Pkcs1v15Sign::new::<Sha256>(), &digest)
    }
}

/// Signs an encoded unsigned message in place: `buf` is envelope ‖ header ‖ body ‖
/// `00 00 00 00`; the credential length is replaced by an HS_SIGNED / SHA-256 credential
/// over the bytes of PROTOCOL.md §9.2 for the message's version (`wire::signed_data`: for
/// 2.11, a 16-byte prefix ‖ header ‖ body; signer index 0), and the envelope's
/// `MessageLength` is updated.
pub(crate) fn sign_encoded(buf: &mut BytesMut, key: &TestKey) -> Result<(), SignError> {
    let len = buf.len();
    let (Some(env), Some(hb)) = (
        buf.get(..ENVELOPE_LEN),
        buf.get(ENVELOPE_LEN..len.saturating_sub(4)),
    ) else {
        return Err(SignError::Malformed);
    };
    let envelope = Envelope::decode(&mut Reader::new(Bytes::copy_from_slice(env)))
        .map_err(|_| SignError::Malformed)?;
    let data = signed_data(
        envelope.version,
        envelope.suggested,
        envelope.session_id,
        envelope.request_id,
        0,
        hb,
    );
    let signature = key.sign(&data).map_err(|_| SignError::Rsa)?;
    let credential = Credential::new(HS_SIGNED, &b"SHA-256"[..], signature, 0)
        .to_bytes()
        .map_err(SignError::Encode)?;
    buf.truncate(len - 4);
    buf.put_u32(credential.len() as u32);
    buf.put_slice(&credential);
    let message_length = (buf.len() - ENVELOPE_LEN) as u32;
    patch_u32(buf, MESSAGE_LENGTH_AT, message_length);
    Ok(())
}

/// Why an answer could not be signed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SignError {
    /// The buffer is not an encoded message.
    #[error("not an encoded message")]
    Malformed,
    /// The RSA operation failed.
    #[error("rsa signing failed")]
    Rsa,
    /// The credential did not encode.
    #[error("credential: {0}")]
    Encode(EncodeError),
}
